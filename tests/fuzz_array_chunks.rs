//! Fuzz target: a v3 array document and one stored chunk, both mutated (`common/fuzz_driver.rs`).
//! The document is parsed; when it is an array whose chunks are of sane size, the chunk is
//! decoded on its own, then read through the array whole and as a single element (a partial read
//! for shards: lying shard indexes), never panicking. The seeds cover every core codec, the
//! numcodecs compressors, sharding with its index at either end and nested sharding.

#[path = "common/fuzz_driver.rs"]
mod fuzz_driver;
#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the test uses only part of the shared generator")]
mod splitmix;

use std::sync::Arc;

use serde_json::{json, Value};
use zarrdb::metadata::{NamedConfig, NodeMetadata};
use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Store};

/// Chunks above this many bytes are not decoded: the fuzzer would spend its time allocating.
const MAX_CHUNK: u64 = 1 << 22;

fn target(input: &[u8]) {
    let (doc, chunk) = match input.iter().position(|&b| b == 0) {
        Some(at) => (&input[..at], &input[at + 1..]),
        None => (input, &[][..]),
    };
    let Ok(NodeMetadata::Array(meta)) = NodeMetadata::from_json(doc) else { return };
    let bytes = meta.chunk_shape.iter().try_fold(meta.data_type.size() as u64, |n, &d| n.checked_mul(d.max(1)));
    if bytes.is_none_or(|b| b > MAX_CHUNK) {
        return;
    }
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    if store.set("zarr.json", doc).is_err() {
        return;
    }
    let Ok(array) = Array::open(store.clone(), "/") else { return };
    let origin = vec![0; meta.shape.len()];
    let _ = store.set(&array.chunk_key(&origin), chunk);
    let _ = array.decode_chunk(chunk);
    let first: Vec<u64> = meta.shape.iter().zip(&meta.chunk_shape).map(|(&s, &c)| s.min(c)).collect();
    let _ = array.read_region_bytes(&origin, &first);
    let one: Vec<u64> = first.iter().map(|&d| d.min(1)).collect();
    let _ = array.read_region_bytes(&origin, &one);
}

fn seed(data_type: DataType, shape: &[u64], chunks: &[u64], codecs: Value) -> Vec<u8> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut meta = ArrayMetadata::new(data_type.clone(), shape.to_vec(), chunks.to_vec());
    meta.codecs = NamedConfig::parse_list(&codecs).unwrap();
    let array = Array::create(store.clone(), "/", meta).unwrap();
    let n = shape.iter().product::<u64>() as usize * data_type.size();
    let values: Vec<u8> = (0..n).map(|i| (i * 7 / 5) as u8).collect();
    array.write_region_bytes(&vec![0; shape.len()], shape, &values).unwrap();
    let mut input = store.get("zarr.json").unwrap().unwrap();
    input.push(0);
    input.extend(store.get(&array.chunk_key(&vec![0; shape.len()])).unwrap().unwrap());
    input
}

fn seeds() -> Vec<Vec<u8>> {
    let le = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let be = json!({"name": "bytes", "configuration": {"endian": "big"}});
    let crc = json!({"name": "crc32c"});
    let shard = |inner: Value, location: &str| {
        json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 4], "codecs": inner,
            "index_codecs": [le, crc], "index_location": location}}])
    };
    let mut seeds = vec![
        seed(DataType::UInt8, &[16], &[8], json!([le])),
        seed(DataType::Float64, &[6, 6], &[4, 4], json!([be, crc])),
        seed(
            DataType::Int32,
            &[8, 8],
            &[8, 8],
            json!([le, {"name": "zstd", "configuration": {"level": 1, "checksum": true}}]),
        ),
        seed(DataType::UInt16, &[8, 8], &[8, 8], json!([le, {"name": "gzip", "configuration": {"level": 1}}])),
        seed(
            DataType::Int16,
            &[4, 6, 2],
            &[4, 6, 2],
            json!([{"name": "transpose", "configuration": {"order": [2, 0, 1]}}, le]),
        ),
        seed(DataType::Bool, &[9], &[9], json!([le])),
        seed(DataType::Float32, &[8, 8], &[8, 8], shard(json!([le]), "end")),
        seed(DataType::Float32, &[8, 8], &[8, 8], shard(json!([le, crc]), "start")),
        seed(
            DataType::UInt32,
            &[8, 8],
            &[8, 8],
            json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 8],
                "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 4], "codecs": [le],
                    "index_codecs": [le]}}],
                "index_codecs": [le, crc]}}]),
        ),
    ];
    for (cname, shuffle) in [("lz4", "shuffle"), ("zstd", "bitshuffle"), ("blosclz", "noshuffle")] {
        seeds.push(seed(
            DataType::UInt16,
            &[8, 8],
            &[8, 8],
            json!([le, {"name": "blosc", "configuration": {"cname": cname, "clevel": 5, "shuffle": shuffle,
                "typesize": 2, "blocksize": 0}}]),
        ));
    }
    for codec in [
        json!({"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}),
        json!({"name": "numcodecs.bz2", "configuration": {"level": 1}}),
        json!({"name": "numcodecs.lzma", "configuration": {"preset": 1}}),
        json!({"name": "numcodecs.zlib", "configuration": {"level": 1}}),
        json!({"name": "numcodecs.shuffle", "configuration": {"elementsize": 8}}),
    ] {
        seeds.push(seed(DataType::Int64, &[8], &[8], json!([le, codec])));
    }
    seeds.push(seed(
        DataType::Int64,
        &[8],
        &[8],
        json!([{"name": "numcodecs.delta", "configuration": {"dtype": "<i8"}}, le]),
    ));
    seeds.push(seed(DataType::Bool, &[12], &[12], json!([{"name": "numcodecs.packbits"}, "bytes"])));
    seeds
}

#[test]
fn array_chunks_never_panic() {
    let seeds = seeds();
    // Every seed reads back: the target is exercised, not refused at the door.
    for seed in &seeds {
        let at = seed.iter().position(|&b| b == 0).unwrap();
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        store.set("zarr.json", &seed[..at]).unwrap();
        let array = Array::open(store.clone(), "/").unwrap();
        let origin = vec![0; array.shape().len()];
        store.set(&array.chunk_key(&origin), &seed[at + 1..]).unwrap();
        array.decode_chunk(&seed[at + 1..]).unwrap();
        let chunk: Vec<u64> = array.shape().iter().zip(array.chunk_shape()).map(|(&s, &c)| s.min(c)).collect();
        array.read_region_bytes(&origin, &chunk).unwrap();
    }
    fuzz_driver::fuzz("array_chunks", &seeds, target);
}
