//! The store conformance suite: every backend runs every check by adding one line to the list at
//! the bottom. The checks follow the spec's abstract store interface and DESIGN.md §4. The `s3`
//! line runs them against a real S3 server (SeaweedFS on 127.0.0.1, `tests/common/seaweed.rs`).

#[path = "common/seaweed.rs"]
mod seaweed;

use std::sync::Arc;

use zarrdb::error::StoreError;
use zarrdb::store::{ByteRange, DirListing};
use zarrdb::Store;

fn keys(store: &dyn Store) -> Vec<String> {
    store.list().expect("list")
}

/// The value under `key` as `with_value` lends it; `None` when it says the key is absent (and
/// then it must not have called the reader).
fn lent(store: &dyn Store, key: &str) -> Option<Vec<u8>> {
    let mut seen = None;
    let found = store.with_value(key, &mut |value| seen = Some(value.to_vec())).unwrap();
    assert_eq!(found, seen.is_some(), "with_value of {key} said {found} but called the reader: {}", seen.is_some());
    seen
}

fn get_set_overwrite(store: &dyn Store) {
    assert_eq!(store.get("a/b").unwrap(), None);
    store.set("a/b", b"one").unwrap();
    assert_eq!(store.get("a/b").unwrap().as_deref(), Some(&b"one"[..]));
    store.set("a/b", b"").unwrap();
    assert_eq!(store.get("a/b").unwrap().as_deref(), Some(&b""[..]), "empty values are values");
    assert_eq!(lent(store, "a/b").as_deref(), Some(&b""[..]));
    store.set("a/b", b"three").unwrap();
    assert_eq!(store.get("a/b").unwrap().as_deref(), Some(&b"three"[..]));
    assert_eq!(lent(store, "a/b").as_deref(), Some(&b"three"[..]));
    assert_eq!(store.size("a/b").unwrap(), Some(5));
    assert_eq!(store.size("a/missing").unwrap(), None);
    assert_eq!(lent(store, "a/missing"), None);
    // A prefix is not a value.
    assert_eq!(store.get("a").unwrap(), None);
}

/// Values larger than a page, which databases may split behind the interface: whole and partial
/// reads across the splits, sizes, overwriting with a shorter value, erasing, listing.
fn large_value(store: &dyn Store) {
    let value: Vec<u8> = (0..(1 << 20) + 7).map(|i: u32| (i % 251) as u8).collect();
    store.set("big/c/0", &value).unwrap();
    store.set("big/c/00", b"after").unwrap();
    assert_eq!(store.get("big/c/0").unwrap().as_deref(), Some(&value[..]));
    assert_eq!(lent(store, "big/c/0").as_deref(), Some(&value[..]));
    assert_eq!(store.size("big/c/0").unwrap(), Some(value.len() as u64));
    let ranges = [
        ByteRange::FromStart { offset: 500_000, length: Some(100_000) },
        ByteRange::FromStart { offset: 1 << 20, length: None },
        ByteRange::Suffix(10),
    ];
    let requests: Vec<(&str, ByteRange)> = ranges.iter().map(|r| ("big/c/0", *r)).collect();
    let parts = store.get_partial_values(&requests).unwrap();
    assert_eq!(parts[0].as_deref(), Some(&value[500_000..600_000]));
    assert_eq!(parts[1].as_deref(), Some(&value[1 << 20..]));
    assert_eq!(parts[2].as_deref(), Some(&value[value.len() - 10..]));
    let shorter = &value[..300_000];
    store.set("big/c/0", shorter).unwrap();
    assert_eq!(store.get("big/c/0").unwrap().as_deref(), Some(shorter));
    assert_eq!(lent(store, "big/c/0").as_deref(), Some(shorter));
    assert_eq!(store.size("big/c/0").unwrap(), Some(300_000));
    assert_eq!(keys(store), vec!["big/c/0", "big/c/00"]);
    assert_eq!(store.list_dir("big/c/").unwrap(), DirListing { keys: vec!["0".into(), "00".into()], prefixes: vec![] });
    store.set("big/c/0", &value).unwrap();
    store.erase("big/c/0").unwrap();
    assert_eq!(store.get("big/c/0").unwrap(), None);
    assert_eq!(store.size("big/c/0").unwrap(), None);
    assert_eq!(keys(store), vec!["big/c/00"]);
}

