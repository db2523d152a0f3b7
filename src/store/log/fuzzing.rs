//! The commit log's entry point for the fuzz targets (`fuzz/`, through [`crate::fuzzing`]): the
//! record reader and payload decoder are internal, and a log file left by a crash is untrusted
//! input, read on every open.

use std::io;
use std::path::PathBuf;

use super::file::{LogFile, Place};
use super::record::{decode, encode, encoded_len, Records};
use super::{follow, Applied, From};
use crate::store::kv::WriteBatch;

/// A log file's bytes in memory.
struct Bytes<'a>(&'a [u8]);

impl LogFile for Bytes<'_> {
    fn len(&self) -> io::Result<u64> {
        Ok(self.0.len() as u64)
    }

    fn read_at(&self, out: &mut [u8], offset: u64) -> io::Result<()> {
        let piece = usize::try_from(offset)
            .ok()
            .and_then(|start| self.0.get(start..start.checked_add(out.len())?))
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        out.copy_from_slice(piece);
        Ok(())
    }

    fn write_at(&self, _data: &[u8], _offset: u64) -> io::Result<()> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    fn sync(&self) -> io::Result<()> {
        Ok(())
    }
}

/// Read `bytes` as a commit log file: every whole record, each payload decoded, then the replay
/// a database whose id is the first record's would make of it. Panics when a decoded batch does
/// not survive being laid out again (the record read back must hold the same id, sequence number
/// and batch, at the length the record layout promised for it); any other outcome, records or
/// none, is allowed.
pub fn commit_log(bytes: &[u8]) {
    let file = Bytes(bytes);
    let Ok(mut records) = Records::new(&file, 0) else { return };
    let mut first_id = None;
    while let Ok(Some((id, seq, payload))) = records.next() {
        first_id.get_or_insert(id);
        let Some(batch) = decode(&payload) else { continue };
        let mut again = Vec::new();
        encode(&mut again, &batch, id, seq);
        assert_eq!(again.len(), encoded_len(&batch), "encoded_len disagrees with encode");
        let reread = Bytes(&again);
        let mut reread = Records::new(&reread, 0).expect("an in-memory log has a length");
        let (id2, seq2, payload2) =
            reread.next().expect("an in-memory read").expect("a record just laid out reads back whole");
        assert_eq!((id2, seq2), (id, seq), "the record's id and sequence number changed");
        let batch2 = decode(&payload2).expect("a batch just laid out decodes");
        assert_same(&batch, &batch2);
    }
    let Some(id) = first_id else { return };
    let place = Place::Path(PathBuf::from("(fuzzed commit log)"));
    let _ = follow("fuzz", &place, &file, From::Start(0), Applied { id, seq: 0 }, u64::MAX, |_batch| Ok(true));
}

fn assert_same(a: &WriteBatch, b: &WriteBatch) {
    assert_eq!(a.erased_prefixes, b.erased_prefixes, "erased prefixes changed on a round trip");
    assert_eq!(a.puts, b.puts, "puts changed on a round trip");
}

/// One record as the log writes it: database `id`, sequence number `seq`, the batch erasing
/// `erased` prefixes and putting (`Some`) or removing (`None`) `puts`. The seed corpus is made of
/// these.
pub fn commit_log_record(id: u64, seq: u64, erased: &[&str], puts: &[(&str, Option<&[u8]>)]) -> Vec<u8> {
    let batch = WriteBatch {
        erased_prefixes: erased.iter().map(|p| (*p).to_owned()).collect(),
        puts: puts.iter().map(|(k, v)| ((*k).to_owned(), v.map(<[u8]>::to_vec))).collect(),
        note: Default::default(),
    };
    let mut out = Vec::new();
    encode(&mut out, &batch, id, seq);
    out
}
