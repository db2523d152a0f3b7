//! Absurd but valid shapes: every operation ends in a value or a typed error, never a panic, a
//! stack overflow or an allocation sized by the metadata.

use serde_json::json;
use zarrdb::error::CodecError;
use zarrdb::store::WritableStore;
use zarrdb::{Array, MemoryStore, Node, Store};

fn array_doc(shape: serde_json::Value, chunks: serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]
    }))
    .unwrap()
}

fn open(doc: &[u8]) -> Result<Array, zarrdb::Error> {
    let store = std::sync::Arc::new(MemoryStore::new());
    store.set("a/zarr.json", doc).unwrap();
    let store: std::sync::Arc<dyn Store> = store;
    match Node::open(store, "/a")? {
        Node::Array(a) => Ok(a),
        Node::Group(_) => panic!("a group"),
    }
}

#[test]
fn huge_shape_with_huge_chunks() {
    // The largest shape, chunks of 2^40 bytes: valid metadata, chunks far beyond memory.
    let array = open(&array_doc(json!([u64::MAX]), json!([1u64 << 40]))).expect("valid metadata opens");
    // Reading unwritten chunks needs no chunk in memory: the region is the fill value.
    assert_eq!(array.read_region_bytes(&[u64::MAX - 10], &[10]).unwrap(), vec![0; 10]);
    assert_eq!(array.read_region_bytes(&[0], &[16]).unwrap(), vec![0; 16]);
    // Writing part of a chunk needs the chunk whole: refused, nothing allocated or stored.
    let err = array.write_region_bytes(&[u64::MAX - 10], &[10], &[1; 10]).unwrap_err();
    assert!(matches!(err, zarrdb::Error::Codec { source: CodecError::ChunkTooLarge { .. }, .. }), "{err}");
    assert!(array.stored_chunks().unwrap().is_empty());
    assert!(array.check().unwrap().is_ok());
    // A chunk stored by someone else is refused on read the same way, not decoded.
    array.store().set("a/c/0", &[7; 16]).unwrap();
    let err = array.read_region_bytes(&[0], &[16]).unwrap_err();
    assert!(matches!(err, zarrdb::Error::Codec { source: CodecError::ChunkTooLarge { .. }, .. }), "{err}");
    assert!(!array.check().unwrap().is_ok());
}

#[test]
fn rank_thirty_thousand() {
    let n = 30_000;
    let array = open(&array_doc(json!(vec![1u64; n]), json!(vec![1u64; n]))).expect("valid metadata opens");
    assert_eq!(array.read_region_bytes(&vec![0; n], &vec![1; n]).unwrap(), vec![0]);
    array.write_region_bytes(&vec![0; n], &vec![1; n], &[5]).unwrap();
    assert_eq!(array.read_region_bytes(&vec![0; n], &vec![1; n]).unwrap(), vec![5]);
    assert!(array.check().unwrap().is_ok());
}

/// A v2 `.zarray` of 100,000 dimensions (the issue's stack overflow): the import converts it into
/// a v3 array that opens and reads, every step iterative.
#[test]
fn v2_array_of_a_hundred_thousand_dimensions_imports() {
    let n = 100_000;
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("v2");
    std::fs::create_dir_all(folder.join("arr")).unwrap();
    std::fs::write(folder.join(".zgroup"), br#"{"zarr_format": 2}"#).unwrap();
    let zarray = json!({"zarr_format": 2, "shape": vec![1u64; n], "chunks": vec![1u64; n], "dtype": "<f4",
        "compressor": null, "fill_value": 0, "order": "C", "filters": null});
    std::fs::write(folder.join("arr/.zarray"), serde_json::to_vec(&zarray).unwrap()).unwrap();
    let db = zarrdb::Database::create(dir.path().join("db")).unwrap();
    db.import(&folder, &zarrdb::ImportOptions::default()).unwrap();
    let array = Array::open(db.store(), "/arr").unwrap();
    assert_eq!(array.shape().len(), n);
    assert_eq!(array.read_region::<f32>(&vec![0; n], &vec![1; n]).unwrap(), [0.0]);
}
