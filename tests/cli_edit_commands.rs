//! The editing commands on a redb file, an LMDB folder and a directory store: create, mkgroup,
//! attrs, write, append, resize, mv, rm, each checked by what `tree`, `attrs` and `cat --npy`
//! show afterwards (the `.npy` output read back with the library's reader).

#[macro_use]
#[path = "common/cli.rs"]
#[expect(dead_code, reason = "this file's `ok` also insists on an empty stderr")]
mod cli;

use std::path::Path;

use cli::zarrdb;
use serde_json::{json, Value};
use zarrdb::transfer::NpyHeader;
use zarrdb::DataType;

fn ok(args: &[&str]) -> Vec<u8> {
    let out = zarrdb(args);
    assert!(out.status.success(), "zarrdb {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "zarrdb {args:?} wrote to stderr: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// A `.npy` file of `values` (f64) with `shape`.
fn npy(dir: &Path, name: &str, shape: &[u64], values: &[f64]) -> String {
    let mut bytes = NpyHeader::new(&DataType::Float64, shape, "test").unwrap().to_bytes();
    bytes.extend(values.iter().flat_map(|v| v.to_le_bytes()));
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_owned()
}

/// `cat --npy` of an array: its shape and values.
fn cat(store: &str, array: &str) -> (Vec<u64>, Vec<f64>) {
    let bytes = ok(&["cat", store, array, "--npy"]);
    let (header, data) = NpyHeader::read_file(&mut bytes.as_slice(), "cat output").unwrap();
    assert_eq!(header.data_type(), &DataType::Float64);
    (header.shape().to_vec(), data.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect())
}

fn scenario(store: &str, dir: &Path) {
    ok(&["create", store, "/climate/t", "--dtype", "float64", "--shape", "2,3", "--chunks", "1,2"]);
    ok(&["mkgroup", store, "/runs", "--attrs", r#"{"operator": "ana"}"#]);
    let tree = String::from_utf8(ok(&["tree", store])).unwrap();
    assert!(
        tree.contains("climate") && tree.contains("t  float64 [2, 3] chunks [1, 2]") && tree.contains("runs"),
        "{tree}"
    );

    // Attributes: set (JSON and bare text), delete, print.
    ok(&["attrs", store, "/climate/t", "--set", "units=K", "--set", "range=[0, 400]", "--set", "drop=1"]);
    ok(&["attrs", store, "/climate/t", "--delete", "drop"]);
    let attrs: Value = serde_json::from_slice(&ok(&["attrs", store, "/climate/t"])).unwrap();
    assert_eq!(attrs, json!({"units": "K", "range": [0, 400]}));
    let group: Value = serde_json::from_slice(&ok(&["attrs", store, "/runs"])).unwrap();
    assert_eq!(group, json!({"operator": "ana"}));

    // Write the whole array, then one row (the file without the indexed dimension).
    ok(&["write", store, "/climate/t", &npy(dir, "all.npy", &[2, 3], &[1., 2., 3., 4., 5., 6.])]);
    ok(&["write", store, "/climate/t", &npy(dir, "row.npy", &[3], &[7., 8., 9.]), "--region", "1,:"]);
    assert_eq!(cat(store, "/climate/t"), (vec![2, 3], vec![1., 2., 3., 7., 8., 9.]));

    // Append two rows along axis 0, a column along axis 1, then shrink.
    ok(&["append", store, "/climate/t", &npy(dir, "rows.npy", &[2, 3], &[10., 11., 12., 13., 14., 15.])]);
    assert_eq!(cat(store, "/climate/t").0, [4, 3]);
    ok(&["append", store, "/climate/t", &npy(dir, "col.npy", &[4], &[-1., -2., -3., -4.]), "--axis", "1"]);
    let (shape, values) = cat(store, "/climate/t");
    assert_eq!(shape, [4, 4]);
    assert_eq!(values[..8], [1., 2., 3., -1., 7., 8., 9., -2.]);
    ok(&["resize", store, "/climate/t", "--shape", "1,2"]);
    assert_eq!(cat(store, "/climate/t"), (vec![1, 2], vec![1., 2.]));
    ok(&["resize", store, "/climate/t", "--shape", "2,2"]);
    assert_eq!(cat(store, "/climate/t").1, [1., 2., 0., 0.], "the regrown part reads as the fill value");

    // Move, then remove (a group needs --recursive).
    ok(&["mv", store, "/climate/t", "/runs/t"]);
    assert_eq!(cat(store, "/runs/t").1, [1., 2., 0., 0.]);
    ok(&["rm", store, "/runs", "--recursive"]);
    let tree = String::from_utf8(ok(&["tree", store])).unwrap();
    assert!(!tree.contains("runs"), "{tree}");
}

on_every_backend!(scenario);
