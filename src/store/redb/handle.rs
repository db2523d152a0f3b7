//! The open redb database, opened again after an I/O failure.
//!
//! redb latches the first failed read, write or sync of its file (a full disk, a disk error):
//! from then on every transaction, read or write, fails with "previous I/O error" until the
//! database is closed and opened again. A program that keeps its `Database` (a Python process
//! whose stores share one handle, a server) would be stuck with a handle that only fails, even
//! after space was freed. So an operation that fails on an I/O error marks the handle spent,
//! and the next operation opens the file again, which runs redb's recovery from the last durable
//! commit: what was acknowledged durably is there, the failed commit is not.
//!
//! The database is shared with the snapshots that read it ([`Open`]): redb fails every read of a
//! closed database, so one that was opened again, or replaced by a compacted copy, stays open
//! until the last snapshot reading it ends.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{MappedRwLockReadGuard, RwLock, RwLockReadGuard};

use super::{log, open_database, unpanicked, RedbOptions, NAME};
use crate::error::StoreError;
use crate::store::panic;

/// An open redb database; closing it (when the handle and every snapshot have let go) may panic
/// inside redb on a damaged file, which is caught.
pub(super) struct Open(Option<Db>);

/// The two kinds of redb handle.
enum Db {
    Writable(redb::Database),
    /// redb's own read-only handle, in its multi-writer mode (`RedbEngine::open_shared_reader`).
    Shared(redb::ReadOnlyDatabase),
}

impl Open {
    pub(super) fn new(db: redb::Database) -> Arc<Open> {
        Arc::new(Open(Some(Db::Writable(db))))
    }

    /// The database opened writable; `None` for a read-only handle and while it is being closed.
    pub(super) fn get(&self) -> Option<&redb::Database> {
        match &self.0 {
            Some(Db::Writable(db)) => Some(db),
            _ => None,
        }
    }

    /// The database to read, of either kind; `None` only while it is being closed.
    pub(super) fn reader(&self) -> Option<&dyn redb::ReadableDatabase> {
        match &self.0 {
            Some(Db::Writable(db)) => Some(db),
            Some(Db::Shared(db)) => Some(db),
            None => None,
        }
    }

    /// The database, to change or close it; only for the last holder.
    pub(super) fn get_mut(&mut self) -> Option<&mut redb::Database> {
        match &mut self.0 {
            Some(Db::Writable(db)) => Some(db),
            _ => None,
        }
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        if let Some(db) = self.0.take() {
            let _ = panic::catch(move || drop(db));
        }
    }
}

pub(super) struct Handle {
    /// `None` only after a reopen failed (the next operation tries again) and once closed.
    db: RwLock<Option<Arc<Open>>>,
    /// The file and options to open again; `None` for a handle that cannot be reopened (over an
    /// in-memory overlay or a simulated disk), which stays spent.
    reopen: Option<(PathBuf, RedbOptions)>,
    spent: AtomicBool,
    /// The last commit-log record the engine applied: opened again, the file takes the records
    /// up to it back from the log, not one a commit is writing meanwhile (`log.rs`).
    replay_limit: AtomicU64,
}

impl Handle {
    /// A handle on redb's own read-only handle: never opened again (nothing it does writes, so
    /// no failure of its own spends it).
    pub(super) fn shared_reader(db: redb::ReadOnlyDatabase) -> Handle {
        Handle {
            db: RwLock::new(Some(Arc::new(Open(Some(Db::Shared(db)))))),
            reopen: None,
            spent: AtomicBool::new(false),
            replay_limit: AtomicU64::new(u64::MAX),
        }
    }

    pub(super) fn new(db: redb::Database, reopen: Option<(PathBuf, RedbOptions)>) -> Handle {
        Handle {
            db: RwLock::new(Some(Open::new(db))),
            reopen,
            spent: AtomicBool::new(false),
            replay_limit: AtomicU64::new(u64::MAX),
        }
    }

    /// The engine applied the commit-log records up to `last`.
    pub(super) fn limit_replay(&self, last: u64) {
        self.replay_limit.store(last, Ordering::Release);
    }

