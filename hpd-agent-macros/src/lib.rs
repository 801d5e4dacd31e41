//! Procedural macros of `hpd-agent`. Depend on `hpd-agent`, which re-exports them.

use proc_macro::TokenStream;

/// Marks a plain tool harness.
#[proc_macro_attribute]
pub fn tool_harness(_args: TokenStream, input: TokenStream) -> TokenStream {
    input
}

/// Marks a collapsed tool harness.
#[proc_macro_attribute]
pub fn collapse(_args: TokenStream, input: TokenStream) -> TokenStream {
    input
}

/// Marks a model-callable function.
#[proc_macro_attribute]
pub fn ai_function(_args: TokenStream, input: TokenStream) -> TokenStream {
    input
}
