//! The redb engine: one file, a copy-on-write B-tree, MVCC read snapshots.
//!
//! All keys live in one table, `zarr` (`&[u8]` keys in bytewise order): each Zarr key holds its
//! value, large values split into page-sized segments (`layout.rs`). A commit is one redb write
//! transaction: `Durability::Immediate` in durable mode, `Durability::None` in fast mode (made
//! durable by the next durable commit, or when the database closes). A durable commit of a small
//! batch, in the single-process mode, is made durable by a record in the commit log beside the
//! file instead and applied with `Durability::None` (`log.rs`).

mod compact;
mod handle;
mod layout;
mod log;
mod overlay;
mod shared;
pub(crate) use shared::CAPACITY as SHARED_LOG_CAPACITY;
mod snapshot;
mod tables;
mod upgrade;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::kv::{engine_error, refuse_if_read_only, KvBulk, KvEngine, KvSnapshot, KvWriter, WriteBatch};
use super::log as commit_log;
use super::panic;
use crate::error::{CompactError, OpenError, StoreError};
use tables::{Tables, TABLE};

const NAME: &str = "redb";

/// In fast mode a commit is made durable anyway when the last durable one is older than this,
/// so a crash loses at most about this much work (redb keeps `Durability::None` commits in the
/// process until a durable commit follows).
const FAST_SYNC_INTERVAL: Duration = Duration::from_secs(1);
/// The commit log is checkpointed (a durable redb commit) once its records would run past this.
/// A checkpoint costs 8 writers' group commits more than the records it saves: 32 MiB instead of
/// 4 MiB took them from 10,500-12,500 to 14,200-18,900 commits/s (docs/benchmarks.md, "A longer
/// commit log"); redb reuses the pages freed meanwhile, so the file does not grow with it. A
/// crash replays up to this much at the next open.
const LOG_CAPACITY: u64 = 32 << 20;

/// How long an open that may meet handles of redb's multi-writer mode goes on trying while
/// redb finds the file's locks taken. The processes of that mode take them for moments only: a
/// process closing its handle compacts the file under an exclusive lock, and two opens that meet
/// take each other's locks for a moment too (redb then reports one as "already open", or a writer
/// as a process of "another locking protocol"). Only a holder that keeps them (a writer in
/// single-process mode) makes the open fail, once this has passed.
const OPEN_WAIT: Duration = Duration::from_secs(3);

/// `open()`, tried again for at most `OPEN_WAIT` while it fails on taken locks, when it `waits`:
/// opens in the multi-writer mode and read-only opens (the CLI's, which read beside the writers
/// of that mode); other opens are tried once.
fn open_waiting<T>(
    waits: bool,
    mut open: impl FnMut() -> Result<T, redb::DatabaseError>,
) -> Result<T, redb::DatabaseError> {
    let deadline = Instant::now() + OPEN_WAIT;
    let mut pause = Duration::from_micros(500);
    loop {
        match open() {
            Err(redb::DatabaseError::DatabaseAlreadyOpen | redb::DatabaseError::LockProtocolMismatch)
                if waits && Instant::now() < deadline =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            result => return result,
        }
    }
}

/// The first bytes of every redb file (redb's file format).
pub(crate) const REDB_MAGIC: &[u8] = &[b'r', b'e', b'd', b'b', 0x1A, 0x0A, 0xA9, 0x0D, 0x0A];

/// Whether `file` starts as a redb file does: what a file zarrdb made for a new or compacted
/// database is, once redb laid it out.
pub(crate) fn is_redb_file(file: &std::fs::File) -> bool {
    super::beside::starts_with(file, REDB_MAGIC)
}

