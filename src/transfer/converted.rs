//! A read-only view of a folder, zip archive or store as the import would write it: Zarr v2, a v1 array
//! or the 2020 draft appear as Zarr v3, so `zarrdb tree`, `info`, `cat` and `check` read them
//! without importing. The import plan (`plan/`) gives the v3 document of every node and the
//! source key of every chunk; documents are held in memory, chunk values are read from the
//! source when asked for. Keys the import would skip are not in the view.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use super::import::prepare;
use super::options::ImportOptions;
use super::source::{self, Source, StoreSource};
use crate::error::{Error, StoreError};
use crate::key::path::NodePath;
use crate::key::validate_key;
use crate::store::{
    keys_with_prefix, list_dir_ordered, DirListing, ListableStore, ReadableStore, Store, StoreCapabilities,
    WritableStore,
};

/// What a key of the view holds.
enum Entry {
    /// A converted metadata document.
    Document(Vec<u8>),
    /// A chunk, read from the source under this key; its size when listed.
    Chunk { from: String, size: u64 },
}

/// A folder or zip archive holding a Zarr hierarchy in any layout an import reads, seen as the
/// Zarr v3 hierarchy the import would write. Read-only; writes are
/// [`StoreError::Unsupported`].
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let v2 = dir.path().join("v2.zarr");
/// std::fs::create_dir(&v2).unwrap();
/// std::fs::write(v2.join(".zarray"), br#"{"zarr_format": 2, "shape": [2], "chunks": [2],
///     "dtype": "|u1", "compressor": null, "fill_value": 0, "order": "C", "filters": null}"#).unwrap();
/// std::fs::write(v2.join("0"), [7u8, 9]).unwrap();
/// let store = zarrdb::transfer::ConvertedStore::open(&v2)?;
/// assert_eq!(store.layout(), "Zarr v2");
/// let array = zarrdb::Array::open(std::sync::Arc::new(store), "/")?;
/// assert_eq!(array.read_all::<u8>()?, vec![7, 9]);
/// # Ok::<(), zarrdb::Error>(())
/// ```
pub struct ConvertedStore {
    source: Box<dyn Source + Send>,
    layout: &'static str,
    keys: BTreeMap<String, Entry>,
}

impl std::fmt::Debug for ConvertedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConvertedStore")
            .field("source", &self.source.describe())
            .field("layout", &self.layout)
            .field("keys", &self.keys.len())
            .finish()
    }
}

impl ConvertedStore {
    /// List the folder or zip archive at `path` and plan it as an import would: a source with no
    /// Zarr hierarchy is [`crate::error::PlanError::NoHierarchy`], metadata an import would refuse is
    /// that import's error.
    pub fn open(path: impl AsRef<Path>) -> Result<ConvertedStore, Error> {
        Self::planned(source::open_path(path.as_ref())?)
    }

    /// [`ConvertedStore::open`] over the keys of any store, such as a bucket
    /// ([`crate::store::ObjectStore`]).
    pub fn over(store: Arc<dyn Store>) -> Result<ConvertedStore, Error> {
        Self::planned(Box::new(StoreSource { store, prefix: String::new() }))
    }

    fn planned(source: Box<dyn Source + Send>) -> Result<ConvertedStore, Error> {
        let prepared = prepare(source.as_ref(), &NodePath::root(), &ImportOptions::default())?;
        let mut keys = BTreeMap::new();
        for item in prepared.items {
            keys.insert(item.to, Entry::Chunk { from: item.from, size: item.size });
        }
        for (key, document) in prepared.documents {
            keys.insert(key, Entry::Document(document));
        }
        Ok(ConvertedStore { source, layout: prepared.report.layout, keys })
    }

    /// The source's layout: "Zarr v3", "Zarr v2", "Zarr v1" or "Zarr v3 2020 draft".
    pub fn layout(&self) -> &'static str {
        self.layout
    }
}

fn unsupported(operation: &'static str) -> StoreError {
    StoreError::Unsupported { store: "converted", operation }
}

impl ReadableStore for ConvertedStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        validate_key(key)?;
        match self.keys.get(key) {
            None => Ok(None),
            Some(Entry::Document(bytes)) => Ok(Some(bytes.clone())),
            Some(Entry::Chunk { from, .. }) => self.source.read(from).map(Some).map_err(|e| StoreError::Engine {
                backend: "converted",
                operation: "get",
                key: key.to_owned(),
                source: Box::new(e),
            }),
        }
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        validate_key(key)?;
        Ok(self.keys.get(key).map(|entry| match entry {
            Entry::Document(bytes) => bytes.len() as u64,
            Entry::Chunk { size, .. } => *size,
        }))
    }
}

impl WritableStore for ConvertedStore {
    fn set(&self, _key: &str, _value: &[u8]) -> Result<(), StoreError> {
        Err(unsupported("set"))
    }

    fn set_partial_values(&self, _writes: &[(&str, u64, &[u8])]) -> Result<(), StoreError> {
        Err(unsupported("set_partial_values"))
    }

    fn erase(&self, _key: &str) -> Result<(), StoreError> {
        Err(unsupported("erase"))
    }

    fn erase_prefix(&self, _prefix: &str) -> Result<(), StoreError> {
        Err(unsupported("erase_prefix"))
    }
}

impl ListableStore for ConvertedStore {
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        Ok(keys_with_prefix(&self.keys, prefix).cloned().collect())
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing, StoreError> {
        list_dir_ordered(prefix, |from| {
            self.keys.range::<str, _>((Bound::Included(from), Bound::Unbounded)).map(|(k, _)| k.as_str())
        })
    }
}

impl Store for ConvertedStore {
    fn capabilities(&self) -> StoreCapabilities {
        StoreCapabilities {
            readable: true,
            writable: false,
            partial_writes: false,
            listable: true,
            atomic_multi_key: false,
            // A folder may change under the view; a read of a changed chunk fails its size check
            // in the copy loop only, so no promise is made.
            stable_snapshots: false,
        }
    }

    fn kind(&self) -> &'static str {
        "converted"
    }
}
