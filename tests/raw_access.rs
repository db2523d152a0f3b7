//! `RawAccess`, the key/value access zarr-python's store uses: node documents are checked on
//! the way in (the engine's typed errors, nothing stored on refusal), a group written with
//! consolidated metadata is stored with an empty member and served with fresh metadata, and an
//! export never writes that empty member out.

use serde_json::{json, Value};
use zarrdb::error::NodeError;
use zarrdb::hierarchy::RawAccess;
use zarrdb::{Array, ArrayMetadata, DataType, Database, Error, ExportOptions};

const GROUP: &[u8] = br#"{"zarr_format": 3, "node_type": "group"}"#;

fn consolidated_group(entries: Value) -> Vec<u8> {
    let doc = json!({"zarr_format": 3, "node_type": "group", "attributes": {"t": 1},
        "consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata": entries}});
    serde_json::to_vec(&doc).unwrap()
}

fn json_of(bytes: Option<Vec<u8>>) -> Value {
    serde_json::from_slice(&bytes.expect("a value")).unwrap()
}

#[test]
fn documents_are_checked_before_they_are_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("r.zarrdb")).unwrap();
    let store = db.store();
    let raw = RawAccess::new(store.as_ref());
    for bad in [&b"bar"[..], br#"{"zarr_format": 3}"#, br#"{"zarr_format": 3, "node_type": "group", "x": 1}"#] {
        let err = raw.set("g/zarr.json", bad).unwrap_err();
        assert!(matches!(&err, Error::Metadata { key, .. } if key == "g/zarr.json"), "{err}");
    }
    assert_eq!(store.get("g/zarr.json").unwrap(), None);

    let meta = ArrayMetadata::new(DataType::Int8, vec![4], vec![2]);
    Array::create(store.clone(), "/a", meta).unwrap();
    let err = raw.set("a/b/zarr.json", GROUP).unwrap_err();
    assert!(matches!(err, Error::Node(NodeError::ParentIsArray { ref array, .. }) if array == "/a"), "{err}");
    assert!(matches!(raw.set("__zarrdb/zarr.json", GROUP), Err(Error::Node(NodeError::InvalidPath { .. }))));

    // Chunks and other keys pass through; a valid document is stored as given.
    raw.set("a/c/0", b"\x01\x02").unwrap();
    raw.set("g/zarr.json", GROUP).unwrap();
    assert_eq!(store.get("g/zarr.json").unwrap().as_deref(), Some(GROUP));
}

#[test]
fn consolidated_metadata_is_served_fresh_and_never_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("c.zarrdb")).unwrap();
    let store = db.store();
    let raw = RawAccess::new(store.as_ref());
    raw.set("zarr.json", GROUP).unwrap();
    let mut array =
        Array::create(store.clone(), "/g/a", ArrayMetadata::new(DataType::Int16, vec![4], vec![2])).unwrap();
    // What the writer believed: a stale entry for a node that is not there.
    raw.set("zarr.json", &consolidated_group(json!({"gone": {"zarr_format": 3, "node_type": "group"}}))).unwrap();

    let stored = json_of(store.get("zarr.json").unwrap());
    assert_eq!(stored["consolidated_metadata"]["metadata"], json!({}), "only the request is stored");
    assert_eq!(stored["attributes"], json!({"t": 1}));

    array.resize(&[9]).unwrap();
    let served = json_of(raw.get("zarr.json").unwrap());
    let entries = served["consolidated_metadata"]["metadata"].as_object().unwrap();
    assert_eq!(entries.keys().collect::<Vec<_>>(), ["g", "g/a"]);
    assert_eq!(entries["g/a"]["shape"], json!([9]), "the array as it is now");
    assert_eq!(entries["g"]["node_type"], "group", "the folder of /g/a is an implicit group");
    assert_eq!(raw.size("zarr.json").unwrap(), Some(raw.get("zarr.json").unwrap().unwrap().len() as u64));
    // Other documents, and stores read without RawAccess, are untouched.
    assert_eq!(json_of(raw.get("g/a/zarr.json").unwrap())["shape"], json!([9]));

    // A snapshot serves the metadata of its own commit.
    let snapshot = db.begin_read().unwrap();
    array.resize(&[12]).unwrap();
    let snap_store = snapshot.store();
    let old = json_of(RawAccess::new(snap_store.as_ref()).get("zarr.json").unwrap());
    assert_eq!(old["consolidated_metadata"]["metadata"]["g/a"]["shape"], json!([9]));
}

#[test]
fn export_never_writes_the_stored_request() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("e.zarrdb")).unwrap();
    let store = db.store();
    let raw = RawAccess::new(store.as_ref());
    raw.set("zarr.json", &consolidated_group(json!({}))).unwrap();
    raw.set("g/zarr.json", &consolidated_group(json!({}))).unwrap();
    Array::create(store.clone(), "/g/a", ArrayMetadata::new(DataType::UInt8, vec![2], vec![2])).unwrap();

    let read = |path: &std::path::Path, key: &str| -> Value {
        serde_json::from_slice(&std::fs::read(path.join(key)).unwrap()).unwrap()
    };
    let plain = dir.path().join("plain.zarr");
    db.export(&plain, &ExportOptions::default().consolidated(false)).unwrap();
    assert!(read(&plain, "zarr.json").get("consolidated_metadata").is_none());
    assert!(read(&plain, "g/zarr.json").get("consolidated_metadata").is_none());
    assert_eq!(read(&plain, "zarr.json")["attributes"], json!({"t": 1}));

    let folder = dir.path().join("c.zarr");
    assert!(db.export(&folder, &ExportOptions::default()).unwrap().consolidated);
    let root = read(&folder, "zarr.json");
    let entries = root["consolidated_metadata"]["metadata"].as_object().unwrap();
    assert_eq!(entries.keys().collect::<Vec<_>>(), ["g", "g/a"]);
    assert!(read(&folder, "g/zarr.json").get("consolidated_metadata").is_none());
}