pub(crate) struct RedbEngine {
    /// Closed by hand (`Drop`): closing a damaged file can panic inside redb. Opened again after
    /// an I/O failure (`handle.rs`).
    db: handle::Handle,
    /// A fast-mode commit has not yet been made durable.
    unsynced: AtomicBool,
    /// Held through every commit.
    commits: Mutex<Commits>,
    /// Opened in redb's multi-writer mode: other processes write too.
    multi_writer: bool,
    /// Opened read-only: the file is never written (`overlay.rs`), and commits are refused.
    read_only: bool,
    /// The file's length when it was opened, for the compaction at close (`Drop`); `None` where
    /// the close does not compact (read-only, no file).
    length_at_open: Option<u64>,
    /// The commit log the processes of the multi-writer mode share (`shared.rs`); read-only
    /// handles of that mode read it too.
    shared: Option<commit_log::SharedLog>,
    /// `RedbOptions::shared_log_capacity`.
    shared_capacity: u64,
}

/// What commits share, under the engine's commit lock.
struct Commits {
    /// When the last durable commit happened.
    last_sync: Instant,
    /// The commit log, in the single-process mode on a file opened for writing.
    log: Option<commit_log::CommitLog>,
}

impl Commits {
    /// What a commit that does not go through the log stores under `log::APPLIED_KEY` (and
    /// `log::NAME_KEY`): the next number, as a record would (see
    /// [`commit_log::CommitLog::position`]).
    fn position(&self) -> Option<commit_log::Position> {
        self.log.as_ref().map(commit_log::CommitLog::position)
    }
}

/// How a redb file is opened.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RedbOptions {
    pub cache_size: Option<usize>,
    /// Verify every page on open (redb's integrity check).
    pub verify: bool,
    pub multi_writer: bool,
    /// Make small durable commits durable through the commit log (`log.rs`) in the
    /// single-process mode.
    pub commit_log: bool,
    pub read_only: bool,
    /// How far records may reach in the multi-writer mode's shared log before a checkpoint
    /// (`shared::CAPACITY` unless a test wants checkpoints often).
    pub shared_log_capacity: u64,
}

impl RedbEngine {
    pub fn open(path: &Path, create: bool, options: RedbOptions) -> Result<RedbEngine, OpenError> {
        RedbEngine::open_named(path, create, options, true)
    }

    /// A new file under a temporary name (`db/create.rs`), which [`RedbEngine::moved_to`] gives
    /// its name: in the multi-writer mode its shared log is made and named only then, after the
    /// name it is found by.
    pub fn open_unnamed(path: &Path, options: RedbOptions) -> Result<RedbEngine, OpenError> {
        RedbEngine::open_named(path, true, options, false)
    }

    fn open_named(path: &Path, create: bool, options: RedbOptions, named: bool) -> Result<RedbEngine, OpenError> {
        if options.read_only && options.multi_writer && !options.verify {
            if let Some(engine) = RedbEngine::open_shared_reader(path, options)? {
                return Ok(engine);
            }
        }
        let db = open_database(path, options, |builder| {
            if options.read_only {
                // Recovery, an integrity check and closing all write; here they write to memory.
                let file = std::fs::File::open(path).map_err(|e| redb::DatabaseError::Storage(e.into()))?;
                let overlay =
                    overlay::ReadOnlyOverlay::new(file).map_err(|e| redb::DatabaseError::Storage(e.into()))?;
                builder.create_with_backend(overlay)
            } else if create {
                builder.create(path)
            } else {
                builder.open(path)
            }
        })?;
        // A file of format 1 holds its entries in a table of another key type (`upgrade.rs`).
        unpanicked("open", "", || upgrade::format_1(&db)).map_err(|e| OpenError::Engine {
            path: path.display().to_string(),
            backend: NAME,
            source: Box::new(e),
        })?;
        let opened_error = |e| {
            let path = path.display().to_string();
            match e {
                StoreError::Damaged { .. } => OpenError::Corrupted { path, backend: NAME, source: Box::new(e) },
                e => OpenError::Engine { path, backend: NAME, source: Box::new(e) },
            }
        };
        let shared_log = options.multi_writer && !options.read_only;
        let name_log = shared_log && named;
        // The writers of the multi-writer mode share the log: its records are read, not replayed.
        let shared = match name_log {
            true => Some(
                unpanicked("open", "", || shared::establish(&db, path, options.shared_log_capacity))
                    .map_err(opened_error)?,
            ),
            false => None,
        };
        // Commits the last process made durable only in its log are applied before anything reads.
        let writable = !options.read_only && !options.multi_writer && options.commit_log;
        let (replayed, found) = match shared_log {
            true => (commit_log::Replayed { stored: None, name: None, last: 0, end: 0 }, None),
            false => {
                let replay = || log::replay(&db, log::LogAt::File(path), false, u64::MAX, writable);
                unpanicked("open", "", replay).map_err(opened_error)?
            }
        };
        // Reopened after an I/O failure without the full check: recovery checks what it needs.
        let reopen = (!options.read_only).then(|| (path.to_path_buf(), RedbOptions { verify: false, ..options }));
        let mut engine = RedbEngine::with_handle(handle::Handle::new(db, reopen), options);
        engine.shared = shared;
        if !options.read_only {
            engine.length_at_open = Some(std::fs::metadata(path).map_or(0, |m| m.len()));
        }
        if !options.read_only && !options.multi_writer {
            if options.commit_log {
                engine.db.limit_replay(replayed.last);
                let place = commit_log::Place::Path(commit_log::default_log(path));
                let log = commit_log::CommitLog::new(NAME, place, path, true, replayed, found, LOG_CAPACITY);
                engine.commits.get_mut().log = Some(log);
            } else if replayed.stored.is_some_and(|s| s.seq < replayed.last) {
                // Replayed without a sync: the next durable commit, or the close, syncs them.
                engine.unsynced.store(true, Ordering::Release);
            }
        }
        Ok(engine)
    }

