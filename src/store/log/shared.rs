//! The commit log as the processes of redb's multi-writer mode would share it (branch
//! `shared-log`, step 2; not wired into the engine yet): the lock appends and checkpoints take,
//! and the records no engine commit holds yet, gathered for reads to merge over a snapshot.
//!
//! The lock is `flock` on an open file description of the log's own, not an
//! fcntl lock, which any close of the file by the process would drop; an in-process mutex in
//! front of it, since two threads sharing one description would both pass the `flock`.

use std::fs::File;
use std::io;
use std::path::Path;

use parking_lot::{Mutex, MutexGuard};
use rustix::fs::{flock, FlockOperation};

use super::file::{LogFile, Place};
use super::{follow, Applied};
use crate::error::StoreError;
use crate::store::pending::WriteSet;

/// The writers' lock of one log, for one process.
// Step 2 of the shared log: the engine does not take it yet.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct LogLock {
    file: File,
    threads: Mutex<()>,
}

/// The lock, held; released when dropped.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct Held<'a> {
    lock: &'a LogLock,
    _thread: MutexGuard<'a, ()>,
}

#[cfg_attr(not(test), allow(dead_code))]
impl LogLock {
    /// The lock of the log at `path`, on a description of its own.
    pub(crate) fn open(path: &Path) -> io::Result<LogLock> {
        let file = std::fs::OpenOptions::new().read(true).open(path)?;
        Ok(LogLock { file, threads: Mutex::new(()) })
    }

    /// Wait until no other thread of this process, and no other process, holds it.
    pub(crate) fn exclusive(&self) -> io::Result<Held<'_>> {
        let thread = self.threads.lock();
        flock(&self.file, FlockOperation::LockExclusive).map_err(io::Error::from)?;
        Ok(Held { lock: self, _thread: thread })
    }

    /// The lock if it is free now.
    pub(crate) fn try_exclusive(&self) -> io::Result<Option<Held<'_>>> {
        let Some(thread) = self.threads.try_lock() else { return Ok(None) };
        match flock(&self.file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(Held { lock: self, _thread: thread })),
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        // Closing the description would release it too; unlocking keeps the description.
        let _ = flock(&self.lock.file, FlockOperation::Unlock);
    }
}

/// The records of a log that follow what the engine holds.
#[cfg_attr(not(test), allow(dead_code))]
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
#[cfg_attr(not(test), allow(dead_code))]
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

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
        let (first, second) = (LogLock::open(&path).unwrap(), LogLock::open(&path).unwrap());
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
