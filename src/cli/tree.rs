//! `zarrdb tree STORE [-l]`; with `-l` every node also shows its stored and logical bytes and
//! their ratio (a group: its subtree), as `zarrdb du` counts them.

use std::collections::HashMap;
use std::fmt::Write;

use zarrdb::{Group, Node};

use super::usage::{self, Usage};
use super::{locator, render, CliResult};

pub(crate) fn run(store: &str, long: bool) -> CliResult {
    let opened = locator::open(store)?;
    let store = opened.store.clone();
    // An empty database has no root node yet: show that, not an error.
    let Some(root) = locator::open_root(store)? else {
        return outln!("/ (empty)");
    };
    let sizes: HashMap<String, Usage> =
        if long { usage::walk(&root)?.into_iter().map(|(path, _, u)| (path, u)).collect() } else { HashMap::new() };
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

fn describe(array: &zarrdb::Array) -> String {
    format!(
        "{} {} chunks {} codecs [{}]",
        array.data_type(),
        render::shape(array.shape()),
        render::shape(array.chunk_shape()),
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
