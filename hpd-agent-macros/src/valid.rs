//! Checks on the typed view: shapes rustc would accept but the runtime cannot use (generic or
//! trait impls, receivers, parameter patterns), names, duplicates, and options that need
//! `metadata = Type`. Every check reports into [`Errors`]; none stops the others.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{FnArg, GenericParam, ReceiverKind, Type};

use super::ast::{Function, Harness, MemberKind, ParamKind};
use super::errors::Errors;

pub fn harness(harness: &Harness, errors: &Errors) {
    let item = harness.item;
    let attr = harness.args.kind.attr();
    if let Some((path, _)) = &item.trait_ {
        errors.error(
            path.span(),
            format!(
                "`#[{attr}]` goes on an inherent impl block like `impl MyTools {{ ... }}`, not on a trait impl; move the functions into an inherent impl of the type"
            ),
        );
    }
    if let Some(param) = item.generics.params.first() {
        let what = match param {
            GenericParam::Lifetime(_) => "lifetime",
            _ => "generic",
        };
        errors.spanned(
            &item.generics,
            format!(
                "`#[{attr}]` cannot go on a {what} impl block; annotate an impl of a concrete type, e.g. a wrapper struct without parameters"
            ),
        );
    } else if let Some(where_clause) = &item.generics.where_clause {
        errors.spanned(
            where_clause,
            format!("`#[{attr}]` impl blocks cannot have a `where` clause; remove it"),
        );
    }
    if harness.type_ident.is_none() {
        errors.spanned(
            &item.self_ty,
            format!("`#[{attr}]` needs an impl of a named type, like `impl MyTools {{ ... }}`"),
        );
    }
    check_name("harness", &harness.name, harness.name_span, errors);

    let mut seen: Vec<&str> = Vec::new();
    for function in &harness.functions {
        self::function(harness, function, errors);
        if seen.contains(&function.name.as_str()) {
            errors.error(
                function.name_span,
                format!(
                    "duplicate function name `{}` in harness `{}`; give one of them another name with `#[{}(name = \"...\")]`",
                    function.name,
                    harness.name,
                    function.kind.attr()
                ),
            );
        } else {
            seen.push(&function.name);
        }
    }
}

fn function(harness: &Harness, function: &Function, errors: &Errors) {
    let sig = &function.method.sig;
    let fn_name = &sig.ident;
    let attr = function.kind.attr();
    check_name(
        match function.kind {
            MemberKind::Function => "function",
            MemberKind::SubAgent => "sub-agent",
        },
        &function.name,
        function.name_span,
        errors,
    );

    // Receiver: exactly `&self`.
    match sig.inputs.first() {
        Some(FnArg::Receiver(receiver)) => {
            let written = receiver.to_token_stream_string();
            let problem = match &receiver.kind {
                ReceiverKind::Reference(_, _, None) => None,
                // self: &Self (the same receiver as `&self`, spelled out)
                ReceiverKind::Typed(_, ty) if is_shared_self_ref(ty) => None,
                ReceiverKind::Reference(_, _, Some(_)) => Some(
                    "calls share the harness and may run concurrently; keep mutable state in a `Mutex`, `RwLock` or atomic field",
                ),
                ReceiverKind::Value => Some(
                    "every call borrows the same harness, so it cannot be consumed; write `&self`",
                ),
                _ => Some("the registry calls them on a shared reference; write `&self`"),
            };
            if let Some(why) = problem {
                errors.spanned(
                    receiver,
                    format!("`#[{attr}]` methods take `&self`, not `{written}`: {why}"),
                );
            }
        }
        _ => errors.error(
            fn_name.span(),
            format!(
                "`#[{attr}]` method `{fn_name}` has no `self` parameter; add `&self` as its first parameter"
            ),
        ),
    }

    if let Some(unsafety) = match &sig.safety {
        syn::Safety::Unsafe(token) => Some(token.span),
        _ => None,
    } {
        errors.error(
            unsafety,
            format!(
                "`#[{attr}]` methods cannot be `unsafe`; the model calls them with arbitrary arguments"
            ),
        );
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(
            abi,
            format!("`#[{attr}]` methods use the Rust ABI; remove the `extern`"),
        );
    }
    // Lifetime parameters are harmless (they are inferred at the call); type and const
    // parameters are not, since the arguments are deserialized into concrete types.
    if sig
        .generics
        .params
        .iter()
        .any(|p| !matches!(p, GenericParam::Lifetime(_)))
    {
        errors.spanned(
            &sig.generics,
            format!(
                "`#[{attr}]` methods cannot have type or const parameters; the arguments are deserialized into concrete types"
            ),
        );
    }

    if function.kind == MemberKind::SubAgent {
        sub_agent(function, errors);
        return;
    }

    for param in &function.params {
        match param.ident {
            None => errors.spanned(
                param.pat,
                "unsupported parameter pattern in an `#[ai_function]`; use a plain name like `city: String` (the name is the JSON argument name)",
            ),
            Some(_) if param.kind == ParamKind::Argument => {
                if let Type::Reference(reference) = param.ty {
                    let token = matches!(&*reference.elem, Type::Path(p)
                        if p.path.segments.last().is_some_and(|s| s.ident == "CancellationToken"));
                    errors.spanned(
                        reference,
                        if token {
                            "the runtime hands a `CancellationToken` by value (it is a cheap handle); write `token: CancellationToken`"
                        } else {
                            "`#[ai_function]` parameters are deserialized from the model's JSON arguments, so they must be owned; use `String` instead of `&str`, `Vec<T>` instead of `&[T]`"
                        },
                    );
                }
            }
            Some(_) => {}
        }
        if param.kind != ParamKind::Argument
            && let Some(description) = &param.description
        {
            errors.error(
                description.span(),
                "this parameter is supplied by the runtime and is not in the schema; remove `#[ai_description]`",
            );
        }
    }

    if harness.args.metadata.is_none() {
        if let Some(condition) = &function.condition {
            errors.spanned(
                condition,
                format!(
                    "`condition` reads the harness metadata, but `{}` declares no metadata type; add `metadata = YourMetadata` to `#[{}(...)]`",
                    harness.name,
                    harness.args.kind.attr()
                ),
            );
        }
        if let Some(placeholder) = function.description.placeholders().next() {
            errors.error(
                placeholder.span,
                format!(
                    "the description placeholder `{{metadata.{}}}` needs the harness metadata, but `{}` declares no metadata type; add `metadata = YourMetadata` to `#[{}(...)]`, or write `{{{{` and `}}}}` for literal braces",
                    placeholder.field.join("."),
                    harness.name,
                    harness.args.kind.attr()
                ),
            );
        }
    }
}

