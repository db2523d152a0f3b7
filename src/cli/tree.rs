//! `zarrdb tree STORE [-l] [--json]`; with `-l` every node also shows its stored and logical
//! bytes and their ratio (a group: its subtree), as `zarrdb du` counts them; `--json` prints the
//! nodes as a list.

use std::collections::HashMap;
use std::fmt::Write;

use serde_json::{json, Value};
use zarrdb::{Group, Node};

use super::usage::{self, Usage};
use super::{locator, render, CliResult};

pub(crate) fn run(store: &str, long: bool, as_json: bool) -> CliResult {
    let opened = locator::open(store)?;
    let store = opened.store.clone();
    // An empty database has no root node yet: show that, not an error.
    let Some(root) = locator::open_root(store)? else {
        return if as_json { outln!("[]") } else { outln!("/ (empty)") };
    };
    let sizes: HashMap<String, Usage> =
        if long { usage::walk(&root)?.into_iter().map(|(path, _, u)| (path, u)).collect() } else { HashMap::new() };
    if as_json {
        let mut nodes = Vec::new();
        list(&root, &sizes, &mut nodes)?;
        return outln!("{}", serde_json::to_string_pretty(&Value::Array(nodes))?);
    }
    let size = |path: String| sizes.get(&path).map_or_else(String::new, |u| format!("  [{}]", u.describe()));
    let mut out = String::new();
    match &root {
        Node::Group(g) => {
            writeln!(out, "/{}{}", if g.is_implicit() { " (implicit)" } else { "" }, size("/".into()))?;
            walk(g, "", &mut out, &size)?;
        }
        Node::Array(a) => writeln!(out, "/ {}{}", describe(a), size("/".into()))?,
    }
    out!("{out}")
}

/// Every node at and below `node` in tree order, as JSON: path, node_type, implicit, and for
/// arrays data_type, shape, chunk_shape and codec names; with sizes (`-l`) those of `du --json`.
fn list(node: &Node, sizes: &HashMap<String, Usage>, out: &mut Vec<Value>) -> CliResult {
    let path = node.path().to_string();
    let mut entry = match node {
        Node::Group(g) => json!({"path": path, "node_type": "group", "implicit": g.is_implicit()}),
        Node::Array(a) => {
            let (name, chunks) = render::chunks(a);
            let mut entry = json!({
                "path": path,
                "node_type": "array",
                "implicit": false,
                "data_type": a.metadata().to_json()["data_type"],
                "shape": a.shape(),
            });
            entry[name] = chunks;
            entry["codecs"] = a.metadata().codecs.iter().map(|c| c.name.clone()).collect::<Vec<_>>().into();
            entry
        }
    };
    if let (Some(u), Value::Object(map)) = (sizes.get(&path), &mut entry) {
        if let Value::Object(figures) = u.to_json(&path, "") {
            map.extend(figures.into_iter().filter(|(k, _)| k.ends_with("bytes") || k == "ratio"));
        }
    }
    out.push(entry);
    if let Node::Group(g) = node {
        for child in g.children()? {
            list(&child, sizes, out)?;
        }
    }
    Ok(())
}

fn describe(array: &zarrdb::Array) -> String {
    format!(
        "{} {} chunks {} codecs [{}]",
        array.data_type(),
        render::shape(array.shape()),
        render::chunks_text(array),
        render::codecs(array)
    )
}

fn walk(group: &Group, indent: &str, out: &mut String, size: &dyn Fn(String) -> String) -> CliResult {
    let children = group.children()?;
    for (i, child) in children.iter().enumerate() {
        let last = i + 1 == children.len();
        let (branch, next) = if last { ("└── ", "    ") } else { ("├── ", "│   ") };
        let name = child.path().name();
        let sized = size(child.path().to_string());
        match child {
            Node::Array(a) => writeln!(out, "{indent}{branch}{name}  {}{sized}", describe(a))?,
            Node::Group(g) => {
                writeln!(out, "{indent}{branch}{name}{}{sized}", if g.is_implicit() { " (implicit)" } else { "" })?;
                walk(g, &format!("{indent}{next}"), out, size)?;
            }
        }
    }
    Ok(())
}
