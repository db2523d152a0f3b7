//! Which changes of the two sides of a merge cannot both be taken.
//!
//! Two rules, each naming the keys involved:
//! - **Per key:** a key both sides changed, to different bytes.
//! - **Per node:** a node one side made, removed or gave a new structure (an array's `zarr.json`
//!   changed other than in its attributes, or any change of a document that is not a group's),
//!   while the other side changed a key under it. Chunks written on one side for the array
//!   as it was (its data type, shape, chunk grid, codecs) mean nothing in the array the other
//!   side made of it, and writes under a node the other side removed would bring back part of
//!   it. A group whose document changed in attributes or consolidated metadata alone keeps
//!   its children's meaning, so such a change never conflicts with writes below it.
//!
//! This layer sees keys and values, not nodes: it knows a node's document by the Zarr v3 name
//! (`zarr.json`, `P/zarr.json`) and reads its JSON only where a change of one must be judged.

use std::collections::{BTreeMap, BTreeSet};

use super::graph::same;
use super::record::{Change, Entry};
use super::view::read_entry;
use crate::error::StoreError;
use crate::store::kv::KvSnapshot;

/// The name of a node's document in Zarr v3.
const DOCUMENT: &str = "zarr.json";

/// The keys of `ours` and `theirs` (each side's changes since the merge base, as
/// `graph::between` gives them) that conflict, in key order.
pub(crate) fn conflicts(
    snap: &dyn KvSnapshot,
    ours: &BTreeMap<String, Change>,
    theirs: &BTreeMap<String, Change>,
) -> Result<Vec<String>, StoreError> {
    let mut keys = BTreeSet::new();
    for (key, change) in theirs {
        if let Some(mine) = ours.get(key) {
            if !equal(snap, key, &mine.new, &change.new)? {
                keys.insert(key.clone());
            }
        }
    }
    for (side, other) in [(ours, theirs), (theirs, ours)] {
        for (document, change) in side.iter().filter(|(key, _)| node_prefix(key).is_some()) {
            // Both sides made the node the same: what each wrote under it fits it.
            if let Some(theirs) = other.get(document) {
                if equal(snap, document, &theirs.new, &change.new)? {
                    continue;
                }
            }
            let prefix = node_prefix(document).unwrap_or_default();
            let below: Vec<&String> = other
                .range::<str, _>((std::ops::Bound::Included(prefix), std::ops::Bound::Unbounded))
                .map(|(key, _)| key)
                .take_while(|key| key.starts_with(prefix))
                .filter(|key| *key != document)
                .collect();
            // The documents are read only when the other side changed something under the node.
            if below.is_empty() || !restructures(snap, document, change)? {
                continue;
            }
            keys.insert(document.clone());
            keys.extend(below.into_iter().cloned());
        }
    }
    Ok(keys.into_iter().collect())
}

/// Whether two entries of `key` hold the same bytes: the same value, or two writes of equal
/// values (both sides wrote the same document, or the same chunk). Only keys changed on both
/// sides are compared, so the values read are few.
fn equal(snap: &dyn KvSnapshot, key: &str, a: &Option<Entry>, b: &Option<Entry>) -> Result<bool, StoreError> {
    if same(a, b) {
        return Ok(true);
    }
    match (a, b) {
        (Some(a), Some(b)) if a.len == b.len => Ok(read_entry(snap, key, a)? == read_entry(snap, key, b)?),
        _ => Ok(false),
    }
}

/// The prefix of the keys under the node whose document `key` is ("" for the root), or `None`
/// when `key` is no node's document.
fn node_prefix(key: &str) -> Option<&str> {
    let prefix = key.strip_suffix(DOCUMENT)?;
    (prefix.is_empty() || prefix.ends_with('/')).then_some(prefix)
}

/// Whether `change` to the document at `key` gives what is under it another meaning: the node
/// was made or removed, or it is (or was) no group and changed other than in its attributes.
fn restructures(snap: &dyn KvSnapshot, key: &str, change: &Change) -> Result<bool, StoreError> {
    let (Some(old), Some(new)) = (change.old, change.new) else { return Ok(true) };
    let (Some(old), Some(new)) = (structure(snap, key, &old)?, structure(snap, key, &new)?) else {
        // A document that is not JSON: nothing about it can be trusted to keep its meaning.
        return Ok(true);
    };
    let group = |doc: &serde_json::Map<String, serde_json::Value>| {
        doc.get("node_type").and_then(serde_json::Value::as_str) == Some("group")
    };
    if group(&old) && group(&new) {
        return Ok(false);
    }
    Ok(old != new)
}

/// The document `entry` holds, without its attributes, or `None` when it is no JSON object.
fn structure(
    snap: &dyn KvSnapshot,
    key: &str,
    entry: &Entry,
) -> Result<Option<serde_json::Map<String, serde_json::Value>>, StoreError> {
    let bytes = read_entry(snap, key, entry)?;
    let Ok(serde_json::Value::Object(mut document)) = serde_json::from_slice(&bytes) else { return Ok(None) };
    document.remove("attributes");
    Ok(Some(document))
}

#[cfg(test)]
mod tests {
    use super::node_prefix;

    #[test]
    fn documents_are_known_by_their_name() {
        assert_eq!(node_prefix("zarr.json"), Some(""));
        assert_eq!(node_prefix("a/b/zarr.json"), Some("a/b/"));
        assert_eq!(node_prefix("a/notzarr.json"), None);
        assert_eq!(node_prefix("a/c/0"), None);
    }
}
