//! The library's modules stack: every file of `src/` imports only from its own top-level module
//! and from the layers below it, in the order docs/architecture.md states ("Layers"). So there is
//! no import cycle between top-level modules, and the picture in the docs is the code's.
//!
//! Read from the sources as text: `crate::x` paths, in `use` trees (`use crate::{a, b::c}`) and
//! inline, with comments left out; a name re-exported at the crate root (`crate::Error`) counts
//! for the module it comes from. `src/cli` and `src/main.rs` are the binary, which sees only the
//! public API.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The layer order, bottom first, from the line of docs/architecture.md that starts with
/// "Order, bottom to top:" and names each layer in backticks.
fn layer_order(root: &Path) -> Vec<String> {
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let line = doc
        .lines()
        .find(|l| l.starts_with("Order, bottom to top:"))
        .expect("docs/architecture.md states the layer order on a line \"Order, bottom to top: ...\"");
    line.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

/// The source without `//` comments (doc comments included) and string literals, whose text may
/// name modules without using them.
fn code_of(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    for line in source.lines() {
        let mut in_string = false;
        let mut escaped = false;
        let mut chars = line.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if in_string {
                match (escaped, c) {
                    (true, _) => escaped = false,
                    (false, '\\') => escaped = true,
                    (false, '"') => in_string = false,
                    _ => {}
                }
                continue;
            }
            if c == '"' && !line[..i].ends_with('\'') {
                in_string = true;
            } else if c == '/' && chars.peek().map(|&(_, n)| n) == Some('/') {
                break;
            } else {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// The first name of every path that starts with `crate::` (inside `use crate::{..}` groups, each
/// name at the group's top level).
fn crate_paths(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (start, _) in code.match_indices("crate::") {
        // `$crate::` and names ending in `crate` are not paths from this crate's root.
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &code[start + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        names.push(first_name(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 || c != '{' {
                    item.push(c);
                }
            }
            names.push(first_name(&item));
        } else {
            names.push(first_name(rest));
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

fn first_name(path: &str) -> String {
    path.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// Names the crate root re-exports, with the top-level module each comes from.
fn root_exports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for statement in code_of(lib).split(';') {
        let Some(rest) = statement.trim().strip_prefix("pub use ") else { continue };
        let (module, items) = rest.split_once("::").expect("pub use module::...");
        for item in items.trim_matches(|c: char| c == '{' || c == '}' || c.is_whitespace()).split(',') {
            let name = item.split(" as ").last().unwrap().trim();
            if !name.is_empty() {
                map.insert(name.to_owned(), module.trim().to_owned());
            }
        }
    }
    map
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_module_imports_only_from_the_layers_below_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let order = layer_order(root);
    let rank = |module: &str| order.iter().position(|m| m == module);
    let exports = root_exports(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut violations = Vec::new();
    let mut edges = 0;
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_str().unwrap().trim_end_matches(".rs");
        if ["lib", "main", "cli"].contains(&top) {
            continue;
        }
        let Some(own) = rank(top) else {
            violations.push(format!("{}: module `{top}` is not in the documented layer order", rel.display()));
            continue;
        };
        for name in crate_paths(&code_of(&std::fs::read_to_string(file).unwrap())) {
            let target =
                if rank(&name).is_some() { name.clone() } else { exports.get(&name).cloned().unwrap_or_default() };
            let Some(theirs) = rank(&target) else {
                violations.push(format!("{}: `crate::{name}` names no layer", rel.display()));
                continue;
            };
            edges += 1;
            if theirs > own {
                violations.push(format!(
                    "{}: `{top}` imports `crate::{name}` from the layer above, `{target}`",
                    rel.display()
                ));
            }
        }
    }
    assert!(edges > 100, "the scan found only {edges} imports: it no longer reads the sources right");
    assert!(violations.is_empty(), "imports against docs/architecture.md's layer order:\n{}", violations.join("\n"));
}

#[test]
fn the_scan_reads_groups_comments_and_strings() {
    let code = code_of("use crate::{a::b, c, d::{e, f}};\n// crate::hidden\nlet s = \"crate::text\"; crate::g::h();\n");
    assert_eq!(crate_paths(&code), ["a", "c", "d", "g"]);
    let exports = root_exports("pub use array::{Array, Element};\npub use db::Database as Db;\n");
    assert_eq!(exports.get("Element").map(String::as_str), Some("array"));
    assert_eq!(exports.get("Db").map(String::as_str), Some("db"));
}

#[test]
fn the_crate_root_names_only_what_most_programs_need() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let names = root_exports(&lib);
    assert!(
        (15..=25).contains(&names.len()),
        "the crate root re-exports {} names (the rest belong in their modules): {:?}",
        names.len(),
        names.keys().collect::<Vec<_>>()
    );
}