fn invalid_keys(store: &dyn Store) {
    for key in ["", "/abs", "a//b", "a/../b", "..", ".", "a/./b", "a\\b", "a\0b", "a/"] {
        match store.set(key, b"x") {
            Err(StoreError::InvalidKey { .. }) => {}
            other => panic!("set({key:?}) should be InvalidKey, got {other:?}"),
        }
        assert!(matches!(store.get(key), Err(StoreError::InvalidKey { .. })), "get({key:?})");
    }
    assert!(keys(store).is_empty(), "nothing was written");
}

fn partial_reads(store: &dyn Store) {
    store.set("v", b"0123456789").unwrap();
    store.set("empty", b"").unwrap();
    let got = store
        .get_partial_values(&[
            ("v", ByteRange::FromStart { offset: 2, length: Some(3) }),
            ("v", ByteRange::FromStart { offset: 7, length: None }),
            ("v", ByteRange::Suffix(4)),
            ("missing", ByteRange::Suffix(1)),
            ("v", ByteRange::FromStart { offset: 10, length: Some(0) }),
            // Ranges that start at the end are empty, not out of bounds.
            ("v", ByteRange::FromStart { offset: 10, length: None }),
            ("empty", ByteRange::FromStart { offset: 0, length: None }),
            ("v", ByteRange::Suffix(10)),
        ])
        .unwrap();
    let want: Vec<Option<Vec<u8>>> = vec![
        Some(b"234".to_vec()),
        Some(b"789".to_vec()),
        Some(b"6789".to_vec()),
        None,
        Some(Vec::new()),
        Some(Vec::new()),
        Some(Vec::new()),
        Some(b"0123456789".to_vec()),
    ];
    assert_eq!(got, want);
    for bad in [
        ByteRange::FromStart { offset: 8, length: Some(3) },
        ByteRange::Suffix(11),
        ByteRange::FromStart { offset: 11, length: None },
    ] {
        assert!(
            matches!(store.get_partial_values(&[("v", bad)]), Err(StoreError::RangeOutOfBounds { .. })),
            "{bad:?} is outside the value"
        );
    }
}

fn partial_writes(store: &dyn Store) {
    assert!(store.capabilities().partial_writes);
    store.set("p", b"0123456789").unwrap();
    store.set_partial_values(&[("p", 2, b"ab"), ("p", 9, b"XYZ"), ("new", 0, b"n")]).unwrap();
    assert_eq!(store.get("p").unwrap().as_deref(), Some(&b"01ab45678XYZ"[..]));
    assert_eq!(store.get("new").unwrap().as_deref(), Some(&b"n"[..]));
    // A write past the end would leave a hole: refused, and the batch changes nothing.
    assert!(store.set_partial_values(&[("q", 1, b"x")]).is_err());
    assert_eq!(store.get("q").unwrap(), None);
}

fn erase_and_erase_values(store: &dyn Store) {
    for k in ["g/a", "g/b", "g/c"] {
        store.set(k, k.as_bytes()).unwrap();
    }
    store.erase("g/a").unwrap();
    store.erase("g/a").unwrap(); // erasing an absent key is fine
    store.erase_values(&["g/b", "g/missing"]).unwrap();
    assert_eq!(keys(store), vec!["g/c"]);
}

fn erase_prefix(store: &dyn Store) {
    for k in ["a/x", "a/y/z", "ab/x", "b/a/x"] {
        store.set(k, b"1").unwrap();
    }
    store.erase_prefix("a/").unwrap();
    assert_eq!(keys(store), vec!["ab/x", "b/a/x"], "only keys under a/ go");
    store.erase_prefix("a").unwrap();
    assert_eq!(keys(store), vec!["b/a/x"]);
    store.erase_prefix("").unwrap();
    assert!(keys(store).is_empty());
}

