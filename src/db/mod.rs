//! Databases: a whole Zarr hierarchy inside one embedded key/value database, with transactions.
//!
//! A [`Database`] wraps one engine (redb, LMDB or sled, see `crate::store::kv`) and hands out
//! three kinds of [`Store`]:
//! - [`Database::store`]: auto-commit. Each store call commits on its own, and each array or group
//!   operation (a region write, a node creation) runs in one implicit transaction.
//! - [`Transaction::store`]: the writes of one explicit transaction, committed together by
//!   [`Transaction::commit`] or discarded when the transaction is dropped.
//! - [`Snapshot::store`]: a read-only view of one commit.
//!
//! `docs/architecture.md` describes the commit protocol and `docs/format.md` what each backend
//! guarantees after a crash.

mod autocommit;
mod bulk;
#[cfg(test)]
mod bulk_tests;
mod compact;
mod create;
mod data_scope;
mod disk_full;
mod format;
mod group_commit;
mod history;
mod mirror;
mod open;
mod overlay;
mod race;
mod snapshot;
mod transaction;
#[cfg(test)]
mod versions_tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::ThreadId;

use parking_lot::Mutex;

pub(crate) use bulk::BulkWrite;
pub use compact::Compaction;
pub use history::{Collection, CommitId, CommitInfo, HistoryProblem, KeyChange, MergeOutcome, VersionRef};
pub use mirror::Mirrored;
pub use snapshot::Snapshot;
pub use transaction::Transaction;

use crate::error::{Error, TransactionError};
use crate::store::history::HistoryEngine;
use crate::store::kv::KvEngine;
use crate::store::{ChunkVersions, Store, StoreCapabilities};

/// The embedded engine that holds a database.
///
/// ```
/// use zarrdb::{Backend, Database};
/// let dir = tempfile::tempdir().unwrap();
/// let db = Database::builder().backend(Backend::Lmdb).create(dir.path().join("data.lmdb"))?;
/// assert_eq!(db.backend(), Backend::Lmdb);
/// # Ok::<(), zarrdb::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// redb: one file, copy-on-write B-tree, MVCC snapshots. The default.
    Redb,
    /// LMDB through heed: a folder holding `data.mdb` and `lock.mdb`; memory-mapped reads, several
    /// processes may open it at once.
    Lmdb,
    /// sled: a folder; log-structured. Reads see the live tree (no long-lived snapshots).
    Sled,
    /// A bucket prefix on S3 or an S3-compatible server (`zarrdb+s3://bucket/prefix`): immutable
    /// objects and one `head` replaced conditionally, so any number of processes on any number
    /// of machines commit to it (docs/architecture.md, "Bucket databases"). Needs the
    /// `object-store` feature.
    Bucket,
}

impl Backend {
    /// The backend's name as used in locators (`redb`, `lmdb`, `sled`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Redb => "redb",
            Backend::Lmdb => "lmdb",
            Backend::Sled => "sled",
            Backend::Bucket => "bucket",
        }
    }

    /// The backend a path names by itself: [`Backend::Bucket`] for a bucket database's locator
    /// (`zarrdb+s3://bucket/prefix`, `zarrdb+memory://name`), which no file names; `None` for a
    /// file or folder, whose backend the caller says (or the open finds).
    ///
    /// ```
    /// use zarrdb::Backend;
    /// assert_eq!(Backend::named_by("zarrdb+s3://lab/runs"), Some(Backend::Bucket));
    /// assert_eq!(Backend::named_by("/data/run.zarrdb"), None);
    /// assert_eq!(Backend::named_by("s3://lab/zarr"), None); // a plain Zarr layout, no database
    /// ```
    pub fn named_by(path: &str) -> Option<Backend> {
        path.starts_with("zarrdb+").then_some(Backend::Bucket)
    }

    /// "a redb database", for messages.
    pub(crate) fn described(self) -> &'static str {
        match self {
            Backend::Redb => "a redb database",
            Backend::Lmdb => "an LMDB database",
            Backend::Sled => "a sled database",
            Backend::Bucket => "a bucket database",
        }
    }
}

