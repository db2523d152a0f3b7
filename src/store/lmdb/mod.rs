//! The LMDB engine, through heed: a folder holding `data.mdb` and `lock.mdb`; memory-mapped,
//! copy-on-write B-tree, MVCC read snapshots, several processes may open it at once.
//!
//! Zarr keys are the keys of LMDB's unnamed database. A commit is one LMDB write transaction:
//! fsync of data then meta page in durable mode; `MDB_NOMETASYNC` in fast mode (a system crash may
//! undo the last commit, never break the tree). The memory map grows by itself: a commit that
//! meets `MDB_MAP_FULL` is aborted, the map doubled, and the commit retried.

mod compact;
mod fault;
mod log;
mod registry;
mod sealed;
mod snapshot;
mod walk;

pub(crate) use sealed::FLAG_KEY as CHECKSUM_FLAG_KEY;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use heed::types::{Bytes, Str};
use heed::{EnvFlags, EnvOpenOptions, MdbError, RwTxn, WithoutTls};
use parking_lot::{ArcRwLockReadGuard, Mutex, RawRwLock, RwLock};

use super::kv::{refuse_if_read_only, KvBulk, KvEngine, KvSnapshot, KvWriter, WriteBatch};
use crate::error::{CompactError, OpenError, StoreError};
use sealed::Layout;
use snapshot::LmdbSnapshot;

const NAME: &str = "lmdb";
/// Address space is cheap on 64-bit systems and LMDB only writes the pages it uses, so the map
/// starts large and rarely needs to grow.
const DEFAULT_MAP_SIZE: usize = 1 << 40;
/// How long growing the map waits for open snapshots to end.
const GROW_WAIT: Duration = Duration::from_secs(30);

type Db = heed::Database<Str, Bytes>;

/// An open environment and what was read from it when it was opened. A compaction closes it
/// and opens the compacted file in its place (`compact.rs`).
struct Opened {
    env: heed::Env<WithoutTls>,
    db: Db,
    /// Whether values carry checksums (`sealed.rs`).
    layout: Layout,
    /// Reads past the end of the file become errors (`fault.rs`).
    mapping: Arc<fault::Mapping>,
    /// `lock.mdb`, opened by a compaction to hold LMDB's lock byte (`compact.rs`). Declared
    /// after `env`, so it is closed after the environment: closing any descriptor of the file
    /// drops every lock this process holds on it, LMDB's own included.
    lock_file: Option<std::fs::File>,
}

/// A hold on the open environment: taken by every transaction, so a remap or a compaction
/// waits for them all, and the environment stays in place while it is held.
struct Hold(ArcRwLockReadGuard<RawRwLock, Option<Opened>>);

impl std::ops::Deref for Hold {
    type Target = Opened;

    fn deref(&self) -> &Opened {
        // `LmdbEngine::hold` makes a `Hold` only of an open environment, and the read guard keeps
        // it from being taken away.
        self.0.as_ref().expect("a Hold is made only of an open environment")
    }
}

/// How the environment is opened, kept to open it again after a compaction.
#[derive(Clone, Copy)]
struct Settings {
    durable: bool,
    /// The commit log (`log.rs`): `MDB_NOSYNC`, the folder held alone.
    commit_log: bool,
    read_only: bool,
    map_size: Option<usize>,
}

pub(crate) struct LmdbEngine {
    /// Snapshots and write transactions hold it shared; growing the map and compaction hold it
    /// exclusively, since LMDB may only remap when no transaction of this process is active.
    /// `None` after a compaction could not open the compacted file; the next operation tries.
    current: Arc<RwLock<Option<Opened>>>,
    /// The folder.
    path: PathBuf,
    /// How it was opened: `read_only` (`MDB_RDONLY`: `data.mdb` is never written, and commits
    /// are refused), `durable` (not `MDB_NOMETASYNC`).
    settings: Settings,
    /// When stale reader slots were last cleared (`clear_stale_readers`).
    reader_check: Mutex<Instant>,
    /// `data.mdb`, whose mapping `Opened::mapping` covers.
    data: PathBuf,
    /// The commit log and its checkpoint (`log.rs`), when opened with it. Held through each
    /// commit, which keeps commits in the order of their records.
    log: Mutex<Option<log::LmdbLog>>,
    /// The folder, registered as open in this process (`registry.rs`); dropped last.
    _registered: registry::Registered,
}

