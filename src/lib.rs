//! zarrdb: an embedded, transactional Zarr v3 storage engine.
//!
//! A whole Zarr hierarchy (groups, arrays, chunks) lives in one store: an embedded database
//! ([`Database`]: redb, LMDB or sled, with transactions across arrays), a folder in the File
//! System Store layout ([`DirectoryStore`]), a zip archive ([`ZipStore`], read-only) or memory.
//! The layers, from the top: transfer (import and export) -> hierarchy ([`Group`], [`Node`]) ->
//! array ([`Array`]: regions, chunks) -> db (transactions, snapshots) -> codec (the chain of
//! `zarr.json`) -> store ([`Store`] and its backends) -> metadata ([`ArrayMetadata`],
//! [`GroupMetadata`]) -> key ([`NodePath`], key rules) -> error. `docs/architecture.md` describes
//! them and how a region write flows through them.
//!
//! ```
//! use std::sync::Arc;
//! use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Store};
//!
//! let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
//! let meta = ArrayMetadata::new(DataType::Int32, vec![6, 4], vec![4, 4]);
//! let array = Array::create(store.clone(), "/experiment/counts", meta)?;
//! array.write_region(&[2, 1], &[3, 2], &[1, 2, 3, 4, 5, 6])?;
//! let again = Array::open(store, "/experiment/counts")?;
//! assert_eq!(again.read_region::<i32>(&[3, 0], &[1, 4])?, vec![0, 3, 4, 0]);
//! # Ok::<(), zarrdb::Error>(())
//! ```

#![warn(missing_docs)]

// The README's Rust example runs as a doc test, so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

pub mod array;
mod codec;
pub mod db;
pub mod error;
#[cfg(test)]
mod fault_model;
#[doc(hidden)]
pub mod fuzzing;
pub mod hierarchy;
mod key;
pub mod metadata;
pub mod store;
pub mod transfer;

// The names most programs need, at the root; everything else in its module (`zarrdb::store`,
// `zarrdb::error`...).
pub use array::{Array, ChunkElements, Element, Synchronizer};
pub use db::{Backend, Database, DatabaseBuilder, Durability, Snapshot, Transaction};
pub use error::Error;
pub use hierarchy::{Group, Node, NodePath};
pub use metadata::{ArrayMetadata, DataType, FillValue, GroupMetadata};
pub use store::{DirectoryStore, MemoryStore, Store, ZipStore};
pub use transfer::{copy, ExportOptions, ImportOptions};
