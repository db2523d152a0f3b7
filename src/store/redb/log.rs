//! The commit log of a redb database opened by one process: a durable commit of a small batch
//! costs one write and one `fdatasync` of a small file beside the database instead of redb's
//! durable commit.
//!
//! Why: redb's durable commit writes the B-tree pages it changed all over the file, then its
//! header, and syncs; one writer reached 0.34-0.47 of the disk's 4 KiB write + fdatasync rate
//! (docs/benchmarks.md, "A commit log"). Here a durable commit writes its batch as one record to
//! `<database>-log`, syncs it, and applies it to redb with `Durability::None`, which writes
//! nothing to the file but is seen by every later read of this process. The record makes the
//! commit durable. A durable redb commit (a checkpoint: a large batch, an import, a compaction,
//! the close, or a log that is full) makes every record before it unnecessary, and the log
//! starts again at its beginning.
//!
//! Each record carries a sequence number, and each commit applied from the log stores it in the
//! same redb transaction under [`APPLIED_KEY`]. After a crash redb opens at its last durable
//! commit, whose [`APPLIED_KEY`] says which records it holds; the records after it are applied
//! again, in order, and committed durably ([`replay`]). A record counts whole or not at all: its
//! CRC covers its header and contents, so a torn one ends the log, and the older records an
//! earlier round left further in the file end it too, their sequence numbers being lower.
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
//! value. The database id (random, stored with the sequence number) keeps a log left beside a
//! file that was since deleted and created anew from being applied to the new database.

use std::hash::{BuildHasher, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use redb::{ReadableDatabase, ReadableTable};

use super::log_file::{LogFile, Place};
use super::{durability, write_batch, NAME, TABLE};
use crate::error::StoreError;
use crate::store::kv::{engine_error, WriteBatch};

const MAGIC: u32 = u32::from_le_bytes(*b"ZLOG");
const HEADER: usize = 28;
/// Once a record would end past this, the engine checkpoints and the log starts again at its
/// beginning.
const CAPACITY: u64 = 4 << 20;
/// A batch whose record would be larger is committed to redb durably instead: writing it twice
/// costs more than the sync it saves.
const LARGEST: usize = 1 << 20;
/// The file grows by this much at a time, written with zeros.
const GROWTH: u64 = 256 << 10;
/// The redb key holding the database id and the sequence number of the last record applied.
pub(super) const APPLIED_KEY: &str = "__zarrdb/commit-log";

/// The log beside the database at `database`.
pub(super) fn log_path(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push("-log");
    PathBuf::from(name)
}

/// Where a database stands with its log: its id and the last record it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Applied {
    pub id: u64,
    pub seq: u64,
}

impl Applied {
    /// What [`APPLIED_KEY`] holds; a fresh id when the database has never used a log.
    fn read(table: &impl ReadableTable<&'static [u8], &'static [u8]>) -> Result<Option<Applied>, StoreError> {
        let Some(value) = table.get(APPLIED_KEY.as_bytes()).map_err(engine_error(NAME, "get", APPLIED_KEY))? else {
            return Ok(None);
        };
        let value = value.value();
        let damaged =
            |what| StoreError::Damaged { backend: NAME, operation: "open", key: APPLIED_KEY.to_owned(), what };
        let (16, Some(id), Some(seq)) = (value.len(), le_u64(value, 0), le_u64(value, 8)) else {
            return Err(damaged("the commit log's position is not 16 bytes"));
        };
        // One number per commit: a sound file is nowhere near, and counting on cannot overflow.
        if seq > u64::MAX / 2 {
            return Err(damaged("the commit log's position is out of range"));
        }
        Ok(Some(Applied { id, seq }))
    }

    fn fresh() -> Applied {
        // A random id: std's hasher is keyed randomly per process, and the time varies it more.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher
            .write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
        Applied { id: hasher.finish(), seq: 0 }
    }