    /// A read-only open in redb's multi-writer mode: redb's own read-only handle, which shares
    /// the file with the writers of other processes (and of this one) opened in that mode, sees
    /// their commits, and never writes the file. The overlay's handle (below) would hold the
    /// file's locks shared in the single-writer layout, which makes every writer's next commit
    /// wait for it to close. `None` when the file needs what only the overlay can do, in memory:
    /// recovery after a writer died with no other writer live (redb refuses to repair), the
    /// format-1 upgrade, or records of a commit log to replay.
    fn open_shared_reader(path: &Path, options: RedbOptions) -> Result<Option<RedbEngine>, OpenError> {
        let mut builder = redb::Builder::new();
        builder.set_concurrency_mode(redb::ConcurrencyMode::MultiWriter);
        if let Some(bytes) = options.cache_size {
            builder.set_cache_size(bytes);
        }
        let opened = panic::catch(|| open_waiting(true, || builder.open_read_only(path))).map_err(|message| {
            OpenError::Corrupted {
                path: path.display().to_string(),
                backend: NAME,
                source: format!("redb panicked while opening the file: {message}").into(),
            }
        })?;
        let db = match opened {
            Ok(db) => db,
            Err(redb::DatabaseError::RepairAborted) => return Ok(None),
            Err(e) => return Err(open_error(path, e)),
        };
        // The shared log's records are merged by every read; a log of an older build (or of the
        // single-process mode's long records) is replayed by the overlay, in memory.
        let probe = || {
            if upgrade::is_format_1(&db)? {
                return Ok(None);
            }
            let (seen, found) = log::find_log(&db, log::LogAt::File(path), false)?;
            Ok(match (seen.stored, found) {
                (Some(applied), Some(found)) if found.is_current() => {
                    commit_log::SharedLog::new(NAME, found, applied.id, shared::CAPACITY, false).map(Some)
                }
                (Some(applied), Some(found)) if log::has_records(&found, applied, u64::MAX)? => None,
                _ => Some(None),
            })
        };
        let probed = unpanicked("open", "", probe).map_err(|e| OpenError::Engine {
            path: path.display().to_string(),
            backend: NAME,
            source: Box::new(e),
        })?;
        let Some(shared) = probed else { return Ok(None) };
        let mut engine = RedbEngine::with_handle(handle::Handle::shared_reader(db), options);
        engine.shared = shared;
        Ok(Some(engine))
    }