/// What opening a bucket database answers in a build without the `object-store` feature.
#[cfg(not(feature = "object-store"))]
pub(crate) fn bucket_unavailable(_path: &Path) -> crate::error::StoreError {
    crate::error::StoreError::Unsupported {
        store: "bucket database",
        operation: "open (built without the object-store feature)",
    }
}

/// When a commit reaches the disk.
///
/// ```
/// use zarrdb::{Database, Durability};
/// let dir = tempfile::tempdir().unwrap();
/// let db = Database::builder().durability(Durability::Fast).create(dir.path().join("scratch.zarrdb"))?;
/// db.store().set("a/zarr.json", br#"{"zarr_format": 3, "node_type": "group"}"#)?;
/// drop(db); // closing makes fast commits durable
/// assert!(Database::open(dir.path().join("scratch.zarrdb"))?.store().get("a/zarr.json")?.is_some());
/// # Ok::<(), zarrdb::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Durability {
    /// Every commit is on disk (fsynced) when `commit` returns.
    #[default]
    Durable,
    /// Commits return before they reach the disk. A crash may lose the last commits, but the
    /// database always opens in the state after some earlier commit. Imports are made durable
    /// anyway (one large, rare commit). Large region writes that stream into one commit follow
    /// the mode like any commit (docs/benchmarks.md, "Fast-mode streamed writes", gives what
    /// that saves).
    ///
    /// What "fast" saves depends on the engine: on redb a fast commit writes nothing to the file
    /// (the next durable commit, at most about a second later, or closing the database does); on
    /// LMDB it still syncs the data and skips only the meta page's sync; on sled it is the same
    /// as durable, since sled 0.34.7 deadlocks when commits run ahead of its log writes
    /// (docs/format.md, "Why sled flushes in fast mode too").
    Fast,
}

/// Options for opening or creating a database.
///
/// ```
/// use zarrdb::{Backend, Database, Durability};
/// let dir = tempfile::tempdir().unwrap();
/// let db = Database::builder()
///     .backend(Backend::Lmdb)
///     .durability(Durability::Fast)
///     .create(dir.path().join("data.lmdb"))
///     .unwrap();
/// assert_eq!(db.backend(), Backend::Lmdb);
/// ```
#[derive(Clone, Debug)]
pub struct DatabaseBuilder {
    backend: Backend,
    durability: Durability,
    lmdb_initial_map_size: Option<usize>,
    redb_cache_size: Option<usize>,
    verify_on_open: bool,
    lmdb_check_pages: bool,
    redb_multi_writer: bool,
    redb_commit_log: bool,
    lmdb_commit_log: bool,
    read_only: bool,
    history: bool,
}

impl Default for DatabaseBuilder {
    fn default() -> Self {
        DatabaseBuilder {
            backend: Backend::Redb,
            durability: Durability::Durable,
            lmdb_initial_map_size: None,
            redb_cache_size: None,
            verify_on_open: false,
            lmdb_check_pages: true,
            redb_multi_writer: false,
            redb_commit_log: true,
            lmdb_commit_log: false,
            read_only: false,
            history: false,
        }
    }
}

impl DatabaseBuilder {
    /// The engine (default [`Backend::Redb`]).
    pub fn backend(&mut self, backend: Backend) -> &mut Self {
        self.backend = backend;
        self
    }

    /// The durability of commits (default [`Durability::Durable`]).
    pub fn durability(&mut self, durability: Durability) -> &mut Self {
        self.durability = durability;
        self
    }

    /// LMDB only: the size of the memory map to start with. The map grows by itself when full;
    /// this only matters for tests of that growth and for address-space-constrained systems.
    pub fn lmdb_initial_map_size(&mut self, bytes: usize) -> &mut Self {
        self.lmdb_initial_map_size = Some(bytes);
        self
    }

    /// redb only: the page cache size in bytes. By default redb's 1 GiB for a database opened
    /// for writing: redb keeps a write transaction's dirty pages in it until the commit (up to
    /// half of it), and a smaller cache makes large writes slower (docs/benchmarks.md has the
    /// figures). 16 MiB for a database opened read-only, which has no dirty pages: large reads
    /// then recycle the cache's buffers instead of touching fresh memory for every page, and
    /// are faster and smaller for it.
    pub fn redb_cache_size(&mut self, bytes: usize) -> &mut Self {
        self.redb_cache_size = Some(bytes);
        self
    }

