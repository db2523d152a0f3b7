//! `zarrdb rm STORE NODE [--recursive]` and `zarrdb mv STORE FROM TO`: each one transaction on a
//! database, the check (a group holding nodes needs `--recursive`) inside it.

use zarrdb::{Node, NodePath};

use super::locator::{self, Kind};
use super::{progress, CliError, CliResult};

pub(crate) fn remove(store: &str, path: &str, recursive: bool) -> CliResult {
    let node_path = NodePath::parse(path)?;
    // A directory store's root is its folder: erasing it would delete every file in it, Zarr or not.
    if node_path.is_root() && locator::parse(store)?.0 == Kind::Directory {
        return Err(CliError::new(format!(
            "{store}: removing the root of a directory store would empty the folder; remove the folder itself"
        )));
    }
    locator::edit(store, false, |store| {
        if let Node::Group(group) = Node::open(store.clone(), path)? {
            let children = group.child_names()?;
            if !recursive && !children.is_empty() {
                let mut shown = children.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
                if children.len() > 3 {
                    shown.push_str(", ...");
                }
                return Err(CliError::new(format!(
                    "{}: a group holding {} node(s) ({shown}); --recursive removes it with everything below it",
                    group.path(),
                    children.len(),
                )));
            }
        }
        let spinner = progress::spinner("rm");
        let erased = Node::erase(store, node_path.as_str());
        progress::finish(spinner);
        Ok(erased?)
    })
}

pub(crate) fn rename(store: &str, from: &str, to: &str) -> CliResult {
    locator::edit(store, false, |store| {
        let spinner = progress::spinner("mv");
        let moved = Node::rename(store, from, to);
        progress::finish(spinner);
        Ok(moved?)
    })
}
