//! JSON text with holes. A projection that depends on another type (a nested shape, a node
//! type's label, a handler's output) cannot be finished by the macro that sees only this item;
//! it leaves a hole naming that type's associated constant, and `const_format::concatcp!` fills
//! it at compile time. The result is still one `&'static str` per projection.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

#[derive(Clone)]
/// A reference to another type's compile-time constant.
pub enum Hole {
    /// `<T as Schema>::SCHEMA_MEMBERS`
    SchemaMembers(syn::Type),
    /// `<T as Schema>::DESCRIPTION_MEMBER`
    DescriptionMember(syn::Type),
    /// `<T as NodeType>::LABEL` (inside a JSON string)
    NodeLabel(syn::Type),
    /// `<T as Shape>::IRI` (inside a JSON string)
    ShapeIri(syn::Type),
    /// `,"outputSchema":…` of handler return type `R`
    OutputSchemaMember(syn::Type),
    /// The output shape IRI of handler return type `R`, as a JSON value (`"…"` or `null`)
    OutputShape(syn::Type),
    /// `,"display_roles":{…}` of handler return type `R`'s node type, or nothing
    OutputRoles(syn::Type),
    /// `<T as Schema>::RDF_DATATYPE`'s IRI: how the store writes a value of `T`
    RdfDatatype(syn::Type),
    /// `<T as ObjectShape>::PROPERTY_MEMBERS`: the members of a parent's `properties`
    ParentProperties(syn::Type),
    /// `<T as ObjectShape>::REQUIRED_MEMBERS`: the items of a parent's `required`
    ParentRequired(syn::Type),
    /// `text` when the parent has at least one property, else nothing
    IfParentHasProperties(syn::Type, &'static str),
    /// `text` when the parent has at least one required property, else nothing
    IfParentHasRequired(syn::Type, &'static str),
}

impl Hole {
    fn tokens(&self) -> TokenStream {
        match self {
            Hole::SchemaMembers(ty) => quote!(<#ty as ::trails::__private::Schema>::SCHEMA_MEMBERS),
            Hole::DescriptionMember(ty) => quote!(<#ty as ::trails::__private::Schema>::DESCRIPTION_MEMBER),
            Hole::NodeLabel(ty) => quote!(<#ty as ::trails::__private::NodeType>::LABEL),
            Hole::ShapeIri(ty) => quote!(<#ty as ::trails::__private::Shape>::IRI),
            Hole::RdfDatatype(ty) => quote!(<#ty as ::trails::__private::Schema>::RDF_DATATYPE.iri()),
            Hole::OutputSchemaMember(ty) => {
                quote!(<<#ty as ::trails::__private::HandlerResult>::Output as ::trails::__private::ToolOutput>::OUTPUT_SCHEMA_MEMBER)
            }
            Hole::OutputShape(ty) => {
                quote!(<<#ty as ::trails::__private::HandlerResult>::Output as ::trails::__private::ToolOutput>::OUTPUT_SHAPE)
            }
            Hole::OutputRoles(ty) => {
                let roles = quote!(<<#ty as ::trails::__private::HandlerResult>::Output as ::trails::__private::ToolOutput>::OUTPUT_ROLES);
                quote!(::trails::__private::concatcp!(
                    ::trails::__private::if_nonempty(#roles, ",\"display_roles\":{"),
                    #roles,
                    ::trails::__private::if_nonempty(#roles, "}")
                ))
            }
            Hole::ParentProperties(ty) => quote!(<#ty as ::trails::__private::ObjectShape>::PROPERTY_MEMBERS),
            Hole::ParentRequired(ty) => quote!(<#ty as ::trails::__private::ObjectShape>::REQUIRED_MEMBERS),
            Hole::IfParentHasProperties(ty, text) => {
                quote!(::trails::__private::if_nonempty(<#ty as ::trails::__private::ObjectShape>::PROPERTY_MEMBERS, #text))
            }
            Hole::IfParentHasRequired(ty, text) => {
                quote!(::trails::__private::if_nonempty(<#ty as ::trails::__private::ObjectShape>::REQUIRED_MEMBERS, #text))
            }
        }
    }

    /// The type the hole refers to, as written.
    pub fn type_text(&self) -> String {
        let ty = match self {
            Hole::SchemaMembers(t)
            | Hole::DescriptionMember(t)
            | Hole::NodeLabel(t)
            | Hole::ShapeIri(t)
            | Hole::RdfDatatype(t)
            | Hole::OutputSchemaMember(t)
            | Hole::OutputShape(t)
            | Hole::OutputRoles(t)
            | Hole::ParentProperties(t)
            | Hole::ParentRequired(t)
            | Hole::IfParentHasProperties(t, _)
            | Hole::IfParentHasRequired(t, _) => t,
        };
        ty.to_token_stream().to_string().replace(' ', "")
    }
}

#[derive(Clone)]
enum Piece {
    Text(String),
    Hole(Box<Hole>),
}

#[derive(Clone, Default)]
/// JSON text with holes, rendered to one `&'static str` expression.
pub struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    /// An empty template.
    pub fn new() -> Self {
        Template::default()
    }

    /// Raw JSON text.
    pub fn text(&mut self, text: &str) -> &mut Self {
        match self.pieces.last_mut() {
            Some(Piece::Text(last)) => last.push_str(text),
            _ => self.pieces.push(Piece::Text(text.to_owned())),
        }
        self
    }

    /// A JSON string literal with `value` escaped.
    pub fn string(&mut self, value: &str) -> &mut Self {
        self.text(&json_string(value))
    }

    /// A hole, filled at compile time.
    pub fn hole(&mut self, hole: Hole) -> &mut Self {
        self.pieces.push(Piece::Hole(Box::new(hole)));
        self
    }

    /// Another template's pieces.
    pub fn append(&mut self, other: &Template) -> &mut Self {
        for piece in &other.pieces {
            match piece {
                Piece::Text(text) => {
                    self.text(text);
                }
                Piece::Hole(hole) => {
                    self.hole((**hole).clone());
                }
            }
        }
        self
    }

    /// A `&'static str` expression: a plain literal when there is no hole.
    pub fn to_tokens(&self) -> TokenStream {
        let parts: Vec<TokenStream> = self
            .pieces
            .iter()
            .map(|piece| match piece {
                Piece::Text(text) => quote!(#text),
                Piece::Hole(hole) => hole.tokens(),
            })
            .collect();
        match self.pieces.as_slice() {
            [] => quote!(""),
            [Piece::Text(text)] => quote!(#text),
            _ => quote!(::trails::__private::concatcp!(#(#parts),*)),
        }
    }

    /// The text with each hole replaced by `fill(hole)`; for previews and tests.
    pub fn render(&self, fill: &dyn Fn(&Hole) -> String) -> String {
        self.pieces
            .iter()
            .map(|piece| match piece {
                Piece::Text(text) => text.clone(),
                Piece::Hole(hole) => fill(hole),
            })
            .collect()
    }
}

/// `value` as a JSON string literal.
pub fn json_string(value: &str) -> String {
    serde_json::to_string(value).expect("strings always serialise")
}
