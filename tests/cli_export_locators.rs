//! `zarrdb export DB DST` takes DST as a locator (DESIGN.md §11): `zip:PATH` writes an archive
//! and `dir:PATH` a folder whatever the name, and a database locator is refused. Before, the
//! scheme was kept as part of the file name and `export db zip:out.zip` failed.

use std::path::Path;
use std::process::{Command, Output};

use zarrdb::{Array, ArrayMetadata, DataType, Database};

fn zarrdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(args).output().unwrap()
}

fn database(dir: &Path) -> String {
    let path = dir.join("data.zarrdb");
    let db = Database::create(&path).unwrap();
    let a = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![4], vec![2])).unwrap();
    a.write_region(&[0], &[4], &[1u8, 2, 3, 4]).unwrap();
    path.display().to_string()
}

#[test]
fn zip_and_dir_schemes_choose_the_layout() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    for (locator, file, zip) in [
        ("zip:{}/out.zip", "out.zip", true),
        ("zip:{}/archive.bin", "archive.bin", true),
        ("dir:{}/folder.zip", "folder.zip", false),
    ] {
        let locator = locator.replace("{}", &dir.path().display().to_string());
        let out = zarrdb(&["export", &db, &locator]);
        assert!(out.status.success(), "{locator}: {out:?}");
        let written = dir.path().join(file);
        assert_eq!(written.is_file(), zip, "{locator}");
        assert_eq!(written.is_dir(), !zip, "{locator}");
        // What was written reads back through the same locator.
        let cat = zarrdb(&["cat", "--raw", &locator, "/a"]);
        assert!(cat.status.success(), "{locator}: {cat:?}");
        assert_eq!(cat.stdout, [1, 2, 3, 4], "{locator}");
    }
}

#[test]
fn a_database_destination_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    for scheme in ["redb", "lmdb", "sled"] {
        let target = dir.path().join(format!("copy.{scheme}"));
        let out = zarrdb(&["export", &db, &format!("{scheme}:{}", target.display())]);
        assert_eq!(out.status.code(), Some(3), "{scheme}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("not a database"), "{scheme}: {err}");
        assert!(!target.exists(), "{scheme}: nothing is created");
    }
}

/// A failed export names the destination the user gave, never the temporary name it is
/// written under before the rename.
#[test]
fn export_errors_name_the_destination() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    for target in ["out.zarr", "out.zip"] {
        let destination = dir.path().join("missing_folder").join(target).display().to_string();
        let out = zarrdb(&["export", &db, &destination]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        assert!(stderr.contains(&format!("\"{destination}\"")), "{stderr}");
        assert!(!stderr.contains("zarrdb-partial"), "{stderr}");
    }
}
