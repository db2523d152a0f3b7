//! `zarrdb rm STORE NODE [--recursive]` and `zarrdb mv STORE FROM TO`: each one transaction on a
//! database (`Node::erase`, `Node::rename`).

use zarrdb::{Node, NodePath};

use super::{locator, CliError, CliResult};

pub(crate) fn remove(store: &str, path: &str, recursive: bool) -> CliResult {
    let opened = locator::open_writable(store, false)?;
    let node = Node::open(opened.store.clone(), path)?;
    if let Node::Group(group) = &node {
        let children = group.child_names()?;
        if !recursive && !children.is_empty() {
            return Err(CliError::new(format!(
                "{}: a group holding {} node(s) ({}); --recursive removes it with everything below it",
                group.path(),
                children.len(),
                children.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
                    + if children.len() > 3 { ", ..." } else { "" }
            )));
        }
    }
    let path = NodePath::parse(path)?;
    Node::erase(opened.store.clone(), path.as_str())?;
    Ok(())
}

pub(crate) fn rename(store: &str, from: &str, to: &str) -> CliResult {
    let opened = locator::open_writable(store, false)?;
    Node::rename(opened.store.clone(), from, to)?;
    Ok(())
}
