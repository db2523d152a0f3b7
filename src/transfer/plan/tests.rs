//! Shared test helpers, layout detection, `find_root`, Zarr v1, and hostile metadata.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{json, Value};

use super::{find_root, plan, Layout, Plan, PlanError};
use crate::metadata::{ArrayMetadata, GroupMetadata, NodeMetadata};

/// An in-memory source that records which keys the plan read.
pub(super) struct Fake {
    pub files: BTreeMap<String, Vec<u8>>,
}

impl Fake {
    pub fn new(files: &[(&str, &[u8])]) -> Fake {
        Fake { files: files.iter().map(|(k, v)| (k.to_string(), v.to_vec())).collect() }
    }

    /// Plan this source; checks that no chunk was read and that every key is accounted for
    /// exactly once (metadata copied as is, chunk, or skipped).
    pub fn plan(&self) -> Result<Plan, PlanError> {
        let keys: Vec<String> = self.files.keys().cloned().collect();
        let mut read = Vec::new();
        let result = plan(&keys, &mut |key: &str| {
            read.push(key.to_owned());
            self.files.get(key).cloned().ok_or_else(|| PlanError::Read { key: key.into(), source: "missing".into() })
        });
        if let Ok(plan) = &result {
            for (src, _) in &plan.chunks {
                assert!(!read.contains(src), "chunk {src} was read");
            }
            let mut seen: Vec<&str> = plan.chunks.iter().map(|(s, _)| s.as_str()).collect();
            seen.extend(plan.skipped.iter().map(|(s, _)| s.as_str()));
            if plan.layout == Layout::V3 {
                seen.extend(plan.metadata.iter().map(|(k, _)| k.as_str()));
            }
            seen.sort_unstable();
            let all: Vec<&str> = keys.iter().map(String::as_str).collect();
            assert_eq!(seen, all, "every key is planned exactly once");
        }
        result
    }
}

pub(super) fn bytes(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap()
}

/// The planned document at `key`, parsed by the crate (which proves it round-trips).
pub(super) fn array_at(plan: &Plan, key: &str) -> ArrayMetadata {
    let (_, doc) = plan.metadata.iter().find(|(k, _)| k == key).unwrap_or_else(|| panic!("no document {key}"));
    let meta = ArrayMetadata::from_json(doc).unwrap();
    let json: Value = serde_json::from_slice(doc).unwrap();
    assert!(json.get("storage_transformers").is_none() && json.get("attributes").is_some(), "{json}");
    meta
}

pub(super) fn group_at(plan: &Plan, key: &str) -> GroupMetadata {
    let (_, doc) = plan.metadata.iter().find(|(k, _)| k == key).unwrap_or_else(|| panic!("no document {key}"));
    GroupMetadata::from_json(doc).unwrap()
}

pub(super) fn reason<'p>(plan: &'p Plan, key: &str) -> &'p str {
    plan.skipped.iter().find(|(k, _)| k == key).map(|(_, r)| r.as_str()).unwrap_or_else(|| panic!("{key} not skipped"))
}

pub(super) fn chunk_dst<'p>(plan: &'p Plan, src: &str) -> &'p str {
    plan.chunks.iter().find(|(s, _)| s == src).map(|(_, d)| d.as_str()).unwrap_or_else(|| panic!("{src} not copied"))
}

fn v1_meta(compression: Value, opts: Value) -> Value {
    json!({"zarr_format": 1, "shape": [20, 20], "chunks": [10, 10], "dtype": "<i4", "compression": compression,
           "compression_opts": opts, "fill_value": 42, "order": "C"})
}

#[test]
fn no_hierarchy() {
    let fake = Fake::new(&[("a/b", b"x"), (".DS_Store", b"")]);
    assert!(matches!(fake.plan(), Err(PlanError::NoHierarchy { keys: 2 })));
    assert!(matches!(Fake::new(&[]).plan(), Err(PlanError::NoHierarchy { keys: 0 })));
}

