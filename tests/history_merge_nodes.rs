//! A merge judges nodes, not only keys: chunks written on one side for an array the other side
//! resized, retyped or removed cannot be merged (they mean nothing in the array as the other side
//! left it), while a change of attributes, of a group's document, or the same change on both
//! sides merges with writes below it. Each case runs on redb, LMDB and sled with real Zarr v3
//! documents.

use zarrdb::db::{MergeOutcome, VersionRef};
use zarrdb::error::HistoryError;
use zarrdb::{Backend, Database, Error};

fn array(shape: u64, attributes: &str) -> Vec<u8> {
    format!(
        r#"{{"zarr_format":3,"node_type":"array","shape":[{shape}],"data_type":"uint8","chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":[2]}}}},"chunk_key_encoding":{{"name":"default","configuration":{{"separator":"/"}}}},"fill_value":0,"codecs":[{{"name":"bytes"}}],"attributes":{attributes}}}"#
    )
    .into_bytes()
}

fn group(attributes: &str) -> Vec<u8> {
    format!(r#"{{"zarr_format":3,"node_type":"group","attributes":{attributes}}}"#).into_bytes()
}

/// A database with history holding group `g` and array `g/a` (8 elements, 4 chunks written),
/// and a branch `dev` made there.
fn start(backend: Backend) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::builder().backend(backend).history(true).create(dir.path().join("m.db")).unwrap();
    let txn = db.begin_write().unwrap();
    let store = txn.store();
    store.set("zarr.json", &group("{}")).unwrap();
    store.set("g/zarr.json", &group("{}")).unwrap();
    store.set("g/a/zarr.json", &array(8, "{}")).unwrap();
    for c in 0..4 {
        store.set(&format!("g/a/c/{c}"), &[c as u8; 2]).unwrap();
    }
    txn.commit().unwrap();
    db.create_branch("dev", &VersionRef::Branch("main".into())).unwrap();
    (dir, db)
}

fn merge_dev(db: &Database) -> Result<MergeOutcome, Error> {
    db.merge(&VersionRef::Branch("dev".into()), "main", "merge dev")
}

fn conflict_keys(outcome: Result<MergeOutcome, Error>) -> Vec<String> {
    match outcome {
        Err(Error::History(HistoryError::MergeConflict { keys, count, .. })) => {
            assert_eq!(count, keys.len());
            keys
        }
        other => panic!("expected a merge conflict, got {other:?}"),
    }
}

fn each_backend(case: impl Fn(&Database)) {
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let (_dir, db) = start(backend);
        case(&db);
        assert!(db.check_history().unwrap().is_empty(), "{}", backend.name());
    }
}

#[test]
fn chunks_written_for_an_array_the_other_side_resized_conflict() {
    each_backend(|db| {
        db.store().set("g/a/zarr.json", &array(6, "{}")).unwrap();
        db.on_branch("dev").unwrap().store().set("g/a/c/3", &[9, 9]).unwrap();
        let head = db.resolve(&VersionRef::Branch("main".into())).unwrap().id;
        assert_eq!(conflict_keys(merge_dev(db)), ["g/a/c/3", "g/a/zarr.json"]);
        // Nothing was written, and the other direction conflicts the same way.
        assert_eq!(db.resolve(&VersionRef::Branch("main".into())).unwrap().id, head);
        let back = db.merge(&VersionRef::Branch("main".into()), "dev", "merge main");
        assert_eq!(conflict_keys(back), ["g/a/c/3", "g/a/zarr.json"]);
    });
}

#[test]
fn chunks_written_under_a_removed_node_conflict() {
    each_backend(|db| {
        db.store().erase_prefix("g/a/").unwrap();
        db.on_branch("dev").unwrap().store().set("g/a/c/1", &[7, 7]).unwrap();
        let keys = conflict_keys(merge_dev(db));
        assert_eq!(keys, ["g/a/c/1", "g/a/zarr.json"]);
    });
}

#[test]
fn a_node_made_on_one_side_conflicts_with_keys_the_other_wrote_there() {
    each_backend(|db| {
        db.store().set("g/b/zarr.json", &array(4, "{}")).unwrap();
        db.on_branch("dev").unwrap().store().set("g/b/c/0", &[1, 1]).unwrap();
        assert_eq!(conflict_keys(merge_dev(db)), ["g/b/c/0", "g/b/zarr.json"]);
    });
}

#[test]
fn attribute_and_group_changes_merge_with_chunk_writes() {
    each_backend(|db| {
        db.store().set("g/a/zarr.json", &array(8, r#"{"units":"K"}"#)).unwrap();
        db.store().set("g/zarr.json", &group(r#"{"title":"run 2"}"#)).unwrap();
        db.store().set("zarr.json", &group(r#"{"note":"root"}"#)).unwrap();
        let dev = db.on_branch("dev").unwrap();
        dev.store().set("g/a/c/2", &[5, 5]).unwrap();
        dev.store().set("g/b/zarr.json", &array(4, "{}")).unwrap();
        assert!(matches!(merge_dev(db).unwrap(), MergeOutcome::Merged(_)));
        let store = db.store();
        assert_eq!(store.get("g/a/c/2").unwrap(), Some(vec![5, 5]));
        assert_eq!(store.get("g/a/zarr.json").unwrap(), Some(array(8, r#"{"units":"K"}"#)));
        assert_eq!(store.get("g/zarr.json").unwrap(), Some(group(r#"{"title":"run 2"}"#)));
        assert_eq!(store.get("g/b/zarr.json").unwrap(), Some(array(4, "{}")));
    });
}

#[test]
fn the_same_resize_on_both_sides_merges() {
    each_backend(|db| {
        // Both append the same way (one chunk more), each writing a different new chunk.
        let txn = db.begin_write().unwrap();
        txn.store().set("g/a/zarr.json", &array(10, "{}")).unwrap();
        txn.store().set("g/a/c/0", &[3, 3]).unwrap();
        txn.commit().unwrap();
        let dev = db.on_branch("dev").unwrap();
        let txn = dev.begin_write().unwrap();
        txn.store().set("g/a/zarr.json", &array(10, "{}")).unwrap();
        txn.store().set("g/a/c/4", &[4, 4]).unwrap();
        txn.commit().unwrap();
        assert!(matches!(merge_dev(db).unwrap(), MergeOutcome::Merged(_)));
        let store = db.store();
        assert_eq!(store.get("g/a/c/0").unwrap(), Some(vec![3, 3]));
        assert_eq!(store.get("g/a/c/4").unwrap(), Some(vec![4, 4]));
    });
}

#[test]
fn a_retyped_array_conflicts_even_when_only_its_document_is_on_one_side() {
    each_backend(|db| {
        let retyped = String::from_utf8(array(8, "{}")).unwrap().replace("uint8", "int8");
        db.on_branch("dev").unwrap().store().set("g/a/zarr.json", retyped.as_bytes()).unwrap();
        db.store().set("g/a/c/0", &[8, 8]).unwrap();
        assert_eq!(conflict_keys(merge_dev(db)), ["g/a/c/0", "g/a/zarr.json"]);
        // A document that is not JSON is judged a restructuring too.
        db.reset("dev", &VersionRef::Branch("main".into())).unwrap();
        db.on_branch("dev").unwrap().store().set("g/a/zarr.json", b"not json").unwrap();
        db.store().set("g/a/c/1", &[1, 2]).unwrap();
        assert_eq!(conflict_keys(merge_dev(db)), ["g/a/c/1", "g/a/zarr.json"]);
    });
}
