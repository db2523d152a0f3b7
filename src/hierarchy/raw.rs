//! Raw key access that keeps the hierarchy's rules: what a key/value client such as
//! zarr-python's `Store` needs to read and write a database without going through `Group` and
//! `Array`.
//!
//! Such a client writes `zarr.json` documents as bytes. Stored unchecked, a corrupt or
//! unsupported document would only surface when some later reader opens the node, and a node
//! could be written inside an array. So a document write is parsed and placed as
//! [`Group::create`](crate::Group) would place it, and refused with the engine's typed error.
//!
//! Consolidated metadata (`consolidated_metadata` in a group document) is never stored: it is a
//! copy of other documents that every later resize or append would make stale (see
//! `metadata/consolidated.rs`). A group written with it is stored with an empty member, which
//! records only that its writer wants it consolidated, and reading that document through
//! [`RawAccess`] fills the member afresh from the documents stored now.

use crate::store::Sealed;
use std::collections::BTreeMap;

use serde_json::Value;

use super::read_metadata;
use crate::array::codec_chain;
use crate::error::{Error, NodeError};
use crate::key::path::NodePath;
use crate::metadata::{consolidated, NodeMetadata, METADATA_KEY};
use crate::store::Store;

/// Raw reads and writes of Zarr keys that check node documents on the way in and present
/// consolidated metadata fresh on the way out. Other keys (chunks, v2 documents, anything
/// else) pass through unchanged.
///
/// ```
/// use zarrdb::MemoryStore;
/// use zarrdb::hierarchy::RawAccess;
/// let store = MemoryStore::new();
/// let raw = RawAccess::new(&store);
/// raw.set("zarr.json", br#"{"zarr_format": 3, "node_type": "group"}"#).unwrap();
/// // Not a Zarr document: refused with the engine's error, nothing stored.
/// assert!(matches!(raw.set("a/zarr.json", b"not json"), Err(zarrdb::Error::Metadata { .. })));
/// assert_eq!(raw.get("a/zarr.json").unwrap(), None);
/// // Other keys are stored as given.
/// raw.set("a/c/0", b"chunk").unwrap();
/// ```
pub struct RawAccess<'a> {
    store: &'a dyn Store,
}

impl<'a> RawAccess<'a> {
    /// Raw access to `store` (a database's auto-commit store, a transaction's or a snapshot's,
    /// or any other store).
    pub fn new(store: &'a dyn Store) -> RawAccess<'a> {
        RawAccess { store }
    }

    /// The value under `key`; a group document written with consolidated metadata comes with
    /// that metadata computed from the documents stored now, all read at one commit.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>, Error> {
        let Some(path) = document_path(key)? else { return Ok(self.store.get(key)?) };
        crate::store::read_consistently(self.store, |store| {
            let Some(bytes) = store.get(key)? else { return Ok(None) };
            match wants_consolidation(&bytes) {
                Some(document) => consolidate(store, &path, document).map(Some),
                None => Ok(Some(bytes)),
            }
        })
    }

    /// The size of what [`RawAccess::get`] returns for `key`, or `None` when absent.
    pub fn size(&self, key: &str) -> Result<Option<u64>, Error> {
        if document_path(key)?.is_none() {
            return Ok(self.store.size(key)?);
        }
        Ok(self.get(key)?.map(|value| value.len() as u64))
    }

