//! One `Database` per path and process.
//!
//! redb and sled lock their files for the whole process, so a second `Database::open` of a path
//! that a live handle holds fails with "locked". zarr-python opens the same path several times
//! (`with_read_only`, unpickling, `zarr.open` after `to_zarr`), so every Python store on one path
//! shares one handle, kept alive by the stores (and transactions, snapshots) that use it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock, Weak};
use std::time::{Duration, Instant};

use zarrdb::error::OpenError;
use zarrdb::{Array, Backend, Database, DatabaseBuilder, Durability, Store};

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
///
/// Its handle can change once: a handle opened read-only (`read_only` stores, when no writable
/// handle of the process was open) is replaced by a writable one when a writable store of the
/// process opens the same database (`Entry::upgrade`). Two handles of one process on one file
/// cannot coexist: redb's single-process mode and LMDB (whose locks are per process) forbid it,
/// and a redb handle reading the file as it was would block the writer's commits. So the stores
/// of an entry ask it for the current handle on every call instead of keeping one.
pub(crate) struct Entry {
    slot: RwLock<Slot>,
    /// The path of the first open, for messages.
    path: PathBuf,
    /// The sets submitted without waiting (`submit.rs`).
    pub(crate) submitter: Submitter,
    /// Arrays opened on the auto-commit store (`array.rs`), let go by an upgrade so that they do
    /// not keep the read-only handle open; each opens itself again on its next use.
    followers: Mutex<Vec<Weak<Followed>>>,
    /// The handles on branches other than `main` (`Database::on_branch`) made from the current
    /// handle, one per branch so that each keeps the state of its branch it last read; let go
    /// by an upgrade with the handle they were made from.
    branches: Mutex<HashMap<Arc<str>, Database>>,
}

/// What a Python object of the native module works through: a shared database and the branch it
/// reads and commits to (`None`: `main`).
#[derive(Clone)]
pub(crate) struct Handle {
    pub(crate) entry: Arc<Entry>,
    pub(crate) branch: Option<Arc<str>>,
}

impl Handle {
    /// The database's current handle, on this handle's branch.
    pub(crate) fn db(&self) -> Result<Database, zarrdb::Error> {
        self.entry.db_on(self.branch.as_deref())
    }

    /// The auto-commit store of the current handle, on this handle's branch.
    pub(crate) fn store(&self) -> Result<Arc<dyn Store>, zarrdb::Error> {
        Ok(self.db()?.store())
    }

    /// The same database on branch `name` (`main` for `main`).
    pub(crate) fn on_branch(&self, name: &str) -> Result<Handle, zarrdb::Error> {
        let branch: Option<Arc<str>> = (name != "main").then(|| name.into());
        // Made now, so that a missing branch is refused here rather than at the first read.
        let handle = Handle { entry: self.entry.clone(), branch };
        handle.db()?;
        Ok(handle)
    }

    /// See `Entry::followed`, on this handle's branch.
    pub(crate) fn followed<E: From<zarrdb::Error>>(
        &self,
        followed: &Arc<Followed>,
        open: impl FnOnce(Arc<dyn Store>) -> Result<Array, E>,
    ) -> Result<Arc<Array>, E> {
        self.entry.followed(self.branch.as_deref(), followed, open)
    }

    /// Whether two handles write to the same branch of the same database.
    pub(crate) fn same_target(&self, other: &Handle) -> bool {
        Arc::ptr_eq(&self.entry, &other.entry) && self.branch == other.branch
    }
}

/// An array of the current handle, or `None` once an upgrade let it go. Reads take a clone of
/// the `Arc` and run without the lock, so that threads reading one array do not wait for
/// each other; a read in flight keeps its handle until it returns, which the upgrade waits for.
pub(crate) type Followed = RwLock<Option<Arc<Array>>>;

struct Slot {
    /// `None` only after an upgrade failed and the read-only handle could not be opened again.
    db: Option<Database>,
    /// Opened read-only (`DatabaseBuilder::read_only`): the files are never written.
    read_only: bool,
    /// How the read-only handle was opened, to open it again when an upgrade fails.
    builder: DatabaseBuilder,
    /// Why `db` is `None`.
    lost: Option<String>,
}

impl Slot {
    /// The handle, or why there is none (`path` names the database).
    fn handle(&self, path: &Path) -> Result<&Database, zarrdb::Error> {
        self.db.as_ref().ok_or_else(|| {
            OpenError::Engine {
                path: path.display().to_string(),
                backend: "zarrdb",
                source: self.lost.clone().unwrap_or_default().into(),
            }
            .into()
        })
    }
}

impl Entry {
    /// The current handle on `branch` (`None`: `main`).
    fn db_on(&self, branch: Option<&str>) -> Result<Database, zarrdb::Error> {
        let slot = self.slot.read().unwrap_or_else(PoisonError::into_inner);
        self.db_in(&slot, branch)
    }

