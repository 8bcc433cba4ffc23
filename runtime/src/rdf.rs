//! The RDF projection of a `#[node_type]`, emitted by the macro for the store.

/// XSD datatype (or IRI) of a predicate's objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Datatype {
    String,
    Integer,
    Double,
    Boolean,
    DateTime,
    /// A reference to another node type: the object is an IRI.
    Iri,
    /// A nested shape, stored as a JSON literal.
    Json,
}

impl Datatype {
    pub const fn iri(self) -> &'static str {
        match self {
            Datatype::String => "http://www.w3.org/2001/XMLSchema#string",
            Datatype::Integer => "http://www.w3.org/2001/XMLSchema#integer",
            Datatype::Double => "http://www.w3.org/2001/XMLSchema#double",
            Datatype::Boolean => "http://www.w3.org/2001/XMLSchema#boolean",
            Datatype::DateTime => "http://www.w3.org/2001/XMLSchema#dateTime",
            Datatype::Iri => "http://www.w3.org/2001/XMLSchema#anyURI",
            Datatype::Json => "http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON",
        }
    }
}

#[derive(Debug)]
pub struct PredicateInfo {
    pub field: &'static str,
    pub iri: &'static str,
    pub datatype: Datatype,
    pub required: bool,
    pub many: bool,
    /// Label of the target node type when `datatype` is [`Datatype::Iri`].
    pub target: Option<&'static str>,
}

#[derive(Debug)]
pub struct NodeTypeInfo {
    pub label: &'static str,
    pub iri: &'static str,
    pub extends: Option<&'static str>,
    /// Fields that are unique together (checked server side).
    pub unique: &'static [&'static str],
    pub predicates: &'static [PredicateInfo],
}
