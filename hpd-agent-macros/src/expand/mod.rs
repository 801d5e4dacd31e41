//! Code generation for `#[tool_harness]` and `#[collapse]`. Entry point: [`harness`].
//!
//! The output is the user's impl block with the helper attributes removed, followed by one
//! `const _: () = { ... };` holding everything generated: an arguments struct per function, the
//! `invoke` dispatcher, constructor, metadata, condition and description functions, the
//! `HarnessEntry` static, the `ToolHarness` impl and the `inventory` submission. All behaviour is
//! in `::hpd_agent::__private`; this module only writes calls to it.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ItemImpl, LitStr};

mod members;

use members::{arg_struct, invoke_arm, metadata_ident, output_schema_fn, render, sub_agent_fn};

use super::args::{self, Kind};
use super::ast::{Constructor, Function, Harness, MemberKind};
use super::errors::Errors;
use super::fallback;
use super::user_item::{helper_uses, user_impl};
use super::valid;

/// Expands `#[tool_harness(args)]` or `#[collapse(args)]` on `input`.
pub fn harness(kind: Kind, args: TokenStream, input: TokenStream) -> TokenStream {
    let item: ItemImpl = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => return fallback::not_an_impl(kind, input),
    };
    let errors = Errors::default();
    let args = args::harness_args(kind, args, &errors);
    let harness = Harness::from_syn(&item, args, &errors);
    valid::harness(&harness, &errors);
    if !errors.is_empty() {
        return fallback::invalid_harness(&harness, &errors);
    }
    let user_impl = user_impl(&item);
    let generated = generated(&harness);
    quote! {
        #user_impl
        #generated
    }
}

