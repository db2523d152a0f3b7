//! Hostile and damaged values for the numcodecs codecs (issue 14): lz4 size headers that lie (4 GiB,
//! more or less than the block holds), truncated and garbage lz4, bz2 and lzma streams, bz2 and
//! lzma bombs (valid streams of more than a chunk), an lzma "alone" header claiming a 4 GiB
//! dictionary, shuffle and packbits values of the wrong size or header. Each read must return
//! `Error::Codec` with the expected `CodecError` naming the codec, never panic, and never allocate
//! by the stream's word. Configurations numcodecs allows but zarrdb cannot honour are refused
//! with `InvalidConfiguration` naming the field.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use serde_json::{json, Value};
use zarrdb::error::CodecError;
use zarrdb::metadata::NamedConfig;
use zarrdb::{Array, ArrayMetadata, DataType, Error, MemoryStore, Store};

const N: u64 = 1000;

/// `/a`: N int32 in one chunk with `[bytes, ...chain]`, holding a ramp (or `value` everywhere).
fn array(store: &Arc<dyn Store>, name: &str, n: u64, chain: &[Value], value: Option<i32>) -> Array {
    let mut codecs = vec![json!({"name": "bytes", "configuration": {"endian": "little"}})];
    codecs.extend_from_slice(chain);
    let mut meta = ArrayMetadata::new(DataType::Int32, vec![n], vec![n]);
    meta.codecs = NamedConfig::parse_list(&Value::Array(codecs)).expect("codec list");
    let array = Array::create(store.clone(), name, meta).expect("create");
    let data: Vec<u8> = (0..n as i32).flat_map(|i| value.unwrap_or(i * 7 % 1000).to_le_bytes()).collect();
    array.write_region_bytes(&[0], &[n], &data).expect("write");
    array
}

/// Store `value` as the chunk of a fresh N-element array with `chain`, read it, and return the
/// codec error (panicking if the read succeeds, panics or fails otherwise).
fn read_error(chain: &[Value], value: &[u8]) -> CodecError {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = array(&store, "/a", N, chain, None);
    store.set("a/c/0", value).expect("set");
    match catch_unwind(AssertUnwindSafe(|| array.read_region_bytes(&[0], &[N]))) {
        Err(_) => panic!("{chain:?}: reading a hostile value panicked"),
        Ok(Ok(_)) => panic!("{chain:?}: a hostile value was read as data"),
        Ok(Err(Error::Codec { source, .. })) => source,
        Ok(Err(other)) => panic!("{chain:?}: not a codec error: {other}"),
    }
}

/// The stored chunk of an array of `n` copies of 1 with `chain`: a valid stream decoding to more
/// than the N-element chunk when n > N.
fn stream(chain: &[Value], n: u64) -> Vec<u8> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    array(&store, "/big", n, chain, Some(1));
    store.get("big/c/0").expect("get").expect("stored")
}

fn corrupt(e: &CodecError, name: &str) -> bool {
    matches!(e, CodecError::Corrupt { codec, .. } if *codec == name)
}

fn too_large(e: &CodecError, name: &str) -> bool {
    matches!(e, CodecError::TooLarge { codec, .. } if *codec == name)
}

#[test]
fn lz4_lying_headers_truncation_and_garbage() {
    let chain = [json!({"name": "numcodecs.lz4"})];
    let good = stream(&chain, N);
    let with_header = |size: u32| [&size.to_le_bytes()[..], &good[4..]].concat();
    let e = read_error(&chain, &with_header(u32::MAX));
    assert!(too_large(&e, "numcodecs.lz4"), "4 GiB header: {e}");
    for size in [4 * N as u32 - 1, 4 * N as u32 + 1] {
        let e = read_error(&chain, &with_header(size));
        assert!(corrupt(&e, "numcodecs.lz4") || too_large(&e, "numcodecs.lz4"), "header {size}: {e}");
    }
    for bad in [&good[..3], &good[..good.len() - 5], b"\x10\x00\x00\x00garbage-garbage".as_slice()] {
        let e = read_error(&chain, bad);
        assert!(corrupt(&e, "numcodecs.lz4"), "{e}");
    }
}

#[test]
fn bz2_and_lzma_truncation_garbage_and_bombs() {
    for (chain, name) in [
        (json!({"name": "numcodecs.bz2", "configuration": {"level": 9}}), "numcodecs.bz2"),
        (json!({"name": "numcodecs.lzma"}), "numcodecs.lzma"),
        (json!({"name": "numcodecs.lzma", "configuration": {"format": 2}}), "numcodecs.lzma"),
        (json!({"name": "numcodecs.lzma", "configuration": {"format": 3, "filters": [{"id": 33}]}}), "numcodecs.lzma"),
    ] {
        let chain = [chain];
        let good = stream(&chain, N);
        for bad in [&good[..good.len() / 2], b"definitely not compressed data".as_slice(), &[]] {
            let e = read_error(&chain, bad);
            assert!(corrupt(&e, name), "{chain:?}: {e}");
        }
        // 1 MiB of ones compresses to a few hundred bytes: a bomb against a 4000-byte chunk.
        let e = read_error(&chain, &stream(&chain, 1 << 18));
        assert!(too_large(&e, name), "{chain:?} bomb: {e}");
    }
    // An lzma "alone" header: lc/lp/pb byte, a 4 GiB - 1 dictionary, unknown size, then data.
    let header = [&[0x5d][..], &u32::MAX.to_le_bytes(), &[0xff; 8], &[0u8; 32]].concat();
    let e = read_error(&[json!({"name": "numcodecs.lzma", "configuration": {"format": 2}})], &header);
    assert!(corrupt(&e, "numcodecs.lzma"), "huge dictionary: {e}");
}

