//! Compaction of an LMDB environment: a compacting copy of the latest commit replaces
//! `data.mdb`, and the environment is opened again on it.
//!
//! LMDB gives space back only by copying (`mdb_env_copy2` with `MDB_CP_COMPACT`: live pages
//! only, renumbered from the front). Every process with the environment open maps `data.mdb`
//! and would go on reading and writing the old file, so the compaction needs it to itself:
//! - Other processes: each holds a shared lock on byte 0 of `lock.mdb` while it has the
//!   environment open (LMDB's own). The compaction turns this process's into an exclusive one,
//!   which fails while any other process holds it ([`CompactError::InUse`]); held, it makes LMDB
//!   openers elsewhere wait.
//! - This process: the exclusive hold on the environment (`LmdbEngine::current`), which
//!   snapshots and write transactions share; an open one makes it `InUse` too.
//!
//! The copy goes to a file of this process's own, `.data.mdb.compacting.PID.N` in the folder,
//! created exclusively (nothing there is ever truncated or followed), given `data.mdb`'s owner,
//! group and mode, synced, renamed over `data.mdb`, and the folder synced: a crash leaves the old
//! file (and a stray copy in the database's folder, which the next compaction removes once its
//! process is gone) or the new one, whole.
//!
//! `lock.mdb` describes the old file (its last transaction id picks the meta page readers use;
//! a compacted copy starts again at transaction 1). An opener that waited in LMDB's lock and
//! then read it would pick the wrong meta page of the new file. So before the old environment
//! is closed (which lets go of the lock) the compaction clears the lock file's magic number: an
//! opener that waited fails with `MDB_INVALID` rather than read wrong pages, and the next one
//! that finds no lock held initialises the file anew (usually this process, opening the
//! compacted file). zarrdb's own openers never get that far: they wait before LMDB, on a shared
//! `flock` of `data.mdb` that the compaction holds exclusively until the new environment is
//! open, and then follow the rename ([`wait_for_compaction`]).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::time::{Duration, Instant};

use heed::CompactionOption;
use rustix::fs::FlockOperation;

use super::{lmdb_error, open_env, reopen_failed, walk, LmdbEngine, Settings, NAME};
use crate::error::{CompactError, OpenError, StoreError};
use crate::store::beside;

/// How long the compaction waits for openers of other processes to finish opening, and how long
/// it tries to open the compacted file while a process of another program still holds the lock.
const WAIT: Duration = Duration::from_secs(2);
const PAUSE: Duration = Duration::from_millis(10);

impl LmdbEngine {
    /// [`crate::store::kv::KvEngine::compact`] for LMDB.
    pub(super) fn compact_folder(&self, database: &str) -> Result<(), CompactError> {
        if self.settings.read_only {
            return Err(CompactError::ReadOnly { database: database.to_owned() });
        }
        let failed = |source| CompactError::Engine { database: database.to_owned(), source };
        let in_use = |holder| CompactError::InUse { database: database.to_owned(), holder };
        let mut log = self.log.lock();
        // Opens the environment first if an earlier compaction left it closed.
        drop(self.hold("compact").map_err(failed)?);
        let Some(mut current) = self.current.try_write() else {
            return Err(in_use("a read snapshot or transaction"));
        };
        let io = |what: &Path| {
            let key = what.display().to_string();
            move |source| StoreError::Io { operation: "compact", key, source }
        };
        let Some(_gate) = close_gate(&self.data).map_err(io(&self.data)).map_err(failed)? else {
            return Err(in_use("another process opening the database"));
        };
        let Some(opened) = current.as_mut() else { return Err(failed(closed())) };
        // With the commit log, once nothing but the copy can stop the compaction (this process holds LMDB's lock byte already): synced
        // and whole on the disk, nothing to recover, no pin (the environment closes). The
        // compacted file is checkpointed before the gate opens, below.
        if let Some(log) = log.as_mut() {
            self.checkpoint(opened, log).map_err(failed)?;
            log.unpin();
            let removed = super::log::remove_checkpoint(&self.path);
            removed.map_err(|source| failed(io(&self.path)(source)))?;
            log.log.remove();
        }
        let lock_path = self.path.join("lock.mdb");
        let lock_file = match opened.lock_file.take() {
            Some(file) => file,
            None => File::options().read(true).write(true).open(&lock_path).map_err(io(&lock_path)).map_err(failed)?,
        };
        let lock_file = &*opened.lock_file.insert(lock_file);
        if !lock_byte(lock_file, libc::F_WRLCK).map_err(io(&lock_path)).map_err(failed)? {
            return Err(in_use("another process"));
        }
        beside::remove_abandoned(&self.data, COPY, walk::is_lmdb_file);
        // The one name builds before used for the copy (the folder is the database's own).
        beside::remove_if_owned(&self.path.join(".data.mdb.compacting"), walk::is_lmdb_file);
        let copy = beside::unique_beside(&self.data, COPY);
        let mut made = None;
        let written = (|| {
            let file = beside::create_new(&copy, 0o600).map_err(io(&copy))?;
            let held = made.insert(file).try_clone().map_err(io(&copy))?;
            copy_compacted(&opened.env, held, &self.data, &copy)?;
            opened.mapping.check(NAME, "compact", &self.data.display().to_string())?;
            // Still the copy this process made: nothing put another file in its place.
            if !made.as_ref().is_some_and(|file| beside::names(&copy, file)) {
                return Err(io(&copy)(std::io::Error::other("the compacted copy was replaced by another file")));
            }
            std::fs::rename(&copy, &self.data).map_err(io(&copy))
        })();
        if let Err(e) = written {
            if let Some(file) = &made {
                let _ = beside::remove_held(&copy, file);
            }
            // Back to the shared lock LMDB holds (a change of lock type is atomic).
            if !self.settings.commit_log {
                let _ = lock_byte(lock_file, libc::F_RDLCK);
            }
            return Err(failed(e));
        }
        // The compacted file is in place; the old environment describes one no longer named.
        let synced = File::open(&self.path).and_then(|f| f.sync_all()).map_err(io(&self.path));
        let _ = lock_file.write_at(&[0; 4], 0);
        let map_size = opened.env.info().map_size;
        // Closes the old environment, then the lock file (declared after it).
        *current = None;
        let settings = Settings { map_size: Some(map_size), ..self.settings };
        let opened = reopen(&self.path, settings).map_err(reopen_failed("compact"));
        // Left `None` on failure: the next operation tries to open it again.
        let opened = current.insert(opened.map_err(failed)?);
        if let Some(log) = log.as_mut() {
            // The folder alone again, for the log (LMDB shared its lock when it opened), and a
            // checkpoint before the gate opens: an opener then finds the database held.
            match super::log::lock_alone(&self.path) {
                Ok(Some(lock)) => {
                    opened.lock_file = Some(lock);
                    self.checkpoint(opened, log).map_err(failed)?;
                }
                _ => log.stray(),
            }
        }
        synced.map_err(failed)
    }
}

