//! The keys of `#[shape(…)]` and `#[node_type(…)]`, read into [`ShapeAttrs`] through one table
//! per attribute.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use syn::{Expr, LitStr};

use super::Kind;
use crate::args::{self, Arg, ArgValue, Keys};
use crate::diag::Diagnostics;
use crate::names::{self, RenameRule};

#[derive(Clone, Copy, PartialEq, Eq)]
enum ShapeKey {
    Iri,
    Extends,
    Prefixes,
    RenameAll,
    Label,
    Unique,
    Key,
}

const SHAPE_KEYS: Keys<ShapeKey> = Keys {
    what: "shape",
    item: "key",
    table: &[
        ("iri", ShapeKey::Iri),
        ("extends", ShapeKey::Extends),
        ("prefixes", ShapeKey::Prefixes),
        ("rename_all", ShapeKey::RenameAll),
    ],
};

const NODE_TYPE_KEYS: Keys<ShapeKey> = Keys {
    what: "node_type",
    item: "key",
    table: &[
        ("label", ShapeKey::Label),
        ("iri", ShapeKey::Iri),
        ("extends", ShapeKey::Extends),
        ("unique", ShapeKey::Unique),
        ("key", ShapeKey::Key),
        ("prefixes", ShapeKey::Prefixes),
    ],
};

/// What the attribute said, literals kept for their spans.
#[derive(Default)]
pub(super) struct ShapeAttrs {
    pub(super) iri: Option<LitStr>,
    pub(super) extends: Option<syn::Type>,
    pub(super) prefixes: BTreeMap<String, String>,
    pub(super) rename_all: Option<(RenameRule, LitStr)>,
    pub(super) label: Option<LitStr>,
    pub(super) unique: Vec<LitStr>,
    pub(super) key: Option<LitStr>,
}

pub(super) fn parse(kind: Kind, tokens: TokenStream, diags: &mut Diagnostics) -> ShapeAttrs {
    let args = args::parse_args(tokens, diags);
    let keys = match kind {
        Kind::Shape => SHAPE_KEYS,
        Kind::NodeType => NODE_TYPE_KEYS,
    };
    let mut attrs = ShapeAttrs::default();
    for (key, arg) in keys.resolve(&args, diags) {
        match key {
            ShapeKey::Iri => attrs.iri = args::expect_str(arg, "\"https://example.org/ns#Name\"", diags),
            ShapeKey::Extends => attrs.extends = parent_type(arg, diags),
            ShapeKey::Prefixes => attrs.prefixes = prefixes(arg, diags),
            ShapeKey::RenameAll => attrs.rename_all = rename_rule(arg, diags),
            ShapeKey::Label => attrs.label = args::expect_str(arg, "\"Requirement\"", diags),
            ShapeKey::Unique => attrs.unique = args::expect_str_list(arg, diags),
            ShapeKey::Key => attrs.key = args::expect_str(arg, "\"req_id\"", diags),
        }
    }
    attrs
}

/// `extends = Parent`: a Rust type path.
fn parent_type(arg: &Arg, diags: &mut Diagnostics) -> Option<syn::Type> {
    match args::expect_value(arg, "BaseShape", diags)? {
        Expr::Path(path) if path.qself.is_none() => {
            Some(syn::Type::Path(syn::TypePath { qself: None, path: path.path.clone() }))
        }
        other => {
            diags.error_spanned(
                other,
                "`extends` names the parent shape's Rust type, e.g. `extends = BaseInput` (its IRI is recorded for you)",
            );
            None
        }
    }
}

fn rename_rule(arg: &Arg, diags: &mut Diagnostics) -> Option<(RenameRule, LitStr)> {
    let lit = args::expect_str(arg, "\"snake_case\"", diags)?;
    match RenameRule::parse(&lit.value()) {
        Some(rule) => Some((rule, lit)),
        None => {
            let names: Vec<&str> = RenameRule::ALL.iter().map(|(name, _)| *name).collect();
            diags.error_spanned(&lit, format!("`rename_all` must be one of {} (serde's rules)", names.join(", ")));
            None
        }
    }
}

fn prefixes(arg: &Arg, diags: &mut Diagnostics) -> BTreeMap<String, String> {
    let mut prefixes = BTreeMap::new();
    let ArgValue::List(items) = &arg.value else {
        diags.error_at(arg.span, "write `prefixes(req = \"https://example.org/req#\")`");
        return prefixes;
    };
    for item in items {
        if let Some(namespace) = args::expect_str(item, "\"https://example.org/ns#\"", diags) {
            match names::check_iri(&namespace.value()) {
                Ok(()) => {
                    prefixes.insert(item.key.clone(), namespace.value());
                }
                Err(reason) => diags.error_spanned(&namespace, reason),
            }
        }
    }
    prefixes
}