    /// Open over any storage backend: the simulated disk of the fault-injection tests, with its
    /// commit log on `log` when given (replayed first, as a file's).
    #[cfg(test)]
    pub(crate) fn with_backend(
        backend: impl redb::StorageBackend,
        options: RedbOptions,
        log: Option<Arc<dyn commit_log::LogFile>>,
    ) -> Result<RedbEngine, OpenError> {
        let shown = Path::new("(simulated disk)");
        let mut backend = Some(backend);
        let db = open_database(shown, options, |builder| {
            builder.create_with_backend(backend.take().expect("a simulated disk is opened once"))
        })?;
        let mut engine_log = None;
        if let Some(file) = log {
            let place = commit_log::Place::Given(file);
            let replay = || log::replay(&db, log::LogAt::Given(&place), false, u64::MAX, true);
            let (replayed, found) = unpanicked("open", "", replay).map_err(|e| OpenError::Engine {
                path: shown.display().to_string(),
                backend: NAME,
                source: Box::new(e),
            })?;
            // A few records' worth, so that the injected failures and crashes land in the full
            // log's checkpoints too, which the tests' small commits would never reach otherwise.
            engine_log = Some(commit_log::CommitLog::new(NAME, place, shown, false, replayed, found, 4 << 10));
        }
        let engine = RedbEngine::with_handle(handle::Handle::new(db, None), options);
        engine.commits.lock().log = engine_log;
        Ok(engine)
    }

    fn with_handle(db: handle::Handle, options: RedbOptions) -> RedbEngine {
        RedbEngine {
            db,
            unsynced: AtomicBool::new(false),
            commits: Mutex::new(Commits { last_sync: Instant::now(), log: None }),
            multi_writer: options.multi_writer && !options.read_only,
            read_only: options.read_only,
            length_at_open: None,
            shared: None,
            shared_capacity: options.shared_log_capacity,
        }
    }

    /// The file was linked to `path` after it was created under another name (`db/create.rs`):
    /// the name to open it again by. In the single-process mode its log, named after the old
    /// name, is emptied into the file and removed, and the next begins beside the new name; in
    /// the multi-writer mode the shared log is found or made now, beside the new name.
    pub(crate) fn moved_to(&mut self, path: &Path) -> Result<(), StoreError> {
        self.db.moved_to(path);
        if self.multi_writer {
            // Opened by `open_unnamed`: the shared log is named after the file's own name, found
            // by any process that opened the file since it was linked there.
            let db = self.db.get("open the commit log")?;
            let log = unpanicked("open", "", || shared::establish(&db, path, self.shared_capacity))?;
            drop(db);
            self.shared = Some(log);
            return Ok(());
        }
        let mut commits = self.commits.lock();
        if commits.log.as_ref().is_some_and(commit_log::CommitLog::pending) {
            let position = commits.position();
            if self.apply(&WriteBatch::default(), true, position).is_ok() {
                self.note_commit(true, &mut commits);
            }
        }
        if let Some(log) = &mut commits.log {
            log.moved_to(path);
        }
        Ok(())
    }

    /// Begin a write transaction.
    fn begin_write(&self) -> Result<redb::WriteTransaction, StoreError> {
        let db = self.db.get("begin_write")?;
        self.db.note(unpanicked("begin_write", "", || db.begin_write().map_err(engine_error(NAME, "begin_write", ""))))
    }

    /// `Unsupported` for a write on a read-only handle.
    fn writable(&self, operation: &'static str) -> Result<(), StoreError> {
        refuse_if_read_only(self.read_only, operation)
    }

    /// Whether a commit asked to be `durable` must sync: always in multi-writer mode (another
    /// process sees only what reached the file), and in fast mode once the last durable commit is
    /// older than [`FAST_SYNC_INTERVAL`]. The commit lock is held through the commit.
    fn durable_now(&self, durable: bool, commits: &Commits) -> bool {
        self.commit_syncs(durable) || commits.last_sync.elapsed() >= FAST_SYNC_INTERVAL
    }

    /// Record a commit made with `durable` that did not go through the log (and stored
    /// [`Commits::position`]).
    fn note_commit(&self, durable: bool, commits: &mut Commits) {
        // A durable commit makes every earlier fast one durable too, and every logged one.
        self.unsynced.store(!durable, Ordering::Release);
        if durable {
            commits.last_sync = Instant::now();
        }
        if let Some(log) = &mut commits.log {
            log.advanced(durable);
            self.db.limit_replay(log.last());
        }
    }

