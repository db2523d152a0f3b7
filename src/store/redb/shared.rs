//! redb's multi-writer mode over the shared commit log (`store/log/shared.rs`).
//!
//! redb makes every commit of that mode a two-phase commit with two syncs. Here a durable commit
//! of a small batch is one record appended to the log, under the log's lock, and one sync; a
//! checkpoint (a redb commit, durable) takes the records over when the log is full, a batch is too
//! large for it, an import begins, or a handle closes. Every redb commit of this mode takes the
//! log's lock first and applies the pending records before its own batch, and stores the position
//! after them (one past the last record: each redb commit takes a number, so a reader that sees
//! the position unchanged knows no checkpoint ran). Snapshots merge the records after their
//! position over redb's snapshot.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::log::{find_log, read_position, store_position, LogAt};
use super::snapshot::RedbSnapshot;
use super::tables::{Tables, TABLE, TAILS};
use super::{closing, unpanicked, RedbEngine, FAST_SYNC_INTERVAL, NAME};
use crate::error::StoreError;
use crate::store::kv::{engine_error, KvSnapshot, KvWriter, WriteBatch};
use crate::store::log::{default_log, Applied, Held, Position, SharedLog};
use crate::store::pending::Merged;

/// Where records must end in the shared log; a checkpoint starts it again. Each handle reads the
/// log whole once and then only what was appended since (`log/tail.rs`), and holds the records'
/// writes in memory, so this bounds that memory and a new handle's first read; the larger it is,
/// the fewer checkpoints (two syncs of the file each) commits share.
pub(crate) const CAPACITY: u64 = 4 << 20;

/// How many times a snapshot is taken again when a checkpoint moved the position while the log
/// was read: each time means another process committed to redb in between.
const SNAPSHOT_TRIES: usize = 1000;

/// The database's shared log: found by what the database names, or made and named now (a durable
/// redb commit, under redb's writer lock). At a writable open in the multi-writer mode; records
/// end within `capacity` bytes of it.
pub(super) fn establish(db: &redb::Database, path: &Path, capacity: u64) -> Result<SharedLog, StoreError> {
    for _ in 0..SNAPSHOT_TRIES {
        let (seen, found) = find_log(db, LogAt::File(path), true)?;
        let found = match (seen.stored, found) {
            (Some(applied), Some(found)) if found.is_current() => {
                match SharedLog::new(NAME, found, applied.id, capacity, true) {
                    Some(log) => return Ok(log),
                    None => None,
                }
            }
            (_, found) => found,
        };
        // Name a new log. Another process may name one meanwhile: then that one is taken.
        let mut txn = db.begin_write().map_err(engine_error(NAME, "open the commit log", ""))?;
        let made = {
            let mut tables = Tables::open(&txn)?;
            let (stored, name) = read_position(&tables.main)?;
            if (stored, &name) != (seen.stored, &seen.name) {
                None
            } else {
                let applied = stored.unwrap_or_else(Applied::fresh);
                let mut last = applied.seq;
                if let (Some(older), Some(_)) = (&found, stored) {
                    // An older build's log (single-process mode): its records first.
                    last = older
                        .follow(NAME, applied, u64::MAX, |batch| {
                            tables.write_batch(&batch)?;
                            Ok(true)
                        })?
                        .0;
                }
                let (log, name) = SharedLog::create(NAME, &default_log(path), path, applied.id, capacity)?;
                let position = Position { applied: Applied { seq: last + 1, ..applied }, name: Some(name) };
                if let Err(e) = store_position(&position, &mut tables.main, "open the commit log") {
                    log.remove();
                    return Err(e);
                }
                Some(log)
            }
        };
        let Some(log) = made else { continue };
        let committed = txn
            .set_durability(redb::Durability::Immediate)
            .map_err(engine_error(NAME, "set_durability", ""))
            .and_then(|()| txn.commit().map_err(engine_error(NAME, "open the commit log", "")));
        if let Err(e) = committed {
            log.remove();
            return Err(e);
        }
        if let Some(older) = found {
            older.remove();
        }
        return Ok(log);
    }
    Err(StoreError::Engine {
        backend: NAME,
        operation: "open the commit log",
        key: path.display().to_string(),
        source: "other processes kept naming the database's commit log anew".into(),
    })
}

/// The position stored in a snapshot of the file; `None` in a database that never stored one.
fn position_of(snapshot: &RedbSnapshot) -> Result<Option<Applied>, StoreError> {
    match &snapshot.table {
        Some(table) => Ok(read_position(table)?.0),
        None => Ok(None),
    }
}

