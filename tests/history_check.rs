//! `zarrdb check` and `Database::check_history` on a database that keeps history: a sound one
//! passes, and each kind of damage to history's own keys (a large commit's list of changes
//! missing, a small commit's changes damaged inside its record, a head entry naming another
//! value, a large value missing, a parent newer than its child, a tag naming no commit), made
//! through
//! redb's own crate while the database is closed, is a problem naming its key.

#[path = "common/cli.rs"]
mod cli;

use std::path::Path;

use redb::{ReadableDatabase, ReadableTable};

use zarrdb::db::VersionRef;
use zarrdb::{Array, ArrayMetadata, DataType, Database};

const TABLE: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("zarr");

/// A database with history: small and large values, overwrites, a removal, a restore, tags.
fn build(path: &Path) {
    let db = Database::builder().history(true).create(path).unwrap();
    let meta = ArrayMetadata::new(DataType::UInt8, vec![20_000], vec![10_000]);
    let a = Array::create(db.store(), "/a", meta).unwrap();
    let noise: Vec<u8> = (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    a.write_region(&[0], &[20_000], &noise).unwrap();
    db.tag("v1", &VersionRef::Branch("main".into())).unwrap();
    a.write_region(&[0], &[3], &[1u8, 2, 3]).unwrap();
    db.store().set("notes/n", b"small").unwrap();
    db.store().erase("notes/n").unwrap();
    db.restore("/a", &VersionRef::Tag("v1".into())).unwrap();
    // Too many changes for the commit's record to hold: they go under `d/`.
    let txn = db.begin_write().unwrap();
    for i in 0..40 {
        txn.store().set(&format!("notes/many/{i:02}"), b"x").unwrap();
    }
    txn.commit().unwrap();
    db.tag("v2", &VersionRef::Branch("main".into())).unwrap();
}

/// Change the closed redb file's table through redb itself.
fn edit(path: &Path, change: impl FnOnce(&mut redb::Table<&[u8], &[u8]>)) {
    let db = redb::Database::open(path).unwrap();
    let txn = db.begin_write().unwrap();
    change(&mut txn.open_table(TABLE).unwrap());
    txn.commit().unwrap();
}

fn keys_under(path: &Path, prefix: &str) -> Vec<Vec<u8>> {
    let db = redb::Database::open(path).unwrap();
    let txn = db.begin_read().unwrap();
    let table = txn.open_table(TABLE).unwrap();
    let keys = table.range(prefix.as_bytes()..).unwrap().map(|e| e.unwrap().0.value().to_vec());
    keys.take_while(|k| k.starts_with(prefix.as_bytes()) && !k.contains(&0)).collect()
}

/// `zarrdb check --json` on `path` fails and names `key` among its problems.
fn check_names(path: &Path, key: &str) {
    let out = cli::zarrdb(&["check", path.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let wheres: Vec<&str> =
        report["problems"].as_array().unwrap().iter().map(|p| p["where"].as_str().unwrap()).collect();
    assert!(wheres.contains(&key), "{key} not in {wheres:?}");
    let problems = Database::builder().read_only(true).open(path).unwrap().check_history().unwrap();
    assert!(problems.iter().any(|p| p.key == key), "{problems:?}");
}

#[test]
fn a_sound_history_passes_and_damage_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let sound = dir.path().join("sound.zarrdb");
    build(&sound);
    let report = cli::ok_text(&["check", sound.to_str().unwrap()]);
    assert!(report.ends_with(": 0 problems\n"), "{report}");
    assert_eq!(Database::open(&sound).unwrap().check_history().unwrap(), []);
    let copy = |name: &str| {
        let path = dir.path().join(name);
        std::fs::copy(&sound, &path).unwrap();
        path
    };

    let lost_changes = copy("changes.zarrdb");
    let listed = keys_under(&lost_changes, "__zarrdb/h/d/");
    assert_eq!(listed.len(), 1, "only the commit of 40 keys keeps its changes beside its record");
    let key = String::from_utf8(listed[0].clone()).unwrap();
    edit(&lost_changes, |t| drop(t.remove(key.as_bytes()).unwrap()));
    check_names(&lost_changes, &key);

    // A small commit's changes are inside its record, sealed by their own checksum: a byte
    // flipped there (the record's own checksum made to match) is named at the record.
    let inner = copy("inner.zarrdb");
    let key = "__zarrdb/h/c/0000000000000003";
    edit(&inner, |t| {
        let mut record = t.get(key.as_bytes()).unwrap().unwrap().value().to_vec();
        assert_eq!(&record[..4], b"ZHC3", "a small commit's record holds its changes");
        let body = record.len() - 4;
        record[body - 8] ^= 0x40;
        let crc = crc32c::crc32c(&record[..body]);
        record[body..].copy_from_slice(&crc.to_le_bytes());
        t.insert(key.as_bytes(), &record[..]).unwrap();
    });
    check_names(&inner, key);

    let moved_entry = copy("entry.zarrdb");
    edit(&moved_entry, |t| {
        let mut entry = t.get(&b"a/zarr.json"[..]).unwrap().unwrap().value().to_vec();
        entry[4] ^= 1; // another index: another value
        t.insert(&b"a/zarr.json"[..], &entry[..]).unwrap();
    });
    check_names(&moved_entry, "a/zarr.json");

    let lost_value = copy("value.zarrdb");
    let objects = keys_under(&lost_value, "__zarrdb/h/o/");
    assert!(!objects.is_empty(), "large values live under their object keys");
    edit(&lost_value, |t| drop(t.remove(&objects[0][..]).unwrap()));
    let out = cli::zarrdb(&["check", lost_value.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");

    // A parent newer than its child would make every walk up the history loop: refused.
    let cycle = copy("cycle.zarrdb");
    let key = "__zarrdb/h/c/0000000000000002";
    edit(&cycle, |t| {
        let mut record = t.get(key.as_bytes()).unwrap().unwrap().value().to_vec();
        record[12..20].copy_from_slice(&5u64.to_le_bytes());
        let body = record.len() - 4;
        let crc = crc32c::crc32c(&record[..body]);
        record[body..].copy_from_slice(&crc.to_le_bytes());
        t.insert(key.as_bytes(), &record[..]).unwrap();
    });
    check_names(&cycle, key);
    assert!(Database::open(&cycle).unwrap().log().is_err(), "the log is refused, not walked in circles");

    let stray_tag = copy("tag.zarrdb");
    let key = "__zarrdb/h/r/t/stray";
    let mut value = b"ZHR1".to_vec();
    value.extend_from_slice(&999u64.to_le_bytes());
    value.extend_from_slice(&crc32c::crc32c(&value).to_le_bytes());
    edit(&stray_tag, |t| drop(t.insert(key.as_bytes(), &value[..]).unwrap()));
    check_names(&stray_tag, key);
}