/// Open the compacted file. A process of another program that waited in LMDB's lock may hold it
/// for a moment while it fails on the cleared lock file, and this open fails the same way.
fn reopen(path: &Path, settings: Settings) -> Result<super::Opened, OpenError> {
    let start = Instant::now();
    loop {
        match open_env(path, settings) {
            Err(OpenError::Corrupted { .. }) if start.elapsed() < WAIT => std::thread::sleep(PAUSE),
            other => return other,
        }
    }
}

/// Copy the latest commit of `env`, live pages only, into `file` (new, at `copy`), given the
/// owner, group and mode of `data` (the file it replaces), synced.
fn copy_compacted(
    env: &heed::Env<heed::WithoutTls>,
    mut file: File,
    data: &Path,
    copy: &Path,
) -> Result<(), StoreError> {
    let io = |operation| move |source| StoreError::Io { operation, key: copy.display().to_string(), source };
    beside::take_owner_and_mode(&file, data, 0o7777)
        .map_err(io("compact: give the copy the database's owner, group and mode"))?;
    env.copy_to_file(&mut file, CompactionOption::Enabled)
        .map_err(lmdb_error("compact", &copy.display().to_string()))?;
    file.sync_all().map_err(io("compact"))
}

/// What the copy's name says it is (see [`beside::unique_beside`]).
const COPY: &str = "compacting";

fn closed() -> StoreError {
    StoreError::Engine {
        backend: NAME,
        operation: "compact",
        key: String::new(),
        source: "the environment is closed".into(),
    }
}

/// Set this process's lock on byte 0 of `lock.mdb` (LMDB's lock) to `kind`, without waiting;
/// `false` when another process's lock conflicts.
pub(super) fn lock_byte(file: &File, kind: libc::c_int) -> std::io::Result<bool> {
    // SAFETY: `flock` is plain data; all-zero is a valid value, filled in below.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = kind as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = 0;
    lock.l_len = 1;
    loop {
        // SAFETY: the descriptor is open for the call (borrowed from `file`), and `lock` is a
        // valid `struct flock` that F_SETLK only reads.
        if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &lock) } == 0 {
            return Ok(true);
        }
        let error = std::io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EAGAIN | libc::EACCES) => return Ok(false),
            _ => return Err(error),
        }
    }
}

/// Hold `data.mdb` exclusively against zarrdb openers (see [`wait_for_compaction`]), waiting a
/// moment for those in the middle of opening; `None` if they do not finish.
pub(super) fn close_gate(data: &Path) -> std::io::Result<Option<File>> {
    let file = File::open(data)?;
    let start = Instant::now();
    loop {
        match rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(Some(file)),
            Err(rustix::io::Errno::WOULDBLOCK | rustix::io::Errno::INTR) if start.elapsed() < WAIT => {
                std::thread::sleep(PAUSE);
            }
            Err(rustix::io::Errno::WOULDBLOCK) => return Ok(None),
            Err(e) => return Err(e.into()),
        }
    }
}

/// Wait while a compaction in another process replaces `data` (a shared `flock` of the file,
/// which the compaction holds exclusively until the compacted file is open), and follow the
/// rename. The returned file holds the lock; it is dropped once the environment is open.
/// `None` when there is no file yet (LMDB creates it) or it cannot be read (LMDB reports that).
pub(super) fn wait_for_compaction(data: &Path) -> std::io::Result<Option<File>> {
    loop {
        let file = match File::open(data) {
            Ok(file) => file,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied) => {
                return Ok(None)
            }
            Err(e) => return Err(e),
        };
        loop {
            match rustix::fs::flock(&file, FlockOperation::LockShared) {
                Err(rustix::io::Errno::INTR) => continue,
                other => other?,
            }
            break;
        }
        // A compaction renamed its copy over the file this one opened: wait on that one.
        let held = file.metadata()?;
        match std::fs::metadata(data) {
            Ok(now) if now.ino() == held.ino() && now.dev() == held.dev() => return Ok(Some(file)),
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        }
    }
}
