//! When a declaration has errors, the item is still emitted with stand-in impls (like
//! thiserror's `fallback.rs`), so code that uses the type — as a field, an input, a `Ref` target —
//! compiles far enough to show only the real error, not a cascade of "`X` has no Trails schema".
//! The build fails on the real error, so nothing here ever runs.

use proc_macro2::TokenStream;
use quote::quote;

use super::parse::derives;
use super::Kind;

pub(super) fn impls(kind: Kind, item: &syn::Item) -> TokenStream {
    let (ident, is_struct, attrs) = match item {
        syn::Item::Struct(s) => (&s.ident, true, &s.attrs),
        syn::Item::Enum(e) => (&e.ident, false, &e.attrs),
        _ => return quote!(),
    };
    let generics = match item {
        syn::Item::Struct(s) => &s.generics,
        syn::Item::Enum(e) => &e.generics,
        _ => unreachable!("filtered above"),
    };
    if !generics.params.is_empty() {
        // A generic item gets no stand-ins: the impls would need bounds the user did not write.
        return quote!();
    }
    let name = ident.to_string();
    let serialize = (!derives(attrs, "Serialize")).then(|| {
        quote! {
            impl ::trails::__private::serde::Serialize for #ident {
                fn serialize<S: ::trails::__private::serde::Serializer>(&self, _: S) -> ::core::result::Result<S::Ok, S::Error> {
                    ::core::unreachable!()
                }
            }
        }
    });
    let deserialize = (!derives(attrs, "Deserialize")).then(|| {
        quote! {
            impl<'de> ::trails::__private::serde::Deserialize<'de> for #ident {
                fn deserialize<D: ::trails::__private::serde::Deserializer<'de>>(_: D) -> ::core::result::Result<Self, D::Error> {
                    ::core::unreachable!()
                }
            }
        }
    });
    let object = is_struct.then(|| {
        quote! {
            impl ::trails::__private::ObjectShape for #ident {
                // A shape that failed its build passes as a form: its own error is the one to read, not a
                // second from `ctx.elicit`.
                const FORM: bool = true;
                const PROPERTY_MEMBERS: &'static str = "";
                const REQUIRED_MEMBERS: &'static str = "";
                const FIELD_NAMES: &'static [&'static str] = &[];
                const RULES: &'static ::trails::__private::ObjectRules = &::trails::__private::NO_RULES;
            }
            impl ::trails::__private::ToolOutput for #ident {
                const OUTPUT_SCHEMA_MEMBER: &'static str = "";
                fn into_output(self) -> ::trails::__private::Result<::trails::__private::Output> {
                    ::core::unreachable!()
                }
            }
        }
    });
    let node_type = (kind == Kind::NodeType && is_struct).then(|| {
        quote! {
            impl ::trails::__private::NodeType for #ident {
                const LABEL: &'static str = #name;
                const INFO: &'static ::trails::__private::NodeTypeInfo = &::trails::__private::NodeTypeInfo {
                    label: #name, iri: "", parent: ::core::option::Option::None, unique: &[],
                    key: ::core::option::Option::None, predicates: &[],
                    validate: |_, _, _| {},
                };
            }
        }
    });
    quote! {
        const _: () = {
            #serialize
            #deserialize
            impl ::trails::__private::Schema for #ident {
                const SCHEMA_MEMBERS: &'static str = "";
                fn validate_at(
                    _: &::trails::__private::serde_json::Value,
                    _: &mut ::trails::__private::Path,
                    _: &mut ::trails::__private::Errors,
                ) {
                }
            }
            impl ::trails::__private::Shape for #ident {
                const NAME: &'static str = #name;
                const IRI: &'static str = "";
                const IRI_JSON: &'static str = "\"\"";
                const SCHEMA: &'static str = "{}";
                const LIST_OUTPUT_SCHEMA_MEMBER: &'static str = "";
            }
            #object
            #node_type
        };
    }
}
