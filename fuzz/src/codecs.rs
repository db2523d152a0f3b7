//! Target `codecs`: one stored chunk decoded by a codec chain into a chunk of a declared shape,
//! for every codec zarrdb decodes: bytes, transpose, sharding_indexed, gzip, zstd, blosc, crc32c,
//! vlen-utf8, vlen-bytes and numcodecs' zlib, lz4, bz2, lzma, shuffle, delta, fixedscaleoffset,
//! quantize, bitround, astype and packbits.
//!
//! Input, structured (first byte below [`FREE`]): chain, data type, a parameter byte, a shape
//! byte (rank 1 to 3), one byte per dimension, then the encoded chunk. The chain is picked from
//! [`chain`] by the first byte, so the fuzzer spends its time in the decoders rather than in
//! the metadata parser. Free form (first byte [`FREE`]): a whole `zarr.json`, a NUL, the chunk.
//!
//! Checked beyond "no panic": a chunk that decodes has the declared chunk's size (fixed-size
//! types), reads through the array as the same bytes, and, for lossless chains, encodes and
//! decodes again to the same bytes.

use std::sync::Arc;

use serde_json::{json, Value};
use zarrdb::metadata::{NamedConfig, NodeMetadata};
use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Store};

/// The first byte of a free-form input.
pub const FREE: u8 = 0xFF;

/// The data types a structured input picks from, with NumPy's name for the numcodecs filters.
pub const DATA_TYPES: [(DataType, &str); 14] = [
    (DataType::Bool, "|b1"),
    (DataType::Int8, "|i1"),
    (DataType::UInt8, "|u1"),
    (DataType::Int16, "<i2"),
    (DataType::UInt16, "<u2"),
    (DataType::Int32, "<i4"),
    (DataType::UInt32, "<u4"),
    (DataType::Int64, "<i8"),
    (DataType::UInt64, "<u8"),
    (DataType::Float16, "<f2"),
    (DataType::Float32, "<f4"),
    (DataType::Float64, "<f8"),
    (DataType::Complex64, "<c8"),
    (DataType::Complex128, "<c16"),
];

/// How many chains [`chain`] knows.
pub const CHAINS: u8 = 26;