    /// The database, opened again first if an I/O failure spent it.
    pub(super) fn get(&self, operation: &'static str) -> Result<MappedRwLockReadGuard<'_, redb::Database>, StoreError> {
        if self.spent.load(Ordering::Acquire) {
            self.reopen(operation)?;
        }
        RwLockReadGuard::try_map(self.db.read(), |db| db.as_deref().and_then(Open::get)).map_err(|_| closed(operation))
    }

    /// [`Handle::get`], as a share that keeps the database open for as long as it is held (a
    /// snapshot's).
    pub(super) fn share(&self, operation: &'static str) -> Result<Arc<Open>, StoreError> {
        if self.spent.load(Ordering::Acquire) {
            self.reopen(operation)?;
        }
        self.db.read().clone().filter(|db| db.reader().is_some()).ok_or_else(|| closed(operation))
    }

    fn reopen(&self, operation: &'static str) -> Result<(), StoreError> {
        let Some((path, options)) = &self.reopen else { return Ok(()) };
        let mut db = self.db.write();
        if !self.spent.load(Ordering::Acquire) {
            return Ok(()); // another thread reopened it meanwhile
        }
        // Closes it unless a snapshot still reads it; the file is opened anew either way.
        drop(db.take());
        *db = Some(open_at(path, *options, operation, self.replay_limit.load(Ordering::Acquire))?);
        self.spent.store(false, Ordering::Release);
        Ok(())
    }

    /// Run `f` on the database with no other operation of this process inside it: the
    /// exclusive lock waits for every running one to finish and holds off the next. `None`
    /// (and `f` not run) while a snapshot shares the database.
    pub(super) fn exclusive<T>(
        &self,
        operation: &'static str,
        f: impl FnOnce(&mut redb::Database) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        if self.spent.load(Ordering::Acquire) {
            self.reopen(operation)?;
        }
        let mut db = self.db.write();
        let db = db.as_mut().ok_or_else(|| closed(operation))?;
        let Some(db) = Arc::get_mut(db).and_then(Open::get_mut) else { return Ok(None) };
        self.note(f(db)).map(Some)
    }

    /// Pass `result` on, marking the handle spent when it failed on an I/O error.
    pub(super) fn note<T>(&self, result: Result<T, StoreError>) -> Result<T, StoreError> {
        if let Err(StoreError::Engine { backend: NAME, source, .. }) = &result {
            if is_io_failure(source.as_ref()) {
                self.spent.store(true, Ordering::Release);
            }
        }
        result
    }

    /// The file was renamed: open it again under `path`.
    pub(super) fn moved_to(&mut self, path: &std::path::Path) {
        if let Some((old, _)) = &mut self.reopen {
            *old = path.to_path_buf();
        }
    }

    /// The file and options it is opened again from, for handles that can be.
    pub(super) fn reopen_target(&self) -> Option<(PathBuf, RedbOptions)> {
        self.reopen.clone()
    }

    /// Put another file in the place of the open one: `swap` (run with every other operation of
    /// the process held off) renames it to the path, and the database is opened from there. The
    /// old database closes here, or when the last snapshot reading it ends. When the open fails
    /// after the swap, the handle is spent and the next operation opens the path again.
    pub(super) fn replace(
        &self,
        operation: &'static str,
        swap: impl FnOnce() -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let Some((path, options)) = &self.reopen else { return Ok(()) };
        let mut db = self.db.write();
        swap()?;
        self.spent.store(true, Ordering::Release);
        // Closes it unless a snapshot still reads it.
        drop(db.take());
        *db = Some(open_at(path, *options, operation, self.replay_limit.load(Ordering::Acquire))?);
        self.spent.store(false, Ordering::Release);
        Ok(())
    }

    /// The file's path, for handles that can be opened again.
    pub(super) fn path(&self) -> Option<&std::path::Path> {
        self.reopen.as_ref().map(|(path, _)| path.as_path())
    }

    /// Take the database out, to close it (once the snapshots that share it have ended).
    pub(super) fn take(&mut self) -> Option<Arc<Open>> {
        self.db.get_mut().take()
    }
}

/// Open the file at `path` again (`operation` names the cause in errors).
fn open_at(
    path: &std::path::Path,
    options: RedbOptions,
    operation: &'static str,
    replay_limit: u64,
) -> Result<Arc<Open>, StoreError> {
    let db = open_database(path, options, |builder| builder.open(path)).map_err(|e| StoreError::Engine {
        backend: NAME,
        operation,
        key: String::new(),
        source: Box::new(e),
    })?;
    // redb opened at its last durable commit: the commits applied since from the log come back.
    // In the multi-writer mode the log is shared: its records are read, and applied by the
    // next checkpoint under the log's lock, never replayed here.
    if !options.multi_writer {
        unpanicked(operation, "", || log::replay(&db, log::LogAt::File(path), false, replay_limit, false).map(|_| ()))?;
    }
    Ok(Open::new(db))
}

fn closed(operation: &'static str) -> StoreError {
    let source = "the database could not be opened again after an I/O error (see the previous error)";
    StoreError::Engine { backend: NAME, operation, key: String::new(), source: source.into() }
}

/// Whether `error` is redb's report of a failed read, write or sync of its file, or of one that
/// failed before.
fn is_io_failure(error: &(dyn std::error::Error + 'static)) -> bool {
    let storage = |e: &redb::StorageError| matches!(e, redb::StorageError::Io(_) | redb::StorageError::PreviousIo);
    if let Some(e) = error.downcast_ref::<redb::StorageError>() {
        return storage(e);
    }
    if let Some(redb::TransactionError::Storage(e)) = error.downcast_ref::<redb::TransactionError>() {
        return storage(e);
    }
    if let Some(redb::CommitError::Storage(e)) = error.downcast_ref::<redb::CommitError>() {
        return storage(e);
    }
    if let Some(redb::TableError::Storage(e)) = error.downcast_ref::<redb::TableError>() {
        return storage(e);
    }
    error.source().is_some_and(is_io_failure)
}
