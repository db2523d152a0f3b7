//! Explicit write transactions.
//!
//! A transaction holds the database's writer lock, a snapshot taken when it began and a buffer of
//! its changes ([`WriteSet`]). Reads see the buffer over the snapshot. `commit` hands the buffer
//! to the engine as one batch, which the engine applies in one of its own transactions; dropping
//! the transaction discards the buffer. Since only one write transaction is open at a time and it
//! read from the latest commit, transactions are serializable.

use crate::store::Sealed;
use std::sync::Arc;

use parking_lot::{Mutex, RawMutex};

use super::overlay::{self, Lookup, WriteSet};
use super::race::{self, Recorded};
use super::{check_user_key, DbShared};
use crate::error::{Error, StoreError};
use crate::store::kv::{slice_range, CommitNote, KvSnapshot, KvWriter};
use crate::store::{
    ByteRange, ChunkVersions, DirListing, ListableStore, ReadableStore, Store, StoreCapabilities, StoreScope,
    WritableStore,
};

/// A write transaction across any number of arrays and groups.
///
/// It is committed or dropped on the thread that began it (it is not `Send`); its
/// [`Transaction::store`] and the arrays opened on it may be used from any number of threads.
///
/// ```compile_fail
/// let dir = tempfile::tempdir().unwrap();
/// let db = zarrdb::Database::create(dir.path().join("t.zarrdb")).unwrap();
/// let txn = db.begin_write().unwrap();
/// std::thread::spawn(move || txn.commit()); // a transaction cannot move to another thread
/// ```
///
/// Open arrays and groups on [`Transaction::store`]; their writes become visible to others all at
/// once at [`Transaction::commit`]. Dropping the transaction aborts it. Handles made from its store
/// fail with [`StoreError::TransactionEnded`] once it has ended.
///
/// ```
/// use zarrdb::{Array, ArrayMetadata, DataType, Database};
/// let dir = tempfile::tempdir().unwrap();
/// let db = Database::create(dir.path().join("t.zarrdb"))?;
/// let txn = db.begin_write()?;
/// let a = Array::create(txn.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![2], vec![2]))?;
/// a.write_region(&[0], &[2], &[7u8, 8])?;
/// drop(txn); // aborted: nothing was written
/// assert!(Array::open(db.store(), "/a").is_err());
/// # Ok::<(), zarrdb::Error>(())
/// ```
pub struct Transaction {
    store: Arc<TxnStore>,
    /// The engine's own writer lock (LMDB: between processes), taken after `_writer`.
    engine_writer: Option<Box<dyn KvWriter>>,
    /// The reads of a transaction whose commit may lose a race (a bucket database), to check
    /// against the head that won it (`race.rs`).
    recorded: Option<Arc<Recorded>>,
    _writer: WriterGuard,
    /// A transaction ends on the thread that began it (its store may be used from any thread).
    /// This keeps the writer lock's owner exact, so a second `begin_write` on that thread is
    /// refused instead of waiting for itself.
    _thread_bound: std::marker::PhantomData<*const ()>,
}

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction").field("database", &self.store.db.path).finish()
    }
}

impl Transaction {
    pub(super) fn begin(db: Arc<DbShared>) -> Result<Transaction, Error> {
        db.would_deadlock()?;
        let writer = WriterGuard::acquire(db.clone())?;
        // The engine lock before the snapshot, so the snapshot is the latest commit of any process.
        let engine_writer = db.engine.clone().lock_writer()?;
        let mut snapshot = db.engine.snapshot()?;
        let recorded = db.engine.commits_race().then(|| Recorded::new(snapshot.clone()));
        if let Some(recorded) = &recorded {
            snapshot = recorded.clone();
        }
        let state = Mutex::new(Some(TxnState { snapshot, writes: WriteSet::default() }));
        Ok(Transaction {
            store: Arc::new(TxnStore { db, state }),
            engine_writer,
            recorded,
            _writer: writer,
            _thread_bound: std::marker::PhantomData,
        })
    }

