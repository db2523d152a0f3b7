//! Reads of whole shards decode the inner chunks straight into their place in the output
//! (`ArrayToBytes::decode_into_box`); shards the region covers in part, shards whose inner chunks
//! do not sit side by side, and damaged shards take the other paths. Every read is checked
//! against the written values, computed here element by element, on redb, LMDB and memory.

#[path = "common/shard_codecs.rs"]
mod shard_codecs;

use std::sync::Arc;

use zarrdb::metadata::FillValue;
use zarrdb::store::{ReadableStore, WritableStore};
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Error, MemoryStore, Store};

type Handle = Arc<dyn Store>;

const FILL: f32 = -1.5;

/// A float32 array of `shape` in shards of `shard`, inner chunks of `inner` (bytes + zstd).
fn metadata(shape: &[u64], shard: &[u64], inner: &[u64]) -> ArrayMetadata {
    let mut meta = ArrayMetadata::new(DataType::Float32, shape.to_vec(), shard.to_vec());
    meta.fill_value = FillValue::from_le_bytes(FILL.to_le_bytes().to_vec());
    meta.codecs = shard_codecs::zstd_shards(inner);
    meta
}

/// The value written at `at`: the fill value throughout every inner chunk whose position is 1
/// modulo 3 on every dimension (so those are not stored and read back as fill), and in one
/// block of 7 values in 11 elsewhere.
fn value(shape: &[u64], inner: &[u64], at: &[u64]) -> f32 {
    let i = c_index(shape, at);
    if at.iter().zip(inner).all(|(&a, &n)| (a / n) % 3 == 1) || (i / 7) % 11 == 3 {
        FILL
    } else {
        (i as f32) * 0.25 - 100.0
    }
}

fn c_index(shape: &[u64], at: &[u64]) -> usize {
    at.iter().zip(shape).fold(0, |acc, (&i, &n)| acc * n as usize + i as usize)
}

/// Every index of a box, in C order.
fn indices(offset: &[u64], shape: &[u64]) -> Vec<Vec<u64>> {
    let mut out = vec![offset.to_vec()];
    for d in (0..shape.len()).rev() {
        out = out
            .into_iter()
            .flat_map(|at| {
                (0..shape[d]).map(move |k| {
                    let mut at = at.clone();
                    at[d] += k;
                    at
                })
            })
            .collect();
    }
    out.sort();
    out
}

/// Write the whole array with `value`, then check every region of `regions` element by element.
fn check(store: &dyn Fn() -> Handle, shape: &[u64], shard: &[u64], inner: &[u64], regions: &[(&[u64], &[u64])]) {
    let array = Array::create(store(), "/a", metadata(shape, shard, inner)).expect("create");
    let all: Vec<f32> = indices(&vec![0; shape.len()], shape).iter().map(|at| value(shape, inner, at)).collect();
    array.write_region(&vec![0; shape.len()], shape, &all).expect("write");
    let array = Array::open(store(), "/a").expect("open");
    for (offset, size) in regions {
        let got = array.read_region_bytes(offset, size).expect("read");
        let want: Vec<u8> = indices(offset, size).iter().flat_map(|at| value(shape, inner, at).to_le_bytes()).collect();
        assert!(got == want, "region {offset:?}+{size:?} of {shape:?} (shards {shard:?}, inner {inner:?})");
    }
}

/// Run `test` on every store, in pools of one and two threads: a read of fewer rows of shards
/// than threads decodes the shards of a row in parallel instead (`read_region_unscoped`), which
/// does not place them in the output; these regions span at least two rows of shards.
fn each_store(test: impl Fn(&dyn Fn() -> Handle) + Sync) {
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
        pool.install(|| each_store_once(&test));
    }
}

fn each_store_once(test: &(impl Fn(&dyn Fn() -> Handle) + Sync)) {
    let memory: Handle = Arc::new(MemoryStore::new());
    test(&|| memory.clone());
    for backend in [Backend::Redb, Backend::Lmdb] {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = Database::builder().backend(backend).create(dir.path().join("db")).expect("create db");
        test(&|| db.store());
    }
}

#[test]
fn two_dimensional_shards_land_in_place() {
    each_store(|store| {
        check(
            store,
            &[96, 160],
            &[32, 32],
            &[8, 8],
            &[
                (&[0, 0], &[96, 160]),  // every shard whole
                (&[32, 32], &[64, 96]), // whole shards at an offset in the output
                (&[16, 8], &[80, 152]), // whole shards beside shards covered in part
                (&[40, 40], &[8, 8]),   // one inner chunk of one shard
            ],
        );
    });
}

#[test]
fn three_dimensional_shards_land_in_place() {
    each_store(|store| {
        check(
            store,
            &[6, 40, 48],
            &[2, 20, 24],
            &[1, 10, 8],
            &[(&[0, 0, 0], &[6, 40, 48]), (&[2, 20, 0], &[4, 20, 48]), (&[1, 5, 3], &[5, 30, 40])],
        );
    });
}

#[test]
fn shards_at_the_array_edge_and_single_column_shards() {
    each_store(|store| {
        // 100 x 70: the last shards along both dimensions stick out of the array.
        check(store, &[100, 70], &[32, 32], &[8, 8], &[(&[0, 0], &[100, 70]), (&[32, 0], &[64, 64])]);
    });
    each_store(|store| {
        // One inner chunk across the last dimension: decoded whole, then copied.
        check(store, &[64, 16], &[32, 16], &[8, 16], &[(&[0, 0], &[64, 16])]);
    });
    each_store(|store| {
        // One dimension.
        check(store, &[1000], &[200], &[25], &[(&[0], &[1000]), (&[200], &[400])]);
    });
}

#[test]
fn a_damaged_shard_fails_the_read_with_its_key() {
    let memory = Arc::new(MemoryStore::new());
    let shape = [64u64, 64];
    let array = Array::create(memory.clone(), "/a", metadata(&shape, &[32, 32], &[8, 8])).expect("create");
    let all: Vec<f32> = indices(&[0, 0], &shape).iter().map(|at| value(&shape, &[8, 8], at)).collect();
    array.write_region(&[0, 0], &shape, &all).expect("write");
    let key = "a/c/1/0";
    let mut shard = memory.get(key).expect("readable").expect("stored shard");
    let last = shard.len() - 1;
    shard[last] ^= 0x55; // the index checksum
    memory.set(key, &shard).expect("set");
    // Two threads, two rows of shards: each row is read by one task, shard by shard in place.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("pool");
    match pool.install(|| array.read_region_bytes(&[0, 0], &shape)) {
        Err(Error::Codec { key: failed, .. }) => assert_eq!(failed, key),
        other => panic!("expected a codec error naming {key}, got {other:?}"),
    }
    // The other shards still read.
    let top = array.read_region_bytes(&[0, 0], &[32, 64]).expect("undamaged shards");
    let want: Vec<u8> = all[..32 * 64].iter().flat_map(|v| v.to_le_bytes()).collect();
    assert!(top == want);
}
