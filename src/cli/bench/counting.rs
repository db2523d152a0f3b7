//! A store wrapper that counts the bytes read through it, for `bytes_fetched_per_region`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use zarrdb::store::Sealed;

use zarrdb::error::StoreError;
use zarrdb::store::{
    ByteRange, ChunkVersions, DirListing, ListableStore, ReadableStore, StoreCapabilities, WritableStore,
};
use zarrdb::Store;

pub(crate) struct Counting {
    inner: Arc<dyn Store>,
    pub fetched: AtomicU64,
}

impl Counting {
    pub fn new(inner: Arc<dyn Store>) -> Counting {
        Counting { inner, fetched: AtomicU64::new(0) }
    }

    fn count<T: AsRef<[u8]>>(&self, values: impl IntoIterator<Item = T>) {
        let n: usize = values.into_iter().map(|v| v.as_ref().len()).sum();
        self.fetched.fetch_add(n as u64, Ordering::Relaxed);
    }
}

impl ReadableStore for Counting {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let value = self.inner.get(key)?;
        self.count(value.iter());
        Ok(value)
    }

    fn get_partial_values(&self, requests: &[(&str, ByteRange)]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        let values = self.inner.get_partial_values(requests)?;
        self.count(values.iter().flatten());
        Ok(values)
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        self.inner.size(key)
    }
}

impl WritableStore for Counting {
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.inner.set(key, value)
    }

    fn set_partial_values(&self, writes: &[(&str, u64, &[u8])]) -> Result<(), StoreError> {
        self.inner.set_partial_values(writes)
    }

    fn erase(&self, key: &str) -> Result<(), StoreError> {
        self.inner.erase(key)
    }

    fn erase_prefix(&self, prefix: &str) -> Result<(), StoreError> {
        self.inner.erase_prefix(prefix)
    }
}

impl ListableStore for Counting {
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        self.inner.list_prefix(prefix)
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing, StoreError> {
        self.inner.list_dir(prefix)
    }
}

impl Store for Counting {
    fn capabilities(&self) -> StoreCapabilities {
        self.inner.capabilities()
    }

    fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    fn chunk_versions(&self, sealed: Sealed) -> &ChunkVersions {
        self.inner.chunk_versions(sealed)
    }
}
