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
//! Requests that fail for a passing reason (a dropped connection, a server error, a throttle) are
//! retried with exponential backoff for up to 60 seconds (10 retries at most),
//! or as long as `ZARRDB_S3_RETRY_SECONDS` says; then the error is returned. Batches
//! ([`ReadableStore::get_many`], [`WritableStore::set_many`], the ranges of one
//! `get_partial_values`) keep up to 32 requests in flight.
//!
//! The store runs its requests on a runtime of its own and blocks the calling thread: it must
//! not be used, or dropped, from inside an asynchronous task of another tokio runtime (tokio
//! refuses to block there). Available with the `object-store` feature (the command line has it).

use std::future::Future;
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use object_store::list::{PaginatedListOptions, PaginatedListStore};
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore as Remote, ObjectStoreExt, PutMode, PutOptions, RetryConfig};

use crate::error::StoreError;
use crate::key::validate_key;
use crate::store::{ByteRange, DirListing, ListableStore, ReadableStore, Store, StoreCapabilities, WritableStore};

/// The locator schemes: S3 (and S3-compatible servers), Google Cloud Storage, Azure Blob Storage.
const SCHEMES: [&str; 3] = ["s3", "gs", "az"];

/// How long a request is retried by default, in seconds (object_store's own default is three
/// minutes, long for a command whose server is gone).
pub(crate) const RETRY_SECONDS: u64 = 60;