/// How often a writer clears the reader slots of dead processes.
const READER_CHECK_INTERVAL: Duration = Duration::from_secs(1);

impl LmdbEngine {
    pub fn open(
        path: &Path,
        create: bool,
        durable: bool,
        map_size: Option<usize>,
        read_only: bool,
        verify: bool,
        commit_log: bool,
    ) -> Result<LmdbEngine, OpenError> {
        let display = path.display().to_string();
        if create && !read_only {
            std::fs::create_dir_all(path).map_err(|source| OpenError::Io { path: display.clone(), source })?;
        }
        let data = path.join("data.mdb");
        let settings = Settings { durable, commit_log, read_only, map_size };
        // A compaction in another process holds new openers here until it has put the compacted
        // file in place (`compact.rs`). Taken before LMDB's lock byte below: a compaction's
        // reopen waits in LMDB's lock, so holding that byte while waiting here would deadlock.
        // An open with the log holds the gate alone until its checkpoint is saved, so another
        // zarrdb opener finds the checkpoint (and the database locked) rather than waiting in
        // LMDB's lock for as long as this handle lives.
        if commit_log && create && !data.exists() {
            // Something for the gate to lock: LMDB takes an empty data.mdb for a new one.
            // Private, as LMDB creates it.
            let made =
                std::os::unix::fs::OpenOptionsExt::mode(std::fs::File::options().write(true).create_new(true), 0o600)
                    .open(&data);
            match made {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                    return Err(OpenError::Io { path: display, source: e });
                }
                _ => {}
            }
        }
        let gate = if commit_log && data.exists() {
            let gate = compact::close_gate(&data).map_err(|source| OpenError::Io { path: display.clone(), source })?;
            Some(gate.ok_or_else(|| OpenError::Locked { path: display.clone(), backend: NAME })?)
        } else {
            compact::wait_for_compaction(&data).map_err(|source| OpenError::Io { path: display.clone(), source })?
        };
        // After the gate: a database being created with the log is empty until then.
        // LMDB takes an empty data.mdb for a new environment and initialises it: for an open of
        // an existing database that would hide a file emptied by damage behind an empty database.
        if !create && std::fs::metadata(&data).is_ok_and(|m| m.len() == 0) {
            return Err(OpenError::Corrupted {
                path: display,
                backend: NAME,
                source: "data.mdb is empty (cut short to nothing)".into(),
            });
        }
        let registered = registry::Registered::new(path)
            .ok_or_else(|| OpenError::Locked { path: display.clone(), backend: NAME })?;
        // A crash left the commit log's checkpoint: its meta pages go back into the file before
        // anything reads it, with the folder held alone (`log.rs`).
        let recovering = path.join(log::CHECKPOINT).exists();
        let alone = if commit_log || recovering {
            if read_only {
                // A writer with the log holds the folder alone while it is open.
                if log::held_alone(path) {
                    return Err(OpenError::Locked { path: display, backend: NAME });
                }
                return Err(OpenError::Engine {
                    path: display,
                    backend: NAME,
                    source: "commits of the commit log are still to be applied (the database was not closed): open \
                             it once for writing"
                        .into(),
                });
            }
            let lock = log::lock_alone(path).map_err(|source| OpenError::Io { path: display.clone(), source })?;
            let Some(lock) = lock else { return Err(OpenError::Locked { path: display, backend: NAME }) };
            let restored = log::restore_checkpoint(path, &data).map_err(|why| OpenError::Corrupted {
                path: display.clone(),
                backend: NAME,
                source: why.into(),
            })?;
            Some((lock, restored))
        } else {
            None
        };
        // Before LMDB maps the file: a damaged page can make LMDB itself fault (walk.rs). An
        // empty file is a new database (an open of an existing one was refused above).
        if verify && std::fs::metadata(&data).is_ok_and(|m| m.len() > 0) {
            walk::verify(&data).map_err(|why| OpenError::Corrupted {
                path: display.clone(),
                backend: NAME,
                source: why.into(),
            })?;
        }
        // A process with the commit log holds LMDB's lock byte for writing for as long as it has
        // the database open, and LMDB's own open would wait that long: a lock on it, taken
        // without waiting right before LMDB's open (after the walk) and kept with the environment,
        // refuses the open instead, and keeps such a process out until this handle closes.
        let shared = match alone {
            Some(_) => None,
            None => match log::lock_shared(path) {
                log::SharedLock::Held(lock) => Some(lock),
                log::SharedLock::Nothing => None,
                log::SharedLock::Refused => return Err(OpenError::Locked { path: display, backend: NAME }),
            },
        };
        let mut opened = open_env(path, settings)?;
        let log = match alone {
            Some((lock, restored)) => {
                // Closing any descriptor of lock.mdb drops this process's locks on it, LMDB's
                // own included: the file stays open with the environment.
                opened.lock_file = Some(lock);
                log::start(&mut opened, path, &data, commit_log, restored).map_err(|e| OpenError::Engine {
                    path: display.clone(),
                    backend: NAME,
                    source: Box::new(e),
                })?
            }
            None => {
                opened.lock_file = shared;
                None
            }
        };
        // Other zarrdb openers waited until the log's records were applied.
        drop(gate);
        let engine = LmdbEngine {
            current: Arc::new(RwLock::new(Some(opened))),
            path: path.to_owned(),
            settings,
            reader_check: Mutex::new(Instant::now()),
            data,
            log: Mutex::new(log),
            _registered: registered,
        };
        if !read_only {
            engine.clear_stale_readers(true);
        }
        Ok(engine)
    }

    /// A hold on the open environment, opening it first if a compaction left it closed.
    fn hold(&self, operation: &'static str) -> Result<Hold, StoreError> {
        loop {
            // Recursive: a new reader must not queue behind a growth that waits for older readers.
            let current = self.current.read_arc_recursive();
            if current.is_some() {
                return Ok(Hold(current));
            }
            drop(current);
            let mut current = self.current.write();
            if current.is_none() {
                let opened = log::open_again(&self.path, self.settings).map_err(reopen_failed(operation))?;
                *current = Some(opened);
            }
        }
    }

    /// `Unsupported` for a write on a read-only handle. A writer also clears, at most once per
    /// `READER_CHECK_INTERVAL`, the reader slots of processes that died holding a snapshot: LMDB
    /// keeps every page such a slot could still read, so one killed reader would make the file
    /// grow with every commit from then on.
    fn writable(&self, operation: &'static str) -> Result<(), StoreError> {
        refuse_if_read_only(self.settings.read_only, operation)?;
        self.clear_stale_readers(false);
        Ok(())
    }

    /// `mdb_reader_check`, now (`force`) or when the last one is older than the interval. Best
    /// effort: a failure only leaves the slots for the next check.
    fn clear_stale_readers(&self, force: bool) {
        let mut last = self.reader_check.lock();
        if force || last.elapsed() >= READER_CHECK_INTERVAL {
            if let Some(opened) = self.current.read_recursive().as_ref() {
                let _ = opened.env.clear_stale_readers();
            }
            *last = Instant::now();
        }
    }

    fn try_commit(&self, opened: &Opened, batch: &WriteBatch) -> Result<(), heed::Error> {
        let mut txn = opened.env.write_txn()?;
        apply(opened, &mut txn, batch)?;
        refuse_if_faulted(opened)?;
        txn.commit()
    }

    /// The typed error of a failed write: `Damaged` when it read past the end of the file.
    fn write_error(opened: &Opened, operation: &'static str, key: &str, error: heed::Error) -> StoreError {
        match opened.mapping.check(NAME, operation, key) {
            Err(damaged) => damaged,
            Ok(()) => lmdb_error(operation, key)(error),
        }
    }

    /// Grow the map, if needed, so that `bytes` more fit with room to spare: values take whole
    /// pages (a value just over a page takes two), so three times the bytes plus 64 MiB.
    fn reserve(&self, bytes: u64) -> Result<(), StoreError> {
        let map_size = || self.hold("grow map").map(|h| h.env.info().map_size as u64);
        let used = bytes_in_use(&self.hold("grow map")?.env);
        let want = used.saturating_add(bytes.saturating_mul(3)).saturating_add(64 << 20);
        while map_size()? < want {
            self.grow()?;
        }
        Ok(())
    }

    /// Double the map. Waits for this process's snapshots to end.
    fn grow(&self) -> Result<(), StoreError> {
        self.remap_to(
            "grow map",
            "the LMDB map is full and read snapshots held open for 30 s keep it from growing",
            |size| size.saturating_mul(2),
        )
    }

    /// Take the map size another process grew the file to (LMDB's `MDB_MAP_RESIZED`: the data
    /// now reaches past this process's map). Waits, like `grow`, for this process's snapshots.
    fn adopt_map_size(&self) -> Result<(), StoreError> {
        // A size of 0 makes LMDB take the size recorded in the file.
        self.remap_to(
            "adopt map size",
            "another process grew the LMDB map and read snapshots held open for 30 s keep this one from following",
            |_| 0,
        )
    }

    /// Map the file again, at `size(current map size)`, once no transaction of this process is
    /// active (at most `GROW_WAIT`; then `blocked` says why not).
    fn remap_to(
        &self,
        operation: &'static str,
        blocked: &'static str,
        size: impl FnOnce(usize) -> usize,
    ) -> Result<(), StoreError> {
        drop(self.hold(operation)?);
        let Some(current) = self.current.try_write_for(GROW_WAIT) else {
            return Err(StoreError::Engine { backend: NAME, operation, key: String::new(), source: blocked.into() });
        };
        // A compaction that failed to reopen in between: the next `hold` opens it, at its size.
        let Some(opened) = current.as_ref() else { return Ok(()) };
        let size = size(opened.env.info().map_size);
        // SAFETY: `current` is held exclusively, so no transaction of this process is active.
        unsafe { opened.env.resize(size) }.map_err(lmdb_error(operation, ""))?;
        opened.mapping.refresh(&self.data);
        Ok(())
    }

    /// A transaction (`begin`) with the hold on the environment it needs, following a map
    /// another process grew.
    fn begin<T>(
        &self,
        operation: &'static str,
        begin: impl Fn(&Opened) -> heed::Result<T>,
    ) -> Result<(Hold, T), StoreError> {
        loop {
            let hold = self.hold(operation)?;
            match begin(&hold) {
                Err(heed::Error::Mdb(MdbError::MapResized)) => {
                    drop(hold);
                    self.adopt_map_size()?;
                }
                other => return Ok((hold, other.map_err(lmdb_error(operation, ""))?)),
            }
        }
    }
}

