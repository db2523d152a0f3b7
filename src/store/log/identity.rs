//! Which file is a database's log: found by identity, never by name alone (see [`super`]).
//!
//! A log file starts with a header: magic `ZLGH` (u32), version 1 (u32), the database id (u64),
//! the log id (u64), the inode number of the database's file (u64; 0 where the log is not tied to
//! one file: LMDB's, inside the database's own folder), 4 bytes of zeros, CRC-32C of those 36
//! bytes (u32); records follow from byte 40. The database stores which log is its own under
//! [`NAME_KEY`]: the log id and the log's path. Only a regular file, reached without a link,
//! whose header carries both ids and the inode of the file opened is read, written or removed;
//! anything else at the name is left alone. The inode tells the database's file (under any of its
//! names: links, relative paths) from a copy of it, which shares its ids but not its log: a copy
//! taken while a writer had the log open would otherwise go on in the same log. A log is created
//! under a name of this process's own, its header written and synced, and then renamed to its
//! name without replacing anything there.
//!
//! Logs of builds before the header (records from byte 0) are read for a replay when the
//! database names no log: one is the database's own when its first record carries the database's
//! id. They are removed once a durable commit holds what they held.

use std::fs::File;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::file::{LogFile, Place};
use super::record::{le_u32, le_u64, Records};
use super::{follow, read_error, Applied, From};
use crate::error::StoreError;
use crate::store::beside;
use crate::store::kv::WriteBatch;

/// The key holding which file is the database's log: its id and path ([`LogName`]).
pub(crate) const NAME_KEY: &str = "__zarrdb/commit-log-file";
const MAGIC: u32 = u32::from_le_bytes(*b"ZLGH");
const VERSION: u32 = 1;
/// Where a log's records start, after its header.
pub(super) const START: u64 = 40;
/// What a log's name says it is before it is renamed to its name (see [`beside::unique_beside`]).
const NEW: &str = "new";
/// A stored path longer than this is damage, not a path.
const LONGEST_PATH: usize = 4096;

/// The database's own log: what [`NAME_KEY`] holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LogName {
    /// Random, in the log's header.
    pub id: u64,
    /// Absolute, as it was when the log was named.
    pub path: PathBuf,
}

impl LogName {
    /// The name stored as `value`; what is wrong with it otherwise.
    pub(crate) fn from_bytes(value: &[u8]) -> Result<LogName, &'static str> {
        let (Some(id), Some(path)) = (le_u64(value, 0), value.get(8..)) else {
            return Err("the commit log's name is shorter than 8 bytes");
        };
        if path.is_empty() || path.len() > LONGEST_PATH || path.contains(&0) {
            return Err("the commit log's name is not a path");
        }
        Ok(LogName { id, path: PathBuf::from(std::ffi::OsString::from_vec(path.to_vec())) })
    }

    /// What [`NAME_KEY`] holds for this name.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = self.id.to_le_bytes().to_vec();
        bytes.extend_from_slice(self.path.as_os_str().as_bytes());
        bytes
    }
}

/// Whose log a log file is: the database id, the log id, and the inode of the database's file
/// (0: not tied to one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Owner {
    pub database: u64,
    pub log: u64,
    pub inode: u64,
}

/// The header of a log of `owner`.
fn header(owner: Owner) -> [u8; START as usize] {
    let mut bytes = [0u8; START as usize];
    bytes[..4].copy_from_slice(&MAGIC.to_le_bytes());
    bytes[4..8].copy_from_slice(&VERSION.to_le_bytes());
    bytes[8..16].copy_from_slice(&owner.database.to_le_bytes());
    bytes[16..24].copy_from_slice(&owner.log.to_le_bytes());
    bytes[24..32].copy_from_slice(&owner.inode.to_le_bytes());
    let crc = crc32c::crc32c(&bytes[..36]);
    bytes[36..].copy_from_slice(&crc.to_le_bytes());
    bytes
}

/// Whose log `file` is, by its header; `None` when it has no whole header.
fn read_header(file: &File) -> io::Result<Option<Owner>> {
    if LogFile::len(file)? < START {
        return Ok(None);
    }
    let mut bytes = [0u8; START as usize];
    file.read_at(&mut bytes, 0)?;
    let whole = le_u32(&bytes, 0) == Some(MAGIC)
        && le_u32(&bytes, 4) == Some(VERSION)
        && le_u32(&bytes, 36) == Some(crc32c::crc32c(&bytes[..36]));
    let field = |at| le_u64(&bytes, at).unwrap_or(0);
    Ok(whole.then(|| Owner { database: field(8), log: field(16), inode: field(24) }))
}

/// The inode number of the database's file at `database` (through links), which a redb log is
/// tied to; 0 when it cannot be read.
pub(crate) fn inode_of(database: &Path) -> u64 {
    std::fs::metadata(database).map_or(0, |m| std::os::unix::fs::MetadataExt::ino(&m))
}

/// A log file of this database, found at an open.
pub(crate) struct Found {
    pub(crate) place: Place,
    pub(super) file: Arc<dyn LogFile>,
    /// The file itself, checked before its name is removed (`None`: a simulated disk).
    pub(super) held: Option<(PathBuf, Arc<File>)>,
    /// Where its records start.
    pub(super) start: u64,
    /// Written by a build with the header: the log goes on in it. One of a build before is only
    /// replayed, then removed.
    pub(super) current: bool,
}

