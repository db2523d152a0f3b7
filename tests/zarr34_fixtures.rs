//! Arrays zarr-python 3.4.2 wrote (tests/fixtures/zarr34, made by its `generate.py`): the
//! `struct` data type (nested, with a time field), the `scale_offset` and `cast_value` codecs and
//! rectilinear chunk grids (run-length edges, edges past a shrunk extent, rectilinear shards).
//! Each opens, decodes to what zarr-python reads back, encodes the values zarr-python was given
//! into its chunks byte for byte, and keeps its data type, fill value and codecs as written.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use zarrdb::{Array, ArrayMetadata, DirectoryStore, MemoryStore, Store};

const ARRAYS: [&str; 11] = [
    "struct",
    "struct_nested",
    "scale_offset_f64",
    "scale_offset_i16",
    "scale_offset_f16_default",
    "cast_f64_u8",
    "cast_f32_i8_map",
    "cast_i32_f16",
    "rectilinear",
    "rectilinear_shrunk",
    "rectilinear_sharded",
];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/zarr34")
}

/// Every chunk file under `dir` (the `/`-separated keys of n-d arrays are nested folders), with
/// its key under `prefix`.
fn chunk_files(dir: &Path, prefix: &str) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let key = format!("{prefix}/{}", entry.file_name().to_str().unwrap());
        if entry.file_type().unwrap().is_dir() {
            out.extend(chunk_files(&entry.path(), &key));
        } else {
            out.push((key, entry.path()));
        }
    }
    out
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn zarr_python_34_arrays_decode_as_zarr_python_reads_them() {
    let store: Arc<dyn Store> = Arc::new(DirectoryStore::open(fixtures()).unwrap());
    for name in ARRAYS {
        let a = Array::open(store.clone(), &format!("/{name}")).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = a.read_region_bytes(&vec![0; a.shape().len()], a.shape()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = std::fs::read(fixtures().join(format!("{name}.read"))).unwrap();
        assert_eq!(got, want, "{name}: decoded values differ from zarr-python's");
    }
}

#[test]
fn zarr_python_34_inputs_encode_to_its_chunks_byte_for_byte() {
    // zarr-python 3.4 lays a shard's inner chunks out in Morton order, zarrdb in C order: both
    // read either (the shard index says where each is), so a shard is compared by its values.
    for name in ARRAYS.into_iter().filter(|n| *n != "rectilinear_sharded") {
        let folder = fixtures().join(name);
        let meta = ArrayMetadata::from_json(&std::fs::read(folder.join("zarr.json")).unwrap()).unwrap();
        let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let a = Array::create(memory.clone(), "/a", meta).unwrap();
        let input = std::fs::read(fixtures().join(format!("{name}.input"))).unwrap();
        a.write_region_bytes(&vec![0; a.shape().len()], a.shape(), &input).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut stored = 0;
        for (key, path) in chunk_files(&folder.join("c"), "a/c") {
            let ours = memory.get(&key).unwrap().unwrap_or_else(|| panic!("{name}: {key} not stored"));
            assert_eq!(ours, std::fs::read(path).unwrap(), "{name}: {key} differs from zarr-python's");
            stored += 1;
        }
        assert!(stored > 0, "{name}");
        let all = memory.list_prefix("a/c/").unwrap();
        assert_eq!(all.len(), stored, "{name}: chunks zarr-python did not store: {all:?}");
    }
}

#[test]
fn data_types_fill_values_and_codecs_are_written_back_as_zarr_python_wrote_them() {
    for name in ARRAYS {
        let path = fixtures().join(name).join("zarr.json");
        let written = json(&path);
        let meta = ArrayMetadata::from_json(&std::fs::read(&path).unwrap()).unwrap();
        let ours = meta.to_json();
        assert_eq!(ours["data_type"], written["data_type"], "{name}");
        assert_eq!(ours["fill_value"], written["fill_value"], "{name}");
        // The array -> array codecs as written (zarr-python omits default members).
        let filters = |doc: &serde_json::Value| {
            doc["codecs"].as_array().unwrap().iter().filter(|c| c["name"] != "bytes").cloned().collect::<Vec<_>>()
        };
        assert_eq!(filters(&ours), filters(&written), "{name}");
    }
}

#[test]
fn rectilinear_grids_are_written_back_as_zarr_python_wrote_them() {
    for name in ["rectilinear", "rectilinear_shrunk", "rectilinear_sharded"] {
        let path = fixtures().join(name).join("zarr.json");
        let written = json(&path);
        let meta = ArrayMetadata::from_json(&std::fs::read(&path).unwrap()).unwrap();
        assert!(!meta.is_regular(), "{name}");
        assert_eq!(meta.to_json()["chunk_grid"], written["chunk_grid"], "{name}");
    }
    // [[2, 3], 3, 1] x [4, 2]: the chunk holding element (6, 5) is the fourth along dimension 0
    // (rows 6..9) and the second along dimension 1 (columns 4..6).
    let meta = ArrayMetadata::from_json(&std::fs::read(fixtures().join("rectilinear/zarr.json")).unwrap()).unwrap();
    assert_eq!(meta.grid_shape(), [5, 2]);
    assert_eq!(meta.chunk_of(&[6, 5]), [3, 1]);
    assert_eq!(meta.chunk(&[3, 1]), (vec![6, 4], vec![3, 2]));
    assert_eq!(meta.chunks_overlapping(&[1, 3], &[5, 2]), [0..3, 0..2]);
}
