//! Sources in the 2020 draft of the v3 protocol.

use std::io::Write;
use std::sync::Arc;

use serde_json::{json, Value};

use super::tests::{array_at, bytes, chunk_dst, group_at, reason, Fake};
use super::{Layout, PlanError};
use crate::metadata::{ChunkKeyEncoding, DataType, Separator};
use crate::{Array, MemoryStore, Store};

const CORE: &str = "https://purl.org/zarr/spec/protocol/core/3.0";

fn entry() -> Vec<u8> {
    bytes(&json!({"zarr_format": CORE, "metadata_encoding": CORE, "metadata_key_suffix": ".json", "extensions": []}))
}

fn draft_array(members: Value) -> Vec<u8> {
    let mut doc = json!({"shape": [4, 4], "data_type": "<f4",
        "chunk_grid": {"type": "regular", "chunk_shape": [2, 2], "separator": "/"},
        "chunk_memory_layout": "C", "fill_value": "NaN", "extensions": [], "attributes": {}});
    for (k, v) in members.as_object().unwrap() {
        doc[k] = v.clone();
    }
    bytes(&doc)
}

fn gzip_codec(level: u32) -> Value {
    json!({"codec": "https://purl.org/zarr/spec/codec/gzip/1.0", "configuration": {"level": level}})
}

