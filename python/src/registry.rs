//! One `Database` per path and process.
//!
//! redb and sled lock their files for the whole process, so a second `Database::open` of a path
//! that a live handle holds fails with "locked". zarr-python opens the same path several times
//! (`with_read_only`, unpickling, `zarr.open` after `to_zarr`), so every Python store on one path
//! shares one handle, kept alive by the stores (and transactions, snapshots) that use it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use zarrdb::{Backend, Database, Durability};

use crate::submit::Submitter;

/// redb's page cache for databases opened from Python, unless the opener asks for another size.
///
/// redb's own default (1 GiB) keeps every page it reads, so a process reading a large array
/// touches as much fresh memory as it reads, and on these machines the first touch of fresh
/// memory costs more than the read: the engine's first read of big_zstd's 244 MB of chunk values
/// in a fresh process took 216 ms with redb's default and 102 ms with 64 MiB (plain files: 25 ms),
/// and zarr-python read the array at 626 against 661 MB/s (LocalStore 699) and wrote it at 267
/// against 287 MB/s (docs/benchmarks.md, "Python: redb's cache and where reads run"). A smaller
/// cache recycles its buffers; the kernel's page cache still keeps the file.
pub(crate) const DEFAULT_REDB_CACHE: usize = 64 << 20;

/// A shared open database.
pub(crate) struct Entry {
    pub(crate) db: Database,
    /// Opened read-only (`DatabaseBuilder::read_only`): the files are never written.
    read_only: bool,
    /// The sets submitted without waiting (`submit.rs`).
    pub(crate) submitter: Submitter,
}

fn handles() -> &'static Mutex<HashMap<PathBuf, Weak<Entry>>> {
    static HANDLES: OnceLock<Mutex<HashMap<PathBuf, Weak<Entry>>>> = OnceLock::new();
    HANDLES.get_or_init(Default::default)
}

/// The path as the registry knows it: the same file reached through different spellings
/// (relative, `..`, a symlinked folder) must map to one handle.
fn identity(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    match (absolute.parent().and_then(|p| p.canonicalize().ok()), absolute.file_name()) {
        (Some(parent), Some(name)) => parent.join(name),
        _ => absolute,
    }
}

/// How a new handle opens the database; an open handle keeps its first opener's.
pub(crate) struct Settings {
    pub(crate) durability: Durability,
    /// redb's multi-writer mode.
    pub(crate) multi_process: bool,
    /// redb's page cache in bytes (`DEFAULT_REDB_CACHE` when None).
    pub(crate) cache_size: Option<usize>,
    /// LMDB behind zarrdb's commit log.
    pub(crate) commit_log: bool,
}

/// The live handle on `path`, or a new one. The first opener's durability, multi-process mode,
/// cache size and commit log apply to every store sharing the handle; asking for another backend
/// than the open one is an error.
///
/// A `read_only` opener shares any live handle; without one it opens the database read-only, as
/// the CLI's read-only commands do (its files are never written, so read-only media and a full
/// disk work). A writer opener shares only a handle open for writing: beside a read-only one it
/// opens another, which later openers then share.
pub(crate) fn open(
    path: &Path,
    create: bool,
    read_only: bool,
    backend: Backend,
    settings: Settings,
) -> Result<Arc<Entry>, zarrdb::Error> {
    let Settings { durability, multi_process, cache_size, commit_log } = settings;
    let id = identity(path);
    // Held while opening, so two threads opening one path do not both reach the engine's lock.
    let mut handles = handles().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    handles.retain(|_, entry| entry.strong_count() > 0);
    if let Some(entry) = handles.get(&id).and_then(Weak::upgrade) {
        if entry.db.backend() != backend {
            return Err(zarrdb::error::OpenError::WrongBackend {
                path: path.display().to_string(),
                requested: backend.name(),
                found: match entry.db.backend() {
                    Backend::Lmdb => "an LMDB database",
                    Backend::Sled => "a sled database",
                    _ => "a redb database",
                },
            }
            .into());
        }
        if read_only || !entry.read_only {
            return Ok(entry);
        }
    }
    let mut builder = Database::builder();
    builder
        .backend(backend)
        .durability(durability)
        .redb_multi_writer(multi_process)
        .redb_cache_size(cache_size.unwrap_or(DEFAULT_REDB_CACHE))
        .lmdb_commit_log(commit_log)
        .read_only(read_only);
    let db = if create && !read_only { builder.create(path)? } else { builder.open(path)? };
    let entry = Arc::new(Entry { db, read_only, submitter: Submitter::default() });
    handles.insert(id, Arc::downgrade(&entry));
    Ok(entry)
}
