//! A reader that stops early (`zarrdb cat big | head -c 10`) ends the command quietly: exit
//! status 0 and nothing on stderr, for raw, `.npy` and JSON output and for `tree` and `attrs`.

use std::io::Read;
use std::process::{Command, Stdio};

use serde_json::{Map, Value};
use zarrdb::{Array, ArrayMetadata, DataType, Database, Group};

/// Run zarrdb with stdout a pipe whose reader takes 10 bytes and closes it.
fn read_ten_bytes(args: &[&str]) {
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
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
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
    for i in 0..2000 {
        Group::create(db.store(), &format!("/groups/g{i:04}"), Map::new()).unwrap();
    }
    Group::create(db.store(), "/attrs", attributes).unwrap();
    drop(db);
    let db = path.to_str().unwrap();
    read_ten_bytes(&["cat", db, "/big", "--raw"]);
    read_ten_bytes(&["cat", db, "/big", "--npy"]);
    read_ten_bytes(&["cat", db, "/big", "--json", "--region", "0:1000,0:1000"]);
    read_ten_bytes(&["tree", db]);
    read_ten_bytes(&["attrs", db, "/attrs"]);
}
