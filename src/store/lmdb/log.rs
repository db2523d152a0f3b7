//! LMDB behind the commit log (`store/log/`), for a database one process has open alone
//! ([`crate::DatabaseBuilder::lmdb_commit_log`]).
//!
//! Why: LMDB's durable commit syncs twice, the data pages and then the meta page, so one writer
//! reached 0.37-0.41 of the disk's 4 KiB write + fdatasync rate (docs/benchmarks.md, "LMDB behind
//! a commit log"). Here the environment runs with `MDB_NOSYNC`, and a durable commit of a small
//! batch writes and syncs its record in `zarrdb-log` before its LMDB commit: one sync.
//!
//! A crash of the operating system may leave any page LMDB wrote since its last sync half on
//! the disk, the meta pages included, so the tree the newest meta page names may be torn. A
//! checkpoint makes a state whose pages cannot be touched until the next one:
//! 1. `mdb_env_sync`: every page of the latest commit, and its meta page, is on the disk;
//! 2. both meta pages are copied into `zarrdb-checkpoint` (written beside, synced, renamed over
//!    the old one, folder synced);
//! 3. a read transaction on that commit is kept open (the pin): LMDB reuses no page a live
//!    reader can see, so no later commit overwrites a page of the checkpoint's tree.
//!
//! Without the pin, a simulated crash after three commits past the checkpoint gave wrong values,
//! and once a segmentation fault in LMDB; with it, 1,000 of 1,000 crash images made by a
//! throwaway program read back the checkpoint exactly (docs/benchmarks.md), and so do the 12 of
//! `tests/lmdb_commit_log.rs`. After a crash the next open writes the saved meta
//! pages back into `data.mdb` before LMDB maps it, which puts the database at the checkpoint,
//! and applies the log's records after it ([`replay`]). Commits that do not go through the log
//! (large batches, imports) are followed by a checkpoint before they return; a full log is
//! checkpointed before the next record; a compaction syncs and removes the checkpoint (nothing
//! to recover), and the next commit checkpoints the compacted file. Closing syncs, removes `zarrdb-checkpoint` (the database
//! is then whole on the disk, nothing to recover) and then the log.
//!
//! `zarrdb-checkpoint`, little-endian: magic `ZCKP` (u32), page size (u32), the checkpoint's
//! LMDB transaction id (u64), CRC-32C (u32) of those 16 bytes and the pages, 4 bytes of zeros,
//! then meta pages 0 and 1 of `data.mdb` as they were.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use heed::{RoTxn, RwTxn, WithoutTls};

use heed::MdbError;

use super::compact::lock_byte;
use super::{
    apply, check_keys, lmdb_error, open_env, refuse_if_faulted, sealed, walk, LmdbEngine, Opened, Settings, NAME,
};
use crate::error::{OpenError, StoreError};
use crate::store::beside;
use crate::store::kv::WriteBatch;
use crate::store::log::{find, Applied, CommitLog, Found, LogName, Place, Position, Replayed, APPLIED_KEY, NAME_KEY};

/// The saved meta pages, in the database's folder.
pub(super) const CHECKPOINT: &str = "zarrdb-checkpoint";
/// The commit log, in the database's folder.
pub(super) const LOG: &str = "zarrdb-log";
const MAGIC: u32 = u32::from_le_bytes(*b"ZCKP");
/// What a checkpoint's draft's name says it is (see [`beside::unique_beside`]).
const DRAFT: &str = "new";
/// The log is checkpointed once its records would run past this. Small, unlike redb's: while
/// the pin holds a checkpoint, LMDB reuses no page freed after it, so every commit until the next
/// checkpoint takes new pages and `data.mdb` grows by about 2.5 times the records' bytes (10,000
/// commits of 16 KiB on a 256 KiB array left a 110 MB file with 32 MiB, 14 MB with 4 MiB), which
/// LMDB never gives back. A larger log bought LMDB no throughput beyond this host's noise
/// (docs/benchmarks.md, "A longer commit log").
const CAPACITY: u64 = 4 << 20;
const HEADER: usize = 24;

