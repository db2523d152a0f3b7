//! The commit log of a database opened by one process: a durable commit of a small batch costs
//! one write and one `fdatasync` of a small file beside the database instead of the engine's own
//! durable commit. redb uses it (`store/redb/log.rs`).
//!
//! Why: redb's durable commit writes the B-tree pages it changed all over the file, then its
//! header, and syncs; one writer reached 0.34-0.47 of the disk's 4 KiB write + fdatasync rate
//! (docs/benchmarks.md, "A commit log"). Here a durable commit writes its batch as one record to
//! `<database>-log`, syncs it, and applies it to the engine without a sync, which writes nothing
//! to the file that must reach the disk but is seen by every later read of this process. The
//! record makes the commit durable. A durable commit of the engine (a checkpoint: a large batch,
//! an import, a compaction, the close, or a log that is full) makes every record before it
//! unnecessary, and the log starts again at its beginning.
//!
//! Each record carries a sequence number, and each commit applied from the log stores it in the
//! same engine transaction under [`APPLIED_KEY`]. After a crash the engine opens at its last
//! durable commit, whose [`APPLIED_KEY`] says which records it holds; the records after it are
//! applied again, in order ([`follow`]). A record counts whole or not at all: its CRC covers its
//! header and contents, so a torn one ends the log, and the older records an earlier round left
//! further in the file end it too, their sequence numbers being lower.
//!
//! The file is grown with zeros before records are written into it, so a record overwrites
//! blocks the file system has already allocated and its `fdatasync` writes no metadata (16 KiB
//! records over a written file synced at 8,583-9,231/s against 5,749-5,946/s appending,
//! `benches/commit_log_probe.py`).
//!
//! Record layout, little-endian: magic `u32`, payload length `u32`, database id `u64`, sequence
//! number `u64`, CRC-32C `u32` of those 24 bytes and the payload; then the payload: the number of
//! erased prefixes `u32`, each as length `u32` and bytes; the number of puts `u32`, each as key
//! length `u32` and key, tag `u8` (0 removed, 1 stored) and, when stored, value length `u32` and
//! value (`record.rs`). The database id (random, stored with the sequence number) keeps a log left
//! beside a file that was since deleted and created anew from being applied to the new database.
//!
//! Which file is the log (`identity.rs`): one the database names, with a header carrying the
//! database id, the log's id and (redb) the inode of the database's file, found whatever name the
//! database was opened by, created exclusively and removed only while its name still names it.

mod file;
pub(crate) mod fuzzing;
mod identity;
mod record;
mod shared;
mod tail;

use std::hash::{BuildHasher, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use file::grow_with_zeros;
pub(crate) use file::{LogFile, Place};
pub(crate) use identity::{default_log, find, inode_of, Found, LogName, NAME_KEY};
use record::{decode, encode, encoded_len, erase_header, le_u64, Records, LARGEST};
pub(crate) use shared::{Held, SharedLog};

use crate::error::StoreError;
use crate::store::kv::WriteBatch;

/// The key holding the database id and the sequence number of the last record applied.
pub(crate) const APPLIED_KEY: &str = "__zarrdb/commit-log";

/// The log beside the database at `database`, by its name (see [`default_log`]).
pub(crate) fn log_path(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push("-log");
    PathBuf::from(name)
}

/// Where a database stands with its log: its id and the last record it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Applied {
    pub id: u64,
    pub seq: u64,
}

