//! Fuzz target: a Zarr v2, v1 or 2020-draft array folder whose metadata document and one chunk
//! are mutated (`common/fuzz_driver.rs`). The folder is opened as the v3 view an import would
//! make of it (`ConvertedStore`), every key listed and read, and the array's first chunk read
//! whole and as one element: converted metadata, compressors and filters must answer with values
//! or errors, never a panic.
//!
//! Input: a layout byte (`2`, `1` or `d`), the document, a NUL, the chunk.

#[path = "common/fuzz_driver.rs"]
mod fuzz_driver;
#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the test uses only part of the shared generator")]
mod splitmix;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use zarrdb::transfer::ConvertedStore;
use zarrdb::{Array, Store};

const DRAFT_ENTRY: &str = r#"{"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0",
    "metadata_encoding": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_key_suffix": ".json",
    "extensions": []}"#;

/// Arrays whose chunks are larger than this are not read: the fuzzer would spend its time
/// allocating.
const MAX_READ_ELEMENTS: u64 = 1 << 20;

fn write(folder: &Path, key: &str, bytes: &[u8]) {
    let path = folder.join(key);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// The number of dimensions the document declares, as far as it can be read (1 otherwise), to
/// name the first chunk's key.
fn rank(doc: &[u8]) -> usize {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(doc) else { return 1 };
    let chunks = value.get("chunks").or_else(|| value.pointer("/chunk_grid/chunk_shape"));
    chunks.and_then(|c| c.as_array()).map_or(1, |c| c.len().clamp(1, 32))
}

fn target(folder: &Path, input: &[u8]) {
    let _ = std::fs::remove_dir_all(folder);
    std::fs::create_dir_all(folder).unwrap();
    let Some((&layout, rest)) = input.split_first() else { return };
    let (doc, chunk) = match rest.iter().position(|&b| b == 0) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, &[][..]),
    };
    let zeros = vec!["0"; rank(doc)];
    match layout {
        b'2' => {
            write(folder, ".zarray", doc);
            write(folder, &zeros.join("."), chunk);
        }
        b'1' => {
            write(folder, "meta", doc);
            write(folder, &zeros.join("."), chunk);
        }
        _ => {
            write(folder, "zarr.json", DRAFT_ENTRY.as_bytes());
            write(folder, "meta/root/a.array.json", doc);
            write(folder, &format!("data/root/a/c{}", zeros.join("/")), chunk);
        }
    }
    let Ok(converted) = ConvertedStore::open(folder) else { return };
    let store: Arc<dyn Store> = Arc::new(converted);
    if let Ok(keys) = store.list() {
        for key in keys {
            let _ = store.get(&key);
        }
    }
    let path = if layout == b'2' || layout == b'1' { "/" } else { "/a" };
    let Ok(array) = Array::open(store, path) else { return };
    let elements = array.chunk_shape().iter().try_fold(1u64, |n, &d| n.checked_mul(d.max(1)));
    if elements.is_none_or(|n| n > MAX_READ_ELEMENTS) {
        return;
    }
    let origin = vec![0; array.shape().len()];
    let first: Vec<u64> = array.shape().iter().zip(array.chunk_shape()).map(|(&s, &c)| s.min(c)).collect();
    let _ = array.read_region_bytes(&origin, &first);
    let one: Vec<u64> = first.iter().map(|&d| d.min(1)).collect();
    let _ = array.read_region_bytes(&origin, &one);
}

fn zlib(raw: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(raw).unwrap();
    e.finish().unwrap()
}

fn gzip(raw: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(raw).unwrap();
    e.finish().unwrap()
}

fn input(layout: u8, doc: &str, chunk: &[u8]) -> Vec<u8> {
    let mut input = vec![layout];
    input.extend(doc.as_bytes());
    input.push(0);
    input.extend(chunk);
    input
}

fn seeds() -> Vec<Vec<u8>> {
    let ints: Vec<u8> = (0..16u32).flat_map(|i| (i * 3).to_le_bytes()).collect();
    let bytes: Vec<u8> = (0..16u8).collect();
    vec![
        input(
            b'2',
            r#"{"zarr_format": 2, "shape": [4, 4], "chunks": [4, 4], "dtype": "<i4", "compressor": {"id": "zlib", "level": 1}, "fill_value": 0, "order": "C", "filters": null}"#,
            &zlib(&ints),
        ),
        input(
            b'2',
            r#"{"zarr_format": 2, "shape": [4, 4], "chunks": [4, 4], "dtype": ">i4", "compressor": null, "fill_value": 0, "order": "F", "filters": [{"id": "delta", "dtype": ">i4"}]}"#,
            &ints,
        ),
        input(
            b'2',
            r#"{"zarr_format": 2, "shape": [16], "chunks": [16], "dtype": "|S1", "compressor": {"id": "gzip", "level": 1}, "fill_value": "", "order": "C", "filters": null}"#,
            &gzip(&bytes),
        ),
        input(
            b'2',
            r#"{"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": [["a", "<i2"], ["b", "<u2"]], "compressor": null, "fill_value": null, "order": "C", "filters": null}"#,
            &bytes,
        ),
        input(
            b'2',
            r#"{"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<U1", "compressor": null, "fill_value": "", "order": "C", "filters": null}"#,
            &bytes,
        ),
        input(
            b'1',
            r#"{"zarr_format": 1, "shape": [4, 4], "chunks": [4, 4], "dtype": "<i4", "compression": "zlib", "compression_opts": 1, "fill_value": 0, "order": "C"}"#,
            &zlib(&ints),
        ),
        input(
            b'1',
            r#"{"zarr_format": 1, "shape": [16], "chunks": [16], "dtype": "|u1", "compression": "none", "compression_opts": null, "fill_value": null, "order": "C"}"#,
            &bytes,
        ),
        input(
            b'd',
            r#"{"shape": [4, 4], "data_type": "<i4", "chunk_grid": {"type": "regular", "chunk_shape": [4, 4], "separator": "/"}, "chunk_memory_layout": "C", "fill_value": 0, "extensions": [], "attributes": {}, "compressor": {"codec": "https://purl.org/zarr/spec/codec/gzip/1.0", "configuration": {"level": 1}}}"#,
            &gzip(&ints),
        ),
        input(
            b'd',
            r#"{"shape": [16], "data_type": "u1", "chunk_grid": {"type": "regular", "chunk_shape": [16], "separator": "/"}, "chunk_memory_layout": "F", "fill_value": 7, "extensions": [], "attributes": {"a": 1}}"#,
            &bytes,
        ),
    ]
}

#[test]
fn legacy_layouts_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("array");
    let seeds = seeds();
    // Every seed is a readable array: the target is exercised, not refused at the door.
    for seed in &seeds {
        target(&folder, seed);
        let store = ConvertedStore::open(&folder).unwrap_or_else(|e| panic!("seed {:?}: {e}", &seed[..40]));
        let path = if seed[0] == b'd' { "/a" } else { "/" };
        let array = Array::open(Arc::new(store), path).unwrap();
        let origin = vec![0; array.shape().len()];
        array.read_region_bytes(&origin, array.shape()).unwrap();
    }
    fuzz_driver::fuzz("legacy_layouts", &seeds, |input| target(&folder, input));
}