    /// The handle of `slot` on `branch`. A branch's handle is made once per handle of the
    /// entry, with the slot held (by the caller), so that an upgrade cannot let the handles go
    /// between its making and its being kept here.
    fn db_in(&self, slot: &Slot, branch: Option<&str>) -> Result<Database, zarrdb::Error> {
        let db = slot.handle(&self.path)?;
        let Some(name) = branch else { return Ok(db.clone()) };
        let mut branches = self.branches.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(on) = branches.get(name) {
            return Ok(on.clone());
        }
        let on = db.on_branch(name)?;
        branches.insert(name.into(), on.clone());
        Ok(on)
    }

    fn read_only(&self) -> bool {
        self.slot.read().unwrap_or_else(PoisonError::into_inner).read_only
    }

    /// The array `followed` holds, opened by `open` on the auto-commit store of the current
    /// handle when an upgrade let it go (or it was never opened); it is let go again by the next
    /// upgrade. Opened with the slot held, so an upgrade cannot let the arrays go between the
    /// open and this array's being known to it.
    fn followed<E: From<zarrdb::Error>>(
        &self,
        branch: Option<&str>,
        followed: &Arc<Followed>,
        open: impl FnOnce(Arc<dyn Store>) -> Result<Array, E>,
    ) -> Result<Arc<Array>, E> {
        if let Some(array) = followed.read().unwrap_or_else(PoisonError::into_inner).as_ref() {
            return Ok(array.clone());
        }
        let slot = self.slot.read().unwrap_or_else(PoisonError::into_inner);
        let db = self.db_in(&slot, branch).map_err(E::from)?;
        let mut held = followed.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(array) = held.as_ref() {
            return Ok(array.clone());
        }
        let array = Arc::new(open(db.store())?);
        *held = Some(array.clone());
        let mut followers = self.followers.lock().unwrap_or_else(PoisonError::into_inner);
        // Pruned when full, so that opening many arrays stays linear.
        if followers.len() == followers.capacity() {
            followers.retain(|f| f.strong_count() > 0);
        }
        followers.push(Arc::downgrade(followed));
        Ok(array)
    }

    fn backend(&self) -> Option<Backend> {
        self.slot.read().unwrap_or_else(PoisonError::into_inner).db.as_ref().map(Database::backend)
    }

    /// Replace a read-only handle by one opened with `builder` for writing. The read-only handle
    /// must be closed first (its locks exclude the writer's), so this waits, for at most
    /// `UPGRADE_WAIT`, until nothing but the entry uses it: arrays opened on the auto-commit store
    /// let it go and reads in flight end, but a snapshot of a read-only store (or an array opened
    /// through one) keeps it, and then the writable open is refused. Stores and arrays of the
    /// entry wait meanwhile and then use the new handle.
    fn upgrade(&self, path: &Path, create: bool, builder: &DatabaseBuilder) -> Result<(), zarrdb::Error> {
        let mut slot = self.slot.write().unwrap_or_else(PoisonError::into_inner);
        if !slot.read_only {
            return Ok(());
        }
        let Some(old) = slot.db.take() else {
            // The read-only handle was lost in an earlier failed upgrade: open the writer anyway.
            let db = if create { builder.create(path)? } else { builder.open(path)? };
            slot.db = Some(db);
            slot.read_only = false;
            slot.lost = None;
            return Ok(());
        };
        // Taken while the slot is held for writing: an array opening itself again meanwhile
        // waits for the slot and gets the new handle.
        let followers = std::mem::take(&mut *self.followers.lock().unwrap_or_else(PoisonError::into_inner));
        for array in followers.iter().filter_map(Weak::upgrade) {
            *array.write().unwrap_or_else(PoisonError::into_inner) = None;
        }
        // The branches' handles share the read-only handle's engine.
        self.branches.lock().unwrap_or_else(PoisonError::into_inner).clear();
        let deadline = Instant::now() + UPGRADE_WAIT;
        while !old.is_sole_handle() {
            if Instant::now() >= deadline {
                let shown = path.display().to_string();
                let refused = OpenError::Engine {
                    path: shown.clone(),
                    backend: old.backend().name(),
                    source: format!(
                        "a read-only handle of this process on \"{shown}\" is still in use (a snapshot or array \
                         of a read_only store); close it before opening the database for writing"
                    )
                    .into(),
                };
                slot.db = Some(old);
                return Err(refused.into());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let reopen_read_only = old.path().to_path_buf();
        drop(old);
        let opened = if create { builder.create(path) } else { builder.open(path) };
        match opened {
            Ok(db) => {
                slot.db = Some(db);
                slot.read_only = false;
                Ok(())
            }
            Err(e) => {
                // The readers keep reading: the read-only handle comes back.
                let again = slot.builder.open(&reopen_read_only);
                match again {
                    Ok(db) => slot.db = Some(db),
                    Err(lost) => slot.lost = Some(format!("the database could not be opened again: {lost}")),
                }
                Err(e)
            }
        }
    }
}

/// How long a writable open waits for a read-only handle of the process to be free to close.
const UPGRADE_WAIT: Duration = Duration::from_secs(10);

/// A registry key for a database: the same file or folder reached through different names
/// (relative, `..`, a symlink, a hard link) must map to one handle. Each entry is known by both:
/// its device and inode find it through a hard link, its resolved path once a compaction has put
/// a new file (a new inode) in its place.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum Identity {
    /// Device and inode of what is there.
    File(u64, u64),
    /// The path made absolute, with symlinks resolved (in its folder, when nothing is there yet).
    Path(PathBuf),
    /// A bucket database's locator (`zarrdb+s3://bucket/prefix`), as given less a trailing `/`:
    /// no file names it, so it is known by its text alone.
    Locator(String),
}

/// Whether `path` is a bucket database's locator (`zarrdb+s3://...`, `zarrdb+memory://...`),
/// which names no file: it is never made absolute nor looked up on the file system.
pub(crate) fn is_locator(path: &Path) -> bool {
    path.to_str().and_then(zarrdb::Backend::named_by).is_some()
}

fn handles() -> &'static Mutex<HashMap<Identity, Weak<Entry>>> {
    static HANDLES: OnceLock<Mutex<HashMap<Identity, Weak<Entry>>>> = OnceLock::new();
    HANDLES.get_or_init(Default::default)
}

