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

use super::file::{LogFile, Place};
use super::identity::{self, inode_of, Found, LogName, Owner};
use super::record::{encode, encoded_len, HEADER, LARGEST};
use super::{follow, Applied, GROWTH};
use crate::error::StoreError;
use crate::store::kv::WriteBatch;
use crate::store::pending::WriteSet;

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

/// The records of a log that follow what the engine holds.
pub(crate) struct Pending {
    /// Their writes, applied in order.
    pub writes: WriteSet,
    /// The sequence number of the last (the engine's own when there is none).
    pub last: u64,
    /// Where the next record goes (0 when there is none: the log's start).
    pub end: u64,
}

/// The records of the log in `file` (records from `start`) that follow `applied`, the position
/// the engine's snapshot holds: what a read of that snapshot merges over it.
pub(crate) fn pending(
    backend: &'static str,
    place: &Place,
    file: &dyn LogFile,
    start: u64,
    applied: Applied,
) -> Result<Pending, StoreError> {
    let mut writes = WriteSet::default();
    let (last, end) = follow(backend, place, file, start, applied, u64::MAX, |batch| {
        writes.apply(&batch);
        Ok(true)
    })?;
    Ok(Pending { writes, last, end })
}

/// A log file read into memory as far as its records are read, in reads of at least
/// [`WINDOW`] bytes that double: a log's records cost a few reads, not two each.
struct Windowed<'a> {
    head: Mutex<Vec<u8>>,
    file: &'a File,
    len: u64,
}

/// The first read of a log's records.
const WINDOW: u64 = 16 << 10;

