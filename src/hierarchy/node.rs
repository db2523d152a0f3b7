//! Opening whatever node lives at a path.

use std::sync::Arc;

use super::Group;
use crate::array::Array;
use crate::error::{Error, NodeError};
use crate::key::path::NodePath;
use crate::metadata::NodeMetadata;
use crate::store::Store;

/// An array or a group.
///
/// ```
/// use std::sync::Arc;
/// use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Node, Store};
/// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
/// Array::create(store.clone(), "/a/b", ArrayMetadata::new(DataType::UInt8, vec![2], vec![2]))?;
/// match Node::open(store.clone(), "/a")? {
///     Node::Group(group) => assert_eq!(group.path().as_str(), "/a"), // created as a parent
///     Node::Array(_) => unreachable!(),
/// }
/// assert!(matches!(Node::open(store, "/a/b")?, Node::Array(_)));
/// # Ok::<(), zarrdb::Error>(())
/// ```
#[derive(Debug, Clone)]
#[expect(
    clippy::large_enum_variant,
    reason = "a Node is a short-lived handle returned by value once per open; boxing the array would cost an allocation each time for no saving"
)]
pub enum Node {
    /// An array.
    Array(Array),
    /// A group, explicit or implicit.
    Group(Group),
}

impl Node {
    /// Open the node at `path`: its `zarr.json` decides the kind; a path without one but with
    /// descendants is an implicit group.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Node, Store};
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    /// Array::create(store.clone(), "/g/a", ArrayMetadata::new(DataType::UInt8, vec![4], vec![2])).unwrap();
    /// assert!(matches!(Node::open(store.clone(), "/g").unwrap(), Node::Group(_)));
    /// assert!(matches!(Node::open(store, "/g/a").unwrap(), Node::Array(_)));
    /// ```
    pub fn open(store: Arc<dyn Store>, path: &str) -> Result<Node, Error> {
        let path = NodePath::parse(path)?;
        // Keys below an array are its chunks, not nodes: `/arr/c` is no implicit group.
        if under_array(store.as_ref(), &path)? {
            return Err(NodeError::NotFound { path: path.to_string() }.into());
        }
        match super::read_metadata(store.as_ref(), &path)? {
            Some(NodeMetadata::Array(meta)) => Ok(Node::Array(Array::from_metadata(store, path, meta)?)),
            Some(NodeMetadata::Group(meta)) => Ok(Node::Group(Group::from_parts(store, path, Some(meta)))),
            None if super::has_descendants(store.as_ref(), &path)? => {
                Ok(Node::Group(Group::from_parts(store, path, None)))
            }
            None => Err(NodeError::NotFound { path: path.to_string() }.into()),
        }
    }

    /// The node's path.
    pub fn path(&self) -> &NodePath {
        match self {
            Node::Array(a) => a.path(),
            Node::Group(g) => g.path(),
        }
    }
}

// Opening needs the hierarchy (a path may hold a group instead), so it lives here, above the array
// layer, as `Array::create` does in `create.rs`.
impl Array {
    /// Open the array at `path`.
    pub fn open(store: Arc<dyn Store>, path: &str) -> Result<Array, Error> {
        match Node::open(store, path)? {
            Node::Array(a) => Ok(a),
            Node::Group(g) => {
                Err(NodeError::WrongKind { path: g.path().to_string(), expected: "array", found: "group" }.into())
            }
        }
    }
}

/// Whether an ancestor of `path` is an array, which makes `path` part of that array, not a node.
pub(crate) fn under_array(store: &dyn Store, path: &NodePath) -> Result<bool, Error> {
    for ancestor in path.ancestors() {
        if let Some(NodeMetadata::Array(_)) = super::read_metadata(store, &ancestor)? {
            return Ok(true);
        }
    }
    Ok(false)
}
