//! Attribute arguments, one struct per attribute: `#[tool_harness(...)]` and `#[collapse(...)]`
//! ([`HarnessArgs`]), `#[ai_function(...)]` ([`FunctionArgs`]), `#[sub_agent(...)]`
//! ([`SubAgentArgs`]) and the parameter helper
//! `#[ai_description("...")]`.
//!
//! Error policy: every mistake goes to [`Errors`] and parsing goes on after the next top-level
//! `,`, so one attribute with three mistakes reports three errors.

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, ExprLit, Ident, Lit, LitBool, LitInt, LitStr, Meta, Path, Token, Type};

use super::errors::Errors;

/// Which impl attribute is being expanded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `#[tool_harness]`
    Plain,
    /// `#[collapse("...")]`
    Collapse,
}

impl Kind {
    /// The attribute's name, for messages.
    pub fn attr(self) -> &'static str {
        match self {
            Kind::Plain => "tool_harness",
            Kind::Collapse => "collapse",
        }
    }

    fn options(self) -> &'static [&'static str] {
        match self {
            Kind::Plain => &["name", "metadata", "crate"],
            Kind::Collapse => &[
                "name",
                "metadata",
                "function_result",
                "system_prompt",
                "middlewares",
                "crate",
            ],
        }
    }
}

/// The arguments of `#[tool_harness(...)]` or `#[collapse(...)]`.
pub struct HarnessArgs {
    pub kind: Kind,
    /// The container description, the leading string of `#[collapse("...")]`.
    pub description: Option<LitStr>,
    pub name: Option<LitStr>,
    pub metadata: Option<Type>,
    pub function_result: Option<LitStr>,
    pub system_prompt: Option<LitStr>,
    pub middlewares: Vec<Path>,
    /// `crate = "..."`: the path of the `hpd_agent` crate, for a renamed dependency.
    pub krate: Option<Path>,
}

impl HarnessArgs {
    /// The path of the `hpd_agent` crate in generated code: `crate = "..."`, or `::hpd_agent`.
    pub fn crate_path(&self) -> Path {
        self.krate
            .clone()
            .unwrap_or_else(|| syn::parse_quote!(::hpd_agent))
    }
}

/// The arguments of `#[ai_function(...)]`.
#[derive(Default)]
pub struct FunctionArgs {
    pub name: Option<LitStr>,
    pub description: Option<LitStr>,
    pub condition: Option<Expr>,
    pub timeout_ms: Option<(u64, Span)>,
    pub requires_approval: bool,
    /// What the function says it does to its environment: `read_only`, `destructive`,
    /// `idempotent`, `open_world` (MCP's tool annotations), each `None` when not written.
    pub annotations: Annotations,
}

