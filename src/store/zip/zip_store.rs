//! A read-only store over a zip archive (zarr-python's `ZipStore` layout: each key an entry).
//! Writing a zip is `Database::export`'s job: an archive cannot be changed in place without
//! rewriting it, so this store refuses every write with [`StoreError::Unsupported`].

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;

use super::super::{
    keys_with_prefix, list_dir_ordered, validate_key, DirListing, ListableStore, ReadableStore, Store,
    StoreCapabilities, WritableStore,
};
use super::{ZipLimits, ZipReader};
use crate::error::StoreError;

/// A zip archive opened for reading. Every entry's size and CRC-32 are checked when read; names
/// an import would refuse (`..`, absolute, backslashes, control characters) are not listed and
/// cannot be read. A
/// name the archive holds twice reads as its last entry, as in zarr-python.
///
/// ```
/// use zarrdb::{Array, ArrayMetadata, DataType, Database, ExportOptions, ZipStore};
/// let dir = tempfile::tempdir().unwrap();
/// let db = Database::create(dir.path().join("one.zarrdb"))?;
/// Array::create(db.store(), "/t", ArrayMetadata::new(DataType::UInt8, vec![3], vec![2]))?
///     .write_region(&[0], &[3], &[1u8, 2, 3])?;
/// db.export(dir.path().join("t.zip"), &ExportOptions::default())?;
///
/// let zip = std::sync::Arc::new(ZipStore::open(dir.path().join("t.zip"))?);
/// assert_eq!(Array::open(zip, "/t")?.read_all::<u8>()?, vec![1, 2, 3]);
/// # Ok::<(), zarrdb::Error>(())
/// ```
pub struct ZipStore {
    reader: ZipReader,
    /// Key -> index of its (last) entry.
    keys: BTreeMap<String, usize>,
    path: String,
}

impl std::fmt::Debug for ZipStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZipStore").field("path", &self.path).field("keys", &self.keys.len()).finish()
    }
}

impl ZipStore {
    /// Open the archive at `path` and read its central directory.
    pub fn open(path: impl AsRef<Path>) -> Result<ZipStore, StoreError> {
        let path = path.as_ref();
        let reader = ZipReader::open(path, ZipLimits::default())
            .map_err(|e| zip_error("open", &path.display().to_string(), e))?;
        let keys = reader
            .entries()
            .iter()
            .enumerate()
            .filter(|(_, e)| crate::key::untrusted::is_safe(&e.name))
            .map(|(i, e)| (e.name.clone(), i))
            .collect();
        Ok(ZipStore { reader, keys, path: path.display().to_string() })
    }
}

fn zip_error(operation: &'static str, key: &str, e: crate::error::ZipError) -> StoreError {
    StoreError::Engine { backend: "zip", operation, key: key.to_owned(), source: Box::new(e) }
}

impl ReadableStore for ZipStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        validate_key(key)?;
        let Some(&i) = self.keys.get(key) else { return Ok(None) };
        self.reader.read(&self.reader.entries()[i]).map(Some).map_err(|e| zip_error("get", key, e))
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        validate_key(key)?;
        Ok(self.keys.get(key).map(|&i| self.reader.entries()[i].size))
    }
}

impl WritableStore for ZipStore {
    fn set(&self, _key: &str, _value: &[u8]) -> Result<(), StoreError> {
        Err(StoreError::Unsupported { store: "zip", operation: "set" })
    }

    fn set_partial_values(&self, _writes: &[(&str, u64, &[u8])]) -> Result<(), StoreError> {
        Err(StoreError::Unsupported { store: "zip", operation: "set_partial_values" })
    }

    fn erase(&self, _key: &str) -> Result<(), StoreError> {
        Err(StoreError::Unsupported { store: "zip", operation: "erase" })
    }

    fn erase_prefix(&self, _prefix: &str) -> Result<(), StoreError> {
        Err(StoreError::Unsupported { store: "zip", operation: "erase_prefix" })
    }
}

impl ListableStore for ZipStore {
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        Ok(keys_with_prefix(&self.keys, prefix).cloned().collect())
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing, StoreError> {
        list_dir_ordered(prefix, |from| {
            self.keys.range::<str, _>((Bound::Included(from), Bound::Unbounded)).map(|(k, _)| k.as_str())
        })
    }
}

impl Store for ZipStore {
    fn capabilities(&self) -> StoreCapabilities {
        StoreCapabilities {
            readable: true,
            writable: false,
            partial_writes: false,
            listable: true,
            atomic_multi_key: false,
            // The archive does not change while it is open (export writes a new file and renames).
            stable_snapshots: true,
        }
    }

    fn kind(&self) -> &'static str {
        "zip"
    }
}