    /// Store `value` under `key`. A node document (`zarr.json`) must parse as the engine parses
    /// documents, an array's codec chain must be one the engine can build, and no node may lie
    /// inside an array; consolidated metadata in a group document is dropped (see the module
    /// documentation). The check and the write are one atomic step.
    pub fn set(&self, key: &str, value: &[u8]) -> Result<(), Error> {
        let Some(path) = document_path(key)? else { return Ok(self.store.set(key, value)?) };
        let metadata =
            NodeMetadata::from_json(value).map_err(|source| Error::Metadata { key: key.to_owned(), source })?;
        if let NodeMetadata::Array(array) = &metadata {
            // As opening the array would: a codec chain it cannot build is refused now.
            codec_chain(array).map_err(|source| Error::Codec { key: key.to_owned(), source })?;
        }
        let stored = match (&metadata, wants_consolidation(value)) {
            (NodeMetadata::Group(_), Some(mut document)) => {
                document.insert(consolidated::MEMBER.to_owned(), consolidated::request());
                Some(consolidated::to_bytes(&Value::Object(document)))
            }
            _ => None,
        };
        let scope = self.store.begin_scope(true, Sealed::new())?;
        let target = scope.as_ref().map(|s| s.store());
        let target: &dyn Store = target.as_deref().unwrap_or(self.store);
        for ancestor in path.ancestors() {
            if let Some(NodeMetadata::Array(_)) = read_metadata(target, &ancestor)? {
                return Err(NodeError::ParentIsArray { path: path.to_string(), array: ancestor.to_string() }.into());
            }
        }
        target.set(key, stored.as_deref().unwrap_or(value))?;
        match scope {
            Some(scope) => scope.finish(),
            None => Ok(()),
        }
    }

    /// Whether `key` is a node document (`zarr.json`), the only kind of key this type checks or
    /// presents; every other key passes through as it is.
    pub fn is_document(key: &str) -> bool {
        key == METADATA_KEY || key.strip_suffix(METADATA_KEY).is_some_and(|rest| rest.ends_with('/'))
    }
}

/// The node whose document `key` is, or `None` when `key` is not a `zarr.json`.
fn document_path(key: &str) -> Result<Option<NodePath>, Error> {
    if !RawAccess::is_document(key) {
        return Ok(None);
    }
    let folder = &key[..key.len() - METADATA_KEY.len()];
    let node = folder.strip_suffix('/').unwrap_or(folder);
    Ok(Some(NodePath::parse(node)?))
}

/// The JSON object of a group document that asks for consolidated metadata (a non-null
/// `consolidated_metadata` member), or `None`.
fn wants_consolidation(bytes: &[u8]) -> Option<serde_json::Map<String, Value>> {
    // Most documents do not mention it: skip parsing them.
    let needle = consolidated::MEMBER.as_bytes();
    if !bytes.windows(needle.len()).any(|w| w == needle) {
        return None;
    }
    match crate::metadata::json::parse(bytes) {
        Ok(Value::Object(obj))
            if obj.get("node_type").and_then(Value::as_str) == Some("group")
                && obj.get(consolidated::MEMBER).is_some_and(|m| !m.is_null()) =>
        {
            Some(obj)
        }
        _ => None,
    }
}

/// `document` (the group at `path`) with consolidated metadata of every node stored below it
/// now. Arrays are not descended into (their keys are chunks); a folder holding nodes but no
/// document of its own is an implicit group, one holding no node is not listed.
fn consolidate(
    store: &dyn Store,
    path: &NodePath,
    mut document: serde_json::Map<String, Value>,
) -> Result<Vec<u8>, Error> {
    let mut nodes = BTreeMap::new();
    let mut pending = vec![path.clone()];
    while let Some(group) = pending.pop() {
        let listing = store.list_dir(&group.key_prefix())?;
        for name in listing.prefixes {
            // Reserved names (the engine's bookkeeping) are no nodes.
            let Ok(child) = group.child(&name) else { continue };
            let relative = child.as_str()[path.as_str().len()..].trim_start_matches('/').to_owned();
            let key = child.metadata_key();
            match store.get(&key)? {
                Some(bytes) => {
                    let (metadata, value, _) =
                        consolidated::entry(&bytes).map_err(|source| Error::Metadata { key, source })?;
                    nodes.insert(relative, value);
                    if matches!(metadata, NodeMetadata::Group(_)) {
                        pending.push(child);
                    }
                }
                // Nodes below it make it an implicit group (added after the walk).
                None => pending.push(child),
            }
        }
    }
    consolidated::add_implicit_groups(&mut nodes);
    document.insert(consolidated::MEMBER.to_owned(), consolidated::inline(nodes));
    Ok(consolidated::to_bytes(&Value::Object(document)))
}