/// The error of `operation` when the environment could not be opened again (after a compaction).
fn reopen_failed(operation: &'static str) -> impl FnOnce(OpenError) -> StoreError {
    move |e| StoreError::Engine { backend: NAME, operation, key: String::new(), source: Box::new(e) }
}

/// Open the environment at `path` (a folder), as `settings` say.
fn open_env(path: &Path, settings: Settings) -> Result<Opened, OpenError> {
    let display = path.display().to_string();
    let Settings { durable, read_only, map_size, .. } = settings;
    // Never MDB_WRITEMAP: snapshots give pages of the map back with MADV_DONTNEED, which is
    // sound only on a read-only shared map (`snapshot.rs`, `release`).
    let mut options = EnvOpenOptions::new().read_txn_without_tls();
    let page = page_size();
    options.map_size(map_size.unwrap_or(DEFAULT_MAP_SIZE).div_ceil(page) * page).max_readers(1024);
    if settings.commit_log {
        // SAFETY: MDB_NOSYNC may leave a commit's pages half on the disk after a crash of the
        // system; the commit log's checkpoint and records put the database back (`log.rs`).
        unsafe { options.flags(EnvFlags::NO_SYNC) };
    } else if !durable {
        // SAFETY: MDB_NOMETASYNC keeps the database consistent after a crash (only the last
        // commit may be undone), which is exactly what fast mode promises.
        unsafe { options.flags(EnvFlags::NO_META_SYNC) };
    }
    // SAFETY: the map is only modified through LMDB, which locks between processes; zarrdb
    // never opens the file by other means, and remapping waits for every transaction of this
    // process (`LmdbEngine::current`).
    if read_only {
        // SAFETY: as above; MDB_RDONLY only takes away writes. LMDB still records its readers
        // in lock.mdb (a coordination file, not data), except on read-only media, where it
        // uses no locks.
        unsafe { options.flags(EnvFlags::READ_ONLY) };
    }
    let env = match unsafe { options.open(path) } {
        // Without write permission on lock.mdb LMDB cannot record its reader (it copes with
        // read-only media, not with a file it may not write). Opened without locks, a read
        // stays correct unless another process writes meanwhile; one that may not write the
        // lock file cannot be such a writer, but its owner can (docs/format.md).
        Err(heed::Error::Io(e)) if read_only && e.kind() == std::io::ErrorKind::PermissionDenied => {
            // SAFETY: as above, and see the comment on the match.
            unsafe { options.flags(EnvFlags::READ_ONLY | EnvFlags::NO_LOCK) };
            unsafe { options.open(path) }
        }
        other => other,
    }
    .map_err(|e| open_error(&display, e))?;
    check_length(&env, path)?;
    let (db, layout): (Db, _) = if read_only {
        // The unnamed database always exists; opening it needs no write transaction.
        let rtxn = env.read_txn().map_err(|e| open_error(&display, e))?;
        let db = env.open_database(&rtxn, None).map_err(|e| open_error(&display, e))?;
        let db = db.ok_or_else(|| OpenError::Corrupted {
            path: display.clone(),
            backend: NAME,
            source: "the unnamed database is missing".into(),
        })?;
        let layout = Layout::of(db, &rtxn).map_err(|e| open_error(&display, e))?;
        rtxn.commit().map_err(|e| open_error(&display, e))?;
        (db, layout)
    } else {
        let mut wtxn = env.write_txn().map_err(|e| open_error(&display, e))?;
        let db = env.create_database(&mut wtxn, None).map_err(|e| open_error(&display, e))?;
        let layout = Layout::of_writable(db, &mut wtxn).map_err(|e| open_error(&display, e))?;
        wtxn.commit().map_err(|e| open_error(&display, e))?;
        (db, layout)
    };
    let layout = layout.map_err(|refusal| OpenError::Corrupted {
        path: display.clone(),
        backend: NAME,
        source: refusal.into(),
    })?;
    let mapping = Arc::new(fault::Mapping::register(&path.join("data.mdb")));
    Ok(Opened { env, db, layout, mapping, lock_file: None })
}

