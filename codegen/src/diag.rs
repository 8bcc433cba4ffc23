//! Error accumulation in the style of serde_derive's `Ctxt`: every check pushes, nothing stops at
//! the first fault, and the caller turns the lot into `compile_error!`s at their spans. Like
//! `Ctxt`, a `Diagnostics` must be consumed ([`Diagnostics::finish`],
//! [`Diagnostics::into_compile_errors`], [`Diagnostics::into_messages`] or
//! [`Diagnostics::discard`]): dropping one unchecked would lose errors, so it panics.

use std::fmt::Display;

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

/// Collected errors of one expansion.
#[derive(Default)]
pub struct Diagnostics {
    errors: Option<syn::Error>,
    consumed: bool,
}

impl Diagnostics {
    /// An empty collection.
    pub fn new() -> Self {
        Diagnostics::default()
    }

    /// Add an error (kept with every earlier one).
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.errors {
            Some(existing) => existing.combine(error),
            None => self.errors = Some(error),
        }
    }

    /// An error at `span`.
    pub fn error_at(&mut self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    /// An error spanning `tokens`.
    pub fn error_spanned(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Whether anything was reported so far.
    pub fn has_errors(&self) -> bool {
        self.errors.is_some()
    }

    /// `Err` with every collected error, or `Ok(())`.
    pub fn finish(mut self) -> syn::Result<()> {
        self.consumed = true;
        match self.errors.take() {
            Some(errors) => Err(errors),
            None => Ok(()),
        }
    }

    /// Collected errors as `compile_error!` tokens (empty when there are none).
    pub fn into_compile_errors(self) -> TokenStream {
        self.finish().err().map(|e| e.to_compile_error()).unwrap_or_default()
    }

    /// Every message, in the order reported (for tests and previews).
    pub fn into_messages(self) -> Vec<String> {
        self.finish().err().map(|e| e.into_iter().map(|e| e.to_string()).collect()).unwrap_or_default()
    }

    /// Drop what was collected, on purpose (a speculative parse whose errors do not matter).
    pub fn discard(mut self) {
        self.consumed = true;
    }
}

impl Drop for Diagnostics {
    fn drop(&mut self) {
        if !self.consumed && !std::thread::panicking() {
            panic!("trails-codegen bug: Diagnostics dropped without being checked; errors would be lost");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "dropped without being checked")]
    fn an_unchecked_collection_cannot_be_dropped() {
        let mut diags = Diagnostics::new();
        diags.error_at(Span::call_site(), "lost");
    }

    #[test]
    fn consuming_reports_every_error_in_order() {
        let mut diags = Diagnostics::new();
        diags.error_at(Span::call_site(), "first");
        diags.error_at(Span::call_site(), "second");
        assert_eq!(diags.into_messages(), ["first", "second"]);
        Diagnostics::new().discard();
        assert!(Diagnostics::new().finish().is_ok());
    }
}
