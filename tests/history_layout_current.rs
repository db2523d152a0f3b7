//! History's current layout (4) on redb, read through redb's own crate: a small commit on `main`
//! writes its record with its changes inside, and neither a list of changes beside it, nor
//! `last`, nor (until `main`'s head is [`MAIN_REF_EVERY`] commits past it) `main`'s ref; a new
//! key's value stays at its key whatever its size. After `main` is reset off its newest commit,
//! and after a branch's commit (which brings `main`'s ref to its head), every new commit still
//! takes a number no commit had, and each version reads what it held. Databases of layouts 2 and
//! 3 move to 4 with their first commit.

use std::path::Path;

use redb::{ReadableDatabase, ReadableTable};

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

/// How far `main`'s head may run ahead of its ref (src/store/history/record.rs).
const MAIN_REF_EVERY: u64 = 8;

/// [`history`], once `db` is closed.
fn history_of(db: Database, path: &Path) -> Vec<(String, Vec<u8>)> {
    drop(db);
    history(path)
}

fn stored_main(rows: &[(String, Vec<u8>)]) -> u64 {
    ref_number(&value_of(rows, "__zarrdb/h/r/b/main").unwrap())
}

#[test]
fn a_commit_on_main_writes_its_record_and_numbers_never_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.zarrdb");
    let db = Database::builder().history(true).create(&path).unwrap();
    let first = set(&db, "k", b"one");
    drop(db);
    let before = history(&path);
    let meta = value_of(&before, "__zarrdb/h/meta").unwrap();
    assert_eq!(u32::from_le_bytes(meta[4..8].try_into().unwrap()), 4, "a new database starts at layout 4");

    let db = Database::open(&path).unwrap();
    let second = set(&db, "k", b"two");
    drop(db);
    let after = history(&path);
    let changed: Vec<&str> =
        after.iter().filter(|(k, v)| value_of(&before, k).as_ref() != Some(v)).map(|(k, _)| k.as_str()).collect();
    // The record of the commit and the superseded small value kept under its object key.
    let record = format!("__zarrdb/h/c/{second:016x}");
    assert_eq!(changed.len(), 2, "{changed:?}");
    assert!(changed.contains(&record.as_str()), "{changed:?}");
    assert!(changed.iter().any(|k| k.starts_with("__zarrdb/h/o/")), "{changed:?}");
    assert_eq!(&value_of(&after, &record).unwrap()[..4], b"ZHC3", "the record holds the changes");
    assert!(!after.iter().any(|(k, _)| k.starts_with("__zarrdb/h/d/")), "no list of changes beside a record");
    assert_eq!(value_of(&after, "__zarrdb/h/last"), value_of(&before, "__zarrdb/h/last"), "`last` is not written");
    assert!(ref_number(&value_of(&after, "__zarrdb/h/last").unwrap()) < second);
    assert!(stored_main(&after) < first, "`main`'s ref stays behind its head");

    // A new key's value stays at its key, however large; the commit that overwrites it copies
    // it under its object key and puts the new one under its own.
    let db = Database::open(&path).unwrap();
    let big: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    let made = set(&db, "big", &big);
    drop(db);
    let rows = history(&path);
    assert!(!rows.iter().any(|(k, _)| k.starts_with(&format!("__zarrdb/h/o/{made:016x}"))), "no object key");
    let db = Database::open(&path).unwrap();
    let rewritten = set(&db, "big", &big[..9_000]);
    assert_eq!(reads(&db, made, "big").as_deref(), Some(&big[..]));
    assert_eq!(reads(&db, rewritten, "big").as_deref(), Some(&big[..9_000]));
    drop(db);
    let rows = history(&path);
    assert!(rows.iter().any(|(k, _)| k.starts_with(&format!("__zarrdb/h/o/{made:016x}"))), "the old value kept");
    assert!(rows.iter().any(|(k, _)| k.starts_with(&format!("__zarrdb/h/o/{rewritten:016x}"))), "the new one");

    // `main`'s ref moves once its head is far enough ahead, and never falls further behind.
    let mut head = rewritten;
    for i in 0..2 * MAIN_REF_EVERY {
        let db = Database::open(&path).unwrap();
        head = set(&db, "k", format!("run {i}").as_bytes());
        drop(db);
        let stored = stored_main(&history(&path));
        assert!(stored <= head && head - stored < MAIN_REF_EVERY, "ref {stored}, head {head}");
    }

    // `main` reset off its newest commit: the next commit takes a number after it.
    let db = Database::open(&path).unwrap();
    db.reset("main", &commit(first)).unwrap();
    let moved = set(&db, "k", b"after the reset");
    assert!(moved > head, "{moved} after {head}");
    // Far enough past the reset's target, `moved` moved the ref; `third` leaves it behind.
    let third = set(&db, "k", b"three");
    assert_eq!(stored_main(&history_of(db, &path)), moved);
    let db = Database::open(&path).unwrap();
    // A branch's commit is the newest while `main` is behind it, and brings `main`'s ref to
    // `main`'s head first: the ref is what names `main` past `last`.
    db.create_branch("side", &VersionRef::Branch("main".into())).unwrap();
    let side = db.on_branch("side").unwrap();
    let fourth = set(&side, "k", b"four");
    assert!(fourth > third);
    drop(side);
    drop(db);
    assert_eq!(stored_main(&history(&path)), third);
    let db = Database::open(&path).unwrap();
    let fifth = set(&db, "k", b"five");
    assert!(fifth > fourth);
    assert_eq!(db.resolve(&VersionRef::Branch("main".into())).unwrap().id.sequence(), fifth);
    drop(db);

    let db = Database::open(&path).unwrap();
    for (at, want) in [(first, "one"), (second, "two"), (third, "three"), (fourth, "four"), (fifth, "five")] {
        assert_eq!(reads(&db, at, "k").as_deref(), Some(want.as_bytes()), "version {at}");
    }
    assert_eq!(db.check_history().unwrap(), vec![]);
    let sixth = set(&db, "k", b"six");
    assert!(sixth > fifth);
    let log: Vec<u64> = db.log().unwrap().into_iter().map(|c| c.id.sequence()).take(3).collect();
    assert_eq!(log, [sixth, fifth, third], "`main`'s log");
}

