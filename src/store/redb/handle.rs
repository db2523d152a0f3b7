//! The open redb database, opened again after an I/O failure.
//!
//! redb latches the first failed read, write or sync of its file (a full disk, a disk error):
//! from then on every transaction, read or write, fails with "previous I/O error" until the
//! database is closed and opened again. A program that keeps its `Database` (a Python process
//! whose stores share one handle, a server) would be stuck with a handle that only fails, even
//! after space was freed. So an operation that fails on an I/O error marks the handle spent,
//! and the next operation opens the file again, which runs redb's recovery from the last durable
//! commit: what was acknowledged durably is there, the failed commit is not.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::{MappedRwLockReadGuard, RwLock, RwLockReadGuard};

use super::{open_database, RedbOptions, NAME};
use crate::error::StoreError;
use crate::store::panic;

pub(super) struct Handle {
    /// `None` only after a reopen failed (the next operation tries again) and once closed.
    db: RwLock<Option<redb::Database>>,
    /// The file and options to open again; `None` for a handle that cannot be reopened (over an
    /// in-memory overlay or a simulated disk), which stays spent.
    reopen: Option<(PathBuf, RedbOptions)>,
    spent: AtomicBool,
}

impl Handle {
    pub(super) fn new(db: redb::Database, reopen: Option<(PathBuf, RedbOptions)>) -> Handle {
        Handle { db: RwLock::new(Some(db)), reopen, spent: AtomicBool::new(false) }
    }

    /// The database, opened again first if an I/O failure spent it.
    pub(super) fn get(&self, operation: &'static str) -> Result<MappedRwLockReadGuard<'_, redb::Database>, StoreError> {
        if self.spent.load(Ordering::Acquire) {
            self.reopen(operation)?;
        }
        RwLockReadGuard::try_map(self.db.read(), Option::as_ref).map_err(|_| closed(operation))
    }

    fn reopen(&self, operation: &'static str) -> Result<(), StoreError> {
        let Some((path, options)) = &self.reopen else { return Ok(()) };
        let mut db = self.db.write();
        if !self.spent.load(Ordering::Acquire) {
            return Ok(()); // another thread reopened it meanwhile
        }
        // Closing may panic inside redb after a failure; the file is opened anew either way.
        if let Some(old) = db.take() {
            let _ = panic::catch(move || drop(old));
        }
        let reopened = open_database(path, *options, |builder| builder.open(path)).map_err(|e| StoreError::Engine {
            backend: NAME,
            operation,
            key: String::new(),
            source: Box::new(e),
        })?;
        *db = Some(reopened);
        self.spent.store(false, Ordering::Release);
        Ok(())
    }

    /// Run `f` on the database with no other operation of this process inside it: the
    /// exclusive lock waits for every running one to finish and holds off the next.
    pub(super) fn exclusive<T>(
        &self,
        operation: &'static str,
        f: impl FnOnce(&mut redb::Database) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if self.spent.load(Ordering::Acquire) {
            self.reopen(operation)?;
        }
        let mut db = self.db.write();
        let db = db.as_mut().ok_or_else(|| closed(operation))?;
        self.note(f(db))
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

    /// The file's path, for handles that can be opened again.
    pub(super) fn path(&self) -> Option<&std::path::Path> {
        self.reopen.as_ref().map(|(path, _)| path.as_path())
    }

    /// Take the database out, to close it.
    pub(super) fn take(&mut self) -> Option<redb::Database> {
        self.db.get_mut().take()
    }
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
