//! [`PromptDecl`] → tokens: the `prompts/list` entry, the arguments' validator, the completions
//! of arguments with `one_of`, and the registry entry.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::ir::{Param, PromptDecl};
use crate::template::json_string;
use crate::validator::{object_rules, object_validator};

/// The `prompts/list` entry: `{"name", "title"?, "description", "arguments": [{"name",
/// "description"?, "required"}]}`.
pub fn descriptor(decl: &PromptDecl) -> String {
    let mut members = vec![format!("\"name\":{}", json_string(&decl.name))];
    if let Some(title) = &decl.title {
        members.push(format!("\"title\":{}", json_string(title)));
    }
    members.push(format!("\"description\":{}", json_string(&decl.description)));
    let arguments: Vec<String> = decl
        .arguments
        .fields
        .iter()
        .map(|field| {
            let mut argument = vec![format!("\"name\":{}", json_string(&field.name))];
            if let Some(description) = &field.description {
                argument.push(format!("\"description\":{}", json_string(description)));
            }
            argument.push(format!("\"required\":{}", field.required));
            format!("{{{}}}", argument.join(","))
        })
        .collect();
    members.push(format!("\"arguments\":[{}]", arguments.join(",")));
    format!("{{{}}}", members.join(","))
}

/// The identifier that makes two prompts of one name in one module a compile error.
fn collision_guard(name: &str) -> syn::Ident {
    let escaped = name.replace('_', "__").replace('-', "_h").replace('.', "_d");
    format_ident!("__trails_prompt_named_{}_is_declared_twice_in_this_module", escaped)
}

pub(super) fn generate(decl: &PromptDecl, function: &syn::ItemFn) -> TokenStream {
    let handler = &decl.handler;
    let name = &decl.name;
    let descriptor = descriptor(decl);
    let scope = format_ident!("{}", decl.scope.variant());
    let return_type = &decl.return_type;
    let guard = collision_guard(name);
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
        Param::Named(ident) => quote!(arguments.#ident),
        Param::ShapeInput => unreachable!("a prompt's arguments are named parameters"),
    });
    let entry = format_ident!("__TRAILS_PROMPT_{}", handler);
    quote! {
        #function

        #[doc(hidden)]
        #[allow(non_upper_case_globals, dead_code)]
        const #guard: () = ();

        const _: () = {
            #[derive(::trails::__private::serde::Deserialize)]
            #[serde(crate = "::trails::__private::serde")]
            // An argument's name is the parameter's, which MCP may want in camelCase.
            #[allow(non_camel_case_types, non_snake_case)]
            struct __TrailsArgs { #(#fields),* }
            #rules

            fn __trails_validate(
                value: &::trails::__private::serde_json::Value,
                path: &mut ::trails::__private::Path,
                errors: &mut ::trails::__private::Errors,
            ) {
                #validator
            }

            async fn __trails_run(
                ctx: ::trails::__private::Ctx,
                arguments: ::trails::__private::serde_json::Value,
            ) -> ::trails::__private::Result<::std::vec::Vec<::trails::__private::PromptMessage>> {
                let arguments: __TrailsArgs = ::trails::__private::serde_json::from_value(arguments)
                    .map_err(|error| ::trails::__private::deserialize_failed(#name, error))?;
                let result: #return_type = #handler(#(#call_args),*).await;
                <#return_type as ::trails::__private::PromptResult>::into_messages(result)
            }

            fn __trails_get(
                ctx: ::trails::__private::Ctx,
                arguments: ::trails::__private::serde_json::Value,
            ) -> ::trails::__private::BoxFuture<
                ::trails::__private::Result<::std::vec::Vec<::trails::__private::PromptMessage>>,
            > {
                ::std::boxed::Box::pin(__trails_run(ctx, arguments))
            }

            #[::trails::__private::linkme::distributed_slice(::trails::__private::PROMPTS)]
            #[linkme(crate = ::trails::__private::linkme)]
            #[allow(non_upper_case_globals)]
            static #entry: ::trails::__private::PromptEntry = ::trails::__private::PromptEntry::__new(
                #name,
                ::trails::__private::Scope::#scope,
                #descriptor,
                #completions,
                __trails_validate,
                __trails_get,
                ::core::concat!(::core::module_path!(), "::", ::core::stringify!(#handler)),
            );
        };
    }
}
