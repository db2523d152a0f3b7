//! Read-only opens of sled: sled 0.34 has no read-only mode, and its open rewrites the tail of its
//! log, writes its `conf` file and needs write access to the folder; it also reads large values
//! later, by name, from files in its folder. A read-only handle therefore opens a private copy of
//! the folder in the temporary directory, taken under a shared lock on sled's data file (a writer
//! in another process holds it exclusively, so the copy is never taken mid-write), and removes the
//! copy when it closes. The original is only read: it stays byte-identical, and read-only media
//! and files without write permission work. The price is a copy of the whole database per open.
//!
//! A process that dies before it closes the handle (SIGKILL, or SIGINT and SIGTERM, which end it
//! without running destructors) leaves its copy behind; the next read-only open of any sled
//! database by the same user removes it. A copy is told apart from everything else in the
//! temporary directory by identity, not by name alone: a folder (not a link) owned by this user,
//! named `zarrdb-sled-read-only-*`, holding a regular file [`OWNER`] with the mark [`MARK`]
//! followed by the folder's own name, on which its process holds an exclusive lock for as long as
//! the copy is in use. The lock ends with the process however it ends, so a copy whose lock can be
//! taken has no owner left; anything else is left alone. A process killed between making the
//! folder and marking it leaves one without a mark, removed only when its process has ended and
//! it holds nothing but the start of its mark ([`remove_unfinished`]).

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use fs2::FileExt;

use super::NAME;
use crate::error::OpenError;
use crate::store::beside::{self, euid};
use crate::store::special;

/// The start of every copy's name in the temporary directory.
const PREFIX: &str = "zarrdb-sled-read-only-";

/// The file in a copy that says whose it is; its owner holds an exclusive lock on it. No sled
/// file has this name, and the copy leaves one in the original out.
const OWNER: &str = "zarrdb-read-only-copy";

/// What [`OWNER`] holds, before the copy's folder name.
const MARK: &[u8] = b"zarrdb: private copy of a sled database for a read-only open: ";

/// A copy of a sled folder, removed on drop.
pub(super) struct Copy {
    pub(super) path: PathBuf,
    /// [`OWNER`], locked exclusively until the copy is removed.
    _owner: File,
}

impl Copy {
    /// Copy the sled folder at `path` into a new temporary folder, after removing the copies
    /// that processes which died before closing them left behind.
    pub(super) fn of(path: &Path) -> Result<Copy, OpenError> {
        let temp = std::env::temp_dir();
        remove_abandoned(&temp);
        let display = path.display().to_string();
        let io = |source| OpenError::Io { path: display.clone(), source };
        let data = special::open_regular_to_read(&path.join("db")).map_err(io)?;
        if FileExt::try_lock_shared(&data).is_err() {
            return Err(OpenError::Locked { path: display, backend: NAME });
        }
        let copied = Copy::create(&temp).and_then(|copy| copy_folder(path, &copy.path, true).map(|()| copy));
        let _ = FileExt::unlock(&data);
        copied.map_err(io)
    }

    /// A new, empty copy folder in `temp`, marked and locked as its owner's.
    fn create(temp: &Path) -> std::io::Result<Copy> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        loop {
            // A name left by a dead process of the same id is taken: the next one is tried.
            let name = format!("{PREFIX}{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
            let path = temp.join(&name);
            match DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
            // Locked before it is marked: a folder whose mark can be read is locked while its
            // owner lives.
            let marked = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path.join(OWNER))
                .and_then(|mut owner| {
                    owner.try_lock_exclusive()?;
                    owner.write_all(&[MARK, name.as_bytes()].concat())?;
                    Ok(owner)
                });
            return match marked {
                Ok(owner) => Ok(Copy { path, _owner: owner }),
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&path);
                    Err(e)
                }
            };
        }
    }
}