fn generated(harness: &Harness) -> TokenStream {
    let ty = harness.ty;
    // `impl crate::inner::Tools` is `Tools` in `rust_type`, after the module path.
    let type_name = match ty {
        syn::Type::Path(path) => path
            .path
            .segments
            .last()
            .map_or_else(|| ty.to_token_stream(), |s| s.ident.to_token_stream()),
        _ => ty.to_token_stream(),
    };
    let ty_span = ty.span();
    let krate = harness.args.crate_path();
    let name = &harness.name;
    let helper_uses = helper_uses(harness);
    let metadata_ty = harness.args.metadata.as_ref();

    let functions = &harness.functions;
    let is_function = |f: &&Function| f.kind == MemberKind::Function;
    let arg_structs = functions
        .iter()
        .enumerate()
        .filter(|(_, f)| is_function(f))
        .map(|(i, f)| arg_struct(&krate, ty, i, f));
    let schema_fns = functions
        .iter()
        .enumerate()
        .filter(|(_, f)| is_function(f))
        .map(|(i, _)| {
            let schema = format_ident!("__hpd_schema{}", i);
            let args = format_ident!("__HpdArgs{}", i);
            quote! {
                fn #schema() -> __hpd::serde_json::Value {
                    __hpd::parameters_schema::<#args>()
                }
            }
        });
    let output_schema_fns = functions
        .iter()
        .enumerate()
        .filter(|(_, f)| is_function(f))
        .map(|(i, f)| output_schema_fn(harness, i, f));
    let sub_agent_fns = functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.kind == MemberKind::SubAgent)
        .map(|(i, f)| sub_agent_fn(harness, i, f));
    let invoke_arms = functions
        .iter()
        .enumerate()
        .filter(|(_, f)| is_function(f))
        .map(|(i, f)| invoke_arm(harness, i, f));
    let specs = functions.iter().enumerate().map(|(i, f)| {
        let name = &f.name;
        let description = f.description.static_text();
        let (schema, output_schema, sub_agent) = match f.kind {
            MemberKind::Function => {
                let schema = format_ident!("__hpd_schema{}", i);
                let output_schema = format_ident!("__hpd_output_schema{}", i);
                (quote!(#schema), quote!(#output_schema), quote!(__hpd::None))
            }
            MemberKind::SubAgent => {
                let make = format_ident!("__hpd_sub_agent{}", i);
                (
                    quote!(__hpd::sub_agent_schema),
                    quote!(__hpd::no_output_schema),
                    quote!(__hpd::Some(#make)),
                )
            }
        };
        let timeout = match f.timeout_ms {
            Some(ms) => quote!(__hpd::Some(#ms)),
            None => quote!(__hpd::None),
        };
        let requires_approval = f.requires_approval;
        // `ToolAnnotations::new()` with a `.with_*(bool)` call per option written: the spec is
        // a static, and the type's fields are not public to build it by name.
        let annotations = [
            ("with_read_only", f.annotations.read_only),
            ("with_destructive", f.annotations.destructive),
            ("with_idempotent", f.annotations.idempotent),
            ("with_open_world", f.annotations.open_world),
        ]
        .into_iter()
        .filter_map(|(method, value)| {
            let method = format_ident!("{}", method);
            value.map(|value| quote!(.#method(#value)))
        });
        quote! {
            __hpd::FunctionSpec {
                name: #name,
                description: #description,
                timeout_ms: #timeout,
                requires_approval: #requires_approval,
                annotations: __hpd::ToolAnnotations::new()#(#annotations)*,
                schema: #schema,
                output_schema: #output_schema,
                sub_agent: #sub_agent,
            }
        }
    });

    let collapse = match harness.args.kind {
        Kind::Plain => quote!(__hpd::None),
        Kind::Collapse => {
            let description = &harness.args.description;
            let function_result = option_str(harness.args.function_result.as_ref());
            let system_prompt = option_str(harness.args.system_prompt.as_ref());
            quote! {
                __hpd::Some(__hpd::CollapseSpec {
                    description: #description,
                    function_result: #function_result,
                    system_prompt: #system_prompt,
                })
            }
        }
    };

    let (constructor_fn, constructor, config_ty, from_config) = match harness.constructor {
        Constructor::Config(config) => {
            let config_name = short_name(config);
            (
                quote! {
                    fn __hpd_construct(
                        __hpd_config: &__hpd::serde_json::Value,
                    ) -> __hpd::Result<__hpd::HarnessObject, __hpd::HydrateError> {
                        fn __hpd_with_config<H: __hpd::ToolHarness, C: __hpd::serde::de::DeserializeOwned>(
                            __hpd_config: &__hpd::serde_json::Value,
                            __hpd_name: &'static str,
                            __hpd_new: fn(C) -> H,
                        ) -> __hpd::Result<__hpd::HarnessObject, __hpd::HydrateError> {
                            __hpd::construct_with_config::<H, C>(__hpd_config, __hpd_name, __hpd_new)
                        }
                        __hpd_with_config::<#ty, #config>(__hpd_config, #config_name, <#ty>::new)
                    }
                },
                quote! {
                    __hpd::ConstructorSpec::Config {
                        type_name: #config_name,
                        construct: __hpd_construct,
                    }
                },
                quote!(#config),
                quote!(<#ty>::new(config)),
            )
        }
        Constructor::New => (
            quote! {
                fn __hpd_construct() -> __hpd::HarnessObject {
                    fn __hpd_object<H: __hpd::ToolHarness>(__hpd_harness: H) -> __hpd::HarnessObject {
                        __hpd::object(__hpd_harness)
                    }
                    __hpd_object(<#ty>::new())
                }
            },
            quote!(__hpd::ConstructorSpec::Plain(__hpd_construct)),
            quote!(__hpd::Never),
            quote!(match config {}),
        ),
        Constructor::Default => (
            quote! {
                fn __hpd_construct<H: __hpd::ToolHarness + __hpd::DefaultConstructible>() -> __hpd::HarnessObject {
                    __hpd::construct_default::<H>()
                }
            },
            quote_spanned!(ty_span=> __hpd::ConstructorSpec::Plain(__hpd_construct::<#ty>)),
            quote!(__hpd::Never),
            quote!(match config {}),
        ),
    };

    let any = quote! {
        __hpd::Option<&(dyn ::core::any::Any + ::core::marker::Send + ::core::marker::Sync)>
    };
    let (metadata_fn, metadata, metadata_assoc) = match metadata_ty {
        Some(m) => {
            let m_name = short_name(m);
            (
                quote! {
                    fn __hpd_parse_metadata(
                        __hpd_value: &__hpd::serde_json::Value,
                    ) -> __hpd::Result<
                        ::std::sync::Arc<dyn ::core::any::Any + ::core::marker::Send + ::core::marker::Sync>,
                        __hpd::HydrateError,
                    > {
                        __hpd::parse_metadata::<#m>(__hpd_value, #m_name)
                    }
                },
                quote! {
                    __hpd::Some(__hpd::MetadataSpec {
                        type_name: #m_name,
                        parse: __hpd_parse_metadata,
                    })
                },
                quote!(#m),
            )
        }
        None => (
            TokenStream::new(),
            quote!(__hpd::None),
            quote!(__hpd::Never),
        ),
    };

    let metadata_binding = Ident::new("metadata", Span::call_site());
    let conditions: Vec<TokenStream> = functions
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let condition = f.condition.as_ref()?;
            let span = condition.span();
            // Bind `metadata` again with the user's own token, so the condition resolves it
            // whatever hygiene that token carries (a `macro_rules!` macro gives it its own).
            let rebind = metadata_ident(condition.to_token_stream())
                .map(|user| quote!(let #user = #metadata_binding;));
            Some(quote_spanned! {span=>
                #i => {
                    #rebind
                    let __hpd_holds: bool = #condition;
                    __hpd_holds
                }
            })
        })
        .collect();
    let (condition_fn, condition) = match (metadata_ty, conditions.is_empty()) {
        (Some(m), false) => (
            quote! {
                fn __hpd_condition(__hpd_metadata: #any, __hpd_index: usize) -> bool {
                    let __hpd::Some(#metadata_binding) = __hpd::metadata::<#m>(__hpd_metadata) else {
                        return true;
                    };
                    match __hpd_index {
                        #(#conditions)*
                        _ => true,
                    }
                }
            },
            quote!(__hpd_condition),
        ),
        _ => (TokenStream::new(), quote!(__hpd::always)),
    };

    let describes: Vec<TokenStream> = functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.description.placeholders().next().is_some())
        .map(|(i, f)| {
            let render = render(&f.description, &metadata_binding);
            quote!(#i => __hpd::Some(#render),)
        })
        .collect();
    let (describe_fn, describe) = match (metadata_ty, describes.is_empty()) {
        (Some(m), false) => (
            quote! {
                fn __hpd_describe(__hpd_metadata: #any, __hpd_index: usize) -> __hpd::Option<__hpd::String> {
                    let #metadata_binding = __hpd::metadata::<#m>(__hpd_metadata)?;
                    match __hpd_index {
                        #(#describes)*
                        _ => __hpd::None,
                    }
                }
            },
            quote!(__hpd_describe),
        ),
        _ => (TokenStream::new(), quote!(__hpd::static_description)),
    };

    let middleware_fns = harness
        .args
        .middlewares
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let f = format_ident!("__hpd_middleware{}", i);
            let name = path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            let call = quote_spanned! {path.span()=>
                (&__hpd::Probe::<#path>::new()).scoped_middleware_spec(#name)
            };
            quote! {
                fn #f() -> __hpd::ScopedMiddlewareSpec {
                    #call
                }
            }
        });
    let middleware_refs =
        (0..harness.args.middlewares.len()).map(|i| format_ident!("__hpd_middleware{}", i));
    let mut probe_traits = if harness.args.middlewares.is_empty() {
        TokenStream::new()
    } else {
        quote!(
            use __hpd::{ViaConfig as _, ViaDefault as _};
        )
    };
    if harness
        .functions
        .iter()
        .any(|f| f.kind == MemberKind::Function)
    {
        probe_traits.extend(quote!(
            use __hpd::{ViaParts as _, ViaSchema as _, ViaText as _};
        ));
    }

    // Spanned at the attribute: a second annotated impl block of the same type makes rustc
    // report "conflicting implementations of trait `ToolHarness`" at that block's attribute.
    // `config` is named at the call site, like its uses in `#from_config`.
    let config_param = Ident::new("config", Span::call_site());
    let tool_harness_impl = quote_spanned! {ty_span=>
        impl __hpd::ToolHarness for #ty {
            type Metadata = #metadata_assoc;
            type Config = #config_ty;
            fn from_config(#config_param: Self::Config) -> Self {
                #from_config
            }
            fn __harness_info(_: __hpd::Seal) -> &'static __hpd::HarnessInfo {
                &__HPD_INFO
            }
        }
    };

    quote! {
        #[allow(
            unused_qualifications,
            unused_variables,
            dead_code,
            deprecated,
            non_camel_case_types,
            non_snake_case,
            clippy::all,
            clippy::pedantic,
            clippy::nursery
        )]
        const _: () = {
            use #krate::__private as __hpd;
            #probe_traits
            #helper_uses

            #(#arg_structs)*
            #(#schema_fns)*
            #(#output_schema_fns)*
            #(#sub_agent_fns)*

            // The generic helpers here and in the constructors only require `ToolHarness`, whose
            // supertraits are `Send + Sync + 'static`: a harness type that is not thread-safe is
            // reported once, at the `ToolHarness` impl, instead of at every generated use.
            fn __hpd_this<H: __hpd::ToolHarness>(
                __hpd_instance: &__hpd::HarnessObject,
            ) -> ::std::sync::Arc<H> {
                __hpd::downcast::<H>(__hpd_instance)
            }

            fn __hpd_this_ref<H: __hpd::ToolHarness>(
                __hpd_instance: &__hpd::HarnessObject,
            ) -> &H {
                __hpd::downcast_ref::<H>(__hpd_instance)
            }

            fn __hpd_invoke(
                __hpd_instance: &__hpd::HarnessObject,
                __hpd_index: usize,
                __hpd_arguments: &str,
                __hpd_call: &__hpd::CallParts<'_>,
            ) -> __hpd::Started {
                match __hpd_index {
                    #(#invoke_arms)*
                    _ => __hpd::Started::Done(__hpd::Err(__hpd::FunctionFailure::InvalidArguments(
                        __hpd::String::from("no such function"),
                    ))),
                }
            }

            #constructor_fn
            #metadata_fn
            #condition_fn
            #describe_fn
            #(#middleware_fns)*

            static __HPD_ENTRY: __hpd::HarnessEntry = __hpd::HarnessEntry {
                name: #name,
                rust_type: ::core::concat!(::core::module_path!(), "::", ::core::stringify!(#type_name)),
                functions: &[#(#specs),*],
                collapse: #collapse,
                constructor: #constructor,
                metadata: #metadata,
                scoped_middlewares: &[#(#middleware_refs),*],
                invoke: __hpd_invoke,
                condition: #condition,
                describe: #describe,
                type_id: __hpd::type_id::<#ty>,
            };
            static __HPD_INFO: __hpd::HarnessInfo = __hpd::HarnessInfo::new(&__HPD_ENTRY);

            #tool_harness_impl

            __hpd::inventory::submit! { __hpd::HarnessRegistration(&__HPD_INFO) }
        };
    }
}

fn option_str(lit: Option<&LitStr>) -> TokenStream {
    match lit {
        Some(lit) => quote!(__hpd::Some(#lit)),
        None => quote!(__hpd::None),
    }
}

/// `crate::config::SearchToolsConfig` gives `"SearchToolsConfig"`.
fn short_name(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(path) => path
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        other => quote!(#other).to_string(),
    }
}
