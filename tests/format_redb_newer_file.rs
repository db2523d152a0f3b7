//! A redb file whose redb file format is newer than this build's redb reads (as a zarrdb built
//! with a newer redb would write) is refused as written by a newer zarrdb, not reported as a
//! damaged database: writable and read-only, through the library and the CLI. The version byte of
//! both commit slots of redb's header (offsets 64 and 192) is raised here from 3 to 4.

use std::path::Path;

use zarrdb::error::OpenError;
use zarrdb::{Backend, Database, Error};

fn raise_redb_version(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    for slot in [64, 64 + 128] {
        assert_eq!(bytes[slot], 3, "redb 4's file format");
        bytes[slot] = 4;
    }
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_newer_redb_file_format_reads_as_written_by_a_newer_zarrdb() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.zarrdb");
    let db = Database::builder().backend(Backend::Redb).create(&path).unwrap();
    db.store().set("zarr.json", br#"{"zarr_format":3,"node_type":"group"}"#).unwrap();
    drop(db);
    raise_redb_version(&path);
    let expected = format!(
        "cannot open \"{}\": written by a newer zarrdb (or a newer redb): redb file format 4; this build reads up to 3",
        path.display()
    );
    for read_only in [false, true] {
        let error = Database::builder().read_only(read_only).open(&path).expect_err("a newer redb file opened");
        assert_eq!(error.to_string(), expected);
        assert!(
            matches!(error, Error::Open(OpenError::NewerEngineFormat { backend: "redb", found: 4, supported: 3, .. })),
            "{error:?}"
        );
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zarrdb"))
        .args(["info", path.to_str().unwrap()])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains("written by a newer zarrdb (or a newer redb)"), "{said}");
}