/// Databases of layouts 2 and 3 (fixtures earlier builds wrote) move to layout 4 with the first
/// commit of this build, in that commit: its record holds its changes, the older records stay
/// as they were, and every version reads as before.
#[test]
fn the_first_commit_moves_an_earlier_layout_to_four() {
    for (file, was) in [("redb-6h2.zarrdb", 2), ("redb-6h3.zarrdb", 3)] {
        moves_to_four(file, was);
    }
}

fn moves_to_four(file: &str, was: u32) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file);
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format").join(file);
    std::fs::copy(fixture, &path).unwrap();
    let layout = |rows: &[(String, Vec<u8>)]| {
        let meta = value_of(rows, "__zarrdb/h/meta").unwrap();
        u32::from_le_bytes(meta[4..8].try_into().unwrap())
    };
    let before = history(&path);
    assert_eq!(layout(&before), was);
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
    assert_eq!(layout(&after), 4);
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

/// `main`'s ref held further behind its head than any commit leaves it (a damaged or hostile
/// file): reading `main` is refused as damage, naming the record past the limit, instead of
/// walking every record after the ref.
#[test]
fn a_ref_too_far_behind_is_damage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.zarrdb");
    let db = Database::builder().history(true).create(&path).unwrap();
    for i in 0..3 * MAIN_REF_EVERY {
        set(&db, "k", format!("{i}").as_bytes());
    }
    drop(db);
    {
        let raw = redb::Database::open(&path).unwrap();
        let txn = raw.begin_write().unwrap();
        {
            let mut table = txn.open_table(TABLE).unwrap();
            let old = table.get(&b"__zarrdb/h/r/b/main"[..]).unwrap().unwrap().value().to_vec();
            let mut held = old[..4].to_vec();
            held.extend_from_slice(&1u64.to_le_bytes());
            held.extend_from_slice(&crc32c::crc32c(&held).to_le_bytes());
            assert_eq!(held.len(), old.len());
            table.insert(&b"__zarrdb/h/r/b/main"[..], &held[..]).unwrap();
        }
        txn.commit().unwrap();
    }
    let db = Database::open(&path).unwrap();
    let error = db.log().unwrap_err().to_string();
    assert!(error.contains("runs further past its ref"), "{error}");
    let txn = db.begin_write().unwrap();
    txn.store().set("k", b"more").unwrap();
    let error = txn.commit_with("refused", "test").unwrap_err().to_string();
    assert!(error.contains("runs further past its ref"), "{error}");
}