fn listing(store: &dyn Store) {
    let all = ["zarr.json", "a/zarr.json", "a/c/0/0", "a/c/0/1", "a/c/1/0", "a.b", "ab/zarr.json", "b/x/y/z"];
    for k in all {
        store.set(k, b"1").unwrap();
    }
    let mut sorted: Vec<String> = all.iter().map(|s| s.to_string()).collect();
    sorted.sort();
    assert_eq!(keys(store), sorted, "list is complete and sorted");
    assert_eq!(store.list_prefix("a/c/0").unwrap(), vec!["a/c/0/0", "a/c/0/1"]);
    assert_eq!(store.list_prefix("a").unwrap().len(), 6, "a plain prefix matches a.b and ab/ too");
    assert!(store.list_prefix("nothing/").unwrap().is_empty());
    let root = store.list_dir("").unwrap();
    assert_eq!(
        root,
        DirListing {
            keys: vec!["a.b".into(), "zarr.json".into()],
            prefixes: vec!["a".into(), "ab".into(), "b".into()]
        }
    );
    let a = store.list_dir("a/").unwrap();
    assert_eq!(a, DirListing { keys: vec!["zarr.json".into()], prefixes: vec!["c".into()] });
    assert_eq!(store.list_dir("a/c/").unwrap().prefixes, vec!["0", "1"]);
    assert_eq!(store.list_dir("missing/").unwrap(), DirListing::default());
    assert!(store.list_dir("a").is_err(), "a list_dir prefix ends with '/'");
    // Erasing the last key under a prefix removes the prefix from listings.
    store.erase("b/x/y/z").unwrap();
    assert_eq!(store.list_dir("").unwrap().prefixes, vec!["a", "ab"]);
}

fn many_chunks_listed_once(store: &dyn Store) {
    for i in 0..300 {
        store.set(&format!("arr/c/{i}/0"), b"1").unwrap();
    }
    store.set("arr/zarr.json", b"{}").unwrap();
    store.set("other/zarr.json", b"{}").unwrap();
    assert_eq!(store.list_dir("").unwrap().prefixes, vec!["arr", "other"]);
    assert_eq!(store.list_dir("arr/c/").unwrap().prefixes.len(), 300);
}

