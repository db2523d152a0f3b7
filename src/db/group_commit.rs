//! Group commit: the region writes that finish while another commit is under way are committed
//! together, in one engine transaction and one fsync.
//!
//! A durable commit costs an fsync, so writers that each commit alone cannot exceed the disk's
//! fsync rate however many there are. Here a finishing writer queues its batch and its checks,
//! then either becomes the leader (it takes the writer lock and commits everything queued) or
//! waits until a leader has committed its batch. Each writer returns only once its own batch is
//! committed, as durable as the database's mode promises.
//!
//! The leader checks each queued batch as its writer would have (`data_scope.rs`): the chunk
//! versions it noted must be unchanged, and no batch accepted earlier in the same group may have
//! written a chunk it checks, since those bumps happen only after the shared commit. A batch that
//! fails is left out and its writer runs its region write again.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::data_scope::Check;
use super::race;
use super::transaction::{commit_batch, WriterGuard};
use super::DbShared;
use crate::error::{Error, StoreError};
use crate::store::chunk_versions::fingerprint;
use crate::store::kv::WriteBatch;

/// The queue of batches waiting for a leader, shared by one database's writers.
#[derive(Default)]
pub(super) struct GroupCommit {
    queue: Mutex<Vec<Arc<Queued>>>,
    /// Data scopes begun and not yet queued (or dropped): writers a leader may wait for.
    open: AtomicUsize,
    /// Signalled when a batch is queued or a scope closes without one.
    arrived: Condvar,
    /// How many batches the last group committed.
    last_size: AtomicUsize,
}

/// How long a leader waits for writers still preparing their batch: about as long as an fsync
/// takes, so a group that waits for a few more writers still commits them sooner than they
/// would commit one after another (docs/benchmarks.md, "Group commit wake-ups").
const GATHER: Duration = Duration::from_micros(500);

/// One writer's batch in the queue.
struct Queued {
    batch: Mutex<Option<WriteBatch>>,
    /// Chunks read for read-modify-writes and the versions noted before reading them.
    checks: Vec<Check>,
    /// `Some(Ok(true))` committed, `Some(Ok(false))` left out on a failed check, `Some(Err)` the
    /// shared commit failed (its error, shared by every writer of the group).
    outcome: Mutex<Option<Result<bool, Arc<Error>>>>,
    /// The writer's thread, woken on its own once the outcome is known or the writer lock is
    /// free: a condition variable shared by all would wake them one after another, each taking
    /// its mutex in turn.
    thread: std::thread::Thread,
}

impl GroupCommit {
    /// A data scope begins: a writer that will queue a batch soon.
    pub(super) fn opened(&self) {
        self.open.fetch_add(1, Ordering::AcqRel);
    }

    /// The writer lock came free: wake the oldest queued writer, which will lead next.
    pub(super) fn wake_next(&self) {
        if let Some(next) = self.queue.lock().first() {
            next.thread.unpark();
        }
    }

    /// A data scope queued its batch or ended without one.
    pub(super) fn closed(&self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
        let _queue = self.queue.lock();
        self.arrived.notify_all();
    }

    /// Commit `batch` with whatever else is queued; `false` when a check failed and nothing of it
    /// was written.
    pub(super) fn commit(db: &Arc<DbShared>, batch: WriteBatch, checks: Vec<Check>) -> Result<bool, Error> {
        let me = Arc::new(Queued {
            batch: Mutex::new(Some(batch)),
            checks,
            outcome: Mutex::new(None),
            thread: std::thread::current(),
        });
        db.group.queue.lock().push(me.clone());
        db.group.closed();
        loop {
            if let Some(outcome) = me.outcome.lock().take() {
                return outcome.map_err(|shared| shared_failure(db.backend.name(), shared));
            }
            if let Some(writer) = WriterGuard::try_acquire(db, Duration::ZERO) {
                // The leader's own batch is in the group: its outcome is read above.
                // Releasing the writer lock at its end wakes the oldest writer still queued.
                lead(db, writer);
                continue;
            }
            if let Err(e) = db.would_deadlock() {
                // This thread holds the writer lock lower in its stack, so no leader can take
                // this batch: withdraw it, and nothing of it is written.
                db.group.queue.lock().retain(|q| !Arc::ptr_eq(q, &me));
                return Err(e);
            }
            if me.outcome.lock().is_none() {
                // Woken by the leader that commits this batch, or when the writer lock comes free
                // (`WriterGuard`'s drop); the timeout covers a wake-up another thread's park took
                // (a pool job this thread ran in `rayon::yield_now`).
                std::thread::park_timeout(Duration::from_millis(1));
            }
            // A thread of rayon's pool keeps the pool going while it waits (see `WriterGuard`).
            rayon::yield_now();
        }
    }
}

