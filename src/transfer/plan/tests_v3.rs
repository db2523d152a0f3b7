//! Zarr v3 sources: documents copied as they are, chunks by grid, mixed layouts.

use serde_json::{json, Value};

use super::tests::{bytes, chunk_dst, reason, Fake};
use super::{Layout, PlanError};
use crate::error::CodecError;

fn array(shape: Value, chunks: Value, encoding: Value, codecs: Value) -> Vec<u8> {
    // Pretty-printed with odd spacing: the plan must copy it exactly, not re-serialize it.
    let mut doc = serde_json::to_vec_pretty(&json!({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "int16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": encoding, "fill_value": 0, "codecs": codecs,
        "attributes": {"units": "m"}}))
    .unwrap();
    doc.extend_from_slice(b"  \n");
    doc
}

fn plain(shape: Value, chunks: Value) -> Vec<u8> {
    array(shape, chunks, json!({"name": "default"}), json!([{"name": "bytes", "configuration": {"endian": "little"}}]))
}

fn group(attrs: Value) -> Vec<u8> {
    bytes(&json!({"zarr_format": 3, "node_type": "group", "attributes": attrs}))
}

#[test]
fn hierarchy_with_groups_nested_and_sharded_arrays_implicit_group_and_strays() {
    let root = group(json!({"title": "t"}));
    let a = group(json!({}));
    let b = plain(json!([4, 4]), json!([2, 2]));
    let sharded = array(
        json!([8, 8]),
        json!([4, 4]),
        json!({"name": "default", "configuration": {"separator": "."}}),
        json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2, 2],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "numcodecs.zlib", "configuration": {"level": 1}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]),
    );
    let v2_keys = array(
        json!([5]),
        json!([2]),
        json!({"name": "v2", "configuration": {"separator": "."}}),
        json!([{"name": "bytes", "configuration": {"endian": "big"}}]),
    );
    let scalar = plain(json!([]), json!([]));
    let fake = Fake::new(&[
        ("zarr.json", &root),
        ("a/zarr.json", &a),
        ("a/b/zarr.json", &b),
        ("a/b/c/0/0", b"chunk"),
        ("a/b/c/1/1", b"chunk"),
        ("a/b/c/2/0", b"out of grid"),
        ("a/b/c/0", b"wrong rank"),
        ("a/b/c/0/0/0", b"wrong rank"),
        ("a/b/c/01/0", b"not canonical"),
        ("a/b/.DS_Store", b""),
        ("s/zarr.json", &sharded),
        ("s/c.0.0", b"shard"),
        ("s/c.1.1", b"shard"),
        ("s/c.2.0", b"out of grid"),
        ("imp/deep/x/zarr.json", &v2_keys),
        ("imp/deep/x/0", b"chunk"),
        ("imp/deep/x/2", b"chunk"),
        ("imp/deep/x/3", b"out of grid"),
        ("imp/deep/x/c/0", b"not v2 key"),
        ("scalar/zarr.json", &scalar),
        ("scalar/c", b"chunk"),
        ("scalar/c/0", b"wrong rank"),
        (".DS_Store", b""),
        ("notes.txt", b"hello"),
        ("a/loose", b"?"),
    ]);
    let plan = fake.plan().unwrap();
    assert_eq!(plan.layout, Layout::V3);
    for (key, doc) in &plan.metadata {
        assert_eq!(doc, &fake.files[key], "{key} copied byte for byte");
    }
    assert_eq!(plan.metadata.len(), 6);
    assert_eq!(plan.implicit_groups, vec!["imp".to_owned(), "imp/deep".to_owned()]);
    let chunks: Vec<(&str, &str)> = plan.chunks.iter().map(|(s, d)| (s.as_str(), d.as_str())).collect();
    assert_eq!(
        chunks,
        vec![
            ("a/b/c/0/0", "a/b/c/0/0"),
            ("a/b/c/1/1", "a/b/c/1/1"),
            ("imp/deep/x/0", "imp/deep/x/0"),
            ("imp/deep/x/2", "imp/deep/x/2"),
            ("s/c.0.0", "s/c.0.0"),
            ("s/c.1.1", "s/c.1.1"),
            ("scalar/c", "scalar/c"),
        ]
    );
    assert!(reason(&plan, "a/b/c/2/0").contains("outside the chunk grid [2, 2]"));
    assert!(reason(&plan, "s/c.2.0").contains("outside"));
    assert!(reason(&plan, "imp/deep/x/3").contains("outside"));
    for key in ["a/b/c/0", "a/b/c/0/0/0", "a/b/c/01/0", "imp/deep/x/c/0", "scalar/c/0"] {
        assert!(reason(&plan, key).starts_with("not a chunk key of array"), "{key}");
    }
    for key in [".DS_Store", "a/b/.DS_Store"] {
        assert!(reason(&plan, key).contains("stray"), "{key}");
    }
    for key in ["notes.txt", "a/loose"] {
        assert_eq!(reason(&plan, key), "not metadata and not inside any array");
    }
}

