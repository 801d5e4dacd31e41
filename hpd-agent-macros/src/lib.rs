//! Procedural macros of `hpd-agent`. Depend on `hpd-agent`, which re-exports them and documents
//! them; this crate only turns the annotated impl block into calls to `hpd_agent::__private`.
//!
//! Layout: [`args`] parses attribute arguments, [`ast`] is a typed view of the impl block,
//! [`valid`] checks it, [`expand`] writes the code and [`fallback`] what is emitted when the
//! input is wrong. Everything below this file works on `proc_macro2` so the expansion snapshot
//! tests of `hpd-agent-tests` can include these modules with `#[path]` and call them directly.

use proc_macro::TokenStream;

mod args;
mod ast;
mod expand;
mod fallback;
mod valid;

/// Marks a plain tool harness: the impl block's `#[ai_function]` methods become tools.
///
/// See the `hpd_agent` crate docs for the options and rules.
#[proc_macro_attribute]
pub fn tool_harness(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::harness(args::Kind::Plain, args.into(), input.into()).into()
}

/// Marks a collapsed tool harness, hidden behind one container tool until the model calls it.
///
/// See the `hpd_agent` crate docs for the options and rules.
#[proc_macro_attribute]
pub fn collapse(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::harness(args::Kind::Collapse, args.into(), input.into()).into()
}

/// Marks a model-callable method of a `#[tool_harness]` or `#[collapse]` impl block. The impl
/// macro reads and removes it; on its own it is a compile error.
#[proc_macro_attribute]
pub fn ai_function(args: TokenStream, input: TokenStream) -> TokenStream {
    fallback::ai_function_outside_harness(args.into(), input.into()).into()
}
