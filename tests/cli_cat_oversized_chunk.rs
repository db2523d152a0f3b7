//! A stored chunk far longer than its array's chunks can encode to is refused before it is read
//! (issue 40): a 300 MiB value where a 20-byte chunk is expected cost twice its size in memory
//! before the codec refused it. The stores know a value's length, so `cat` checks it first and
//! ends with a clear error under a heap cap smaller than the value, in a redb database, an LMDB
//! database, a tagged version of a redb database, and a folder (where the value is a sparse file).

use std::process::Command;

use zarrdb::db::VersionRef;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database};

const VALUE_BYTES: usize = 300 << 20;

fn refused(locator: &str) {
    let out = Command::new("prlimit")
        .arg(format!("--data={}", 128 << 20))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_zarrdb"))
        .args(["cat", "--json", locator, "/a"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(stderr.contains(&format!("a stored value of {VALUE_BYTES} bytes is longer than the 20 bytes")), "{stderr}");
}

/// An array of one 20-byte chunk whose stored value is `VALUE_BYTES` long.
fn store_oversized(db: &Database) {
    Array::create(db.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![20], vec![20])).unwrap();
    db.store().set("a/c/0", &vec![1u8; VALUE_BYTES]).unwrap();
}

#[test]
fn in_a_redb_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.redb");
    let db = Database::create(&path).unwrap();
    store_oversized(&db);
    drop(db);
    refused(&format!("redb:{}", path.display()));
}

#[test]
fn in_an_lmdb_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.lmdb");
    let db = Database::builder().backend(Backend::Lmdb).create(&path).unwrap();
    store_oversized(&db);
    drop(db);
    refused(&format!("lmdb:{}", path.display()));
}

/// With history kept, the head and a tagged version read the value's length from its history
/// entry; the head, rewritten since with a chunk of the right size, reads again.
#[test]
fn in_a_tagged_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.redb");
    let db = Database::builder().history(true).create(&path).unwrap();
    store_oversized(&db);
    db.tag("big", &VersionRef::named("main")).unwrap();
    drop(db);
    refused(&format!("redb:{}", path.display()));
    let db = Database::open(&path).unwrap();
    db.store().set("a/c/0", &[7u8; 20]).unwrap();
    drop(db);
    refused(&format!("redb:{}@big", path.display()));
    let out = Command::new(env!("CARGO_BIN_EXE_zarrdb"))
        .args(["cat", "--json", &format!("redb:{}", path.display()), "/a"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("[7,7,7"), "{out:?}");
}

#[test]
fn in_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(zarrdb::DirectoryStore::create(dir.path().join("f")).unwrap());
    Array::create(store, "/a", ArrayMetadata::new(DataType::UInt8, vec![20], vec![20])).unwrap();
    std::fs::create_dir_all(dir.path().join("f/a/c")).unwrap();
    std::fs::File::create(dir.path().join("f/a/c/0")).unwrap().set_len(VALUE_BYTES as u64).unwrap();
    refused(&format!("dir:{}", dir.path().join("f").display()));
}