fn apply(opened: &Opened, txn: &mut RwTxn<'_>, batch: &WriteBatch) -> Result<(), heed::Error> {
    let Opened { db, layout, .. } = opened;
    for prefix in &batch.erased_prefixes {
        let doomed: Vec<String> = {
            let mut keys = Vec::new();
            for entry in db.prefix_iter(txn, prefix)? {
                keys.push(entry?.0.to_owned());
            }
            keys
        };
        for key in doomed {
            db.delete(txn, &key)?;
        }
    }
    for (key, value) in &batch.puts {
        match value {
            Some(v) => layout.put(*db, txn, key, v)?,
            None => {
                db.delete(txn, key)?;
            }
        }
    }
    Ok(())
}

/// A write that read past the end of the file must not commit what it built from there;
/// the caller reports the fault (`fault::Mapping::check`).
fn refuse_if_faulted(opened: &Opened) -> Result<(), heed::Error> {
    match opened.mapping.faulted() {
        true => Err(heed::Error::Mdb(MdbError::Corrupted)),
        false => Ok(()),
    }
}

/// Refuse keys LMDB cannot hold before anything is written.
fn check_keys(opened: &Opened, batch: &WriteBatch) -> Result<(), StoreError> {
    let limit = opened.env.max_key_size();
    match batch.puts.keys().find(|k| k.len() > limit) {
        Some(key) => Err(StoreError::InvalidKey { key: key.clone(), reason: KEY_TOO_LONG }),
        None => Ok(()),
    }
}