    /// Check the whole file when opening, so a damaged file is refused with
    /// [`crate::error::OpenError::Corrupted`] up front: redb verifies the checksum of every page; for
    /// LMDB zarrdb walks every page of its trees before LMDB maps the file (page numbers, page
    /// kinds, node extents and flags, key order, depths, counts; docs/format.md); sled has no
    /// such check. It reads the whole file (LMDB: every page but the bodies
    /// of large values); `zarrdb check` uses it. Without it, damage is found (as an error)
    /// when the damaged part is read; LMDB's walk runs anyway unless
    /// [`DatabaseBuilder::lmdb_check_pages`] turns it off.
    pub fn verify_on_open(&mut self, verify: bool) -> &mut Self {
        self.verify_on_open = verify;
        self
    }

    /// LMDB only: walk the pages of `data.mdb` before LMDB maps it, on every open (the default).
    /// LMDB trusts its pages, and one damaged node flag makes it follow a null pointer: the
    /// process dies of a signal, which no error handling can catch. The walk (the LMDB part of
    /// [`DatabaseBuilder::verify_on_open`]) refuses such a file with
    /// [`crate::error::OpenError::Corrupted`] instead. It reads every branch and leaf page and the
    /// first bytes of each large value, so its time grows with the number of values
    /// (docs/benchmarks.md has figures); a program that opens a large, trusted database often may
    /// turn it off.
    ///
    /// ```
    /// use zarrdb::{Backend, Database};
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("trusted.lmdb");
    /// Database::builder().backend(Backend::Lmdb).create(&path).unwrap();
    /// let db = Database::builder().backend(Backend::Lmdb).lmdb_check_pages(false).open(&path).unwrap();
    /// assert_eq!(db.backend(), Backend::Lmdb);
    /// ```
    pub fn lmdb_check_pages(&mut self, check: bool) -> &mut Self {
        self.lmdb_check_pages = check;
        self
    }

    /// redb only: let several processes open and write the database at once (redb's
    /// `ConcurrencyMode::MultiWriter`; every process must open it so). A transaction then holds
    /// redb's own write transaction from begin to commit, so no other process commits in between,
    /// and a region write's commit compares the chunks it read with what is stored then. Commits
    /// are durable, whatever [`DatabaseBuilder::durability`] says: another process reads the file.
    /// LMDB always lets several processes write; sled never does.
    pub fn redb_multi_writer(&mut self, multi_writer: bool) -> &mut Self {
        self.redb_multi_writer = multi_writer;
        self
    }

    /// redb only, in the single-process mode: make a durable commit of a small batch (up to
    /// 1 MiB) durable by one record written and synced in a log beside the file, `<path>-log`,
    /// instead of by redb's own durable commit, which writes and syncs pages all over the file.
    /// On by default: one writer's small durable commits ran about 1.5x as fast (docs/benchmarks.md,
    /// "A commit log"). The log's records are folded into the file (a checkpoint) by large
    /// commits, when the log is full, and when the database closes, which removes the log; after a
    /// crash the next open applies what the file lacks. So while the database is open, or after a
    /// crash, the file alone may lack the last commits: copy it only once the database is closed,
    /// or turn the log off to keep every commit in the file itself.
    ///
    /// ```
    /// use zarrdb::{Database, Group};
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("data.zarrdb");
    /// let db = Database::builder().redb_commit_log(false).create(&path)?;
    /// Group::create(db.store(), "/g", Default::default())?;
    /// // Every commit is in the file itself: a copy made now holds "/g".
    /// assert!(!dir.path().join("data.zarrdb-log").exists());
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn redb_commit_log(&mut self, commit_log: bool) -> &mut Self {
        self.redb_commit_log = commit_log;
        self
    }