impl Applied {
    /// The position stored under [`APPLIED_KEY`] as `value`; what is wrong with it otherwise.
    pub(crate) fn from_bytes(value: &[u8]) -> Result<Applied, &'static str> {
        let (16, Some(id), Some(seq)) = (value.len(), le_u64(value, 0), le_u64(value, 8)) else {
            return Err("the commit log's position is not 16 bytes");
        };
        // One number per commit: a sound file is nowhere near, and counting on cannot overflow.
        if seq > u64::MAX / 2 {
            return Err("the commit log's position is out of range");
        }
        Ok(Applied { id, seq })
    }

    pub(crate) fn fresh() -> Applied {
        // A random id: std's hasher is keyed randomly per process, and the time varies it more.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher
            .write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
        Applied { id: hasher.finish(), seq: 0 }
    }

    /// What [`APPLIED_KEY`] holds for this position.
    pub(crate) fn to_bytes(self) -> [u8; 16] {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&self.id.to_le_bytes());
        bytes[8..].copy_from_slice(&self.seq.to_le_bytes());
        bytes
    }
}

/// The writing end of the log, owned by the engine and used under its commit lock.
pub(crate) struct CommitLog {
    /// The engine's name, for errors.
    backend: &'static str,
    /// The log's file: where the database names it, or where a new one goes.
    place: Place,
    /// Where a log of this database goes by default (`identity::default_log`): another name is
    /// made from it when something else is there.
    default: PathBuf,
    /// The database's file, whose owner and mode a new log takes.
    model: PathBuf,
    /// A new log is tied to the inode of `model` (redb: a copy of the file is not the database);
    /// LMDB's, in the database's own folder, to none.
    tied: bool,
    /// Opened at the first record.
    file: Option<Arc<dyn LogFile>>,
    /// The file itself, checked before its name is removed (`None`: a simulated disk).
    held: Option<(PathBuf, Arc<std::fs::File>)>,
    /// The log's id, in its header and in the name the database stores.
    log_id: u64,
    /// Where records start: after the header (0 on a simulated disk).
    start: u64,
    /// No log file could be made here (a folder without write permission): commits go to the
    /// engine durably.
    unavailable: bool,
    /// An older build's log, replayed at the open: removed once a durable commit holds it.
    legacy: Option<Found>,
    /// Where the next record goes.
    offset: u64,
    /// How much of the file is written (zeros or records).
    prepared: u64,
    id: u64,
    /// The sequence number of the last record applied to the engine.
    last: u64,
    /// The last sequence number a durable commit of the engine holds: records up to it are not needed.
    durable: u64,
    /// A durable commit of the engine holds the database's id and names this log (its id and
    /// path): until then a replay would not find it, or not know it as the database's own, so
    /// commits go to the engine durably (and name it, [`CommitLog::position`]).
    anchored: bool,
    /// A failed commit's record could not be taken back: a reopen would apply it, so no later
    /// commit may be applied before that happens.
    broken: bool,
    /// The record being committed.
    record: Vec<u8>,
    /// Once a record would end past this many bytes, the engine checkpoints and the log starts
    /// again at its beginning (each engine says how far its log may run).
    capacity: u64,
}

impl CommitLog {
    /// The log of a database where a replay found `replayed`, in `found` (if any: one of this
    /// build goes on, one of an older build is removed once a durable commit holds its records),
    /// or else at `default`, named after the database's file `model` (and tied to its inode when
    /// `tied`); checkpointed once `capacity` bytes would not hold the next record.
    pub(crate) fn new(
        backend: &'static str,
        default: Place,
        model: &Path,
        tied: bool,
        replayed: Replayed,
        found: Option<Found>,
        capacity: u64,
    ) -> CommitLog {
        let applied = replayed.stored.unwrap_or_else(Applied::fresh);
        let default_path = match &default {
            Place::Path(path) => path.clone(),
            Place::Given(_) => PathBuf::new(),
        };
        let mut log = CommitLog {
            backend,
            anchored: replayed.stored.is_some(),
            place: default,
            default: default_path,
            model: model.to_owned(),
            tied,
            file: None,
            held: None,
            log_id: Applied::fresh().id,
            start: 0,
            unavailable: false,
            legacy: None,
            offset: 0,
            prepared: 0,
            id: applied.id,
            last: replayed.last,
            durable: applied.seq,
            broken: false,
            record: Vec::new(),
            capacity,
        };
        match (found, &log.place) {
            (Some(found), _) if found.current => {
                // Its own log, wherever the database was opened from: records go on in it.
                log.log_id = replayed.name.as_ref().map_or(0, |n| n.id);
                log.prepared = found.file.len().unwrap_or(0);
                (log.place, log.file, log.held, log.start) = (found.place, Some(found.file), found.held, found.start);
            }
            (found, Place::Path(path)) => {
                log.legacy = found;
                log.start = identity::START;
                match &replayed.name {
                    // The log the database names goes here: it is made again with its id.
                    Some(name) if name.path == *path => log.log_id = name.id,
                    // Named afresh by the next durable commit.
                    _ => log.anchored = false,
                }
            }
            (_, Place::Given(_)) => {}
        }
        log.offset = replayed.end.max(log.start);
        log
    }

