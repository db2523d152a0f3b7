//! The CLI on an empty database (a valid database with no node yet: `check` passes, `tree` says
//! so) and on misspelled locators (refused, nothing created).

use std::process::{Command, Output};

use zarrdb::Database;

fn zarrdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(args).output().expect("run zarrdb")
}

#[test]
fn empty_database_is_checked_clean() {
    let dir = tempfile::tempdir().unwrap();
    for (locator, backend) in [("e.zarrdb", zarrdb::Backend::Redb), ("lmdb-e", zarrdb::Backend::Lmdb)] {
        let path = dir.path().join(locator);
        drop(Database::builder().backend(backend).create(&path).unwrap());
        let locator = match backend {
            zarrdb::Backend::Lmdb => format!("lmdb:{}", path.display()),
            _ => path.display().to_string(),
        };
        let out = zarrdb(&["check", &locator]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout} {}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains("empty") && stdout.contains("0 problems"), "{stdout}");
        let out = zarrdb(&["tree", &locator]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "/ (empty)\n");
    }
}

#[test]
fn misspelled_schemes_are_refused_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("src.zarr");
    std::fs::create_dir(&source).unwrap();
    std::fs::write(source.join("zarr.json"), br#"{"zarr_format": 3, "node_type": "group"}"#).unwrap();
    std::env::set_current_dir(dir.path()).unwrap();
    for locator in ["lmbd:out", "reb:out.zarrdb", "sledd:out", "zipp:out.zip"] {
        let out = zarrdb(&["import", source.to_str().unwrap(), locator]);
        assert!(!out.status.success(), "{locator} was accepted");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("unknown locator scheme"), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        let out = zarrdb(&["tree", locator]);
        assert!(String::from_utf8_lossy(&out.stderr).contains("unknown locator scheme"));
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["src.zarr"], "nothing created");
    // A name holding a colon is still reachable through a path form.
    let out = zarrdb(&["import", source.to_str().unwrap(), "./lmbd:out"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.path().join("lmbd:out").is_file());
}
