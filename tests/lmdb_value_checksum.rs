//! LMDB keeps no checksums, so zarrdb stores each value with one (docs/format.md): a changed
//! byte inside a chunk's value is an error on reading and in `check`, not silently different
//! data; and a database created before this layout (bare values, no flag) still reads.

use std::path::Path;
use std::process::Command;

use zarrdb::error::StoreError;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Error};

fn lmdb(path: &Path, create: bool) -> Database {
    let mut builder = Database::builder();
    builder.backend(Backend::Lmdb);
    if create { builder.create(path) } else { builder.open(path) }.unwrap()
}

#[test]
fn a_changed_value_byte_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    // One chunk of 4096 bytes holding a pattern that occurs nowhere else in the file.
    let values: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
    {
        let db = lmdb(&path, true);
        let a = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![4096], vec![4096])).unwrap();
        a.write_region(&[0], &[4096], &values).unwrap();
    }
    let data = path.join("data.mdb");
    let mut bytes = std::fs::read(&data).unwrap();
    let at = bytes.windows(64).position(|w| w == &values[1000..1064]).expect("the chunk's bytes in data.mdb");
    bytes[at + 10] ^= 0x01;
    std::fs::write(&data, &bytes).unwrap();

    let db = lmdb(&path, false);
    let err = Array::open(db.store(), "/a").unwrap().read_all::<u8>().unwrap_err();
    assert!(
        matches!(&err, Error::Store(StoreError::Damaged { key, .. }) if key == "a/c/0"),
        "expected the chunk to be refused as damaged, got: {err}"
    );
    drop(db);
    let check = Command::new(env!("CARGO_BIN_EXE_zarrdb"))
        .args(["check", &format!("lmdb:{}", path.display())])
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&check.stdout), String::from_utf8_lossy(&check.stderr));
    assert_eq!(check.status.code(), Some(1), "check: {said}");
    assert!(said.contains("a/c/0") && said.contains("checksum"), "check: {said}");
}

#[test]
fn a_database_with_bare_values_still_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old");
    std::fs::create_dir(&path).unwrap();
    {
        // What an earlier zarrdb wrote: the format marker and a value, bare, without the flag.
        // SAFETY: nothing else maps the file.
        let env = unsafe { heed::EnvOpenOptions::new().map_size(1 << 24).open(&path) }.unwrap();
        let mut txn = env.write_txn().unwrap();
        let db: heed::Database<heed::types::Str, heed::types::Bytes> = env.create_database(&mut txn, None).unwrap();
        db.put(&mut txn, "__zarrdb/format", br#"{"zarrdb_format":1}"#).unwrap();
        db.put(&mut txn, "k", b"a bare value").unwrap();
        txn.commit().unwrap();
        env.prepare_for_closing().wait();
    }
    let db = lmdb(&path, false);
    assert_eq!(db.store().get("k").unwrap().as_deref(), Some(&b"a bare value"[..]));
    db.store().set("k2", b"written later, bare too").unwrap();
    drop(db);
    let db = lmdb(&path, false);
    assert_eq!(db.store().get("k2").unwrap().as_deref(), Some(&b"written later, bare too"[..]));
}
