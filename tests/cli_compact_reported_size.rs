//! `zarrdb compact --json` reports as `bytes_after` the length the file keeps (issue 40): the
//! length was measured right after compacting, before the database was closed, and closing
//! writes too, so a redb file reported at 16384 bytes stayed 36864.

use std::process::Command;

use serde_json::Value;
use zarrdb::{Array, ArrayMetadata, DataType, Database, Node};

#[test]
fn bytes_after_is_the_length_the_file_keeps() {
    for (backend, scheme) in [(zarrdb::Backend::Redb, "redb"), (zarrdb::Backend::Lmdb, "lmdb")] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.db");
        let db = Database::builder().backend(backend).create(&path).unwrap();
        let a =
            Array::create(db.store(), "/a", ArrayMetadata::new(DataType::Float64, vec![65536], vec![8192])).unwrap();
        a.write_region(&[0], &[65536], &vec![1.5f64; 65536]).unwrap();
        Node::erase(db.store(), "/a").unwrap();
        drop((a, db));
        let out = Command::new(env!("CARGO_BIN_EXE_zarrdb"))
            .args(["compact", "--json", &format!("{scheme}:{}", path.display())])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        let on_disk: u64 = if meta.is_dir() {
            std::fs::read_dir(&path)
                .unwrap()
                .map(|e| e.unwrap().metadata().unwrap())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        } else {
            meta.len()
        };
        assert_eq!(report["bytes_after"], Value::from(on_disk), "{scheme}: {report}");
        assert!(
            report["bytes_after"].as_u64().unwrap() < report["bytes_before"].as_u64().unwrap(),
            "{scheme}: {report}"
        );
    }
}