    /// Apply `batch` in a new write transaction, storing `position` under `log::APPLIED_KEY`.
    fn apply(
        &self,
        batch: &WriteBatch,
        durable: bool,
        position: Option<commit_log::Position>,
    ) -> Result<(), StoreError> {
        let txn = self.begin_write()?;
        self.db.note(unpanicked("commit", "", || apply_in(txn, batch, durable, position)))
    }

    /// Commit `batch` through the log: its record written and synced, then applied without a
    /// sync. The commit lock is held.
    fn commit_logged(&self, batch: &WriteBatch, commits: &mut Commits) -> Result<(), StoreError> {
        let Some(log) = &mut commits.log else { unreachable!("only called with a log") };
        if log.prepare(batch) {
            // The log is full of records only it holds: a durable commit takes them over.
            let position = log.position();
            self.apply(&WriteBatch::default(), true, Some(position))?;
            self.note_commit(true, commits);
            let Some(log) = &mut commits.log else { unreachable!("only called with a log") };
            // Numbered again: the checkpoint took the number.
            log.prepare(batch);
        }
        let Some(log) = &mut commits.log else { unreachable!("only called with a log") };
        // Before the record is written: opening the file again after an I/O failure replays the
        // log, and must not find this record there before it is applied.
        let txn = self.begin_write()?;
        log.write()?;
        // The batch goes into redb's transaction while the record travels to the disk; the
        // transaction commits (and readers see it) only once the record is there.
        let position = log.position();
        let staged =
            self.db.note(unpanicked("commit", "", || stage(txn, batch, redb::Durability::None, Some(position))));
        let txn = match staged {
            Ok(txn) => txn,
            Err(e) => {
                log.take_back();
                return Err(e);
            }
        };
        // Dropping the transaction on a failed sync aborts it: nothing was applied.
        log.sync()?;
        if let Err(e) =
            self.db.note(unpanicked("commit", "", || txn.commit().map_err(engine_error(NAME, "commit", ""))))
        {
            log.take_back();
            return Err(e);
        }
        log.applied();
        self.db.limit_replay(log.last());
        Ok(())
    }
}

/// Open redb's database with the builder settings of `options`; `open` picks how.
fn open_database(
    path: &Path,
    options: RedbOptions,
    mut open: impl FnMut(&mut redb::Builder) -> Result<redb::Database, redb::DatabaseError>,
) -> Result<redb::Database, OpenError> {
    let mut builder = redb::Builder::new();
    if options.multi_writer && !options.read_only {
        builder.set_concurrency_mode(redb::ConcurrencyMode::MultiWriter);
    }
    if let Some(bytes) = options.cache_size {
        builder.set_cache_size(bytes);
    }
    builder.set_check_integrity_on_open(options.verify);
    // redb may panic on a damaged file instead of failing; that is a damaged file too.
    let opened = panic::catch(|| open_waiting(options.multi_writer || options.read_only, || open(&mut builder)))
        .map_err(|message| OpenError::Corrupted {
            path: path.display().to_string(),
            backend: NAME,
            source: format!("redb panicked while opening the file: {message}").into(),
        })?;
    opened.map_err(|e| open_error(path, e))
}

/// redb's durability for a commit that is `durable` or not.
fn durability(durable: bool) -> redb::Durability {
    if durable {
        redb::Durability::Immediate
    } else {
        redb::Durability::None
    }
}

/// Apply `batch` in `txn`, store `position` under `log::APPLIED_KEY`, and commit.
fn apply_in(
    txn: redb::WriteTransaction,
    batch: &WriteBatch,
    durable: bool,
    position: Option<commit_log::Position>,
) -> Result<(), StoreError> {
    stage(txn, batch, durability(durable), position)?.commit().map_err(engine_error(NAME, "commit", ""))
}