/// Requests in flight at once per batch.
pub(crate) const CONCURRENCY: usize = 32;

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
    /// The same client, for listings of one page.
    pages: Arc<dyn PaginatedListStore>,
    /// "s3", "gs" or "az": the scheme, and the backend's name in errors.
    name: &'static str,
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
    /// The store at `s3://bucket[/prefix]` (S3 and S3-compatible servers, configured by the
    /// `AWS_*` variables), `gs://bucket[/prefix]` (Google Cloud Storage, `GOOGLE_*`) or
    /// `az://container[/prefix]` (Azure Blob Storage, `AZURE_*`), with credentials and endpoint
    /// from the environment. Only `s3://` is tested here (against SeaweedFS); the other two go
    /// through the same crate and code. Nothing is requested yet: a missing bucket or a server
    /// that does not answer shows at the first read or write.
    pub fn open(locator: &str) -> Result<ObjectStore, StoreError> {
        let Client { remote, pages, name, prefix, runtime } = Client::connect(locator)?;
        let prefix = if prefix.is_empty() { String::new() } else { format!("{prefix}/") };
        Ok(ObjectStore { remote, pages, name, prefix, locator: locator.to_owned(), runtime })
    }

    /// An error of `operation` on `key`, naming this store's backend; an operation on the whole
    /// store (a listing of its root: the empty key) names the locator instead.
    fn failed(
        &self,
        operation: &'static str,
        key: &str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> StoreError {
        let key = if key.is_empty() { self.locator.clone() } else { key.to_owned() };
        StoreError::Engine { backend: self.name, operation, key, source: Box::new(source) }
    }

    fn block<T>(&self, f: impl Future<Output = T>) -> T {
        self.runtime.block_on(f)
    }

    /// The object path of a store key (validated).
    fn path(&self, key: &str) -> Result<Path, StoreError> {
        validate_key(key)?;
        Path::parse(format!("{}{key}", self.prefix)).map_err(|e| self.failed("key", key, e))
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
        Path::parse(full).map(Some).map_err(|e| self.failed("list", prefix, e))
    }

    /// The store key of an object path under the prefix, if it is one.
    fn key_of(&self, path: &Path) -> Option<String> {
        path.as_ref().strip_prefix(self.prefix.as_str()).map(str::to_owned)
    }

    fn bytes(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.block(self.fetch(key))
    }

    async fn fetch(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.path(key)?;
        match self.remote.get(&path).await {
            Ok(found) => found.bytes().await.map(|b| Some(b.to_vec())).map_err(|e| self.failed("get", key, e)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.failed("get", key, e)),
        }
    }

    /// One range of one object, without asking for its size first: S3 returns the object's size
    /// with the bytes. A request the server refuses (a range past the end) is told apart from
    /// other failures by the object's size.
    async fn ranged(&self, key: &str, range: ByteRange) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.path(key)?;
        let out_of_bounds =
            |len: u64| StoreError::RangeOutOfBounds { key: key.to_owned(), range: range.describe(), len };
        let asked = match range {
            // An empty range is no request S3 can answer.
            ByteRange::FromStart { length: Some(0), .. } | ByteRange::Suffix(0) => None,
            ByteRange::FromStart { offset, length: None } => Some(GetRange::Offset(offset)),
            ByteRange::FromStart { offset, length: Some(n) } => {
                Some(GetRange::Bounded(offset..offset.checked_add(n).ok_or_else(|| out_of_bounds(u64::MAX))?))
            }
            ByteRange::Suffix(n) => Some(GetRange::Suffix(n)),
        };
        let Some(asked) = asked else {
            let Some(len) = self.remote_size(key, &path).await? else { return Ok(None) };
            return range.resolve(len).map(|_| Some(Vec::new())).ok_or_else(|| out_of_bounds(len));
        };
        let options = GetOptions { range: Some(asked), ..GetOptions::default() };
        match self.remote.get_opts(&path, options).await {
            Ok(found) => {
                let len = found.meta.size;
                let returned = found.range.clone();
                // S3 shortens a range that runs past the end (and answers a suffix longer than
                // the object with all of it); a store refuses such a range.
                let wanted = range.resolve(len).ok_or_else(|| out_of_bounds(len))?;
                if returned.start != wanted.start as u64 || returned.end != wanted.end as u64 {
                    return Err(out_of_bounds(len));
                }
                found.bytes().await.map(|b| Some(b.to_vec())).map_err(|e| self.failed("get", key, e))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            // A failure that is no refusal of the range (the server gone after the retries) is
            // returned as it is, without another round of retries for the size.
            Err(e) if !refused_range(&e) => Err(self.failed("get", key, e)),
            Err(e) => match self.remote_size(key, &path).await? {
                None => Ok(None),
                Some(len) => match range.resolve(len) {
                    None => Err(out_of_bounds(len)),
                    // S3 refuses a range that starts at the end (`bytes=LEN-`); it is empty.
                    Some(r) if r.is_empty() => Ok(Some(Vec::new())),
                    Some(_) => Err(self.failed("get", key, e)),
                },
            },
        }
    }

    async fn remote_size(&self, key: &str, path: &Path) -> Result<Option<u64>, StoreError> {
        match self.remote.head(path).await {
            Ok(meta) => Ok(Some(meta.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.failed("size", key, e)),
        }
    }

    async fn put(&self, key: &str, value: Vec<u8>) -> Result<(), StoreError> {
        let path = self.path(key)?;
        self.remote.put(&path, value.into()).await.map(drop).map_err(|e| self.failed("set", key, e))
    }

    /// Write `value` under `key` only if no object is there (`If-None-Match: *`, decided by the
    /// server, so of two writers racing for a key exactly one succeeds); false if one was. A
    /// refusal is checked against what is there: a request that succeeded but whose answer was
    /// lost is retried (object_store retries server errors) and refused by its own write, so
    /// an object holding exactly `value` counts as created. Callers make their values unique.
    pub(crate) fn create(&self, key: &str, value: &[u8]) -> Result<bool, StoreError> {
        let path = self.path(key)?;
        let options = PutOptions { mode: PutMode::Create, ..PutOptions::default() };
        match self.block(self.remote.put_opts(&path, value.to_vec().into(), options)) {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. }) => {
                let Some(len) = self.size(key)? else { return Ok(false) };
                Ok(len == value.len() as u64 && self.bytes(key)?.as_deref() == Some(value))
            }
            Err(e) => Err(self.failed("create", key, e)),
        }
    }

    /// The locator the store was opened with.
    pub fn locator(&self) -> &str {
        &self.locator
    }
}

