//! `#[resource(uri, name, title, description, mime_type, scope)]` and the function's signature
//! → [`ResourceDecl`].

use proc_macro2::TokenStream;
use syn::{FnArg, Pat, ReturnType};

use crate::args::{self, Keys};
use crate::diag::Diagnostics;
use crate::field::parse_field;
use crate::ir::{ObjectDecl, Param, ResourceDecl, Scalar, ScopeDecl};

#[derive(Clone, Copy, PartialEq, Eq)]
enum ResourceKey {
    Uri,
    Name,
    Title,
    Description,
    MimeType,
    Scope,
}

const RESOURCE_KEYS: Keys<ResourceKey> = Keys {
    what: "resource",
    item: "key",
    table: &[
        ("uri", ResourceKey::Uri),
        ("name", ResourceKey::Name),
        ("title", ResourceKey::Title),
        ("description", ResourceKey::Description),
        ("mime_type", ResourceKey::MimeType),
        ("scope", ResourceKey::Scope),
    ],
};

/// The `{variables}` of a URI template, or why it is not one Trails serves.
pub(crate) fn variables(uri: &str) -> Result<Vec<String>, String> {
    let Some((scheme, _)) = uri.split_once("://") else {
        return Err(format!("`{uri}` is not an absolute URI: write `scheme://…`, e.g. `memo://insights`"));
    };
    if scheme.is_empty() || !scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) {
        return Err(format!("`{uri}` has no valid scheme before `://`"));
    }
    if scheme == "trails" {
        return Err(
            "the `trails://` scheme is the server's own (the knowledge graph, the schema): pick your app's".into()
        );
    }
    let mut variables = Vec::new();
    let mut rest = uri;
    while let Some(open) = rest.find('{') {
        let Some(length) = rest[open..].find('}') else {
            return Err(format!("`{uri}` opens a `{{` it does not close"));
        };
        let name = &rest[open + 1..open + length];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "`{{{name}}}` is not a variable Trails serves: a variable is `{{name}}` (letters, digits, `_`), one path segment; RFC 6570's operators (`{{?…}}`, `{{+…}}`) are not supported"
            ));
        }
        if variables.iter().any(|known| known == name) {
            return Err(format!("variable `{name}` appears twice in `{uri}`"));
        }
        let after = &rest[open + length + 1..];
        if after.starts_with('{') {
            return Err(format!("`{uri}` puts two variables side by side: separate them, e.g. with `/`"));
        }
        variables.push(name.to_owned());
        rest = after;
    }
    if rest.contains('}') {
        return Err(format!("`{uri}` closes a `}}` it did not open"));
    }
    Ok(variables)
}

