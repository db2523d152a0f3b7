//! A path inside an array is no node (DESIGN.md §7: no node under an array). Under the default
//! chunk key encoding the chunks of `/arr` are stored at `arr/c/0`, `arr/c/1`..., so `/arr/c` has
//! keys below it; it is the array's chunk folder, not an implicit group. Opening, erasing, moving
//! or creating a node there must find nothing (or refuse as inside an array) and leave the
//! array's chunks alone. Checked on a MemoryStore and a redb database with a 1-d int32 array
//! holding data in two chunks.
//!
//! The hierarchy model (`tests/hierarchy_model.rs`) avoids the name `c` because of these bugs.

use std::sync::Arc;

use zarrdb::error::NodeError;
use zarrdb::{Array, ArrayMetadata, DataType, Database, Error, Group, MemoryStore, Node, Store};

const DATA: [i32; 4] = [1, 2, 3, 4];

/// A MemoryStore and a redb database store, each holding `/arr` with [`DATA`] in two chunks.
fn stores() -> Vec<(tempfile::TempDir, Arc<dyn Store>)> {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("db")).unwrap();
    let out: Vec<(tempfile::TempDir, Arc<dyn Store>)> =
        vec![(tempfile::tempdir().unwrap(), Arc::new(MemoryStore::new())), (dir, db.store())];
    for (_, store) in &out {
        let arr = Array::create(store.clone(), "/arr", ArrayMetadata::new(DataType::Int32, vec![4], vec![2])).unwrap();
        arr.write_region(&[0], &[4], &DATA).unwrap();
        assert_eq!(store.list_prefix("arr/c/").unwrap(), ["arr/c/0", "arr/c/1"], "{}", store.kind());
    }
    out
}

/// The array still holds its data and nothing else appeared.
fn intact(store: &Arc<dyn Store>) {
    let arr = Array::open(store.clone(), "/arr").unwrap();
    assert_eq!(arr.read_all::<i32>().unwrap(), DATA, "{}: the array's data", store.kind());
    assert_eq!(Group::open(store.clone(), "/").unwrap().child_names().unwrap(), ["arr"], "{}", store.kind());
}

fn is_not_found(result: &Result<(), Error>) -> bool {
    matches!(result, Err(Error::Node(NodeError::NotFound { .. })))
}

#[test]
fn no_group_opens_in_a_chunk_folder() {
    for (_dir, store) in stores() {
        let opened = Node::open(store.clone(), "/arr/c");
        assert!(matches!(opened, Err(Error::Node(NodeError::NotFound { .. }))), "{}: {opened:?}", store.kind());
    }
}

#[test]
fn erasing_a_chunk_folder_keeps_the_chunks() {
    for (_dir, store) in stores() {
        let erased = Node::erase(store.clone(), "/arr/c");
        assert!(is_not_found(&erased), "{}: Node::erase gave {erased:?}", store.kind());
        intact(&store);
        let erased = Node::erase_keeping_parent(store.clone(), "/arr/c");
        assert!(is_not_found(&erased), "{}: Node::erase_keeping_parent gave {erased:?}", store.kind());
        intact(&store);
    }
}

#[test]
fn moving_a_chunk_folder_keeps_the_chunks() {
    for (_dir, store) in stores() {
        let moved = Node::rename(store.clone(), "/arr/c", "/moved");
        assert!(is_not_found(&moved), "{}: Node::rename gave {moved:?}", store.kind());
        intact(&store);
        assert!(store.list_prefix("moved/").unwrap().is_empty(), "{}", store.kind());
    }
}

#[test]
fn creating_in_a_chunk_folder_is_parent_is_array() {
    for (_dir, store) in stores() {
        let meta = ArrayMetadata::new(DataType::Int32, vec![2], vec![2]);
        let created = Array::create(store.clone(), "/arr/c", meta).map(drop);
        assert!(
            matches!(created, Err(Error::Node(NodeError::ParentIsArray { ref array, .. })) if array == "/arr"),
            "{}: Array::create gave {created:?}",
            store.kind()
        );
        let created = Group::create(store.clone(), "/arr/c", Default::default()).map(drop);
        assert!(matches!(created, Err(Error::Node(NodeError::ParentIsArray { .. }))), "{}: {created:?}", store.kind());
        intact(&store);
    }
}
