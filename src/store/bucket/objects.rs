//! The requests a bucket database makes: whole and ranged reads, plain and conditional writes,
//! listings and deletes of the objects under its prefix, run on a runtime of its own for the
//! engine's blocking interface.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, OnceLock};

use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore as Remote, ObjectStoreExt, PutMode, PutOptions, UpdateVersion};
use parking_lot::Mutex;

use crate::error::StoreError;
use crate::store::object::{Client, CONCURRENCY};

/// The scheme of a bucket database's locator on S3: `zarrdb+s3://bucket/prefix`.
pub(crate) const S3_SCHEME: &str = "zarrdb+s3://";
/// A bucket database in this process's memory (object_store's `InMemory`), for tests and scratch
/// work: `zarrdb+memory://name`; every open of one name in one process sees the same objects.
pub(crate) const MEMORY_SCHEME: &str = "zarrdb+memory://";

/// The folder under the locator's prefix that holds the database's objects.
const FOLDER: &str = "__zarrdb";

/// An upload running on the runtime.
pub(crate) type Upload = tokio::task::JoinHandle<Result<(), StoreError>>;

/// The version of an object as the server reported it, for a conditional write over it.
pub(crate) type Version = UpdateVersion;

/// The objects under one database's prefix.
pub(crate) struct Objects {
    remote: Arc<dyn Remote>,
    /// `prefix/__zarrdb/`.
    root: String,
    /// "s3" or "memory", the backend in errors.
    name: &'static str,
    locator: String,
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for Objects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Objects").field("locator", &self.locator).finish()
    }
}

/// The in-memory buckets of this process, by name.
fn memory(name: &str) -> Arc<dyn Remote> {
    static BUCKETS: OnceLock<Mutex<HashMap<String, Arc<object_store::memory::InMemory>>>> = OnceLock::new();
    let mut buckets = BUCKETS.get_or_init(Default::default).lock();
    buckets.entry(name.to_owned()).or_insert_with(|| Arc::new(object_store::memory::InMemory::new())).clone()
}

/// Whether `locator` names a bucket database.
pub(crate) fn is_bucket_locator(locator: &str) -> bool {
    locator.starts_with(S3_SCHEME) || locator.starts_with(MEMORY_SCHEME)
}

impl Objects {
    pub fn connect(locator: &str) -> Result<Objects, StoreError> {
        let refuse =
            |reason: &str| StoreError::Open { location: locator.to_owned(), reason: reason.into(), source: None };
        if let Some(name) = locator.strip_prefix(MEMORY_SCHEME) {
            if name.is_empty() {
                return Err(refuse("no name after zarrdb+memory://"));
            }
            let runtime = Client::runtime(locator)?;
            let root = format!("{}/{FOLDER}/", name.trim_matches('/'));
            return Ok(Objects { remote: memory(name), root, name: "memory", locator: locator.to_owned(), runtime });
        }
        let plain = locator.strip_prefix("zarrdb+").filter(|rest| rest.starts_with("s3://"));
        let plain = plain.ok_or_else(|| refuse("not a zarrdb+s3:// or zarrdb+memory:// locator"))?;
        let client = Client::connect(plain)?;
        let root = match client.prefix.is_empty() {
            true => format!("{FOLDER}/"),
            false => format!("{}/{FOLDER}/", client.prefix),
        };
        Ok(Objects { remote: client.remote, root, name: "s3", locator: locator.to_owned(), runtime: client.runtime })
    }

    pub fn locator(&self) -> &str {
        &self.locator
    }

