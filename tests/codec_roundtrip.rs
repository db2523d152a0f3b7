//! Every codec and the combinations the codec issue names round-trip through region writes and
//! reads (unaligned regions, edge chunks, reopened handles), and the stored values have the
//! codec's real framing (gzip magic, zstd magic, Blosc 1 header, CRC-32C trailer, shard index).

use std::sync::Arc;

use serde_json::{json, Value};
use zarrdb::metadata::NamedConfig;
use zarrdb::{Array, ArrayMetadata, DataType, FillValue, MemoryStore, Store};

fn codecs(list: Value) -> Vec<NamedConfig> {
    NamedConfig::parse_list(&list).expect("a valid codec list")
}

/// Deterministic, compressible-but-not-trivial data.
fn data(n: usize, elem: usize) -> Vec<u8> {
    (0..n * elem).map(|i| ((i * 7919) % 251) as u8 ^ ((i / 64) as u8)).collect()
}

/// Write in two overlapping unaligned regions, read back whole and in part, reopen.
fn roundtrip(name: &str, dt: DataType, shape: Vec<u64>, chunks: Vec<u64>, chain: Value) -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut meta = ArrayMetadata::new(dt.clone(), shape.clone(), chunks);
    meta.codecs = codecs(chain);
    let array = Array::create(store.clone(), "/a", meta).unwrap_or_else(|e| panic!("{name}: {e}"));
    let elem = dt.size();
    let n: u64 = shape.iter().product();
    let full = data(n as usize, elem);
    let zeros = vec![0; shape.len()];
    array.write_region_bytes(&zeros, &shape, &full).unwrap_or_else(|e| panic!("{name}: {e}"));
    // Overwrite an unaligned interior box with other bytes and patch the model.
    let off: Vec<u64> = shape.iter().map(|s| s / 3).collect();
    let sub: Vec<u64> = shape.iter().map(|s| (s / 2).max(1)).collect();
    let sub_n: u64 = sub.iter().product();
    let patch: Vec<u8> = data(sub_n as usize, elem).iter().map(|b| b.wrapping_add(17)).collect();
    array.write_region_bytes(&off, &sub, &patch).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut model = full;
    let strides: Vec<u64> = (0..shape.len()).map(|d| shape[d + 1..].iter().product()).collect();
    for (k, chunk) in patch.chunks(elem).enumerate() {
        let mut rem = k as u64;
        let mut flat = 0;
        for d in (0..shape.len()).rev() {
            flat += (off[d] + rem % sub[d]) * strides[d];
            rem /= sub[d];
        }
        model[flat as usize * elem..(flat as usize + 1) * elem].copy_from_slice(chunk);
    }
    let reopened = Array::open(store.clone(), "/a").unwrap();
    assert_eq!(reopened.read_region_bytes(&zeros, &shape).unwrap(), model, "{name}: whole read");
    let part = reopened.read_region_bytes(&off, &sub).unwrap();
    assert_eq!(part, patch, "{name}: partial read");
    store
}

fn stored_chunk(store: &dyn Store) -> Vec<u8> {
    let key = store.list_prefix("a/c").unwrap().into_iter().next().expect("a chunk is stored");
    store.get(&key).unwrap().unwrap()
}