/// Refuse a `data.mdb` cut short (a partial copy, a full disk): LMDB maps the file and trusts
/// the meta page, and reading a page past the end of the file is a SIGBUS that kills the
/// process, so the length is checked before any read. A file at least as long as the pages its
/// meta page counts is sound; a shorter one may be sound too (the pages past its end can be
/// free pages a transaction allocated and freed before committing, never written), so then the
/// trees are walked (`walk::verify`), and the file is refused only when they reach past its end.
///
/// The meta page is read before the length: another process may commit in between, and LMDB's
/// file only grows, so a length read second is at least what that meta page needs. Read the
/// other way round, a commit that extends the file in between made a sound file look cut short
/// (seen as a rare open failure in `tests/multiprocess_unaligned.rs` under load).
fn check_length(env: &heed::Env<WithoutTls>, path: &Path) -> Result<(), OpenError> {
    let needed = bytes_in_use(env);
    let data = path.join("data.mdb");
    let len =
        std::fs::metadata(&data).map_err(|source| OpenError::Io { path: data.display().to_string(), source })?.len();
    if len < needed {
        walk::verify(&data).map_err(|why| OpenError::Corrupted {
            path: path.display().to_string(),
            backend: NAME,
            source: format!("data.mdb is {len} bytes, its pages counted in use end at byte {needed}: {why}").into(),
        })?;
    }
    Ok(())
}