#[test]
fn v1_array_with_zlib() {
    let meta = bytes(&v1_meta(json!("zlib"), json!(1)));
    let fake = Fake::new(&[
        ("meta", &meta),
        ("attrs", br#"{"foo": 42}"#),
        ("0.0", b"c"),
        ("1.1", b"c"),
        ("2.0", b"c"),
        ("0.0.0", b"c"),
        ("x/.DS_Store", b""),
    ]);
    let plan = fake.plan().unwrap();
    assert_eq!(plan.layout, Layout::V1);
    let array = array_at(&plan, "zarr.json");
    assert_eq!(array.shape, vec![20, 20]);
    assert_eq!(array.fill_value.as_le_bytes(), &42i32.to_le_bytes());
    assert_eq!(array.attributes.get("foo"), Some(&json!(42)));
    let codecs: Vec<Value> = array.codecs.iter().map(|c| c.to_json()).collect();
    assert_eq!(
        codecs,
        vec![
            json!({"name": "bytes", "configuration": {"endian": "little"}}),
            json!({"name": "numcodecs.zlib", "configuration": {"level": 1}})
        ]
    );
    assert_eq!(chunk_dst(&plan, "0.0"), "0.0");
    assert_eq!(chunk_dst(&plan, "1.1"), "1.1");
    assert!(reason(&plan, "2.0").contains("outside the chunk grid"));
    assert!(reason(&plan, "0.0.0").contains("not a chunk key"));
    assert_eq!(reason(&plan, "meta"), "converted to zarr.json");
    assert!(reason(&plan, "x/.DS_Store").contains("stray"));
}

#[test]
fn v1_array_with_blosc_and_f_order() {
    let mut meta = v1_meta(json!("blosc"), json!({"cname": "lz4", "clevel": 5, "shuffle": 1}));
    meta["order"] = json!("F");
    let plan = Fake::new(&[("meta", &bytes(&meta)), ("attrs", b"{}")]).plan().unwrap();
    let array = array_at(&plan, "zarr.json");
    let codecs: Vec<Value> = array.codecs.iter().map(|c| c.to_json()).collect();
    assert_eq!(codecs[0], json!({"name": "transpose", "configuration": {"order": [1, 0]}}));
    assert_eq!(
        codecs[2],
        json!({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}})
    );
}

#[test]
fn v1_bz2_and_bad_fields_are_refused() {
    let bz2 = Fake::new(&[("meta", &bytes(&v1_meta(json!("bz2"), json!(9))))]).plan().unwrap();
    assert_eq!(
        array_at(&bz2, "zarr.json").codecs[1].to_json(),
        json!({"name": "numcodecs.bz2", "configuration": {"level": 9}})
    );
    let zfpy = Fake::new(&[("meta", &bytes(&v1_meta(json!("zfpy"), json!(null))))]).plan();
    assert!(
        matches!(&zfpy, Err(PlanError::Unsupported { key, field, .. }) if key == "meta" && field == "compression"),
        "{zfpy:?}"
    );
    let mut wrong = v1_meta(json!("none"), json!(null));
    wrong["zarr_format"] = json!(2);
    assert!(matches!(Fake::new(&[("meta", &bytes(&wrong))]).plan(), Err(PlanError::InvalidMetadata { .. })));
    let none = Fake::new(&[("meta", &bytes(&v1_meta(json!("none"), json!(null))))]).plan().unwrap();
    assert_eq!(array_at(&none, "zarr.json").codecs.len(), 1);
}

#[test]
fn find_root_strips_one_folder_only_when_unambiguous() {
    let keys = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        find_root(&keys(&["data.zarr/zarr.json", "data.zarr/a/zarr.json", "data.zarr/a/c/0"])),
        Some("data.zarr/".into())
    );
    assert_eq!(find_root(&keys(&["d/.zgroup", "d/x/.zarray", "__MACOSX/d/._x"])), Some("d/".into()));
    assert_eq!(find_root(&keys(&["d/meta", "d/attrs", "d/0.0"])), Some("d/".into()));
    assert_eq!(find_root(&keys(&["zarr.json", "a/zarr.json"])), None, "already at the root");
    assert_eq!(find_root(&keys(&["d/zarr.json", "README"])), None, "a top-level file");
    assert_eq!(find_root(&keys(&["d/zarr.json", "e/zarr.json"])), None, "two folders");
    assert_eq!(find_root(&keys(&["d/a/.zarray"])), None, "the folder holds no entry point itself");
    assert_eq!(find_root(&keys(&["d/x", "d/y"])), None, "no metadata at all");
}

