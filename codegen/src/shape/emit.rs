//! [`ShapeDecl`] → tokens: the serde derives, `Schema` / `Shape` / `ObjectShape` / `ToolOutput`
//! (and `NodeType`) impls whose constants are the build-time projections, the rule table, and
//! the registry entry.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ir::{ObjectDecl, Role, Scalar, ShapeBody, ShapeDecl};
use crate::names;
use crate::schema::{description_member, enum_members, object_members, property_members, required_members};
use crate::template::Template;
use crate::validator::{enum_validator, object_rules, object_validator};

/// Schema members of a declaration (holes for nested and parent types).
pub fn schema_members(decl: &ShapeDecl) -> Template {
    match &decl.body {
        ShapeBody::Object(object) => object_members(object, decl.extends.as_ref().map(|e| &e.parent)),
        ShapeBody::Enum(variants) => {
            let names: Vec<String> = variants.iter().map(|(_, n)| n.clone()).collect();
            let mut t = Template::new();
            t.text(&enum_members(&names));
            t
        }
    }
}

/// The type's description, with the compound-uniqueness note for node types.
pub fn description(decl: &ShapeDecl) -> Option<String> {
    let unique_note = decl.node_type.as_ref().filter(|n| !n.unique.is_empty()).map(|n| {
        let names: Vec<&str> = n.unique.iter().map(|(name, _)| name.as_str()).collect();
        // The description states the rule; the knowledge graph enforces it on every write.
        format!("Unique together: {}.", names.join(", "))
    });
    match (&decl.description, unique_note) {
        (Some(d), Some(n)) => Some(format!("{d}\n\n{n}")),
        (Some(d), None) => Some(d.clone()),
        (None, note) => note,
    }
}