/// The bytes of `data.mdb` its meta page says are in use: every page up to the last one.
fn bytes_in_use(env: &heed::Env<WithoutTls>) -> u64 {
    (env.info().last_page_number as u64).saturating_add(1).saturating_mul(u64::from(env.stat().page_size))
}

impl KvEngine for LmdbEngine {
    fn commit_syncs(&self, durable: bool) -> bool {
        // Fast mode (MDB_NOMETASYNC) still syncs the data pages of every commit; with the log,
        // only a durable commit syncs (its record).
        durable || !self.settings.commit_log
    }

    fn commit_gathers(&self, durable: bool) -> bool {
        // A logged commit is one short sync: not worth waiting for more writers (as redb's).
        self.commit_syncs(durable) && !self.settings.commit_log
    }

    fn snapshot(&self) -> Result<Arc<dyn KvSnapshot>, StoreError> {
        let (hold, txn) = self.begin("begin_read", |opened| {
            // A snapshot begun after a read past the end of the file is refused (below).
            opened.env.clone().static_read_txn()
        })?;
        hold.mapping.check(NAME, "begin_read", "")?;
        // The pages this snapshot may read: those in use when it began (its meta page's).
        let limit = usize::try_from(bytes_in_use(&hold.env)).unwrap_or(usize::MAX);
        Ok(Arc::new(LmdbSnapshot {
            txn: Mutex::new(txn),
            db: hold.db,
            mapping: hold.mapping.clone(),
            limit,
            layout: hold.layout,
            _hold: hold,
        }))
    }

    fn commit(&self, batch: WriteBatch, durable: bool) -> Result<(), StoreError> {
        self.writable("commit")?;
        if let Some(log) = self.log.lock().as_mut() {
            return self.commit_logged(log, &batch, durable);
        }
        loop {
            let hold = self.hold("commit")?;
            check_keys(&hold, &batch)?;
            match self.try_commit(&hold, &batch) {
                Ok(()) => return Ok(()),
                Err(heed::Error::Mdb(MdbError::MapFull)) => {
                    drop(hold);
                    self.grow()?;
                }
                Err(heed::Error::Mdb(MdbError::MapResized)) => {
                    drop(hold);
                    self.adopt_map_size()?;
                }
                Err(e) => return Err(Self::write_error(&hold, "commit", "", e)),
            }
        }
    }

    fn stable_snapshots(&self) -> bool {
        true
    }

    fn max_key_len(&self) -> Option<usize> {
        // The limit with 4 KiB pages; larger pages allow longer keys, so this is the safe bound.
        Some(MAX_KEY_4K)
    }

    fn shared_between_processes(&self) -> bool {
        true
    }

    fn compact(&self, database: &str, _older_than: std::time::Duration) -> Result<(), CompactError> {
        self.compact_folder(database)
    }

    fn lock_writer(self: Arc<Self>) -> Result<Option<Box<dyn KvWriter>>, StoreError> {
        self.writable("a write transaction")?;
        if self.settings.commit_log {
            // No other process commits: the transaction's batch goes through `commit`, and so
            // through the log.
            return Ok(None);
        }
        let (hold, txn) = self.begin("begin_write", |opened| {
            let txn = opened.env.write_txn()?;
            // SAFETY: the transaction borrows the environment inside `current`'s lock, which the
            // `Hold` returned beside it keeps alive, in place and unchanged (it is a read guard on
            // an `Arc`); the `LmdbWriter` declares the transaction before the hold, so it is
            // dropped (or committed) first.
            Ok(unsafe { std::mem::transmute::<RwTxn<'_>, RwTxn<'static>>(txn) })
        })?;
        Ok(Some(Box::new(LmdbWriter { txn: Some(txn), hold: Some(hold), engine: self })))
    }