/// The error a writer of a group whose commit failed with `shared` gets: a full disk is reported
/// as one to every writer (each can tell it from other failures), anything else as the engine's
/// failure to commit; either way the source is the commit's own error.
fn shared_failure(backend: &'static str, shared: Arc<Error>) -> Error {
    if let Error::Store(StoreError::DiskFull { backend, operation, path, available, .. }) = shared.as_ref() {
        let (backend, operation, path, available) = (*backend, *operation, path.clone(), *available);
        return StoreError::DiskFull { backend, operation, path, available, source: Box::new(EngineCause(shared)) }
            .into();
    }
    StoreError::Engine { backend, operation: "commit", key: String::new(), source: Box::new(shared) }.into()
}

/// The engine's error under a full disk that a group's commit met, shared by its writers.
#[derive(Debug)]
struct EngineCause(Arc<Error>);

impl EngineCause {
    fn cause(&self) -> &(dyn std::error::Error + 'static) {
        match self.0.as_ref() {
            Error::Store(StoreError::DiskFull { source, .. }) => source.as_ref(),
            other => other,
        }
    }
}

impl std::fmt::Display for EngineCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self.cause(), f)
    }
}

impl std::error::Error for EngineCause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause().source()
    }
}

/// With the writer lock held (`_writer`), commit everything queued as one batch. Every batch
/// taken from the queue gets an outcome, whatever fails, so no writer waits for one forever.
fn lead(db: &Arc<DbShared>, _writer: WriterGuard) {
    let group: Vec<Arc<Queued>> = {
        // Writers still preparing a batch will queue it within moments: wait for them, briefly,
        // so they share this commit instead of each waiting for the next.
        let deadline = Instant::now() + GATHER;
        let mut queue = db.group.queue.lock();
        // When commits do not wait for the disk (redb's fast mode) there is no fsync to share,
        // and when they wait briefly (redb's commit log) little: waiting would only delay this
        // writer (measured in docs/benchmarks.md, "Group commit without an fsync" and "Group
        // commit wake-ups"). Writers that queue meanwhile still share the commit.
        let gathers = db.engine.commit_gathers(db.durable);
        let expected = db.group.last_size.load(Ordering::Acquire);
        while gathers
            && (db.group.open.load(Ordering::Acquire) > 0 || queue.len() < expected)
            && Instant::now() < deadline
        {
            db.group.arrived.wait_until(&mut queue, deadline);
        }
        db.group.last_size.store(queue.len(), Ordering::Release);
        std::mem::take(&mut *queue)
    };
    if group.is_empty() {
        return;
    }
    let failed = commit_group(db, &group).err().map(Arc::new);
    for queued in &group {
        let mut outcome = queued.outcome.lock();
        if outcome.is_none() {
            *outcome = Some(failed.clone().map_or(Ok(true), Err));
        }
        drop(outcome);
        queued.thread.unpark();
    }
}

