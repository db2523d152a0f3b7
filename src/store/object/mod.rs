//! Zarr on object storage (`s3://bucket/prefix`, S3 and S3-compatible servers such as SeaweedFS,
//! MinIO or Ceph) through the `object_store` crate, configured the standard way: the `AWS_*`
//! environment variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`,
//! `AWS_ENDPOINT` for a server of one's own, `AWS_ALLOW_HTTP=true` for one without TLS).
//!
//! Object storage has no multi-key atomicity and no transactions: each key is written whole and
//! a reader sees each key's old or new value, never a torn one, but a reader listing while a
//! writer works sees some keys new and others not yet (docs/format.md, "Object storage").
//! Partial writes are a read of the whole object and a write of it back.
//!
//! The store runs its requests on a runtime of its own and blocks the calling thread: it must
//! not be used, or dropped, from inside an asynchronous task of another tokio runtime (tokio
//! refuses to block there). Available with the `object-store` feature (the command line has it).

use std::future::Future;
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectStore as Remote, ObjectStoreExt};

use crate::error::StoreError;
use crate::key::validate_key;
use crate::store::{ByteRange, DirListing, ListableStore, ReadableStore, Store, StoreCapabilities, WritableStore};

/// The backend name in errors.
const NAME: &str = "s3";

/// A Zarr store in a bucket, under a prefix.
///
/// ```no_run
/// // AWS_ENDPOINT=http://127.0.0.1:8333 AWS_ALLOW_HTTP=true AWS_ACCESS_KEY_ID=... in the environment
/// use zarrdb::store::ObjectStore;
/// use zarrdb::{Group, Store};
/// let store = std::sync::Arc::new(ObjectStore::open("s3://bucket/datasets/run1")?);
/// let root = Group::open(store, "/")?;
/// println!("{:?}", root.child_names()?);
/// # Ok::<(), zarrdb::Error>(())
/// ```
pub struct ObjectStore {
    remote: Arc<dyn Remote>,
    /// `prefix/` under the bucket, or empty.
    prefix: String,
    /// The locator given, for messages.
    locator: String,
    /// Runs the crate's asynchronous requests for the store's blocking interface.
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for ObjectStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectStore").field("locator", &self.locator).finish()
    }
}

impl ObjectStore {
    /// The store at `s3://bucket[/prefix]`, with credentials and endpoint from the environment.
    /// Nothing is requested yet: a missing bucket or a server that does not answer shows at the
    /// first read or write.
    pub fn open(locator: &str) -> Result<ObjectStore, StoreError> {
        let refuse = |reason: String| StoreError::Open { location: locator.to_owned(), reason, source: None };
        let rest = locator.strip_prefix("s3://").ok_or_else(|| refuse("not an s3:// locator".into()))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(refuse("no bucket named".into()));
        }
        let prefix = prefix.trim_matches('/');
        if !prefix.is_empty() {
            validate_key(prefix).map_err(|e| refuse(format!("the prefix: {e}")))?;
        }
        let remote = object_store::aws::AmazonS3Builder::from_env()
            .with_bucket_name(bucket)
            .build()
            .map_err(|e| refuse(format!("configuring S3: {e}")))?;
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().map_err(|e| {
                StoreError::Open { location: locator.to_owned(), reason: "starting I/O".into(), source: Some(e) }
            })?;
        let prefix = if prefix.is_empty() { String::new() } else { format!("{prefix}/") };
        Ok(ObjectStore { remote: Arc::new(remote), prefix, locator: locator.to_owned(), runtime })
    }

    fn block<T>(&self, f: impl Future<Output = T>) -> T {
        self.runtime.block_on(f)
    }

    /// The object path of a store key (validated).
    fn path(&self, key: &str) -> Result<Path, StoreError> {
        validate_key(key)?;
        Path::parse(format!("{}{key}", self.prefix)).map_err(|e| failed("key", key, e))
    }

    /// The object path of a listing prefix: everything up to its last `/` (object storage lists
    /// by whole segments), or the store's root.
    fn folder(&self, prefix: &str) -> Result<Option<Path>, StoreError> {
        let folder = match prefix.rfind('/') {
            Some(at) => &prefix[..at],
            None => "",
        };
        let full = format!("{}{folder}", self.prefix);
        let full = full.trim_end_matches('/');
        if full.is_empty() {
            return Ok(None);
        }
        Path::parse(full).map(Some).map_err(|e| failed("list", prefix, e))
    }

    /// The store key of an object path under the prefix, if it is one.
    fn key_of(&self, path: &Path) -> Option<String> {
        path.as_ref().strip_prefix(self.prefix.as_str()).map(str::to_owned)
    }

    fn bytes(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.path(key)?;
        self.block(async {
            match self.remote.get(&path).await {
                Ok(found) => found.bytes().await.map(|b| Some(b.to_vec())).map_err(|e| failed("get", key, e)),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(failed("get", key, e)),
            }
        })
    }
}

