//! Group handles: attributes and children.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::node::Node;
use crate::error::{Error, NodeError};
use crate::key::path::NodePath;
use crate::metadata::{GroupMetadata, NodeMetadata};
use crate::store::Store;

/// A handle on a group. Implicit groups (no `zarr.json`, implied by descendants) have no metadata.
///
/// ```
/// use std::sync::Arc;
/// use zarrdb::{Array, ArrayMetadata, DataType, Group, MemoryStore, Node, Store};
/// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
/// let mut attributes = serde_json::Map::new();
/// attributes.insert("title".into(), "a run".into());
/// Group::create(store.clone(), "/run", attributes)?;
/// Array::create(store.clone(), "/run/t", ArrayMetadata::new(DataType::Float32, vec![4], vec![2]))?;
/// let run = Group::open(store, "/run")?;
/// assert_eq!(run.attributes()["title"], "a run");
/// assert!(matches!(run.children()?.as_slice(), [Node::Array(a)] if a.path().as_str() == "/run/t"));
/// # Ok::<(), zarrdb::Error>(())
/// ```
#[derive(Clone)]
pub struct Group {
    store: Arc<dyn Store>,
    path: NodePath,
    metadata: Option<GroupMetadata>,
}

impl std::fmt::Debug for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group").field("path", &self.path).field("implicit", &self.metadata.is_none()).finish()
    }
}

impl Group {
    pub(crate) fn from_parts(store: Arc<dyn Store>, path: NodePath, metadata: Option<GroupMetadata>) -> Group {
        Group { store, path, metadata }
    }

    /// Open the group at `path` (explicit, or implicit through its descendants).
    pub fn open(store: Arc<dyn Store>, path: &str) -> Result<Group, Error> {
        match Node::open(store, path)? {
            Node::Group(g) => Ok(g),
            Node::Array(a) => {
                Err(NodeError::WrongKind { path: a.path().to_string(), expected: "group", found: "array" }.into())
            }
        }
    }

    /// The group's path.
    pub fn path(&self) -> &NodePath {
        &self.path
    }

    /// Whether the group has no `zarr.json` of its own.
    pub fn is_implicit(&self) -> bool {
        self.metadata.is_none()
    }

    /// The group's metadata; `None` for an implicit group.
    pub fn metadata(&self) -> Option<&GroupMetadata> {
        self.metadata.as_ref()
    }

    /// User attributes (empty for an implicit group).
    pub fn attributes(&self) -> Map<String, Value> {
        self.metadata.as_ref().map(|m| m.attributes.clone()).unwrap_or_default()
    }

    /// Replace the attributes, making an implicit group explicit.
    pub fn set_attributes(&mut self, attributes: Map<String, Value>) -> Result<(), Error> {
        let mut meta = self.metadata.clone().unwrap_or_default();
        meta.attributes = attributes;
        self.store.set(&self.path.metadata_key(), &meta.to_json_bytes())?;
        self.metadata = Some(meta);
        Ok(())
    }

    /// Names of the child nodes, sorted. Reserved names (`__zarrdb` bookkeeping) are skipped.
    pub fn child_names(&self) -> Result<Vec<String>, Error> {
        let listing = self.store.list_dir(&self.path.key_prefix())?;
        Ok(listing.prefixes.into_iter().filter(|name| crate::key::path::check_name(name).is_ok()).collect())
    }

    /// The child nodes, opened.
    pub fn children(&self) -> Result<Vec<Node>, Error> {
        self.child_names()?.iter().map(|name| Node::open(self.store.clone(), self.path.child(name)?.as_str())).collect()
    }

    /// The store the group lives in.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }
}

/// Read and parse the `zarr.json` of `path`, if any.
pub(crate) fn read_metadata(store: &dyn Store, path: &NodePath) -> Result<Option<NodeMetadata>, Error> {
    let key = path.metadata_key();
    // An absurd document is refused before it is read into memory at all.
    if let Some(bytes) = store.size(&key)? {
        crate::metadata::json::check_size(bytes).map_err(|source| Error::Metadata { key: key.clone(), source })?;
    }
    match store.get(&key)? {
        None => Ok(None),
        Some(bytes) => NodeMetadata::from_json(&bytes).map(Some).map_err(|source| Error::Metadata { key, source }),
    }
}

/// Whether any key lies below `path` (which makes it an implicit group when it has no zarr.json).
pub(crate) fn has_descendants(store: &dyn Store, path: &NodePath) -> Result<bool, Error> {
    Ok(!store.list_dir(&path.key_prefix())?.is_empty())
}
