//! Reading a whole hierarchy back the way a reader finds it, for `tests/hierarchy_model.rs` and
//! `tests/creation_race.rs`: [`walk`] opens `/`, lists every group's children with
//! `Group::child_names`, opens each with `Node::open` and reads every array whole (int32 only), and
//! checks on the way the invariants every hierarchy keeps (DESIGN.md §7–§8):
//! - nothing lives under an array: every key below it is a chunk key inside its grid
//!   (`Array::check` is ok, with no `outside_grid` and no `unrecognized` key);
//! - the stored chunks (`Array::stored_chunks`) are exactly those holding an element other than
//!   the fill value (a chunk that becomes all fill is erased, and a shrink leaves no chunk behind);
//! - an implicit group has at least one child (it exists only while it has descendants);
//! - every key of the store belongs to a node found: the `zarr.json` of an explicit node, or a key
//!   below an array.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use zarrdb::error::NodeError;
use zarrdb::{Array, Error, Node, Store};

/// One node as the walk found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seen {
    /// A group; `implicit` when it has no `zarr.json`.
    Group { implicit: bool },
    /// An int32 array with its whole content, C order.
    Array { shape: Vec<u64>, chunks: Vec<u64>, fill: i32, data: Vec<i32> },
}

/// Every node reachable from `/`, by path; empty when `/` does not exist. `Err` describes the
/// first broken invariant or failed call.
pub fn walk(store: &Arc<dyn Store>) -> Result<BTreeMap<String, Seen>, String> {
    let mut found = BTreeMap::new();
    let mut arrays = Vec::new();
    match Node::open(store.clone(), "/") {
        Ok(root) => visit(root, &mut found, &mut arrays)?,
        Err(Error::Node(NodeError::NotFound { .. })) => {}
        Err(e) => return Err(format!("opening /: {e}")),
    }
    let keys = store.list_prefix("").map_err(|e| format!("listing every key: {e}"))?;
    for key in keys {
        let owner = |path: &String, seen: &Seen| {
            let prefix = prefix(path);
            let explicit = !matches!(seen, Seen::Group { implicit: true });
            (explicit && key == format!("{prefix}zarr.json")) || (arrays.contains(path) && key.starts_with(&prefix))
        };
        if !found.iter().any(|(path, seen)| owner(path, seen)) {
            return Err(format!("key {key:?} belongs to no node the walk found"));
        }
    }
    Ok(found)
}

/// The key prefix of a node path (`""` for `/`, `a/b/` for `/a/b`).
fn prefix(path: &str) -> String {
    match path.strip_prefix('/').unwrap_or(path) {
        "" => String::new(),
        rest => format!("{rest}/"),
    }
}

fn visit(node: Node, found: &mut BTreeMap<String, Seen>, arrays: &mut Vec<String>) -> Result<(), String> {
    let path = node.path().to_string();
    match node {
        Node::Array(array) => {
            found.insert(path.clone(), read_array(&array).map_err(|e| format!("array {path}: {e}"))?);
            arrays.push(path);
        }
        Node::Group(group) => {
            let names = group.child_names().map_err(|e| format!("children of {path}: {e}"))?;
            if group.is_implicit() && names.is_empty() {
                return Err(format!("implicit group {path} has no child"));
            }
            found.insert(path.clone(), Seen::Group { implicit: group.is_implicit() });
            for name in names {
                let child = group.path().child(&name).map_err(|e| format!("child {name:?} of {path}: {e}"))?;
                let node = Node::open(group.store().clone(), child.as_str())
                    .map_err(|e| format!("listed child {child} does not open: {e}"))?;
                visit(node, found, arrays)?;
            }
        }
    }
    Ok(())
}

fn read_array(array: &Array) -> Result<Seen, String> {
    let fill = array.fill_value().as_le_bytes();
    let fill = i32::from_le_bytes(fill.try_into().map_err(|_| format!("fill value {fill:?} is not an int32"))?);
    let data = array.read_all::<i32>().map_err(|e| format!("read_all: {e}"))?;
    let report = array.check().map_err(|e| format!("check: {e}"))?;
    if !report.is_ok() || !report.outside_grid.is_empty() || !report.unrecognized.is_empty() {
        return Err(format!("check found problems: {report:?}"));
    }
    let stored: BTreeSet<Vec<u64>> = array
        .stored_chunks()
        .map_err(|e| format!("stored_chunks: {e}"))?
        .into_iter()
        .map(|(coords, _)| coords)
        .collect();
    let (shape, chunks) = (array.shape().to_vec(), array.chunk_shape().to_vec());
    let mut holding = BTreeSet::new();
    for (flat, value) in data.iter().enumerate() {
        if *value != fill {
            // The chunk of element `flat`: its coordinates, last dimension fastest.
            let mut rest = flat as u64;
            let mut coords = vec![0; shape.len()];
            for d in (0..shape.len()).rev() {
                coords[d] = rest % shape[d] / chunks[d];
                rest /= shape[d];
            }
            holding.insert(coords);
        }
    }
    if stored != holding {
        return Err(format!("stored chunks {stored:?}, but the chunks holding non-fill elements are {holding:?}"));
    }
    Ok(Seen::Array { shape, chunks, fill, data })
}
