//! Erasing and moving nodes with their whole subtree, each one atomic step.
//!
//! A key/value store has no folders, so an implicit group exists only while keys lie below it:
//! erasing its last descendant makes it disappear, unless the caller asks to keep the parent, which
//! is then made explicit first. Moving copies every key of the subtree to the new path and erases
//! the old one; on a database store both happen in one transaction, so readers see the node at one
//! path or the other, never at both or neither.

use std::sync::Arc;

use super::create::{in_scope, prepare};
use super::group::{has_descendants, read_metadata};
use super::node::under_array;
use super::Node;
use crate::error::{Error, NodeError};
use crate::key::path::NodePath;
use crate::metadata::GroupMetadata;
use crate::store::Store;

impl Node {
    /// Erase the node at `path` and everything below it. An implicit parent left without
    /// descendants disappears with it; see [`Node::erase_keeping_parent`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Node, Store};
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    /// Array::create(store.clone(), "/runs/a", ArrayMetadata::new(DataType::UInt8, vec![4], vec![2]))?;
    /// Node::erase(store.clone(), "/runs")?;
    /// assert!(Node::open(store, "/runs").is_err());
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn erase(store: Arc<dyn Store>, path: &str) -> Result<(), Error> {
        erase(&store, path, false)
    }

    /// [`Node::erase`], but the parent group stays: an implicit parent is made explicit first, so
    /// it survives losing its last child.
    pub fn erase_keeping_parent(store: Arc<dyn Store>, path: &str) -> Result<(), Error> {
        erase(&store, path, true)
    }

    /// Move the node at `from` with its subtree to `to`, which must be free and not below `from`.
    /// Missing parents of `to` become explicit groups; an implicit parent of `from` left empty
    /// disappears. Every value is copied once; nothing is re-encoded.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Node, Store};
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    /// let a = Array::create(store.clone(), "/tmp/x", ArrayMetadata::new(DataType::UInt8, vec![2], vec![2]))?;
    /// a.write_region(&[0], &[2], &[4u8, 2])?;
    /// Node::rename(store.clone(), "/tmp/x", "/results/x")?;
    /// assert_eq!(Array::open(store, "/results/x")?.read_all::<u8>()?, vec![4, 2]);
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn rename(store: Arc<dyn Store>, from: &str, to: &str) -> Result<(), Error> {
        let from = NodePath::parse(from)?;
        let to = NodePath::parse(to)?;
        if from.is_root() || to.is_root() || to == from || to.as_str().starts_with(&format!("{}/", from.as_str())) {
            return Err(NodeError::InvalidMove { from: from.to_string(), to: to.to_string() }.into());
        }
        in_scope(&store, |s| {
            require_exists(s, &from)?;
            prepare(s, &to, true)?;
            let (old, new) = (from.key_prefix(), to.key_prefix());
            for key in s.list_prefix(&old)? {
                // Listed inside the same scope, so the value is there unless the store is shared
                // with writers outside any transaction.
                let value = s.get(&key)?.ok_or_else(|| NodeError::NotFound { path: key.clone() })?;
                s.set_owned(&format!("{new}{}", &key[old.len()..]), value)?;
            }
            s.erase_prefix(&old).map_err(Error::from)
        })
    }
}

fn erase(store: &Arc<dyn Store>, path: &str, keep_parent: bool) -> Result<(), Error> {
    let path = NodePath::parse(path)?;
    in_scope(store, |s| {
        require_exists(s, &path)?;
        if let Some(parent) = path.parent().filter(|_| keep_parent) {
            if read_metadata(s, &parent)?.is_none() {
                s.set(&parent.metadata_key(), &GroupMetadata::default().to_json_bytes())?;
            }
        }
        s.erase_prefix(&path.key_prefix()).map_err(Error::from)
    })
}

fn require_exists(store: &dyn Store, path: &NodePath) -> Result<(), Error> {
    if under_array(store, path)? {
        return Err(NodeError::NotFound { path: path.to_string() }.into());
    }
    if read_metadata(store, path)?.is_some() || has_descendants(store, path)? {
        Ok(())
    } else {
        Err(NodeError::NotFound { path: path.to_string() }.into())
    }
}