    fn bulk(self: Arc<Self>, expected_bytes: u64) -> Result<Box<dyn KvBulk>, StoreError> {
        self.writable("an import")?;
        match self.log.lock().as_mut() {
            // A remap needs no transaction of this process open, the log's pin included: the
            // next commit checkpoints and pins again.
            Some(log) => {
                self.checkpoint(&*self.hold("an import")?, log)?;
                log.unpin();
                self.reserve(expected_bytes)?;
            }
            None => self.reserve(expected_bytes)?,
        }
        let (hold, txn) = self.begin("begin_write", |opened| {
            let txn = opened.env.write_txn()?;
            // SAFETY: as in `lock_writer`: the hold kept beside the transaction keeps the
            // environment alive and in place, and the transaction, declared first, goes before it.
            Ok(unsafe { std::mem::transmute::<RwTxn<'_>, RwTxn<'static>>(txn) })
        })?;
        let synced = self.settings.durable && !self.settings.commit_log;
        Ok(Box::new(LmdbBulk { txn, hold, durable: synced, engine: self.clone() }))
    }
}

impl Drop for LmdbEngine {
    fn drop(&mut self) {
        if let Some(mut log) = self.log.get_mut().take() {
            self.close_log(&mut log);
        }
    }
}

/// An import's write transaction (see [`KvEngine::bulk`]). LMDB spills dirty pages to the file
/// as the transaction grows. A full map aborts the import (the map starts at 1 TiB): unlike a
/// batch, the values cannot be replayed after growing it.
struct LmdbBulk {
    txn: RwTxn<'static>,
    hold: Hold,
    /// Whether LMDB syncs the commit itself (durable mode without the log).
    durable: bool,
    /// Checkpoints the log after the commit.
    engine: Arc<LmdbEngine>,
}

impl KvBulk for LmdbBulk {
    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), StoreError> {
        let opened = &*self.hold;
        let limit = opened.env.max_key_size();
        for (key, value) in &values {
            if key.len() > limit {
                return Err(StoreError::InvalidKey { key: key.clone(), reason: KEY_TOO_LONG });
            }
            let put = opened.layout.put(opened.db, &mut self.txn, key, value);
            put.map_err(|e| LmdbEngine::write_error(opened, "put", key, e))?;
        }
        opened.mapping.check(NAME, "put", "")
    }

    fn erase(&mut self, key: &str) -> Result<(), StoreError> {
        let opened = &*self.hold;
        if key.len() > opened.env.max_key_size() {
            // Longer keys were never stored.
            return Ok(());
        }
        opened.db.delete(&mut self.txn, key).map_err(|e| LmdbEngine::write_error(opened, "erase", key, e))?;
        opened.mapping.check(NAME, "erase", key)
    }

    fn commit(self: Box<Self>, durable: bool) -> Result<(), StoreError> {
        let LmdbBulk { txn, hold, durable: synced, engine } = *self;
        // Fast mode leaves the meta page unsynced (`MDB_NOMETASYNC`); a durable bulk commit in a
        // fast-mode database (an import) syncs the file itself. With the log, a checkpoint
        // syncs it, and makes the next records follow it.
        let logged = engine.settings.commit_log;
        let result = refuse_if_faulted(&hold)
            .and_then(|()| txn.commit())
            .and_then(|()| if synced || !durable || logged { Ok(()) } else { hold.env.force_sync() })
            .map_err(|e| LmdbEngine::write_error(&hold, "commit", "", e));
        // Locked only once LMDB's write lock is let go: a logged commit holds the log while it
        // waits for LMDB's.
        let result = match engine.log.lock().as_mut() {
            Some(log) => result.and_then(|()| {
                log.unlogged();
                engine.checkpoint(&hold, log)
            }),
            None => result,
        };
        drop(hold);
        result
    }
}