/// A client for the bucket a locator names, with the runtime its requests run on: what
/// [`ObjectStore`] and the bucket database engine (`store/bucket/`) are built on.
pub(crate) struct Client {
    pub remote: Arc<dyn Remote>,
    /// The same client, for listings of one page.
    pub pages: Arc<dyn PaginatedListStore>,
    /// "s3", "gs" or "az".
    pub name: &'static str,
    /// The prefix under the bucket, without slashes at either end (empty for none).
    pub prefix: String,
    pub runtime: tokio::runtime::Runtime,
}

impl Client {
    /// Configure the client for `locator` (see [`ObjectStore::open`]); nothing is requested yet.
    pub fn connect(locator: &str) -> Result<Client, StoreError> {
        let refuse = |reason: String| StoreError::Open { location: locator.to_owned(), reason, source: None };
        let (name, rest) = SCHEMES
            .iter()
            .find_map(|&name| locator.strip_prefix(name).and_then(|r| r.strip_prefix("://")).map(|r| (name, r)))
            .ok_or_else(|| refuse("not an s3://, gs:// or az:// locator".into()))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(refuse("no bucket named".into()));
        }
        let prefix = prefix.trim_matches('/');
        if !prefix.is_empty() {
            validate_key(prefix).map_err(|e| refuse(format!("the prefix: {e}")))?;
        }
        let retry_seconds = match std::env::var("ZARRDB_S3_RETRY_SECONDS") {
            Ok(text) => text
                .parse::<u64>()
                .map_err(|_| refuse(format!("ZARRDB_S3_RETRY_SECONDS={text:?} is not a number of seconds")))?,
            Err(_) => RETRY_SECONDS,
        };
        let retry = RetryConfig { retry_timeout: std::time::Duration::from_secs(retry_seconds), ..Default::default() };
        let configuring = |e: object_store::Error| refuse(format!("configuring {name}: {e}"));
        // The three builders share their methods but no trait: one expansion each.
        macro_rules! client {
            ($builder:expr) => {{
                let client = Arc::new($builder.with_retry(retry).build().map_err(configuring)?);
                (client.clone() as Arc<dyn Remote>, client as Arc<dyn PaginatedListStore>)
            }};
        }
        let (remote, pages) = match name {
            "s3" => client!(object_store::aws::AmazonS3Builder::from_env().with_bucket_name(bucket)),
            "gs" => client!(object_store::gcp::GoogleCloudStorageBuilder::from_env().with_bucket_name(bucket)),
            _ => client!(object_store::azure::MicrosoftAzureBuilder::from_env().with_container_name(bucket)),
        };
        let runtime = Client::runtime(locator)?;
        Ok(Client { remote, pages, name, prefix: prefix.to_owned(), runtime })
    }

    /// A runtime for a client's requests.
    pub fn runtime(locator: &str) -> Result<tokio::runtime::Runtime, StoreError> {
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().map_err(|e| {
            StoreError::Open { location: locator.to_owned(), reason: "starting I/O".into(), source: Some(e) }
        })
    }
}

/// Whether a failed ranged `GET` is the server refusing the range (416, or an answer that is
/// not the part asked for), as opposed to a failed request. object_store reports both as
/// generic errors; its messages name the status or the range.
fn refused_range(error: &object_store::Error) -> bool {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    ["416", "Range Not Satisfiable", "Content-Range", "partial", "range"].iter().any(|mark| text.contains(mark))
}

impl ReadableStore for ObjectStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.bytes(key)
    }

    /// One ranged request per range, up to 32 at once; a range the object's size
    /// (returned with the data) does not hold is an error, as in every store.
    fn get_partial_values(&self, requests: &[(&str, ByteRange)]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.block(
            futures::stream::iter(requests.iter().map(|&(key, range)| self.ranged(key, range)))
                .buffered(CONCURRENCY)
                .try_collect(),
        )
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        let path = self.path(key)?;
        self.block(self.remote_size(key, &path))
    }

    /// Up to 32 requests at once.
    fn get_many(&self, keys: &[&str]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        self.block(futures::stream::iter(keys.iter().map(|key| self.fetch(key))).buffered(CONCURRENCY).try_collect())
    }
}

