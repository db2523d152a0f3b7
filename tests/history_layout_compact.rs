//! History layout 3 on redb, read through redb's own crate: a small commit on `main` writes its
//! record with its changes inside and `main`, no list of changes beside it and no `last`; the
//! newest commit is the greater of `last` and `main`'s head, so after `main` is reset off its
//! newest commit, and after a branch's commit, every new commit still takes a number no
//! commit had, and each version reads what it held.

use std::path::Path;

use redb::ReadableDatabase;

use zarrdb::db::VersionRef;
use zarrdb::Database;

const TABLE: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("zarr");

/// Every key and value under history's prefix, read from the closed file.
fn history(path: &Path) -> Vec<(String, Vec<u8>)> {
    let db = redb::Database::open(path).unwrap();
    let txn = db.begin_read().unwrap();
    let table = txn.open_table(TABLE).unwrap();
    let rows = table.range(&b"__zarrdb/h/"[..]..).unwrap().map(|e| e.unwrap());
    rows.map(|(k, v)| (k.value().to_vec(), v.value().to_vec()))
        .take_while(|(k, _)| k.starts_with(b"__zarrdb/h/"))
        .map(|(k, v)| (String::from_utf8(k).unwrap(), v))
        .collect()
}

fn value_of(rows: &[(String, Vec<u8>)], key: &str) -> Option<Vec<u8>> {
    rows.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
}

/// The number a ref record (`ZHR1`, the number, a CRC) holds.
fn ref_number(bytes: &[u8]) -> u64 {
    assert_eq!(&bytes[..4], b"ZHR1");
    u64::from_le_bytes(bytes[4..12].try_into().unwrap())
}

fn set(db: &Database, key: &str, value: &[u8]) -> u64 {
    let txn = db.begin_write().unwrap();
    txn.store().set(key, value).unwrap();
    txn.commit_with("set", "test").unwrap();
    db.resolve(&VersionRef::Branch(db.branch().unwrap_or("main").into())).unwrap().id.sequence()
}

fn commit(seq: u64) -> VersionRef {
    VersionRef::named(&format!("{seq:016x}"))
}

fn reads(db: &Database, at: u64, key: &str) -> Option<Vec<u8>> {
    let version = db.open_version(&commit(at)).unwrap();
    version.store().get(key).unwrap()
}

#[test]
fn a_commit_on_main_writes_two_records_and_numbers_never_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.zarrdb");
    let db = Database::builder().history(true).create(&path).unwrap();
    let first = set(&db, "k", b"one");
    drop(db);
    let before = history(&path);
    let meta = value_of(&before, "__zarrdb/h/meta").unwrap();
    assert_eq!(u32::from_le_bytes(meta[4..8].try_into().unwrap()), 3, "a new database starts at layout 3");

    let db = Database::open(&path).unwrap();
    let second = set(&db, "k", b"two");
    drop(db);
    let after = history(&path);
    let changed: Vec<&str> =
        after.iter().filter(|(k, v)| value_of(&before, k).as_ref() != Some(v)).map(|(k, _)| k.as_str()).collect();
    // The record of the commit, `main`, and the superseded small value kept under its object key.
    let record = format!("__zarrdb/h/c/{second:016x}");
    assert_eq!(changed.len(), 3, "{changed:?}");
    assert!(changed.contains(&record.as_str()) && changed.contains(&"__zarrdb/h/r/b/main"), "{changed:?}");
    assert!(changed.iter().any(|k| k.starts_with("__zarrdb/h/o/")), "{changed:?}");
    assert_eq!(&value_of(&after, &record).unwrap()[..4], b"ZHC3", "the record holds the changes");
    assert!(!after.iter().any(|(k, _)| k.starts_with("__zarrdb/h/d/")), "no list of changes beside a record");
    assert_eq!(value_of(&after, "__zarrdb/h/last"), value_of(&before, "__zarrdb/h/last"), "`last` is not written");
    assert!(ref_number(&value_of(&after, "__zarrdb/h/last").unwrap()) < second);

    // `main` reset off its newest commit: the next commit takes a number after it.
    let db = Database::open(&path).unwrap();
    db.reset("main", &commit(first)).unwrap();
    let third = set(&db, "k", b"three");
    assert!(third > second, "{third} after {second}");
    // A branch's commit is the newest while `main` is behind it.
    db.create_branch("side", &VersionRef::Branch("main".into())).unwrap();
    let side = db.on_branch("side").unwrap();
    let fourth = set(&side, "k", b"four");
    assert!(fourth > third);
    let fifth = set(&db, "k", b"five");
    assert!(fifth > fourth);
    drop(side);
    drop(db);

    let db = Database::open(&path).unwrap();
    for (at, want) in [(first, "one"), (second, "two"), (third, "three"), (fourth, "four"), (fifth, "five")] {
        assert_eq!(reads(&db, at, "k").as_deref(), Some(want.as_bytes()), "version {at}");
    }
    assert_eq!(db.check_history().unwrap(), vec![]);
    let sixth = set(&db, "k", b"six");
    assert!(sixth > fifth);
}

/// A database of layout 2 (the fixture an earlier build wrote) moves to layout 3 with the first
/// commit of this build, in that commit: its record holds its changes, the older records stay
/// as they were, and every version reads as before.
#[test]
fn the_first_commit_moves_an_earlier_layout_to_three() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("redb-6h2.zarrdb");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format/redb-6h2.zarrdb");
    std::fs::copy(fixture, &path).unwrap();
    let layout = |rows: &[(String, Vec<u8>)]| {
        let meta = value_of(rows, "__zarrdb/h/meta").unwrap();
        u32::from_le_bytes(meta[4..8].try_into().unwrap())
    };
    let before = history(&path);
    assert_eq!(layout(&before), 2);
    let db = Database::open(&path).unwrap();
    let versions: Vec<(String, u64)> = db.tags().unwrap().into_iter().map(|(n, id)| (n, id.sequence())).collect();
    let held: Vec<Vec<(String, Option<Vec<u8>>)>> = versions
        .iter()
        .map(|(_, at)| {
            let version = db.open_version(&commit(*at)).unwrap();
            let keys = version.store().list_prefix("").unwrap();
            keys.into_iter().map(|k| (k.clone(), version.store().get(&k).unwrap())).collect()
        })
        .collect();
    assert!(!held.is_empty());
    let new = set(&db, "n/c/0", b"new");
    drop(db);
    let after = history(&path);
    assert_eq!(layout(&after), 3);
    assert_eq!(&value_of(&after, &format!("__zarrdb/h/c/{new:016x}")).unwrap()[..4], b"ZHC3");
    for (key, value) in before.iter().filter(|(k, _)| k.starts_with("__zarrdb/h/c/") || k.starts_with("__zarrdb/h/d/"))
    {
        assert_eq!(value_of(&after, key).as_ref(), Some(value), "{key} is left as it was");
    }
    let db = Database::open(&path).unwrap();
    for ((name, at), want) in versions.iter().zip(&held) {
        let version = db.open_version(&commit(*at)).unwrap();
        let keys = version.store().list_prefix("").unwrap();
        let got: Vec<(String, Option<Vec<u8>>)> =
            keys.into_iter().map(|k| (k.clone(), version.store().get(&k).unwrap())).collect();
        assert_eq!(&got, want, "tag {name}");
    }
    assert_eq!(reads(&db, new, "n/c/0").as_deref(), Some(&b"new"[..]));
    assert_eq!(db.check_history().unwrap(), vec![]);
}
