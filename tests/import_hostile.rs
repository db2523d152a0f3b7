//! Untrusted import sources (DESIGN.md §9): every hostile name, link, size or archive has one
//! defined outcome — a typed error, the database exactly as it was, and nothing written outside
//! the destination — except duplicate zip entries, of which the last one wins (as in zarr-python's
//! ZipStore) and is reported.

#[path = "common/zip_craft.rs"]
mod zip_craft;

use std::collections::BTreeMap;
use std::path::Path;

use zarrdb::error::{TransferError, ZipError};
use zarrdb::{Array, Database, Error, ImportOptions};
use zip_craft::{archive, Crafted};

const GROUP: &[u8] = br#"{"zarr_format":3,"node_type":"group","attributes":{}}"#;
const ARRAY: &[u8] = br#"{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"uint8","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},"chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},"fill_value":0,"codecs":[{"name":"bytes"}],"attributes":{}}"#;

/// Every key and value of the database.
fn content(db: &Database) -> BTreeMap<String, Vec<u8>> {
    let store = db.begin_read().unwrap().store();
    store.list_prefix("").unwrap().into_iter().map(|k| (k.clone(), store.get(&k).unwrap().unwrap())).collect()
}

/// A database with one array, the archive `entries` in `dir/in.zip`, and the import's result; the
/// database must be unchanged when the import fails.
fn import_zip(entries: &[Crafted<'_>]) -> (tempfile::TempDir, Result<zarrdb::transfer::ImportReport, Error>, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("db.redb")).unwrap();
    Array::create(db.store(), "/kept", zarrdb::ArrayMetadata::new(zarrdb::DataType::UInt8, vec![2], vec![2]))
        .unwrap()
        .write_region(&[0], &[2], &[1u8, 2])
        .unwrap();
    let before = content(&db);
    let zip = dir.path().join("in.zip");
    std::fs::write(&zip, archive(entries)).unwrap();
    let result = db.import(&zip, &ImportOptions::default().at("/imported"));
    if result.is_err() {
        assert!(content(&db) == before, "a failed import changed the database");
    }
    (dir, result, db)
}

fn unsafe_name(result: &Result<zarrdb::transfer::ImportReport, Error>) -> bool {
    matches!(result, Err(Error::Transfer(TransferError::UnsafeName { .. })))
}

#[test]
fn names_that_escape_the_hierarchy_are_refused() {
    for name in [
        &b"../evil/zarr.json"[..],
        b"/tmp/evil/zarr.json",
        b"a\\..\\..\\zarr.json",
        b"a/\0/zarr.json",
        b"a//zarr.json",
        b"C:/zarr.json",
    ] {
        let (dir, result, _) = import_zip(&[Crafted::new(b"zarr.json", GROUP), Crafted::new(name, GROUP)]);
        assert!(unsafe_name(&result), "{:?}: {result:?}", String::from_utf8_lossy(name));
        assert!(!dir.path().join("evil").exists() && !Path::new("/tmp/evil/zarr.json").exists());
    }
}

#[test]
fn non_utf8_names_are_refused() {
    let (_dir, result, _) =
        import_zip(&[Crafted::new(b"zarr.json", GROUP), Crafted::new(b"a\xff\xfe/zarr.json", GROUP)]);
    assert!(matches!(result, Err(Error::Transfer(TransferError::Zip(ZipError::NonUtf8Name { .. })))), "{result:?}");
}

#[test]
fn the_reserved_prefix_is_refused() {
    let (_dir, result, _) = import_zip(&[Crafted::new(b"zarr.json", GROUP), Crafted::new(b"__zarrdb/format", b"{}")]);
    assert!(unsafe_name(&result), "{result:?}");
}

#[test]
fn duplicate_entries_keep_the_last_and_are_reported() {
    let (_dir, result, db) =
        import_zip(&[Crafted::new(b"zarr.json", ARRAY), Crafted::new(b"c/0", &[1, 2]), Crafted::new(b"c/0", &[7, 8])]);
    let report = result.unwrap();
    assert_eq!(report.duplicates, vec!["c/0".to_owned()]);
    assert_eq!(Array::open(db.store(), "/imported").unwrap().read_all::<u8>().unwrap(), vec![7, 8, 0, 0]);
}

#[test]
fn a_corrupt_entry_fails_the_whole_import() {
    // 1,100 good chunks first, so the lie is found after earlier windows went to the database.
    let meta = br#"{"zarr_format":3,"node_type":"array","shape":[2400],"data_type":"uint8","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},"chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},"fill_value":0,"codecs":[{"name":"bytes"}],"attributes":{}}"#;
    let names: Vec<String> = (0..1100).map(|i| format!("c/{i:04}")).collect();
    let mut entries = vec![Crafted::new(b"zarr.json", meta)];
    for n in &names {
        entries.push(Crafted::new(n.as_bytes(), &[3, 4]));
    }
    // Found only when read: the checksum does not match the bytes.
    entries.push(Crafted { crc: Some(0xdead_beef), ..Crafted::new(b"c/1199", &[5, 6]) });
    let (_dir, result, _) = import_zip(&entries);
    assert!(result.is_err(), "a lying entry was imported");
}

#[test]
fn entries_whose_sizes_lie_are_refused() {
    for declared in [1u32, 3, 1000] {
        let (_dir, result, _) = import_zip(&[
            Crafted::new(b"zarr.json", ARRAY),
            Crafted { declared_size: Some(declared), ..Crafted::new(b"c/0", &[1, 2]) },
        ]);
        assert!(matches!(result, Err(Error::Transfer(TransferError::Zip(_)))), "declared {declared}: {result:?}");
    }
}

#[test]
fn a_zip_bomb_is_refused_before_inflating() {
    let (_dir, result, _) = import_zip(&[
        Crafted::new(b"zarr.json", GROUP),
        Crafted { declared_size: Some(3_000_000_000), ..Crafted::new(b"c/0", &[0; 64]) },
    ]);
    assert!(matches!(result, Err(Error::Transfer(TransferError::Zip(_)))), "{result:?}");
}

#[test]
fn a_truncated_archive_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("db.redb")).unwrap();
    let whole = archive(&[Crafted::new(b"zarr.json", ARRAY), Crafted::new(b"c/0", &[1, 2])]);
    for cut in [0, 10, whole.len() / 2, whole.len() - 5] {
        let zip = dir.path().join(format!("cut{cut}.zip"));
        std::fs::write(&zip, &whole[..cut]).unwrap();
        let result = db.import(&zip, &ImportOptions::default().at(format!("/t{cut}")));
        assert!(matches!(result, Err(Error::Transfer(TransferError::Zip(_)))), "cut at {cut}: {result:?}");
    }
    assert!(content(&db).is_empty());
}
