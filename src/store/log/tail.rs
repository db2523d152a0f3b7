//! The records of a shared log that follow the engine's position (its tail), as one handle reads
//! them: in windows that double, and remembered, so that the next read after the same position
//! reads only what other writers appended since, not the whole log again.
//!
//! What was read stays true while the engine's position is unchanged: only a checkpoint moves
//! the position, and only after it has moved does a writer start the log again at its
//! beginning; until then writers only append after the last record. One exception: an appender
//! whose sync failed erases its record's header (`SharedLog::take_back`) before it lets go of the
//! lock, so only the last record can be erased, and only before another is appended after it.
//! The header of the last record remembered is therefore read again, and compared whole (its
//! checksum covers the payload), before what was remembered is used; a record written in its
//! place since has another checksum.

use std::fs::File;
use std::io;
use std::sync::Arc;

use parking_lot::Mutex;

use super::file::{LogFile, Place};
use super::record::HEADER;
use super::{follow, read_error, Applied, From};
use crate::error::StoreError;
use crate::store::kv::WriteBatch;
use crate::store::pending::WriteSet;

/// The records of a log that follow what the engine holds.
#[derive(Clone)]
pub(crate) struct Pending {
    /// Their writes, applied in order.
    pub writes: Arc<WriteSet>,
    /// The sequence number of the last (the engine's own when there is none).
    pub last: u64,
    /// Where the next record goes (0 when there is none: the log's start).
    pub end: u64,
}

/// The records of the log in `file` (records from `start`) that follow `applied`, the position
/// the engine's snapshot holds: what a read of that snapshot merges over it.
#[cfg(test)]
pub(crate) fn pending(
    backend: &'static str,
    place: &Place,
    file: &dyn LogFile,
    start: u64,
    applied: Applied,
) -> Result<Pending, StoreError> {
    let mut writes = WriteSet::default();
    let followed = follow(backend, place, file, From::Start(start), applied, u64::MAX, |batch| {
        writes.apply(&batch);
        Ok(true)
    })?;
    Ok(Pending { writes: Arc::new(writes), last: followed.last, end: followed.end })
}

/// What one handle last read of its log's tail.
struct Remembered {
    /// The engine's position the records follow.
    applied: Applied,
    pending: Pending,
    /// Where the last record starts, and its header as read; `None` when none follows
    /// `applied`.
    last: Option<(u64, [u8; HEADER])>,
}

/// The tail of one log as one handle reads it.
#[derive(Default)]
pub(crate) struct Tail {
    remembered: Mutex<Option<Remembered>>,
}

impl Tail {
    /// The records of the log in `file` (records from `start`) after `applied`.
    ///
    /// Once read, the next record after `applied` can only be where the last one read ends, or
    /// at `start` when there was none (a writer starts the log again then): the next read reads
    /// there only, and what is there ends the records unless it is that record (whatever older
    /// round of the log lies beyond is not read again). Records appended since are applied to
    /// the writes remembered, in place unless a snapshot still holds them (then to a copy).
    pub(crate) fn read(
        &self,
        backend: &'static str,
        place: &Place,
        file: &File,
        start: u64,
        applied: Applied,
    ) -> Result<Pending, StoreError> {
        let failed = |e| read_error(backend, place, e);
        let len = LogFile::len(file).map_err(failed)?;
        // Taken out while it is read on, so that its writes can be extended in place; another
        // thread reading meanwhile reads the log whole.
        let known = self.remembered.lock().take().filter(|k| k.applied == applied);
        let (mut remembered, from) = match known {
            Some(known) if still_there(file, len, known.last).map_err(failed)? => {
                let at = if known.last.is_some() { known.pending.end } else { start };
                (known, From::Next(at))
            }
            _ => {
                let pending = Pending { writes: Arc::default(), last: applied.seq, end: 0 };
                (Remembered { applied, pending, last: None }, From::Start(start))
            }
        };
        let (From::Start(at) | From::Next(at)) = from;
        let log = Windowed { head: Mutex::new(Vec::new()), file, base: at, len };
        let after = Applied { seq: remembered.pending.last, ..applied };
        let mut batches: Vec<WriteBatch> = Vec::new();
        let followed = follow(backend, place, &log, from, after, u64::MAX, |batch| {
            batches.push(batch);
            Ok(true)
        })?;
        if !batches.is_empty() {
            // Read without the lock, the records may be from different moments: a record read
            // first, then erased by its failed append and another written in its place, and a
            // record read next that followed that other one. Remembered, such a mix would stand
            // until the position moves, so it is remembered only if the bytes read, and the last
            // record remembered before, are still as they were read.
            let stable = still_there(file, len, remembered.last).map_err(failed)?
                && log.unchanged(at, followed.end).map_err(failed)?;
            let writes = Arc::make_mut(&mut remembered.pending.writes);
            for batch in &batches {
                writes.apply(batch);
            }
            if !stable {
                // Returned, not kept: the next read reads the log whole.
                return Ok(Pending { last: followed.last, end: followed.end, ..remembered.pending });
            }
            let mut header = [0u8; HEADER];
            log.read_at(&mut header, followed.last_at).map_err(failed)?;
            (remembered.pending.last, remembered.pending.end) = (followed.last, followed.end);
            remembered.last = Some((followed.last_at, header));
        }
        let pending = remembered.pending.clone();
        self.keep(remembered);
        Ok(pending)
    }
    /// Remember `read`, unless another thread remembered a read meanwhile (either is valid).
    fn keep(&self, read: Remembered) {
        let mut slot = self.remembered.lock();
        if slot.is_none() {
            *slot = Some(read);
        }
    }
}