/// The schema says an `Option` field is *absent* when `None`, never `null` (no null unions), so
/// structured output must leave it out rather than serialise `null`. The `extends` field is
/// flattened: its properties sit at the top level, as the schema says.
fn adjust_serde(decl: &ShapeDecl, item: &mut syn::Item) {
    let (ShapeBody::Object(object), syn::Item::Struct(s), false) = (&decl.body, item, decl.user_derives_serde) else {
        return;
    };
    for field in s.fields.iter_mut() {
        let optional = object.fields.iter().any(|f| Some(&f.ident) == field.ident.as_ref() && f.ty.optional);
        if optional {
            field.attrs.push(syn::parse_quote!(#[serde(skip_serializing_if = "::core::option::Option::is_none")]));
        }
        if decl.extends.as_ref().is_some_and(|e| Some(&e.field) == field.ident.as_ref()) {
            field.attrs.push(syn::parse_quote!(#[serde(flatten)]));
        }
    }
}

pub(super) fn generate(decl: &ShapeDecl, mut item: syn::Item) -> TokenStream {
    adjust_serde(decl, &mut item);
    let ident = &decl.ident;
    let name = ident.to_string();
    let iri = &decl.iri;
    let iri_json = format!("\"{iri}\"");
    let members = schema_members(decl).to_tokens();
    let description = description_member(description(decl).as_deref());
    let parent = decl.extends.as_ref().map(|e| &e.parent);
    let (rules, validator) = match &decl.body {
        ShapeBody::Object(object) => (object_rules(object, parent), object_validator()),
        ShapeBody::Enum(variants) => {
            (quote!(), enum_validator(&variants.iter().map(|(_, n)| n.clone()).collect::<Vec<_>>()))
        }
    };
    let serde_derive = (!decl.user_derives_serde).then(|| {
        let rename = decl.rename_all.map(|(rule, _)| rule.name()).map(|r| quote!(#[serde(rename_all = #r)]));
        quote! {
            #[derive(::trails::__private::serde::Serialize, ::trails::__private::serde::Deserialize)]
            #[serde(crate = "::trails::__private::serde")]
            #rename
        }
    });
    let object_impls = match &decl.body {
        ShapeBody::Object(object) => {
            let unique = decl.node_type.as_ref().map(|n| n.unique.as_slice()).unwrap_or_default();
            object_impls(ident, &iri_json, object, parent, unique)
        }
        ShapeBody::Enum(_) => quote!(),
    };
    let mut field_handles = quote!();
    let (node_type_impl, node_type_entry) = match (&decl.node_type, &decl.body) {
        (Some(node), ShapeBody::Object(object)) => {
            let label = &node.label;
            let parent_info = match parent {
                Some(p) => quote!(::core::option::Option::Some(<#p as ::trails::__private::NodeType>::INFO)),
                None => quote!(::core::option::Option::None),
            };
            let unique = node.unique.iter().map(|(name, _)| name);
            let key = match &node.key {
                Some((key, _)) => quote!(::core::option::Option::Some(#key)),
                None => quote!(::core::option::Option::None),
            };
            let (handles, typed_api) = typed_api(ident, &item_visibility(&item), object);
            field_handles = handles;
            let predicates = predicate_infos(iri, object);
            let nested_blobs = nested_blob_checks(ident, object);
            let (roles, role_checks) = role_checks(ident, object, parent);
            let count = object.fields.len();
            (
                quote! {
                    #[diagnostic::do_not_recommend]
                    impl ::trails::__private::NodeType for #ident {
                        const LABEL: &'static str = #label;
                        const INFO: &'static ::trails::__private::NodeTypeInfo = &__TRAILS_NODE_TYPE;
                        const ROLES: &'static [&'static str] = #roles;
                    }
                    #nested_blobs
                    #role_checks
                    static __TRAILS_PREDICATES: [::trails::__private::PredicateInfo; #count] = [#(#predicates),*];
                    static __TRAILS_NODE_TYPE: ::trails::__private::NodeTypeInfo = ::trails::__private::NodeTypeInfo {
                        label: #label, iri: #iri, parent: #parent_info, unique: &[#(#unique),*],
                        key: #key, predicates: &__TRAILS_PREDICATES,
                        validate: <#ident as ::trails::__private::Schema>::validate_at,
                    };
                    #typed_api
                },
                quote!(::core::option::Option::Some(&__TRAILS_NODE_TYPE)),
            )
        }
        _ => (quote!(), quote!(::core::option::Option::None)),
    };
    let contains_blob = contains_blob(decl);
    let shapes_used = match &decl.body {
        ShapeBody::Object(object) => shapes_used(Some(&decl.iri), object, parent),
        ShapeBody::Enum(_) => shapes_used_of(Some(&decl.iri), std::iter::empty()),
    };
    let is_enum = matches!(decl.body, ShapeBody::Enum(_));
    let display_roles = display_roles(decl, parent);
    let extends_iri = match parent {
        Some(p) => quote!(::core::option::Option::Some(<#p as ::trails::__private::Shape>::IRI)),
        None => quote!(::core::option::Option::None),
    };
    let shacl = crate::shacl::node_shape(decl, self::description(decl).as_deref()).to_tokens();
    let entry = format_ident!("__TRAILS_SHAPE_{}", ident);
    quote! {
        #serde_derive
        #item
        #field_handles

        const _: () = {
            #rules

            #[diagnostic::do_not_recommend]
            impl ::trails::__private::Schema for #ident {
                const SCHEMA_MEMBERS: &'static str = #members;
                const DESCRIPTION_MEMBER: &'static str = #description;
                const CONTAINS_BLOB: bool = #contains_blob;
                const IS_ENUM: bool = #is_enum;
                const SHAPES_USED: &'static str = #shapes_used;
                fn validate_at(
                    value: &::trails::__private::serde_json::Value,
                    path: &mut ::trails::__private::Path,
                    errors: &mut ::trails::__private::Errors,
                ) {
                    #validator
                }
            }
            #[diagnostic::do_not_recommend]
            impl ::trails::__private::Shape for #ident {
                const NAME: &'static str = #name;
                const IRI: &'static str = #iri;
                const IRI_JSON: &'static str = #iri_json;
                const SCHEMA: &'static str = ::trails::__private::concatcp!(
                    "{", <#ident as ::trails::__private::Schema>::DESCRIPTION_MEMBER,
                    <#ident as ::trails::__private::Schema>::SCHEMA_MEMBERS, "}"
                );
                const LIST_OUTPUT_SCHEMA_MEMBER: &'static str = ::trails::__private::concatcp!(
                    ",\"outputSchema\":{\"type\":\"object\",\"properties\":{\"items\":{\"type\":\"array\",\"items\":",
                    <#ident as ::trails::__private::Shape>::SCHEMA,
                    "},", ::trails::__private::LIST_CUT_MEMBERS,
                    "},\"required\":[\"items\"],\"additionalProperties\":false}"
                );
                const DISPLAY_ROLES: &'static str = #display_roles;
            }
            #object_impls
            #node_type_impl

            #[::trails::__private::linkme::distributed_slice(::trails::__private::SHAPES)]
            #[linkme(crate = ::trails::__private::linkme)]
            #[allow(non_upper_case_globals)]
            static #entry: ::trails::__private::ShapeEntry = ::trails::__private::ShapeEntry::__new(
                #name,
                #iri,
                <#ident as ::trails::__private::Shape>::SCHEMA,
                #extends_iri,
                #node_type_entry,
                #shacl,
                ::core::concat!(::core::module_path!(), "::", #name),
            );
        };
    }
}

/// `ObjectShape` (what a child `extends`) and `ToolOutput` for struct shapes.
fn object_impls(
    ident: &syn::Ident,
    iri_json: &str,
    object: &ObjectDecl,
    parent: Option<&syn::Type>,
    unique: &[(String, Span)],
) -> TokenStream {
    let properties = property_members(object, parent).to_tokens();
    let required = required_members(object, parent).to_tokens();
    let own: Vec<&str> = object.fields.iter().map(|f| f.name.as_str()).collect();
    let count = own.len();
    let field_names = match parent {
        None => quote!(&[#(#own),*]),
        Some(parent) => quote!(&::trails::__private::concat_names::<
            { <#parent as ::trails::__private::ObjectShape>::FIELD_NAMES.len() + #count },
        >(<#parent as ::trails::__private::ObjectShape>::FIELD_NAMES, &[#(#own),*])),
    };
    // What only the parent knows is checked where it is known: at compile time, by const asserts.
    let inherited_clashes = parent.map(|parent| {
        let asserts = object.fields.iter().map(|field| {
            let name = &field.name;
            let message = format!("field `{name}` of `{ident}` is also a field of its `extends` parent: rename one");
            quote_spanned! {field.span=>
                const _: () = ::core::assert!(
                    !::trails::__private::contains_name(<#parent as ::trails::__private::ObjectShape>::FIELD_NAMES, #name),
                    #message
                );
            }
        });
        quote!(#(#asserts)*)
    });
    let unique_checks = unique.iter().filter(|(name, _)| !own.contains(&name.as_str())).map(|(name, span)| {
        let message = format!("`unique` names `{name}`, which is neither a field of `{ident}` nor an inherited one");
        quote_spanned! {*span=>
            const _: () = ::core::assert!(
                ::trails::__private::contains_name(<#ident as ::trails::__private::ObjectShape>::FIELD_NAMES, #name),
                #message
            );
        }
    });
    // A form MCP elicitation can show: each field a string, number, boolean or enum (or a
    // list of enum values), and so the parent's.
    let form_fields = object.fields.iter().map(|field| match (&field.ty.scalar, field.ty.array) {
        (Scalar::String | Scalar::Int(_) | Scalar::Float | Scalar::Bool | Scalar::DateTime, false) => quote!(true),
        (Scalar::Nested(ty), false) => quote!(<#ty as ::trails::__private::Schema>::FORM_FIELD),
        (Scalar::Nested(ty), true) => quote!(<#ty as ::trails::__private::Schema>::IS_ENUM),
        _ => quote!(false),
    });
    let parent_form = match parent {
        Some(parent) => quote!(<#parent as ::trails::__private::ObjectShape>::FORM),
        None => quote!(true),
    };
    quote! {
        #inherited_clashes
        #(#unique_checks)*
        #[diagnostic::do_not_recommend]
        impl ::trails::__private::ObjectShape for #ident {
            const FORM: bool = #parent_form #(&& #form_fields)*;
            const PROPERTY_MEMBERS: &'static str = #properties;
            const REQUIRED_MEMBERS: &'static str = #required;
            const FIELD_NAMES: &'static [&'static str] = #field_names;
            const RULES: &'static ::trails::__private::ObjectRules = &__TRAILS_RULES;
        }
        #[diagnostic::do_not_recommend]
        impl ::trails::__private::ToolOutput for #ident {
            const OUTPUT_SCHEMA_MEMBER: &'static str =
                ::trails::__private::concatcp!(",\"outputSchema\":", <#ident as ::trails::__private::Shape>::SCHEMA);
            const OUTPUT_SHAPE: &'static str = #iri_json;
            const OUTPUT_IRI: ::core::option::Option<&'static str> =
                ::core::option::Option::Some(<#ident as ::trails::__private::Shape>::IRI);
            const OUTPUT_ROLES: &'static str = <#ident as ::trails::__private::Shape>::DISPLAY_ROLES;
            const OUTPUT_SHAPES: &'static str = <#ident as ::trails::__private::Schema>::SHAPES_USED;
            fn into_output(self) -> ::trails::__private::Result<::trails::__private::Output> {
                ::trails::__private::shape_output(&self)
            }
        }
    }
}

/// Whether a value of the type holds a `trails::Blob`: in a field (itself or nested), or in
/// its parent's. Known only to the field types, so asked of them at compile time.
/// `Schema::SHAPES_USED` of an object: `own` (its IRI, for a `#[shape]`), then what its
/// fields nest and what it extends.
pub(crate) fn shapes_used(own: Option<&str>, object: &ObjectDecl, parent: Option<&syn::Type>) -> TokenStream {
    let nested = object.fields.iter().filter_map(|field| match &field.ty.scalar {
        Scalar::Nested(t) => Some(t),
        _ => None,
    });
    shapes_used_of(own, nested.chain(parent))
}

fn shapes_used_of<'a>(own: Option<&str>, types: impl Iterator<Item = &'a syn::Type>) -> TokenStream {
    let own = own.map(|iri| format!("{iri} ")).unwrap_or_default();
    quote!(::trails::__private::concatcp!(#own #(, <#types as ::trails::__private::Schema>::SHAPES_USED)*))
}

fn contains_blob(decl: &ShapeDecl) -> TokenStream {
    let ShapeBody::Object(object) = &decl.body else { return quote!(false) };
    let nested = object.fields.iter().filter_map(|field| match &field.ty.scalar {
        Scalar::Nested(t) => Some(t),
        _ => None,
    });
    let parent = decl.extends.as_ref().map(|e| &e.parent);
    let types = nested.chain(parent);
    quote!(false #(|| <#types as ::trails::__private::Schema>::CONTAINS_BLOB)*)
}

/// A node type keeps a blob's bytes apart from the graph only for its own `Blob` fields; a blob
/// inside a nested shape would land in the graph's JSON literal, so it fails the build.
fn nested_blob_checks(ident: &syn::Ident, object: &ObjectDecl) -> TokenStream {
    let checks = object.fields.iter().filter_map(|field| {
        let Scalar::Nested(t) = &field.ty.scalar else { return None };
        let message = format!(
            "field `{}` of node type `{ident}` is a shape that holds a `trails::Blob`; a node type stores blobs only as its own fields: make the blob a field of `{ident}` (or a `Ref` to a node type that holds it)",
            field.name
        );
        Some(quote_spanned! {field.rust_type.span()=>
            const _: () = ::core::assert!(
                ::core::matches!(<#t as ::trails::__private::Schema>::RDF_DATATYPE, ::trails::__private::Datatype::Blob)
                    || !<#t as ::trails::__private::Schema>::CONTAINS_BLOB,
                #message
            );
        })
    });
    quote!(#(#checks)*)
}

/// One `PredicateInfo` per own field (a parent's are reached through `NodeTypeInfo::parent`).
fn predicate_infos(iri: &str, object: &ObjectDecl) -> Vec<TokenStream> {
    let namespace = names::iri_namespace(iri);
    object
        .fields
        .iter()
        .map(|field| {
            let field_name = &field.name;
            let predicate_iri = field.iri.clone().unwrap_or_else(|| format!("{namespace}{}", field.name));
            let datatype = |name: TokenStream| quote!(::trails::__private::Datatype::#name);
            let (datatype, target) = match &field.ty.scalar {
                Scalar::String => (datatype(quote!(String)), quote!(None)),
                Scalar::Bool => (datatype(quote!(Boolean)), quote!(None)),
                Scalar::Int(_) => (datatype(quote!(Integer)), quote!(None)),
                Scalar::Float => (datatype(quote!(Double)), quote!(None)),
                Scalar::DateTime => (datatype(quote!(DateTime)), quote!(None)),
                Scalar::Ref(t) => (datatype(quote!(Iri)), quote!(Some(|| <#t as ::trails::__private::NodeType>::INFO))),
                // A JSON literal, or — for `trails::Blob` — content-addressed bytes: the type says.
                Scalar::Nested(t) => (quote!(<#t as ::trails::__private::Schema>::RDF_DATATYPE), quote!(None)),
            };
            let required = field.required;
            let many = field.ty.array;
            let role = match field.role {
                Some((role, _)) => {
                    let variant = format_ident!("{}", role.variant());
                    quote!(::core::option::Option::Some(::trails::__private::DisplayRole::#variant))
                }
                None => quote!(::core::option::Option::None),
            };
            quote! {
                ::trails::__private::PredicateInfo {
                    field: #field_name, iri: #predicate_iri, datatype: #datatype,
                    required: #required, many: #many, target: ::core::option::Option::#target, role: #role,
                }
            }
        })
        .collect()
}

/// `Shape::DISPLAY_ROLES`: `"role":"field"` members, the parent's first (only node types have
/// roles; a plain shape's are empty).
fn display_roles(decl: &ShapeDecl, parent: Option<&syn::Type>) -> TokenStream {
    // A plain shape that extends a node type is not listed as instances: it has none.
    let (ShapeBody::Object(object), Some(_)) = (&decl.body, &decl.node_type) else { return quote!("") };
    let own: Vec<String> = object
        .fields
        .iter()
        .filter_map(|f| {
            let (role, _) = f.role?;
            Some(format!("{}:{}", crate::template::json_string(role.name()), crate::template::json_string(&f.name)))
        })
        .collect();
    let own = own.join(",");
    match (parent, own.is_empty()) {
        (None, _) => quote!(#own),
        (Some(parent), true) => quote!(<#parent as ::trails::__private::Shape>::DISPLAY_ROLES),
        (Some(parent), false) => quote!(::trails::__private::concatcp!(
            <#parent as ::trails::__private::Shape>::DISPLAY_ROLES,
            ::trails::__private::if_nonempty(<#parent as ::trails::__private::Shape>::DISPLAY_ROLES, ","),
            #own
        )),
    }
}

/// `NodeType::ROLES` (the parent's first) and what only the types know: that a role is not the
/// parent's already, and that a nested `status` field is an enum.
fn role_checks(ident: &syn::Ident, object: &ObjectDecl, parent: Option<&syn::Type>) -> (TokenStream, TokenStream) {
    let own: Vec<(&crate::ir::Field, Role, Span)> =
        object.fields.iter().filter_map(|f| f.role.map(|(role, span)| (f, role, span))).collect();
    let names: Vec<&str> = own.iter().map(|(_, role, _)| role.name()).collect();
    let count = names.len();
    let roles = match parent {
        None => quote!(&[#(#names),*]),
        Some(parent) => quote!(&::trails::__private::concat_names::<
            { <#parent as ::trails::__private::NodeType>::ROLES.len() + #count },
        >(<#parent as ::trails::__private::NodeType>::ROLES, &[#(#names),*])),
    };
    let checks = own.iter().map(|(field, role, span)| {
        let name = role.name();
        let inherited = parent.map(|parent| {
            let message = format!(
                "role `{name}` of `{}` is also a role of a field `{ident}` inherits through `extends`; a type has one field per role: remove one",
                field.name
            );
            quote_spanned! {*span=>
                const _: () = ::core::assert!(
                    !::trails::__private::contains_name(<#parent as ::trails::__private::NodeType>::ROLES, #name),
                    #message
                );
            }
        });
        let enum_check = match (&field.ty.scalar, role) {
            (Scalar::Nested(t), Role::Status) => {
                let message = format!(
                    "role `status` needs a `String` or a `#[shape]` enum, but `{}` is a shape with fields; give the role to a `String` or enum field",
                    field.name
                );
                Some(quote_spanned! {*span=>
                    const _: () = ::core::assert!(<#t as ::trails::__private::Schema>::IS_ENUM, #message);
                })
            }
            _ => None,
        };
        quote!(#inherited #enum_check)
    });
    (roles, quote!(#(#checks)*))
}

fn item_visibility(item: &syn::Item) -> syn::Visibility {
    match item {
        syn::Item::Struct(s) => s.vis.clone(),
        _ => syn::Visibility::Inherited,
    }
}

/// The typed query API of a node type: `T::FIELDS` (one typed handle per own field, so a
/// misspelt field fails the build) and `T::objects(ctx)`.
fn typed_api(ident: &syn::Ident, vis: &syn::Visibility, object: &ObjectDecl) -> (TokenStream, TokenStream) {
    let fields_ident = format_ident!("{}Fields", ident);
    let doc = format!("Typed handles on the fields of [`{ident}`], for `{ident}::objects(ctx)` filters and ordering.");
    let names: Vec<&syn::Ident> = object.fields.iter().map(|f| &f.ident).collect();
    let value_types: Vec<syn::Type> = object.fields.iter().map(|f| crate::field::value_type(&f.rust_type)).collect();
    // How many values: what decides `is_none` (optional), `contains` an item (list), `order_by`.
    let kinds = object.fields.iter().map(|f| match (f.ty.array, f.ty.optional) {
        (true, _) => quote!(::trails::__private::List),
        (false, true) => quote!(::trails::__private::Optional),
        (false, false) => quote!(::trails::__private::One),
    });
    let docs = object.fields.iter().map(|f| format!("`{}`", f.name));
    let indexes = 0..object.fields.len();
    let handles = quote! {
        #[doc = #doc]
        #[derive(Clone, Copy)]
        #vis struct #fields_ident {
            #(#[doc = #docs] pub #names: ::trails::__private::Field<#ident, #value_types, #kinds>,)*
        }
    };
    let api = quote! {
        impl #ident {
            /// Typed handles on this node type's fields.
            pub const FIELDS: #fields_ident = #fields_ident {
                #(#names: ::trails::__private::Field::__new(&__TRAILS_PREDICATES[#indexes]),)*
            };
            /// Instances of this node type in the knowledge graph: filter, order, page, count.
            pub fn objects(ctx: &::trails::__private::Ctx) -> ::trails::__private::Query<#ident> {
                ::trails::__private::Query::new(ctx)
            }
        }
    };
    (handles, api)
}
