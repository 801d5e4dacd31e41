//! What is emitted when the input is wrong: the errors, plus the user's item with the helper
//! attributes removed, so one mistake gives one error and not a cascade of "cannot find
//! attribute" or "unresolved method" errors.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::ItemFn;

use super::args::Kind;
use super::ast::{Harness, is_helper};
use super::errors::Errors;
use super::user_item::{RESOLVE_MARKER, helper_uses, user_impl};

/// The impl block is there but something in it or in the attribute is wrong.
pub fn invalid_harness(harness: &Harness, errors: &Errors) -> TokenStream {
    let errors = errors.to_compile_errors();
    let user_impl = user_impl(harness.item);
    let helper_uses = helper_uses(harness);
    // A stand-in `ToolHarness` impl keeps `with_tool_harness::<T>()` and friends from adding a
    // second error far from the mistake (the crate does not build anyway). Only for shapes the
    // real impl would have had: a named type, no generics, no trait impl.
    let stand_in = (matches!(harness.ty, syn::Type::Path(_))
        && harness.item.generics.params.is_empty()
        && harness.item.trait_.is_none())
    .then(|| {
        let ty = harness.ty;
        let krate = harness.args.crate_path();
        quote! {
            impl #krate::__private::ToolHarness for #ty {
                type Metadata = #krate::__private::Never;
                type Config = #krate::__private::Never;
                fn from_config(config: Self::Config) -> Self {
                    match config {}
                }
                fn __harness_info(
                    _: #krate::__private::Seal,
                ) -> &'static #krate::__private::HarnessInfo {
                    ::core::unreachable!("this harness did not compile")
                }
            }
        }
    });
    quote! {
        #errors
        #user_impl
        const _: () = {
            #helper_uses
            #stand_in
        };
    }
}

/// The attribute is not on an impl block.
pub fn not_an_impl(kind: Kind, input: TokenStream) -> TokenStream {
    let message = match kind {
        Kind::Plain => {
            "`#[tool_harness]` goes on an impl block of the harness type, like `#[tool_harness] impl MyTools { ... }`"
        }
        Kind::Collapse => {
            "`#[collapse(\"...\")]` goes on an impl block of the harness type, like `#[collapse(\"My tools\")] impl MyTools { ... }`"
        }
    };
    let error = syn::Error::new(Span::call_site(), message).to_compile_error();
    quote! {
        #error
        #input
    }
}

/// `#[sub_agent]` expanded on its own: it is not inside an annotated impl block (or it is the
/// marker of `user_item::helper_uses`, which expands to nothing).
pub fn sub_agent_outside_harness(args: TokenStream, input: TokenStream) -> TokenStream {
    if let Ok(marker) = syn::parse2::<syn::Ident>(args)
        && marker == RESOLVE_MARKER
    {
        return TokenStream::new();
    }
    let error = syn::Error::new(
        Span::call_site(),
        "`#[sub_agent]` only works on a method of an impl block annotated with `#[tool_harness]` or `#[collapse(\"...\")]`; add one of them to the impl block, or register the sub-agent with `AgentBuilder::with_sub_agent`",
    )
    .to_compile_error();
    quote! {
        #error
        #input
    }
}

/// `#[ai_function]` expanded on its own: it is not inside an annotated impl block (or it is the
/// marker of `user_item::helper_uses`, which expands to nothing).
pub fn ai_function_outside_harness(args: TokenStream, input: TokenStream) -> TokenStream {
    if let Ok(marker) = syn::parse2::<syn::Ident>(args)
        && marker == RESOLVE_MARKER
    {
        return TokenStream::new();
    }
    let error = syn::Error::new(
        Span::call_site(),
        "`#[ai_function]` only works on a method of an impl block annotated with `#[tool_harness]` or `#[collapse(\"...\")]`; add one of them to the impl block",
    )
    .to_compile_error();
    let item = match syn::parse2::<ItemFn>(input.clone()) {
        Ok(mut item) => {
            for arg in &mut item.sig.inputs {
                if let syn::FnArg::Typed(param) = arg {
                    param
                        .attrs
                        .retain(|attr| !is_helper(attr.path(), "ai_description"));
                }
            }
            quote!(#item)
        }
        Err(_) => input,
    };
    quote! {
        #error
        #item
    }
}
