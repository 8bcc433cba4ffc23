//! The RDF projection of a `#[node_type]`, emitted by the macro for the store.

/// XSD datatype (or IRI) of a predicate's objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Datatype {
    /// `xsd:string`
    String,
    /// `xsd:integer`
    Integer,
    /// `xsd:double`
    Double,
    /// `xsd:boolean`
    Boolean,
    /// `xsd:dateTime`
    DateTime,
    /// A reference to another node type: the object is an IRI.
    Iri,
    /// A nested shape, stored as a JSON literal.
    Json,
    /// A [`crate::Blob`]: the bytes are stored apart, content-addressed; the graph holds a JSON
    /// literal `{"media_type","sha256","size"}`.
    Blob,
}

impl Datatype {
    /// The datatype's IRI.
    pub const fn iri(self) -> &'static str {
        match self {
            Datatype::String => "http://www.w3.org/2001/XMLSchema#string",
            Datatype::Integer => "http://www.w3.org/2001/XMLSchema#integer",
            Datatype::Double => "http://www.w3.org/2001/XMLSchema#double",
            Datatype::Boolean => "http://www.w3.org/2001/XMLSchema#boolean",
            Datatype::DateTime => "http://www.w3.org/2001/XMLSchema#dateTime",
            Datatype::Iri => "http://www.w3.org/2001/XMLSchema#anyURI",
            Datatype::Json | Datatype::Blob => "http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON",
        }
    }
}

pub use trails_pattern::DisplayRole;

/// One field of a node type as an RDF predicate.
#[derive(Debug)]
pub struct PredicateInfo {
    /// The Rust field (and JSON property) name.
    pub field: &'static str,
    /// The predicate IRI.
    pub iri: &'static str,
    /// The objects' datatype.
    pub datatype: Datatype,
    /// At least one value must be present.
    pub required: bool,
    /// A list: one triple per item.
    pub many: bool,
    /// The target node type when `datatype` is [`Datatype::Iri`] (a `Ref<T>`); a function so
    /// node types can refer to each other (and themselves) without a compile-time cycle.
    pub target: Option<fn() -> &'static NodeTypeInfo>,
    /// Its display role, if declared.
    pub role: Option<DisplayRole>,
}

/// The RDF mapping of a `#[node_type]`.
#[derive(Debug)]
pub struct NodeTypeInfo {
    /// The label (`trails://kg/<label>`).
    pub label: &'static str,
    /// The RDF class IRI.
    pub iri: &'static str,
    /// The node type this one `extends` (its class is `rdfs:subClassOf` the parent's).
    pub parent: Option<&'static NodeTypeInfo>,
    /// Fields that are unique together (checked by the store on every write).
    pub unique: &'static [&'static str],
    /// The field whose value names an instance (`#[node_type(key = "…")]`); `None`: a UUID.
    pub key: Option<&'static str>,
    /// One entry per own field (inherited ones: [`NodeTypeInfo::all_predicates`]).
    pub predicates: &'static [PredicateInfo],
    /// The type's generated validator — the one tool input of this type runs — so stored
    /// instances can be checked again (`trails.meta.kg.validate`) without knowing the Rust type.
    pub validate: crate::validate::NestedValidator,
}

impl PredicateInfo {
    /// The node type a `Ref<T>` field points at.
    pub fn target(&self) -> Option<&'static NodeTypeInfo> {
        self.target.map(|target| target())
    }
}

impl NodeTypeInfo {
    /// The IRI of the class this one extends.
    pub fn extends(&self) -> Option<&'static str> {
        self.parent.map(|parent| parent.iri)
    }

    /// Every failure of `value` (an instance's JSON) against the declaration.
    #[doc(hidden)]
    pub fn check(&self, value: &serde_json::Value) -> Vec<crate::validate::FieldError> {
        crate::validate::run(self.validate, value).into_vec()
    }

    /// The field with display role `role`, its own or inherited (one per type: checked at build).
    pub fn with_role(&self, role: DisplayRole) -> Option<&'static PredicateInfo> {
        self.predicates.iter().find(|p| p.role == Some(role)).or_else(|| self.parent?.with_role(role))
    }

    /// Every predicate, inherited ones first.
    pub fn all_predicates(&self) -> Vec<&'static PredicateInfo> {
        let mut all = self.parent.map(NodeTypeInfo::all_predicates).unwrap_or_default();
        all.extend(self.predicates.iter());
        all
    }
}