pub(super) fn declaration(attr: TokenStream, function: &syn::ItemFn, diags: &mut Diagnostics) -> Option<ResourceDecl> {
    let args = args::parse_args(attr, diags);
    let (mut uri, mut name, mut title, mut description, mut mime_type, mut scope) =
        (None, None, None, None, None, None);
    for (key, arg) in RESOURCE_KEYS.resolve(&args, diags) {
        match key {
            ResourceKey::Uri => uri = args::expect_str(arg, "\"memo://insights\"", diags),
            ResourceKey::Name => name = args::expect_str(arg, "\"insights\"", diags),
            ResourceKey::Title => title = args::expect_str(arg, "\"Insights\"", diags),
            ResourceKey::Description => description = args::expect_str(arg, "\"What it holds\"", diags),
            ResourceKey::MimeType => mime_type = args::expect_str(arg, "\"text/plain\"", diags),
            ResourceKey::Scope => scope = args::expect_str(arg, "\"runtime\"", diags),
        }
    }
    let sig = &function.sig;
    if sig.asyncness.is_none() {
        diags.error_spanned(sig.fn_token, "#[resource] functions must be `async fn`: add `async`");
    }
    let Some(uri) = uri else {
        diags.error_spanned(&sig.ident, "a resource needs its `uri`, e.g. `#[resource(uri = \"memo://insights\")]`");
        return None;
    };
    let variables = match variables(&uri.value()) {
        Ok(variables) => variables,
        Err(reason) => {
            diags.error_spanned(&uri, reason);
            return None;
        }
    };
    let name = match name {
        Some(lit) => match crate::names::check_prompt_name(&lit.value()) {
            Ok(()) => lit.value(),
            Err(reason) => {
                diags.error_spanned(&lit, reason.replace("prompt", "resource"));
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
                    "resource `{}` has no description; add a `///` doc comment or `description = \"…\"`",
                    sig.ident
                ),
            );
            String::new()
        }
    };
    let scope = crate::signature::scope(scope.as_ref(), ScopeDecl::Runtime, diags).unwrap_or(ScopeDecl::Runtime);
    let (arguments, params) = signature(sig, &variables, &uri, diags);
    let return_type = match &sig.output {
        ReturnType::Type(_, ty) => (**ty).clone(),
        ReturnType::Default => {
            diags.error_spanned(
                &sig.ident,
                "a resource must return `trails::Result<T>`; add `-> trails::Result<String>`",
            );
            return None;
        }
    };
    Some(ResourceDecl {
        uri: uri.value(),
        variables,
        name,
        title: title.map(|lit| lit.value()),
        description,
        mime_type: mime_type.map(|lit| lit.value()),
        scope,
        arguments,
        params,
        return_type,
        handler: sig.ident.clone(),
    })
}

/// `&Ctx` anywhere, and one `String` parameter per variable of the template, named as it is.
fn signature(
    sig: &syn::Signature,
    variables: &[String],
    uri: &syn::LitStr,
    diags: &mut Diagnostics,
) -> (ObjectDecl, Vec<Param>) {
    let mut params = Vec::new();
    let mut fields = Vec::new();
    for input in &sig.inputs {
        let typed = match input {
            FnArg::Receiver(receiver) => {
                diags.error_spanned(receiver, "resource functions are free functions; remove `self`");
                continue;
            }
            FnArg::Typed(typed) => typed,
        };
        if crate::signature::is_ctx(&typed.ty) {
            params.push(Param::Ctx);
            continue;
        }
        let Pat::Ident(pat) = &*typed.pat else {
            diags.error_spanned(&typed.pat, "name this parameter after a variable of the URI template (`id: String`)");
            continue;
        };
        params.push(Param::Named(pat.ident.clone()));
        let name = pat.ident.to_string();
        if !variables.contains(&name) {
            let listed = if variables.is_empty() {
                "it has none (a fixed URI): remove the parameter, or add `{…}` to the URI".to_owned()
            } else {
                format!(
                    "its variables are {}",
                    variables.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
                )
            };
            diags.error_spanned(
                &pat.ident,
                format!("parameter `{name}` is not a variable of `{}`; {listed}", uri.value()),
            );
            continue;
        }
        let Some(field) = parse_field(&pat.ident, &typed.ty, &typed.attrs, diags) else { continue };
        if field.header.is_some() {
            diags.error_spanned(
                &pat.ident,
                "`header` sends a tool's argument as an HTTP header too; a template variable has none: remove it",
            );
        }
        if field.ty.array || field.ty.optional || !matches!(field.ty.scalar, Scalar::String) {
            diags.error_spanned(
                &typed.ty,
                format!("template variable `{name}` is text read from the URI: take it as `String` and parse it in the function"),
            );
            continue;
        }
        fields.push(field);
    }
    for variable in variables {
        if !fields.iter().any(|field| field.name == *variable)
            && !params.iter().any(|p| matches!(p, Param::Named(ident) if ident == variable))
        {
            diags.error_spanned(
                uri,
                format!("variable `{variable}` of the URI template has no parameter: add `{variable}: String` to the function"),
            );
        }
    }
    (ObjectDecl { fields }, params)
}