    /// The store of this transaction, to open arrays and groups on.
    pub fn store(&self) -> Arc<dyn Store> {
        self.store.clone()
    }

    /// Apply every change atomically. In durable mode they are on disk when this returns. On an
    /// error nothing was applied.
    pub fn commit(self) -> Result<(), Error> {
        self.commit_noted(CommitNote::default())
    }

    /// Commit, with what a database with history records of the commit.
    pub(super) fn commit_noted(mut self, note: CommitNote) -> Result<(), Error> {
        let state = self.store.state.lock().take();
        let Some(state) = state else { return Ok(()) };
        drop(state.snapshot);
        let mut batch = state.writes.into_batch();
        batch.note = note;
        if batch.is_empty() {
            return Ok(());
        }
        let db = &self.store.db;
        let Some(recorded) = self.recorded.take() else {
            return commit_batch(db, self.engine_writer.take(), batch);
        };
        let mut committed = commit_batch(db, self.engine_writer.take(), batch.clone());
        let mut retry = race::Retry::new();
        while race::lost(&committed) && retry.again() {
            // Another writer won: commit again over its head if every read answers the same there.
            let writer = db.engine.clone().lock_writer()?;
            let now = db.engine.snapshot()?;
            if let Some(key) = recorded.changed_in(now.as_ref())? {
                return Err(race::conflict(key));
            }
            committed = commit_batch(db, writer, batch.clone());
        }
        committed
    }

    /// Discard every change (the same as dropping the transaction).
    pub fn abort(self) {}
}

impl Drop for Transaction {
    fn drop(&mut self) {
        // Before the writer lock is released, so no later transaction overlaps this one.
        self.store.state.lock().take();
    }
}

/// Run `f` on the state of a store that a transaction or scope owns, or fail with
/// [`StoreError::TransactionEnded`] once it has ended (`None`).
pub(super) fn with_live<S, R>(
    state: &Mutex<Option<S>>,
    operation: &'static str,
    key: &str,
    f: impl FnOnce(&mut S) -> Result<R, StoreError>,
) -> Result<R, StoreError> {
    match state.lock().as_mut() {
        Some(state) => f(state),
        None => Err(StoreError::TransactionEnded { operation, key: key.to_owned() }),
    }
}

/// Apply `batch` through the engine (with its writer lock, when the transaction holds it), then
/// bump the chunk versions of every key it wrote, now that readers see the new values: a
/// read-modify-write that read one of them before waits at its own commit and finds the version
/// changed (`store/chunk_versions.rs`).
pub(super) fn commit_batch(
    db: &DbShared,
    engine_writer: Option<Box<dyn KvWriter>>,
    batch: crate::store::kv::WriteBatch,
) -> Result<(), Error> {
    let keys: Vec<String> = batch.puts.keys().cloned().collect();
    let bytes: u64 =
        batch.puts.iter().map(|(key, value)| (key.len() + value.as_ref().map_or(0, Vec::len)) as u64).sum();
    let committed = match engine_writer {
        Some(writer) => writer.commit(batch, db.durable),
        None => db.engine.commit(batch, db.durable),
    };
    committed.map_err(|e| super::disk_full::classify(e.into(), &db.path, bytes))?;
    db.versions.bump(keys.iter().map(String::as_str));
    Ok(())
}

/// The writer lock, with the owning thread recorded for the deadlock check.
pub(crate) struct WriterGuard {
    db: Arc<DbShared>,
    /// The thread that took it (a guard may be released by another: an async transaction
    /// commits on another worker thread than the one it began on).
    holder: std::thread::ThreadId,
    /// `None` only inside `drop`, which releases the lock before waking the next writer.
    guard: Option<parking_lot::ArcMutexGuard<RawMutex, ()>>,
}