#[test]
fn hierarchy_with_nested_and_implicit_groups_and_both_separators() {
    let entry = entry();
    let arr = draft_array(json!({"chunk_memory_layout": "F", "compressor": gzip_codec(1), "attributes": {"a": 1}}));
    let dot = draft_array(json!({
        "data_type": ">i2", "fill_value": "0x0005",
        "chunk_grid": {"type": "regular", "chunk_shape": [2, 2], "separator": "."},
        "compressor": {"codec": "https://purl.org/zarr/spec/codec/blosc/1.0",
                       "configuration": {"cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}}}));
    let scalar = draft_array(json!({"shape": [], "data_type": "bool", "fill_value": true,
        "chunk_grid": {"type": "regular", "chunk_shape": []}}));
    let one_d = draft_array(json!({"shape": [3], "data_type": "u1", "fill_value": 0,
        "chunk_grid": {"type": "regular", "chunk_shape": [2]}, "dimension_names": ["t"],
        "compressor": {"codec": "https://purl.org/zarr/spec/codec/zlib/1.0", "configuration": {"level": 4}}}));
    let fake = Fake::new(&[
        ("zarr.json", &entry),
        ("meta/root.group.json", br#"{"attributes": {"root": 1}}"#),
        ("meta/root/g.group.json", br#"{"attributes": {"g": 2}}"#),
        ("meta/root/g/h/arr.array.json", &arr),
        ("meta/root/dot.array.json", &dot),
        ("meta/root/s.array.json", &scalar),
        ("meta/root/imp/x.array.json", &one_d),
        ("meta/root/notes.txt", b"?"),
        ("data/root/g/h/arr/c0/0", b"c"),
        ("data/root/g/h/arr/c1/1", b"c"),
        ("data/root/g/h/arr/c2/0", b"out of grid"),
        ("data/root/g/h/arr/c0.0", b"wrong separator"),
        ("data/root/dot/c0.1", b"c"),
        ("data/root/dot/c0/1", b"wrong separator"),
        ("data/root/s/c", b"c"),
        ("data/root/imp/x/c1", b"c"),
        ("data/root/.DS_Store", b""),
        ("data/root/gone/c0", b"no array"),
    ]);
    let plan = fake.plan().unwrap();
    assert_eq!(plan.layout, Layout::Draft2020);
    let keys: Vec<&str> = plan.metadata.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        vec![
            "dot/zarr.json",
            "g/h/arr/zarr.json",
            "g/h/zarr.json",
            "g/zarr.json",
            "imp/x/zarr.json",
            "imp/zarr.json",
            "s/zarr.json",
            "zarr.json"
        ]
    );
    assert!(plan.implicit_groups.is_empty(), "draft groups become explicit");
    assert_eq!(group_at(&plan, "zarr.json").attributes["root"], json!(1));
    assert_eq!(group_at(&plan, "g/zarr.json").attributes["g"], json!(2));
    assert!(group_at(&plan, "g/h/zarr.json").attributes.is_empty());
    assert!(group_at(&plan, "imp/zarr.json").attributes.is_empty());

    let a = array_at(&plan, "g/h/arr/zarr.json");
    assert_eq!(a.data_type, DataType::Float32);
    assert_eq!(a.chunk_key_encoding, ChunkKeyEncoding::Default(Separator::Slash));
    assert_eq!(a.fill_value.as_le_bytes(), 0x7fc0_0000u32.to_le_bytes());
    assert_eq!(a.attributes["a"], json!(1));
    let codecs: Vec<Value> = a.codecs.iter().map(|c| c.to_json()).collect();
    assert_eq!(
        codecs,
        vec![
            json!({"name": "transpose", "configuration": {"order": [1, 0]}}),
            json!({"name": "bytes", "configuration": {"endian": "little"}}),
            json!({"name": "gzip", "configuration": {"level": 1}}),
        ]
    );
    let d = array_at(&plan, "dot/zarr.json");
    assert_eq!(d.chunk_key_encoding, ChunkKeyEncoding::Default(Separator::Dot));
    assert_eq!(d.fill_value.as_le_bytes(), 5i16.to_le_bytes());
    assert_eq!(d.codecs[0].to_json(), json!({"name": "bytes", "configuration": {"endian": "big"}}));
    assert_eq!(d.codecs[1].to_json()["configuration"]["shuffle"], json!("shuffle"));
    let x = array_at(&plan, "imp/x/zarr.json");
    assert_eq!(x.dimension_names, Some(vec![Some("t".to_owned())]));
    assert_eq!(x.codecs[1].to_json(), json!({"name": "numcodecs.zlib", "configuration": {"level": 4}}));
    assert_eq!(array_at(&plan, "s/zarr.json").fill_value.as_le_bytes(), [1]);

    assert_eq!(chunk_dst(&plan, "data/root/g/h/arr/c0/0"), "g/h/arr/c/0/0");
    assert_eq!(chunk_dst(&plan, "data/root/g/h/arr/c1/1"), "g/h/arr/c/1/1");
    assert_eq!(chunk_dst(&plan, "data/root/dot/c0.1"), "dot/c.0.1");
    assert_eq!(chunk_dst(&plan, "data/root/s/c"), "s/c");
    assert_eq!(chunk_dst(&plan, "data/root/imp/x/c1"), "imp/x/c/1");
    assert!(reason(&plan, "data/root/g/h/arr/c2/0").contains("outside"));
    assert!(reason(&plan, "data/root/g/h/arr/c0.0").starts_with("not a chunk key"));
    assert!(reason(&plan, "data/root/dot/c0/1").starts_with("not a chunk key"));
    assert!(reason(&plan, "data/root/.DS_Store").contains("stray"));
    assert_eq!(reason(&plan, "data/root/gone/c0"), "not metadata and not inside any array");
    assert_eq!(reason(&plan, "meta/root/notes.txt"), "not a metadata document of the 2020 draft");
    for key in ["zarr.json", "meta/root.group.json", "meta/root/g/h/arr.array.json"] {
        assert_eq!(reason(&plan, key), "converted to zarr.json");
    }
}

#[test]
fn root_array_custom_suffix_and_implicit_root() {
    let custom = bytes(&json!({"zarr_format": CORE, "metadata_key_suffix": ".meta"}));
    let plan = Fake::new(&[
        ("zarr.json", &custom),
        (
            "meta/root.array.meta",
            &draft_array(json!({"shape": [4], "chunk_grid": {"type": "regular", "chunk_shape": [2]}})),
        ),
        ("data/root/c1", b"c"),
    ])
    .plan()
    .unwrap();
    assert_eq!(array_at(&plan, "zarr.json").shape, vec![4]);
    assert_eq!(chunk_dst(&plan, "data/root/c1"), "c/1");

    let plan = Fake::new(&[("zarr.json", &entry())]).plan().unwrap();
    assert_eq!(plan.metadata.len(), 1, "an empty draft hierarchy still has its root group");
    group_at(&plan, "zarr.json");
}

#[test]
fn refusals() {
    type Files = Vec<(&'static str, Vec<u8>)>;
    let cases: Vec<(Files, &str)> = vec![
        (
            vec![("meta/root/a.array.json", draft_array(json!({}))), ("meta/root/a.group.json", b"{}".to_vec())],
            "conflict",
        ),
        (
            vec![("meta/root/a.array.json", draft_array(json!({}))), ("meta/root/a/b.group.json", b"{}".to_vec())],
            "nested",
        ),
        (
            vec![(
                "meta/root/a.array.json",
                draft_array(json!({"compressor": {"codec": "https://purl.org/zarr/spec/codec/zfpy/1.0"}})),
            )],
            "compressor.codec",
        ),
        (
            vec![(
                "meta/root/a.array.json",
                draft_array(json!({"extensions": [{"extension": "x", "must_understand": true}]})),
            )],
            "extensions[0]",
        ),
        (
            vec![(
                "meta/root/a.array.json",
                draft_array(json!({"chunk_grid": {"type": "rectilinear", "chunk_shape": [2, 2]}})),
            )],
            "chunk_grid.type",
        ),
        (
            vec![(
                "meta/root/a.array.json",
                draft_array(json!({"data_type": {"extension": "u", "type": "<M8", "fallback": "<i8"}})),
            )],
            "data_type",
        ),
        (vec![("meta/root/a.array.json", draft_array(json!({"shape": [-4, 4]})))], "invalid"),
        (vec![("meta/root/a.array.json", b"[]".to_vec())], "invalid"),
        (vec![("a/zarr.json", bytes(&json!({"zarr_format": 3, "node_type": "group"})))], "mixed"),
        (vec![("a/.zarray", b"{}".to_vec())], "mixed"),
    ];
    for (extra, expected) in cases {
        let mut files: Vec<(&str, &[u8])> = vec![];
        let entry = entry();
        files.push(("zarr.json", &entry));
        files.extend(extra.iter().map(|(k, v)| (*k, v.as_slice())));
        let err = Fake::new(&files).plan().unwrap_err();
        let ok = match (&err, expected) {
            (PlanError::ConflictingNodes { path, .. }, "conflict") => path == "a",
            (PlanError::NodeInsideArray { array, .. }, "nested") => array == "meta/root/a.array.json",
            (PlanError::MixedLayouts { first, .. }, "mixed") => first == "zarr.json",
            (PlanError::InvalidMetadata { key, .. }, "invalid") => key == "meta/root/a.array.json",
            (PlanError::Unsupported { key, field, .. }, f) => key == "meta/root/a.array.json" && field == f,
            _ => false,
        };
        assert!(ok, "{expected}: {err}");
    }
    let other_format = bytes(&json!({"zarr_format": "https://purl.org/zarr/spec/protocol/core/4.0"}));
    let err = Fake::new(&[("zarr.json", &other_format)]).plan().unwrap_err();
    assert!(matches!(&err, PlanError::Unsupported { key, field, .. } if key == "zarr.json" && field == "zarr_format"));
}

#[test]
fn converted_draft_array_reads_back_its_values() {
    // A 3x2 int16 array in F layout, one 3x2 chunk, zlib through the draft's purl URI.
    let values: [[i16; 2]; 3] = [[1, 2], [3, 4], [5, 6]];
    let f_bytes: Vec<u8> = (0..2).flat_map(|j| (0..3).flat_map(move |i| values[i][j].to_le_bytes())).collect();
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(6));
    e.write_all(&f_bytes).unwrap();
    let chunk = e.finish().unwrap();
    let meta = draft_array(json!({"shape": [3, 2], "data_type": "<i2", "fill_value": 0, "chunk_memory_layout": "F",
        "chunk_grid": {"type": "regular", "chunk_shape": [3, 2], "separator": "."},
        "compressor": {"codec": "https://purl.org/zarr/spec/codec/zlib/1.0", "configuration": {"level": 6}}}));
    let fake = Fake::new(&[("zarr.json", &entry()), ("meta/root/v.array.json", &meta), ("data/root/v/c0.0", &chunk)]);
    let plan = fake.plan().unwrap();
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    for (key, doc) in &plan.metadata {
        store.set(key, doc).unwrap();
    }
    for (src, dst) in &plan.chunks {
        store.set(dst, &fake.files[src]).unwrap();
    }
    let read = Array::open(store, "/v").unwrap().read_region::<i16>(&[0, 0], &[3, 2]).unwrap();
    assert_eq!(read, vec![1, 2, 3, 4, 5, 6]);
}