/// The keys `path` is known by now: its inode's when something is there, then its path's.
fn identities(path: &Path) -> Vec<Identity> {
    use std::os::unix::fs::MetadataExt;
    if is_locator(path) {
        let text = path.to_str().unwrap_or_default();
        return vec![Identity::Locator(text.trim_end_matches('/').to_owned())];
    }
    let mut keys = Vec::with_capacity(2);
    if let Ok(meta) = std::fs::metadata(path) {
        keys.push(Identity::File(meta.dev(), meta.ino()));
    }
    let resolved = path.canonicalize().unwrap_or_else(|_| {
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        match (absolute.parent().and_then(|p| p.canonicalize().ok()), absolute.file_name()) {
            (Some(parent), Some(name)) => parent.join(name),
            _ => absolute,
        }
    });
    keys.push(Identity::Path(resolved));
    keys
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
    /// Keep history (`DatabaseBuilder::history`): applies when the database is created.
    pub(crate) history: bool,
}

/// The live handle on `path`, or a new one. The first writable opener's durability,
/// multi-process mode, cache size and commit log apply to every store sharing the handle; asking
/// for another backend than the open one is an error.
///
/// A `read_only` opener shares any live handle; without one it opens the database read-only, as
/// the CLI's read-only commands do (its files are never written, so read-only media and a full
/// disk work). A writable opener shares a writable handle, and replaces a read-only one
/// (`Entry::upgrade`).
pub(crate) fn open(
    path: &Path,
    create: bool,
    read_only: bool,
    backend: Backend,
    settings: Settings,
) -> Result<Arc<Entry>, zarrdb::Error> {
    let Settings { durability, multi_process, cache_size, commit_log, history } = settings;
    let mut builder = Database::builder();
    builder
        .backend(backend)
        .durability(durability)
        .redb_multi_writer(multi_process)
        .redb_cache_size(cache_size.unwrap_or(DEFAULT_REDB_CACHE))
        // The log is a writer's way of committing; a read-only handle only reads what it holds.
        .lmdb_commit_log(commit_log && !read_only)
        .history(history)
        .read_only(read_only);
    // Held while opening, so two threads opening one path do not both reach the engine's lock.
    let mut handles = handles().lock().unwrap_or_else(PoisonError::into_inner);
    handles.retain(|_, entry| entry.strong_count() > 0);
    let live = identities(path).iter().find_map(|id| handles.get(id).and_then(Weak::upgrade));
    if let Some(entry) = live {
        if let Some(open) = entry.backend().filter(|&open| open != backend) {
            return Err(OpenError::WrongBackend {
                path: path.display().to_string(),
                requested: backend.name(),
                found: match open {
                    Backend::Lmdb => "an LMDB database",
                    Backend::Sled => "a sled database",
                    Backend::Bucket => "a bucket database",
                    _ => "a redb database",
                },
            }
            .into());
        }
        if !read_only && entry.read_only() {
            entry.upgrade(path, create, &builder)?;
        }
        // Known from now on by this name's keys too (the inode of a compacted file).
        for id in identities(path) {
            handles.insert(id, Arc::downgrade(&entry));
        }
        return Ok(entry);
    }
    let db = if create && !read_only { builder.create(path)? } else { builder.open(path)? };
    let entry = Arc::new(Entry {
        slot: RwLock::new(Slot { db: Some(db), read_only, builder, lost: None }),
        path: path.to_path_buf(),
        submitter: Submitter::default(),
        followers: Mutex::default(),
        branches: Mutex::default(),
    });
    // After the open: a database created just now has an inode from here on.
    for id in identities(path) {
        handles.insert(id, Arc::downgrade(&entry));
    }
    Ok(entry)
}
