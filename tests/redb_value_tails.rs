//! Values a little longer than a whole number of redb pages keep their last bytes, their tail,
//! in a table of their own (`store/redb/layout.rs`). Mirrored into a `BTreeMap` model: values of
//! every length around the page boundaries are set, overwritten with and without tails, erased
//! one by one and by prefix, read whole, in ranges across the head and the tail, by size and
//! lent, through reopens and compactions; every read must match the model, and no tail may be
//! left behind by a value that no longer has one.

use std::collections::BTreeMap;
use std::path::Path;

use zarrdb::store::ByteRange;
use zarrdb::{Database, Store};

#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the test uses only part of the shared generator")]
mod splitmix;
use splitmix::SplitMix;

/// Lengths around the sizes where a value stops fitting its pages: a 4 KiB page, the
/// equal-segment sizes, the largest page, and the small ones that always fit.
fn length(rng: &mut SplitMix) -> usize {
    let near = [10, 4_000, 4_096, 8_192, 12_288, 16_384, 65_536, 524_288, 1 << 20];
    let base = near[rng.range(0, near.len() as u64 - 1) as usize] as i64;
    (base + rng.range(0, 300) as i64 - 150).max(0) as usize
}

fn value(rng: &mut SplitMix, len: usize) -> Vec<u8> {
    let seed = rng.next_u64();
    (0..len).map(|i| (seed.wrapping_add(i as u64 * 0x9E37_79B9) >> 24) as u8).collect()
}

/// Every read of every key agrees with the model.
fn check(store: &dyn Store, model: &BTreeMap<String, Vec<u8>>, rng: &mut SplitMix, when: &str) {
    assert_eq!(store.list().unwrap(), model.keys().cloned().collect::<Vec<_>>(), "{when}: the listing");
    for (key, want) in model {
        assert_eq!(store.get(key).unwrap().as_deref(), Some(want.as_slice()), "{when}: {key} ({} bytes)", want.len());
        assert_eq!(store.size(key).unwrap(), Some(want.len() as u64), "{when}: size of {key}");
        let mut lent = None;
        assert!(store.with_value(key, &mut |bytes| lent = Some(bytes.to_vec())).unwrap());
        assert_eq!(lent.as_deref(), Some(want.as_slice()), "{when}: {key} lent");
        // Ranges ending in the tail, starting in it, and the last byte.
        let len = want.len() as u64;
        for _ in 0..3 {
            let start = rng.range(0, len);
            let end = rng.range(start, len);
            let range = ByteRange::FromStart { offset: start, length: Some(end - start) };
            let got = store.get_partial_values(&[(key, range)]).unwrap().remove(0);
            assert_eq!(got.as_deref(), Some(&want[start as usize..end as usize]), "{when}: {key}[{start}..{end}]");
        }
        if len > 0 {
            let last = store.get_partial_values(&[(key, ByteRange::Suffix(1))]).unwrap().remove(0);
            assert_eq!(last.as_deref(), Some(&want[want.len() - 1..]), "{when}: the last byte of {key}");
        }
    }
}

/// The number of entries of the tails table, read from the closed file with redb itself.
fn tails(path: &Path) -> usize {
    use redb::{ReadableDatabase, ReadableTableMetadata};
    let db = redb::Database::open(path).unwrap();
    let read = db.begin_read().unwrap();
    let definition: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("zarr-tails");
    match read.open_table(definition) {
        Ok(table) => table.len().unwrap() as usize,
        Err(redb::TableError::TableDoesNotExist(_)) => 0,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn values_with_tails_read_back_through_every_change() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tails.zarrdb");
    let mut db = Database::create(&path).unwrap();
    let mut model: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut rng = SplitMix::new(45, 0);
    for round in 0..6 {
        let store = db.store();
        for _ in 0..60 {
            let key = format!("g{}/a/c/{}", rng.range(0, 2), rng.range(0, 11));
            match rng.range(0, 9) {
                0 => {
                    store.erase(&key).unwrap();
                    model.remove(&key);
                }
                1 => {
                    let prefix = format!("g{}/", rng.range(0, 2));
                    store.erase_prefix(&prefix).unwrap();
                    model.retain(|k, _| !k.starts_with(&prefix));
                }
                _ => {
                    let len = length(&mut rng);
                    let v = value(&mut rng, len);
                    store.set(&key, &v).unwrap();
                    model.insert(key, v);
                }
            }
        }
        check(store.as_ref(), &model, &mut rng, &format!("round {round}"));
        drop(store);
        if round % 2 == 1 {
            db.compact().unwrap();
            check(db.store().as_ref(), &model, &mut rng, &format!("round {round}, compacted"));
        }
        drop(db);
        // A tail exists only for a value that has one: at most one per key, none for small values.
        let with_tails = model.values().filter(|v| v.len() > 4_000).count();
        assert!(tails(&path) <= with_tails, "round {round}: {} tails for {with_tails} long values", tails(&path));
        db = Database::open(&path).unwrap();
        check(db.store().as_ref(), &model, &mut rng, &format!("round {round}, reopened"));
    }
}

#[test]
fn a_four_kib_value_keeps_a_tail_and_loses_it_when_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.zarrdb");
    let db = Database::create(&path).unwrap();
    let store = db.store();
    let four_kib: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8).collect();
    store.set("a/c/0", &four_kib).unwrap();
    drop(store);
    drop(db);
    assert_eq!(tails(&path), 1, "a 4,096-byte value keeps its last bytes in the tails table");

    let db = Database::open(&path).unwrap();
    assert_eq!(db.store().get("a/c/0").unwrap(), Some(four_kib.clone()));
    db.store().set("a/c/0", b"short").unwrap();
    drop(db);
    assert_eq!(tails(&path), 0, "the short value left the old tail behind");

    let db = Database::open(&path).unwrap();
    assert_eq!(db.store().get("a/c/0").unwrap().as_deref(), Some(&b"short"[..]));
    db.store().set("a/c/0", &four_kib).unwrap();
    db.store().erase("a/c/0").unwrap();
    assert_eq!(db.store().get("a/c/0").unwrap(), None);
    drop(db);
    assert_eq!(tails(&path), 0, "the erased value left its tail behind");
}
