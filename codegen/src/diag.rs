//! Error accumulation in the style of serde_derive's `Ctxt`: every check pushes, nothing stops
//! at the first fault, and the caller turns the lot into `compile_error!`s at their spans.

use std::fmt::Display;

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

#[derive(Default)]
pub struct Diagnostics {
    errors: Option<syn::Error>,
}

impl Diagnostics {
    pub fn new() -> Self {
        Diagnostics::default()
    }

    pub fn push(&mut self, error: syn::Error) {
        match &mut self.errors {
            Some(existing) => existing.combine(error),
            None => self.errors = Some(error),
        }
    }

    pub fn error_at(&mut self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    pub fn error_spanned(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    pub fn has_errors(&self) -> bool {
        self.errors.is_some()
    }

    /// `Err` with every collected error, or `Ok(())`.
    pub fn finish(self) -> syn::Result<()> {
        match self.errors {
            Some(errors) => Err(errors),
            None => Ok(()),
        }
    }

    /// Collected errors as `compile_error!` tokens (empty when there are none).
    pub fn to_compile_errors(&self) -> TokenStream {
        self.errors.as_ref().map(syn::Error::to_compile_error).unwrap_or_default()
    }

    pub fn messages(&self) -> Vec<String> {
        self.errors.iter().flat_map(|e| e.clone().into_iter().map(|e| e.to_string())).collect()
    }
}
