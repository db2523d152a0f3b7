//! `--json` on the commands that print data or a report: `tree`, `tree -l`, `check` (clean and
//! damaged), `import`, `export` and `cp`; each prints one JSON document with the documented
//! fields (docs/cli.md).

#[path = "common/cli.rs"]
mod cli;

use cli::{ok_text, zarrdb};
use serde_json::{json, Value};

fn doc(args: &[&str]) -> Value {
    serde_json::from_str(&ok_text(args)).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"))
}

/// The member names of a JSON object, sorted.
fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> =
        v.as_object().unwrap_or_else(|| panic!("not an object: {v}")).keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}

const IMPORT_FIELDS: [&str; 13] = [
    "at",
    "bytes",
    "chunks",
    "consolidated_metadata",
    "destination",
    "duplicates",
    "excluded",
    "layout",
    "nodes",
    "skipped_keys",
    "skipped_nodes",
    "source",
    "warnings",
];
const EXPORT_FIELDS: [&str; 6] = ["bytes", "consolidated", "destination", "node", "source", "values"];

#[test]
fn json_documents_carry_the_documented_fields() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("src.zarr").display().to_string();
    let store = format!("dir:{folder}");
    ok_text(&["create", &store, "/g/t", "--dtype", "uint16", "--shape", "4,4", "--chunks", "2,2", "--codec", "crc32c"]);
    let db = dir.path().join("data.zarrdb").display().to_string();

    let imported = doc(&["import", &folder, &db, "--json"]);
    assert_eq!(keys(&imported), IMPORT_FIELDS);
    assert_eq!((imported["layout"].clone(), imported["nodes"].clone()), (json!("Zarr v3"), json!(3)));
    assert_eq!(imported["at"], "/");

    let tree = doc(&["tree", &db, "--json"]);
    let paths: Vec<&str> = tree.as_array().unwrap().iter().map(|n| n["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["/", "/g", "/g/t"]);
    assert_eq!(tree[2]["shape"], json!([4, 4]));
    assert_eq!(tree[2]["codecs"], json!(["bytes", "crc32c"]));
    assert_eq!(keys(&tree[0]), ["implicit", "node_type", "path"]);
    assert_eq!(keys(&tree[2]), ["chunk_shape", "codecs", "data_type", "implicit", "node_type", "path", "shape"]);
    let long = doc(&["tree", "-l", &db, "--json"]);
    let du = doc(&["du", &db, "--json"]);
    assert_eq!(long.as_array().unwrap().len(), du.as_array().unwrap().len());
    assert_eq!(keys(&du[0]), ["logical_bytes", "node_type", "path", "ratio", "stored_bytes"]);
    assert_eq!(
        keys(&long[2]),
        [
            "chunk_shape",
            "codecs",
            "data_type",
            "implicit",
            "logical_bytes",
            "node_type",
            "path",
            "ratio",
            "shape",
            "stored_bytes"
        ]
    );
    for (node, sized) in long.as_array().unwrap().iter().zip(du.as_array().unwrap()) {
        assert_eq!(node["stored_bytes"], sized["stored_bytes"], "{node}");
        assert_eq!(node["logical_bytes"], sized["logical_bytes"], "{node}");
    }

    let checked = doc(&["check", &db, "--json"]);
    assert_eq!(checked, json!({"groups": 2, "arrays": 1, "chunks": 0, "problems": [], "notes": []}));

    let copied = doc(&["cp", &format!("{db}:/g"), &format!("{db}:/h"), "--json"]);
    assert_eq!(keys(&copied), IMPORT_FIELDS);
    assert_eq!((copied["nodes"].clone(), copied["at"].clone()), (json!(2), json!("/h")));
    let exported = doc(&["export", &db, &dir.path().join("out.zarr").display().to_string(), "--json"]);
    assert_eq!(exported["consolidated"], true);
    assert_eq!(keys(&exported), EXPORT_FIELDS);
    let zipped = doc(&["cp", &format!("{db}:/g"), &dir.path().join("g.zip").display().to_string(), "--json"]);
    assert_eq!(keys(&zipped), EXPORT_FIELDS);

    // A damaged chunk: check --json lists it and exits 1.
    std::fs::create_dir_all(dir.path().join("src.zarr/g/t/c/0")).unwrap();
    std::fs::write(dir.path().join("src.zarr/g/t/c/0/0"), [1, 2, 3]).unwrap();
    let out = zarrdb(&["check", &store, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let damaged: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(damaged["problems"].as_array().unwrap().len(), 1, "{damaged}");
    // The problem names the chunk's key.
    assert_eq!(damaged["problems"][0]["where"], "g/t/c/0/0", "{damaged}");
}