#[test]
fn compressors_round_trip_with_real_framing() {
    let s = roundtrip(
        "gzip",
        DataType::Int32,
        vec![37, 23],
        vec![8, 8],
        json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 5}}]),
    );
    assert_eq!(&stored_chunk(s.as_ref())[..2], &[0x1f, 0x8b], "gzip magic");
    let s = roundtrip(
        "zstd",
        DataType::Float64,
        vec![37, 23],
        vec![8, 8],
        json!([{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "zstd", "configuration": {"level": 3, "checksum": true}}]),
    );
    assert_eq!(&stored_chunk(s.as_ref())[..4], &[0x28, 0xb5, 0x2f, 0xfd], "zstd magic");
    for cname in ["lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib"] {
        for shuffle in ["noshuffle", "shuffle", "bitshuffle"] {
            let chain = json!([{"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "blosc", "configuration": {"cname": cname, "clevel": 5, "shuffle": shuffle, "typesize": 2, "blocksize": 0}}]);
            let s = roundtrip(&format!("blosc {cname} {shuffle}"), DataType::UInt16, vec![50, 9], vec![16, 16], chain);
            assert_eq!(stored_chunk(s.as_ref())[0], 2, "Blosc 1 format version byte");
        }
    }
}

#[test]
fn crc32c_appends_a_checksum() {
    let s = roundtrip("crc32c", DataType::UInt8, vec![10], vec![4], json!([{"name": "bytes"}, {"name": "crc32c"}]));
    let value = s.get("a/c/0").unwrap().unwrap();
    assert_eq!(value.len(), 8);
    assert_eq!(value[4..], crc32c::crc32c(&value[..4]).to_le_bytes());
}

#[test]
fn transpose_round_trips_and_stores_permuted() {
    roundtrip(
        "transpose 3d",
        DataType::Int16,
        vec![9, 7, 5],
        vec![4, 3, 5],
        json!([{"name": "transpose", "configuration": {"order": [2, 0, 1]}}, {"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}]),
    );
    // A 2x3 chunk stored transposed: stored[j][i] = value[i][j].
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut meta = ArrayMetadata::new(DataType::UInt8, vec![2, 3], vec![2, 3]);
    meta.codecs = codecs(json!([{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes"}]));
    let a = Array::create(store.clone(), "/a", meta).unwrap();
    a.write_region(&[0, 0], &[2, 3], &[1u8, 2, 3, 4, 5, 6]).unwrap();
    assert_eq!(store.get("a/c/0/0").unwrap().unwrap(), vec![1, 4, 2, 5, 3, 6]);
}

#[test]
fn sharding_variants_round_trip() {
    let index = json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]);
    for location in ["start", "end"] {
        for inner in [
            json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
            json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}]),
            json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4}}]),
        ] {
            let chain = json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 4], "codecs": inner, "index_codecs": index, "index_location": location}}]);
            // 30x21 over 8x8 shards: partial edge shards, inner chunks past the edge.
            roundtrip(&format!("sharding {location} {inner}"), DataType::Float32, vec![30, 21], vec![8, 8], chain);
        }
    }
    let nested = json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [8, 8],
        "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 4],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}],
            "index_codecs": index}}],
        "index_codecs": index}}]);
    roundtrip("nested sharding", DataType::Complex64, vec![33, 17], vec![16, 16], nested);
}

/// Whole shards decode to exactly what was encoded, for every rank, inner chain shape (one or two
/// bytes -> bytes stages, byte swapping, no compressor), index location, and absent inner chunks
/// taking a multi-byte fill value.
#[test]
fn sharded_decode_places_every_inner_chunk() {
    let le = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let be = json!({"name": "bytes", "configuration": {"endian": "big"}});
    let zstd = json!({"name": "zstd", "configuration": {"level": 1, "checksum": true}});
    let crc = json!({"name": "crc32c"});
    let gzip = json!({"name": "gzip", "configuration": {"level": 1}});
    let cases = [
        ("2-d, zstd", DataType::Float32, vec![8, 12], vec![2, 4], json!([le, zstd]), "end"),
        (
            "3-d, big endian, zstd + crc32c",
            DataType::UInt16,
            vec![4, 6, 8],
            vec![2, 3, 4],
            json!([be, zstd, crc]),
            "start",
        ),
        ("4-d, zstd", DataType::UInt8, vec![2, 4, 6, 4], vec![1, 2, 3, 2], json!([le, zstd]), "end"),
        ("inner chunks span whole rows", DataType::Float32, vec![6, 8], vec![2, 8], json!([le, crc]), "end"),
        ("1-d, gzip", DataType::Int32, vec![16], vec![4], json!([le, gzip]), "start"),
        ("2-d, raw", DataType::UInt16, vec![4, 6], vec![2, 3], json!([be]), "end"),
        ("0-d, zstd", DataType::Float64, vec![], vec![], json!([le, zstd]), "end"),
    ];
    for (name, dt, shard, inner, chain, location) in cases {
        let elem = dt.size();
        let fill: Vec<u8> = (1..=elem as u8).collect();
        let mut meta = ArrayMetadata::new(dt, shard.clone(), shard.clone());
        meta.fill_value = FillValue::from_le_bytes(fill.clone());
        meta.codecs = codecs(json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": inner,
            "codecs": chain, "index_codecs": [le, crc], "index_location": location}}]));
        let array = Array::create(Arc::new(MemoryStore::new()), "/a", meta).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Every other inner chunk (C order) holds only the fill value, so it is absent.
        let per_shard: Vec<u64> = shard.iter().zip(&inner).map(|(s, i)| s / i).collect();
        let inner_chunk_of = |mut k: u64| {
            let (mut linear, mut scale) = (0, 1);
            for d in (0..shard.len()).rev() {
                linear += k % shard[d] / inner[d] * scale;
                scale *= per_shard[d];
                k /= shard[d];
            }
            linear
        };
        let mut decoded = data(shard.iter().product::<u64>() as usize, elem);
        for (k, value) in decoded.chunks_mut(elem).enumerate() {
            if inner_chunk_of(k as u64) % 2 == 1 {
                value.copy_from_slice(&fill);
            }
        }
        let encoded = array.encode_chunk(&decoded).unwrap_or_else(|e| panic!("{name}: {e}"));
        let entries = per_shard.iter().product::<u64>() as usize;
        let index =
            if location == "start" { &encoded[..entries * 16] } else { &encoded[encoded.len() - 4 - entries * 16..] };
        let absent = index.chunks(16).filter(|e| e.iter().all(|&b| b == 0xff)).count();
        assert_eq!(absent, entries / 2, "{name}: every other inner chunk is absent");
        assert_eq!(array.decode_chunk(encoded).unwrap(), decoded, "{name}");
    }
}