/// LMDB's write transaction, held from the beginning of a zarrdb transaction to its commit.
/// LMDB's writer lock spans processes, so no other process commits in between.
struct LmdbWriter {
    txn: Option<RwTxn<'static>>,
    hold: Option<Hold>,
    engine: Arc<LmdbEngine>,
}

impl KvWriter for LmdbWriter {
    fn commit(mut self: Box<Self>, batch: WriteBatch, _durable: bool) -> Result<(), StoreError> {
        let (Some(mut txn), Some(hold)) = (self.txn.take(), self.hold.take()) else {
            return self.engine.commit(batch, true);
        };
        check_keys(&hold, &batch)?;
        // The last commit the batch was built on, read while this transaction still holds
        // LMDB's writer lock: a failed commit below ends the transaction and lets the lock go.
        let seen = hold.env.info().last_txn_id;
        let applied = apply(&hold, &mut txn, &batch).and_then(|()| refuse_if_faulted(&hold));
        match applied.and_then(|()| txn.commit()) {
            Ok(()) => return Ok(()),
            Err(heed::Error::Mdb(MdbError::MapFull)) => {}
            Err(e) => return Err(LmdbEngine::write_error(&hold, "commit", "", e)),
        }
        // The map is full: the transaction is gone. Growing waits for every transaction of this
        // process to end, this one's hold on the environment included, so LMDB's writer lock is
        // let go and another process may commit before the batch is applied again. The batch
        // was built on the state the transaction began on: it is applied only if that state is
        // still the latest (LMDB's last transaction id unchanged), else nothing is committed.
        drop(hold);
        loop {
            self.engine.grow()?;
            let hold = self.engine.hold("commit")?;
            check_keys(&hold, &batch)?;
            match commit_unless_moved(&hold, &batch, seen) {
                Ok(true) => return Ok(()),
                Ok(false) => {
                    return Err(StoreError::Engine {
                        backend: NAME,
                        operation: "commit",
                        key: String::new(),
                        source: MOVED_WHILE_GROWING.into(),
                    })
                }
                Err(heed::Error::Mdb(MdbError::MapFull)) => {}
                Err(heed::Error::Mdb(MdbError::MapResized)) => {
                    drop(hold);
                    self.engine.adopt_map_size()?;
                }
                Err(e) => return Err(LmdbEngine::write_error(&hold, "commit", "", e)),
            }
        }
    }
}

/// Apply `batch` in a new write transaction if the last commit is still transaction `seen`;
/// `false`, committing nothing, when another commit came since.
fn commit_unless_moved(opened: &Opened, batch: &WriteBatch, seen: usize) -> Result<bool, heed::Error> {
    let mut txn = opened.env.write_txn()?;
    // Read under LMDB's writer lock, which the transaction holds: no commit can land now.
    if opened.env.info().last_txn_id != seen {
        return Ok(false);
    }
    apply(opened, &mut txn, batch)?;
    refuse_if_faulted(opened)?;
    txn.commit()?;
    Ok(true)
}

/// Why a held transaction's commit was refused after the map grew (`LmdbWriter::commit`).
const MOVED_WHILE_GROWING: &str =
    "another process committed while the full LMDB map grew; this transaction was built on the state before, and nothing was committed";

const KEY_TOO_LONG: &str = "longer than LMDB's key size limit (1,982 bytes with 4 KiB pages)";

/// LMDB's key size limit with 4 KiB pages (`KEY_TOO_LONG`).
const MAX_KEY_4K: usize = 1_982;

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).ok().filter(|s| *s > 0).unwrap_or(4096)
}

fn lmdb_error(operation: &'static str, key: &str) -> impl FnOnce(heed::Error) -> StoreError {
    super::kv::engine_error(NAME, operation, key)
}

fn open_error(path: &str, error: heed::Error) -> OpenError {
    let path = path.to_owned();
    match error {
        heed::Error::EnvAlreadyOpened => OpenError::Locked { path, backend: NAME },
        heed::Error::Io(source) => OpenError::Io { path, source },
        e @ heed::Error::Mdb(
            MdbError::Invalid | MdbError::Corrupted | MdbError::VersionMismatch | MdbError::Incompatible,
        ) => OpenError::Corrupted { path, backend: NAME, source: Box::new(e) },
        e => OpenError::Engine { path, backend: NAME, source: Box::new(e) },
    }
}