/// The annotation options of `#[ai_function(...)]`.
#[derive(Default, Clone, Copy)]
pub struct Annotations {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

pub const FUNCTION_OPTIONS: &[&str] = &[
    "name",
    "description",
    "condition",
    "timeout_ms",
    "requires_approval",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
];

/// Options that may stand alone, meaning `= true`.
const FLAG_OPTIONS: &[&str] = &[
    "requires_approval",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
];

/// The arguments of `#[sub_agent(...)]`.
#[derive(Default)]
pub struct SubAgentArgs {
    pub name: Option<LitStr>,
}

pub const SUB_AGENT_OPTIONS: &[&str] = &["name"];

/// Parses the impl attribute's arguments.
pub fn harness_args(kind: Kind, tokens: TokenStream, errors: &Errors) -> HarnessArgs {
    let mut args = HarnessArgs {
        kind,
        description: None,
        name: None,
        metadata: None,
        function_result: None,
        system_prompt: None,
        middlewares: Vec::new(),
        krate: None,
    };
    let parser = |input: ParseStream| {
        // #[collapse("Math operations", ...)]
        if input.peek(LitStr) {
            let description: LitStr = input.parse()?;
            if kind == Kind::Collapse {
                args.description = Some(description);
            } else {
                errors.error(
                    description.span(),
                    "`#[tool_harness]` takes no description; for a collapsed harness write `#[collapse(\"...\")]` instead",
                );
            }
            if !input.is_empty() && input.parse::<Token![,]>().is_err() {
                return Err(input.error("expected `,` between the description and the options"));
            }
        }
        options(input, kind.attr(), kind.options(), errors, |key, input| {
            match key {
                // name = "weather"
                "name" => args.name = Some(lit_str(key, input)?),
                // metadata = SearchMetadata
                "metadata" => args.metadata = Some(input.parse()?),
                // function_result = "Math tools are active."
                "function_result" => args.function_result = Some(lit_str(key, input)?),
                // system_prompt = "Use exact arithmetic."
                "system_prompt" => args.system_prompt = Some(lit_str(key, input)?),
                // crate = "renamed_hpd_agent"
                "crate" => {
                    let lit = lit_str(key, input)?;
                    args.krate = Some(lit.parse::<Path>().map_err(|_| {
                        syn::Error::new(
                            lit.span(),
                            "`crate` takes the path of the hpd-agent crate as a string, like `crate = \"my_agents\"` for a dependency renamed to `my_agents`",
                        )
                    })?);
                }
                // middlewares = [Audit, crate::mw::Limits]
                _ => {
                    if !input.peek(syn::token::Bracket) {
                        return Err(input.error(
                            "`middlewares` takes a list of middleware types, like `middlewares = [AuditMiddleware]`",
                        ));
                    }
                    let content;
                    syn::bracketed!(content in input);
                    let list = Punctuated::<Path, Token![,]>::parse_terminated(&content)?;
                    args.middlewares = list.into_iter().collect();
                }
            }
            Ok(())
        });
        Ok(())
    };
    if let Err(e) = parser.parse2(tokens) {
        errors.push(e);
    }
    if kind == Kind::Collapse && args.description.is_none() {
        errors.error(
            Span::call_site(),
            "`#[collapse]` needs the container description as its first argument, like `#[collapse(\"Math operations\")]`",
        );
    }
    args
}

/// Parses one `#[ai_function]` or `#[ai_function(...)]` attribute.
pub fn function_args(attr: &Attribute, errors: &Errors) -> FunctionArgs {
    let mut args = FunctionArgs::default();
    let tokens = match &attr.meta {
        // #[ai_function]
        Meta::Path(_) => return args,
        // #[ai_function(name = "search", timeout_ms = 500)]
        Meta::List(list) => list.tokens.clone(),
        // #[ai_function = ...]
        Meta::NameValue(_) => {
            errors.spanned(
                attr,
                "write `#[ai_function]` or `#[ai_function(name = \"...\", ...)]`",
            );
            return args;
        }
    };
    let parser = |input: ParseStream| {
        options(
            input,
            "ai_function",
            FUNCTION_OPTIONS,
            errors,
            |key, input| {
                match key {
                    // name = "search"
                    "name" => args.name = Some(lit_str(key, input)?),
                    // description = "Search the web with {metadata.provider}."
                    "description" => args.description = Some(lit_str(key, input)?),
                    // condition = metadata.has_tavily
                    "condition" => args.condition = Some(input.parse()?),
                    // requires_approval, requires_approval = true
                    "requires_approval" => {
                        args.requires_approval = flag(key, input, "to require approval")?;
                    }
                    // read_only, destructive = false, idempotent, open_world = true
                    "read_only" | "destructive" | "idempotent" | "open_world" => {
                        let value = Some(flag(key, input, "for `true`")?);
                        let slot = match key {
                            "read_only" => &mut args.annotations.read_only,
                            "destructive" => &mut args.annotations.destructive,
                            "idempotent" => &mut args.annotations.idempotent,
                            _ => &mut args.annotations.open_world,
                        };
                        *slot = value;
                    }
                    // timeout_ms = 5000
                    _ => {
                        if !input.peek(LitInt) {
                            return Err(input.error(
                            "`timeout_ms` takes a whole number of milliseconds, like `timeout_ms = 5000`",
                        ));
                        }
                        let lit: LitInt = input.parse()?;
                        match lit.base10_parse::<u64>() {
                        Ok(0) => errors.error(
                            lit.span(),
                            "`timeout_ms` must be at least 1; remove it for no timeout",
                        ),
                        Ok(ms) => args.timeout_ms = Some((ms, lit.span())),
                        Err(_) => errors.error(
                            lit.span(),
                            "`timeout_ms` must be a whole number of milliseconds that fits in `u64`",
                        ),
                    }
                    }
                }
                Ok(())
            },
        );
        Ok(())
    };
    if let Err(e) = parser.parse2(tokens) {
        errors.push(e);
    }
    // A read-only function changes nothing, so it destroys nothing either.
    if let (Some(true), Some(true)) = (args.annotations.read_only, args.annotations.destructive) {
        errors.spanned(
            attr,
            "a `read_only` function changes nothing, so it cannot be `destructive`; remove one of them",
        );
    }
    args
}

/// The value of an option that may stand alone: nothing (`true`) or `true`/`false`. `alone`
/// says what writing it alone means, for the error.
fn flag(key: &str, input: ParseStream, alone: &str) -> syn::Result<bool> {
    if input.is_empty() || input.peek(Token![,]) {
        Ok(true)
    } else if input.peek(LitBool) {
        Ok(input.parse::<LitBool>()?.value)
    } else {
        Err(input.error(format!(
            "`{key}` takes `true` or `false`; write `{key}` alone {alone}"
        )))
    }
}

/// Parses one `#[sub_agent]` or `#[sub_agent(...)]` attribute.
pub fn sub_agent_args(attr: &Attribute, errors: &Errors) -> SubAgentArgs {
    let mut args = SubAgentArgs::default();
    let tokens = match &attr.meta {
        // #[sub_agent]
        Meta::Path(_) => return args,
        // #[sub_agent(name = "researcher")]
        Meta::List(list) => list.tokens.clone(),
        // #[sub_agent = ...]
        Meta::NameValue(_) => {
            errors.spanned(
                attr,
                "write `#[sub_agent]` or `#[sub_agent(name = \"...\")]`",
            );
            return args;
        }
    };
    let parser = |input: ParseStream| {
        options(
            input,
            "sub_agent",
            SUB_AGENT_OPTIONS,
            errors,
            |key, input| {
                // name = "researcher"
                args.name = Some(lit_str(key, input)?);
                Ok(())
            },
        );
        Ok(())
    };
    if let Err(e) = parser.parse2(tokens) {
        errors.push(e);
    }
    args
}

/// Reads `#[ai_description("...")]` (or `#[ai_description = "..."]`).
pub fn ai_description(attr: &Attribute, errors: &Errors) -> Option<LitStr> {
    const USAGE: &str = "`#[ai_description]` takes the parameter's description, like `#[ai_description(\"The city to look up.\")]`";
    let result = match &attr.meta {
        Meta::List(list) => list.parse_args_with(|input: ParseStream| {
            if input.peek(LitStr) {
                input.parse::<LitStr>()
            } else {
                Err(input.error(USAGE))
            }
        }),
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => Ok(s.clone()),
            other => Err(syn::Error::new_spanned(other, USAGE)),
        },
        Meta::Path(path) => Err(syn::Error::new_spanned(path, USAGE)),
    };
    result.map_err(|e| errors.push(e)).ok()
}