/// [`apply_in`] but the commit: `batch` and `position` in `txn`, committed with `durability`.
fn stage(
    mut txn: redb::WriteTransaction,
    batch: &WriteBatch,
    durability: redb::Durability,
    position: Option<commit_log::Position>,
) -> Result<redb::WriteTransaction, StoreError> {
    txn.set_durability(durability).map_err(engine_error(NAME, "set_durability", ""))?;
    {
        let mut tables = Tables::open(&txn)?;
        tables.write_batch(batch)?;
        if let Some(position) = &position {
            log::store_position(position, &mut tables.main, "commit")?;
        }
    }
    Ok(txn)
}

/// Run a redb call, turning a panic into an error. redb documents that reading a damaged file
/// without an integrity check may panic; a storage engine must answer with an error instead.
fn unpanicked<R>(
    operation: &'static str,
    key: &str,
    f: impl FnOnce() -> Result<R, StoreError>,
) -> Result<R, StoreError> {
    panic::catch(f).unwrap_or_else(|message| {
        Err(StoreError::Engine {
            backend: NAME,
            operation,
            key: key.to_owned(),
            source: format!("redb panicked ({message}): the file is damaged (`zarrdb check` verifies every page)")
                .into(),
        })
    })
}

impl KvEngine for RedbEngine {
    fn snapshot(&self) -> Result<Arc<dyn KvSnapshot>, StoreError> {
        match &self.shared {
            Some(log) => self.shared_snapshot(log),
            None => Ok(Arc::new(self.file_snapshot()?)),
        }
    }

    fn commit_syncs(&self, durable: bool) -> bool {
        // Without the shared log, every commit of the multi-writer mode syncs (another process
        // sees only what reached the file); the periodic sync of fast mode (`durable_now`) is rare
        // enough not to count.
        durable || (self.multi_writer && self.shared.is_none())
    }

    fn commit_gathers(&self, durable: bool) -> bool {
        // A logged commit is one record and one sync: waiting up to
        // `group_commit::GATHER` for more writers delayed more than it shared (docs/benchmarks.md,
        // "Group commit wake-ups"). Batches over the log's limit commit to the file, but rarely
        // in groups.
        if self.shared.is_some() {
            return false;
        }
        self.multi_writer || (durable && self.commits.lock().log.is_none())
    }

    fn commit(&self, batch: WriteBatch, durable: bool) -> Result<(), StoreError> {
        self.writable("commit")?;
        if let Some(log) = &self.shared {
            let held = log.lock()?;
            let applied = self.position_for_writing(&held)?;
            return self.commit_shared(log, &held, applied, &batch, durable);
        }
        // Commits are serialised by the database's writer lock, so this lock never waits.
        let mut commits = self.commits.lock();
        if let Some(log) = &mut commits.log {
            log.usable()?;
            // A fast commit not yet durable must not be skipped by a replay of later records:
            // while one is pending, a durable commit goes to redb durably.
            if durable && !self.unsynced.load(Ordering::Acquire) && log.takes(&batch) {
                return self.commit_logged(&batch, &mut commits);
            }
        }
        let durable = self.durable_now(durable, &commits);
        self.apply(&batch, durable, commits.position())?;
        self.note_commit(durable, &mut commits);
        Ok(())
    }

    fn stable_snapshots(&self) -> bool {
        true
    }

    fn shared_between_processes(&self) -> bool {
        self.multi_writer
    }

    fn compact(&self, database: &str, _older_than: std::time::Duration) -> Result<(), CompactError> {
        self.compact_file(database)
    }

    fn lock_writer(self: Arc<Self>) -> Result<Option<Box<dyn KvWriter>>, StoreError> {
        self.writable("a write transaction")?;
        if !self.multi_writer {
            return Ok(None);
        }
        if let Some(log) = &self.shared {
            let held = log.lock()?;
            // The snapshot the transaction takes next then shows what its commit will follow.
            let applied = self.position_for_writing(&held)?;
            return Ok(Some(Box::new(shared::SharedWriter { held, applied, engine: self })));
        }
        // redb's write transaction excludes other processes' until it commits or drops.
        let txn = self.begin_write()?;
        Ok(Some(Box::new(RedbWriter { txn, engine: self })))
    }

