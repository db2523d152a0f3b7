//! The commit log as the processes of redb's multi-writer mode share it (docs/architecture.md,
//! "The shared commit log"): a durable commit is a record appended under a lock every process
//! takes, and synced; the engine's own commits (checkpoints) take the records over.
//!
//! The lock is `flock` on the open file description of the log this handle holds, not an fcntl
//! lock, which any close of the file by the process would drop; an in-process mutex in front of
//! it, since two threads sharing one description would both pass the `flock`. It is the writers'
//! lock of the whole database: every commit to the engine in this mode takes it first, so no
//! engine commit is ordered before a record that is already in the log.
//!
//! Readers take no lock. They read the engine's position `S` (the last record it holds), then
//! the records after it, then `S` again: only a checkpoint moves `S`, and only after it has
//! moved does the log start again at its beginning, so an unchanged `S` means the records read
//! were the ones that follow it.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{ArcMutexGuard, Mutex, RawMutex};
use rustix::fs::{flock, FlockOperation};

use super::file::grow_with_zeros;
use super::file::{LogFile, Place};
use super::identity::{self, inode_of, Found, LogName, Owner};
use super::record::{encode, encoded_len, erase_header, LARGEST};
use super::tail::{Pending, Tail};
use super::{follow, outcome_unknown, Applied, From};
use crate::error::StoreError;
use crate::store::kv::WriteBatch;

/// The writers' lock of one log, for one handle.
pub(crate) struct LogLock {
    file: Arc<File>,
    threads: Arc<Mutex<()>>,
}

/// The lock, held; released when dropped.
pub(crate) struct Held {
    lock: Arc<LogLock>,
    _thread: ArcMutexGuard<RawMutex, ()>,
}

impl LogLock {
    /// The lock on the log's open file description `file`.
    pub(crate) fn new(file: Arc<File>) -> Arc<LogLock> {
        Arc::new(LogLock { file, threads: Arc::new(Mutex::new(())) })
    }