fn concurrent_writers(store: Arc<dyn Store>) {
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || {
                for i in 0..50 {
                    store.set(&format!("t{t}/k{i}"), format!("{t}-{i}").as_bytes()).unwrap();
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|h| h.join().unwrap());
    assert_eq!(keys(store.as_ref()).len(), 200);
    assert_eq!(store.get("t3/k49").unwrap().as_deref(), Some(&b"3-49"[..]));
}

fn capabilities(store: &dyn Store) {
    let caps = store.capabilities();
    assert!(caps.readable && caps.writable && caps.listable);
    assert!(!store.kind().is_empty());
}

/// One line per backend: `name => expression creating an empty store`.
macro_rules! conformance {
    ($($backend:ident => $make:expr;)*) => {$(
        mod $backend {
            use super::*;
            #[allow(unused_imports)]
            use zarrdb::*;

            /// The store, and whatever must outlive it (its folder, its transaction).
            fn fresh() -> (Arc<dyn Store>, Box<dyn std::any::Any>) {
                #[allow(clippy::redundant_closure_call)]
                ($make)()
            }

            #[test] fn get_set_overwrite() { let (s, _t) = fresh(); super::get_set_overwrite(s.as_ref()) }
            #[test] fn large_value() { let (s, _t) = fresh(); super::large_value(s.as_ref()) }
            #[test] fn invalid_keys() { let (s, _t) = fresh(); super::invalid_keys(s.as_ref()) }
            #[test] fn partial_reads() { let (s, _t) = fresh(); super::partial_reads(s.as_ref()) }
            #[test] fn partial_writes() { let (s, _t) = fresh(); super::partial_writes(s.as_ref()) }
            #[test] fn erase_and_erase_values() { let (s, _t) = fresh(); super::erase_and_erase_values(s.as_ref()) }
            #[test] fn erase_prefix() { let (s, _t) = fresh(); super::erase_prefix(s.as_ref()) }
            #[test] fn listing() { let (s, _t) = fresh(); super::listing(s.as_ref()) }
            #[test] fn many_chunks_listed_once() { let (s, _t) = fresh(); super::many_chunks_listed_once(s.as_ref()) }
            #[test] fn concurrent_writers() { let (s, _t) = fresh(); super::concurrent_writers(s) }
            #[test] fn capabilities() { let (s, _t) = fresh(); super::capabilities(s.as_ref()) }
        }
    )*};
}

/// A database of `backend` in a fresh folder, and its auto-commit store.
fn database(backend: zarrdb::Backend) -> (Arc<dyn Store>, Box<dyn std::any::Any>) {
    let dir = tempfile::tempdir().unwrap();
    let db = zarrdb::Database::builder()
        .backend(backend)
        .durability(zarrdb::Durability::Fast)
        .create(dir.path().join("db"))
        .unwrap();
    (db.store(), Box::new(dir))
}

/// The store of an open write transaction on a fresh database of `backend`: the read-your-writes
/// overlay.
fn transaction(backend: zarrdb::Backend) -> (Arc<dyn Store>, Box<dyn std::any::Any>) {
    let dir = tempfile::tempdir().unwrap();
    let db = zarrdb::Database::builder().backend(backend).create(dir.path().join("db")).unwrap();
    let txn = db.begin_write().unwrap();
    (txn.store(), Box::new((txn, dir)))
}

/// A bucket database (`zarrdb+...://`) at `locator`: its auto-commit store, or the store of an
/// open transaction on it.
fn bucket(locator: String, in_transaction: bool) -> (Arc<dyn Store>, Box<dyn std::any::Any>) {
    let db = zarrdb::Database::create(&locator).unwrap();
    assert_eq!(db.backend(), zarrdb::Backend::Bucket);
    match in_transaction {
        false => (db.store(), Box::new(db)),
        true => {
            let txn = db.begin_write().unwrap();
            (txn.store(), Box::new((txn, db)))
        }
    }
}

/// A fresh name for a bucket database in this process's memory.
fn memory_bucket() -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    format!("zarrdb+memory://conformance-{}", NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

conformance! {
    bucket_memory => || bucket(memory_bucket(), false);
    bucket_memory_transaction => || bucket(memory_bucket(), true);
    // Bucket databases on a real S3 server (SeaweedFS), a prefix of their own each.
    bucket_s3 => || bucket(format!("zarrdb+{}", seaweed::bucket("bucket-db")), false);
    bucket_s3_transaction => || bucket(format!("zarrdb+{}", seaweed::bucket("bucket-db")), true);
    memory => || (Arc::new(MemoryStore::new()) as Arc<dyn Store>, Box::new(()) as Box<dyn std::any::Any>);
    directory => || {
        let dir = tempfile::tempdir().unwrap();
        (Arc::new(DirectoryStore::create(dir.path().join("store")).unwrap()) as Arc<dyn Store>, Box::new(dir) as Box<dyn std::any::Any>)
    };
    redb => || database(Backend::Redb);
    lmdb => || database(Backend::Lmdb);
    lmdb_commit_log => || {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::builder().backend(Backend::Lmdb).lmdb_commit_log(true).create(dir.path().join("db")).unwrap();
        (db.store(), Box::new(dir) as Box<dyn std::any::Any>)
    };
    sled => || database(Backend::Sled);
    redb_transaction => || transaction(Backend::Redb);
    lmdb_transaction => || transaction(Backend::Lmdb);
    lmdb_commit_log_transaction => || {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::builder().backend(Backend::Lmdb).lmdb_commit_log(true).create(dir.path().join("db")).unwrap();
        let txn = db.begin_write().unwrap();
        (txn.store(), Box::new((txn, dir)) as Box<dyn std::any::Any>)
    };
    sled_transaction => || transaction(Backend::Sled);
    // A bucket of its own per test on a real S3 server (SeaweedFS, tests/common/seaweed.rs).
    s3 => || {
        let store = zarrdb::store::ObjectStore::open(&seaweed::bucket("conformance")).unwrap();
        (Arc::new(store) as Arc<dyn Store>, Box::new(()) as Box<dyn std::any::Any>)
    };
}