    /// Whether `batch` goes through the log: small enough, the database's id durable and the log
    /// named by a durable commit, its file there (made now if need be).
    pub(crate) fn takes(&mut self, batch: &WriteBatch) -> bool {
        self.anchored && !self.unavailable && encoded_len(batch) <= LARGEST && self.ensure_file()
    }

    /// Open (or make) the log's file; `false` when there is none to write to: the name is taken
    /// by another file (the log takes another name, for the next durable commit to store), or no
    /// file can be made here.
    fn ensure_file(&mut self) -> bool {
        if self.file.is_some() {
            return true;
        }
        let path = match &self.place {
            Place::Given(file) => {
                self.prepared = file.len().unwrap_or(0);
                self.file = Some(file.clone());
                return true;
            }
            Place::Path(path) => path.clone(),
        };
        let inode = if self.tied { inode_of(&self.model) } else { 0 };
        let owner = identity::Owner { database: self.id, log: self.log_id, inode };
        match identity::create(&path, owner, &self.model) {
            Ok(file) => {
                self.held = Some((path, file.clone()));
                self.file = Some(file);
                self.prepared = identity::START;
                self.offset = self.offset.max(identity::START);
                true
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                // Another file has the name: it is left alone, and the log goes beside it.
                self.log_id = Applied::fresh().id;
                let mut other = self.default.clone().into_os_string();
                other.push(format!(".{:016x}", self.log_id));
                self.place = Place::Path(PathBuf::from(other));
                self.anchored = false;
                false
            }
            Err(_) => {
                self.unavailable = true;
                false
            }
        }
    }

    /// What a commit of the engine that does not go through the log stores: the next number, and
    /// the log's name while no durable commit holds it.
    pub(crate) fn position(&self) -> Position {
        let name = match &self.place {
            Place::Path(path) if !self.anchored => Some(LogName { id: self.log_id, path: path.clone() }),
            _ => None,
        };
        Position { applied: self.next(), name }
    }

    /// `Err` once a failed commit's record could not be taken back.
    pub(crate) fn usable(&self) -> Result<(), StoreError> {
        if !self.broken {
            return Ok(());
        }
        Err(outcome_unknown(self.backend, &self.place))
    }

    /// Lay out the record of `batch`; `true` when the log holds records no durable commit holds
    /// and has no room for it: the engine checkpoints first ([`CommitLog::checkpointed`]).
    pub(crate) fn prepare(&mut self, batch: &WriteBatch) -> bool {
        encode(&mut self.record, batch, self.id, self.last + 1);
        self.durable < self.last && self.offset + self.record.len() as u64 > self.capacity
    }

    /// What the engine's transaction applying the prepared record stores under [`APPLIED_KEY`].
    pub(crate) fn next(&self) -> Applied {
        Applied { id: self.id, seq: self.last + 1 }
    }