impl LogFile for Windowed<'_> {
    fn len(&self) -> io::Result<u64> {
        Ok(self.len)
    }

    fn read_at(&self, out: &mut [u8], offset: u64) -> io::Result<()> {
        let end = offset.checked_add(out.len() as u64).filter(|&end| end <= self.len);
        let end = end.ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        let mut head = self.head.lock();
        let have = head.len() as u64;
        if end > have {
            let grown = end.max(have * 2).max(WINDOW).min(self.len);
            head.resize(grown as usize, 0);
            if let Err(e) = LogFile::read_at(self.file, &mut head[have as usize..], have) {
                head.truncate(have as usize);
                return Err(e);
            }
        }
        // Within `len`, which is at most what memory was given for `head`.
        out.copy_from_slice(&head[offset as usize..end as usize]);
        Ok(())
    }

    fn write_at(&self, _data: &[u8], _offset: u64) -> io::Result<()> {
        Err(io::Error::other("a log being read is not written"))
    }

    fn sync(&self) -> io::Result<()> {
        Ok(())
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
        let len = LogFile::len(&*self.file).map_err(|e| self.error("read the commit log", e))?;
        let log = Windowed { head: Mutex::new(Vec::new()), file: &self.file, len };
        pending(self.backend, &self.place, &log, self.start, applied)
    }

    /// Call `apply` with each record after `applied`, in order (a checkpoint, under the lock).
    /// Returns the sequence number of the last.
    pub(crate) fn follow(
        &self,
        _held: &Held,
        applied: Applied,
        apply: impl FnMut(WriteBatch) -> Result<bool, StoreError>,
    ) -> Result<u64, StoreError> {
        follow(self.backend, &self.place, &*self.file, self.start, applied, u64::MAX, apply).map(|(last, _)| last)
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
        if end > self.prepared.load(Ordering::Acquire) {
            // Another process may have grown it; zeros are written only past what is there, so
            // its records stay.
            let now = LogFile::len(&*self.file)?;
            if end > now {
                let grown = end.div_ceil(GROWTH) * GROWTH;
                let zeros = vec![0u8; GROWTH as usize];
                let mut at = now;
                while at < grown {
                    let n = (grown - at).min(GROWTH) as usize;
                    LogFile::write_at(&*self.file, &zeros[..n], at)?;
                    at += n as u64;
                }
                self.prepared.store(grown, Ordering::Release);
            } else {
                self.prepared.store(now, Ordering::Release);
            }
        }
        *begun = true;
        LogFile::write_at(&*self.file, record, offset)?;
        self.file.start_writeback(offset, record.len());
        Ok(())
    }

    /// Erase the header of the record at `offset`, so that nobody applies it.
    fn take_back(&self, offset: u64) {
        let erased = LogFile::write_at(&*self.file, &[0u8; HEADER], offset).and_then(|()| self.file.sync_data());
        if erased.is_err() {
            self.broken.store(true, Ordering::Release);
        }
    }

    /// `Err` once a failed append's record could not be taken back.
    pub(crate) fn usable(&self) -> Result<(), StoreError> {
        if !self.broken.load(Ordering::Acquire) {
            return Ok(());
        }
        let source = "an earlier commit failed after its record was written to the commit log, and the record \
                      could not be erased, so that commit's outcome is unknown: open the database again before \
                      committing more";
        Err(StoreError::Engine {
            backend: self.backend,
            operation: "commit",
            key: self.describe(),
            source: source.into(),
        })
    }

    /// Sync the log's file: what was appended without a sync is on the disk once this returns.
    pub(crate) fn sync(&self) -> Result<(), StoreError> {
        self.file.sync_data().map_err(|e| self.error("sync the commit log", e))
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

/// A fresh database id, for a database that has none yet.
pub(crate) fn fresh_id() -> u64 {
    Applied::fresh().id
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use super::{pending, LogLock};
    use crate::store::kv::WriteBatch;
    use crate::store::log::file::{LogFile, Place};
    use crate::store::log::record::encode;
    use crate::store::log::Applied;
    use crate::store::pending::Lookup;

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

    fn batch(puts: &[(&str, Option<&[u8]>)], erased: &[&str]) -> WriteBatch {
        let puts: BTreeMap<String, Option<Vec<u8>>> =
            puts.iter().map(|(k, v)| ((*k).to_owned(), v.map(<[u8]>::to_vec))).collect();
        WriteBatch { erased_prefixes: erased.iter().map(|p| (*p).to_owned()).collect(), puts }
    }

    #[test]
    fn records_after_the_engines_position_are_gathered_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db-log");
        let file = std::fs::File::options().read(true).write(true).create_new(true).open(&path).unwrap();
        let id = 7;
        let batches = [
            batch(&[("a/1", Some(b"one")), ("b", Some(b"b"))], &[]),
            batch(&[("a/2", Some(b"two"))], &[]),
            batch(&[("a/3", Some(b"three"))], &["a/"]),
            batch(&[("b", None)], &[]),
        ];
        let mut at = 0;
        let mut record = Vec::new();
        for (i, b) in batches.iter().enumerate() {
            encode(&mut record, b, id, i as u64 + 1);
            file.write_at(&record, at).unwrap();
            at += record.len() as u64;
        }
        // A torn record after them ends the log.
        encode(&mut record, &batch(&[("z", Some(b"torn"))], &[]), id, 5);
        file.write_at(&record[..record.len() - 1], at).unwrap();
        let place = Place::Path(path.clone());
        // The engine holds records 1 and 2: 3 (which erases a/ and then writes a/3) and 4 follow.
        let found = pending("redb", &place, &file, 0, Applied { id, seq: 2 }).unwrap();
        assert_eq!((found.last, found.end), (4, at));
        assert!(matches!(found.writes.lookup("a/1"), Lookup::Absent));
        assert!(matches!(found.writes.lookup("a/3"), Lookup::Value(b"three")));
        assert!(matches!(found.writes.lookup("b"), Lookup::Absent));
        assert!(matches!(found.writes.lookup("z"), Lookup::Unknown));
        // Another database's position takes none of them; one past them, none either.
        let other = pending("redb", &place, &file, 0, Applied { id: 8, seq: 0 }).unwrap();
        assert!(matches!(other.writes.lookup("a/3"), Lookup::Unknown));
        let none = pending("redb", &place, &file, 0, Applied { id, seq: 4 }).unwrap();
        assert_eq!(none.last, 4);
        assert!(matches!(none.writes.lookup("a/3"), Lookup::Unknown));
    }
}