impl WriterGuard {
    /// Wait for the writer lock. A thread of rayon's pool runs the pool's other work while it
    /// waits: the holder may be a transaction whose region writes need the pool, and if every
    /// worker slept here instead, they would never run.
    pub(super) fn acquire(db: Arc<DbShared>) -> Result<WriterGuard, Error> {
        // This thread already holds the writer lock of this handle, or of another handle of
        // the same file, whose engine lock the write would wait for.
        db.would_deadlock()?;
        loop {
            if let Some(writer) = WriterGuard::try_acquire(&db, std::time::Duration::from_millis(1)) {
                return Ok(writer);
            }
            // The holder may be this very thread, lower in its stack (rayon ran this work while
            // the holder waited for the pool): it can never release the lock.
            db.would_deadlock()?;
            rayon::yield_now();
        }
    }

    /// The writer lock if it comes free within `wait`.
    pub(super) fn try_acquire(db: &Arc<DbShared>, wait: std::time::Duration) -> Option<WriterGuard> {
        // A zero wait must not spin: parking_lot's timed lock spins (yielding the CPU) before it
        // looks at the deadline, and a queued group-commit writer polling here took the CPU the
        // leader needed (docs/benchmarks.md, "Group commit wake-ups").
        let guard = if wait.is_zero() { db.writer.try_lock_arc() } else { db.writer.try_lock_arc_for(wait) }?;
        let holder = std::thread::current().id();
        db.writer_threads.add(holder);
        Some(WriterGuard { db: db.clone(), holder, guard: Some(guard) })
    }
}

impl Drop for WriterGuard {
    fn drop(&mut self) {
        self.db.writer_threads.remove(self.holder);
        drop(self.guard.take());
        // Whoever held the lock (a group's leader, a transaction, a streamed write, an import),
        // the oldest writer queued for a group commit leads next, without waiting out its poll.
        self.db.group.wake_next();
    }
}

struct TxnState {
    snapshot: Arc<dyn KvSnapshot>,
    writes: WriteSet,
}

/// The store view of a transaction. Its methods are called from many threads at once (parallel
/// chunk encoding), so the state sits behind a mutex held only for buffer lookups and inserts.
pub(crate) struct TxnStore {
    db: Arc<DbShared>,
    state: Mutex<Option<TxnState>>,
}

impl TxnStore {
    fn with<R>(
        &self,
        operation: &'static str,
        key: &str,
        f: impl FnOnce(&mut TxnState) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        with_live(&self.state, operation, key, f)
    }
}

impl TxnStore {
    /// Answer from the buffer when it knows `key`; otherwise hand back the snapshot, so the read
    /// itself runs without the lock and parallel readers do not queue behind each other.
    fn buffered<R>(
        &self,
        operation: &'static str,
        key: &str,
        answer: impl FnOnce(Option<&[u8]>) -> Result<R, StoreError>,
    ) -> Result<Result<R, Arc<dyn KvSnapshot>>, StoreError> {
        check_user_key(key)?;
        self.with(operation, key, |s| match s.writes.lookup(key) {
            Lookup::Value(v) => answer(Some(v)).map(Ok),
            Lookup::Absent => answer(None).map(Ok),
            Lookup::Unknown => Ok(Err(s.snapshot.clone())),
        })
    }
}

impl ReadableStore for TxnStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        match self.buffered("get", key, |v| Ok(v.map(<[u8]>::to_vec)))? {
            Ok(answer) => Ok(answer),
            Err(snapshot) => snapshot.get(key),
        }
    }

    fn get_partial_values(&self, requests: &[(&str, ByteRange)]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        requests
            .iter()
            .map(|(key, range)| {
                let answer = |v: Option<&[u8]>| v.map(|v| slice_range(key, v, *range)).transpose();
                match self.buffered("get_partial_values", key, answer)? {
                    Ok(answer) => Ok(answer),
                    Err(snapshot) => snapshot.get_range(key, *range),
                }
            })
            .collect()
    }

    fn size(&self, key: &str) -> Result<Option<u64>, StoreError> {
        match self.buffered("size", key, |v| Ok(v.map(|v| v.len() as u64)))? {
            Ok(answer) => Ok(answer),
            Err(snapshot) => snapshot.size(key),
        }
    }

    /// A value this transaction wrote is lent from its buffer, and any other from where the
    /// snapshot's engine holds it: no copy of either.
    fn with_value_within(&self, key: &str, limit: u64, read: &mut dyn FnMut(&[u8])) -> Result<Option<u64>, StoreError> {
        let lent = |v: Option<&[u8]>| Ok(v.map(|v| crate::store::lend_within(v, limit, &mut *read)));
        match self.buffered("get", key, lent)? {
            Ok(answer) => Ok(answer),
            Err(snapshot) => snapshot.with_value_within(key, limit, read),
        }
    }
}