    /// Write the prepared record and start its way to the disk; [`CommitLog::sync`] waits for
    /// it. On failure it is taken back (or the log is broken), and nothing changed.
    pub(crate) fn write(&mut self) -> Result<(), StoreError> {
        if self.durable == self.last {
            // Every record in the file is held by a durable commit: start again at the beginning.
            self.offset = self.start;
        }
        let mut begun = false;
        let written = self.write_record(&mut begun);
        if written.is_err() && begun {
            self.take_back();
        }
        written.map_err(|e| self.error(e))
    }

    /// Wait until the written record is on the disk. On failure it is taken back (or the log is
    /// broken).
    pub(crate) fn sync(&mut self) -> Result<(), StoreError> {
        let Some(file) = &self.file else { unreachable!("a record was written") };
        let synced = file.sync();
        if synced.is_err() {
            self.take_back();
        }
        synced.map_err(|e| self.error(e))
    }

    /// Write the record; `begun` once its own bytes may have reached the file (before, a
    /// failure left nothing to take back: the file only grew, with zeros).
    fn write_record(&mut self, begun: &mut bool) -> io::Result<()> {
        let Some(file) = &self.file else { return Err(io::Error::other("the commit log's file is not open")) };
        let end = self.offset + self.record.len() as u64;
        if end > self.prepared {
            self.prepared = grow_with_zeros(file.as_ref(), self.prepared, end)?;
        }
        *begun = true;
        file.write_at(&self.record, self.offset)?;
        file.start_writeback(self.offset, self.record.len());
        Ok(())
    }

    /// The prepared record is applied to the engine: the next goes after it.
    pub(crate) fn applied(&mut self) {
        self.last += 1;
        self.offset += self.record.len() as u64;
    }

    /// Applying the written record failed: erase its header, so no replay applies it. The next
    /// record takes its place and its sequence number.
    pub(crate) fn take_back(&mut self) {
        let Some(file) = &self.file else { return };
        if erase_header(file.as_ref(), self.offset).is_err() {
            self.broken = true;
        }
    }

    /// A commit of the engine that did not go through the log stored [`CommitLog::next`]: the next
    /// record follows it, so a file put back from before it does not take the log's records.
    /// `durable`: it was a durable commit, which holds every record applied, and the id.
    /// It stored [`CommitLog::position`], which names the log.
    pub(crate) fn advanced(&mut self, durable: bool) {
        self.last += 1;
        if durable {
            self.anchored = true;
            self.checkpointed();
        }
    }

    /// A durable commit of the engine (a compaction, a checkpoint) now holds every record applied.
    pub(crate) fn checkpointed(&mut self) {
        self.durable = self.last;
        if let Some(older) = self.legacy.take() {
            older.remove();
        }
    }

    /// The sequence number of the last record applied, or commit that stored one.
    pub(crate) fn last(&self) -> u64 {
        self.last
    }

    /// The database's file was renamed to `database`: the log follows (named afresh by the next
    /// durable commit), unless it holds records the file does not (then it stays, for the next
    /// open to apply).
    pub(crate) fn moved_to(&mut self, database: &Path) {
        if self.pending() || self.broken || matches!(self.place, Place::Given(_)) {
            return;
        }
        self.remove();
        self.default = default_log(database);
        self.model = database.to_owned();
        self.place = Place::Path(self.default.clone());
        self.log_id = Applied::fresh().id;
        self.anchored = false;
        self.offset = self.start;
        self.prepared = 0;
    }

    /// Whether records were applied since the last durable commit of the engine.
    pub(crate) fn pending(&self) -> bool {
        self.durable < self.last
    }

    /// The database closes (or moves) after a checkpoint: remove the file, if its name still
    /// names it. A file that cannot be removed holds only records the database holds, which a
    /// replay skips.
    pub(crate) fn remove(&mut self) {
        if self.pending() || self.broken {
            return;
        }
        self.file = None;
        if let Some((path, file)) = self.held.take() {
            let _ = crate::store::beside::remove_held(&path, &file);
        }
    }

    fn error(&self, source: io::Error) -> StoreError {
        let (operation, key) = ("write the commit log", self.place.describe());
        StoreError::Engine { backend: self.backend, operation, key, source: Box::new(source) }
    }
}