/// Chain `which` (modulo [`CHAINS`]) for elements of NumPy type `dtype` and `rank` dimensions,
/// its parameters taken from `p`; whether it is lossless; and the data type it needs instead of
/// the input's, if any (vlen, packbits).
pub fn chain(which: u8, p: u8, dtype: &str, rank: usize) -> (Value, bool, Option<DataType>) {
    let le = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let be = json!({"name": "bytes", "configuration": {"endian": "big"}});
    let cnames = ["lz4", "lz4hc", "blosclz", "zstd", "zlib", "snappy"];
    let shuffles = ["noshuffle", "shuffle", "bitshuffle"];
    let reversed: Vec<usize> = (0..rank).rev().collect();
    let compressor = |p: u8| match p % 8 {
        0 => json!({"name": "gzip", "configuration": {"level": p % 10}}),
        1 => json!({"name": "zstd", "configuration": {"level": 1, "checksum": p & 16 != 0}}),
        2 => json!({"name": "crc32c"}),
        3 => json!({"name": "numcodecs.zlib", "configuration": {"level": 1}}),
        4 => json!({"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}),
        5 => json!({"name": "numcodecs.bz2", "configuration": {"level": 1}}),
        6 => json!({"name": "numcodecs.lzma", "configuration": {"preset": 1}}),
        _ => {
            json!({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}})
        }
    };
    let index = |p: u8| if p & 1 == 0 { json!([le, {"name": "crc32c"}]) } else { json!([le]) };
    let location = |p: u8| if p & 2 == 0 { "end" } else { "start" };
    let inner: Vec<u64> = vec![2; rank];
    // A float delta's running sum rounds: decoding what it encoded need not give the same bits.
    let integers = dtype[1..].starts_with(['i', 'u']);
    match which % CHAINS {
        0 => (json!([le]), true, None),
        1 => (json!([be]), true, None),
        2 => (
            json!([{"name": "transpose", "configuration": {"order": reversed}}, if p & 1 == 0 { le } else { be }]),
            true,
            None,
        ),
        3 => (json!([le, {"name": "gzip", "configuration": {"level": p % 10}}]), true, None),
        4 => (
            json!([le, {"name": "zstd", "configuration": {"level": i64::from(p % 8) - 2, "checksum": p & 8 != 0}}]),
            true,
            None,
        ),
        5 => (
            json!([le, {"name": "blosc", "configuration": {"cname": cnames[usize::from(p % 6)], "clevel": p % 10,
                "shuffle": shuffles[usize::from(p / 6 % 3)], "typesize": 1 + p % 8, "blocksize": if p & 128 == 0 { 0 } else { 256 }}}]),
            true,
            None,
        ),
        6 => (json!([le, {"name": "crc32c"}]), true, None),
        7 => (json!([le, {"name": "numcodecs.zlib", "configuration": {"level": p % 10}}]), true, None),
        8 => (json!([{"name": "vlen-utf8"}]), false, Some(DataType::String)),
        9 => (json!([{"name": "vlen-bytes"}]), false, Some(DataType::Bytes)),
        10 => (
            json!([le, {"name": "numcodecs.lz4", "configuration": {"acceleration": 1 + i64::from(p % 4)}}]),
            true,
            None,
        ),
        11 => (json!([le, {"name": "numcodecs.bz2", "configuration": {"level": 1 + p % 9}}]), true, None),
        12 => {
            let config = match p % 4 {
                0 => json!({"preset": p % 10}),
                1 => json!({"format": 2, "check": 0}),
                2 => json!({"format": 3, "filters": [{"id": 33, "preset": 1}]}),
                _ => json!({"format": 1, "check": 4}),
            };
            (json!([le, {"name": "numcodecs.lzma", "configuration": config}]), true, None)
        }
        13 => (json!([le, {"name": "numcodecs.shuffle", "configuration": {"elementsize": 1 + p % 16}}]), true, None),
        14 => (json!([{"name": "numcodecs.delta", "configuration": {"dtype": dtype}}, le]), integers, None),
        15 => (
            json!([{"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": p, "scale": 10, "dtype": dtype,
                "astype": (["|u1", "<i2", "<i4", "<u8"][usize::from(p % 4)])}}, le]),
            false,
            None,
        ),
        16 => (
            json!([{"name": "numcodecs.quantize", "configuration": {"digits": p % 12, "dtype": dtype}}, le]),
            false,
            None,
        ),
        17 => (json!([{"name": "numcodecs.bitround", "configuration": {"keepbits": p % 24}}, le]), false, None),
        18 => (
            json!([{"name": "numcodecs.astype", "configuration": {"encode_dtype": (["<f4", "<i2", "|u1", "<f8"][usize::from(p % 4)]),
                "decode_dtype": dtype}}, le]),
            false,
            None,
        ),
        19 => (json!([{"name": "numcodecs.packbits"}, le]), true, Some(DataType::Bool)),
        20 => (
            json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": inner, "codecs": [le],
                "index_codecs": index(p), "index_location": location(p)}}]),
            true,
            None,
        ),
        21 => (
            json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": inner, "codecs": [le, compressor(p >> 2)],
                "index_codecs": index(p), "index_location": location(p)}}]),
            true,
            None,
        ),
        22 => (json!([le, {"name": "zstd", "configuration": {"level": 1}}, {"name": "crc32c"}]), true, None),
        23 => (json!([{"name": "vlen-utf8"}, compressor(p)]), false, Some(DataType::String)),
        24 => (json!([{"name": "transpose", "configuration": {"order": reversed}}, le, compressor(p)]), true, None),
        _ => (
            json!([{"name": "numcodecs.delta", "configuration": {"dtype": dtype}}, le,
                {"name": "numcodecs.shuffle", "configuration": {"elementsize": 1 + p % 8}}, compressor(p >> 3)]),
            integers,
            None,
        ),
    }
}

