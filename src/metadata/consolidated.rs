//! Consolidated metadata: a copy of every descendant's `zarr.json` inside a group's document, in
//! the member `consolidated_metadata`, as zarr-python 3 and xarray write and trust it.
//!
//! zarrdb never stores it. It is a cache of other documents, and every append or resize would
//! make a stored copy stale while readers such as xarray keep believing it. So parsing a group
//! document drops the member (every group document zarrdb writes is built from a parsed one or
//! from scratch, so none carries it), and an export computes it afresh from the exported
//! snapshot (`transfer/export.rs`), in the shape built here.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::MetadataError;

/// The member of a group document that holds consolidated metadata.
pub(crate) const MEMBER: &str = "consolidated_metadata";

/// The `consolidated_metadata` member for a group whose descendants have these documents, keyed
/// by their path relative to the group (`"a"`, `"a/b"`: every descendant at the top level, not
/// nested), as zarr-python 3.1 writes it. Each descendant group's entry carries an empty inline
/// member of its own, again as zarr-python writes it.
pub(crate) fn inline(descendants: impl IntoIterator<Item = (String, Value)>) -> Value {
    let metadata: Map<String, Value> = descendants
        .into_iter()
        .map(|(path, mut document)| {
            if let Some(obj) = document.as_object_mut() {
                if obj.get("node_type").and_then(Value::as_str) == Some("group") {
                    obj.insert(MEMBER.to_owned(), member(Map::new()));
                }
            }
            (path, document)
        })
        .collect();
    member(metadata)
}

fn member(metadata: Map<String, Value>) -> Value {
    let mut obj = Map::new();
    obj.insert("kind".into(), "inline".into());
    obj.insert("must_understand".into(), false.into());
    obj.insert("metadata".into(), Value::Object(metadata));
    Value::Object(obj)
}

/// The member a group document keeps when its writer wanted it consolidated: empty, a request
/// only. Readers that serve consolidated metadata (`RawAccess`, an export) fill it afresh;
/// nothing reads its content.
pub(crate) fn request() -> Value {
    member(Map::new())
}

/// `group`'s document with the consolidation request: what is stored for a group whose source or
/// writer had consolidated metadata.
pub(crate) fn requesting(group: &super::GroupMetadata) -> Vec<u8> {
    let mut document = group.to_json();
    if let Some(obj) = document.as_object_mut() {
        obj.insert(MEMBER.to_owned(), request());
    }
    to_bytes(&document)
}

/// Add an entry for every folder among `nodes`' ancestors that has no document of its own: an
/// implicit group. A reader of consolidated metadata (zarr-python) refuses a hierarchy whose
/// nodes' parents are missing from it, and an implicit group is a group without attributes.
/// `nodes` are keyed by their path relative to the consolidating group.
pub(crate) fn add_implicit_groups(nodes: &mut BTreeMap<String, Value>) {
    let implicit: Vec<String> = nodes
        .keys()
        .flat_map(|path| path.match_indices('/').map(|(i, _)| path[..i].to_owned()).collect::<Vec<_>>())
        .filter(|ancestor| !nodes.contains_key(ancestor))
        .collect();
    for path in implicit {
        nodes.insert(path, super::GroupMetadata::default().to_json());
    }
}

/// A stored document as consolidated metadata holds it: checked with the crate's parser
/// (consolidated metadata must not describe a node no reader could open), member order kept,
/// without a consolidated member of its own. The flag tells whether the stored document had one
/// (a group written with consolidated metadata through `RawAccess`).
pub(crate) fn entry(bytes: &[u8]) -> Result<(super::NodeMetadata, Value, bool), MetadataError> {
    let metadata = super::NodeMetadata::from_json(bytes)?;
    let mut value: Value = super::json::parse(bytes)?;
    let had_member = value.as_object_mut().and_then(|obj| obj.remove(MEMBER)).is_some();
    Ok((metadata, value, had_member))
}

/// A document as zarrdb writes every `zarr.json`: pretty-printed, with a final newline.
pub(crate) fn to_bytes(document: &Value) -> Vec<u8> {
    super::pretty(document)
}