/// Check every batch of `group`, give the ones that fail their outcome, and commit the others as
/// one engine transaction.
fn commit_group(db: &DbShared, group: &[Arc<Queued>]) -> Result<(), Error> {
    let races = db.engine.commits_race();
    let mut committed = commit_group_once(db, group, races);
    let mut retry = race::Retry::new();
    // Another writer moved a bucket database's head: check the batches again against the new
    // head, as a leader does, and commit the ones that pass over it.
    while races && race::lost(&committed) && retry.again() {
        committed = commit_group_once(db, group, races);
    }
    committed
}

/// One try of [`commit_group`]. When the commit may lose a race (`races`), each batch stays in
/// its queue entry for the next try.
fn commit_group_once(db: &DbShared, group: &[Arc<Queued>], races: bool) -> Result<(), Error> {
    let engine_writer = db.engine.clone().lock_writer()?;
    // With the engine's writer lock held no other process commits, so this snapshot is what the
    // batches will be applied over. Only checks read it: a group of plain sets (zarr-python's
    // chunk writes) skips opening it, which in redb's multi-writer mode re-reads the file header.
    let checked = group.iter().any(|queued| !queued.checks.is_empty());
    let stored = if checked && db.engine.shared_between_processes() { Some(db.engine.snapshot()?) } else { None };
    let mut merged = WriteBatch::default();
    let mut written: HashSet<String> = HashSet::new();
    for queued in group {
        if queued.outcome.lock().is_some() {
            continue;
        }
        let mut ok = true;
        for check in &queued.checks {
            ok = db.versions.current(&check.key) == check.version && !written.contains(&check.key);
            if let (true, Some(stored)) = (ok, &stored) {
                ok = fingerprint(stored.get(&check.key)?.as_deref()) == check.read;
            }
            if !ok {
                break;
            }
        }
        if !ok {
            *queued.outcome.lock() = Some(Ok(false));
            continue;
        }
        let batch = match races {
            true => queued.batch.lock().clone().unwrap_or_default(),
            false => queued.batch.lock().take().unwrap_or_default(),
        };
        // Region writes never erase prefixes (`DataStore::erase_prefix` erases key by key), so the
        // batches merge by key, later ones over earlier ones.
        merged.erased_prefixes.extend(batch.erased_prefixes);
        for (key, value) in batch.puts {
            written.insert(key.clone());
            merged.puts.insert(key, value);
        }
    }
    if merged.is_empty() {
        return Ok(());
    }
    // A snapshot held open would keep LMDB from growing its map, should the commit need it.
    drop(stored);
    commit_batch(db, engine_writer, merged)
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;
    use std::sync::Arc;

    use super::shared_failure;
    use crate::error::{Error, StoreError};

    #[test]
    fn every_writer_of_a_failed_group_gets_the_typed_cause() {
        let full = || -> Error {
            StoreError::DiskFull {
                backend: "redb",
                operation: "commit",
                path: "/data/run.zarrdb".into(),
                available: 0,
                source: Box::new(std::io::Error::from(std::io::ErrorKind::StorageFull)),
            }
            .into()
        };
        let shared = Arc::new(full());
        for _writer in 0..2 {
            let got = shared_failure("redb", shared.clone());
            assert!(matches!(got, Error::Store(StoreError::DiskFull { available: 0, .. })), "{got:?}");
            assert_eq!(got.to_string(), full().to_string(), "the message says it once, as the commit's own did");
            let cause = got.source().expect("the engine's error is kept");
            assert_eq!(cause.to_string(), std::io::Error::from(std::io::ErrorKind::StorageFull).to_string());
        }

        let damaged = Arc::new(Error::from(StoreError::Damaged {
            backend: "lmdb",
            operation: "commit",
            key: "a/c/0".into(),
            what: "a page out of order",
        }));
        let got = shared_failure("lmdb", damaged);
        let Error::Store(StoreError::Engine { source, .. }) = &got else { panic!("{got:?}") };
        assert!(source.to_string().contains("a page out of order"), "{got}");
        assert!(source.downcast_ref::<Arc<Error>>().is_some(), "the commit's error itself, not its text");
    }
}
