//! Untrusted import folders and destinations: links that leave the folder or point to folders,
//! names that cannot be keys, metadata zarrdb cannot read, and a destination already in use each
//! fail the import with a typed error and leave the database as it was.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use zarrdb::error::TransferError;
use zarrdb::{Array, ArrayMetadata, DataType, Database, Error, ImportOptions};

const GROUP: &str = r#"{"zarr_format":3,"node_type":"group","attributes":{}}"#;

fn content(db: &Database) -> BTreeMap<String, Vec<u8>> {
    let store = db.begin_read().unwrap().store();
    store.list_prefix("").unwrap().into_iter().map(|k| (k.clone(), store.get(&k).unwrap().unwrap())).collect()
}

/// A folder holding a root group, changed by `hostile`, imported at `at` into a database that
/// holds `/kept`; the database must be unchanged when the import fails.
fn import_folder(at: &str, hostile: impl FnOnce(&Path)) -> Result<zarrdb::transfer::ImportReport, Error> {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("zarr.json"), GROUP).unwrap();
    hostile(&src);
    let db = Database::create(dir.path().join("db.redb")).unwrap();
    Array::create(db.store(), "/kept", ArrayMetadata::new(DataType::UInt8, vec![2], vec![2]))
        .unwrap()
        .write_region(&[0], &[2], &[1u8, 2])
        .unwrap();
    let before = content(&db);
    let result = db.import(&src, &ImportOptions::default().at(at));
    if result.is_err() {
        assert!(content(&db) == before, "a failed import changed the database");
    }
    result
}

#[test]
fn a_link_leaving_the_folder_is_refused() {
    let outside = tempfile::NamedTempFile::new().unwrap();
    let result = import_folder("/x", |src| std::os::unix::fs::symlink(outside.path(), src.join("secret")).unwrap());
    assert!(matches!(result, Err(Error::Transfer(TransferError::Symlink { .. }))), "{result:?}");
}

#[test]
fn a_link_to_a_folder_is_refused() {
    let result = import_folder("/x", |src| {
        std::fs::create_dir(src.join("g")).unwrap();
        std::os::unix::fs::symlink(src.join("g"), src.join("loop")).unwrap();
    });
    assert!(matches!(result, Err(Error::Transfer(TransferError::Symlink { .. }))), "{result:?}");
}

#[test]
fn a_link_to_a_file_inside_is_read_through() {
    let result = import_folder("/x", |src| {
        std::fs::create_dir(src.join("g")).unwrap();
        std::fs::write(src.join("g.json"), GROUP).unwrap();
        std::os::unix::fs::symlink(src.join("g.json"), src.join("g/zarr.json")).unwrap();
    });
    assert_eq!(result.unwrap().nodes, 2);
}

#[test]
fn a_folder_swapped_for_a_link_during_the_import_is_refused() {
    // 2,100 chunks under `a/` fill the first two windows (1,024 values each); `b/` is in the third.
    // After the first window is written (while the second is read, ahead), `b/` is replaced by a
    // link to an outside folder holding files of the same names and sizes, before the third
    // window is read.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(src.join("a/c")).unwrap();
    std::fs::create_dir_all(src.join("b/c")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let meta = |n: u64| {
        format!(
            r#"{{"zarr_format":3,"node_type":"array","shape":[{n}],"data_type":"uint8","chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":[1]}}}},"chunk_key_encoding":{{"name":"default"}},"fill_value":0,"codecs":[{{"name":"bytes"}}]}}"#
        )
    };
    std::fs::write(src.join("zarr.json"), GROUP).unwrap();
    std::fs::write(src.join("a/zarr.json"), meta(2100)).unwrap();
    std::fs::write(src.join("b/zarr.json"), meta(4)).unwrap();
    for i in 0..2100 {
        std::fs::write(src.join(format!("a/c/{i}")), [1]).unwrap();
    }
    std::fs::create_dir_all(outside.join("c")).unwrap();
    for i in 0..4 {
        std::fs::write(src.join(format!("b/c/{i}")), [2]).unwrap();
        std::fs::write(outside.join(format!("c/{i}")), [66]).unwrap();
    }
    std::fs::copy(src.join("b/zarr.json"), outside.join("zarr.json")).unwrap();
    let db = Database::create(dir.path().join("db.redb")).unwrap();
    let (s2, o2) = (src.clone(), outside.clone());
    let swapped = std::sync::atomic::AtomicBool::new(false);
    let options = ImportOptions::default().at("/x").progress(move |_| {
        if !swapped.swap(true, std::sync::atomic::Ordering::SeqCst) {
            std::fs::rename(s2.join("b"), s2.join("b.old")).unwrap();
            std::os::unix::fs::symlink(&o2, s2.join("b")).unwrap();
        }
    });
    let result = db.import(&src, &options);
    assert!(matches!(result, Err(Error::Transfer(TransferError::Symlink { .. }))), "{result:?}");
    assert!(Array::open(db.store(), "/x/b").is_err(), "outside bytes were imported");
}

#[test]
fn names_that_are_not_keys_are_refused() {
    let non_utf8 = std::ffi::OsStr::from_bytes(b"bad\xff");
    let result = import_folder("/x", |src| std::fs::write(src.join(non_utf8), b"x").unwrap());
    assert!(matches!(result, Err(Error::Transfer(TransferError::UnsafeName { .. }))), "{result:?}");
    let result = import_folder("/x", |src| std::fs::write(src.join("a\\b"), b"x").unwrap());
    assert!(matches!(result, Err(Error::Transfer(TransferError::UnsafeName { .. }))), "{result:?}");
}

#[test]
fn metadata_zarrdb_cannot_read_is_refused() {
    let unknown_codec = r#"{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"uint8","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},"chunk_key_encoding":{"name":"default"},"fill_value":0,"codecs":[{"name":"bytes"},{"name":"no-such-codec"}]}"#;
    for doc in [unknown_codec, "{not json", "[1, 2]", r#"{"zarr_format":3,"node_type":"array"}"#] {
        let result = import_folder("/x", |src| {
            std::fs::create_dir(src.join("a")).unwrap();
            std::fs::write(src.join("a/zarr.json"), doc).unwrap();
        });
        assert!(matches!(result, Err(Error::Transfer(TransferError::Plan(_)))), "{doc}: {result:?}");
    }
}

#[test]
fn a_destination_in_use_is_refused() {
    for at in ["/kept", "/kept/inside", "/"] {
        let result = import_folder(at, |_| {});
        assert!(matches!(result, Err(Error::Transfer(TransferError::NodeOccupied { .. }))), "{at}: {result:?}");
    }
}

#[test]
fn a_folder_is_imported_as_given_even_with_one_child() {
    // zarr-python writes an array created at `arr` of an empty store as `arr/...` with no root
    // document: the folder's root is an implicit group, not a wrapper to strip.
    let result = import_folder("/run1", |src| {
        std::fs::remove_file(src.join("zarr.json")).unwrap();
        std::fs::create_dir(src.join("arr")).unwrap();
        std::fs::write(src.join("arr/zarr.json"), GROUP).unwrap();
    })
    .unwrap();
    assert_eq!(result.folder, "");
    assert_eq!(result.nodes, 1);
}

#[test]
fn a_missing_source_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("db.redb")).unwrap();
    let result = db.import(dir.path().join("nothing"), &ImportOptions::default());
    assert!(matches!(result, Err(Error::Transfer(TransferError::SourceNotFound { .. }))), "{result:?}");
}
