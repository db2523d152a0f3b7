//! Creating nodes: the hierarchy rules that hold across the path (no node under an array, one
//! node per path) and explicit parent groups.

use crate::store::Sealed;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::group::{has_descendants, read_metadata};
use super::Group;
use crate::array::Array;
use crate::error::{Error, NodeError};
use crate::key::path::NodePath;
use crate::metadata::{ArrayMetadata, GroupMetadata, NodeMetadata};
use crate::store::Store;

impl Array {
    /// Create an array at `path` and write its `zarr.json`; missing ancestors become explicit
    /// groups. Fails if a node exists at `path` or an ancestor is an array.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Store};
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    /// let meta = ArrayMetadata::new(DataType::Float32, vec![100, 100], vec![10, 10]);
    /// let array = Array::create(store.clone(), "/data/temperature", meta).unwrap();
    /// array.write_region(&[5, 5], &[2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    /// assert_eq!(array.read_region::<f32>(&[6, 5], &[1, 2]).unwrap(), vec![3.0, 4.0]);
    /// ```
    pub fn create(store: Arc<dyn Store>, path: &str, metadata: ArrayMetadata) -> Result<Array, Error> {
        Array::create_with(store, path, metadata, Parents::Explicit)
    }

    /// [`Array::create`], choosing what happens to missing ancestors.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarrdb::{Array, ArrayMetadata, DataType, Group, MemoryStore, Store};
    /// use zarrdb::hierarchy::Parents;
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    /// let meta = ArrayMetadata::new(DataType::UInt8, vec![4], vec![4]);
    /// Array::create_with(store.clone(), "/a/b", meta, Parents::Implicit)?;
    /// assert!(Group::open(store, "/a")?.is_implicit());
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn create_with(
        store: Arc<dyn Store>,
        path: &str,
        mut metadata: ArrayMetadata,
        parents: Parents,
    ) -> Result<Array, Error> {
        let path = NodePath::parse(path)?;
        let key = path.metadata_key();
        metadata.check().map_err(|source| Error::Metadata { key: key.clone(), source })?;
        // Refuse unknown codecs before anything is written, and write the chain in canonical form.
        let chain = crate::array::codec_chain(&metadata).map_err(|source| Error::Codec { key: key.clone(), source })?;
        metadata.codecs = chain.to_metadata();
        in_scope(&store, |s| {
            prepare_with(s, &path, true, parents)?;
            s.set(&key, &metadata.to_json_bytes()).map_err(Error::from)
        })?;
        Array::from_metadata(store, path, metadata)
    }
}

impl Group {
    /// Create a group at `path` with `attributes`; missing ancestors become explicit groups.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarrdb::{Group, MemoryStore, Store};
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    /// Group::create(store.clone(), "/", Default::default()).unwrap();
    /// Group::create(store.clone(), "/runs", Default::default()).unwrap();
    /// assert_eq!(Group::open(store, "/").unwrap().child_names().unwrap(), vec!["runs"]);
    /// ```
    pub fn create(store: Arc<dyn Store>, path: &str, attributes: Map<String, Value>) -> Result<Group, Error> {
        Group::create_with(store, path, attributes, Parents::Explicit)
    }

    /// [`Group::create`], choosing what happens to missing ancestors. Creating a group where an
    /// implicit group is makes it explicit.
    pub fn create_with(
        store: Arc<dyn Store>,
        path: &str,
        attributes: Map<String, Value>,
        parents: Parents,
    ) -> Result<Group, Error> {
        let path = NodePath::parse(path)?;
        let meta = GroupMetadata::new(attributes);
        in_scope(&store, |s| {
            prepare_with(s, &path, false, parents)?;
            s.set(&path.metadata_key(), &meta.to_json_bytes()).map_err(Error::from)
        })?;
        Ok(Group::from_parts(store, path, Some(meta)))
    }
}

/// Run `f` in one atomic unit of `store` when it offers one, so the checks and the writes of a
/// creation happen in one transaction and a concurrent creation cannot slip in between.
pub(super) fn in_scope(store: &Arc<dyn Store>, f: impl FnOnce(&dyn Store) -> Result<(), Error>) -> Result<(), Error> {
    match store.begin_scope(true, Sealed::new())? {
        None => f(store.as_ref()),
        Some(scope) => {
            f(scope.store().as_ref())?;
            scope.finish()
        }
    }
}

/// What creating a node does to its missing ancestors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Parents {
    /// Write a `zarr.json` for each missing ancestor group (the default).
    #[default]
    Explicit,
    /// Leave them implicit: groups that exist only because keys lie below them.
    Implicit,
}

pub(super) fn prepare(store: &dyn Store, path: &NodePath, is_array: bool) -> Result<(), Error> {
    prepare_with(store, path, is_array, Parents::Explicit)
}

/// Check that `path` is free and no ancestor is an array; write missing ancestors as groups.
/// An implicit group at `path` may become an explicit group, never an array.
fn prepare_with(store: &dyn Store, path: &NodePath, is_array: bool, parents: Parents) -> Result<(), Error> {
    // Ancestors first: below an array, keys are chunks, so "exists" would be the wrong answer.
    let mut missing = Vec::new();
    for ancestor in path.ancestors() {
        match read_metadata(store, &ancestor)? {
            Some(NodeMetadata::Array(_)) => {
                return Err(NodeError::ParentIsArray { path: path.to_string(), array: ancestor.to_string() }.into())
            }
            Some(NodeMetadata::Group(_)) => {}
            None if parents == Parents::Explicit => missing.push(ancestor),
            None => {}
        }
    }
    if read_metadata(store, path)?.is_some() || (is_array && has_descendants(store, path)?) {
        return Err(NodeError::AlreadyExists { path: path.to_string() }.into());
    }
    for ancestor in missing {
        store.set(&ancestor.metadata_key(), &GroupMetadata::default().to_json_bytes())?;
    }
    Ok(())
}
