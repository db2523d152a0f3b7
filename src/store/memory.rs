//! An in-memory store: a sorted map behind a lock. For tests and scratch work.

use crate::store::Sealed;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Arc, RwLock};

use super::ChunkVersions;
use super::{
    keys_with_prefix, list_dir_ordered, validate_key, ByteRange, DirListing, ListableStore, ReadableStore, Store,
    StoreCapabilities, WritableStore,
};
use crate::error::StoreError;

/// A store held in memory; lost when dropped.
///
/// ```
/// use zarrdb::store::{ListableStore, WritableStore};
/// use zarrdb::MemoryStore;
/// let store = MemoryStore::new();
/// store.set("a/c/0", b"chunk")?;
/// assert_eq!(store.list_prefix("a/")?, ["a/c/0"]);
/// # Ok::<(), zarrdb::error::StoreError>(())
/// ```
#[derive(Debug, Default)]
pub struct MemoryStore {
    /// Values are shared, so a reader copies one out after releasing the lock, and writers never
    /// wait for a copy.
    map: RwLock<BTreeMap<String, Arc<Vec<u8>>>>,
    /// The store's own chunk versions: no other store holds its data.
    versions: ChunkVersions,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Arc<Vec<u8>>>> {
        // A panic while holding the lock cannot leave the map half-changed (every change is one
        // map operation), so a poisoned lock is safe to use.
        self.map.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Arc<Vec<u8>>>> {
        self.map.write().unwrap_or_else(|e| e.into_inner())
    }
}

impl ReadableStore for MemoryStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        validate_key(key)?;
        let shared = self.read().get(key).cloned();
        Ok(shared.map(|v| v.as_ref().clone()))
    }

    fn get_partial_values(&self, requests: &[(&str, ByteRange)]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        // Slice under the lock instead of cloning whole values.
        let map = self.read();
        requests
            .iter()
            .map(|(key, range)| {
                validate_key(key)?;
                let Some(value) = map.get(*key) else { return Ok(None) };
                let len = value.len() as u64;
                let r = range.resolve(len).ok_or_else(|| StoreError::RangeOutOfBounds {
                    key: (*key).to_owned(),
                    range: range.describe(),
                    len,
                })?;
                Ok(Some(value[r].to_vec()))
            })
            .collect()
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        validate_key(key)?;
        Ok(self.read().get(key).map(|v| v.len() as u64))
    }
}

impl WritableStore for MemoryStore {
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.set_owned(key, value.to_vec())
    }

    fn set_owned(&self, key: &str, value: Vec<u8>) -> Result<(), StoreError> {
        validate_key(key)?;
        let replaced = self.write().insert(key.to_owned(), Arc::new(value));
        // Freed after the lock is released.
        drop(replaced);
        Ok(())
    }

    fn set_partial_values(&self, writes: &[(&str, u64, &[u8])]) -> Result<(), StoreError> {
        let mut map = self.write();
        // Check every write before applying any, so a bad request changes nothing. A write may
        // extend a value but not leave a hole; earlier writes of the batch count.
        let mut lengths: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
        for (key, offset, bytes) in writes {
            validate_key(key)?;
            let len = *lengths.entry(key).or_insert_with(|| map.get(*key).map_or(0, |v| v.len() as u64));
            if *offset > len {
                return Err(StoreError::RangeOutOfBounds { key: (*key).to_owned(), range: format!("{offset}.."), len });
            }
            lengths.insert(key, len.max(offset + bytes.len() as u64));
        }
        for (key, offset, bytes) in writes {
            let value = Arc::make_mut(map.entry((*key).to_owned()).or_default());
            let start = *offset as usize;
            let end = start + bytes.len();
            if value.len() < end {
                value.resize(end, 0);
            }
            value[start..end].copy_from_slice(bytes);
        }
        Ok(())
    }

    fn erase(&self, key: &str) -> Result<(), StoreError> {
        validate_key(key)?;
        self.write().remove(key);
        Ok(())
    }

    fn erase_prefix(&self, prefix: &str) -> Result<(), StoreError> {
        let mut map = self.write();
        let doomed: Vec<String> = keys_with_prefix(&map, prefix).cloned().collect();
        for key in doomed {
            map.remove(&key);
        }
        Ok(())
    }
}

impl ListableStore for MemoryStore {
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        Ok(keys_with_prefix(&self.read(), prefix).cloned().collect())
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing, StoreError> {
        let map = self.read();
        list_dir_ordered(prefix, |from| {
            map.range::<str, _>((Bound::Included(from), Bound::Unbounded)).map(|(k, _)| k.as_str())
        })
    }
}

impl Store for MemoryStore {
    fn capabilities(&self) -> StoreCapabilities {
        StoreCapabilities {
            readable: true,
            writable: true,
            partial_writes: true,
            listable: true,
            atomic_multi_key: false,
            stable_snapshots: false,
        }
    }

    fn chunk_versions(&self, _sealed: Sealed) -> &ChunkVersions {
        &self.versions
    }

    fn kind(&self) -> &'static str {
        "memory"
    }
}