    /// Wait until no other thread of this handle, and no other description (another handle, another
    /// process), holds it.
    pub(crate) fn exclusive(self: &Arc<Self>) -> io::Result<Held> {
        let thread = self.threads.lock_arc();
        loop {
            match flock(&*self.file, FlockOperation::LockExclusive) {
                Ok(()) => return Ok(Held { lock: self.clone(), _thread: thread }),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The lock if it is free now.
    pub(crate) fn try_exclusive(self: &Arc<Self>) -> io::Result<Option<Held>> {
        let Some(thread) = self.threads.try_lock_arc() else { return Ok(None) };
        match flock(&*self.file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(Held { lock: self.clone(), _thread: thread })),
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // Closing the description would release it too; unlocking keeps the description.
        let _ = flock(&*self.lock.file, FlockOperation::Unlock);
    }
}

/// The shared log of one database, as one handle holds it.
pub(crate) struct SharedLog {
    backend: &'static str,
    place: Place,
    file: Arc<File>,
    /// Where records start.
    start: u64,
    /// A record must end within this many bytes; a batch that would not is taken over by a
    /// checkpoint instead.
    capacity: u64,
    /// The writers' lock; `None` on a read-only handle, which never writes the log.
    lock: Option<Arc<LogLock>>,
    /// The database's id, which every record carries.
    id: u64,
    /// How much of the file is known to be written (zeros or records): it only grows.
    prepared: AtomicU64,
    /// A failed append's record could not be taken back: its outcome is unknown until a reopen.
    broken: AtomicBool,
    /// The records after the engine's position, as this handle last read them.
    tail: Tail,
}

impl SharedLog {
    /// The log `found` (of this build, with a header) of the database `id`; `writable` takes its
    /// lock for appends and checkpoints.
    pub(crate) fn new(
        backend: &'static str,
        found: Found,
        id: u64,
        capacity: u64,
        writable: bool,
    ) -> Option<SharedLog> {
        let (path, file) = found.held?;
        Some(SharedLog::at(backend, path, file, found.start, id, capacity, writable))
    }

    fn at(
        backend: &'static str,
        path: PathBuf,
        file: Arc<File>,
        start: u64,
        id: u64,
        capacity: u64,
        writable: bool,
    ) -> SharedLog {
        let prepared = LogFile::len(&*file).unwrap_or(0);
        SharedLog {
            backend,
            place: Place::Path(path),
            lock: writable.then(|| LogLock::new(file.clone())),
            file,
            start,
            capacity,
            id,
            prepared: AtomicU64::new(prepared),
            broken: AtomicBool::new(false),
            tail: Tail::default(),
        }
    }

    /// Make a new log of the database `id`, whose file is `model`, at `default`, or beside it
    /// under a name of its own when something else has that name (which is left alone). The
    /// database names it by a durable commit of the returned name; until then nobody appends.
    pub(crate) fn create(
        backend: &'static str,
        default: &Path,
        model: &Path,
        id: u64,
        capacity: u64,
    ) -> Result<(SharedLog, LogName), StoreError> {
        let owner = |log| Owner { database: id, log, inode: inode_of(model) };
        let mut log_id = Applied::fresh().id;
        let mut path = default.to_owned();
        let made = match identity::create(&path, owner(log_id), model) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                log_id = Applied::fresh().id;
                let mut other = default.as_os_str().to_owned();
                other.push(format!(".{log_id:016x}"));
                path = PathBuf::from(other);
                identity::create(&path, owner(log_id), model)
            }
            made => made,
        };
        let failed = |e| StoreError::Engine {
            backend,
            operation: "create the commit log",
            key: path.display().to_string(),
            source: Box::new(e),
        };
        let file = made.map_err(failed)?;
        let name = LogName { id: log_id, path: path.clone() };
        Ok((SharedLog::at(backend, path, file, identity::START, id, capacity, true), name))
    }

    /// The log's file, for errors.
    pub(crate) fn describe(&self) -> String {
        self.place.describe()
    }

    /// The writers' lock, waited for.
    pub(crate) fn lock(&self) -> Result<Held, StoreError> {
        let Some(lock) = &self.lock else { return Err(self.read_only()) };
        lock.exclusive().map_err(|e| self.error("lock the commit log", e))
    }

    /// The writers' lock if it is free now.
    pub(crate) fn try_lock(&self) -> Result<Option<Held>, StoreError> {
        let Some(lock) = &self.lock else { return Err(self.read_only()) };
        lock.try_exclusive().map_err(|e| self.error("lock the commit log", e))
    }

    /// The records after `applied`.
    pub(crate) fn pending(&self, applied: Applied) -> Result<Pending, StoreError> {
        self.tail.read(self.backend, &self.place, &self.file, self.start, applied)
    }

    /// Call `apply` with each record after `applied`, in order (a checkpoint, under the lock).
    /// Returns the sequence number of the last.
    pub(crate) fn follow(
        &self,
        _held: &Held,
        applied: Applied,
        apply: impl FnMut(WriteBatch) -> Result<bool, StoreError>,
    ) -> Result<u64, StoreError> {
        follow(self.backend, &self.place, &*self.file, From::Start(self.start), applied, u64::MAX, apply)
            .map(|f| f.last)
    }

    /// Write `batch` as the record after `pending` (the records after the engine's position
    /// `applied`), and wait for the disk when `sync`. `Ok(false)`, with nothing written, when it
    /// does not fit in the log: a checkpoint takes it. On failure nothing was committed.
    pub(crate) fn append(
        &self,
        _held: &Held,
        applied: Applied,
        pending: &Pending,
        batch: &WriteBatch,
        sync: bool,
    ) -> Result<bool, StoreError> {
        self.usable()?;
        let len = encoded_len(batch);
        // With nothing pending, every record in the file is held by the engine: start again.
        let offset = if pending.last == applied.seq { self.start } else { pending.end };
        if len > LARGEST || offset + len as u64 > self.capacity {
            return Ok(false);
        }
        let mut record = Vec::with_capacity(len);
        encode(&mut record, batch, self.id, pending.last + 1);
        let mut begun = false;
        let written = self.write_record(&record, offset, &mut begun).and_then(|()| match sync {
            true => self.file.sync_data(),
            false => Ok(()),
        });
        if let Err(e) = written {
            if begun {
                self.take_back(offset);
            }
            return Err(self.error("write the commit log", e));
        }
        Ok(true)
    }

    fn write_record(&self, record: &[u8], offset: u64, begun: &mut bool) -> io::Result<()> {
        let end = offset + record.len() as u64;
        // A new round of the log looks at the file again: another process may have cut it since
        // this handle last grew it (`shrink`), and writing past its end would leave every sync to
        // change its length.
        if offset == self.start || end > self.prepared.load(Ordering::Acquire) {
            // Another process may have grown it; zeros are written only past what is there, so
            // its records stay.
            let now = LogFile::len(&*self.file)?;
            let prepared = if end > now { grow_with_zeros(&*self.file, now, end)? } else { now };
            self.prepared.store(prepared, Ordering::Release);
        }
        *begun = true;
        LogFile::write_at(&*self.file, record, offset)?;
        self.file.start_writeback(offset, record.len());
        Ok(())
    }

    /// Erase the header of the record at `offset`, so that nobody applies it.
    fn take_back(&self, offset: u64) {
        if erase_header(&*self.file, offset).is_err() {
            self.broken.store(true, Ordering::Release);
        }
    }

    /// `Err` once a failed append's record could not be taken back.
    pub(crate) fn usable(&self) -> Result<(), StoreError> {
        if !self.broken.load(Ordering::Acquire) {
            return Ok(());
        }
        Err(outcome_unknown(self.backend, &self.place))
    }

    /// Sync the log's file: what was appended without a sync is on the disk once this returns.
    pub(crate) fn sync(&self) -> Result<(), StoreError> {
        self.file.sync_data().map_err(|e| self.error("sync the commit log", e))
    }

    /// With the lock `held` and every record taken over by the engine, give the file's space
    /// back: the log starts again at its beginning, and its file grows again as records come.
    /// A reader meanwhile finds no record where the file ends (`tail::read_up_to`); a crash
    /// that loses the shrink leaves records the engine already holds, which are skipped.
    pub(crate) fn shrink(&self, _held: &Held) -> Result<(), StoreError> {
        self.file.set_len(self.start).map_err(|e| self.error("shrink the commit log", e))?;
        self.prepared.store(self.start, Ordering::Release);
        Ok(())
    }

    /// Remove the file, if its name still names it (the database holds every record in it).
    pub(crate) fn remove(self) {
        if let Place::Path(path) = &self.place {
            let _ = crate::store::beside::remove_held(path, &self.file);
        }
    }

    fn read_only(&self) -> StoreError {
        StoreError::Unsupported { store: "read-only database", operation: "write the commit log" }
    }

    fn error(&self, operation: &'static str, source: io::Error) -> StoreError {
        StoreError::Engine { backend: self.backend, operation, key: self.describe(), source: Box::new(source) }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::LogLock;

    #[test]
    fn the_lock_excludes_another_description_and_another_thread_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db-log");
        std::fs::write(&path, b"").unwrap();
        let open = || Arc::new(std::fs::File::open(&path).unwrap());
        let (first, second) = (LogLock::new(open()), LogLock::new(open()));
        let held = first.exclusive().unwrap();
        assert!(second.try_exclusive().unwrap().is_none(), "another description");
        assert!(first.try_exclusive().unwrap().is_none(), "another thread of the same description");
        drop(held);
        let again = second.try_exclusive().unwrap();
        assert!(again.is_some());
        assert!(first.try_exclusive().unwrap().is_none());
    }
}