    fn bulk(self: Arc<Self>, _expected_bytes: u64) -> Result<Box<dyn KvBulk>, StoreError> {
        self.writable("an import")?;
        if self.shared.is_some() {
            let (txn, held, next) = self.begin_bulk()?;
            return Ok(Box::new(RedbBulk { txn, shared: Some((held, next)), engine: self }));
        }
        // redb flushes dirty pages beyond half its cache to the file before commit (they are not
        // reachable from the committed root until then), so a long transaction stays bounded.
        let txn = self.begin_write()?;
        Ok(Box::new(RedbBulk { txn, shared: None, engine: self }))
    }
}

/// An import's (or a streamed region write's) write transaction (see [`KvEngine::bulk`]).
struct RedbBulk {
    /// Declared first: ends before the engine it belongs to, and before the lock is released.
    txn: redb::WriteTransaction,
    /// In the multi-writer mode: the shared log's lock, held throughout, and the position the
    /// commit stores (`shared.rs`).
    shared: Option<(commit_log::Held, commit_log::Applied)>,
    engine: Arc<RedbEngine>,
}

impl KvBulk for RedbBulk {
    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), StoreError> {
        // Values beyond redb's cache go to the file now: a full disk can fail here.
        self.engine.db.note(unpanicked("put", "", || {
            let mut tables = Tables::open(&self.txn)?;
            for (key, value) in &values {
                tables.put(key, Some(value)).map_err(engine_error(NAME, "put", key))?;
            }
            Ok(())
        }))
    }

    fn erase(&mut self, key: &str) -> Result<(), StoreError> {
        self.engine.db.note(unpanicked("erase", key, || {
            Tables::open(&self.txn)?.put(key, None).map_err(engine_error(NAME, "erase", key))
        }))
    }

    fn commit(self: Box<Self>, durable: bool) -> Result<(), StoreError> {
        let RedbBulk { txn, shared, engine } = *self;
        if let Some((_held, next)) = shared {
            return engine.commit_bulk(txn, next);
        }
        let mut commits = engine.commits.lock();
        if let Some(log) = &commits.log {
            log.usable()?;
        }
        let durable = engine.durable_now(durable, &commits);
        let position = commits.position();
        engine.db.note(unpanicked("commit", "", || apply_in(txn, &WriteBatch::default(), durable, position)))?;
        engine.note_commit(durable, &mut commits);
        Ok(())
    }
}

/// redb's write transaction in multi-writer mode, held from the beginning of a zarrdb transaction
/// (or a group commit) to its commit, so no other process commits in between.
struct RedbWriter {
    /// Declared first: ends before the engine it belongs to.
    txn: redb::WriteTransaction,
    engine: Arc<RedbEngine>,
}

impl KvWriter for RedbWriter {
    fn commit(self: Box<Self>, batch: WriteBatch, _durable: bool) -> Result<(), StoreError> {
        // Every commit of this mode syncs (redb's two-phase commit).
        let RedbWriter { txn, engine } = *self;
        engine.db.note(unpanicked("commit", "", || apply_in(txn, &batch, true, None)))
    }
}

