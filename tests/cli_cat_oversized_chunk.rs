//! A stored chunk far longer than its array's chunks can encode to is refused before it is read
//! (issue 40): a 300 MiB value where a 20-byte chunk is expected cost twice its size in memory
//! before the codec refused it. The stores know a value's length, so `cat` checks it first and
//! ends with a clear error under a heap cap smaller than the value, in a redb database and in a
//! folder (where the value is a sparse file).

use std::process::Command;

use zarrdb::{Array, ArrayMetadata, DataType, Database};

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

#[test]
fn in_a_redb_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.redb");
    let db = Database::create(&path).unwrap();
    Array::create(db.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![20], vec![20])).unwrap();
    db.store().set("a/c/0", &vec![1u8; VALUE_BYTES]).unwrap();
    drop(db);
    refused(&format!("redb:{}", path.display()));
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