    /// LMDB only: hold the database alone and make a durable commit of a small batch (up to
    /// 1 MiB) durable by one record written and synced in `zarrdb-log` in the folder, instead of
    /// LMDB's two syncs (data pages, then meta page). Off by default, since LMDB otherwise lets
    /// several processes open the database at once: with the log, an open finds it
    /// [`crate::error::OpenError::Locked`] while another process has it open, and other
    /// processes cannot open it until this one closes it (programs other than zarrdb wait in
    /// LMDB's lock).
    ///
    /// LMDB then commits without syncing (`MDB_NOSYNC`); a checkpoint (a sync, the meta pages
    /// saved in `zarrdb-checkpoint`, and a read transaction that keeps LMDB from reusing the
    /// pages of that commit) follows large commits, imports and a full log, and closing the
    /// database removes both files. After a crash the next open puts the saved meta pages back
    /// and applies the log's records; a read-only open refuses the folder until then.
    ///
    /// ```
    /// use zarrdb::{Backend, Database, Group};
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("data.lmdb");
    /// let db = Database::builder().backend(Backend::Lmdb).lmdb_commit_log(true).create(&path)?;
    /// Group::create(db.store(), "/g", Default::default())?;
    /// assert!(path.join("zarrdb-checkpoint").exists());
    /// drop(db);
    /// assert!(!path.join("zarrdb-checkpoint").exists() && !path.join("zarrdb-log").exists());
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn lmdb_commit_log(&mut self, commit_log: bool) -> &mut Self {
        self.lmdb_commit_log = commit_log;
        self
    }

    /// Open the database without ever writing its files: reads, snapshots and exports work,
    /// every write is refused ([`crate::error::StoreError::Unsupported`]), and nothing is created
    /// ([`crate::error::OpenError::NotFound`] when nothing is there, from `create` too). It works on
    /// read-only media and files without write permission, and leaves the files byte-identical:
    /// redb's recovery or integrity check (`verify_on_open`) runs on pages kept in memory; LMDB
    /// opens with `MDB_RDONLY` (it still notes its readers in `lock.mdb`, a coordination file,
    /// except on read-only media); sled has no read-only mode and opens as usual.
    ///
    /// ```
    /// use zarrdb::{Database, Group};
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("ro.zarrdb");
    /// Group::create(Database::create(&path)?.store(), "/", Default::default())?;
    /// let before = std::fs::read(&path).unwrap();
    /// let db = Database::builder().read_only(true).open(&path)?;
    /// assert!(Group::create(db.store(), "/g", Default::default()).is_err());
    /// drop(db);
    /// assert_eq!(std::fs::read(&path).unwrap(), before);
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn read_only(&mut self, read_only: bool) -> &mut Self {
        self.read_only = read_only;
        self
    }

    /// Keep history (default off): every commit becomes a version that can be read later, and
    /// versions can be tagged ([`Database::log`], [`Database::tag`], [`Database::open_version`]).
    /// A new database keeps it from its first commit; so does one that holds no data yet. A
    /// database that keeps history keeps it whatever this says when it is opened again; one
    /// that holds data kept without history is refused ([`crate::error::HistoryError::CannotStart`]).
    /// Such a database is written in format 6, which builds before history refuse to open.
    ///
    /// ```
    /// use zarrdb::db::VersionRef;
    /// use zarrdb::{Array, ArrayMetadata, DataType, Database};
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::builder().history(true).create(dir.path().join("h.zarrdb"))?;
    /// let a = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![2], vec![2]))?;
    /// a.write_region(&[0], &[2], &[1u8, 2])?;
    /// db.tag("first", &VersionRef::Branch("main".into()))?;
    /// a.write_region(&[0], &[2], &[3u8, 4])?;
    /// let first = db.open_version(&VersionRef::Tag("first".into()))?;
    /// assert_eq!(Array::open(first.store(), "/a")?.read_all::<u8>()?, vec![1, 2]);
    /// assert_eq!(a.read_all::<u8>()?, vec![3, 4]);
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn history(&mut self, history: bool) -> &mut Self {
        self.history = history;
        self
    }

    /// Open the database at `path`, creating it when nothing is there.
    pub fn create(&self, path: impl AsRef<Path>) -> Result<Database, Error> {
        self.open_at(path.as_ref(), true)
    }

