//! The runtime's layers point one way. Every `crate::`, `super::` and `self::` path in the
//! runtime's non-test code (in `use` items, in code, and in macro calls) is resolved to the module
//! it names; a module may use only modules of a lower layer (or of its own unit). The order is the
//! one `ARCHITECTURE.md` gives: core < (kg | governance) < serving < the facade, and an order
//! inside each. There are no exceptions: the last upward edges (transports and built-ins reaching
//! the server for the state it shares) went when that state moved down into `state`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// A unit: the modules under `prefix` (the longest prefix wins), in layer `group` at `rank`.
/// A unit may use a unit of a lower group, or of its own group at a lower rank. Units of two
/// groups at the same level (kg and governance) may not use each other.
struct Unit {
    prefix: &'static str,
    group: Group,
    rank: u8,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Group {
    Core,
    Kg,
    Govern,
    Serve,
    Facade,
}

impl Group {
    fn level(self) -> u8 {
        match self {
            Group::Core => 0,
            Group::Kg | Group::Govern => 1,
            Group::Serve => 2,
            Group::Facade => 3,
        }
    }
}

const fn unit(prefix: &'static str, group: Group, rank: u8) -> Unit {
    Unit { prefix, group, rank }
}

/// The runtime's modules (in `runtime/{core,kg,governance,serve}/src`): which crate each belongs
/// to, and the order inside it.
const RUNTIME: &[Unit] = &[
    unit("", Group::Facade, 0),
    unit("auth", Group::Core, 0),
    unit("validate", Group::Core, 0),
    unit("error", Group::Core, 1),
    unit("declare", Group::Core, 2),
    unit("ctx", Group::Core, 3),
    unit("registry", Group::Core, 4),
    unit("projection", Group::Core, 5),
    unit("pipeline", Group::Core, 6),
    unit("kg", Group::Kg, 0),
    unit("ledger", Group::Govern, 0),
    unit("coordination", Group::Govern, 0),
    unit("policy", Group::Govern, 1),
    unit("budget", Group::Govern, 1),
    unit("idempotency", Group::Govern, 1),
    unit("tasks", Group::Govern, 1),
    unit("config", Group::Serve, 0),
    unit("memory", Group::Serve, 0),
    unit("throttle", Group::Serve, 0),
    unit("projection::served", Group::Serve, 0),
    unit("projection::snapshot", Group::Serve, 1),
    unit("wire", Group::Serve, 1),
    unit("oauth", Group::Serve, 1),
    unit("otel", Group::Serve, 2),
    unit("resources", Group::Serve, 3),
    unit("state", Group::Serve, 4),
    unit("builtin", Group::Serve, 5),
    unit("part", Group::Serve, 5),
    unit("method", Group::Serve, 6),
    unit("mcp", Group::Serve, 7),
    unit("http", Group::Serve, 8),
    unit("server", Group::Serve, 9),
    unit("cli", Group::Serve, 10),
];

#[test]
fn the_runtime_layers_point_one_way() {
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime");
    // Each runtime crate (cargo already keeps each from naming a crate above it; this holds the
    // modules inside it to their order); a file is named by its path under `runtime/`.
    let mut found = BTreeMap::new();
    for (crate_dir, root) in [("core", None), ("kg", Some("kg")), ("governance", None), ("serve", None)] {
        let src = runtime.join(crate_dir).join("src");
        for ((file, unit), paths) in violations(&src, root, RUNTIME) {
            let file = format!("{crate_dir}/src/{file}");
            found.insert((file, unit), paths);
        }
    }
    let mut report = String::new();
    for ((file, target), paths) in &found {
        let paths: Vec<_> = paths.iter().map(String::as_str).collect();
        report += &format!("  {file} uses `{target}` (a higher or sideways layer): {}\n", paths.join(", "));
    }
    assert!(report.is_empty(), "the runtime's layers are broken:\n{report}");
}

/// Every edge from a file to a unit it may not use, with the paths that make it. `root`: the
/// module a crate's root stands for (`kg` for trails-kg), or none.
fn violations(src: &Path, root: Option<&str>, units: &[Unit]) -> BTreeMap<(String, String), BTreeSet<String>> {
    let root: Vec<String> = root.into_iter().map(str::to_owned).collect();
    let roots = root_reexports(&src.join("lib.rs"));
    let mut found: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(src) {
        let relative = file.strip_prefix(src).unwrap().to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(&file).unwrap();
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{relative}: {e}"));
        let module = [root.clone(), module_of(&relative)].concat();
        let mut collector = Collector { module: module.clone(), paths: Vec::new() };
        collector.visit_file(&ast);
        let source = unit_of(units, &module);
        for (module, path) in collector.paths {
            let Some(mut target) = resolve(&root, &module, &path) else { continue };
            if let Some(defining) = target.first().and_then(|first| roots.get(first)) {
                if defining.starts_with("trails_") {
                    continue; // the attribute macros: another crate, below all of these
                }
                target.insert(0, defining.clone());
            }
            let target_unit = unit_of(units, &target);
            if !may_use(source, target_unit) {
                found.entry((relative.clone(), target_unit.prefix.to_owned())).or_default().insert(path.join("::"));
            }
        }
    }
    found
}

fn may_use(source: &Unit, target: &Unit) -> bool {
    std::ptr::eq(source, target)
        || target.group.level() < source.group.level()
        || (target.group == source.group && target.rank < source.rank)
}

fn unit_of<'u>(units: &'u [Unit], module: &[String]) -> &'u Unit {
    let joined = module.join("::");
    units
        .iter()
        .filter(|unit| {
            unit.prefix.is_empty() || joined == unit.prefix || joined.starts_with(&format!("{}::", unit.prefix))
        })
        .max_by_key(|unit| unit.prefix.len())
        .unwrap()
}

