//! A write of part of a chunk whose stored value is longer than its array's codecs produce is
//! refused before the value is decoded (`CodecError::StoredTooLarge`, naming the key), on every
//! backend with and without history and in a folder, and leaves the stored value as it was; a
//! read of the chunk and `Array::check` refuse it the same way. On sled the long value is also
//! one kept in pieces (over 64 KiB), whose length is learnt from its head before any piece is read.

use std::sync::Arc;

use zarrdb::error::CodecError;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, DirectoryStore, Error, Store};

/// Longer than the 20 bytes a chunk of `u8` x 20 stored raw takes.
const STORED: usize = 31;

/// Longer than sled stores whole.
const STORED_IN_PIECES: usize = 100_000;

fn refused(store: Arc<dyn Store>, length: usize) {
    let array = Array::create(store.clone(), "/a", ArrayMetadata::new(DataType::UInt8, vec![40], vec![20])).unwrap();
    array.write_region(&[20], &[20], &[9u8; 20]).unwrap();
    store.set("a/c/0", &vec![1u8; length]).unwrap();
    let too_long = |e: Error| match e {
        Error::Codec { key, source: CodecError::StoredTooLarge { stored, limit } } => {
            assert_eq!((key.as_str(), stored, limit), ("a/c/0", length as u64, 20));
        }
        other => panic!("expected StoredTooLarge for a/c/0, got {other:?}"),
    };
    too_long(array.write_region(&[5], &[5], &[2u8; 5]).unwrap_err());
    assert_eq!(store.get("a/c/0").unwrap().unwrap(), vec![1u8; length], "the refused write changed the chunk");
    too_long(array.read_region_bytes(&[0], &[40]).unwrap_err());
    let report = array.check().unwrap();
    assert_eq!(report.corrupt.len(), 1, "{:?}", report.corrupt);
    // The other chunk is untouched and reads.
    assert_eq!(array.read_region_bytes(&[20], &[20]).unwrap(), vec![9u8; 20]);
}

fn in_database(backend: Backend, history: bool) {
    let lengths: &[usize] = if backend == Backend::Sled { &[STORED, STORED_IN_PIECES] } else { &[STORED] };
    for &stored in lengths {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::builder().backend(backend).history(history).create(dir.path().join("db")).unwrap();
        refused(db.store(), stored);
    }
}

#[test]
fn redb() {
    in_database(Backend::Redb, false);
    in_database(Backend::Redb, true);
}

#[test]
fn lmdb() {
    in_database(Backend::Lmdb, false);
    in_database(Backend::Lmdb, true);
}

#[test]
fn sled() {
    in_database(Backend::Sled, false);
    in_database(Backend::Sled, true);
}

#[test]
fn folder() {
    let dir = tempfile::tempdir().unwrap();
    refused(Arc::new(DirectoryStore::create(dir.path().join("f")).unwrap()), STORED);
}