impl WritableStore for TxnStore {
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        // Copy outside the lock: parallel chunk writers only contend for the insert.
        self.set_owned(key, value.to_vec())
    }

    fn set_owned(&self, key: &str, value: Vec<u8>) -> Result<(), StoreError> {
        check_user_key(key)?;
        self.with("set", key, |s| {
            s.writes.put(key, value);
            Ok(())
        })
    }

    fn set_partial_values(&self, writes: &[(&str, u64, &[u8])]) -> Result<(), StoreError> {
        // Under one lock hold, so the batch is checked whole before any of it is applied.
        let first = writes.first().map_or("", |w| w.0);
        self.with("set_partial_values", first, |s| {
            let mut patched: std::collections::BTreeMap<&str, Vec<u8>> = std::collections::BTreeMap::new();
            for (key, offset, bytes) in writes {
                check_user_key(key)?;
                if !patched.contains_key(key) {
                    let current = overlay::get(s.snapshot.as_ref(), Some(&s.writes), key)?.unwrap_or_default();
                    patched.insert(key, current);
                }
                overlay::patch(key, patched.get_mut(key).expect("inserted above"), *offset, bytes)?;
            }
            for (key, value) in patched {
                s.writes.put(key, value);
            }
            Ok(())
        })
    }

    fn erase(&self, key: &str) -> Result<(), StoreError> {
        check_user_key(key)?;
        self.with("erase", key, |s| {
            s.writes.delete(key);
            Ok(())
        })
    }

    fn erase_prefix(&self, prefix: &str) -> Result<(), StoreError> {
        if prefix.starts_with(super::RESERVED_PREFIX) {
            return check_user_key(prefix);
        }
        if prefix.is_empty() {
            // Everything but the bookkeeping: each top-level name on its own.
            let names = self.list_dir("")?;
            for key in &names.keys {
                self.erase(key)?;
            }
            for child in names.prefixes {
                self.erase_prefix(&format!("{child}/"))?;
            }
            return Ok(());
        }
        if super::RESERVED_PREFIX.starts_with(prefix) {
            // "_", "__z"...: the user keys it covers, one by one (listings skip the bookkeeping).
            for key in self.list_prefix(prefix)? {
                self.erase(&key)?;
            }
            return Ok(());
        }
        self.with("erase_prefix", prefix, |s| {
            s.writes.erase_prefix(prefix);
            Ok(())
        })
    }
}

impl ListableStore for TxnStore {
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        self.with("list_prefix", prefix, |s| overlay::list_prefix(s.snapshot.as_ref(), Some(&s.writes), prefix))
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing, StoreError> {
        self.with("list_dir", prefix, |s| overlay::list_dir(s.snapshot.as_ref(), Some(&s.writes), prefix))
    }
}

impl Store for TxnStore {
    fn capabilities(&self) -> StoreCapabilities {
        self.db.capabilities(true)
    }

    fn kind(&self) -> &'static str {
        self.db.backend.name()
    }

    fn chunk_versions(&self, _sealed: Sealed) -> &ChunkVersions {
        &self.db.versions
    }
}

/// An implicit transaction opened by an auto-commit store for one array or group operation.
pub(super) struct TxnScope(pub(super) Transaction);

impl StoreScope for TxnScope {
    fn store(&self) -> Arc<dyn Store> {
        self.0.store()
    }

    fn finish(self: Box<Self>) -> Result<(), Error> {
        self.0.commit()
    }
}