/// The array a structured input's header declares, and whether its chain is lossless; `None`
/// for a header that declares no valid array. Sharded chains get even dimensions (2 to 16, inner
/// chunks of 2); the others 1 to 16.
pub fn structured(header: [u8; 4], dims: &[u8]) -> Option<(ArrayMetadata, bool)> {
    let [which, t, p, r] = header;
    let (data_type, dtype) = DATA_TYPES[usize::from(t) % DATA_TYPES.len()].clone();
    let rank = 1 + usize::from(r % 3);
    let sharded = matches!(which % CHAINS, 20 | 21);
    let shape: Vec<u64> = (0..rank)
        .map(|i| {
            let d = u64::from(dims.get(i).copied().unwrap_or(4));
            if sharded {
                2 * (1 + d % 8)
            } else {
                1 + d % 16
            }
        })
        .collect();
    let (codecs, lossless, forced) = chain(which, p, dtype, rank);
    let mut meta = ArrayMetadata::new(forced.unwrap_or(data_type), shape.clone(), shape);
    meta.codecs = NamedConfig::parse_list(&codecs).ok()?;
    Some((meta, lossless))
}

/// One input.
pub fn run(data: &[u8]) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let (array, chunk, lossless) = if data.first() == Some(&FREE) {
        let parts = crate::split_nul(&data[1..], 2);
        let Ok(NodeMetadata::Array(_)) = NodeMetadata::from_json(parts[0]) else { return };
        if store.set("zarr.json", parts[0]).is_err() {
            return;
        }
        let Ok(array) = Array::open(store.clone(), "/") else { return };
        (array, parts.get(1).copied().unwrap_or_default(), false)
    } else {
        let Some((header, rest)) = data.split_first_chunk::<4>() else { return };
        let rank = 1 + usize::from(header[3] % 3);
        let (dims, chunk) = rest.split_at(rank.min(rest.len()));
        let Some((meta, lossless)) = structured(*header, dims) else { return };
        let Ok(array) = Array::create(store.clone(), "/", meta) else { return };
        (array, chunk, lossless)
    };
    let chunk_shape = array.chunk_shape().to_vec();
    if !crate::readable(&array, &chunk_shape) {
        return;
    }
    let fixed = !array.data_type().is_variable_length();
    let decoded = array.decode_chunk(chunk);
    if let (Ok(decoded), true) = (&decoded, fixed) {
        let size = crate::elements(&chunk_shape).and_then(|n| n.checked_mul(array.data_type().size() as u64));
        assert_eq!(Some(decoded.len() as u64), size, "a decoded chunk is not the size of the declared chunk");
    }
    let origin = vec![0; chunk_shape.len()];
    store.set(&array.chunk_key(&origin), chunk).expect("a memory store takes a chunk key");
    let inside: Vec<u64> = array.shape().iter().zip(&chunk_shape).map(|(&s, &c)| s.min(c)).collect();
    let read = array.read_region_bytes(&origin, &inside);
    let one: Vec<u64> = inside.iter().map(|&d| d.min(1)).collect();
    let _ = array.read_region_bytes(&origin, &one);
    let Ok(decoded) = decoded else { return };
    if !fixed {
        return;
    }
    if inside == chunk_shape {
        match read {
            Ok(read) => assert!(read == decoded, "the chunk reads through the array as other bytes than it decodes to"),
            Err(e) => panic!("a chunk that decodes does not read through the array: {e}"),
        }
    }
    if lossless {
        let encoded = array.encode_chunk(&decoded).unwrap_or_else(|e| panic!("a decoded chunk does not encode: {e}"));
        let again = array.decode_chunk(encoded).unwrap_or_else(|e| panic!("a chunk just encoded does not decode: {e}"));
        assert!(again == decoded, "a lossless chain changed a chunk on a round trip");
    }
}