/// `crate::a::b`, `super::b`, `self::b` from `module`: the absolute path, or `None` for a path
/// that names no module (`crate` alone, an external crate).
fn resolve(root: &[String], module: &[String], path: &[String]) -> Option<Vec<String>> {
    let (head, rest) = path.split_first()?;
    let mut base = match head.as_str() {
        "crate" => root.to_vec(),
        "self" => module.to_vec(),
        "super" => module[..module.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    let mut rest = rest;
    while let Some(("super", tail)) = rest.split_first().map(|(first, tail)| (first.as_str(), tail)) {
        base.pop()?;
        rest = tail;
    }
    if rest.is_empty() {
        return None;
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// `lib.rs`'s `pub use module::{Item, …}`: item name → the module it comes from.
fn root_reexports(lib: &Path) -> BTreeMap<String, String> {
    let ast = syn::parse_file(&std::fs::read_to_string(lib).unwrap()).unwrap();
    let mut roots = BTreeMap::new();
    for item in ast.items {
        if let syn::Item::Use(item) = item {
            if let syn::UseTree::Path(path) = &item.tree {
                let mut leaves = Vec::new();
                use_leaves(&path.tree, &mut Vec::new(), &mut leaves);
                for leaf in leaves {
                    if let Some(name) = leaf.last() {
                        roots.insert(name.clone(), path.ident.to_string());
                    }
                }
            }
        }
    }
    roots
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// `a/b.rs` and `a/b/mod.rs` are module `a::b`; `lib.rs` is the root.
fn module_of(relative: &str) -> Vec<String> {
    let mut parts: Vec<String> = relative.trim_end_matches(".rs").split('/').map(str::to_owned).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// Collects every path that starts with `crate`, `super` or `self`, with the module it is in.
struct Collector {
    module: Vec<String>,
    paths: Vec<(Vec<String>, Vec<String>)>,
}

impl Collector {
    fn record(&mut self, path: Vec<String>) {
        if path.len() > 1 && matches!(path[0].as_str(), "crate" | "super" | "self") {
            self.paths.push((self.module.clone(), path));
        }
    }
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg") && attr.parse_args::<syn::Meta>().is_ok_and(|meta| meta.path().is_ident("test"))
    })
}

fn use_leaves(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(path) => {
            prefix.push(path.ident.to_string());
            use_leaves(&path.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(name) if name.ident == "self" => out.push(prefix.clone()),
        syn::UseTree::Name(name) => out.push([prefix.clone(), vec![name.ident.to_string()]].concat()),
        syn::UseTree::Rename(rename) if rename.ident == "self" => out.push(prefix.clone()),
        syn::UseTree::Rename(rename) => out.push([prefix.clone(), vec![rename.ident.to_string()]].concat()),
        syn::UseTree::Glob(_) => out.push(prefix.clone()),
        syn::UseTree::Group(group) => group.items.iter().for_each(|tree| use_leaves(tree, prefix, out)),
    }
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(item) => &item.attrs,
            syn::Item::Fn(item) => &item.attrs,
            syn::Item::Impl(item) => &item.attrs,
            syn::Item::Use(item) => &item.attrs,
            syn::Item::Const(item) => &item.attrs,
            syn::Item::Static(item) => &item.attrs,
            syn::Item::Struct(item) => &item.attrs,
            syn::Item::Enum(item) => &item.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_test_only(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if item.content.is_some() {
            self.module.push(item.ident.to_string());
            syn::visit::visit_item_mod(self, item);
            self.module.pop();
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut leaves = Vec::new();
        use_leaves(&item.tree, &mut Vec::new(), &mut leaves);
        leaves.into_iter().for_each(|leaf| self.record(leaf));
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.record(path.segments.iter().map(|segment| segment.ident.to_string()).collect());
        syn::visit::visit_path(self, path);
    }

    // `pub(crate)` and `pub(super)` name no module to use.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let mut tokens = Vec::new();
        flatten(mac.tokens.clone(), &mut tokens);
        let mut at = 0;
        while at < tokens.len() {
            let mut path = Vec::new();
            let mut next = at;
            while let Some(proc_macro2::TokenTree::Ident(ident)) = tokens.get(next) {
                path.push(ident.to_string());
                let colons = matches!(
                    (tokens.get(next + 1), tokens.get(next + 2)),
                    (Some(proc_macro2::TokenTree::Punct(a)), Some(proc_macro2::TokenTree::Punct(b)))
                        if a.as_char() == ':' && b.as_char() == ':'
                );
                if !colons {
                    break;
                }
                next += 3;
            }
            at = next.max(at) + 1;
            self.record(path);
        }
    }
}

fn flatten(stream: proc_macro2::TokenStream, out: &mut Vec<proc_macro2::TokenTree>) {
    for tree in stream {
        match tree {
            proc_macro2::TokenTree::Group(group) => flatten(group.stream(), out),
            other => out.push(other),
        }
    }
}
