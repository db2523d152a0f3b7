//! `tree`, `info`, `cat` and `check` on folders that are not Zarr v3: a Zarr v2 hierarchy is read
//! as the v3 hierarchy an import would make of it (a note on stderr says so); a
//! folder with no Zarr metadata at all is a one-line error with exit status 3 (1 from `check`), not an empty
//! implicit group.

use std::path::Path;
use std::process::{Command, Output};

fn zarrdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(args).output().expect("run zarrdb")
}

fn ok(args: &[&str]) -> (String, String) {
    let out = zarrdb(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "zarrdb {args:?}: {stderr}");
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

/// A v2 group with attributes, a subgroup `g` holding a 3 x 2 int16 array `a` in F order with
/// `/` separators (chunks 2 x 2, one chunk missing), and a uint8 array `u`.
fn write_v2(root: &Path) {
    let file = |key: &str, bytes: &[u8]| {
        let path = root.join(key);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    file(".zgroup", br#"{"zarr_format": 2}"#);
    file(".zattrs", br#"{"title": "legacy"}"#);
    file("g/.zgroup", br#"{"zarr_format": 2}"#);
    file(
        "g/a/.zarray",
        br#"{"zarr_format": 2, "shape": [3, 2], "chunks": [2, 2], "dtype": "<i2", "compressor": null,
            "fill_value": -1, "order": "F", "filters": null, "dimension_separator": "/"}"#,
    );
    file("g/a/.zattrs", br#"{"_ARRAY_DIMENSIONS": ["y", "x"]}"#);
    // Chunk (0, 0) in F order: column 0 then column 1 of rows 0..2.
    file("g/a/0/0", &[1, 0, 3, 0, 2, 0, 4, 0]);
    file(
        "u/.zarray",
        br#"{"zarr_format": 2, "shape": [3], "chunks": [3], "dtype": "|u1", "compressor": null,
            "fill_value": 0, "order": "C", "filters": null}"#,
    );
    file("u/0", &[7, 8, 9]);
}

#[test]
fn v2_folders_are_read_through_the_import_conversion() {
    let dir = tempfile::tempdir().unwrap();
    let v2 = dir.path().join("v2.zarr");
    write_v2(&v2);
    let v2 = v2.display().to_string();

    let (tree, note) = ok(&["tree", &v2]);
    assert!(note.contains("Zarr v2"), "{note}");
    assert!(tree.starts_with("/\n") && !tree.contains("implicit"), "{tree}");
    assert!(tree.contains("a  int16 [3, 2] chunks [2, 2] codecs [transpose, bytes]"), "{tree}");

    let (info, _) = ok(&["info", &v2, "/g/a", "--json"]);
    let info: serde_json::Value = serde_json::from_str(&info).unwrap();
    assert_eq!(info["dimension_names"], serde_json::json!(["y", "x"]));
    assert_eq!(info["chunks_initialized"], 1);
    let (root, _) = ok(&["info", &v2, "/", "--json"]);
    assert!(root.contains("\"legacy\""), "{root}");

    let (cat, _) = ok(&["cat", &v2, "/g/a", "--json"]);
    assert_eq!(cat.trim(), "[[1,2],[3,4],[-1,-1]]");
    let (check, _) = ok(&["check", &v2]);
    assert!(check.contains("2 groups, 2 arrays, 2 chunks: 0 problems"), "{check}");

    // Corrupt the one chunk: check now fails, naming it.
    std::fs::write(Path::new(&v2).join("u/0"), [7, 8]).unwrap();
    let out = zarrdb(&["check", &v2]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn folders_without_zarr_metadata_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("photos");
    std::fs::create_dir_all(plain.join("2024")).unwrap();
    std::fs::write(plain.join("2024/a.jpg"), b"not zarr").unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for folder in [&plain, &empty] {
        let folder = folder.display().to_string();
        for args in [vec!["tree", &folder], vec!["check", &folder], vec!["info", &folder], vec!["cat", &folder, "/x"]] {
            let out = zarrdb(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let expected = if args[0] == "check" { 1 } else { 3 };
            assert_eq!(out.status.code(), Some(expected), "{args:?}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
            assert!(stderr.contains("holds no Zarr hierarchy"), "{args:?}: {stderr}");
        }
    }
}