#[test]
fn implicit_root_is_reported() {
    let plan = Fake::new(&[("x/zarr.json", &plain(json!([2]), json!([2]))), ("x/c/0", b"c")]).plan().unwrap();
    assert_eq!(plan.implicit_groups, vec![String::new()]);
    assert_eq!(chunk_dst(&plan, "x/c/0"), "x/c/0");
}

#[test]
fn node_inside_an_array_is_an_error() {
    let err = Fake::new(&[("a/zarr.json", &plain(json!([2]), json!([1]))), ("a/c/zarr.json", &group(json!({})))])
        .plan()
        .unwrap_err();
    assert!(
        matches!(&err, PlanError::NodeInsideArray { key, array } if key == "a/c/zarr.json" && array == "a/zarr.json"),
        "{err}"
    );
}

#[test]
fn bad_documents_are_typed_errors_naming_the_key() {
    let unknown_codec = array(
        json!([2]),
        json!([1]),
        json!({"name": "default"}),
        json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "lzw"}]),
    );
    let err = Fake::new(&[("zarr.json", &group(json!({}))), ("a/zarr.json", &unknown_codec)]).plan().unwrap_err();
    assert!(
        matches!(&err, PlanError::InvalidCodecs { key, source: CodecError::UnknownCodec { name } } if key == "a/zarr.json" && name == "lzw"),
        "{err}"
    );

    let mut bad_fill: Value = serde_json::from_slice(&plain(json!([2]), json!([1]))).unwrap();
    bad_fill["fill_value"] = json!(70000);
    let err = Fake::new(&[("a/zarr.json", &bytes(&bad_fill))]).plan().unwrap_err();
    assert!(
        matches!(&err, PlanError::InvalidMetadata { key, source } if key == "a/zarr.json" && source.to_string().contains("fill_value")),
        "{err}"
    );

    let err = Fake::new(&[("zarr.json", &group(json!({}))), ("b/zarr.json", b"{")]).plan().unwrap_err();
    assert!(matches!(&err, PlanError::InvalidJson { key, .. } if key == "b/zarr.json"), "{err}");

    let v2_format = bytes(&json!({"zarr_format": 2, "node_type": "group"}));
    let err = Fake::new(&[("g/zarr.json", &v2_format)]).plan().unwrap_err();
    assert!(matches!(&err, PlanError::InvalidMetadata { key, .. } if key == "g/zarr.json"), "{err}");
}

#[test]
fn v2_metadata_beside_zarr_json_is_superseded_elsewhere_mixed() {
    let zarray = br#"{"zarr_format": 2}"#;
    let fake = Fake::new(&[
        ("zarr.json", &group(json!({}))),
        (".zgroup", br#"{"zarr_format": 2}"#),
        (".zattrs", b"{}"),
        ("a/zarr.json", &plain(json!([2]), json!([1]))),
        ("a/.zarray", zarray),
        ("a/c/0", b"c"),
        ("a/0", b"old v2 chunk"),
    ]);
    let plan = fake.plan().unwrap();
    assert_eq!(reason(&plan, "a/.zarray"), "superseded by \"a/zarr.json\" in the same folder");
    assert_eq!(reason(&plan, ".zgroup"), "superseded by \"zarr.json\" in the same folder");
    assert!(reason(&plan, ".zattrs").starts_with("superseded"));
    assert!(reason(&plan, "a/0").starts_with("not a chunk key"));
    assert_eq!(chunk_dst(&plan, "a/c/0"), "a/c/0");

    let err = Fake::new(&[("zarr.json", &group(json!({}))), ("old/.zarray", zarray)]).plan().unwrap_err();
    assert!(
        matches!(&err, PlanError::MixedLayouts { first, second, .. } if first == "zarr.json" && second == "old/.zarray"),
        "{err}"
    );
}