    pub fn backend(&self) -> &'static str {
        self.name
    }

    pub fn block<T>(&self, f: impl Future<Output = T>) -> T {
        self.runtime.block_on(f)
    }

    /// Write the object `name` on the runtime while the caller goes on. The task holds the
    /// client, not these `Objects`, so the runtime is never dropped by one of its own tasks.
    pub fn upload(&self, name: String, bytes: bytes::Bytes) -> Upload {
        let (remote, path, backend) = (self.remote.clone(), self.path(&name), self.name);
        let key = format!("{}/{name}", self.locator);
        self.runtime.spawn(async move {
            remote.put(&path, bytes.into()).await.map(drop).map_err(|source| StoreError::Engine {
                backend,
                operation: "put",
                key,
                source: Box::new(source),
            })
        })
    }

    /// Wait for `upload` to end.
    pub fn join(&self, upload: Upload) -> Result<(), StoreError> {
        match self.block(upload) {
            Ok(done) => done,
            Err(failed) => Err(StoreError::Engine {
                backend: self.name,
                operation: "upload",
                key: self.locator.clone(),
                source: Box::new(failed),
            }),
        }
    }

    fn path(&self, name: &str) -> Path {
        Path::from(format!("{}{name}", self.root))
    }

    pub fn failed(&self, operation: &'static str, name: &str, source: object_store::Error) -> StoreError {
        StoreError::Engine {
            backend: self.name,
            operation,
            key: format!("{}/{name}", self.locator),
            source: Box::new(source),
        }
    }

    /// The object `name`, whole, with its version.
    pub async fn get_versioned(&self, name: &str) -> Result<Option<(Vec<u8>, Version)>, StoreError> {
        match self.remote.get_opts(&self.path(name), GetOptions::default()).await {
            Ok(found) => {
                let version = Version { e_tag: found.meta.e_tag.clone(), version: found.meta.version.clone() };
                let bytes = found.bytes().await.map_err(|e| self.failed("get", name, e))?;
                Ok(Some((bytes.to_vec(), version)))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.failed("get", name, e)),
        }
    }

    /// The object `name`, whole.
    pub async fn get(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.get_versioned(name).await?.map(|(bytes, _)| bytes))
    }

    /// The object `name`, whole (for futures that outlive a borrowed name).
    pub async fn get_named(&self, name: String) -> Result<Option<Vec<u8>>, StoreError> {
        self.get(&name).await
    }

    /// `len` bytes at `offset` of the object `name`; `None` when the object is missing, an error
    /// when it is shorter.
    pub async fn get_range(&self, name: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let damaged = |what| StoreError::Damaged { backend: self.name, operation: "get", key: name.to_owned(), what };
        if len == 0 {
            return Ok(Some(Vec::new()));
        }
        offset.checked_add(len).ok_or_else(|| damaged("a value past the largest offset"))?;
        let bytes = self.get_range_upto(name, offset, len).await?;
        match bytes {
            Some(bytes) if bytes.len() as u64 != len => Err(damaged("a pack shorter than its manifest says")),
            other => Ok(other),
        }
    }

    /// Up to `len` bytes at `offset` of the object `name` (fewer where it, or the largest offset,
    /// ends); `None` when the object is missing.
    pub async fn get_range_upto(&self, name: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let range = GetRange::Bounded(offset..offset.saturating_add(len));
        match self.remote.get_opts(&self.path(name), GetOptions { range: Some(range), ..GetOptions::default() }).await {
            Ok(found) => Ok(Some(found.bytes().await.map_err(|e| self.failed("get", name, e))?.to_vec())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.failed("get", name, e)),
        }
    }

    /// Write every object, up to 32 at once; all are written when this returns `Ok`.
    pub async fn put_all(&self, objects: Vec<(String, Vec<u8>)>) -> Result<(), StoreError> {
        futures::stream::iter(objects.into_iter().map(|(name, bytes)| async move {
            self.remote.put(&self.path(&name), bytes.into()).await.map(drop).map_err(|e| self.failed("put", &name, e))
        }))
        .buffer_unordered(CONCURRENCY)
        .try_collect::<()>()
        .await
    }

    /// Write `name` only if it is absent (`over` is `None`) or still at version `over`; `None`
    /// when the server refused because it was not: 412, 409 (S3's ConditionalRequestConflict),
    /// or 404 on a write conditioned on a version of an object that is gone (object_store's S3
    /// client reports it as a failed precondition).
    pub async fn put_if(
        &self,
        name: &str,
        bytes: Vec<u8>,
        over: Option<Version>,
    ) -> Result<Option<Version>, StoreError> {
        let mode = match over {
            None => PutMode::Create,
            Some(version) => PutMode::Update(version),
        };
        let options = PutOptions { mode, ..PutOptions::default() };
        match self.remote.put_opts(&self.path(name), bytes.into(), options).await {
            Ok(done) => Ok(Some(Version { e_tag: done.e_tag, version: done.version })),
            Err(object_store::Error::AlreadyExists { .. } | object_store::Error::Precondition { .. }) => Ok(None),
            Err(e) => Err(self.failed("put", name, e)),
        }
    }

    /// The objects under `folder` (a name prefix such as `packs/`): name, size, and the server's
    /// time of last modification in milliseconds since the Unix epoch.
    pub async fn list(&self, folder: &str) -> Result<Vec<(String, u64, i64)>, StoreError> {
        let path = self.path(folder.trim_end_matches('/'));
        let listed: Vec<_> =
            self.remote.list(Some(&path)).try_collect().await.map_err(|e| self.failed("list", folder, e))?;
        Ok(listed
            .into_iter()
            .filter_map(|meta| {
                let name = meta.location.as_ref().strip_prefix(self.root.as_str())?.to_owned();
                Some((name, meta.size, meta.last_modified.timestamp_millis()))
            })
            .collect())
    }

    /// The server's time now, in milliseconds since the Unix epoch: the modification time of
    /// an object written for the purpose (then deleted), so every age compared with it is by
    /// the server's one clock.
    pub async fn server_now(&self) -> Result<i64, StoreError> {
        let name = format!("probe/clock-{}", super::format::Id::fresh().hex());
        self.remote.put(&self.path(&name), b"".to_vec().into()).await.map_err(|e| self.failed("put", &name, e))?;
        let meta = self.remote.head(&self.path(&name)).await.map_err(|e| self.failed("head", &name, e))?;
        self.delete_all(std::slice::from_ref(&name)).await?;
        Ok(meta.last_modified.timestamp_millis())
    }

    /// Delete every object named (absent ones count as deleted).
    pub async fn delete_all(&self, names: &[String]) -> Result<(), StoreError> {
        let paths: Vec<Path> = names.iter().map(|name| self.path(name)).collect();
        let stream = futures::stream::iter(paths.into_iter().map(Ok)).boxed();
        let deleted = self.remote.delete_stream(stream).try_collect::<Vec<_>>().await;
        deleted.map(drop).map_err(|e| self.failed("delete", names.first().map_or("", String::as_str), e))
    }
}