/// `name = value, name = value, ...` with unknown and duplicate names reported.
fn options(
    input: ParseStream,
    attr: &str,
    valid: &[&str],
    errors: &Errors,
    mut value: impl FnMut(&str, ParseStream) -> syn::Result<()>,
) {
    let mut seen: Vec<String> = Vec::new();
    while !input.is_empty() {
        let Ok(key) = input.call(Ident::parse_any) else {
            errors.error(
                input.span(),
                format!("expected an option name; expected one of {}", list(valid)),
            );
            skip_to_comma(input);
            continue;
        };
        let name = key.unraw().to_string();
        if let Some(&known) = valid.iter().find(|v| **v == name) {
            if seen.contains(&name) {
                errors.error(
                    key.span(),
                    format!("duplicate `{attr}` option `{name}`; remove one of them"),
                );
                skip_to_comma(input);
            } else {
                seen.push(name);
                let flag =
                    FLAG_OPTIONS.contains(&known) && (input.is_empty() || input.peek(Token![,]));
                if flag {
                    // `requires_approval` alone: the value closure sees no `=` and no value.
                    if let Err(e) = value(known, input) {
                        errors.push(e);
                    }
                } else if input.parse::<Token![=]>().is_err() {
                    errors.error(
                        key.span(),
                        format!("expected `=` after `{known}`, like `{}`", example(known)),
                    );
                    skip_to_comma(input);
                } else if FLAG_OPTIONS.contains(&known)
                    && (input.is_empty() || input.peek(Token![,]))
                {
                    errors.error(
                        key.span(),
                        format!(
                            "expected a value after `{known} =`, like `{}`",
                            example(known)
                        ),
                    );
                } else if let Err(e) = value(known, input) {
                    errors.push(e);
                    skip_to_comma(input);
                }
            }
        } else if attr == "tool_harness" && Kind::Collapse.options().contains(&name.as_str()) {
            errors.error(
                key.span(),
                format!(
                    "`{name}` is an option of collapsed harnesses; write `#[collapse(\"description\", {name} = ...)]`, or remove it (`#[tool_harness]` accepts {})",
                    list(valid)
                ),
            );
            skip_to_comma(input);
        } else {
            errors.error(
                key.span(),
                format!(
                    "unknown `{attr}` option `{name}`; expected one of {}",
                    list(valid)
                ),
            );
            skip_to_comma(input);
        }
        if input.is_empty() {
            break;
        }
        if input.parse::<Token![,]>().is_err() {
            errors.error(input.span(), "expected `,` between options");
            skip_to_comma(input);
            let _ = input.parse::<Option<Token![,]>>();
        }
    }
}

