//! The user's impl block as both the expansion and the fallback emit it: the helper attributes
//! the impl macro consumed removed, plus one use of each helper path so its import stays used.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Ident, ImplItem, ItemImpl};

use super::ast::{Harness, MEMBER_ATTRS, is_helper};

/// The user's impl block without the helper attributes the impl macro consumed.
pub fn user_impl(item: &ItemImpl) -> ItemImpl {
    let mut item = item.clone();
    for impl_item in &mut item.items {
        let ImplItem::Fn(method) = impl_item else {
            continue;
        };
        if is_config_constructor(method) {
            // `fn new(config: C)` takes `C` by value because the registry calls it as `fn(C) -> Self`.
            method.attrs.push(syn::parse_quote! {
                #[allow(clippy::needless_pass_by_value)]
            });
        }
        let before = method.attrs.len();
        method.attrs.retain(|attr| {
            !MEMBER_ATTRS
                .iter()
                .any(|member| is_helper(attr.path(), member))
        });
        if method.attrs.len() == before {
            // `#[ai_description]` here is already an error; remove it so rustc adds no
            // "cannot find attribute" error.
            for arg in &mut method.sig.inputs {
                if let syn::FnArg::Typed(param) = arg {
                    param
                        .attrs
                        .retain(|attr| !is_helper(attr.path(), "ai_description"));
                }
            }
            continue;
        }
        // The macro requires `&self` and owned parameters, so these pedantic lints would only
        // tell the user to break the contract.
        method.attrs.push(syn::parse_quote! {
            #[allow(clippy::unused_self, clippy::needless_pass_by_value)]
        });
        for arg in &mut method.sig.inputs {
            if let syn::FnArg::Typed(param) = arg {
                param.attrs.retain(|attr| {
                    !(is_helper(attr.path(), "ai_description")
                        || attr.path().is_ident("serde")
                        || attr.path().is_ident("schemars"))
                });
            }
        }
    }
    item
}

fn is_config_constructor(method: &syn::ImplItemFn) -> bool {
    method.sig.ident == "new"
        && method.sig.inputs.len() == 1
        && matches!(method.sig.inputs.first(), Some(syn::FnArg::Typed(_)))
}

/// One `#[ai_function(__hpd_resolve)] const _: () = ();` per path the user wrote. Resolving the
/// attribute keeps the user's `use hpd_agent::ai_function;` used although the impl macro removed
/// the attribute from the methods, and a missing import gives rustc's usual "cannot find
/// attribute" error with its import suggestion. `#[ai_function]` expands that marker to nothing.
pub fn helper_uses(harness: &Harness) -> TokenStream {
    let paths = &harness.helper_paths;
    let marker = Ident::new(RESOLVE_MARKER, Span::call_site());
    quote! {
        #(
            #[#paths(#marker)]
            const _: () = ();
        )*
    }
}

/// The argument of the `#[ai_function]` marker that [`helper_uses`] emits.
pub const RESOLVE_MARKER: &str = "__hpd_resolve";
