//! Consolidated metadata: a copy of every descendant's `zarr.json` inside a group's document, in
//! the member `consolidated_metadata`, as zarr-python 3 and xarray write and trust it.
//!
//! zarrdb never stores it. It is a cache of other documents, and every append or resize would
//! make a stored copy stale while readers such as xarray keep believing it. So parsing a group
//! document drops the member (every group document zarrdb writes is built from a parsed one or
//! from scratch, so none carries it), and an export computes it afresh from the exported
//! snapshot (`transfer/export.rs`), in the shape built here.

use serde_json::{Map, Value};

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

/// The document of an implicit group, for the consolidated metadata of its ancestors: a reader
/// of consolidated metadata (zarr-python) refuses a hierarchy whose nodes' parents are missing
/// from it, and an implicit group is a group without attributes.
pub(crate) fn implicit_group() -> Value {
    super::GroupMetadata::default().to_json()
}

/// A document as zarrdb writes every `zarr.json`: pretty-printed, with a final newline.
pub(crate) fn to_bytes(document: &Value) -> Vec<u8> {
    super::pretty(document)
}
