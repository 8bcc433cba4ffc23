//! `#[prompt(name, title, description, scope)]` and the function's signature → [`PromptDecl`].

use proc_macro2::TokenStream;
use syn::{FnArg, Pat, ReturnType};

use crate::args::{self, Keys};
use crate::diag::Diagnostics;
use crate::field::parse_field;
use crate::ir::{ObjectDecl, Param, PromptDecl, Scalar, ScopeDecl};

#[derive(Clone, Copy, PartialEq, Eq)]
enum PromptKey {
    Name,
    Title,
    Description,
    Scope,
}

const PROMPT_KEYS: Keys<PromptKey> = Keys {
    what: "prompt",
    item: "key",
    table: &[
        ("name", PromptKey::Name),
        ("title", PromptKey::Title),
        ("description", PromptKey::Description),
        ("scope", PromptKey::Scope),
    ],
};

pub(super) fn declaration(attr: TokenStream, function: &syn::ItemFn, diags: &mut Diagnostics) -> Option<PromptDecl> {
    let args = args::parse_args(attr, diags);
    let (mut name, mut title, mut description, mut scope) = (None, None, None, None);
    for (key, arg) in PROMPT_KEYS.resolve(&args, diags) {
        match key {
            PromptKey::Name => name = args::expect_str(arg, "\"review\"", diags),
            PromptKey::Title => title = args::expect_str(arg, "\"Review a requirement\"", diags),
            PromptKey::Description => description = args::expect_str(arg, "\"What the prompt is for\"", diags),
            PromptKey::Scope => scope = args::expect_str(arg, "\"runtime\"", diags),
        }
    }
    let sig = &function.sig;
    if sig.asyncness.is_none() {
        diags.error_spanned(sig.fn_token, "#[prompt] functions must be `async fn`: add `async`");
    }
    if !sig.generics.params.is_empty() {
        diags.error_spanned(
            &sig.generics,
            "prompt functions cannot be generic: their arguments are fixed at build time",
        );
    }
    let name = match name {
        Some(lit) => match crate::names::check_prompt_name(&lit.value()) {
            Ok(()) => lit.value(),
            Err(reason) => {
                diags.error_spanned(&lit, reason);
                String::new()
            }
        },
        None => sig.ident.to_string(),
    };
    let description = match description.map(|lit| lit.value()).or_else(|| args::doc_comment(&function.attrs)) {
        Some(description) => description,
        None => {
            diags.error_spanned(
                &sig.ident,
                format!(
                    "prompt `{}` has no description; hosts show it where a user picks a prompt: add a `///` doc comment or `description = \"…\"`",
                    sig.ident
                ),
            );
            String::new()
        }
    };
    let scope = crate::signature::scope(scope.as_ref(), ScopeDecl::Runtime, diags).unwrap_or(ScopeDecl::Runtime);
    let (arguments, params) = signature(sig, diags);
    let return_type = match &sig.output {
        ReturnType::Type(_, ty) => (**ty).clone(),
        ReturnType::Default => {
            diags
                .error_spanned(&sig.ident, "a prompt must return `trails::Result<T>`; add `-> trails::Result<String>`");
            return None;
        }
    };
    Some(PromptDecl {
        name,
        title: title.map(|lit| lit.value()),
        description,
        scope,
        arguments,
        params,
        return_type,
        handler: sig.ident.clone(),
    })
}

/// `&Ctx` anywhere, and named parameters, each an argument: `String` (required) or
/// `Option<String>`, with its `///` doc and string predicates.
fn signature(sig: &syn::Signature, diags: &mut Diagnostics) -> (ObjectDecl, Vec<Param>) {
    let mut params = Vec::new();
    let mut fields = Vec::new();
    for input in &sig.inputs {
        let typed = match input {
            FnArg::Receiver(receiver) => {
                diags.error_spanned(receiver, "prompt functions are free functions; remove `self`");
                continue;
            }
            FnArg::Typed(typed) => typed,
        };
        if crate::signature::is_ctx(&typed.ty) {
            params.push(Param::Ctx);
            continue;
        }
        let Pat::Ident(pat) = &*typed.pat else {
            diags.error_spanned(&typed.pat, "name this parameter: it becomes a prompt argument (`topic: String`)");
            continue;
        };
        params.push(Param::Named(pat.ident.clone()));
        let Some(field) = parse_field(&pat.ident, &typed.ty, &typed.attrs, diags) else { continue };
        if field.header.is_some() {
            diags.error_spanned(
                &pat.ident,
                "`header` sends a tool's argument as an HTTP header too; a prompt argument has none: remove it",
            );
        }
        if field.ty.array || !matches!(field.ty.scalar, Scalar::String) {
            diags.error_spanned(
                &typed.ty,
                format!(
                    "prompt argument `{}` is {}; MCP's prompt arguments are strings: take `String` (or `Option<String>` when it may be left out) and parse it in the function",
                    pat.ident,
                    if field.ty.array { "a list".to_owned() } else { field.ty.scalar.describe() }
                ),
            );
            continue;
        }
        if let Some((_, span)) = field.role {
            diags.error_at(
                span,
                "display roles say how a node type's instances are listed; a prompt argument has none: remove `role`",
            );
        }
        fields.push(field);
    }
    (ObjectDecl { fields }, params)
}