/// What a commit that does not go through the log stores (see [`CommitLog::position`]).
#[derive(Clone, Debug)]
pub(crate) struct Position {
    /// Under [`APPLIED_KEY`].
    pub applied: Applied,
    /// Under [`NAME_KEY`], when the log is not yet named by a durable commit.
    pub name: Option<LogName>,
}

/// What a replay found.
#[derive(Clone, Debug)]
pub(crate) struct Replayed {
    /// Where the database's file stands (`None`: it never used a log).
    pub stored: Option<Applied>,
    /// The log the database names as its own (`None`: none, or a build before named none).
    pub name: Option<LogName>,
    /// The sequence number of the last record applied (the stored one when none was).
    pub last: u64,
    /// Where the record after it goes in the log.
    pub end: u64,
}

/// Where the records `follow` reads begin.
#[derive(Clone, Copy, Debug)]
enum From {
    /// At the log's start (this offset): records the engine already holds may come first, and
    /// are skipped (a replay after the engine's last durable commit).
    Start(u64),
    /// Here, where the record after the position `follow` is given must be, if there is one:
    /// whatever else is here (a record of an older round of the log) ends the records at once.
    Next(u64),
}

/// How far `follow` went.
#[derive(Clone, Copy, Debug)]
struct Followed {
    /// The sequence number of the last record applied (`applied`'s own when none was).
    last: u64,
    /// Where the record after it goes (0 when none was applied).
    end: u64,
    /// Where the last record applied starts (0 when none was).
    last_at: u64,
}

/// Call `apply` with each record of the log in `file` (at `place`, records from `start`) that
/// follows `applied`, in order, while it returns `true`: how far it went.
fn follow(
    backend: &'static str,
    place: &Place,
    file: &dyn LogFile,
    from: From,
    applied: Applied,
    limit: u64,
    mut apply: impl FnMut(WriteBatch) -> Result<bool, StoreError>,
) -> Result<Followed, StoreError> {
    let damaged =
        |what| StoreError::Damaged { backend, operation: "replay the commit log", key: place.describe(), what };
    let (start, mut expected) = match from {
        From::Start(start) => (start, None),
        From::Next(at) => (at, applied.seq.checked_add(1)),
    };
    let mut records = Records::new(file, start).map_err(|e| read_error(backend, place, e))?;
    let mut followed = Followed { last: applied.seq, end: 0, last_at: 0 };
    loop {
        let at = records.at;
        let Some((id, seq, payload)) = records.next().map_err(|e| read_error(backend, place, e))? else { break };
        if id != applied.id || expected.is_some_and(|e| e != seq) || seq > limit {
            break;
        }
        expected = seq.checked_add(1);
        if seq <= followed.last {
            continue;
        }
        if seq != followed.last + 1 {
            return Err(damaged("records are missing: the log does not continue the database"));
        }
        let batch = decode(&payload).ok_or_else(|| damaged("a record holds a malformed batch"))?;
        if !apply(batch)? {
            break;
        }
        followed = Followed { last: seq, end: records.at, last_at: at };
    }
    Ok(followed)
}

/// A log whose failed append's record could not be erased refuses further commits: that commit
/// is applied by the next open if its record reached the disk whole, and not otherwise.
fn outcome_unknown(backend: &'static str, place: &Place) -> StoreError {
    StoreError::Engine {
        backend,
        operation: "commit",
        key: place.describe(),
        source: "an earlier commit failed after its record was written to the commit log, and the record could \
                 not be erased, so that commit's outcome is unknown: open the database again (it is then applied \
                 if its record reached the disk whole) before committing more"
            .into(),
    }
}

pub(crate) fn read_error(backend: &'static str, place: &Place, source: io::Error) -> StoreError {
    StoreError::Engine { backend, operation: "read the commit log", key: place.describe(), source: Box::new(source) }
}