impl Drop for RedbEngine {
    fn drop(&mut self) {
        // redb keeps `Durability::None` commits off the disk until a durable commit follows, so a
        // fast-mode database closed cleanly would otherwise lose them. An empty durable commit
        // persists them, and those applied from the log, whose file is then removed. An error
        // here has no caller to go to: fast commits stay lost as after a crash, and the log stays
        // for the next open to apply.
        if let Some(log) = &self.shared {
            // The records pending go into the file, so that a copy taken once every process has
            // closed holds them; not while another handle holds the lock (it does so itself).
            if let Ok(Some(held)) = log.try_lock() {
                // Its space given back too: a closed database is its file and a log of no records.
                let checkpointed = unpanicked("commit", "", || self.checkpoint(log, &held, &WriteBatch::default()));
                match checkpointed {
                    Ok(()) => drop(log.shrink(&held)),
                    // Its fast commits stay in the log, synced, for the next checkpoint.
                    Err(_) if self.unsynced.load(Ordering::Acquire) => drop(log.sync()),
                    Err(_) => {}
                }
            } else if self.unsynced.load(Ordering::Acquire) {
                let _ = log.sync();
            }
        }
        let commits = self.commits.get_mut();
        let pending = commits.log.as_ref().is_some_and(commit_log::CommitLog::pending);
        if self.unsynced.load(Ordering::Acquire) || pending {
            let position = commits.position();
            let done = unpanicked("commit", "", || self.apply(&WriteBatch::default(), true, position)).is_ok();
            if let Some(log) = self.commits.get_mut().log.as_mut().filter(|_| done) {
                log.advanced(true);
            }
        }
        if let Some(log) = &mut self.commits.get_mut().log {
            log.remove();
        }
        let grown = self.grown_since_open();
        let multi_writer = self.multi_writer;
        let Some(shared) = self.db.take() else { return };
        // A snapshot that outlives the engine closes the database when it ends (`handle.rs`).
        let Ok(mut open) = Arc::try_unwrap(shared) else { return };
        let Some(db) = open.get_mut() else { return };
        // Closing commits redb's allocator state, which reads the tree: on a damaged file that can
        // panic, and a panic escaping `drop` would end the program (or abort it while unwinding).
        // `Open` catches the close's panic; this catches the compaction's.
        let _ = panic::catch(move || {
            if grown {
                // redb grows its file by doubling and places pages all over the new space, so a
                // file that grew ends up to twice as long as its data, the rest sparse holes
                // that copies and archives still carry. Compacting moves the few pages at the
                // end down and cuts the file (docs/benchmarks.md, "Space", has what it saves and
                // costs). A reader still open, of this process or (in
                // multi-writer mode) another, makes redb refuse: the file stays as it is.
                // In multi-writer mode another process inside a write transaction would make
                // the compaction wait for it, and so this close: then the file stays as it is
                // too (the transaction's own process compacts when it closes).
                if !multi_writer || peer_writing(db).is_some_and(|writing| !writing) {
                    let _ = db.compact();
                }
            }
        });
        drop(open);
    }
}

/// Whether another process is inside a write transaction of the file (redb's multi-writer
/// mode), without waiting for it; `None` when redb cannot tell (an I/O error).
fn peer_writing(db: &redb::Database) -> Option<bool> {
    match db.try_begin_write() {
        Ok(txn) => Some(txn.abort().is_err()),
        Err(redb::TransactionError::WouldBlock) => Some(true),
        Err(_) => None,
    }
}

impl RedbEngine {
    /// Whether the file is longer than when it was opened (always false where the close does
    /// not compact).
    fn grown_since_open(&self) -> bool {
        let (Some(before), Some(path)) = (self.length_at_open, self.db.path()) else { return false };
        std::fs::metadata(path).is_ok_and(|m| m.len() > before)
    }
}

/// The error of an operation that found the database being closed.
fn closing(operation: &'static str) -> StoreError {
    StoreError::Engine { backend: NAME, operation, key: String::new(), source: "the database is being closed".into() }
}

fn open_error(path: &Path, error: redb::DatabaseError) -> OpenError {
    let path = path.display().to_string();
    match error {
        redb::DatabaseError::DatabaseAlreadyOpen => OpenError::Locked { path, backend: NAME },
        // A file cut short or not laid out as redb expects fails as an I/O error inside redb.
        redb::DatabaseError::Storage(redb::StorageError::Io(source))
            if matches!(source.kind(), std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::InvalidData) =>
        {
            OpenError::Corrupted { path, backend: NAME, source: Box::new(source) }
        }
        redb::DatabaseError::Storage(redb::StorageError::Io(source)) => OpenError::Io { path, source },
        e @ (redb::DatabaseError::Storage(redb::StorageError::Corrupted(_))
        | redb::DatabaseError::UpgradeRequired(_)
        | redb::DatabaseError::RepairAborted) => OpenError::Corrupted { path, backend: NAME, source: Box::new(e) },
        e => OpenError::Engine { path, backend: NAME, source: Box::new(e) },
    }
}