    /// Open an existing database at `path`; [`crate::error::OpenError::NotFound`] when there is none.
    pub fn open(&self, path: impl AsRef<Path>) -> Result<Database, Error> {
        self.open_at(path.as_ref(), false)
    }

    fn open_at(&self, path: &Path, create: bool) -> Result<Database, Error> {
        // A bucket locator says its backend itself.
        if self.backend != Backend::Bucket && path.to_str().and_then(Backend::named_by).is_some() {
            let mut bucket = self.clone();
            bucket.backend = Backend::Bucket;
            return bucket.open_at(path, create);
        }
        let (engine, history) = open::open_engine(self, path, create)?;
        Ok(self.with_engine(engine, history, path))
    }

    /// A database over an engine opened by hand (the simulated disk of the fault-injection
    /// tests), its format marker checked or written.
    #[cfg(test)]
    pub(crate) fn open_engine(&self, engine: Arc<dyn KvEngine>, path: &Path) -> Result<Database, Error> {
        let display = path.display().to_string();
        let history = format::check_format(engine.as_ref(), self.backend, &display, self.read_only, self.history)?;
        let (engine, history) = open::with_history(engine, history)?;
        Ok(self.with_engine(engine, history, path))
    }

    fn with_engine(&self, engine: Arc<dyn KvEngine>, history: Option<Arc<HistoryEngine>>, path: &Path) -> Database {
        let shared = Arc::new(DbShared {
            engine,
            history,
            path: path.to_path_buf(),
            backend: self.backend,
            durable: self.durability == Durability::Durable,
            writer: Arc::new(Mutex::new(())),
            writer_threads: WriterThreads::of_location(path),
            group: group_commit::GroupCommit::default(),
            read_only: self.read_only,
            versions: ChunkVersions::of_location(path),
        });
        Database { shared }
    }
}

/// An open database. Cheap to clone; clones share the engine. Dropping the last clone (and every
/// store, transaction and snapshot made from it) closes the database.
///
/// ```
/// use zarrdb::{Array, ArrayMetadata, DataType, Database, Group};
/// let dir = tempfile::tempdir().unwrap();
/// let db = Database::create(dir.path().join("run.zarrdb"))?;
///
/// // One transaction across two nodes: readers see both or neither.
/// let txn = db.begin_write()?;
/// let meta = ArrayMetadata::new(DataType::Int32, vec![4], vec![2]);
/// let counts = Array::create(txn.store(), "/counts", meta)?;
/// counts.write_region(&[0], &[4], &[1, 2, 3, 4])?;
/// let mut root = Group::open(txn.store(), "/")?; // written by Array::create, seen before commit
/// root.set_attributes(serde_json::json!({"total": 10}).as_object().unwrap().clone())?;
/// txn.commit()?;
///
/// let counts = Array::open(db.store(), "/counts")?;
/// assert_eq!(counts.read_all::<i32>()?, vec![1, 2, 3, 4]);
/// # Ok::<(), zarrdb::Error>(())
/// ```
#[derive(Clone)]
pub struct Database {
    shared: Arc<DbShared>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database").field("path", &self.shared.path).field("backend", &self.shared.backend).finish()
    }
}

impl Database {
    /// Open the redb database at `path`, creating it when nothing is there; durable commits.
    pub fn create(path: impl AsRef<Path>) -> Result<Database, Error> {
        DatabaseBuilder::default().create(path)
    }

    /// Open the existing redb database at `path`; durable commits.
    pub fn open(path: impl AsRef<Path>) -> Result<Database, Error> {
        DatabaseBuilder::default().open(path)
    }

    /// Options: backend, durability.
    pub fn builder() -> DatabaseBuilder {
        DatabaseBuilder::default()
    }

    /// The engine holding this database.
    pub fn backend(&self) -> Backend {
        self.shared.backend
    }

    /// The path it was opened at.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// Whether snapshots stay fixed while writers commit (false for sled).
    pub fn stable_snapshots(&self) -> bool {
        self.shared.engine.stable_snapshots()
    }

