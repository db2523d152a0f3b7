//! Reads inside a write transaction see the transaction's own buffered changes over the committed
//! state: `get`, `size`, partial reads, `list`, `list_prefix` and `list_dir` all agree with a
//! `MemoryStore` that received the same operations (puts, partial writes, erases, erase_prefix, and
//! puts after an erase_prefix of their parent), after every operation and on every backend; and
//! what the transaction saw is exactly what is committed.

use zarrdb::store::{ByteRange, DirListing};
use zarrdb::{Backend, Database, Durability, MemoryStore, Store};

const KEYS: [&str; 11] =
    ["a/zarr.json", "a/c/0", "a/c/1", "a/b/zarr.json", "a/b/c/0", "a.b", "ab/c/0", "b", "b/c/0", "z/y/x/w", "zz"];
const PREFIXES: [&str; 11] = ["", "a", "a/", "a/b/", "a/c/", "ab/", "b", "b/", "z/", "z/y/", "zz"];
const DIRS: [&str; 7] = ["", "a/", "a/b/", "a/c/", "b/", "z/", "z/y/"];

/// Deterministic pseudo-random numbers (xorshift).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Apply one random operation to both stores; both must accept or both refuse it.
fn step(rng: &mut Rng, stores: [&dyn Store; 2], log: &mut Vec<String>) {
    let key = KEYS[rng.below(KEYS.len())];
    let results: Vec<bool> = match rng.below(10) {
        0..=3 => {
            let value: Vec<u8> = (0..rng.below(6)).map(|i| (i + log.len()) as u8).collect();
            log.push(format!("set {key} {value:?}"));
            stores.map(|s| s.set(key, &value).is_ok()).to_vec()
        }
        4 => {
            let offset = rng.below(5) as u64;
            log.push(format!("set_partial {key} @{offset}"));
            stores.map(|s| s.set_partial_values(&[(key, offset, b"PQ"), ("b", 0, b"R")]).is_ok()).to_vec()
        }
        5..=6 => {
            log.push(format!("erase {key}"));
            stores.map(|s| s.erase(key).is_ok()).to_vec()
        }
        _ => {
            let prefix = PREFIXES[rng.below(PREFIXES.len())];
            log.push(format!("erase_prefix {prefix:?}"));
            stores.map(|s| s.erase_prefix(prefix).is_ok()).to_vec()
        }
    };
    assert_eq!(results[0], results[1], "accepted by one store only; ops: {log:#?}");
}

/// Every read the two stores answer identically.
fn assert_same(txn: &dyn Store, model: &dyn Store, log: &[String]) {
    let ctx = || format!("after ops: {log:#?}");
    for key in KEYS {
        assert_eq!(txn.get(key).unwrap(), model.get(key).unwrap(), "get {key} {}", ctx());
        assert_eq!(txn.size(key).unwrap(), model.size(key).unwrap(), "size {key} {}", ctx());
        let ranges = [ByteRange::Suffix(0), ByteRange::FromStart { offset: 0, length: None }];
        let requests: Vec<(&str, ByteRange)> = ranges.iter().map(|r| (key, *r)).collect();
        assert_eq!(txn.get_partial_values(&requests).unwrap(), model.get_partial_values(&requests).unwrap());
        let tail = [(key, ByteRange::Suffix(2))];
        assert_eq!(txn.get_partial_values(&tail).ok(), model.get_partial_values(&tail).ok(), "{key} {}", ctx());
    }
    assert_eq!(txn.list().unwrap(), model.list().unwrap(), "list {}", ctx());
    for prefix in PREFIXES {
        assert_eq!(txn.list_prefix(prefix).unwrap(), model.list_prefix(prefix).unwrap(), "{prefix:?} {}", ctx());
    }
    for dir in DIRS {
        assert_eq!(txn.list_dir(dir).unwrap(), model.list_dir(dir).unwrap(), "list_dir {dir:?} {}", ctx());
    }
}

fn run(backend: Backend, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::builder().backend(backend).durability(Durability::Fast).create(dir.path().join("db")).unwrap();
    let model = MemoryStore::new();
    let mut rng = Rng(seed);
    let mut log = vec![format!("{} seed {seed}: committed base", backend.name())];
    // A committed base state, written through the auto-commit store.
    for _ in 0..25 {
        step(&mut rng, [db.store().as_ref(), &model], &mut log);
    }
    assert_same(db.store().as_ref(), &model, &log);
    log.push("begin_write".into());
    let txn = db.begin_write().unwrap();
    let store = txn.store();
    for _ in 0..60 {
        step(&mut rng, [store.as_ref(), &model], &mut log);
        assert_same(store.as_ref(), &model, &log);
    }
    txn.commit().unwrap();
    log.push("commit".into());
    assert_same(db.store().as_ref(), &model, &log);
    assert_same(db.begin_read().unwrap().store().as_ref(), &model, &log);
}

#[test]
fn a_put_after_erasing_its_parent_prefix_is_seen_and_kept() {
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::builder().backend(backend).create(dir.path().join("db")).unwrap();
        let old = ["g/a/c/0", "g/a/c/1", "g/a/zarr.json", "g/b"];
        for key in old {
            db.store().set(key, b"old").unwrap();
        }
        let txn = db.begin_write().unwrap();
        let s = txn.store();
        s.erase_prefix("g/a/").unwrap();
        s.set("g/a/c/1", b"new").unwrap();
        s.erase("g/b").unwrap();
        assert_eq!(s.get("g/a/c/0").unwrap(), None);
        assert_eq!(s.get("g/a/c/1").unwrap().as_deref(), Some(&b"new"[..]));
        assert_eq!(s.size("g/a/c/1").unwrap(), Some(3));
        let parts = s.get_partial_values(&[("g/a/c/1", ByteRange::Suffix(2)), ("g/a/zarr.json", ByteRange::Suffix(1))]);
        assert_eq!(parts.unwrap(), vec![Some(b"ew".to_vec()), None]);
        assert_eq!(s.list_prefix("g/").unwrap(), vec!["g/a/c/1"]);
        assert_eq!(s.list_dir("g/").unwrap(), DirListing { keys: vec![], prefixes: vec!["a".into()] });
        assert_eq!(s.list_dir("g/a/").unwrap(), DirListing { keys: vec![], prefixes: vec!["c".into()] });
        assert_eq!(s.list_dir("g/a/c/").unwrap(), DirListing { keys: vec!["1".into()], prefixes: vec![] });
        assert_eq!(db.store().list_prefix("g/").unwrap(), old, "{}: others see the old state", backend.name());
        txn.commit().unwrap();
        assert_eq!(db.store().list_prefix("g/").unwrap(), vec!["g/a/c/1"], "{}", backend.name());
        assert_eq!(db.store().get("g/a/c/1").unwrap().as_deref(), Some(&b"new"[..]));
    }
}

#[test]
fn transaction_reads_match_a_model_on_redb() {
    for seed in [1, 2, 3, 0xDEAD_BEEF] {
        run(Backend::Redb, seed);
    }
}

#[test]
fn transaction_reads_match_a_model_on_lmdb() {
    for seed in [4, 5, 6, 0xFEED_FACE] {
        run(Backend::Lmdb, seed);
    }
}

#[test]
fn transaction_reads_match_a_model_on_sled() {
    for seed in [7, 8, 9, 0xC0FF_EE00] {
        run(Backend::Sled, seed);
    }
}
