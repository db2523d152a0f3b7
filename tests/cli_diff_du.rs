//! `zarrdb diff` and `zarrdb du` / `tree -l` on redb, LMDB and a directory store: diff exits 0
//! for equal hierarchies (a database and its export) and 1 listing each kind of difference
//! (one side only, node kind, metadata, attributes, values with the first differing element);
//! du's figures add up to what `info` reports per array, groups counting their subtree.

#[macro_use]
#[path = "common/cli.rs"]
mod cli;

use cli::{ok_text as ok, zarrdb};
use serde_json::{json, Value};

fn npy_i32(dir: &std::path::Path, name: &str, values: &[i32]) -> String {
    let header = zarrdb::transfer::NpyHeader::new(&zarrdb::DataType::Int32, &[values.len() as u64], "t").unwrap();
    let mut bytes = header.to_bytes();
    bytes.extend(values.iter().flat_map(|v| v.to_le_bytes()));
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

fn scenario(store: &str, dir: &std::path::Path) {
    ok(&["create", store, "/g/a", "--dtype", "int32", "--shape", "6", "--chunks", "2", "--codec", "zstd"]);
    ok(&["create", store, "/g/b", "--dtype", "float32", "--shape", "3", "--attrs", r#"{"units": "K"}"#]);
    ok(&["write", store, "/g/a", &npy_i32(dir, "a.npy", &[1, 2, 3, 4, 5, 6])]);
    // The copy is a store of the same kind: `cp` into a folder, an LMDB folder or a redb file.
    let copy = format!("{store}.copy");
    ok(&["cp", &format!("{store}:/g"), &format!("{copy}:/g")]);
    // Equal: exit 0, nothing printed; also against an export of it.
    assert_eq!(ok(&["diff", store, &copy]), "");
    let equal: Value = serde_json::from_str(&ok(&["diff", store, &copy, "--json"])).unwrap();
    assert_eq!(equal, json!({"equal": true, "differences": []}));

    ok(&["write", &copy, "/g/a", &npy_i32(dir, "a2.npy", &[1, 2, 3, 40, 5, 60])]);
    ok(&["attrs", &copy, "/g/b", "--set", "units=C"]);
    ok(&["create", &copy, "/g/only_b", "--dtype", "int8", "--shape", "1"]);
    ok(&["resize", &copy, "/g/b", "--shape", "4"]);
    let out = zarrdb(&["diff", store, &copy, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["equal"], false);
    let kinds: Vec<(String, String)> = doc["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["path"].as_str().unwrap().to_owned(), d["kind"].as_str().unwrap().to_owned()))
        .collect();
    let expected = [("/g/a", "values"), ("/g/b", "attributes"), ("/g/b", "metadata"), ("/g/only_b", "only_in_b")];
    assert_eq!(kinds, expected.map(|(p, k)| (p.to_owned(), k.to_owned())));
    let values = &doc["differences"][0]["detail"];
    assert_eq!(values, &json!({"differing_elements": 2, "elements": 6, "first": [3], "a": 4, "b": 40}));
    let text = String::from_utf8(zarrdb(&["diff", store, &copy]).stdout).unwrap();
    assert!(text.contains("/g/a: 2 of 6 elements differ, first at [3]: 4 != 40"), "{text}");
    assert!(text.contains("/g/b: attribute units: \"K\" != \"C\""), "{text}");
    assert!(text.contains("/g/only_b: only in B"), "{text}");
    // Node kinds, and one node against another of the same store.
    ok(&["mkgroup", &copy, "/h/a"]);
    let kinds = String::from_utf8(zarrdb(&["diff", &format!("{store}:/g"), &format!("{copy}:/h")]).stdout).unwrap();
    assert!(kinds.contains("/a: array in A, group in B"), "{kinds}");
    assert_eq!(zarrdb(&["diff", &format!("{store}:/g/a"), &format!("{store}:/g/a")]).status.code(), Some(0));
    // A missing node is an error (3), not a difference (1).
    assert_eq!(zarrdb(&["diff", &format!("{store}:/missing"), store]).status.code(), Some(3));

    // du: every array's stored bytes are what info reports; a group adds up its subtree.
    let du: Value = serde_json::from_str(&ok(&["du", store, "--json"])).unwrap();
    let rows = du.as_array().unwrap();
    let stored = |path: &str| rows.iter().find(|r| r["path"] == path).unwrap()["stored_bytes"].as_u64().unwrap();
    for array in ["/g/a", "/g/b"] {
        let info: Value = serde_json::from_str(&ok(&["info", store, array, "--json"])).unwrap();
        assert_eq!(stored(array), info["nbytes_stored"].as_u64().unwrap(), "{array}");
        let logical = rows.iter().find(|r| r["path"] == array).unwrap()["logical_bytes"].clone();
        assert_eq!(logical, info["nbytes"], "{array}");
    }
    let info_g: Value = serde_json::from_str(&ok(&["info", store, "/g", "--json"])).unwrap();
    assert_eq!(info_g["children"], json!(["a", "b"]));
    let doc_bytes = stored("/g") - stored("/g/a") - stored("/g/b");
    assert!(doc_bytes > 0 && doc_bytes < 200, "a group counts its own document ({doc_bytes} bytes) and its subtree");
    assert!(stored("/") >= stored("/g"));

    // Metadata on one side only (dimension names, present in B alone) is a difference too.
    ok(&["create", store, "/named", "--dtype", "int8", "--shape", "2"]);
    ok(&["create", &copy, "/named", "--dtype", "int8", "--shape", "2", "--dims", "x"]);
    let out = zarrdb(&["diff", &format!("{store}:/named"), &format!("{copy}:/named")]);
    assert_eq!(out.status.code(), Some(1));
    let one_side = String::from_utf8(out.stdout).unwrap();
    assert!(one_side.contains("/: dimension_names null != [\"x\"]"), "{one_side}");
    let tree = ok(&["tree", "-l", store]);
    assert!(tree.lines().any(|l| l.contains("a  int32 [6]") && l.contains("stored of 24 B")), "{tree}");
}

#[test]
fn a_database_and_its_export_do_not_differ() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data.zarrdb").display().to_string();
    ok(&["create", &db, "/t", "--dtype", "float64", "--shape", "100,100", "--chunks", "10,10", "--codec", "zstd"]);
    ok(&["attrs", &db, "/", "--set", "title=x"]);
    let exported = dir.path().join("out.zarr").display().to_string();
    ok(&["export", &db, &exported]);
    // The export's root carries consolidated metadata, which diff does not count as a difference.
    assert_eq!(ok(&["diff", &db, &exported]), "");
}

on_every_backend!(scenario);