impl WritableStore for ObjectStore {
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.block(self.put(key, value.to_vec()))
    }

    fn set_owned(&self, key: &str, value: Vec<u8>) -> Result<(), StoreError> {
        self.block(self.put(key, value))
    }

    /// Up to 32 requests at once; on an error the others already sent stay written.
    fn set_many(&self, values: Vec<(String, Vec<u8>)>) -> Result<(), StoreError> {
        self.block(
            futures::stream::iter(values.into_iter().map(|(key, value)| async move { self.put(&key, value).await }))
                .buffer_unordered(CONCURRENCY)
                .try_collect::<()>(),
        )
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
            Err(e) => Err(self.failed("erase", key, e)),
        }
    }

    /// In batches (S3's `DeleteObjects`, up to 1000 keys a request).
    fn erase_values(&self, keys: &[&str]) -> Result<(), StoreError> {
        let paths = keys.iter().map(|key| self.path(key)).collect::<Result<Vec<_>, _>>()?;
        let stream = futures::stream::iter(paths.into_iter().map(Ok)).boxed();
        // S3 counts a key that is not there as deleted.
        let erased = self.block(self.remote.delete_stream(stream).try_collect::<Vec<_>>());
        erased.map(drop).map_err(|e| self.failed("erase", keys.first().copied().unwrap_or_default(), e))
    }

    /// One listing, then [`WritableStore::erase_values`].
    fn erase_prefix(&self, prefix: &str) -> Result<(), StoreError> {
        let keys = self.list_prefix(prefix)?;
        self.erase_values(&keys.iter().map(String::as_str).collect::<Vec<_>>())
    }
}

impl ListableStore for ObjectStore {
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        Ok(self.list_prefix_sized(prefix)?.into_iter().map(|(key, _)| key).collect())
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing, StoreError> {
        if !prefix.is_empty() && !prefix.ends_with('/') {
            return Err(StoreError::InvalidKey { key: prefix.to_owned(), reason: "a list_dir prefix ends with '/'" });
        }
        let folder = self.folder(prefix)?;
        let listed =
            self.block(self.remote.list_with_delimiter(folder.as_ref())).map_err(|e| self.failed("list", prefix, e))?;
        let name = |path: &Path| {
            self.key_of(path).and_then(|k| k.strip_prefix(prefix).map(|n| n.trim_end_matches('/').to_owned()))
        };
        let mut keys: Vec<String> = listed.objects.iter().filter_map(|m| name(&m.location)).collect();
        // A server that keeps folders (SeaweedFS's filer) lists one whose last key was erased:
        // a prefix counts only while some object is under it (a listing of one key for each).
        let pages = &self.pages;
        let occupied = self.block(
            futures::stream::iter(listed.common_prefixes.iter())
                .map(|p| async move {
                    let options = PaginatedListOptions { max_keys: Some(1), ..PaginatedListOptions::default() };
                    let page = pages.list_paginated(Some(&format!("{p}/")), options).await?;
                    Ok::<_, object_store::Error>((!page.result.objects.is_empty()).then(|| p.clone()))
                })
                .buffer_unordered(CONCURRENCY)
                .try_collect::<Vec<_>>(),
        );
        let occupied = occupied.map_err(|e| self.failed("list", prefix, e))?;
        let mut prefixes: Vec<String> = occupied.iter().flatten().filter_map(name).collect();
        keys.sort();
        prefixes.sort();
        Ok(DirListing { keys, prefixes })
    }
}

impl Store for ObjectStore {
    /// Sizes come with the listing: no request per key.
    fn list_prefix_sized(&self, prefix: &str) -> Result<Vec<(String, u64)>, StoreError> {
        let folder = self.folder(prefix)?;
        let listed: Vec<_> = self
            .block(self.remote.list(folder.as_ref()).try_collect::<Vec<_>>())
            .map_err(|e| self.failed("list", prefix, e))?;
        let mut sized: Vec<(String, u64)> = listed
            .iter()
            .filter_map(|meta| self.key_of(&meta.location).map(|key| (key, meta.size)))
            .filter(|(key, _)| key.starts_with(prefix))
            .collect();
        sized.sort();
        Ok(sized)
    }

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
        self.name
    }
}