/// Whether the record remembered last is still in the log as it was read (there is nothing to
/// check when none was).
fn still_there(file: &File, len: u64, last: Option<(u64, [u8; HEADER])>) -> io::Result<bool> {
    let Some((at, header)) = last else { return Ok(true) };
    if len.saturating_sub(at) < HEADER as u64 {
        return Ok(false);
    }
    let mut now = [0u8; HEADER];
    Ok(read_up_to(file, &mut now, at)? == HEADER && now == header)
}

/// Read `out` from `offset` as far as the file goes, returning how much was read: a writer
/// shrinks the log once every record in it is taken over (`SharedLog::shrink`), possibly while
/// it is read, and what is gone reads as zeros, as no record.
fn read_up_to(file: &File, out: &mut [u8], offset: u64) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut done = 0;
    while done < out.len() {
        match FileExt::read_at(file, &mut out[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    out[done..].fill(0);
    Ok(done)
}

/// A log file read into memory from `base` as far as its records are read, in reads of at least
/// [`WINDOW`] bytes that double: a log's records cost a few reads, not two each.
struct Windowed<'a> {
    head: Mutex<Vec<u8>>,
    file: &'a File,
    base: u64,
    len: u64,
}

/// The first read of a log's records.
const WINDOW: u64 = 16 << 10;

impl Windowed<'_> {
    /// Whether the file's bytes `from..to` (read before) are the same now.
    fn unchanged(&self, from: u64, to: u64) -> io::Result<bool> {
        let head = self.head.lock();
        let (Some(start), Some(end)) = (from.checked_sub(self.base), to.checked_sub(self.base)) else {
            return Ok(false);
        };
        let Some(before) = head.get(start as usize..end as usize) else { return Ok(false) };
        let mut now = vec![0u8; before.len()];
        Ok(read_up_to(self.file, &mut now, from)? == now.len() && now == before)
    }
}

impl LogFile for Windowed<'_> {
    fn len(&self) -> io::Result<u64> {
        Ok(self.len)
    }

    fn read_at(&self, out: &mut [u8], offset: u64) -> io::Result<()> {
        let end = offset.checked_add(out.len() as u64).filter(|&end| end <= self.len && offset >= self.base);
        let end = end.ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        let (from, to) = (offset - self.base, end - self.base);
        let mut head = self.head.lock();
        let have = head.len() as u64;
        if to > have {
            let grown = to.max(have * 2).max(WINDOW).min(self.len - self.base);
            head.resize(grown as usize, 0);
            if let Err(e) = read_up_to(self.file, &mut head[have as usize..], self.base + have) {
                head.truncate(have as usize);
                return Err(e);
            }
        }
        // Within `len - base`, which is at most what memory was given for `head`.
        out.copy_from_slice(&head[from as usize..to as usize]);
        Ok(())
    }

    fn write_at(&self, _data: &[u8], _offset: u64) -> io::Result<()> {
        Err(io::Error::other("a log being read is not written"))
    }

    fn sync(&self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
#[path = "tail_tests.rs"]
mod tests;