impl RedbEngine {
    /// A snapshot of the file alone: redb's latest commit.
    pub(super) fn file_snapshot(&self) -> Result<RedbSnapshot, StoreError> {
        let shared = self.db.share("begin_read")?;
        let Some(db) = shared.reader() else { return Err(closing("begin_read")) };
        self.db.note(unpanicked("begin_read", "", || {
            let txn = db.begin_read().map_err(engine_error(NAME, "begin_read", ""))?;
            let open = |definition| match txn.open_table(definition) {
                Ok(t) => Ok(Some(t)),
                Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
                Err(e) => Err(engine_error(NAME, "open_table", "")(e)),
            };
            let (table, tails) = (open(TABLE)?, open(TAILS)?);
            Ok(RedbSnapshot { table, tails, _db: shared.clone() })
        }))
    }

    /// The position redb's latest commit holds.
    fn position_now(&self) -> Result<Option<Applied>, StoreError> {
        let shared = self.db.share("begin_read")?;
        let Some(db) = shared.reader() else { return Err(closing("begin_read")) };
        self.db.note(unpanicked("begin_read", "", || {
            let txn = db.begin_read().map_err(engine_error(NAME, "begin_read", ""))?;
            match txn.open_table(TABLE) {
                Ok(table) => Ok(read_position(&table)?.0),
                Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
                Err(e) => Err(engine_error(NAME, "open_table", "")(e)),
            }
        }))
    }

    /// The position redb's latest commit holds as a writer sees it, with the log's lock held. A
    /// writer that died in the middle of its commit can leave a commit that reads still do not
    /// show (redb publishes it only once its writer's flush is known to be done) and that the
    /// next write transaction takes as the latest: a write transaction, begun and dropped, makes
    /// redb publish it first, so that a record is never numbered after a position that a later
    /// checkpoint would then skip.
    pub(super) fn position_for_writing(&self, _held: &Held) -> Result<Applied, StoreError> {
        let txn = self.begin_write()?;
        let applied = self.db.note(unpanicked("begin_write", "", || {
            let applied = match txn.open_table(TABLE) {
                Ok(table) => read_position(&table)?.0,
                Err(redb::TableError::TableDoesNotExist(_)) => None,
                Err(e) => return Err(engine_error(NAME, "open_table", "")(e)),
            };
            applied.ok_or_else(no_position)
        }));
        let _ = txn.abort();
        applied
    }

    /// A snapshot of redb's latest commit with the log's records after it merged over it.
    pub(super) fn shared_snapshot(&self, log: &SharedLog) -> Result<Arc<dyn KvSnapshot>, StoreError> {
        for _ in 0..SNAPSHOT_TRIES {
            let base = self.file_snapshot()?;
            let Some(applied) = position_of(&base)? else { return Ok(Arc::new(base)) };
            let pending = log.pending(applied);
            // A checkpoint in between may have started the log again over the records read.
            if self.position_now()? != Some(applied) {
                continue;
            }
            let pending = pending?;
            if pending.last == applied.seq {
                return Ok(Arc::new(base));
            }
            return Ok(Arc::new(Merged { base: Arc::new(base), writes: pending.writes }));
        }
        Err(StoreError::Engine {
            backend: NAME,
            operation: "begin_read",
            key: log.describe(),
            source: "other processes' checkpoints kept moving the database while its commit log was read".into(),
        })
    }

    /// Commit `batch` with the log's lock `held`, redb's position read under it being `applied`
    /// ([`RedbEngine::position_for_writing`]): a record of the log when it fits, else a
    /// checkpoint that takes it too.
    pub(super) fn commit_shared(
        &self,
        log: &SharedLog,
        held: &Held,
        applied: Applied,
        batch: &WriteBatch,
        durable: bool,
    ) -> Result<(), StoreError> {
        let pending = log.pending(applied)?;
        let mut commits = self.commits.lock();
        let sync = durable || commits.last_sync.elapsed() >= FAST_SYNC_INTERVAL;
        if !batch.is_empty() && log.append(held, applied, &pending, batch, sync)? {
            if sync {
                commits.last_sync = Instant::now();
            }
            self.unsynced.store(!sync, Ordering::Release);
            return Ok(());
        }
        drop(commits);
        self.checkpoint(log, held, batch)
    }

