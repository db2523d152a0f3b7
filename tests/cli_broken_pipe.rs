//! A reader that stops early (`zarrdb cat big | head -c 10`) ends the command quietly: exit
//! status 0 and nothing on stderr, for raw, `.npy` and JSON output and for `tree` and `attrs`;
//! `check` still fails when it had found problems before its output was closed.

use std::io::Read;
use std::process::{Command, Stdio};

use serde_json::{Map, Value};
use zarrdb::{Array, ArrayMetadata, DataType, Database, Group};

/// Run zarrdb with stdout a pipe whose reader takes 10 bytes and closes it; its exit status.
fn read_ten_bytes(args: &[&str]) {
    let (code, stderr) = close_early(args);
    assert_eq!(code, Some(0), "{args:?}: {stderr}");
    assert!(stderr.is_empty(), "{args:?}: {stderr}");
}

fn close_early(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_zarrdb"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run zarrdb");
    let mut first = [0u8; 10];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The pipe's read end is dropped here: the next write fails with EPIPE.
    let out = child.wait_with_output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn closed_pipes_end_commands_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.zarrdb");
    let db = Database::create(&path).unwrap();
    // 128 MB of output from unwritten chunks (fill values), far beyond a pipe's buffer.
    Array::create(db.store(), "/big", ArrayMetadata::new(DataType::Float64, vec![4000, 4000], vec![1000, 1000]))
        .unwrap();
    let mut attributes = Map::new();
    attributes.insert("long".into(), Value::String("x".repeat(1 << 20)));
    // A tree of more than a pipe's 64 KiB: 3,000 lines of ~40 bytes.
    let txn = db.begin_write().unwrap();
    for i in 0..3000 {
        Group::create(txn.store(), &format!("/groups/a_group_with_a_long_name_{i:04}"), Map::new()).unwrap();
    }
    Group::create(txn.store(), "/attrs", attributes).unwrap();
    txn.commit().unwrap();
    drop(db);
    let db = path.to_str().unwrap();
    read_ten_bytes(&["cat", db, "/big", "--raw"]);
    read_ten_bytes(&["cat", db, "/big", "--npy"]);
    read_ten_bytes(&["cat", db, "/big", "--json", "--region", "0:1000,0:1000"]);
    read_ten_bytes(&["tree", db]);
    read_ten_bytes(&["attrs", db, "/attrs"]);
}

#[test]
fn a_check_whose_output_closes_still_fails_on_problems() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tree.zarr");
    let store: std::sync::Arc<dyn zarrdb::Store> = std::sync::Arc::new(zarrdb::DirectoryStore::create(&root).unwrap());
    let meta = ArrayMetadata::new(DataType::UInt8, vec![3000], vec![1])
        .with_codecs([zarrdb::metadata::Codec::bytes(), zarrdb::metadata::Codec::crc32c()]);
    Array::create(store.clone(), "/a", meta).unwrap();
    // 3,000 chunks whose checksums fail: 3,000 problem lines, far beyond a pipe's buffer.
    for i in 0..3000 {
        store.set(&format!("a/c/{i}"), &[1, 2, 3, 4, 5]).unwrap();
    }
    // Lines as found, or one JSON document at the end: either way the status says "damaged".
    for json in [false, true] {
        let mut args = vec!["check", root.to_str().unwrap()];
        args.extend(json.then_some("--json"));
        let (code, stderr) = close_early(&args);
        assert_eq!(code, Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("problem(s) before its output was closed"), "{args:?}: {stderr}");
    }
}