/// The log of an LMDB engine and the checkpoint it protects.
pub(super) struct LmdbLog {
    pub(super) log: CommitLog,
    /// A read transaction on the checkpoint's commit, so that no later commit reuses its pages.
    /// `None` after a remap or a compaction, until the next commit checkpoints.
    pin: Option<RoTxn<'static, WithoutTls>>,
    /// Why commits are refused from now on: another process opened the database while a
    /// compaction had it closed (a checkpoint's pages are safe from this process's commits
    /// only), or a sync failed (a later sync may succeed without the data having reached the
    /// disk, so no checkpoint may trust one).
    refusal: Option<&'static str>,
    /// A commit the log does not hold (a large one, an import) is not checkpointed yet (its
    /// checkpoint failed): the next commit checkpoints first, or a crash would find records
    /// that do not continue the checkpoint.
    unlogged: bool,
}

impl LmdbLog {
    /// Keep a read transaction on the latest commit of `env`, which a checkpoint just saved.
    /// The one before is let go only once the new one is held.
    fn pin(&mut self, env: &heed::Env<WithoutTls>) -> heed::Result<()> {
        let pin = env.clone().static_read_txn()?;
        self.pin = Some(pin);
        Ok(())
    }

    /// A commit the log does not hold is about to be made (see `unlogged`).
    pub(super) fn unlogged(&mut self) {
        self.unlogged = true;
    }

    /// Another process may have the database open (see `refusal`).
    pub(super) fn stray(&mut self) {
        self.refusal = Some(
            "another process opened the database while a compaction had it closed, and the commit log needs it \
             alone: close the database and open it again",
        );
    }

    /// Let go of the checkpoint's commit, right after a checkpoint: the next commit checkpoints
    /// first (a remap or a compaction needs no transaction of this process open).
    pub(super) fn unpin(&mut self) {
        self.pin = None;
    }
}

/// Start the log on `opened` after an open that held the folder alone: apply what the log holds
/// beyond the database, sync, and then either checkpoint and go on with the log, or (an open
/// without it, after a crash of one with it) remove the checkpoint and the log.
pub(super) fn start(
    opened: &mut Opened,
    folder: &Path,
    data: &Path,
    commit_log: bool,
    restored: bool,
) -> Result<Option<LmdbLog>, StoreError> {
    // Without a checkpoint the file is whole on the disk, and a log beside it only holds
    // records it holds (a close stopped between removing the checkpoint and the log).
    // Drafts of checkpoints that processes killed meanwhile left.
    beside::remove_abandoned(&folder.join(CHECKPOINT), DRAFT, |file| beside::starts_with(file, &MAGIC.to_le_bytes()));
    let (replayed, found) = if restored {
        replay(opened, folder, commit_log)?
    } else {
        let txn = opened.env.read_txn().map_err(lmdb_error("open", ""))?;
        let (stored, name) = (read_applied(opened, &txn)?, read_name(opened, &txn)?);
        let found = find_log(folder, stored, name.as_ref(), commit_log)?;
        (Replayed { stored, name, last: stored.map_or(0, |a| a.seq), end: 0 }, found)
    };
    opened.env.force_sync().map_err(lmdb_error("checkpoint", ""))?;
    let lock = opened.lock_file.as_ref().expect("the folder is held alone");
    if !commit_log {
        remove_checkpoint(folder).map_err(io_error(folder))?;
        if let Some(found) = found {
            found.remove();
        }
        return Ok(None);
    }
    // LMDB shared its lock at the end of its open; the log needs the folder alone.
    if !lock_byte(lock, libc::F_WRLCK).map_err(io_error(folder))? {
        return Err(StoreError::Engine {
            backend: NAME,
            operation: "open",
            key: folder.display().to_string(),
            source: "another process opened the database while this one opened it with the commit log".into(),
        });
    }
    save_checkpoint(folder, data).map_err(io_error(folder))?;
    let mut log = LmdbLog {
        log: CommitLog::new(NAME, Place::Path(log_file(folder)), data, false, replayed, found, CAPACITY),
        pin: None,
        refusal: None,
        unlogged: false,
    };
    // The checkpoint holds every record replayed (an older build's log is removed now).
    log.log.checkpointed();
    log.pin(&opened.env).map_err(lmdb_error("checkpoint", ""))?;
    Ok(Some(log))
}

