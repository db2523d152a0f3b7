//! Partial imports from the command line. The source holds an array in a codec nobody
//! implements (`no.such.codec`), with a node below its folder and chunks:
//! - without `--skip-unreadable` the import fails and the new database is absent;
//! - with it, everything else is imported, and the output names the skipped array and why;
//! - `--exclude` leaves out node subtrees by pattern without reading them, so excluding the
//!   unreadable array is enough for the import to succeed.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

use serde_json::json;
use zarrdb::error::NodeError;
use zarrdb::{Array, ArrayMetadata, DataType, Database, DirectoryStore, Error, Node, Store};

fn zarrdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(args).output().expect("run zarrdb")
}

/// /good/a   uint8 [4] chunks [2], written
/// /grid/x, /grid/y   int16 [2] chunks [2], written
/// /bad      an array whose codec is `no.such.codec`, with two chunk files
fn build(root: &Path) {
    let store: Arc<dyn Store> = Arc::new(DirectoryStore::create(root).unwrap());
    let a = Array::create(store.clone(), "/good/a", ArrayMetadata::new(DataType::UInt8, vec![4], vec![2])).unwrap();
    a.write_region(&[0], &[4], &[1u8, 2, 3, 4]).unwrap();
    for name in ["/grid/x", "/grid/y"] {
        let meta = ArrayMetadata::new(DataType::Int16, vec![2], vec![2]);
        Array::create(store.clone(), name, meta).unwrap().write_region(&[0], &[2], &[5i16, 6]).unwrap();
    }
    let bad = json!({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "bytes"}, {"name": "no.such.codec"}]});
    store.set("bad/zarr.json", &serde_json::to_vec(&bad).unwrap()).unwrap();
    store.set("bad/c/0", b"??").unwrap();
    store.set("bad/c/1", b"??").unwrap();
}

fn absent(db: &Database, path: &str) -> bool {
    matches!(Node::open(db.store(), path), Err(Error::Node(NodeError::NotFound { .. })))
}

#[test]
fn unreadable_nodes_fail_the_import_unless_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("src.zarr");
    build(&source);
    let (src, db_path) = (source.display().to_string(), dir.path().join("all.zarrdb"));

    let out = zarrdb(&["import", &src, &db_path.display().to_string()]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no.such.codec"));
    assert!(!db_path.exists(), "a failed import leaves no database");

    let out = zarrdb(&["import", &src, &db_path.display().to_string(), "--skip-unreadable"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let skipped: Vec<&str> = stdout.lines().filter(|l| l.starts_with("skipped")).collect();
    assert_eq!(skipped.len(), 1, "{stdout}");
    assert!(skipped[0].starts_with("skipped /bad ") && skipped[0].contains("no.such.codec"), "{stdout}");

    let db = Database::open(&db_path).unwrap();
    assert_eq!(Array::open(db.store(), "/good/a").unwrap().read_all::<u8>().unwrap(), vec![1, 2, 3, 4]);
    assert_eq!(Array::open(db.store(), "/grid/y").unwrap().read_all::<i16>().unwrap(), vec![5, 6]);
    assert!(absent(&db, "/bad"), "nothing of the skipped array, chunks included");
    assert!(db.store().get("bad/c/0").unwrap().is_none());
}

#[test]
fn excluded_subtrees_are_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("src.zarr");
    build(&source);
    let db_path = dir.path().join("some.zarrdb");
    let args = ["import", &source.display().to_string(), &db_path.display().to_string()];
    let out = zarrdb(&[&args[..], &["--exclude", "/grid/*", "--exclude", "b?d"]].concat());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("excluded /bad ") && stdout.contains("excluded /grid/x "), "{stdout}");

    let db = Database::open(&db_path).unwrap();
    assert_eq!(Array::open(db.store(), "/good/a").unwrap().read_all::<u8>().unwrap(), vec![1, 2, 3, 4]);
    assert!(absent(&db, "/bad") && absent(&db, "/grid/x") && absent(&db, "/grid/y"));
    assert!(matches!(Node::open(db.store(), "/grid"), Ok(Node::Group(_))), "the group itself stays");
}
