//! The commit log's record format (see [`super`]): laying a batch out as a record, reading it
//! back, and reading the whole records of a log file in order.

use std::io;

use super::file::LogFile;
use crate::store::kv::WriteBatch;

const MAGIC: u32 = u32::from_le_bytes(*b"ZLOG");
pub(super) const HEADER: usize = 28;
/// A batch whose record would be larger is committed to the engine durably instead: writing it
/// twice costs more than the sync it saves.
pub(super) const LARGEST: usize = 1 << 20;

/// The records of a log file, read one at a time; the first that is not whole ends them.
pub(super) struct Records<'a> {
    file: &'a dyn LogFile,
    len: u64,
    pub(super) at: u64,
}

impl<'a> Records<'a> {
    /// The records of `file` from `start`.
    pub(super) fn new(file: &'a dyn LogFile, start: u64) -> io::Result<Records<'a>> {
        let len = file.len()?;
        Ok(Records { file, len, at: start })
    }

    /// Fill `out` from `offset`; `false` when the file ends sooner than when the records were
    /// begun: a writer cut the log (every record was in the engine then), and the records end
    /// where it was cut.
    fn read_at(&self, out: &mut [u8], offset: u64) -> io::Result<bool> {
        match self.file.read_at(out, offset) {
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
            read => read.map(|()| true),
        }
    }

    /// The next whole record: database id, sequence number and payload.
    pub(super) fn next(&mut self) -> io::Result<Option<(u64, u64, Vec<u8>)>> {
        let mut header = [0u8; HEADER];
        if self.len.saturating_sub(self.at) < HEADER as u64 {
            return Ok(None);
        }
        if !self.read_at(&mut header, self.at)? {
            return Ok(None);
        }
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
        if !self.read_at(&mut payload, self.at + HEADER as u64)? {
            return Ok(None);
        }
        if crc32c::crc32c_append(crc32c::crc32c(&header[..24]), &payload) != crc {
            return Ok(None);
        }
        self.at += (HEADER + size) as u64;
        Ok(Some((id, seq, payload)))
    }
}

/// The length of `batch`'s record.
pub(super) fn encoded_len(batch: &WriteBatch) -> usize {
    let prefixes: usize = batch.erased_prefixes.iter().map(|p| 4 + p.len()).sum();
    let puts: usize = batch.puts.iter().map(|(k, v)| 4 + k.len() + 1 + v.as_ref().map_or(0, |v| 4 + v.len())).sum();
    HEADER + 4 + prefixes + 4 + puts
}

/// Lay out the record of `batch` in `out`.
pub(super) fn encode(out: &mut Vec<u8>, batch: &WriteBatch, id: u64, seq: u64) {
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
pub(super) fn decode(payload: &[u8]) -> Option<WriteBatch> {
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

pub(super) fn le_u32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

pub(super) fn le_u64(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

/// Erase the header of the record at `offset` and sync, so that no reader or replay takes it:
/// what a writer does when the commit of a record it wrote failed. The next record takes its
/// place and its sequence number.
pub(super) fn erase_header(file: &dyn LogFile, offset: u64) -> io::Result<()> {
    file.write_at(&[0u8; HEADER], offset).and_then(|()| file.sync())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::FileExt;

    use super::{decode, encode, Records, WriteBatch, HEADER};

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

    #[test]
    fn records_end_where_a_file_cut_while_read_ends() {
        let dir = tempfile::tempdir().unwrap();
        let file =
            std::fs::File::options().read(true).write(true).create_new(true).open(dir.path().join("log")).unwrap();
        let (mut first, mut second) = (Vec::new(), Vec::new());
        let mut batch = WriteBatch::default();
        batch.puts.insert("k".into(), Some(vec![7; 100]));
        encode(&mut first, &batch, 3, 1);
        encode(&mut second, &batch, 3, 2);
        file.write_all_at(&first, 0).unwrap();
        file.write_all_at(&second, first.len() as u64).unwrap();
        let mut records = Records::new(&file, 0).unwrap();
        assert_eq!(records.next().unwrap().map(|(_, seq, _)| seq), Some(1));
        // Cut in the middle of the second record's header, then at the end of the first.
        file.set_len(first.len() as u64 + 10).unwrap();
        assert!(records.next().unwrap().is_none(), "a header cut short ends the records");
        let mut again = Records::new(&file, 0).unwrap();
        assert_eq!(again.next().unwrap().map(|(_, seq, _)| seq), Some(1));
        file.set_len(first.len() as u64).unwrap();
        assert!(again.next().unwrap().is_none(), "a file that ends sooner than it did ends the records");
    }
}