#[test]
fn all_fill_inner_chunks_are_absent_and_all_fill_shards_are_not_stored() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut meta = ArrayMetadata::new(DataType::UInt8, vec![8, 8], vec![8, 8]);
    meta.codecs = codecs(json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 4],
        "codecs": [{"name": "bytes"}], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]));
    let a = Array::create(store.clone(), "/a", meta).unwrap();
    a.write_region(&[5, 5], &[1, 1], &[9u8]).unwrap();
    let shard = store.get("a/c/0/0").unwrap().unwrap();
    // One 16-byte inner chunk, then 4 index entries of 16 bytes and a checksum.
    assert_eq!(shard.len(), 16 + 4 * 16 + 4);
    let index = &shard[16..16 + 64];
    let entry = |i: usize| {
        (
            u64::from_le_bytes(index[i * 16..i * 16 + 8].try_into().unwrap()),
            u64::from_le_bytes(index[i * 16 + 8..i * 16 + 16].try_into().unwrap()),
        )
    };
    assert_eq!(entry(0), (u64::MAX, u64::MAX));
    assert_eq!(entry(3), (0, 16));
    a.write_region(&[5, 5], &[1, 1], &[0u8]).unwrap();
    assert_eq!(store.get("a/c/0/0").unwrap(), None, "an all-fill shard is erased");
}

#[test]
fn invalid_chains_are_refused_before_anything_is_written() {
    let cases = [
        (json!([{"name": "gzip", "configuration": {"level": 1}}, {"name": "bytes"}]), "before the array -> bytes"),
        (json!([{"name": "bytes"}, {"name": "transpose", "configuration": {"order": [0]}}]), "cannot follow"),
        (json!([{"name": "bytes"}, {"name": "bytes"}]), "more than one"),
        (json!([{"name": "zstd", "configuration": {"level": 1}}]), "before the array -> bytes"),
        (json!([{"name": "transpose", "configuration": {"order": "F"}}, {"name": "bytes"}]), "legacy"),
        (json!([{"name": "transpose", "configuration": {"order": [0, 0]}}, {"name": "bytes"}]), "permutation"),
        (json!([{"name": "bytes"}, {"name": "gzip", "configuration": {"level": 10}}]), "level"),
        (json!([{"name": "bytes"}, {"name": "gzip"}]), "level"),
        (
            json!([{"name": "bytes"}, {"name": "blosc", "configuration": {"cname": "lzma", "clevel": 1, "shuffle": "shuffle", "typesize": 1}}]),
            "cname",
        ),
        (
            json!([{"name": "bytes"}, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1, "shuffle": "shuffle"}}]),
            "typesize",
        ),
        (
            json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [3, 4], "codecs": [{"name": "bytes"}], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]),
            "does not divide",
        ),
        (
            json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 4], "codecs": [{"name": "bytes"}], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}]}}]),
            "fixed size",
        ),
        (
            json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 4], "codecs": [{"name": "bytes"}]}}]),
            "index_codecs",
        ),
        (
            json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 4], "codecs": [{"name": "bytes"}], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "index_location": "middle"}}]),
            "index_location",
        ),
    ];
    for (chain, expected) in cases {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let mut meta = ArrayMetadata::new(DataType::UInt8, vec![8, 8], vec![8, 8]);
        meta.codecs = codecs(chain.clone());
        let err = Array::create(store.clone(), "/a", meta).expect_err(&chain.to_string()).to_string();
        assert!(err.contains(expected), "{chain}: {err}");
        assert!(store.list().unwrap().is_empty(), "{chain}: nothing may be written");
    }
}