fn io_error(path: &Path) -> impl Fn(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io { operation: "checkpoint", key: path.display().to_string(), source }
}

/// Hold the folder alone: LMDB's lock byte in `lock.mdb`, written-locked without waiting. `None`
/// when another process has the database open. The file must stay open as long as the lock is
/// needed, and then as long as LMDB's environment: closing any descriptor of it drops every
/// lock this process holds on it.
pub(super) fn lock_alone(folder: &Path) -> io::Result<Option<File>> {
    // Not through a link: LMDB's lock file is the folder's own.
    let file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(folder.join("lock.mdb"))?;
    Ok(lock_byte(&file, libc::F_WRLCK)?.then_some(file))
}

/// Whether a live process holds the folder alone ([`lock_alone`]): asked without taking a lock
/// and without writing (a read-only open), so a folder in use is told from one a crash left.
pub(super) fn held_alone(folder: &Path) -> bool {
    let Ok(file) =
        File::options().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(folder.join("lock.mdb"))
    else {
        return false;
    };
    // SAFETY: `flock` is plain data; all-zero is a valid value, filled in below.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_RDLCK as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = 0;
    lock.l_len = 1;
    // SAFETY: the descriptor is open for the call (borrowed from `file`), and `lock` is a valid
    // `struct flock` that F_GETLK reads and fills in.
    let asked = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLK, &mut lock) };
    asked == 0 && lock.l_type == libc::F_WRLCK as libc::c_short
}

/// `Err` once commits are refused (see `LmdbLog::refusal`).
fn refused(folder: &Path, log: &LmdbLog) -> Result<(), StoreError> {
    match log.refusal {
        None => Ok(()),
        Some(why) => Err(StoreError::Engine {
            backend: NAME,
            operation: "commit",
            key: folder.display().to_string(),
            source: why.into(),
        }),
    }
}

/// Open the environment again after a compaction left it closed: not with the log, since
/// another process may have opened the database meanwhile and committed past this handle's
/// position in the log (the handle must be opened again, which recovers from any checkpoint).
pub(super) fn open_again(folder: &Path, settings: Settings) -> Result<Opened, OpenError> {
    if settings.commit_log {
        return Err(OpenError::Engine {
            path: folder.display().to_string(),
            backend: NAME,
            source: "a compaction could not open the compacted file, and the commit log needs the database opened \
                     again from the start: close this handle and open the database again"
                .into(),
        });
    }
    open_env(folder, settings)
}

/// What [`lock_shared`] found.
pub(super) enum SharedLock {
    /// LMDB's lock byte, locked. The file must stay open as long as LMDB's environment (see
    /// [`lock_alone`]); closing it drops no other lock of this process, which has no other
    /// handle of the folder open (`registry.rs`).
    Held(File),
    /// Nothing to lock: no `lock.mdb` (a new database, or one on read-only media), or a file
    /// system without locks, where LMDB's own open finds out what it can.
    Nothing,
    /// Another process holds it for writing: a handle with the commit log.
    Refused,
}

