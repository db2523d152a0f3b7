//! `zarrdb tree STORE`.

use std::fmt::Write;

use zarrdb::{Group, Node};

use super::{locator, render, CliResult};

pub(crate) fn run(store: &str) -> CliResult {
    let opened = locator::open(store)?;
    let store = opened.store.clone();
    // An empty database has no root node yet: show that, not an error.
    let Some(root) = locator::open_root(store)? else {
        outln!("/ (empty)")?;
        return Ok(());
    };
    let mut out = String::new();
    match &root {
        Node::Group(g) => {
            writeln!(out, "/{}", if g.is_implicit() { " (implicit)" } else { "" })?;
            walk(g, "", &mut out)?;
        }
        Node::Array(a) => writeln!(out, "/ {}", describe(&root, a))?,
    }
    out!("{out}")?;
    Ok(())
}

fn describe(node: &Node, array: &zarrdb::Array) -> String {
    let _ = node;
    format!(
        "{} {} chunks {} codecs [{}]",
        array.data_type(),
        render::shape(array.shape()),
        render::shape(array.chunk_shape()),
        render::codecs(array)
    )
}

fn walk(group: &Group, indent: &str, out: &mut String) -> CliResult {
    let children = group.children()?;
    for (i, child) in children.iter().enumerate() {
        let last = i + 1 == children.len();
        let (branch, next) = if last { ("└── ", "    ") } else { ("├── ", "│   ") };
        let name = child.path().name();
        match child {
            Node::Array(a) => writeln!(out, "{indent}{branch}{name}  {}", describe(child, a))?,
            Node::Group(g) => {
                writeln!(out, "{indent}{branch}{name}{}", if g.is_implicit() { " (implicit)" } else { "" })?;
                walk(g, &format!("{indent}{next}"), out)?;
            }
        }
    }
    Ok(())
}
