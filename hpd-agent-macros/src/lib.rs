//! Procedural macros of `hpd-agent`. Depend on `hpd-agent`, which re-exports them and documents
//! them; this crate only turns the annotated impl block into calls to `hpd_agent::__private`.
//!
//! Layout: `args` parses attribute arguments, `ast` is a typed view of the impl block,
//! `valid` checks it, `expand` writes the code and `fallback` what is emitted when the input is
//! wrong. Everything below this file works on `proc_macro2` so the expansion snapshot
//! tests of `hpd-agent-tests` can include these modules with `#[path]` and call them directly.

use proc_macro::TokenStream;

mod args;
mod ast;
mod expand;
mod fallback;
mod valid;

/// Marks a plain tool harness: the impl block's `#[ai_function]` methods become tools.
///
/// ```text
/// #[tool_harness]
/// #[tool_harness(name = "weather", metadata = WeatherMetadata)]
/// impl WeatherTools { ... }
/// ```
///
/// Goes on an inherent impl block of a non-generic type that is `Send + Sync + 'static`; one
/// type has at most one annotated impl block. The macro owns the block: it reads and removes the
/// `#[ai_function(...)]` attributes of its methods and the `#[ai_description("...")]` attributes
/// of their parameters, then registers the harness in the link-time registry.
///
/// # Options
///
/// - `name = "..."`: the harness name; default the type's name. Harness and function names must
///   match `[A-Za-z0-9_-]{1,64}`.
/// - `metadata = Type`: the metadata type (`serde::de::DeserializeOwned + Send + Sync +
///   'static`) that `condition`s and description placeholders read.
///
/// # `#[ai_function(...)]`
///
/// On a method taking `&self`, `fn` or `async fn` (its future must be `Send`). Options:
/// `name = "..."` (default: the method name, `r#type` gives `type`), `description = "..."`
/// (default: the doc comment, lines trimmed and joined with `\n`, blank lines at both ends
/// removed), `condition = <expr>` (a `bool` computed from `metadata: &Metadata`; without
/// metadata it counts as true), `timeout_ms = N`.
///
/// Parameters become a generated arguments struct, so their types must implement
/// `serde::Deserialize` and `schemars::JsonSchema` and be owned (`String`, not `&str`);
/// `Option<T>` parameters are not required, and `#[serde(...)]` / `#[schemars(...)]` attributes
/// on a parameter are moved to its field. A parameter whose type ends in `FunctionContext`
/// (written `&FunctionContext` or `FunctionContext`) or `CancellationToken` is supplied by the
/// runtime and left out of the schema.
///
/// A return type written `Result<T, E>` (any path ending in `Result`, `E: Display`) sends
/// `Err(e)` as an error result; a type alias that hides `Result` is not recognised and is sent
/// as a value. Any other return type must implement `serde::Serialize`.
///
/// # Description placeholders
///
/// `{metadata.field}` (or `{metadata.a.b}`) in a description is rendered with `Display` from the
/// metadata; a missing field is a compile error at the description. In `description = "..."`
/// write `{{` and `}}` for literal braces, and every other `{...}` is an error. Doc comments are
/// also read by rustdoc, where doubled braces would look wrong, so in a doc comment only
/// `{metadata.…}` is special and other braces are kept as written.
///
/// # Construction
///
/// An associated `fn new(config: C) -> Self` in the block makes `C` the harness config
/// (parsed from `{}` when none is given); else `fn new() -> Self`; else `Default`.
///
/// # Lints
///
/// Generated items live in an anonymous `const _: () = { ... };` with the lint allowances they
/// need. Because the macro requires `&self` and owned parameters, annotated methods get
/// `#[allow(clippy::unused_self, clippy::needless_pass_by_value)]`, and a config constructor
/// `#[allow(clippy::needless_pass_by_value)]`.
#[proc_macro_attribute]
pub fn tool_harness(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::harness(args::Kind::Plain, args.into(), input.into()).into()
}

/// Marks a collapsed tool harness, hidden behind one container tool until the model calls it.
///
/// ```text
/// #[collapse(
///     "Math operations",                          // the container description, required
///     name = "math",                              // as for #[tool_harness]
///     metadata = MathMetadata,                    // as for #[tool_harness]
///     function_result = "Math tools are active.", // appended to the container call result
///     system_prompt = "Use exact arithmetic.",    // active while the container is expanded
///     middlewares = [AuditMiddleware, limits::RateLimit],
/// )]
/// impl MathTools { ... }
/// ```
///
/// Everything else is as for [`tool_harness`]. Each type in `middlewares` is created afresh at
/// each expansion, from its config when it implements `hpd_agent::ConfigurableMiddleware`,
/// else with `Default`; its config key is the last segment of the path as written.
#[proc_macro_attribute]
pub fn collapse(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::harness(args::Kind::Collapse, args.into(), input.into()).into()
}

/// Marks a method of a `#[tool_harness]` or `#[collapse]` impl block that returns the
/// `hpd_agent::SubAgent` it declares, making the sub-agent a member of the harness.
///
/// ```text
/// #[sub_agent]
/// #[sub_agent(name = "researcher")]
/// fn research(&self) -> SubAgent { ... }
/// ```
///
/// The method takes only `&self` and is not `async`; the agent calls it once when it is
/// built. The tool name is the `name` option or the method's name (the name given to
/// `SubAgent::new` is not used). The impl macro reads and removes the attribute; on its own it
/// is a compile error.
#[proc_macro_attribute]
pub fn sub_agent(args: TokenStream, input: TokenStream) -> TokenStream {
    fallback::sub_agent_outside_harness(args.into(), input.into()).into()
}

/// Marks a model-callable method of a `#[tool_harness]` or `#[collapse]` impl block. The impl
/// macro reads and removes it; on its own it is a compile error.
#[proc_macro_attribute]
pub fn ai_function(args: TokenStream, input: TokenStream) -> TokenStream {
    fallback::ai_function_outside_harness(args.into(), input.into()).into()
}
