//! The tail of a log read whole and read again after more records, erased records and records
//! written in an erased one's place, and after the file is shrunk: always what a fresh read of
//! the file finds.

use std::collections::BTreeMap;

use super::{pending, Tail};
use crate::store::kv::WriteBatch;
use crate::store::log::file::{LogFile, Place};
use crate::store::log::record::{encode, HEADER};
use crate::store::log::Applied;
use crate::store::pending::tests::Rng;
use crate::store::pending::Lookup;

fn batch(puts: &[(&str, Option<&[u8]>)], erased: &[&str]) -> WriteBatch {
    let puts: BTreeMap<String, Option<Vec<u8>>> =
        puts.iter().map(|(k, v)| ((*k).to_owned(), v.map(<[u8]>::to_vec))).collect();
    WriteBatch { erased_prefixes: erased.iter().map(|p| (*p).to_owned()).collect(), puts, note: Default::default() }
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

const KEYS: [&str; 6] = ["a/0", "a/1", "a/2", "b/0", "b/1", "zarr.json"];

/// A random batch: puts, deletes, sometimes an erased prefix.
fn random_batch(rng: &mut Rng, tag: usize) -> WriteBatch {
    let mut puts = BTreeMap::new();
    for _ in 0..1 + rng.below(3) {
        let key = KEYS[rng.below(KEYS.len())].to_owned();
        let value = (rng.below(4) != 0).then(|| format!("{tag}:{}", rng.below(1000)).into_bytes());
        puts.insert(key, value);
    }
    let erased = if rng.below(8) == 0 { vec![["a/", "b/"][rng.below(2)].to_owned()] } else { Vec::new() };
    WriteBatch { erased_prefixes: erased, puts, note: Default::default() }
}

/// The log as its writers leave it: the records after the engine's position, where the next goes.
struct Log {
    file: std::fs::File,
    applied: Applied,
    /// Offset and sequence number of each record after the position.
    records: Vec<(u64, u64)>,
    end: u64,
}

impl Log {
    fn last(&self) -> u64 {
        self.records.last().map_or(self.applied.seq, |r| r.1)
    }

    fn append(&mut self, rng: &mut Rng, tag: usize) {
        let mut record = Vec::new();
        let seq = self.last() + 1;
        encode(&mut record, &random_batch(rng, tag), self.applied.id, seq);
        self.file.write_at(&record, self.end).unwrap();
        self.records.push((self.end, seq));
        self.end += record.len() as u64;
    }

    /// An appender whose sync failed erases its record's header.
    fn take_back(&mut self) {
        if let Some((at, _)) = self.records.pop() {
            self.file.write_at(&[0u8; HEADER], at).unwrap();
            self.end = at;
        }
    }

    /// A record begun and not finished after the last.
    fn tear(&mut self, rng: &mut Rng, tag: usize) {
        let mut record = Vec::new();
        encode(&mut record, &random_batch(rng, tag), self.applied.id, self.last() + 1);
        let cut = 1 + rng.below(record.len() - 1);
        // The byte after the cut differs from the record's, whatever the file held there.
        record[cut] ^= 0xff;
        self.file.write_at(&record[..=cut], self.end).unwrap();
    }

    /// The engine takes every record over; the next record starts the log again, in a file
    /// given back (`SharedLog::shrink`) when `shrink`.
    fn checkpoint(&mut self, shrink: bool) {
        self.applied = Applied { seq: self.last() + 1, ..self.applied };
        self.records.clear();
        self.end = 0;
        if shrink {
            self.file.set_len(0).unwrap();
        }
    }
}

/// What a lookup found, comparably: `None` when the writes do not know the key.
fn known(lookup: Lookup<'_>) -> Option<Option<Vec<u8>>> {
    match lookup {
        Lookup::Value(v) => Some(Some(v.to_vec())),
        Lookup::Absent => Some(None),
        Lookup::Unknown => None,
    }
}

#[test]
fn a_remembered_tail_reads_as_the_file_does() {
    for seed in 1..=40u64 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db-log");
        let file = std::fs::File::options().read(true).write(true).create_new(true).open(&path).unwrap();
        file.write_at(&vec![0u8; 64 << 10], 0).unwrap();
        let place = Place::Path(path.clone());
        let mut log = Log { file, applied: Applied { id: 9, seq: 3 }, records: Vec::new(), end: 0 };
        let (tail, mut rng) = (Tail::default(), Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        for step in 0..300 {
            match rng.below(12) {
                0..=5 => log.append(&mut rng, step),
                6 => log.take_back(),
                7 => {
                    // Another record written where an erased one was, with its number.
                    log.take_back();
                    log.append(&mut rng, step);
                }
                8 => log.tear(&mut rng, step),
                9 if log.end > 40 << 10 || rng.below(4) == 0 => log.checkpoint(rng.below(2) == 0),
                _ => {}
            }
            let got = tail.read("redb", &place, &log.file, 0, log.applied).unwrap();
            let want = pending("redb", &place, &log.file, 0, log.applied).unwrap();
            let context = format!("seed {seed}, step {step}");
            assert_eq!((got.last, got.end), (want.last, want.end), "{context}");
            assert_eq!(got.last, log.last(), "{context}");
            for key in KEYS {
                assert_eq!(known(got.writes.lookup(key)), known(want.writes.lookup(key)), "{context}: {key}");
            }
        }
    }
}
