//! IR → the static rule table behind a generated `validate_at`. Every constraint the schema
//! states is also a rule here, so the schema a client sees and the check the server runs come
//! from the same IR.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::args::Literal;
use crate::ir::{Field, Num, ObjectDecl, Scalar};

fn option<T: quote::ToTokens>(value: Option<T>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

/// The rule table of an object, as items: `static __TRAILS_RULES` (plus its fields and patterns).
/// A parent's rules are linked, not copied, so its own `extends` chain is honoured too.
pub fn object_rules(object: &ObjectDecl, parent: Option<&syn::Type>) -> TokenStream {
    let mut patterns = Vec::new();
    let rules: Vec<TokenStream> = object.fields.iter().map(|field| field_rule(field, &mut patterns)).collect();
    let count = rules.len();
    let parents = match parent {
        Some(parent) => quote!(&[<#parent as ::trails::__private::ObjectShape>::RULES]),
        None => quote!(&[]),
    };
    quote! {
        #(#patterns)*
        static __TRAILS_FIELDS: [::trails::__private::FieldRule; #count] = [#(#rules),*];
        static __TRAILS_RULES: ::trails::__private::ObjectRules =
            ::trails::__private::ObjectRules { fields: &__TRAILS_FIELDS, parents: #parents };
    }
}

/// The body of `fn validate_at(value, path, errors)` for an object whose rules are in scope.
pub fn object_validator() -> TokenStream {
    quote!(::trails::__private::validate_object(&__TRAILS_RULES, value, path, errors))
}

/// The body of `validate_at` for a unit enum.
pub fn enum_validator(names: &[String]) -> TokenStream {
    quote! {
        static RULE: ::trails::__private::ItemRule = ::trails::__private::ItemRule::String(::trails::__private::StringRule {
            min_length: None, max_length: None, pattern: None, one_of: &[#(#names),*],
        });
        ::trails::__private::validate_item(&RULE, value, path, errors)
    }
}

fn field_rule(field: &Field, patterns: &mut Vec<TokenStream>) -> TokenStream {
    let name = &field.name;
    let required = field.required;
    let array = if field.ty.array {
        let min = option(field.constraints.min_items);
        let max = option(field.constraints.max_items);
        let unique = field.constraints.unique_items;
        quote!(::core::option::Option::Some(::trails::__private::ArrayRule {
            min_items: #min, max_items: #max, unique_items: #unique,
        }))
    } else {
        quote!(::core::option::Option::None)
    };
    let item = item_rule(field, patterns);
    quote! {
        ::trails::__private::FieldRule { name: #name, required: #required, array: #array, item: #item }
    }
}

fn item_rule(field: &Field, patterns: &mut Vec<TokenStream>) -> TokenStream {
    let c = &field.constraints;
    match &field.ty.scalar {
        Scalar::String => {
            let pattern = match &c.pattern {
                Some(source) => {
                    let ident = format_ident!("__TRAILS_PATTERN_{}", patterns.len());
                    let listed = format_ident!("__TRAILS_PATTERN_{}_LISTED", patterns.len());
                    patterns.push(quote! {
                        static #ident: ::trails::__private::Pattern = ::trails::__private::Pattern::new(#source);
                        // Listed so start-up parses every pattern and refuses to serve if one fails.
                        #[::trails::__private::linkme::distributed_slice(::trails::__private::PATTERNS)]
                        #[linkme(crate = ::trails::__private::linkme)]
                        static #listed: &::trails::__private::Pattern = &#ident;
                    });
                    quote!(::core::option::Option::Some(&#ident))
                }
                None => quote!(::core::option::Option::None),
            };
            let min = option(c.min_length);
            let max = option(c.max_length);
            let one_of = c.one_of.iter().filter_map(|l| match l {
                Literal::Str(s) => Some(s),
                _ => None,
            });
            quote!(::trails::__private::ItemRule::String(::trails::__private::StringRule {
                min_length: #min, max_length: #max, pattern: #pattern, one_of: &[#(#one_of),*],
            }))
        }
        Scalar::Int(kind) => {
            let (min, max) = c.int_range(kind);
            let one_of = c.one_of.iter().filter_map(|l| match l {
                Literal::Int(i) => Some(*i),
                _ => None,
            });
            quote!(::trails::__private::ItemRule::Integer(::trails::__private::IntegerRule {
                min: ::core::option::Option::Some(#min), max: ::core::option::Option::Some(#max), one_of: &[#(#one_of),*],
            }))
        }
        Scalar::Float => {
            let min = option(c.min_value.map(Num::as_f64));
            let max = option(c.max_value.map(Num::as_f64));
            let one_of = c.one_of.iter().filter_map(|l| match l {
                Literal::Float(f) => Some(*f),
                Literal::Int(i) => Some(*i as f64),
                _ => None,
            });
            quote!(::trails::__private::ItemRule::Number(::trails::__private::NumberRule {
                min: #min, max: #max, one_of: &[#(#one_of),*],
            }))
        }
        Scalar::Bool => quote!(::trails::__private::ItemRule::Boolean),
        Scalar::DateTime => quote!(::trails::__private::ItemRule::DateTime),
        Scalar::Ref(_) => quote!(::trails::__private::ItemRule::Iri),
        Scalar::Nested(ty) => {
            quote!(::trails::__private::ItemRule::Nested(<#ty as ::trails::__private::Schema>::validate_at))
        }
    }
}
