//! How much the codec pipeline adds over calling the codec library directly on the same bytes
//! (the codec issue's target: at most 10 %).
//!
//! For `big_zstd` (8192² f32, 512² chunks, zstd 1) and `sharded` (2048² shards of 128² zstd-1 inner
//! chunks, crc32c index) on the shared benchmark data:
//! - baseline: the chunks are split out beforehand, then compressed / decompressed with `zstd` on
//!   rayon's pool, one call per chunk;
//! - chain: `Array::encode_chunk` / `decode_chunk` on the same bytes as whole chunks (for
//!   `sharded`, whole shards: splitting into inner chunks, the index and its checksum included).
//!   This is the figure the target applies to.
//! - region: one `write_region_bytes` / `read_region_bytes` of the whole array through a store that
//!   keeps encoded values in a hash map, adding chunk assembly, store copies and the output buffer;
//!   reported for context (the whole-array targets are in `zarrdb bench`).
//!
//! Runs alternate baseline and zarrdb; medians are reported. `cargo bench --bench codec_overhead`
//! measures; under `cargo test` it runs once on a small array as a smoke test.

#[path = "../src/cli/bench/data.rs"]
mod data;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Instant;

use rayon::prelude::*;
use serde_json::json;
use zarrdb::{
    Array, ArrayMetadata, DataType, DirListing, ListableStore, NamedConfig, ReadableStore, Store, StoreCapabilities,
    StoreError, WritableStore,
};

/// Encoded values in a hash map: the cheapest store that still hands back owned values.
#[derive(Default)]
struct MapStore(RwLock<HashMap<String, Vec<u8>>>);

impl ReadableStore for MapStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.0.read().unwrap().get(key).cloned())
    }
}
impl WritableStore for MapStore {
    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.0.write().unwrap().insert(key.to_owned(), value.to_vec());
        Ok(())
    }
    fn set_partial_values(&self, _: &[(&str, u64, &[u8])]) -> Result<(), StoreError> {
        Err(StoreError::Unsupported { store: "bench-map", operation: "set_partial_values" })
    }
    fn erase(&self, key: &str) -> Result<(), StoreError> {
        self.0.write().unwrap().remove(key);
        Ok(())
    }
    fn erase_prefix(&self, prefix: &str) -> Result<(), StoreError> {
        self.0.write().unwrap().retain(|k, _| !k.starts_with(prefix));
        Ok(())
    }
}
impl ListableStore for MapStore {
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let mut keys: Vec<String> = self.0.read().unwrap().keys().filter(|k| k.starts_with(prefix)).cloned().collect();
        keys.sort();
        Ok(keys)
    }
    fn list_dir(&self, _: &str) -> Result<DirListing, StoreError> {
        Ok(DirListing::default())
    }
}
impl Store for MapStore {
    fn capabilities(&self) -> StoreCapabilities {
        MemoryLike::caps()
    }
    fn kind(&self) -> &'static str {
        "bench-map"
    }
}

struct MemoryLike;
impl MemoryLike {
    fn caps() -> StoreCapabilities {
        zarrdb::MemoryStore::new().capabilities()
    }
}

/// Split a C-order 2-d f32 array into C-order chunks (row-major chunk order).
fn split(data: &[u8], n: usize, c: usize) -> Vec<Vec<u8>> {
    let per = n / c;
    (0..per * per)
        .into_par_iter()
        .map(|k| {
            let (ci, cj) = (k / per, k % per);
            let mut chunk = Vec::with_capacity(c * c * 4);
            for row in ci * c..(ci + 1) * c {
                let start = (row * n + cj * c) * 4;
                chunk.extend_from_slice(&data[start..start + c * 4]);
            }
            chunk
        })
        .collect()
}

fn codecs(value: serde_json::Value) -> Vec<NamedConfig> {
    NamedConfig::parse_list(&value).expect("a valid codec list")
}

