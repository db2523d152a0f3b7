//! A failed `zarrdb import` into a database that did not exist leaves nothing: no empty redb file,
//! no LMDB or sled folder. Into an existing database it leaves the database as it was.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_zarrdb");

#[test]
fn a_failed_import_leaves_no_new_database() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nosuch.zip");
    for locator in ["new.zarrdb", "lmdb:new.lmdb", "sled:new.sled"] {
        let out = Command::new(BIN)
            .current_dir(dir.path())
            .args(["import", &missing.display().to_string(), locator])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{locator}: {}", String::from_utf8_lossy(&out.stderr));
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.is_empty(), "{locator}: left {left:?}");
    }
}

#[test]
fn a_failed_import_keeps_an_existing_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kept.zarrdb");
    zarrdb::Database::create(&db).unwrap();
    let out = Command::new(BIN)
        .args(["import", &dir.path().join("nosuch").display().to_string(), &db.display().to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(zarrdb::Database::open(&db).is_ok());
}