fn lit_str(key: &str, input: ParseStream) -> syn::Result<LitStr> {
    if input.peek(LitStr) {
        input.parse()
    } else {
        Err(input.error(format!(
            "`{key}` takes a string literal, like `{}`",
            example(key)
        )))
    }
}

fn example(key: &str) -> &'static str {
    match key {
        "name" => "name = \"search\"",
        "metadata" => "metadata = SearchMetadata",
        "function_result" => "function_result = \"Math tools are active.\"",
        "system_prompt" => "system_prompt = \"Use exact arithmetic.\"",
        "middlewares" => "middlewares = [AuditMiddleware]",
        "crate" => "crate = \"my_agents\"",
        "description" => "description = \"Searches the web.\"",
        "condition" => "condition = metadata.enabled",
        "requires_approval" => "requires_approval = true",
        "read_only" => "read_only = true",
        "destructive" => "destructive = false",
        "idempotent" => "idempotent = true",
        "open_world" => "open_world = false",
        _ => "timeout_ms = 5000",
    }
}

fn list(valid: &[&str]) -> String {
    valid
        .iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Skips to the next top-level `,` (not consumed) or the end.
fn skip_to_comma(input: ParseStream) {
    let _ = input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            if let TokenTree::Punct(p) = &tt
                && p.as_char() == ','
            {
                return Ok(((), rest));
            }
            rest = next;
        }
        Ok(((), rest))
    });
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    fn messages(errors: &Errors) -> Vec<String> {
        errors
            .to_compile_errors()
            .into_iter()
            .filter_map(|tt| match tt {
                TokenTree::Group(g) => Some(g.stream().to_string()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn collapse_arguments() {
        let errors = Errors::default();
        let args = harness_args(
            Kind::Collapse,
            quote!("Math", name = "math", metadata = a::Meta, middlewares = [A, b::B<u8>]),
            &errors,
        );
        assert!(errors.is_empty());
        assert_eq!(args.description.map(|d| d.value()).as_deref(), Some("Math"));
        assert_eq!(args.name.map(|n| n.value()).as_deref(), Some("math"));
        assert!(args.metadata.is_some());
        assert_eq!(args.middlewares.len(), 2);
    }

    #[test]
    fn every_mistake_is_reported() {
        let errors = Errors::default();
        let args = harness_args(
            Kind::Plain,
            quote!(nmae = "x", name = "a", name = "b", metadata = HashMap<String, u8>, system_prompt = "p"),
            &errors,
        );
        let messages = messages(&errors);
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(messages[0].contains("unknown `tool_harness` option `nmae`"));
        assert!(messages[1].contains("duplicate `tool_harness` option `name`"));
        assert!(messages[2].contains("option of collapsed harnesses"));
        assert_eq!(args.name.map(|n| n.value()).as_deref(), Some("a"));
        assert!(
            args.metadata.is_some(),
            "generic metadata type parsed past its comma"
        );
    }

    #[test]
    fn missing_collapse_description() {
        let errors = Errors::default();
        let _ = harness_args(Kind::Collapse, quote!(name = "x"), &errors);
        assert!(messages(&errors)[0].contains("needs the container description"));
    }
}
