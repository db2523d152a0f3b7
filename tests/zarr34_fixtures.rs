//! Arrays zarr-python 3.4.2 wrote (tests/fixtures/zarr34, made by its `generate.py`): the
//! `struct` data type (nested, with a time field) and the `scale_offset` and `cast_value` codecs.
//! Each opens, decodes to what zarr-python reads back, encodes the values zarr-python was given
//! into its chunks byte for byte, and keeps its data type, fill value and codecs as written.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use zarrdb::{Array, ArrayMetadata, DirectoryStore, MemoryStore, Store};

const ARRAYS: [&str; 8] = [
    "struct",
    "struct_nested",
    "scale_offset_f64",
    "scale_offset_i16",
    "scale_offset_f16_default",
    "cast_f64_u8",
    "cast_f32_i8_map",
    "cast_i32_f16",
];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/zarr34")
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
    for name in ARRAYS {
        let folder = fixtures().join(name);
        let meta = ArrayMetadata::from_json(&std::fs::read(folder.join("zarr.json")).unwrap()).unwrap();
        let memory: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let a = Array::create(memory.clone(), "/a", meta).unwrap();
        let input = std::fs::read(fixtures().join(format!("{name}.input"))).unwrap();
        a.write_region_bytes(&vec![0; a.shape().len()], a.shape(), &input).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut stored = 0;
        for entry in std::fs::read_dir(folder.join("c")).unwrap() {
            let entry = entry.unwrap();
            let key = format!("a/c/{}", entry.file_name().to_str().unwrap());
            let ours = memory.get(&key).unwrap().unwrap_or_else(|| panic!("{name}: {key} not stored"));
            assert_eq!(ours, std::fs::read(entry.path()).unwrap(), "{name}: {key} differs from zarr-python's");
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
fn a_rectilinear_chunk_grid_is_refused_naming_the_grid() {
    // zarr-python 3.4 writes it only with its experimental `array.rectilinear_chunks` option;
    // zarrdb does not support variable chunk edges yet (docs/format.md).
    let path = fixtures().join("rectilinear/zarr.json");
    let err = ArrayMetadata::from_json(&std::fs::read(path).unwrap()).unwrap_err();
    assert!(
        matches!(&err, zarrdb::error::MetadataError::Unsupported { field, name, .. }
            if field == "chunk_grid.name" && name == "rectilinear"),
        "{err}"
    );
}