impl Drop for Copy {
    fn drop(&mut self) {
        // Removed while the lock is held (the owner file closes after this).
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Remove the copies in `temp` that are zarrdb's (by the identity the module documentation
/// gives) and whose owner has died. Failures leave a copy in place: this only tidies up.
fn remove_abandoned(temp: &Path) {
    let Ok(entries) = std::fs::read_dir(temp) else { return };
    let me = euid();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str().filter(|n| n.starts_with(PREFIX)) else { continue };
        let path = entry.path();
        // Not followed: a link of that name is not a copy.
        let ours = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir() && m.uid() == me);
        if !ours {
            continue;
        }
        match abandoned(&path, name) {
            Some(owner) => {
                let _ = std::fs::remove_dir_all(&path);
                drop(owner);
            }
            None => remove_unfinished(&path, name),
        }
    }
}

/// Remove the copy folder at `path` (named `name`) when its process ended between making it and
/// marking it: the name is exactly a copy's, its process has ended, and the folder holds nothing
/// or only an [`OWNER`] file owned by this user whose bytes are the start of its mark. Only
/// those two (that file, the empty folder) are removed, so nothing else can be lost.
fn remove_unfinished(path: &Path, name: &str) {
    let Some((pid, n)) = name.strip_prefix(PREFIX).and_then(|rest| rest.split_once('-')) else { return };
    let (Ok(pid), Ok(_)) = (pid.parse::<u32>(), n.parse::<u64>()) else { return };
    if !beside::process_ended(pid) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else { return };
    let names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
    match names.as_slice() {
        [] => {}
        [only] if only == OWNER => {
            let expected = [MARK, name.as_bytes()].concat();
            let owner = path.join(OWNER);
            let is_start = |file: &File| {
                mark_read(file, &expected)
                    .is_some_and(|found| expected.starts_with(&found) && found.len() < expected.len())
            };
            let Ok(Some(file)) = beside::open_regular(&owner, false) else { return };
            if !file.metadata().is_ok_and(|m| m.uid() == euid()) || !is_start(&file) {
                return;
            }
            if beside::remove_held(&owner, &file).is_err() {
                return;
            }
        }
        _ => return,
    }
    // Fails, leaving it, if anything appeared meanwhile.
    let _ = std::fs::remove_dir(path);
}

/// The owner file of the copy at `path` (named `name`), locked, when the folder is a copy and
/// no process holds it.
fn abandoned(path: &Path, name: &str) -> Option<File> {
    let owner = special::open_regular(&path.join(OWNER), OpenOptions::new().read(true), true).ok()?;
    let expected = [MARK, name.as_bytes()].concat();
    let found = mark_read(&owner, &expected)?;
    if found != expected || !owner.metadata().is_ok_and(|m| m.uid() == euid()) {
        return None;
    }
    // A shared lock would do to test, but the exclusive one also keeps a racing sweep out.
    owner.try_lock_exclusive().ok()?;
    Some(owner)
}

/// What the owner file `file` holds, read up to one byte past the `expected` mark (so a longer
/// file is told apart); `None` when it cannot be read.
fn mark_read(file: &File, expected: &[u8]) -> Option<Vec<u8>> {
    let mut found = Vec::with_capacity(expected.len() + 1);
    Read::take(file, expected.len() as u64 + 1).read_to_end(&mut found).ok()?;
    Some(found)
}

/// Copy the regular files and folders under `from` to the existing folder `to`; links are not
/// followed (sled makes none, and one could lead out of the database). At the `top`, a file
/// named [`OWNER`] is left out, so a copy of a copy cannot carry its mark along.
fn copy_folder(from: &Path, to: &Path, top: bool) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if top && entry.file_name() == OWNER {
            continue;
        }
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            std::fs::create_dir(&target)?;
            copy_folder(&entry.path(), &target, false)?;
        } else if kind.is_file() {
            let mut source = special::open_regular_to_read(&entry.path())?;
            let mut copy = OpenOptions::new().write(true).create_new(true).mode(0o600).open(&target)?;
            std::io::copy(&mut source, &mut copy)?;
        }
    }
    Ok(())
}