#[test]
fn shuffle_and_packbits_wrong_sizes() {
    let chain = [json!({"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}})];
    // Longer than a chunk of the array encodes to: refused by its stored length, before decoding.
    let e = read_error(&chain, &vec![0; 4 * N as usize + 4]);
    assert!(matches!(e, CodecError::StoredTooLarge { stored, limit } if stored == limit + 4), "{e}");
    let e = read_error(&chain, &[0; 7]);
    assert!(corrupt(&e, "numcodecs.shuffle"), "{e}");

    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut meta = ArrayMetadata::new(DataType::Bool, vec![20], vec![20]);
    meta.codecs = NamedConfig::parse_list(&json!([{"name": "numcodecs.packbits"}, "bytes"])).unwrap();
    let array = Array::create(store.clone(), "/p", meta).unwrap();
    // 20 elements: 4 padding bits; a header of 5 disagrees with the chunk.
    for (value, expect_corrupt) in [(vec![5u8, 1, 2, 3], true), (vec![4u8, 1, 2], false), (vec![], false)] {
        store.set("p/c/0", &value).unwrap();
        match catch_unwind(AssertUnwindSafe(|| array.read_region_bytes(&[0], &[20]))).expect("no panic") {
            Err(Error::Codec { source: CodecError::Corrupt { codec, .. }, .. }) if expect_corrupt => {
                assert_eq!(codec, "numcodecs.packbits")
            }
            Err(Error::Codec { source: CodecError::SizeMismatch { .. }, .. }) if !expect_corrupt => {}
            other => panic!("packbits {value:?}: {other:?}"),
        }
    }
}

#[test]
fn configurations_zarrdb_cannot_honour_name_the_field() {
    let cases = [
        (json!({"name": "numcodecs.lzma", "configuration": {"format": 0}}), "format"),
        (json!({"name": "numcodecs.lzma", "configuration": {"filters": [{"id": 33}]}}), "filters"),
        (
            json!({"name": "numcodecs.lzma", "configuration": {"format": 3, "filters": [{"id": 33, "mf": 4}]}}),
            "filters[0].mf",
        ),
        (json!({"name": "numcodecs.lzma", "configuration": {"format": 2, "check": 4}}), "check"),
        (
            json!({"name": "numcodecs.lzma", "configuration": {"format": 3, "filters": [{"id": 33, "lc": 4, "lp": 1}]}}),
            "filters[0].lc",
        ),
        (json!({"name": "numcodecs.lz4", "configuration": {"acceleration": "fast"}}), "acceleration"),
        (json!({"name": "numcodecs.bz2", "configuration": {"level": 0}}), "level"),
    ];
    for (codec, field) in cases {
        let chain = vec![json!({"name": "bytes", "configuration": {"endian": "little"}}), codec.clone()];
        let mut meta = ArrayMetadata::new(DataType::Int32, vec![N], vec![N]);
        meta.codecs = NamedConfig::parse_list(&Value::Array(chain)).unwrap();
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        match Array::create(store, "/a", meta) {
            Err(Error::Codec { source: CodecError::InvalidConfiguration { field: f, .. }, .. }) => {
                assert_eq!(f, field, "{codec}")
            }
            other => panic!("{codec}: {:?}", other.err()),
        }
    }
    let filters = [
        (json!({"name": "numcodecs.delta", "configuration": {"dtype": "<i2"}}), "dtype"),
        (json!({"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": "<i2"}}), "astype"),
        (json!({"name": "numcodecs.bitround", "configuration": {"keepbits": 3}}), "keepbits"),
        (json!({"name": "numcodecs.quantize", "configuration": {"digits": 2, "dtype": "<i4"}}), "dtype"),
        (
            json!({"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": 1e10, "scale": "x", "dtype": "<i4"}}),
            "scale",
        ),
        (
            json!({"name": "numcodecs.astype", "configuration": {"encode_dtype": "|S4", "decode_dtype": "<i4"}}),
            "encode_dtype",
        ),
    ];
    for (codec, field) in filters {
        let chain = vec![codec.clone(), json!({"name": "bytes", "configuration": {"endian": "little"}})];
        let mut meta = ArrayMetadata::new(DataType::Int32, vec![N], vec![N]);
        meta.codecs = NamedConfig::parse_list(&Value::Array(chain)).unwrap();
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        match Array::create(store, "/a", meta) {
            Err(Error::Codec { source: CodecError::InvalidConfiguration { field: f, .. }, .. }) => {
                assert_eq!(f, field, "{codec}")
            }
            other => panic!("{codec}: {:?}", other.err()),
        }
    }
}