    /// With the log's lock `held`, one durable redb commit of the pending records, then `batch`;
    /// nothing when there is nothing to write.
    pub(super) fn checkpoint(&self, log: &SharedLog, held: &Held, batch: &WriteBatch) -> Result<(), StoreError> {
        let mut txn = self.begin_write()?;
        let wrote = self.db.note(unpanicked("commit", "", || {
            let mut tables = Tables::open(&txn)?;
            let (next, pending) = take_over(log, held, &mut tables)?;
            if !pending && batch.is_empty() {
                return Ok(false);
            }
            tables.write_batch(batch)?;
            store_position(&Position { applied: next, name: None }, &mut tables.main, "commit")?;
            Ok(true)
        }))?;
        if !wrote {
            let _ = txn.abort();
            return Ok(());
        }
        self.db.note(unpanicked("commit", "", || {
            txn.set_durability(redb::Durability::Immediate).map_err(engine_error(NAME, "set_durability", ""))?;
            txn.commit().map_err(engine_error(NAME, "commit", ""))
        }))?;
        self.synced();
        Ok(())
    }
}

/// A database in the multi-writer mode whose file holds no position in its shared log: the log
/// is named together with a position, so the file is damaged.
fn no_position() -> StoreError {
    StoreError::Damaged {
        backend: NAME,
        operation: "commit",
        key: crate::store::log::APPLIED_KEY.to_owned(),
        what: "the database names a shared commit log but holds no position in it",
    }
}

/// In a redb write transaction begun with the log's lock `held`, apply the log's records after
/// the position the transaction holds. Returns the position this commit stores (one past the last
/// record), and whether any record was applied.
pub(super) fn take_over(log: &SharedLog, held: &Held, tables: &mut Tables<'_>) -> Result<(Applied, bool), StoreError> {
    let (Some(applied), _) = read_position(&tables.main)? else { return Err(no_position()) };
    let last = log.follow(held, applied, |batch| {
        tables.write_batch(&batch)?;
        Ok(true)
    })?;
    Ok((Applied { seq: last + 1, ..applied }, last > applied.seq))
}

/// A zarrdb transaction's (or a group commit's) hold on the database in the multi-writer mode:
/// the log's lock, from its beginning to its commit, so no other process commits in between.
pub(super) struct SharedWriter {
    pub(super) held: Held,
    /// redb's position when the lock was taken: nothing but this writer's commit moves it.
    pub(super) applied: Applied,
    pub(super) engine: Arc<RedbEngine>,
}

impl KvWriter for SharedWriter {
    fn commit(self: Box<Self>, batch: WriteBatch, durable: bool) -> Result<(), StoreError> {
        let Some(log) = &self.engine.shared else { unreachable!("made only with a shared log") };
        self.engine.commit_shared(log, &self.held, self.applied, &batch, durable)
    }
}

impl RedbEngine {
    /// An import's write transaction in the multi-writer mode: the log's lock, held until it
    /// commits or aborts, and the pending records applied first. Returns the position its commit
    /// stores.
    pub(super) fn begin_bulk(&self) -> Result<(redb::WriteTransaction, Held, Applied), StoreError> {
        let Some(log) = &self.shared else { unreachable!("begun only with a shared log") };
        let held = log.lock()?;
        let txn = self.begin_write()?;
        let next = self.db.note(unpanicked("begin_write", "", || {
            let mut tables = Tables::open(&txn)?;
            Ok(take_over(log, &held, &mut tables)?.0)
        }))?;
        Ok((txn, held, next))
    }

    /// Commit an import's write transaction (begun by [`RedbEngine::begin_bulk`]) durably,
    /// storing `next`.
    pub(super) fn commit_bulk(&self, mut txn: redb::WriteTransaction, next: Applied) -> Result<(), StoreError> {
        self.db.note(unpanicked("commit", "", || {
            store_position(&Position { applied: next, name: None }, &mut Tables::open(&txn)?.main, "commit")?;
            txn.set_durability(redb::Durability::Immediate).map_err(engine_error(NAME, "set_durability", ""))?;
            txn.commit().map_err(engine_error(NAME, "commit", ""))
        }))?;
        self.synced();
        Ok(())
    }

    /// A durable redb commit happened: every commit before it is on the disk.
    fn synced(&self) {
        self.unsynced.store(false, Ordering::Release);
        self.commits.lock().last_sync = Instant::now();
    }
}

#[cfg(test)]
#[path = "shared_tests.rs"]
mod tests;
