//! Read-modify-writes of chunks shared by the threads of a process, without lost updates and
//! without holding a lock while encoding.
//!
//! A partial chunk write reads the chunk, patches it, encodes it and stores it. Two threads doing
//! that at once would each store their patch on top of the old chunk, and one update would be
//! lost. Locking the chunk for the whole read-modify-write would hold the lock across encoding,
//! which runs on rayon's pool: a worker waiting inside a join may pick up another write of the
//! same chunk and wait for the lock it holds itself (the deadlock that made zarrs remove its
//! chunk locks).
//!
//! So writes are optimistic. Each chunk key hashes to one of the version counters of
//! `store/chunk_versions.rs`. A writer notes the counter before reading the chunk, and stores only
//! if the counter is still the same, bumping it, under the stripe's mutex; otherwise it reads the
//! chunk again and retries.
//! The mutex is held only around the store call, which neither takes another stripe nor runs pool
//! work, so no cycle of waits can form. A retry means another write of the stripe succeeded, so
//! the writers as a whole always progress. Chunks that share a stripe (or the same key in two
//! stores) cause a needless retry now and then, never a lost update.

use std::path::{Path, PathBuf};

use crate::error::{Error, StoreError};
use crate::store::chunk_versions::STRIPES;
use crate::store::ChunkVersions;

/// How an array handle protects its read-modify-writes of chunks against other writers.
///
/// ```
/// use std::sync::Arc;
/// use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Store, Synchronizer};
/// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
/// let a = Array::create(store, "/a", ArrayMetadata::new(DataType::UInt8, vec![8], vec![4])).unwrap();
/// assert_eq!(a.synchronizer(), &Synchronizer::Threads);
/// let single_writer = a.with_synchronizer(Synchronizer::None);
/// single_writer.write_region::<u8>(&[1], &[2], &[7, 7]).unwrap();
/// ```
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Synchronizer {
    /// Threads of this process writing the same chunk through any handle keep every update: a
    /// partial chunk write stores its result only if no other thread stored the chunk since it
    /// was read, and reads it again otherwise. The default. Databases also check other
    /// processes' commits where the engine lets several processes write (LMDB).
    #[default]
    Threads,
    /// As `Threads`, and for stores that several processes write without transactions (a
    /// directory store): every chunk write takes a file lock in `folder` (one of 4,096 lock files,
    /// picked by the chunk key), and a read-modify-write stores its result only if the stored
    /// chunk is still what it read. Every writing process must name the same folder, beside the
    /// data, e.g. `data.zarr.locks`. Make one with [`Synchronizer::processes`].
    Processes {
        /// The folder of the lock files.
        folder: PathBuf,
    },
    /// No protection: concurrent partial writes of one chunk may lose updates, as in zarr-python
    /// and zarrs. Only for a single writer that wants to skip the bookkeeping.
    None,
}

impl Synchronizer {
    /// A [`Synchronizer::Processes`] with its lock files in `folder`, created if missing.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let sync = zarrdb::Synchronizer::processes(dir.path().join("data.zarr.locks")).unwrap();
    /// assert!(dir.path().join("data.zarr.locks").is_dir());
    /// # let _ = sync;
    /// ```
    pub fn processes(folder: impl Into<PathBuf>) -> Result<Synchronizer, Error> {
        let folder = folder.into();
        std::fs::create_dir_all(&folder).map_err(|source| StoreError::Io {
            operation: "create the lock folder",
            key: folder.display().to_string(),
            source,
        })?;
        Ok(Synchronizer::Processes { folder })
    }
}

/// The version in `versions` (the store's) a write must find unchanged to store, or `None` under
/// [`Synchronizer::None`].
pub(crate) fn seen(sync: &Synchronizer, versions: &ChunkVersions, key: &str) -> Option<u64> {
    match sync {
        Synchronizer::None => None,
        _ => Some(versions.current(key)),
    }
}

/// Run `store` (the write of chunk `key`) unless the chunk's stripe in `versions` changed since `seen`; `false`
/// when it did and nothing was stored. `seen == None` stores unconditionally; under
/// [`Synchronizer::Threads`] the version is still bumped, so read-modify-writes in flight retry.
/// Under [`Synchronizer::Processes`] the chunk's lock file is held around the store, and a
/// read-modify-write (`seen` given) stores only if `still_as_read` confirms the stored chunk is
/// the one it read.
pub(crate) fn store_if_unchanged(
    sync: &Synchronizer,
    versions: &ChunkVersions,
    key: &str,
    seen: Option<u64>,
    still_as_read: impl FnOnce() -> Result<bool, Error>,
    store: impl FnOnce() -> Result<(), Error>,
) -> Result<bool, Error> {
    if *sync == Synchronizer::None {
        store()?;
        return Ok(true);
    }
    let mut version = versions.lock(key);
    if seen.is_some_and(|v| v != *version) {
        return Ok(false);
    }
    // Taken after the stripe's mutex and released before it, by every writer in the same order,
    // and held only around this one store: no cycle of waits.
    let file_lock = match sync {
        Synchronizer::Processes { folder } => Some(lock_file(folder, key)?),
        _ => None,
    };
    if file_lock.is_some() && seen.is_some() && !still_as_read()? {
        return Ok(false);
    }
    store()?;
    *version = version.wrapping_add(1);
    drop(file_lock);
    Ok(true)
}

/// Lock the lock file of `key` in `folder`, exclusively; unlocked when the file is dropped.
/// The file is picked by CRC-32C of the key, which every program computes alike.
fn lock_file(folder: &Path, key: &str) -> Result<std::fs::File, Error> {
    let path = folder.join(format!("chunks-{:04}.lock", crc32c::crc32c(key.as_bytes()) as usize % STRIPES));
    let io = |source| StoreError::Io { operation: "lock", key: key.to_owned(), source };
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(io)?;
    fs2::FileExt::lock_exclusive(&file).map_err(io)?;
    Ok(file)
}
