//! `Database::compact` and `zarrdb compact`: what they refuse, and that nothing is lost.

use std::process::Command;

use zarrdb::error::CompactError;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Durability, Error, Node};

#[path = "common/compact_fixture.rs"]
mod compact_fixture;
use compact_fixture::{fill, KEPT};

const BIN: &str = env!("CARGO_BIN_EXE_zarrdb");

#[test]
fn with_a_snapshot_open_the_compaction_copies_and_the_snapshot_reads_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Database::create(&path).unwrap();
    let values = fill(&db);
    let snapshot = db.begin_read().unwrap();
    let done = db.compact().unwrap();
    assert!(done.bytes_after < done.bytes_before, "{done:?}");
    assert!(done.bytes_after as f64 <= 1.15 * KEPT, "{done:?}");
    // The snapshot reads the old file, which still holds the erased array.
    assert_eq!(Array::open(snapshot.store(), "/kept").unwrap().read_all::<u32>().unwrap(), values);
    assert!(Node::open(snapshot.store(), "/gone").is_err());
    // The database goes on in the new file.
    let meta = ArrayMetadata::new(DataType::UInt8, vec![4], vec![4]);
    Array::create(db.store(), "/after", meta).unwrap().write_region(&[0], &[4], &[1u8, 2, 3, 4]).unwrap();
    drop((snapshot, db));
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, vec![std::ffi::OsString::from("db")], "a copy was left behind");
    let db = Database::open(&path).unwrap();
    assert_eq!(Array::open(db.store(), "/kept").unwrap().read_all::<u32>().unwrap(), values);
    assert_eq!(Array::open(db.store(), "/after").unwrap().read_all::<u8>().unwrap(), vec![1, 2, 3, 4]);
}

#[test]
fn in_multi_writer_mode_an_open_snapshot_makes_compaction_refuse_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::builder().redb_multi_writer(true).create(dir.path().join("db")).unwrap();
    compact_fixture::refused_while_a_snapshot_is_open(&db);
}

#[test]
fn fast_commits_survive_a_compaction_and_the_close() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Database::builder().durability(Durability::Fast).create(&path).unwrap();
    let values = fill(&db);
    db.compact().unwrap();
    let meta = ArrayMetadata::new(DataType::UInt8, vec![4], vec![4]);
    Array::create(db.store(), "/after", meta).unwrap().write_region(&[0], &[4], &[1u8, 2, 3, 4]).unwrap();
    drop(db);
    let db = Database::open(&path).unwrap();
    assert_eq!(Array::open(db.store(), "/kept").unwrap().read_all::<u32>().unwrap(), values);
    assert_eq!(Array::open(db.store(), "/after").unwrap().read_all::<u8>().unwrap(), vec![1, 2, 3, 4]);
    assert!(Node::open(db.store(), "/gone").is_err());
}

#[test]
fn read_only_databases_and_engines_without_compaction_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    fill(&Database::create(&path).unwrap());
    let ro = Database::builder().read_only(true).open(&path).unwrap();
    assert!(matches!(ro.compact(), Err(Error::Compact(CompactError::ReadOnly { .. }))));
    let db = Database::builder().backend(Backend::Sled).create(dir.path().join("sled")).unwrap();
    let err = db.compact().unwrap_err();
    assert!(matches!(err, Error::Compact(CompactError::Unsupported { .. })), "sled: {err}");
}

#[test]
fn the_command_compacts_and_reports_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.zarrdb");
    let db = Database::builder().redb_commit_log(false).create(&path).unwrap();
    let values = fill(&db);
    // Copied while open (every commit is in the file without the commit log): closing would
    // compact the file already (it grew).
    let image = dir.path().join("image.zarrdb");
    std::fs::copy(&path, &image).unwrap();
    drop(db);
    let out = Command::new(BIN).args(["compact", "--json", image.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let (before, after) = (report["bytes_before"].as_u64().unwrap(), report["bytes_after"].as_u64().unwrap());
    assert!(after < before, "{report}");
    assert_eq!(after, std::fs::metadata(&image).unwrap().len());
    assert!(after as f64 <= 1.15 * KEPT, "{report}");
    let db = Database::open(&image).unwrap();
    assert_eq!(Array::open(db.store(), "/kept").unwrap().read_all::<u32>().unwrap(), values);

    for (args, expect) in [
        (vec!["compact", "lmdb:/nonexistent/zarrdb-compact"], "no database"),
        (vec!["compact", dir.path().to_str().unwrap()], "not a database"),
    ] {
        let out = Command::new(BIN).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expect), "{args:?}: {stderr}");
    }
}
