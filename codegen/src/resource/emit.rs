//! [`ResourceDecl`] → tokens: the `resources/list` (or `resources/templates/list`) entry, the
//! variables' validator and completions, and the registry entry.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::ir::{Param, ResourceDecl};
use crate::template::json_string;
use crate::validator::{object_rules, object_validator};

/// The listing entry: `{"uri" | "uriTemplate", "name", "title"?, "description", "mimeType"?}`.
pub fn descriptor(decl: &ResourceDecl) -> String {
    let key = if decl.variables.is_empty() { "uri" } else { "uriTemplate" };
    let mut members =
        vec![format!("\"{key}\":{}", json_string(&decl.uri)), format!("\"name\":{}", json_string(&decl.name))];
    if let Some(title) = &decl.title {
        members.push(format!("\"title\":{}", json_string(title)));
    }
    members.push(format!("\"description\":{}", json_string(&decl.description)));
    if let Some(mime_type) = &decl.mime_type {
        members.push(format!("\"mimeType\":{}", json_string(mime_type)));
    }
    format!("{{{}}}", members.join(","))
}

pub(super) fn generate(decl: &ResourceDecl, function: &syn::ItemFn) -> TokenStream {
    let handler = &decl.handler;
    let uri = &decl.uri;
    let name = &decl.name;
    let descriptor = descriptor(decl);
    let scope = format_ident!("{}", decl.scope.variant());
    let return_type = &decl.return_type;
    let variables = &decl.variables;
    let mime_type = match &decl.mime_type {
        Some(mime_type) => quote!(::core::option::Option::Some(#mime_type)),
        None => quote!(::core::option::Option::None),
    };
    let fields = decl.arguments.fields.iter().map(|field| {
        let ident = &field.ident;
        let ty = &field.rust_type;
        quote!(#ident: #ty)
    });
    let rules = object_rules(&decl.arguments, None);
    let validator = object_validator();
    let completions = crate::signature::completions(&decl.arguments);
    let call_args = decl.params.iter().map(|param| match param {
        Param::Ctx => quote!(&ctx),
        Param::Named(ident) => quote!(variables.#ident),
        Param::ShapeInput => unreachable!("a resource's variables are named parameters"),
    });
    let entry = format_ident!("__TRAILS_RESOURCE_{}", handler);
    quote! {
        #function

        const _: () = {
            #[derive(::trails::__private::serde::Deserialize)]
            #[serde(crate = "::trails::__private::serde")]
            // A variable's name is the parameter's.
            #[allow(non_camel_case_types, non_snake_case)]
            struct __TrailsVariables { #(#fields),* }
            #rules

            async fn __trails_run(
                ctx: ::trails::__private::Ctx,
                uri: ::std::string::String,
                variables: ::trails::__private::serde_json::Value,
            ) -> ::trails::__private::Result<::trails::__private::Embedded> {
                let mut errors = ::trails::__private::Errors::default();
                {
                    let (value, path, errors) = (&variables, &mut ::trails::__private::Path::default(), &mut errors);
                    #validator;
                }
                if !errors.is_empty() {
                    return ::core::result::Result::Err(::trails::__private::Error::from(errors));
                }
                let variables: __TrailsVariables = ::trails::__private::serde_json::from_value(variables)
                    .map_err(|error| ::trails::__private::deserialize_failed(#name, error))?;
                let result: #return_type = #handler(#(#call_args),*).await;
                <#return_type as ::trails::__private::ResourceResult>::into_contents(result, &uri, #mime_type)
            }

            fn __trails_read(
                ctx: ::trails::__private::Ctx,
                uri: ::std::string::String,
                variables: ::trails::__private::serde_json::Value,
            ) -> ::trails::__private::BoxFuture<::trails::__private::Result<::trails::__private::Embedded>> {
                ::std::boxed::Box::pin(__trails_run(ctx, uri, variables))
            }

            #[::trails::__private::linkme::distributed_slice(::trails::__private::RESOURCES)]
            #[linkme(crate = ::trails::__private::linkme)]
            #[allow(non_upper_case_globals)]
            static #entry: ::trails::__private::ResourceEntry = ::trails::__private::ResourceEntry::__new(
                #uri,
                #name,
                ::trails::__private::Scope::#scope,
                #descriptor,
                &[#(#variables),*],
                #completions,
                __trails_read,
                ::core::concat!(::core::module_path!(), "::", ::core::stringify!(#handler)),
            );
        };
    }
}