    fn to_bytes(self) -> [u8; 16] {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&self.id.to_le_bytes());
        bytes[8..].copy_from_slice(&self.seq.to_le_bytes());
        bytes
    }

    /// Store this position under [`APPLIED_KEY`] in `table` (`operation` names it in errors).
    pub(super) fn store(
        self,
        table: &mut redb::Table<&[u8], &[u8]>,
        operation: &'static str,
    ) -> Result<(), StoreError> {
        table.insert(APPLIED_KEY.as_bytes(), self.to_bytes().as_slice()).map_err(engine_error(
            NAME,
            operation,
            APPLIED_KEY,
        ))?;
        Ok(())
    }
}

/// The writing end of the log, owned by the engine and used under its commit lock.
pub(super) struct CommitLog {
    place: Place,
    /// Opened at the first record.
    file: Option<Arc<dyn LogFile>>,
    /// Where the next record goes.
    offset: u64,
    /// How much of the file is written (zeros or records).
    prepared: u64,
    id: u64,
    /// The sequence number of the last record applied to redb.
    last: u64,
    /// The last sequence number a durable redb commit holds: records up to it are not needed.
    durable: u64,
    /// A durable redb commit holds the id: until then a replay would not know the log as the
    /// database's own, so commits go to redb durably.
    anchored: bool,
    /// A failed commit's record could not be taken back: a reopen would apply it, so no later
    /// commit may be applied before that happens.
    broken: bool,
    /// The record being committed.
    record: Vec<u8>,
}

impl CommitLog {
    /// The log at `place` of a database where [`replay`] found `replayed`.
    pub(super) fn new(place: Place, replayed: Replayed) -> CommitLog {
        let anchored = replayed.stored.is_some();
        let applied = replayed.stored.unwrap_or_else(Applied::fresh);
        CommitLog {
            anchored,
            place,
            file: None,
            offset: replayed.end,
            prepared: 0,
            id: applied.id,
            last: replayed.last,
            durable: applied.seq,
            broken: false,
            record: Vec::new(),
        }
    }

    /// Whether `batch` goes through the log: small enough, and the database's id durable.
    pub(super) fn takes(&self, batch: &WriteBatch) -> bool {
        self.anchored && encoded_len(batch) <= LARGEST
    }

    /// `Err` once a failed commit's record could not be taken back.
    pub(super) fn usable(&self) -> Result<(), StoreError> {
        if !self.broken {
            return Ok(());
        }
        Err(StoreError::Engine {
            backend: NAME,
            operation: "commit",
            key: self.place.describe(),
            source: "an earlier commit failed after its record was written to the commit log, and the record \
                     could not be erased, so that commit's outcome is unknown: open the database again (it is \
                     then applied if its record reached the disk whole) before committing more"
                .into(),
        })
    }

    /// Lay out the record of `batch`; `true` when the log holds records no durable commit holds
    /// and has no room for it: the engine checkpoints first ([`CommitLog::checkpointed`]).
    pub(super) fn prepare(&mut self, batch: &WriteBatch) -> bool {
        encode(&mut self.record, batch, self.id, self.last + 1);
        self.durable < self.last && self.offset + self.record.len() as u64 > CAPACITY
    }

    /// What the redb transaction applying the prepared record stores under [`APPLIED_KEY`].
    pub(super) fn next(&self) -> Applied {
        Applied { id: self.id, seq: self.last + 1 }
    }

