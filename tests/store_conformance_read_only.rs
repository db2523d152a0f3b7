//! The store conformance suite for read-only stores: a zip archive, a database snapshot on each
//! backend, and a database opened read-only. Each holds the same keys, written before it was
//! opened; every read answers as the writable stores' suite expects (`store_conformance.rs`), and
//! every write is refused with nothing changed.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use zarrdb::error::StoreError;
use zarrdb::store::{ByteRange, DirListing};
use zarrdb::{Backend, Database, Store, ZipStore};

/// The keys every store holds, and their values.
fn fixture() -> Vec<(&'static str, Vec<u8>)> {
    let big: Vec<u8> = (0..(1 << 20) + 7).map(|i: u32| (i % 251) as u8).collect();
    vec![
        ("zarr.json", b"{}".to_vec()),
        ("a/zarr.json", b"{\"a\":1}".to_vec()),
        ("a/c/0/0", b"0123456789".to_vec()),
        ("a/c/0/1", Vec::new()),
        ("a/c/1/0", big),
        ("a.b", b"x".to_vec()),
        ("ab/zarr.json", b"{}".to_vec()),
        ("b/x/y/z", b"deep".to_vec()),
    ]
}

fn reads(store: &dyn Store) {
    let caps = store.capabilities();
    assert!(caps.readable && caps.listable && !caps.writable, "{}: {caps:?}", store.kind());
    for (key, value) in fixture() {
        assert_eq!(store.get(key).unwrap().as_deref(), Some(&value[..]), "{key}");
        assert_eq!(store.size(key).unwrap(), Some(value.len() as u64), "{key}");
        let mut lent = None;
        assert!(store.with_value(key, &mut |v| lent = Some(v.to_vec())).unwrap(), "{key}");
        assert_eq!(lent.as_deref(), Some(&value[..]), "{key}: with_value");
    }
    assert!(!store.with_value("missing", &mut |_| panic!("called for an absent key")).unwrap());
    assert!(matches!(store.with_value("a/../zarr.json", &mut |_| ()), Err(StoreError::InvalidKey { .. })));
    assert_eq!(store.get("a").unwrap(), None, "a prefix is not a value");
    assert_eq!(store.size("missing").unwrap(), None);
    let got = store
        .get_partial_values(&[
            ("a/c/0/0", ByteRange::FromStart { offset: 2, length: Some(3) }),
            ("a/c/0/0", ByteRange::Suffix(4)),
            ("a/c/1/0", ByteRange::FromStart { offset: 1 << 20, length: None }),
            ("missing", ByteRange::Suffix(1)),
        ])
        .unwrap();
    let big = &fixture()[4].1;
    assert_eq!(got, [Some(b"234".to_vec()), Some(b"6789".to_vec()), Some(big[1 << 20..].to_vec()), None]);
    assert!(matches!(
        store.get_partial_values(&[("a/c/0/0", ByteRange::Suffix(11))]),
        Err(StoreError::RangeOutOfBounds { .. })
    ));
    assert!(matches!(store.get("a/../zarr.json"), Err(StoreError::InvalidKey { .. })));
}

fn listings(store: &dyn Store) {
    let mut all: Vec<String> = fixture().iter().map(|(k, _)| k.to_string()).collect();
    all.sort();
    assert_eq!(store.list().unwrap(), all);
    assert_eq!(store.list_prefix("a/c/0").unwrap(), ["a/c/0/0", "a/c/0/1"]);
    assert_eq!(
        store.list_dir("").unwrap(),
        DirListing {
            keys: vec!["a.b".into(), "zarr.json".into()],
            prefixes: vec!["a".into(), "ab".into(), "b".into()]
        }
    );
    assert_eq!(store.list_dir("a/c/").unwrap().prefixes, ["0", "1"]);
    assert_eq!(store.list_dir("missing/").unwrap(), DirListing::default());
}

fn writes_refused(store: &dyn Store) {
    assert!(store.set("new", b"x").is_err());
    assert!(store.set("zarr.json", b"changed").is_err());
    assert!(store.set_partial_values(&[("a/c/0/0", 0, b"X")]).is_err());
    assert!(store.erase("a/zarr.json").is_err());
    assert!(store.erase_prefix("a/").is_err());
    assert_eq!(store.get("new").unwrap(), None);
    assert_eq!(store.get("zarr.json").unwrap().as_deref(), Some(&b"{}"[..]));
    assert_eq!(store.get("a/c/0/0").unwrap().as_deref(), Some(&b"0123456789"[..]));
    assert_eq!(store.list().unwrap().len(), fixture().len());
}

fn suite(store: &dyn Store) {
    reads(store);
    listings(store);
    writes_refused(store);
}

/// A database of `backend` at `path` holding the fixture.
fn filled(backend: Backend, path: &Path) -> Database {
    let db = Database::builder().backend(backend).create(path).unwrap();
    let txn = db.begin_write().unwrap();
    for (key, value) in fixture() {
        txn.store().set(key, &value).unwrap();
    }
    txn.commit().unwrap();
    db
}

#[test]
fn zip_archive() {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files");
    for (key, value) in fixture() {
        let path = files.join(key);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, value).unwrap();
    }
    // An archive as Python's zipfile (zarr-python's ZipStore) writes it, deflated.
    let archive = dir.path().join("store.zip");
    let script = "import os, sys, zipfile\n\
                  with zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED) as z:\n\
                  \x20   for root, _, names in os.walk(sys.argv[1]):\n\
                  \x20       for n in sorted(names):\n\
                  \x20           p = os.path.join(root, n)\n\
                  \x20           z.write(p, os.path.relpath(p, sys.argv[1]))\n";
    let python = std::env::var("ZARRDB_PYTHON").unwrap_or_else(|_| "python3".into());
    let status = Command::new(python).arg("-c").arg(script).arg(&files).arg(&archive).status().unwrap();
    assert!(status.success());
    suite(&ZipStore::open(&archive).unwrap());
}

#[test]
fn snapshots_of_every_backend() {
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let dir = tempfile::tempdir().unwrap();
        let db = filled(backend, &dir.path().join("db"));
        let snapshot = db.begin_read().unwrap();
        let store: Arc<dyn Store> = snapshot.store();
        // A commit after the snapshot is not seen by it, where the engine keeps snapshots (sled
        // does not: docs/format.md).
        if store.capabilities().stable_snapshots {
            db.store().set("later", b"1").unwrap();
        }
        suite(store.as_ref());
    }
}

#[test]
fn read_only_databases_of_every_backend() {
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        drop(filled(backend, &path));
        let db = Database::builder().backend(backend).read_only(true).open(&path).unwrap();
        suite(db.store().as_ref());
    }
}
