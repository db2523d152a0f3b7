//! Target `shard_index`: a stored shard (`sharding_indexed`) whose index, inner chunks and
//! lengths are all input, read whole (the index checked, every inner chunk decoded) and one
//! element at a time (a partial read: the index, then one inner chunk's byte range).
//!
//! Input: a configuration byte, then the shard. The byte picks the index location (bit 0), the
//! index codecs (bit 1: with or without crc32c), the inner codecs (bits 2-3: bytes, bytes and
//! gzip, bytes and crc32c, nested sharding), the data type (bit 4: uint8 or uint16) and the
//! shard's shape (bits 5-6: `[8]` of `[2]`, `[4, 4]` of `[2, 2]`, `[8, 4]` of `[4, 2]`,
//! `[2, 2, 2]` of `[1, 1, 1]`).
//!
//! Checked beyond "no panic": a shard that decodes whole reads through the array as the same
//! bytes, and each element read alone equals its place in the whole read.

use std::sync::Arc;

use serde_json::json;
use zarrdb::metadata::NamedConfig;
use zarrdb::{Array, ArrayMetadata, DataType, MemoryStore, Store};

/// The array configuration byte `c` picks.
pub fn metadata(c: u8) -> ArrayMetadata {
    let le = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let index = if c & 2 == 0 { json!([le, {"name": "crc32c"}]) } else { json!([le]) };
    let location = if c & 1 == 0 { "end" } else { "start" };
    let (shape, inner): (Vec<u64>, Vec<u64>) = match (c >> 5) & 3 {
        0 => (vec![8], vec![2]),
        1 => (vec![4, 4], vec![2, 2]),
        2 => (vec![8, 4], vec![4, 2]),
        _ => (vec![2, 2, 2], vec![1, 1, 1]),
    };
    let codecs = match (c >> 2) & 3 {
        0 => json!([le]),
        1 => json!([le, {"name": "gzip", "configuration": {"level": 1}}]),
        2 => json!([le, {"name": "crc32c"}]),
        _ => {
            let innermost: Vec<u64> = inner.iter().map(|&d| d.div_ceil(2)).collect();
            json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": innermost, "codecs": [le],
                "index_codecs": [le], "index_location": "start"}}])
        }
    };
    let data_type = if c & 16 == 0 { DataType::UInt8 } else { DataType::UInt16 };
    let mut meta = ArrayMetadata::new(data_type, shape.clone(), shape);
    meta.codecs = NamedConfig::parse_list(&json!([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": inner, "codecs": codecs, "index_codecs": index, "index_location": location}}]))
    .expect("the sharding configurations are valid");
    meta
}

/// One input.
pub fn run(data: &[u8]) {
    let Some((&c, shard)) = data.split_first() else { return };
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = Array::create(store.clone(), "/", metadata(c)).expect("the sharding configurations create arrays");
    let shape = array.shape().to_vec();
    let origin = vec![0; shape.len()];
    let decoded = array.decode_chunk(shard);
    store.set(&array.chunk_key(&origin), shard).expect("a memory store takes a chunk key");
    let whole = array.read_region_bytes(&origin, &shape);
    match (&decoded, &whole) {
        (Ok(decoded), Ok(whole)) => assert!(decoded == whole, "the shard reads as other bytes than it decodes to"),
        (Ok(_), Err(e)) => panic!("a shard that decodes does not read through the array: {e}"),
        _ => {}
    }
    let size = array.data_type().size();
    let mut at = vec![0u64; shape.len()];
    for i in 0..crate::elements(&shape).unwrap_or(0) as usize {
        let mut rest = i;
        for d in (0..shape.len()).rev() {
            at[d] = (rest % shape[d] as usize) as u64;
            rest /= shape[d] as usize;
        }
        let one = array.read_region_bytes(&at, &vec![1; shape.len()]);
        if let (Ok(one), Ok(whole)) = (one, &whole) {
            assert!(
                one == whole[i * size..(i + 1) * size],
                "element {at:?} reads alone as other bytes than in the whole shard"
            );
        }
    }
}