/// Lock LMDB's lock byte of `folder` without waiting (LMDB's own open would wait): for writing
/// when no other process has the database open, so that LMDB's open, whose own locks merge with
/// this process's, still finds itself the first opener, sets up `lock.mdb` and then shares the
/// lock itself; otherwise for reading, retrying for up to 2 s since LMDB's first opener holds it
/// for writing a moment while it sets up `lock.mdb`. (A read lock alone would keep two processes
/// opening at once from both being first, and a stale `lock.mdb` would then never be reset.)
pub(super) fn lock_shared(folder: &Path) -> SharedLock {
    // For writing where it may be: a compaction turns this lock into a write lock.
    let path = folder.join("lock.mdb");
    let file = match File::options().read(true).write(true).open(&path).or_else(|_| File::open(&path)) {
        Ok(file) => file,
        Err(_) => return SharedLock::Nothing,
    };
    let start = std::time::Instant::now();
    if let Ok(true) = lock_byte(&file, libc::F_WRLCK) {
        return SharedLock::Held(file);
    }
    loop {
        match lock_byte(&file, libc::F_RDLCK) {
            Ok(true) => return SharedLock::Held(file),
            Ok(false) => {}
            // A file system without locks: LMDB's own open finds out what it can.
            Err(_) => return SharedLock::Nothing,
        }
        if start.elapsed() >= std::time::Duration::from_secs(2) {
            return SharedLock::Refused;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

impl LmdbEngine {
    /// Make the latest commit the checkpoint: sync, save its meta pages, pin it.
    pub(super) fn checkpoint(&self, opened: &Opened, log: &mut LmdbLog) -> Result<(), StoreError> {
        // After a failed sync no later one can be trusted (imports and compactions checkpoint
        // too, so the refusal is checked here).
        refused(&self.path, log)?;
        log.log.usable()?;
        if let Err(e) = opened.env.force_sync() {
            log.refusal = Some(
                "a sync of data.mdb failed, so what reached the disk is unknown: close the database and open it \
                 again (the last checkpoint and the log put it back)",
            );
            return Err(lmdb_error("checkpoint", "")(e));
        }
        save_checkpoint(&self.path, &self.data).map_err(io_error(&self.path))?;
        log.pin(&opened.env).map_err(lmdb_error("checkpoint", ""))?;
        log.log.checkpointed();
        log.unlogged = false;
        Ok(())
    }

    /// Commit `batch` with the log (see the module's documentation).
    pub(super) fn commit_logged(&self, log: &mut LmdbLog, batch: &WriteBatch, durable: bool) -> Result<(), StoreError> {
        log.log.usable()?;
        refused(&self.path, log)?;
        loop {
            let hold = self.hold("commit")?;
            check_keys(&hold, batch)?;
            if log.pin.is_none() || log.unlogged {
                self.checkpoint(&hold, log)?;
            }
            let logged = log.log.takes(batch);
            if logged {
                if log.log.prepare(batch) {
                    self.checkpoint(&hold, log)?;
                }
                log.log.write()?;
            }
            let position = log.log.position();
            let error = match hold.env.write_txn().and_then(|mut txn| {
                apply(&hold, &mut txn, batch)?;
                store_position(&hold, &mut txn, &position)?;
                refuse_if_faulted(&hold)?;
                Ok(txn)
            }) {
                Ok(txn) => match self.finish(&hold, log, txn, logged, durable)? {
                    true => return Ok(()),
                    false => heed::Error::Mdb(MdbError::MapFull),
                },
                Err(e) => e,
            };
            if logged {
                log.log.take_back();
            }
            if !matches!(error, heed::Error::Mdb(MdbError::MapFull)) {
                return Err(Self::write_error(&hold, "commit", "", error));
            }
            // A remap needs no transaction of this process open, the pin included.
            self.checkpoint(&hold, log)?;
            log.unpin();
            drop(hold);
            self.grow()?;
        }
    }

    /// Commit the staged transaction `txn`: after its record is synced (`durable`) when it
    /// went through the log, followed by a checkpoint when it did not. `Ok(false)`: the map was
    /// full when LMDB saved its free pages; nothing changed, and the record (if any) is taken
    /// back for the caller to grow the map and try again.
    fn finish(
        &self,
        opened: &Opened,
        log: &mut LmdbLog,
        txn: RwTxn<'_>,
        logged: bool,
        durable: bool,
    ) -> Result<bool, StoreError> {
        if !logged {
            log.unlogged = true;
            match txn.commit() {
                Ok(()) => {}
                Err(heed::Error::Mdb(MdbError::MapFull)) => return Ok(false),
                Err(e) => return Err(Self::write_error(opened, "commit", "", e)),
            }
            log.log.advanced(true);
            return self.checkpoint(opened, log).map(|()| true);
        }
        if durable {
            // Takes the record back itself when the sync fails; the transaction is dropped.
            log.log.sync()?;
        }
        match txn.commit() {
            Ok(()) => {}
            Err(heed::Error::Mdb(MdbError::MapFull)) => return Ok(false),
            Err(e) => {
                log.log.take_back();
                return Err(Self::write_error(opened, "commit", "", e));
            }
        }
        log.log.applied();
        Ok(true)
    }

    /// Close the log: sync, remove the checkpoint (the database is whole on the disk), then the
    /// log. On failure both stay, and the next open recovers from them.
    pub(super) fn close_log(&self, log: &mut LmdbLog) {
        // A record that could not be taken back, or a failed sync: the checkpoint and the log
        // stay for the next open to recover from.
        if log.log.usable().is_err() || log.refusal.is_some() {
            return;
        }
        let Some(opened) = self.current.read().as_ref().map(|o| o.env.clone()) else { return };
        if opened.force_sync().is_err() {
            return;
        }
        log.log.checkpointed();
        if remove_checkpoint(&self.path).is_ok() {
            log.log.remove();
        }
        log.unpin();
    }
}

/// Save both meta pages of `data` (just synced) as the checkpoint in `folder`.
pub(super) fn save_checkpoint(folder: &Path, data: &Path) -> io::Result<()> {
    let file = File::open(data)?;
    let (page, txnid) = walk::page_size_and_txnid(&file).map_err(io::Error::other)?;
    let mut bytes = vec![0u8; HEADER + 2 * page];
    file.read_exact_at(&mut bytes[HEADER..], 0)?;
    bytes[..4].copy_from_slice(&MAGIC.to_le_bytes());
    bytes[4..8].copy_from_slice(&(page as u32).to_le_bytes());
    bytes[8..16].copy_from_slice(&txnid.to_le_bytes());
    let crc = crc32c::crc32c_append(crc32c::crc32c(&bytes[..16]), &bytes[HEADER..]);
    bytes[16..20].copy_from_slice(&crc.to_le_bytes());
    // A draft of this process's own, created exclusively: nothing at a name is ever truncated.
    let draft = beside::unique_beside(&folder.join(CHECKPOINT), DRAFT);
    let out = beside::create_new(&draft, 0o666)?;
    let saved = out
        .write_all_at(&bytes, 0)
        .and_then(|()| out.sync_all())
        .and_then(|()| std::fs::rename(&draft, folder.join(CHECKPOINT)));
    if saved.is_err() {
        let _ = beside::remove_held(&draft, &out);
    }
    saved?;
    sync_folder(folder)
}

/// Put the meta pages of the checkpoint in `folder` back into `data`: `Ok(false)` when there is
/// none (the database was closed cleanly, or never ran with the log); `Err` with what is wrong
/// when the checkpoint is damaged or does not fit the file.
pub(super) fn restore_checkpoint(folder: &Path, data: &Path) -> Result<bool, String> {
    let path = folder.join(CHECKPOINT);
    // Only a regular file reached without a link is read.
    let read = beside::open_regular(&path, false).and_then(|file| match file {
        Some(mut file) => {
            let mut bytes = Vec::new();
            // A checkpoint is two pages and a header: a longer file is damaged, and not read whole.
            io::Read::read_to_end(&mut io::Read::take(&mut file, (HEADER + 2 * 65536 + 1) as u64), &mut bytes)?;
            Ok(Some(bytes))
        }
        None => Ok(None),
    });
    let bytes = match read {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Ok(false),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let damaged = || format!("{} is damaged", path.display());
    let field = |at: usize| bytes.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")));
    let (Some(MAGIC), Some(page), Some(crc)) = (field(0), field(4), field(16)) else { return Err(damaged()) };
    let page = page as usize;
    if !(4096..=65536).contains(&page) || !page.is_power_of_two() || bytes.len() != HEADER + 2 * page {
        return Err(damaged());
    }
    if crc32c::crc32c_append(crc32c::crc32c(&bytes[..16]), &bytes[HEADER..]) != crc {
        return Err(damaged());
    }
    let file = File::options().write(true).open(data).map_err(|e| format!("cannot open {}: {e}", data.display()))?;
    file.write_all_at(&bytes[HEADER..], 0)
        .and_then(|()| file.sync_data())
        .map_err(|e| format!("cannot write the checkpoint's meta pages into {}: {e}", data.display()))?;
    Ok(true)
}

/// Remove the checkpoint (the database is whole on the disk), durably: a checkpoint that came
/// back after the log is gone would put the database back to it.
pub(super) fn remove_checkpoint(folder: &Path) -> io::Result<()> {
    match std::fs::remove_file(folder.join(CHECKPOINT)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    sync_folder(folder)
}

/// Where a new log of the database in `folder` goes: `zarrdb-log` in its canonical path.
fn log_file(folder: &Path) -> PathBuf {
    std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_owned()).join(LOG)
}

/// The log of the database in `folder` (see [`find`]; a build before kept it as `zarrdb-log`).
fn find_log(
    folder: &Path,
    stored: Option<Applied>,
    name: Option<&LogName>,
    writable: bool,
) -> Result<Option<Found>, StoreError> {
    // Not tied to data.mdb's inode: a copy of the folder is a copy of the log as well.
    find(NAME, stored, name, 0, &log_file(folder), &[folder.join(LOG)], writable)
}

fn sync_folder(folder: &Path) -> io::Result<()> {
    File::open(folder)?.sync_all()
}

/// What [`APPLIED_KEY`] holds in `opened`'s database as `txn` sees it.
pub(super) fn read_applied(opened: &Opened, txn: &RoTxn<'_, WithoutTls>) -> Result<Option<Applied>, StoreError> {
    let damaged = |what| StoreError::Damaged { backend: NAME, operation: "open", key: APPLIED_KEY.to_owned(), what };
    let Some(stored) = opened.db.get(txn, APPLIED_KEY).map_err(lmdb_error("get", APPLIED_KEY))? else {
        return Ok(None);
    };
    let (value, sum) = opened.layout.split(APPLIED_KEY, stored).map_err(damaged)?;
    sealed::verify(APPLIED_KEY, value, sum).map_err(damaged)?;
    Applied::from_bytes(value).map(Some).map_err(damaged)
}

/// What [`NAME_KEY`] holds in `opened`'s database as `txn` sees it.
fn read_name(opened: &Opened, txn: &RoTxn<'_, WithoutTls>) -> Result<Option<LogName>, StoreError> {
    let damaged = |what| StoreError::Damaged { backend: NAME, operation: "open", key: NAME_KEY.to_owned(), what };
    let Some(stored) = opened.db.get(txn, NAME_KEY).map_err(lmdb_error("get", NAME_KEY))? else {
        return Ok(None);
    };
    let (value, sum) = opened.layout.split(NAME_KEY, stored).map_err(damaged)?;
    sealed::verify(NAME_KEY, value, sum).map_err(damaged)?;
    LogName::from_bytes(value).map(Some).map_err(damaged)
}

/// Store `position` under [`APPLIED_KEY`] (and [`NAME_KEY`]) in `txn`.
fn store_position(opened: &Opened, txn: &mut RwTxn<'_>, position: &Position) -> heed::Result<()> {
    opened.layout.put(opened.db, txn, APPLIED_KEY, &position.applied.to_bytes())?;
    match &position.name {
        Some(name) => opened.layout.put(opened.db, txn, NAME_KEY, &name.to_bytes()),
        None => Ok(()),
    }
}

/// Apply the records of the log of the database in `folder` that `opened`'s latest commit does
/// not hold, in order, in one commit (not synced: the checkpoint that follows syncs it). Returns
/// the log found too (opened for writing when `writable`).
fn replay(opened: &Opened, folder: &Path, writable: bool) -> Result<(Replayed, Option<Found>), StoreError> {
    let (stored, name) = {
        let txn = opened.env.read_txn().map_err(lmdb_error("replay the commit log", ""))?;
        (read_applied(opened, &txn)?, read_name(opened, &txn)?)
    };
    let found = find_log(folder, stored, name.as_ref(), writable)?;
    let nothing = Replayed { stored, name: name.clone(), last: stored.map_or(0, |a| a.seq), end: 0 };
    let (Some(found), Some(applied)) = (found, stored) else { return Ok((nothing, None)) };
    let mut txn = opened.env.write_txn().map_err(lmdb_error("replay the commit log", ""))?;
    let (last, end) = found.follow(NAME, applied, u64::MAX, |batch| {
        apply(opened, &mut txn, &batch).map_err(lmdb_error("replay the commit log", ""))?;
        Ok(true)
    })?;
    if last == applied.seq {
        return Ok((nothing, Some(found)));
    }
    let position = Position { applied: Applied { seq: last, ..applied }, name: None };
    store_position(opened, &mut txn, &position)
        .and_then(|()| txn.commit())
        .map_err(lmdb_error("replay the commit log", ""))?;
    Ok((Replayed { stored: Some(position.applied), name, last, end }, Some(found)))
}
