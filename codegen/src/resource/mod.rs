//! `#[resource]`, in serde_derive's layers: `parse` reads the attribute and the function's
//! signature into the IR and checks it (the URI template's variables are the function's
//! `String` parameters, one for one), `emit` generates the listing entry, the variables'
//! validator and the registry entry.

mod emit;
mod parse;

use proc_macro2::TokenStream;
use quote::quote;
use syn::FnArg;

use crate::diag::Diagnostics;

/// Expand `#[resource(attr)] item`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut function: syn::ItemFn = match syn::parse2(item) {
        Ok(f) => f,
        Err(error) => return syn::Error::new(error.span(), "#[resource] applies to an `async fn`").to_compile_error(),
    };
    let mut diags = Diagnostics::new();
    let decl = parse::declaration(attr, &function, &mut diags);
    for input in function.sig.inputs.iter_mut() {
        if let FnArg::Typed(typed) = input {
            typed.attrs.retain(|a| !a.path().is_ident("predicate") && !a.path().is_ident("doc"));
        }
    }
    match (decl, diags.finish()) {
        (Some(decl), Ok(())) => emit::generate(&decl, &function),
        (_, result) => {
            let errors = result.err().map(|e| e.to_compile_error()).unwrap_or_default();
            quote!(#errors #function)
        }
    }
}

pub use emit::descriptor;
