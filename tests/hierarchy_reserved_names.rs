//! A node cannot be named `zarr.json`: its folder would be its parent's metadata document (a
//! directory or zip store cannot hold both), so creation, parsing and raw writes refuse it.

use zarrdb::error::NodeError;
use zarrdb::hierarchy::RawAccess;
use zarrdb::{Array, ArrayMetadata, DataType, Error, Group, MemoryStore, NodePath, Store};

#[test]
fn zarr_json_is_no_node_name() {
    assert!(matches!(NodePath::parse("/g/zarr.json"), Err(NodeError::InvalidPath { .. })));
    assert!(matches!(NodePath::root().child("zarr.json"), Err(NodeError::InvalidPath { .. })));
    assert!(NodePath::parse("/g/zarr.json.bak").is_ok(), "only the exact name is reserved");

    let store: std::sync::Arc<dyn Store> = std::sync::Arc::new(MemoryStore::new());
    let meta = ArrayMetadata::new(DataType::UInt8, vec![2], vec![2]);
    let err = Array::create(store.clone(), "/zarr.json", meta).unwrap_err();
    assert!(matches!(err, Error::Node(NodeError::InvalidPath { .. })), "{err}");
    assert!(Group::create(store.clone(), "/g/zarr.json", Default::default()).is_err());
    let raw = RawAccess::new(store.as_ref());
    let doc = br#"{"zarr_format": 3, "node_type": "group"}"#;
    assert!(matches!(raw.set("zarr.json/zarr.json", doc), Err(Error::Node(NodeError::InvalidPath { .. }))));
    assert!(store.list().unwrap().is_empty());
}