/// A `#[sub_agent]` method takes only `&self` and returns its `SubAgent` right away.
fn sub_agent(function: &Function, errors: &Errors) {
    let sig = &function.method.sig;
    if let Some(asyncness) = &sig.asyncness {
        errors.spanned(
            asyncness,
            "`#[sub_agent]` methods cannot be `async`; the agent calls them once when it is built, so return the `SubAgent` directly",
        );
    }
    if let Some(param) = function.params.first() {
        errors.spanned(
            param.pat,
            "`#[sub_agent]` methods take only `&self`; the model's input reaches the sub-agent as its `input` argument",
        );
    }
    if matches!(sig.output, syn::ReturnType::Default) {
        errors.error(
            sig.ident.span(),
            format!(
                "`#[sub_agent]` method `{}` returns nothing; return the `hpd_agent::SubAgent` that runs the child agent",
                sig.ident
            ),
        );
    }
}

fn check_name(what: &str, name: &str, span: Span, errors: &Errors) {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !valid {
        let detail = if name.is_empty() {
            "it is empty".to_owned()
        } else if name.len() > 64 {
            format!("it has {} characters, at most 64 are allowed", name.len())
        } else {
            "only ASCII letters, digits, `_` and `-` are allowed".to_owned()
        };
        errors.error(
            span,
            format!(
                "invalid {what} name `{name}`: {detail} (tool names match `[A-Za-z0-9_-]{{1,64}}` on every provider); choose another with `name = \"...\"`"
            ),
        );
    }
}

trait WrittenAs {
    fn to_token_stream_string(&self) -> String;
}

/// `&Self` or `&'a Self`.
fn is_shared_self_ref(ty: &Type) -> bool {
    match ty {
        Type::Reference(reference) => {
            reference.mutability.is_none()
                && matches!(&*reference.elem, Type::Path(p) if p.qself.is_none() && p.path.is_ident("Self"))
        }
        _ => false,
    }
}

impl WrittenAs for syn::Receiver {
    fn to_token_stream_string(&self) -> String {
        let mut text = quote::ToTokens::to_token_stream(self).to_string();
        for (from, to) in [
            ("& ", "&"),
            (" :", ":"),
            ("< ", "<"),
            (" >", ">"),
            (" <", "<"),
        ] {
            text = text.replace(from, to);
        }
        text
    }
}
