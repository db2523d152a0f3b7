//! The editing commands refuse bad requests on a redb file, an LMDB folder and a directory store
//! with one line on stderr naming the node or file and the cause, exit status 3, and the store
//! exactly as it was (its tree, attributes and values compared before and after).

#[macro_use]
#[path = "common/cli.rs"]
#[expect(dead_code, reason = "this test reads outputs as bytes")]
mod cli;

use std::path::Path;

use cli::{ok, zarrdb};

use zarrdb::transfer::NpyHeader;
use zarrdb::DataType;

fn npy(dir: &Path, name: &str, data_type: &DataType, shape: &[u64], data: &[u8]) -> String {
    let mut bytes = NpyHeader::new(data_type, shape, "test").unwrap().to_bytes();
    bytes.extend_from_slice(data);
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_owned()
}

/// Everything a user could see of the store.
fn state(store: &str) -> Vec<Vec<u8>> {
    vec![
        ok(&["tree", store]),
        ok(&["attrs", store, "/a"]),
        ok(&["attrs", store, "/g"]),
        ok(&["cat", store, "/a", "--raw"]),
    ]
}

fn scenario(store: &str, dir: &Path) {
    ok(&["create", store, "/a", "--dtype", "int32", "--shape", "2,2", "--attrs", r#"{"k": 1}"#]);
    ok(&["mkgroup", store, "/g/sub"]);
    ok(&["write", store, "/a", &npy(dir, "a.npy", &DataType::Int32, &[2, 2], &[1; 16])]);
    let before = state(store);
    let f64_file = npy(dir, "f64.npy", &DataType::Float64, &[2, 2], &[0; 32]);
    let wide = npy(dir, "wide.npy", &DataType::Int32, &[2, 3], &[0; 24]);
    let short = dir.join("short.npy");
    let full = std::fs::read(&wide).unwrap();
    std::fs::write(&short, &full[..full.len() - 4]).unwrap();
    let short = short.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["write", store, "/a", &f64_file], "f64.npy holds float64 elements, /a holds int32"),
        (vec!["append", store, "/a", &f64_file], "float64"),
        (vec!["write", store, "/a", &wide], "has shape [2, 3]"),
        (vec!["write", store, "/a", &wide, "--region", "0,:"], "has shape [2, 3]"),
        (vec!["append", store, "/a", &wide, "--axis", "0"], "/a"),
        (vec!["write", store, "/a", short], "promises 24 bytes"),
        (vec!["write", store, "/a", "/nonexistent.npy"], "cannot open /nonexistent.npy"),
        (vec!["write", store, "/missing", &wide], "/missing"),
        (vec!["write", store, "/a", &wide, "--region", "0:5,:"], "out of bounds"),
        (vec!["rm", store, "/missing"], "/missing"),
        (vec!["rm", store, "/g"], "--recursive"),
        (vec!["mv", store, "/missing", "/b"], "/missing"),
        (vec!["mv", store, "/a", "/g"], "/g"),
        (vec!["mv", store, "/g", "/g/sub/x"], "/g"),
        (vec!["create", store, "/a", "--dtype", "int8", "--shape", "3"], "/a"),
        (vec!["create", store, "/a/inner", "--dtype", "int8", "--shape", "3"], "/a"),
        (vec!["create", store, "/new", "--dtype", "int8", "--shape", "3", "--chunks", "1,1"], "chunk"),
        (vec!["mkgroup", store, "/a"], "/a"),
        (vec!["attrs", store, "/a", "--delete", "nothere"], "no attribute \"nothere\""),
        (vec!["attrs", store, "/a", "--set", "novalue"], "KEY=VALUE"),
        (vec!["attrs", store, "/missing", "--set", "k=2"], "/missing"),
        (vec!["resize", store, "/g", "--shape", "3"], "/g"),
        (vec!["resize", store, "/a", "--shape", "3"], "/a"),
    ];
    for (args, expected) in cases {
        let out = zarrdb(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(stderr.starts_with("zarrdb: error: ") && stderr.lines().count() == 1, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr:?} lacks {expected:?}");
        assert_eq!(state(store), before, "{args:?} changed the store");
    }
}

#[test]
fn zip_archives_are_not_edited() {
    let dir = tempfile::tempdir().unwrap();
    let zip = dir.path().join("x.zip");
    let out = zarrdb(&["mkgroup", zip.to_str().unwrap(), "/g"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("read-only"));
    assert!(!zip.exists());
}

#[test]
fn a_refused_create_leaves_no_store_behind() {
    let dir = tempfile::tempdir().unwrap();
    for (store, path) in [("data.zarrdb", "/a/../b"), ("lmdb:env", "/__reserved"), ("dir:folder", "//x")] {
        let locator = match store.split_once(':') {
            Some((scheme, name)) => format!("{scheme}:{}", dir.path().join(name).display()),
            None => dir.path().join(store).display().to_string(),
        };
        for args in [vec!["create", &locator, path, "--dtype", "int8", "--shape", "3"], vec!["mkgroup", &locator, path]]
        {
            let out = zarrdb(&args);
            assert_eq!(out.status.code(), Some(3), "{args:?}");
        }
        let bad = zarrdb(&["create", &locator, "/ok", "--dtype", "int9", "--shape", "3"]);
        assert!(String::from_utf8_lossy(&bad.stderr).contains("--dtype int9"));
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "a refused command created a store");
}

#[test]
fn zarr_v2_folders_and_directory_roots_are_not_edited() {
    let dir = tempfile::tempdir().unwrap();
    let v2 = dir.path().join("v2");
    std::fs::create_dir_all(v2.join("arr")).unwrap();
    std::fs::write(v2.join(".zgroup"), r#"{"zarr_format": 2}"#).unwrap();
    let zarray = r#"{"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<i4", "compressor": null,
        "fill_value": 0, "order": "C", "filters": null}"#;
    std::fs::write(v2.join("arr/.zarray"), zarray).unwrap();
    let locator = format!("dir:{}", v2.display());
    let listing = |p: &Path| -> Vec<String> {
        let mut names: Vec<String> = walk(p);
        names.sort();
        names
    };
    let before = listing(&v2);
    for args in
        [vec!["attrs", &locator, "/", "--set", "k=1"], vec!["mkgroup", &locator, "/g"], vec!["rm", &locator, "/arr"]]
    {
        let out = zarrdb(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(stderr.contains("holds Zarr v2") && stderr.contains("zarrdb import"), "{args:?}: {stderr}");
    }
    assert_eq!(listing(&v2), before);

    // The root of a directory store is its folder, which may hold more than Zarr.
    let v3 = dir.path().join("v3");
    let locator = format!("dir:{}", v3.display());
    ok(&["mkgroup", &locator, "/g"]);
    std::fs::write(v3.join("notes.txt"), "mine").unwrap();
    let out = zarrdb(&["rm", &locator, "/", "--recursive"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("remove the folder itself"));
    assert!(v3.join("notes.txt").exists() && v3.join("g/zarr.json").exists());
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        out.push(path.display().to_string());
        if path.is_dir() {
            out.extend(walk(&path));
        }
    }
    out
}

on_every_backend!(scenario);