    /// Write the prepared record and start its way to the disk; [`CommitLog::sync`] waits for
    /// it. On failure it is taken back (or the log is broken), and nothing changed.
    pub(super) fn write(&mut self) -> Result<(), StoreError> {
        if self.durable == self.last {
            // Every record in the file is held by a durable commit: start again at the beginning.
            self.offset = 0;
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
    pub(super) fn sync(&mut self) -> Result<(), StoreError> {
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
        let file = match &mut self.file {
            Some(file) => file,
            None => {
                let file = self.place.open_for_writing()?;
                self.prepared = file.len()?;
                self.file.insert(file)
            }
        };
        let end = self.offset + self.record.len() as u64;
        if end > self.prepared {
            let grown = end.div_ceil(GROWTH) * GROWTH;
            let zeros = vec![0u8; GROWTH as usize];
            let mut at = self.prepared;
            while at < grown {
                let n = (grown - at).min(GROWTH) as usize;
                file.write_at(&zeros[..n], at)?;
                at += n as u64;
            }
            self.prepared = grown;
        }
        *begun = true;
        file.write_at(&self.record, self.offset)?;
        file.start_writeback(self.offset, self.record.len());
        Ok(())
    }

    /// The prepared record is applied to redb: the next goes after it.
    pub(super) fn applied(&mut self) {
        self.last += 1;
        self.offset += self.record.len() as u64;
    }

    /// Applying the written record failed: erase its header, so no replay applies it. The next
    /// record takes its place and its sequence number.
    pub(super) fn take_back(&mut self) {
        let Some(file) = &self.file else { return };
        let erased = file.write_at(&[0u8; HEADER], self.offset).and_then(|()| file.sync());
        if erased.is_err() {
            self.broken = true;
        }
    }

    /// A redb commit that did not go through the log stored [`CommitLog::next`]: the next
    /// record follows it, so a file put back from before it does not take the log's records.
    /// `durable`: it was a durable commit, which holds every record applied, and the id.
    pub(super) fn advanced(&mut self, durable: bool) {
        self.last += 1;
        if durable {
            self.durable = self.last;
            self.anchored = true;
        }
    }

    /// A durable redb commit (a compaction) now holds every record applied.
    pub(super) fn checkpointed(&mut self) {
        self.durable = self.last;
    }

    /// The sequence number of the last record applied, or commit that stored one.
    pub(super) fn last(&self) -> u64 {
        self.last
    }

    /// The database's file was renamed to `database`: the log follows, unless it holds records
    /// the file does not (then it stays, for the next open of the old name to apply).
    pub(super) fn moved_to(&mut self, database: &Path) {
        if self.pending() || self.broken {
            return;
        }
        self.remove();
        self.place = Place::Path(log_path(database));
        self.offset = 0;
        self.prepared = 0;
    }

    /// Whether records were applied since the last durable redb commit.
    pub(super) fn pending(&self) -> bool {
        self.durable < self.last
    }

    /// The database closes (or moves) after a checkpoint: remove the file. A file that cannot be
    /// removed holds only records the database holds, which a replay skips.
    pub(super) fn remove(&mut self) {
        if self.pending() || self.broken {
            return;
        }
        self.file = None;
        self.place.remove();
    }

    fn error(&self, source: io::Error) -> StoreError {
        let (operation, key) = ("write the commit log", self.place.describe());
        StoreError::Engine { backend: NAME, operation, key, source: Box::new(source) }
    }
}

/// What a replay found.
#[derive(Clone, Copy, Debug)]
pub(super) struct Replayed {
    /// Where the database's file stands (`None`: it never used a log).
    pub stored: Option<Applied>,
    /// The sequence number of the last record applied (the stored one when none was).
    pub last: u64,
    /// Where the record after it goes in the log.
    pub end: u64,
}

/// Apply the records of the log at `path` that `db`'s latest commit does not hold, in order, in
/// one commit: `durable` (redb's multi-writer mode, where other processes read the file), or
/// without a sync, so that a database opens on a full disk too: the records stay in the log until
/// a durable commit holds them. Records numbered above `limit` are left: when the handle opens
/// the file again, a commit of this process may be writing its record, not yet applied.
pub(super) fn replay(db: &redb::Database, place: &Place, durable: bool, limit: u64) -> Result<Replayed, StoreError> {
    let file = place.open_existing().map_err(|e| read_error(place, e))?;
    // Read first: a write transaction can fail where reading does not (a full disk), and most
    // opens find nothing to apply.
    let stored = {
        let txn = db.begin_read().map_err(engine_error(NAME, "replay the commit log", ""))?;
        match txn.open_table(TABLE) {
            Ok(table) => Applied::read(&table)?,
            Err(redb::TableError::TableDoesNotExist(_)) => None,
            Err(e) => return Err(engine_error(NAME, "open_table", "")(e)),
        }
    };
    // A database that never used a log holds none of any log's records: a log beside it was left
    // by a file since replaced, and is not its own.
    let nothing = Replayed { stored, last: stored.map_or(0, |a| a.seq), end: 0 };
    let (Some(file), Some(applied)) = (file, stored) else { return Ok(nothing) };
    let mut newer = false;
    follow(place, file.as_ref(), applied, limit, |_| {
        newer = true;
        Ok(false)
    })?;
    if !newer {
        return Ok(nothing);
    }
    let mut txn = db.begin_write().map_err(engine_error(NAME, "replay the commit log", ""))?;
    let replayed = {
        let mut table = txn.open_table(TABLE).map_err(engine_error(NAME, "open_table", ""))?;
        // Another process of redb's multi-writer mode may have applied them meanwhile.
        let Some(applied) = Applied::read(&table)? else { return Ok(nothing) };
        let (last, end) = follow(place, file.as_ref(), applied, limit, |batch| {
            write_batch(&mut table, &batch)?;
            Ok(true)
        })?;
        Applied { seq: last, ..applied }.store(&mut table, "replay the commit log")?;
        Replayed { stored: Some(if durable { Applied { seq: last, ..applied } } else { applied }), last, end }
    };
    txn.set_durability(durability(durable)).map_err(engine_error(NAME, "set_durability", ""))?;
    txn.commit().map_err(engine_error(NAME, "replay the commit log", ""))?;
    Ok(replayed)
}

/// Call `apply` with each record of the log in `file` (at `path`) that follows `applied`, in
/// order, while it returns `true`. Returns the sequence number of the last record applied and
/// where the record after it goes.
fn follow(
    place: &Place,
    file: &dyn LogFile,
    applied: Applied,
    limit: u64,
    mut apply: impl FnMut(WriteBatch) -> Result<bool, StoreError>,
) -> Result<(u64, u64), StoreError> {
    let damaged =
        |what| StoreError::Damaged { backend: NAME, operation: "replay the commit log", key: place.describe(), what };
    let mut records = Records::new(file).map_err(|e| read_error(place, e))?;
    let mut expected: Option<u64> = None;
    let (mut last, mut end) = (applied.seq, 0);
    while let Some((id, seq, payload)) = records.next().map_err(|e| read_error(place, e))? {
        if id != applied.id || expected.is_some_and(|e| e != seq) || seq > limit {
            break;
        }
        expected = seq.checked_add(1);
        if seq <= last {
            continue;
        }
        if seq != last + 1 {
            return Err(damaged("records are missing: the log does not continue the database"));
        }
        let batch = decode(&payload).ok_or_else(|| damaged("a record holds a malformed batch"))?;
        if !apply(batch)? {
            break;
        }
        (last, end) = (seq, records.at);
    }
    Ok((last, end))
}

fn read_error(place: &Place, source: io::Error) -> StoreError {
    StoreError::Engine {
        backend: NAME,
        operation: "read the commit log",
        key: place.describe(),
        source: Box::new(source),
    }
}

/// The records of a log file, read one at a time; the first that is not whole ends them.
struct Records<'a> {
    file: &'a dyn LogFile,
    len: u64,
    at: u64,
}

impl<'a> Records<'a> {
    fn new(file: &'a dyn LogFile) -> io::Result<Records<'a>> {
        let len = file.len()?;
        Ok(Records { file, len, at: 0 })
    }

    /// The next whole record: database id, sequence number and payload.
    fn next(&mut self) -> io::Result<Option<(u64, u64, Vec<u8>)>> {
        let mut header = [0u8; HEADER];
        if self.len.saturating_sub(self.at) < HEADER as u64 {
            return Ok(None);
        }
        self.file.read_at(&mut header, self.at)?;
        let (magic, size) = (le_u32(&header, 0), le_u32(&header, 4));
        let (id, seq, crc) = (le_u64(&header, 8), le_u64(&header, 16), le_u32(&header, 24));
        let (Some(MAGIC), Some(size), Some(id), Some(seq), Some(crc)) = (magic, size, id, seq, crc) else {
            return Ok(None);
        };
        // The length is read from the file: only a record that fits in it is read.
        let size = size as usize;
        if size > LARGEST || self.len - self.at - (HEADER as u64) < size as u64 {
            return Ok(None);
        }
        let mut payload = vec![0u8; size];
        self.file.read_at(&mut payload, self.at + HEADER as u64)?;
        if crc32c::crc32c_append(crc32c::crc32c(&header[..24]), &payload) != crc {
            return Ok(None);
        }
        self.at += (HEADER + size) as u64;
        Ok(Some((id, seq, payload)))
    }
}

/// The length of `batch`'s record.
fn encoded_len(batch: &WriteBatch) -> usize {
    let prefixes: usize = batch.erased_prefixes.iter().map(|p| 4 + p.len()).sum();
    let puts: usize = batch.puts.iter().map(|(k, v)| 4 + k.len() + 1 + v.as_ref().map_or(0, |v| 4 + v.len())).sum();
    HEADER + 4 + prefixes + 4 + puts
}

/// Lay out the record of `batch` in `out`.
fn encode(out: &mut Vec<u8>, batch: &WriteBatch, id: u64, seq: u64) {
    out.clear();
    out.reserve(encoded_len(batch));
    out.extend_from_slice(&MAGIC.to_le_bytes());
    out.extend_from_slice(&[0; 4]); // the payload's length, below
    out.extend_from_slice(&id.to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&[0; 4]); // the CRC, below
    let bytes = |out: &mut Vec<u8>, b: &[u8]| {
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        out.extend_from_slice(b);
    };
    out.extend_from_slice(&(batch.erased_prefixes.len() as u32).to_le_bytes());
    for prefix in &batch.erased_prefixes {
        bytes(out, prefix.as_bytes());
    }
    out.extend_from_slice(&(batch.puts.len() as u32).to_le_bytes());
    for (key, value) in &batch.puts {
        bytes(out, key.as_bytes());
        match value {
            None => out.push(0),
            Some(v) => {
                out.push(1);
                bytes(out, v);
            }
        }
    }
    let size = (out.len() - HEADER) as u32;
    out[4..8].copy_from_slice(&size.to_le_bytes());
    let crc = crc32c::crc32c_append(crc32c::crc32c(&out[..24]), &out[HEADER..]);
    out[24..28].copy_from_slice(&crc.to_le_bytes());
}

/// The batch a record's payload holds; `None` when it is malformed.
fn decode(payload: &[u8]) -> Option<WriteBatch> {
    let mut at = 0usize;
    let mut take = |n: usize| -> Option<&[u8]> {
        let piece = payload.get(at..at.checked_add(n)?)?;
        at += n;
        Some(piece)
    };
    let mut batch = WriteBatch::default();
    let prefixes = le_u32(take(4)?, 0)?;
    for _ in 0..prefixes {
        let n = le_u32(take(4)?, 0)? as usize;
        batch.erased_prefixes.push(String::from_utf8(take(n)?.to_vec()).ok()?);
    }
    let puts = le_u32(take(4)?, 0)?;
    for _ in 0..puts {
        let n = le_u32(take(4)?, 0)? as usize;
        let key = String::from_utf8(take(n)?.to_vec()).ok()?;
        let value = match take(1)?[0] {
            0 => None,
            1 => {
                let n = le_u32(take(4)?, 0)? as usize;
                Some(take(n)?.to_vec())
            }
            _ => return None,
        };
        batch.puts.insert(key, value);
    }
    (at == payload.len()).then_some(batch)
}

fn le_u32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn le_u64(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::{decode, encode, WriteBatch, HEADER};

    #[test]
    fn a_record_holds_its_batch() {
        let mut batch = WriteBatch::default();
        batch.erased_prefixes.push("a/".into());
        batch.puts.insert("b/c/0".into(), Some(vec![1, 2, 3]));
        batch.puts.insert("b/c/1".into(), None);
        batch.puts.insert("empty".into(), Some(Vec::new()));
        let mut record = Vec::new();
        encode(&mut record, &batch, 7, 9);
        assert_eq!(record.len(), super::encoded_len(&batch));
        let back = decode(&record[HEADER..]).expect("decodes");
        assert_eq!(back.erased_prefixes, batch.erased_prefixes);
        assert_eq!(back.puts, batch.puts);
        // Every shorter or longer payload is refused, not misread.
        for cut in 0..record.len() - HEADER {
            assert!(decode(&record[HEADER..HEADER + cut]).is_none(), "cut at {cut}");
        }
        let mut longer = record[HEADER..].to_vec();
        longer.push(0);
        assert!(decode(&longer).is_none());
    }
}