impl Found {
    /// Whether it is a log of this build (with a header), which goes on.
    pub(crate) fn is_current(&self) -> bool {
        self.current
    }

    /// The simulated disk of the fault-injection tests, whose records start at 0.
    pub(crate) fn given(place: &Place) -> Option<Found> {
        let file = place.given()?;
        Some(Found { place: place.clone(), file, held: None, start: 0, current: true })
    }

    fn at(path: &Path, file: File, start: u64, current: bool) -> Found {
        let file = Arc::new(file);
        let held = Some((path.to_owned(), file.clone()));
        Found { place: Place::Path(path.to_owned()), file, held, start, current }
    }

    /// [`follow`] the records of this log.
    pub(crate) fn follow(
        &self,
        backend: &'static str,
        applied: Applied,
        limit: u64,
        apply: impl FnMut(WriteBatch) -> Result<bool, StoreError>,
    ) -> Result<(u64, u64), StoreError> {
        follow(backend, &self.place, self.file.as_ref(), From::Start(self.start), applied, limit, apply)
            .map(|f| (f.last, f.end))
    }

    /// Remove the file, if its name still names it. Every record in it is held by the database.
    pub(crate) fn remove(self) {
        if let Some((path, file)) = &self.held {
            let _ = beside::remove_held(path, file);
        }
    }
}

/// The log of the database whose stored position is `stored` and which names `name` as its log
/// (`None`: a database of a build before, or one that never used a log), tied to the file of
/// inode `inode` (0: to none). Looked for at `default` (where this open would put a new one), at
/// `name`'s path, and under its file name beside `default` (the database was moved); for a
/// database that names none, an older build's log at the `legacy` paths. `writable`: opened to go
/// on.
pub(crate) fn find(
    backend: &'static str,
    stored: Option<Applied>,
    name: Option<&LogName>,
    inode: u64,
    default: &Path,
    legacy: &[PathBuf],
    writable: bool,
) -> Result<Option<Found>, StoreError> {
    // A database that never used a log holds none of any log's records.
    let Some(applied) = stored else { return Ok(None) };
    let failed = |path: &Path, e| read_error(backend, &Place::Path(path.to_owned()), e);
    let mut candidates = Vec::new();
    match name {
        Some(name) => {
            candidates.push(default.to_owned());
            candidates.push(name.path.clone());
            if let (Some(file), Some(folder)) = (name.path.file_name(), default.parent()) {
                candidates.push(folder.join(file));
            }
        }
        None => candidates.extend_from_slice(legacy),
    }
    let mut seen = std::collections::HashSet::new();
    candidates.retain(|path| seen.insert(path.clone()));
    if writable {
        for path in &candidates {
            remove_abandoned(path, applied.id);
        }
    }
    for path in candidates {
        let Some(file) = beside::open_regular(&path, writable && name.is_some()).map_err(|e| failed(&path, e))? else {
            continue;
        };
        match name {
            Some(name) => {
                let owner = Owner { database: applied.id, log: name.id, inode };
                if read_header(&file).map_err(|e| failed(&path, e))? == Some(owner) {
                    return Ok(Some(Found::at(&path, file, START, true)));
                }
            }
            None => {
                let mut records = Records::new(&file, 0).map_err(|e| failed(&path, e))?;
                let first = records.next().map_err(|e| failed(&path, e))?;
                if first.is_some_and(|(id, _, _)| id == applied.id) {
                    return Ok(Some(Found::at(&path, file, 0, false)));
                }
            }
        }
    }
    Ok(None)
}

/// Remove the logs of the database `database` that processes killed before they renamed them to
/// `path` left: their header names the database, or (killed while they wrote it) they hold the
/// start of a header.
fn remove_abandoned(path: &Path, database: u64) {
    beside::remove_abandoned(path, NEW, |file| match read_header(file) {
        Ok(Some(found)) => found.database == database,
        Ok(None) => LogFile::len(file).is_ok_and(|len| len < START) && beside::starts_with(file, &MAGIC.to_le_bytes()),
        Err(_) => false,
    });
}

/// Create a log of `owner` at `path`, its header synced, with the owner, group and permission
/// bits (but execute) of the database's file `model` where they can be given. `AlreadyExists`
/// when anything is at `path`, which is left as it is.
pub(super) fn create(path: &Path, owner: Owner, model: &Path) -> io::Result<Arc<File>> {
    remove_abandoned(path, owner.database);
    let temp = beside::unique_beside(path, NEW);
    let file = beside::create_new(&temp, 0o600)?;
    let made = (|| {
        // The log holds the database's data: no more readable than the database.
        if let Err(e) = beside::take_owner_and_mode(&file, model, 0o666) {
            if e.kind() != io::ErrorKind::PermissionDenied {
                return Err(e);
            }
        }
        LogFile::write_at(&file, &header(owner), 0)?;
        file.sync_all()?;
        beside::place_new(&temp, path)
    })();
    if made.is_err() {
        let _ = beside::remove_held(&temp, &file);
    }
    made?;
    // The name must survive a crash as the records do.
    beside::sync_folder(path)?;
    Ok(Arc::new(file))
}

/// The path of a new log of the database at `database`: beside it, named after its canonical path
/// (through every link), so every name of one file finds one log.
pub(crate) fn default_log(database: &Path) -> PathBuf {
    let resolved = std::fs::canonicalize(database)
        .or_else(|_| std::path::absolute(database))
        .unwrap_or_else(|_| database.to_owned());
    super::log_path(&resolved)
}