    /// An auto-commit store on this database: every store call commits on its own, and array and
    /// group operations on it run each in one implicit transaction.
    pub fn store(&self) -> Arc<dyn Store> {
        Arc::new(autocommit::AutoCommitStore::new(self.shared.clone()))
    }

    /// Begin a write transaction. Only one is open at a time per database; this waits for the
    /// current one to end. Readers are never blocked.
    pub fn begin_write(&self) -> Result<Transaction, Error> {
        Transaction::begin(self.shared.clone())
    }

    /// A read snapshot of the latest commit.
    pub fn begin_read(&self) -> Result<Snapshot, Error> {
        Snapshot::begin(&self.shared)
    }

    /// Whether this is the only live handle on the open database: no clone of it, and no store,
    /// snapshot or transaction made from it, is alive, so dropping it closes the database's
    /// files (and releases its locks) at once.
    pub fn is_sole_handle(&self) -> bool {
        Arc::strong_count(&self.shared) == 1
    }
}

/// What every store, transaction and snapshot of one database shares.
pub(crate) struct DbShared {
    engine: Arc<dyn KvEngine>,
    /// The history of the database, when it keeps one: `engine` is then this layer.
    history: Option<Arc<HistoryEngine>>,
    path: PathBuf,
    backend: Backend,
    durable: bool,
    /// Held by the open write transaction: one at a time, as in the engines themselves.
    writer: Arc<Mutex<()>>,
    /// The threads holding the writer lock of any handle of this process on the same file, to
    /// refuse a write that would wait for its own thread: a second `begin_write` on this handle,
    /// or a write through another handle of the file (another name of it, or opened again),
    /// whose engine lock this thread's transaction holds.
    writer_threads: Arc<WriterThreads>,
    /// Region writes waiting to be committed together.
    group: group_commit::GroupCommit,
    /// Opened read-only: its stores say they are not writable (the engine refuses writes).
    read_only: bool,
    /// The chunk versions of the database (`store/chunk_versions.rs`), shared by every handle of
    /// the process on the same file: commits bump them, read-modify-writes check them.
    versions: Arc<ChunkVersions>,
}

impl DbShared {
    /// The same database through another line of its history (`HistoryEngine::on_branch`):
    /// everything is shared (the writer locks, the chunk versions) but the engine and its group
    /// commit, whose commits go to that line.
    fn on_history(&self, history: Arc<HistoryEngine>) -> DbShared {
        DbShared {
            engine: history.clone(),
            history: Some(history),
            path: self.path.clone(),
            backend: self.backend,
            durable: self.durable,
            writer: self.writer.clone(),
            writer_threads: self.writer_threads.clone(),
            group: group_commit::GroupCommit::default(),
            read_only: self.read_only,
            versions: self.versions.clone(),
        }
    }

    fn capabilities(&self, writable: bool) -> StoreCapabilities {
        StoreCapabilities {
            readable: true,
            writable,
            partial_writes: writable,
            listable: true,
            atomic_multi_key: true,
            stable_snapshots: self.engine.stable_snapshots(),
        }
    }

    fn would_deadlock(&self) -> Result<(), Error> {
        if self.writer_threads.holds(std::thread::current().id()) {
            return Err(TransactionError::WouldDeadlock { database: self.path.display().to_string() }.into());
        }
        Ok(())
    }
}

/// The threads holding the writer lock of a handle on one file (see `DbShared::writer_threads`).
#[derive(Default)]
pub(crate) struct WriterThreads(Mutex<Vec<ThreadId>>);

impl WriterThreads {
    fn of_location(path: &Path) -> Arc<WriterThreads> {
        static ALL: crate::store::per_file::PerFile<WriterThreads> = crate::store::per_file::PerFile::new();
        ALL.of(path)
    }

    fn holds(&self, thread: ThreadId) -> bool {
        self.0.lock().contains(&thread)
    }

    fn add(&self, thread: ThreadId) {
        self.0.lock().push(thread);
    }

    fn remove(&self, thread: ThreadId) {
        let mut threads = self.0.lock();
        if let Some(at) = threads.iter().position(|t| *t == thread) {
            threads.swap_remove(at);
        }
    }
}

use crate::key::{check_user_key, RESERVED_PREFIX};