fn failed(operation: &'static str, key: &str, source: impl std::error::Error + Send + Sync + 'static) -> StoreError {
    StoreError::Engine { backend: NAME, operation, key: key.to_owned(), source: Box::new(source) }
}

impl ReadableStore for ObjectStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.bytes(key)
    }

    /// Each range is one ranged request, after the object's size (one `HEAD`).
    fn get_partial_values(&self, requests: &[(&str, ByteRange)]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        requests
            .iter()
            .map(|(key, range)| {
                let Some(len) = self.size(key)? else { return Ok(None) };
                let r = range.resolve(len).ok_or_else(|| StoreError::RangeOutOfBounds {
                    key: (*key).to_owned(),
                    range: range.describe(),
                    len,
                })?;
                if r.is_empty() {
                    return Ok(Some(Vec::new()));
                }
                let path = self.path(key)?;
                let bytes = self.block(self.remote.get_range(&path, r.start as u64..r.end as u64));
                bytes.map(|b| Some(b.to_vec())).map_err(|e| failed("get", key, e))
            })
            .collect()
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        let path = self.path(key)?;
        match self.block(self.remote.head(&path)) {
            Ok(meta) => Ok(Some(meta.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(failed("size", key, e)),
        }
    }
}

impl WritableStore for ObjectStore {
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        let path = self.path(key)?;
        self.block(self.remote.put(&path, value.to_vec().into())).map(drop).map_err(|e| failed("set", key, e))
    }

    /// Read, patch and write back each object whole; every write is checked first, so a batch
    /// that would leave a hole writes nothing.
    fn set_partial_values(&self, writes: &[(&str, u64, &[u8])]) -> Result<(), StoreError> {
        let mut patched: Vec<(&str, Vec<u8>)> = Vec::new();
        for &(key, offset, data) in writes {
            let at = match patched.iter().position(|(k, _)| *k == key) {
                Some(at) => at,
                None => {
                    patched.push((key, self.bytes(key)?.unwrap_or_default()));
                    patched.len() - 1
                }
            };
            let value = &mut patched[at].1;
            let start = usize::try_from(offset).ok().filter(|s| *s <= value.len()).ok_or_else(|| {
                StoreError::RangeOutOfBounds {
                    key: key.to_owned(),
                    range: format!("{offset}.."),
                    len: value.len() as u64,
                }
            })?;
            let end = start + data.len();
            if end > value.len() {
                value.resize(end, 0);
            }
            value[start..end].copy_from_slice(data);
        }
        patched.into_iter().try_for_each(|(key, value)| self.set(key, &value))
    }

    fn erase(&self, key: &str) -> Result<(), StoreError> {
        let path = self.path(key)?;
        match self.block(self.remote.delete(&path)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(failed("erase", key, e)),
        }
    }

    fn erase_prefix(&self, prefix: &str) -> Result<(), StoreError> {
        for key in self.list_prefix(prefix)? {
            self.erase(&key)?;
        }
        Ok(())
    }
}

impl ListableStore for ObjectStore {
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let folder = self.folder(prefix)?;
        let listed: Vec<_> = self
            .block(self.remote.list(folder.as_ref()).try_collect::<Vec<_>>())
            .map_err(|e| failed("list", prefix, e))?;
        let mut keys: Vec<String> =
            listed.iter().filter_map(|meta| self.key_of(&meta.location)).filter(|k| k.starts_with(prefix)).collect();
        keys.sort();
        Ok(keys)
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing, StoreError> {
        if !prefix.is_empty() && !prefix.ends_with('/') {
            return Err(StoreError::InvalidKey { key: prefix.to_owned(), reason: "a list_dir prefix ends with '/'" });
        }
        let folder = self.folder(prefix)?;
        let listed =
            self.block(self.remote.list_with_delimiter(folder.as_ref())).map_err(|e| failed("list", prefix, e))?;
        let name = |path: &Path| {
            self.key_of(path).and_then(|k| k.strip_prefix(prefix).map(|n| n.trim_end_matches('/').to_owned()))
        };
        let mut keys: Vec<String> = listed.objects.iter().filter_map(|m| name(&m.location)).collect();
        // A server that keeps folders (SeaweedFS's filer) lists one whose last key was erased:
        // a prefix counts only while some object is under it (one short listing each, 16 at once).
        let remote = &self.remote;
        let occupied = self.block(
            futures::stream::iter(listed.common_prefixes.iter())
                .map(|p| async move { remote.list(Some(p)).try_next().await.map(|first| first.map(|_| p.clone())) })
                .buffer_unordered(16)
                .try_collect::<Vec<_>>(),
        );
        let occupied = occupied.map_err(|e| failed("list", prefix, e))?;
        let mut prefixes: Vec<String> = occupied.iter().flatten().filter_map(name).collect();
        keys.sort();
        prefixes.sort();
        Ok(DirListing { keys, prefixes })
    }
}

impl Store for ObjectStore {
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

    fn kind(&self) -> &'static str {
        NAME
    }
}
