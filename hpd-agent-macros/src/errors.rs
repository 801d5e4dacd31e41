//! [`Errors`], the collector every stage (argument parsing, the typed view, the checks) reports
//! into, so one expansion reports all its mistakes at once.

use std::cell::RefCell;
use std::fmt::Display;

use proc_macro2::{Span, TokenStream};

/// Collects independent errors so they are reported together (serde_derive's `Ctxt`).
#[derive(Default)]
pub struct Errors(RefCell<Vec<syn::Error>>);

impl Errors {
    pub fn error(&self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    /// An error spanning all of `tokens` (first to last token; `Span::join` is not stable).
    pub fn spanned(&self, tokens: impl quote::ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    pub fn push(&self, error: syn::Error) {
        self.0.borrow_mut().push(error);
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.0.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.borrow().is_empty()
    }

    /// The `compile_error!` invocations of every error, in the order found.
    pub fn to_compile_errors(&self) -> TokenStream {
        self.0
            .borrow()
            .iter()
            .map(syn::Error::to_compile_error)
            .collect()
    }
}