struct Case {
    name: &'static str,
    n: usize,
    chunk: usize,
    /// Chunk size the baseline compresses (the inner chunk for sharding).
    codec_chunk: usize,
    codecs: serde_json::Value,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn rate(mb: f64, secs: &[f64]) -> f64 {
    mb / median(secs.to_vec())
}

fn measure(case: &Case, runs: usize, report: bool) {
    let data = data::bench_bytes((case.n * case.n) as u64);
    let mb = data.len() as f64 / 1e6;
    let pieces = split(&data, case.n, case.codec_chunk);
    let chunks = split(&data, case.n, case.chunk);
    let cap = case.codec_chunk * case.codec_chunk * 4;
    let store: Arc<dyn Store> = Arc::new(MapStore::default());
    let mut meta = ArrayMetadata::new(DataType::Float32, vec![case.n as u64; 2], vec![case.chunk as u64; 2]);
    meta.codecs = codecs(case.codecs.clone());
    let array = Array::create(store.clone(), "/a", meta).unwrap();
    let shape = [case.n as u64; 2];
    let mut t = [vec![], vec![], vec![], vec![], vec![], vec![]];
    for _ in 0..runs {
        // The codec library alone, on the chunks it compresses.
        let start = Instant::now();
        let compressed: Vec<Vec<u8>> = pieces.par_iter().map(|p| zstd::bulk::compress(p, 1).unwrap()).collect();
        t[0].push(start.elapsed().as_secs_f64());
        let start = Instant::now();
        let back: Vec<Vec<u8>> = compressed.par_iter().map(|c| zstd::bulk::decompress(c, cap).unwrap()).collect();
        t[1].push(start.elapsed().as_secs_f64());
        assert_eq!(back.len(), pieces.len());
        // The codec chain, on the same bytes as whole chunks (shards).
        let start = Instant::now();
        let encoded: Vec<Vec<u8>> = chunks.par_iter().map(|c| array.encode_chunk(c).unwrap()).collect();
        t[2].push(start.elapsed().as_secs_f64());
        let start = Instant::now();
        let decoded: Vec<Vec<u8>> = encoded.into_par_iter().map(|e| array.decode_chunk(e).unwrap()).collect();
        t[3].push(start.elapsed().as_secs_f64());
        assert!(decoded == chunks, "{}: the chain does not round-trip", case.name);
        // The whole-array region path (chunking, chain, store, output assembly).
        let start = Instant::now();
        array.write_region_bytes(&[0, 0], &shape, &data).unwrap();
        t[4].push(start.elapsed().as_secs_f64());
        let start = Instant::now();
        let read = array.read_region_bytes(&[0, 0], &shape).unwrap();
        t[5].push(start.elapsed().as_secs_f64());
        assert!(read == data, "{}: zarrdb read back different data", case.name);
    }
    if report {
        let r: Vec<f64> = t.iter().map(|secs| rate(mb, secs)).collect();
        let overhead = |direct: f64, ours: f64| (direct / ours - 1.0) * 100.0;
        println!(
            "{:<9} chain   encode {:>7.1} MB/s vs zstd {:>7.1} MB/s ({:>+5.1} %) | decode {:>7.1} MB/s vs zstd {:>7.1} MB/s ({:>+5.1} %)",
            case.name, r[2], r[0], overhead(r[0], r[2]), r[3], r[1], overhead(r[1], r[3])
        );
        println!(
            "{:<9} region  write  {:>7.1} MB/s vs zstd {:>7.1} MB/s ({:>+5.1} %) | read   {:>7.1} MB/s vs zstd {:>7.1} MB/s ({:>+5.1} %)",
            case.name, r[4], r[0], overhead(r[0], r[4]), r[5], r[1], overhead(r[1], r[5])
        );
    }
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let zstd1 = json!({"name": "zstd", "configuration": {"level": 1, "checksum": false}});
    let (n, chunk, shard) = if bench { (8192, 512, 2048) } else { (256, 64, 128) };
    let inner = if bench { 128 } else { 32 };
    let cases = [
        Case { name: "big_zstd", n, chunk, codec_chunk: chunk, codecs: json!([bytes, zstd1]) },
        Case {
            name: "sharded",
            n,
            chunk: shard,
            codec_chunk: inner,
            codecs: json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [inner, inner],
                "codecs": [bytes, zstd1], "index_codecs": [bytes, {"name": "crc32c"}], "index_location": "end"}}]),
        },
    ];
    for case in &cases {
        measure(case, if bench { 9 } else { 1 }, bench);
    }
}
