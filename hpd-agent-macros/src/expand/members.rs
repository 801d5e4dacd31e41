//! Code generation for one member of a harness: the arguments struct and `invoke` arm of an
//! `#[ai_function]`, the call of a `#[sub_agent]` method, and the `format!` that renders a
//! description template.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, LitStr};

use super::super::ast::{Function, Harness, ParamKind, Segment, Template};

pub fn arg_struct(
    krate: &syn::Path,
    harness: &syn::Type,
    index: usize,
    function: &Function,
) -> TokenStream {
    let name = format_ident!("__HpdArgs{}", index);
    let fields = function.arguments().map(|param| {
        let ident = param.ident;
        // `Self` in a parameter type means the harness, not the generated struct.
        let ty = replace_self(param.ty.to_token_stream(), harness);
        let forwarded = &param.forwarded;
        let description = param
            .description
            .as_ref()
            .map(|d| quote!(#[schemars(description = #d)]));
        quote! {
            #(#forwarded)*
            #description
            #ident: #ty,
        }
    });
    // serde and schemars take their crate paths as strings.
    let krate_text = krate.to_token_stream().to_string().replace(' ', "");
    let serde_crate = LitStr::new(
        &format!("{krate_text}::__private::serde"),
        Span::call_site(),
    );
    let schemars_crate = LitStr::new(
        &format!("{krate_text}::__private::schemars"),
        Span::call_site(),
    );
    quote! {
        #[derive(#krate::__private::serde::Deserialize, #krate::__private::schemars::JsonSchema)]
        #[serde(crate = #serde_crate)]
        #[schemars(crate = #schemars_crate)]
        struct #name {
            #(#fields)*
        }
    }
}

pub fn invoke_arm(harness: &Harness, index: usize, function: &Function) -> TokenStream {
    let ty = harness.ty;
    let args = format_ident!("__HpdArgs{}", index);
    let method = &function.method.sig.ident;
    let bindings = function.arguments().map(|p| p.ident);
    let call_args = function.params.iter().map(|param| match param.kind {
        ParamKind::Argument => {
            let ident = param.ident;
            quote!(#ident)
        }
        ParamKind::ContextRef => quote!(&__hpd_ctx),
        ParamKind::Context => quote!(::core::clone::Clone::clone(&__hpd_ctx)),
        ParamKind::Cancellation => {
            quote!(::core::clone::Clone::clone(__hpd_ctx.cancellation_token()))
        }
    });
    let sig = &function.method.sig;
    let output_span = match &sig.output {
        syn::ReturnType::Type(_, ty) => ty.span(),
        syn::ReturnType::Default => sig.ident.span(),
    };
    // Spanned at the return type: a return type that cannot be turned into a result text is
    // reported there.
    // Locals are named at the call site: the user's tokens may come from different
    // `macro_rules!` contexts (a method name from the invocation, a return type from the body).
    let this = Ident::new("__hpd_this", Span::call_site());
    let mut call = quote_spanned!(output_span=> <#ty>::#method(&*#this, #(#call_args),*));
    if sig.asyncness.is_some() {
        call = quote_spanned!(output_span=> #call.await);
    }
    // The returned value becomes a result by its type: a whole result (`IntoToolResult`), a
    // value with a schema (text and structured value), or a value (text). `__hpd::OutputProbe`
    // explains the dispatch; the probe is spanned at the return type, so a type that fits none
    // is reported there.
    let value = Ident::new("__hpd_value", output_span);
    let convert = quote_spanned! {output_span=>
        (&&&__hpd::OutputProbe::of(&#value)).__hpd_kind().output(#value)
    };
    let output = |call: TokenStream| {
        if function.returns_result {
            quote_spanned! {output_span=>
                match #call {
                    __hpd::Ok(#value) => #convert,
                    __hpd::Err(__hpd_error) => __hpd::Err(__hpd::returned(__hpd_error)),
                }
            }
        } else {
            quote_spanned! {output_span=> {
                let #value = #call;
                #convert
            }}
        }
    };
    // The context is built only when the method takes it (a call of any other method allocates
    // nothing for it).
    let takes_context = function
        .params
        .iter()
        .any(|param| !matches!(param.kind, ParamKind::Argument));
    let context = takes_context.then(|| quote!(let __hpd_ctx = __hpd_call.context();));
    let instance = Ident::new("__hpd_instance", Span::call_site());
    let parse = quote! {
        let #args { #(#bindings),* } = match __hpd::parse_arguments::<#args>(__hpd_arguments) {
            __hpd::Ok(__hpd_parsed) => __hpd_parsed,
            __hpd::Err(__hpd_failure) => return __hpd::Started::Done(__hpd::Err(__hpd_failure)),
        };
        #context
    };
    let output_call = output(call);
    if sig.asyncness.is_none() {
        // A synchronous method runs right here, on the borrowed instance: no future, no box.
        let body = quote_spanned! {sig.ident.span()=>
            let #this = __hpd_this_ref::<#ty>(#instance);
            __hpd::Started::Done(#output_call)
        };
        return quote! {
            #index => {
                #parse
                #body
            }
        };
    }
    // The future owns the type-erased instance (always `Send`) and downcasts inside.
    // The instance is bound by call-site code below; name it at the call site here too, so it
    // resolves when the user's tokens carry `macro_rules!` hygiene.
    let body = quote_spanned! {sig.ident.span()=>
        __hpd::Box::pin(async move {
            let #this = __hpd_this::<#ty>(&#instance);
            #output_call
        })
    };
    quote! {
        #index => {
            #parse
            let __hpd_instance = ::std::sync::Arc::clone(__hpd_instance);
            __hpd::Started::Running(#body)
        }
    }
}

/// The output schema function of an `#[ai_function]`: the schema of its return type (`T` of a
/// `Result<T, E>`) through the same probe as its values; `None` for a type the macro cannot
/// name outside the method.
pub fn output_schema_fn(harness: &Harness, index: usize, function: &Function) -> TokenStream {
    let name = format_ident!("__hpd_output_schema{}", index);
    let body = match function.output_type {
        Some(ty) => {
            let ty = replace_self(ty.to_token_stream(), harness.ty);
            quote! {
                let __hpd_probe = __hpd::OutputProbe::<#ty>::new();
                (&&&__hpd_probe).__hpd_kind().output_schema(__hpd_probe)
            }
        }
        None => quote!(__hpd::None),
    };
    quote! {
        fn #name() -> __hpd::Option<__hpd::serde_json::Value> {
            #body
        }
    }
}

/// Calls a `#[sub_agent]` method on an instance. Spanned at the return type, so a method that
/// does not return a `SubAgent` is reported there.
pub fn sub_agent_fn(harness: &Harness, index: usize, function: &Function) -> TokenStream {
    let ty = harness.ty;
    let make = format_ident!("__hpd_sub_agent{}", index);
    let method = &function.method.sig.ident;
    let sig = &function.method.sig;
    let output_span = match &sig.output {
        syn::ReturnType::Type(_, ty) => ty.span(),
        syn::ReturnType::Default => sig.ident.span(),
    };
    let this = Ident::new("__hpd_this", Span::call_site());
    let instance = Ident::new("__hpd_instance", Span::call_site());
    let call = quote_spanned!(output_span=> <#ty>::#method(&*#this));
    quote! {
        fn #make(#instance: &__hpd::HarnessObject) -> __hpd::SubAgent {
            let #this = __hpd_this::<#ty>(#instance);
            #call
        }
    }
}

/// `format!(...)` of a template, with each field access spanned at the description so rustc
/// reports a missing field there.
pub fn render(template: &Template, metadata: &Ident) -> TokenStream {
    let mut format = String::new();
    let mut values = Vec::new();
    for segment in &template.segments {
        match segment {
            Segment::Text(text) => format.push_str(&text.replace('{', "{{").replace('}', "}}")),
            Segment::Placeholder(placeholder) => {
                format.push_str("{}");
                // At the description, but marked as macro output so rustc does not suggest
                // replacing the literal with a field name.
                let span = Span::call_site().located_at(placeholder.span);
                let fields = placeholder.field.iter().map(|part| {
                    if part.starts_with(|c: char| c.is_ascii_digit()) {
                        let index = syn::Index {
                            // Checked when the template was parsed.
                            index: part.parse().unwrap_or_default(),
                            span,
                        };
                        quote!(#index)
                    } else {
                        let ident = Ident::new(part, span);
                        quote!(#ident)
                    }
                });
                values.push(quote_spanned!(span=> #metadata #(.#fields)*));
            }
        }
    }
    let format = LitStr::new(&format, template.span);
    quote!(__hpd::format!(#format #(, #values)*))
}

/// `tokens` with every `Self` replaced by the harness type.
fn replace_self(tokens: TokenStream, harness: &syn::Type) -> TokenStream {
    tokens
        .into_iter()
        .flat_map(|tree| match tree {
            proc_macro2::TokenTree::Ident(ident) if ident == "Self" => {
                quote_spanned!(ident.span()=> #harness)
            }
            proc_macro2::TokenTree::Group(group) => {
                let mut replaced = proc_macro2::Group::new(
                    group.delimiter(),
                    replace_self(group.stream(), harness),
                );
                replaced.set_span(group.span());
                proc_macro2::TokenTree::Group(replaced).into()
            }
            other => other.into(),
        })
        .collect()
}

/// The first `metadata` identifier of a condition, as the user wrote it.
pub fn metadata_ident(tokens: TokenStream) -> Option<Ident> {
    tokens.into_iter().find_map(|tree| match tree {
        proc_macro2::TokenTree::Ident(ident) if ident == "metadata" => Some(ident),
        proc_macro2::TokenTree::Group(group) => metadata_ident(group.stream()),
        _ => None,
    })
}
