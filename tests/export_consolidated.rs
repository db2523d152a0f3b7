//! The consolidated metadata an export writes, in the shape zarr-python 3.1 writes it: every
//! descendant of the exported group keyed by its relative path at the top level ("g/h/a", not
//! nested), `"kind": "inline"`, `"must_understand": false`, each descendant group's entry with
//! an empty inline member, implicit groups listed as groups without attributes (zarr-python
//! refuses consolidated metadata missing a node's parent), only in the exported root's document.
//! `ExportOptions::consolidated(false)` writes the stored documents as they are; an exported
//! array has nothing to consolidate. A group document written with a consolidated member through
//! the API's parsed form never keeps it.

use serde_json::{json, Map, Value};
use zarrdb::hierarchy::Parents;
use zarrdb::{Array, ArrayMetadata, DataType, Database, ExportOptions, Group, GroupMetadata};

fn read(path: &std::path::Path, key: &str) -> Value {
    serde_json::from_slice(&std::fs::read(path.join(key)).unwrap()).unwrap()
}

fn attrs(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

#[test]
fn export_consolidates_every_descendant_at_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("c.zarrdb")).unwrap();
    let store = db.store();
    Group::create(store.clone(), "/", attrs(json!({"title": "root"}))).unwrap();
    Group::create(store.clone(), "/g", attrs(json!({"k": 1}))).unwrap();
    let meta = ArrayMetadata::new(DataType::Int16, vec![3, 2], vec![2, 2]);
    Array::create_with(store.clone(), "/g/h/a", meta, Parents::Implicit).unwrap();
    Array::create(store.clone(), "/x", ArrayMetadata::new(DataType::Float32, vec![4], vec![2])).unwrap();

    let out = dir.path().join("on.zarr");
    let report = db.export(&out, &ExportOptions::default()).unwrap();
    assert!(report.consolidated);
    let root = read(&out, "zarr.json");
    assert_eq!(root["attributes"], json!({"title": "root"}));
    let member = &root["consolidated_metadata"];
    assert_eq!(member["kind"], "inline");
    assert_eq!(member["must_understand"], false);
    let entries = member["metadata"].as_object().unwrap();
    let keys: Vec<&str> = entries.keys().map(String::as_str).collect();
    assert_eq!(keys, ["g", "g/h", "g/h/a", "x"]);
    let empty = json!({"kind": "inline", "must_understand": false, "metadata": {}});
    assert_eq!(entries["g"]["attributes"], json!({"k": 1}));
    assert_eq!(entries["g"]["consolidated_metadata"], empty);
    assert_eq!(entries["g/h"]["node_type"], "group", "the implicit group is listed");
    assert_eq!(entries["g/h/a"], read(&out, "g/h/a/zarr.json"), "an array's entry is its document");
    assert!(!out.join("g/h/zarr.json").exists(), "the implicit group stays implicit on disk");
    assert!(read(&out, "g/zarr.json").get("consolidated_metadata").is_none(), "only the root holds it");

    let off = dir.path().join("off.zarr");
    let report = db.export(&off, &ExportOptions::default().consolidated(false)).unwrap();
    assert!(!report.consolidated);
    assert_eq!(std::fs::read(off.join("zarr.json")).unwrap(), store.get("zarr.json").unwrap().unwrap());

    let array = dir.path().join("x.zarr");
    assert!(!db.export(&array, &ExportOptions::default().node("/x")).unwrap().consolidated);
}

#[test]
fn parsed_group_documents_drop_consolidated_metadata() {
    let doc = br#"{"zarr_format": 3, "node_type": "group", "attributes": {"a": 1},
        "consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata": {"x": {}}}}"#;
    let meta = GroupMetadata::from_json(doc).unwrap();
    assert!(meta.extra.is_empty());
    let written: Value = serde_json::from_slice(&meta.to_json_bytes()).unwrap();
    assert_eq!(written, json!({"zarr_format": 3, "node_type": "group", "attributes": {"a": 1}}));
}