#[test]
fn malformed_documents_are_typed_errors_naming_the_key() {
    let cases: Vec<(&str, &[u8])> = vec![
        (".zarray", b"{not json"),
        (".zarray", b"[1, 2]"),
        (".zarray", br#"{"zarr_format": 2}"#),
        (".zarray", br#"{"zarr_format": 2, "shape": [-1], "chunks": [1], "dtype": "<i4", "compressor": null, "fill_value": 0, "order": "C"}"#),
        (".zarray", br#"{"zarr_format": 2, "shape": [1e30], "chunks": [1], "dtype": "<i4", "compressor": null, "fill_value": 0, "order": "C"}"#),
        (".zarray", br#"{"zarr_format": 2, "shape": "4", "chunks": [1], "dtype": "<i4", "compressor": null, "fill_value": 0, "order": "C"}"#),
        (".zarray", br#"{"zarr_format": 2, "shape": [18446744073709551615, 18446744073709551615], "chunks": [18446744073709551615, 18446744073709551615], "dtype": "<i4", "compressor": null, "fill_value": 0, "order": "C"}"#),
        (".zarray", br#"{"zarr_format": 2, "shape": [4], "chunks": [0], "dtype": "<i4", "compressor": null, "fill_value": 0, "order": "C"}"#),
        (".zarray", br#"{"zarr_format": 2, "shape": [4], "chunks": [2, 2], "dtype": "<i4", "compressor": null, "fill_value": 0, "order": "C"}"#),
        (".zarray", br#"{"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i4", "compressor": 7, "fill_value": 0, "order": "C"}"#),
        (".zarray", br#"{"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i4", "compressor": null, "fill_value": 0, "order": "K"}"#),
        (".zarray", br#"{"zarr_format": 3, "shape": [4], "chunks": [2], "dtype": "<i4", "compressor": null, "fill_value": 0, "order": "C"}"#),
        (".zarray", br#"{"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i4", "compressor": {"id": "zlib", "level": 12}, "fill_value": 0, "order": "C"}"#),
        (".zarray", br#"{"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i4", "compressor": {"id": "blosc", "cname": "nope"}, "fill_value": 0, "order": "C"}"#),
        (".zgroup", b"\"group\""),
        ("meta", b"{}"),
        ("meta", b"null"),
        ("zarr.json", b"{}"),
        ("zarr.json", br#"{"zarr_format": 3, "node_type": "array"}"#),
    ];
    for (key, doc) in cases {
        let err = Fake::new(&[(key, doc)]).plan().expect_err(&String::from_utf8_lossy(doc));
        let named = match &err {
            PlanError::InvalidJson { key, .. }
            | PlanError::InvalidMetadata { key, .. }
            | PlanError::InvalidCodecs { key, .. }
            | PlanError::Unsupported { key, .. } => key,
            other => panic!("{other:?}"),
        };
        assert_eq!(named, key, "{err}");
    }
}

#[test]
fn read_errors_are_returned_as_they_are() {
    let keys = vec![".zgroup".to_owned()];
    let result = plan(&keys, &mut |key: &str| Err(PlanError::Read { key: key.into(), source: "disk on fire".into() }));
    assert!(matches!(result, Err(PlanError::Read { key, .. }) if key == ".zgroup"));
}

/// JSON-ish documents: valid JSON values built from the members the planners look for, and raw
/// bytes, under every metadata key name.
fn json_ish() -> impl Strategy<Value = Vec<u8>> {
    let leaf = prop_oneof![
        Just(json!(null)),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop::sample::select(vec!["<i4", "|V3", "F", "C", "NaN", "/", ".", "zlib", "blosc", "AQI=", "r8", "bool"])
            .prop_map(Value::from),
    ];
    let value = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop::sample::select(vec![
                        "zarr_format",
                        "shape",
                        "chunks",
                        "dtype",
                        "compressor",
                        "fill_value",
                        "order",
                        "filters",
                        "dimension_separator",
                        "id",
                        "level",
                        "compression",
                        "compression_opts",
                        "cname",
                        "shuffle",
                        "data_type",
                        "chunk_grid",
                        "chunk_shape",
                        "type",
                        "separator",
                        "chunk_memory_layout",
                    ]),
                    inner
                ),
                0..8
            )
            .prop_map(|members| Value::Object(members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    });
    prop_oneof![value.prop_map(|v| bytes(&v)), prop::collection::vec(any::<u8>(), 0..64)]
}

proptest! {
    #[test]
    fn hostile_metadata_never_panics(
        doc in json_ish(),
        key in prop::sample::select(vec![".zarray", "meta", "zarr.json", "meta/root.array.json"]),
    ) {
        let entry = bytes(&json!({"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0"}));
        let mut files: Vec<(&str, &[u8])> = vec![(key, &doc), ("0.0", b"x"), ("0", b"x"), ("data/root/c0", b"x")];
        if key == "meta/root.array.json" {
            files.push(("zarr.json", &entry));
        }
        if let Ok(plan) = Fake::new(&files).plan() {
            for (key, doc) in &plan.metadata {
                prop_assert!(NodeMetadata::from_json(doc).is_ok(), "{} does not parse", key);
            }
        }
    }
}
