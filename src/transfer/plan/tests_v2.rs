//! Zarr v2 sources: conversion of each `.zarray` member, the hierarchy, and end to end through
//! the crate's own array reader.

use std::io::Write;
use std::sync::Arc;

use serde_json::{json, Value};

use super::tests::{array_at, bytes, chunk_dst, group_at, reason, Fake};
use super::{Layout, PlanError};
use crate::metadata::{ChunkKeyEncoding, DataType, Separator};
use crate::{Array, MemoryStore, Store};

fn zarray(members: Value) -> Vec<u8> {
    let mut doc = json!({"zarr_format": 2, "shape": [3, 4], "chunks": [2, 3], "dtype": "<i2",
        "compressor": null, "fill_value": 0, "order": "C", "filters": null});
    for (k, v) in members.as_object().unwrap() {
        doc[k] = v.clone();
    }
    bytes(&doc)
}

fn codecs_of(members: Value) -> Vec<Value> {
    let plan = Fake::new(&[(".zarray", &zarray(members))]).plan().unwrap();
    array_at(&plan, "zarr.json").codecs.iter().map(|c| c.to_json()).collect()
}

fn fill_of(dtype: &str, fill: Value) -> Vec<u8> {
    let plan = Fake::new(&[(".zarray", &zarray(json!({"dtype": dtype, "fill_value": fill})))]).plan().unwrap();
    array_at(&plan, "zarr.json").fill_value.as_le_bytes().to_vec()
}

#[test]
fn order_becomes_a_reversed_transpose() {
    let bytes_le = json!({"name": "bytes", "configuration": {"endian": "little"}});
    assert_eq!(codecs_of(json!({"order": "C"})), vec![bytes_le.clone()]);
    assert_eq!(
        codecs_of(json!({"order": "F"})),
        vec![json!({"name": "transpose", "configuration": {"order": [1, 0]}}), bytes_le.clone()]
    );
    assert_eq!(
        codecs_of(json!({"order": "F", "shape": [2, 3, 4], "chunks": [1, 2, 3]}))[0],
        json!({"name": "transpose", "configuration": {"order": [2, 1, 0]}})
    );
    assert_eq!(codecs_of(json!({"order": "F", "shape": [5], "chunks": [2]})), vec![bytes_le], "rank 1: no transpose");
}

#[test]
fn each_compressor() {
    let cases = [
        (json!({"id": "zlib", "level": 3}), json!({"name": "numcodecs.zlib", "configuration": {"level": 3}})),
        (json!({"id": "gzip", "level": 5}), json!({"name": "gzip", "configuration": {"level": 5}})),
        (json!({"id": "zlib", "level": -1}), json!({"name": "numcodecs.zlib", "configuration": {"level": 6}})),
        (json!({"id": "zstd", "level": 7}), json!({"name": "zstd", "configuration": {"level": 7}})),
        (json!({"id": "zstd", "level": 1, "checksum": false}), json!({"name": "zstd", "configuration": {"level": 1}})),
        (
            json!({"id": "zstd", "level": 1, "checksum": true}),
            json!({"name": "zstd", "configuration": {"level": 1, "checksum": true}}),
        ),
        (
            json!({"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0}),
            json!({"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle", "typesize": 2, "blocksize": 0}}),
        ),
        (
            json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 0, "blocksize": 256}),
            json!({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "noshuffle", "typesize": 2, "blocksize": 256}}),
        ),
        (
            json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0}),
            json!({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}),
        ),
    ];
    for (compressor, codec) in cases {
        let codecs = codecs_of(json!({"compressor": compressor}));
        assert_eq!(codecs.len(), 2);
        assert_eq!(codecs[1], codec, "{compressor}");
    }
    // Automatic shuffle picks bitshuffle for one-byte types; the bytes codec has no endian then.
    let codecs =
        codecs_of(json!({"dtype": "|u1", "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1}}));
    assert_eq!(codecs[0], json!({"name": "bytes"}));
    assert_eq!(codecs[1]["configuration"]["shuffle"], json!("bitshuffle"));
    assert_eq!(codecs[1]["configuration"]["typesize"], json!(1));
}

#[test]
fn unsupported_compressors_dtypes_and_filters_name_the_array() {
    let key = "grp/arr/.zarray";
    let refused = [
        (json!({"compressor": {"id": "zfpy", "mode": 4}}), "compressor.id"),
        (json!({"compressor": {"id": "bz2", "level": 1, "x": 0}}), "compressor.x"),
        (json!({"compressor": {"id": "lz4", "acceleration": 1, "x": 0}}), "compressor.x"),
        (json!({"compressor": {"id": "lzma", "x": 0}}), "compressor.x"),
        (json!({"compressor": {"id": "zlib", "level": 1, "wbits": 9}}), "compressor.wbits"),
        (json!({"dtype": "|O", "filters": [{"id": "pickle"}]}), "filters"),
        (json!({"dtype": "|O", "filters": [{"id": "vlen-utf8"}], "order": "F"}), "order"),
        (json!({"dtype": "|O", "filters": [{"id": "vlen-utf8"}, {"id": "vlen-utf8"}]}), "filters[0].id"),
        (json!({"filters": [{"id": "vlen-utf8"}]}), "filters[0].id"),
        (json!({"filters": [{"id": "categorize", "labels": ["a"], "dtype": "<U1"}]}), "filters[0].id"),
        (json!({"filters": [{"id": "shuffle"}, {"id": "delta", "dtype": "<i4"}]}), "filters[1].id"),
        (json!({"filters": [{"id": "delta", "dtype": ">i4"}]}), "filters[0].dtype"),
        (json!({"filters": [{"id": "nosuchfilter"}]}), "filters[0].id"),
        (json!({"dtype": "|O"}), "dtype"),
        (json!({"dtype": [["x", ">i2"], ["y", "<f4"]]}), "dtype"),
    ];
    for (members, field) in refused {
        let err =
            Fake::new(&[(".zgroup", b"{\"zarr_format\": 2}"), (key, &zarray(members.clone()))]).plan().unwrap_err();
        match &err {
            PlanError::Unsupported { key: k, field: f, .. } => {
                assert_eq!((k.as_str(), f.as_str()), (key, field), "{members}")
            }
            other => panic!("{members}: {other}"),
        }
    }
}

#[test]
fn fill_values() {
    assert_eq!(fill_of("<f4", json!("NaN")), 0x7fc0_0000u32.to_le_bytes());
    assert_eq!(fill_of("<f8", json!("Infinity")), f64::INFINITY.to_le_bytes());
    assert_eq!(fill_of(">f8", json!("-Infinity")), f64::NEG_INFINITY.to_le_bytes());
    assert_eq!(fill_of("<f4", json!(null)), [0; 4], "null reads as zero");
    assert_eq!(fill_of("<i8", json!(null)), [0; 8]);
    assert_eq!(fill_of("<f2", json!(1.5)), half::f16::from_f32(1.5).to_le_bytes());
    assert_eq!(fill_of("|b1", json!(true)), [1]);
    assert_eq!(fill_of("<c8", json!([1.0, "NaN"])), [1.0f32.to_le_bytes(), 0x7fc0_0000u32.to_le_bytes()].concat());
    assert_eq!(fill_of("|V3", json!("AQID")), [1, 2, 3]);
    assert_eq!(fill_of("|V3", json!(null)), [0, 0, 0]);
}

#[test]
fn big_endian_raw_and_zero_dimensional_arrays() {
    let plan = Fake::new(&[
        ("be/.zarray", &zarray(json!({"dtype": ">u4", "fill_value": 7}))),
        ("raw/.zarray", &zarray(json!({"dtype": "|V6", "fill_value": "AAECAwQF"}))),
        ("scalar/.zarray", &zarray(json!({"shape": [], "chunks": [], "dtype": "<f8", "fill_value": "NaN"}))),
        ("scalar/0", b"c"),
        ("scalar/0.0", b"?"),
    ])
    .plan()
    .unwrap();
    let be = array_at(&plan, "be/zarr.json");
    assert_eq!(be.data_type, DataType::UInt32);
    assert_eq!(be.codecs[0].to_json(), json!({"name": "bytes", "configuration": {"endian": "big"}}));
    assert_eq!(be.fill_value.as_le_bytes(), 7u32.to_le_bytes());
    let raw = array_at(&plan, "raw/zarr.json");
    assert_eq!(raw.data_type, DataType::Raw { bits: 48 });
    assert_eq!(raw.codecs[0].to_json(), json!({"name": "bytes"}));
    assert_eq!(raw.fill_value.as_le_bytes(), [0, 1, 2, 3, 4, 5]);
    let scalar = array_at(&plan, "scalar/zarr.json");
    assert!(scalar.shape.is_empty());
    assert_eq!(chunk_dst(&plan, "scalar/0"), "scalar/0");
    assert!(reason(&plan, "scalar/0.0").starts_with("not a chunk key"));
    let root = group_at(&plan, "zarr.json");
    assert!(root.attributes.is_empty(), "the root folder becomes an explicit group");
}

#[test]
fn hierarchy_separators_attributes_and_skips() {
    let fake = Fake::new(&[
        (".zgroup", br#"{"zarr_format": 2}"#),
        (".zattrs", br#"{"title": "root"}"#),
        (".zmetadata", b"{}"),
        ("g/h/.zgroup", br#"{"zarr_format": 2}"#),
        ("g/h/.zattrs", br#"{"n": 1}"#),
        ("g/.zattrs", br#"{"implied": true}"#),
        ("g/h/dot/.zarray", &zarray(json!({}))),
        ("g/h/dot/.zattrs", br#"{"_ARRAY_DIMENSIONS": ["y", "x"]}"#),
        ("g/h/dot/0.0", b"c"),
        ("g/h/dot/1.1", b"c"),
        ("g/h/dot/0/0", b"?"),
        ("g/h/dot/2.0", b"?"),
        ("slash/.zarray", &zarray(json!({"dimension_separator": "/"}))),
        ("slash/0/0", b"c"),
        ("slash/1/1", b"c"),
        ("slash/0.0", b"?"),
        ("lost/.zattrs", b"{}"),
        ("g/h/.DS_Store", b""),
    ]);
    let plan = fake.plan().unwrap();
    assert_eq!(plan.layout, Layout::V2);
    let keys: Vec<&str> = plan.metadata.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, vec!["g/h/dot/zarr.json", "g/h/zarr.json", "g/zarr.json", "slash/zarr.json", "zarr.json"]);
    assert_eq!(group_at(&plan, "zarr.json").attributes["title"], json!("root"));
    assert_eq!(group_at(&plan, "g/zarr.json").attributes["implied"], json!(true));
    assert_eq!(group_at(&plan, "g/h/zarr.json").attributes["n"], json!(1));
    let dot = array_at(&plan, "g/h/dot/zarr.json");
    assert_eq!(dot.chunk_key_encoding, ChunkKeyEncoding::V2(Separator::Dot));
    assert_eq!(dot.dimension_names, Some(vec![Some("y".into()), Some("x".into())]));
    // _ARRAY_DIMENSIONS became dimension_names; the fill value 0, xarray's missing-value marker in
    // v2, became the attribute xarray reads it from in v3.
    assert_eq!(dot.attributes, json!({"_FillValue": 0}).as_object().unwrap().clone());
    assert_eq!(array_at(&plan, "slash/zarr.json").chunk_key_encoding, ChunkKeyEncoding::V2(Separator::Slash));
    for key in ["g/h/dot/0.0", "g/h/dot/1.1", "slash/0/0", "slash/1/1"] {
        assert_eq!(chunk_dst(&plan, key), key);
    }
    assert!(reason(&plan, "g/h/dot/0/0").starts_with("not a chunk key"));
    assert!(reason(&plan, "g/h/dot/2.0").contains("outside"));
    assert!(reason(&plan, "slash/0.0").starts_with("not a chunk key"));
    for key in [".zgroup", ".zattrs", "g/.zattrs", "g/h/dot/.zarray", "g/h/dot/.zattrs"] {
        assert_eq!(reason(&plan, key), "converted to zarr.json");
    }
    assert!(reason(&plan, ".zmetadata").contains("consolidated"));
    assert!(reason(&plan, "lost/.zattrs").contains("no Zarr v2 node"));
    assert!(reason(&plan, "g/h/.DS_Store").contains("stray"));
}

#[test]
fn conflicting_and_nested_nodes_are_errors() {
    let err = Fake::new(&[("a/.zarray", &zarray(json!({}))), ("a/.zgroup", b"{}")]).plan().unwrap_err();
    assert!(matches!(&err, PlanError::ConflictingNodes { path, .. } if path == "a"), "{err}");
    let err = Fake::new(&[("a/.zarray", &zarray(json!({}))), ("a/b/.zarray", &zarray(json!({})))]).plan().unwrap_err();
    assert!(matches!(&err, PlanError::NodeInsideArray { key, array } if key == "a/b/.zarray" && array == "a/.zarray"));
    let err = Fake::new(&[("a/.zarray", &zarray(json!({}))), (".zattrs", b"[]")]).plan().unwrap_err();
    assert!(matches!(&err, PlanError::InvalidMetadata { key, .. } if key == ".zattrs"), "{err}");
}

/// The stored bytes of chunk `chunk` of a 2-d or 3-d int16 array whose element at `(i, j, ...)`
/// is `value(coords)`, in v2 layout: the full chunk in C or F order, elements past the array's
/// edge set to -1 (whatever they hold must not be read).
fn v2_chunk(shape: &[u64], chunks: &[u64], chunk: &[u64], f_order: bool, big: bool) -> Vec<u8> {
    let n: u64 = chunks.iter().product();
    let mut out = Vec::new();
    for linear in 0..n {
        // Decompose `linear` with the fastest dimension last (C) or first (F).
        let mut rest = linear;
        let mut local = vec![0; chunks.len()];
        let dims: Vec<usize> = if f_order { (0..chunks.len()).collect() } else { (0..chunks.len()).rev().collect() };
        for d in dims {
            local[d] = rest % chunks[d];
            rest /= chunks[d];
        }
        let global: Vec<u64> = local.iter().zip(chunk).zip(chunks).map(|((l, c), n)| c * n + l).collect();
        let v = if global.iter().zip(shape).all(|(g, s)| g < s) { value(&global) } else { -1 };
        out.extend_from_slice(&if big { v.to_be_bytes() } else { v.to_le_bytes() });
    }
    out
}

fn value(coords: &[u64]) -> i16 {
    coords.iter().fold(0i16, |acc, &c| acc * 10 + c as i16)
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(1));
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(1));
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn converted_arrays_read_back_their_values() {
    let f_meta = zarray(json!({"order": "F", "compressor": {"id": "zlib", "level": 1}}));
    let c_meta = zarray(json!({"dtype": ">i2", "dimension_separator": "/", "compressor": {"id": "gzip", "level": 1}}));
    let f3_meta = zarray(json!({"order": "F", "shape": [2, 3, 4], "chunks": [2, 2, 3], "fill_value": 5}));
    let mut files: Vec<(String, Vec<u8>)> =
        vec![("f/.zarray".into(), f_meta), ("c/.zarray".into(), c_meta), ("f3/.zarray".into(), f3_meta)];
    for (i, j) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
        let f = v2_chunk(&[3, 4], &[2, 3], &[i, j], true, false);
        files.push((format!("f/{i}.{j}"), zlib(&f)));
        let c = v2_chunk(&[3, 4], &[2, 3], &[i, j], false, true);
        files.push((format!("c/{i}/{j}"), gzip(&c)));
    }
    // f3 chunk (0, 1, 0) is absent: it must read as the fill value.
    for (j, k) in [(0, 0), (0, 1)] {
        files.push((format!("f3/0.{j}.{k}"), v2_chunk(&[2, 3, 4], &[2, 2, 3], &[0, j, k], true, false)));
    }
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(k, v)| (k.as_str(), v.as_slice())).collect();
    let fake = Fake::new(&refs);
    let plan = fake.plan().unwrap();
    assert_eq!(plan.chunks.len(), 10);

    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    for (key, doc) in &plan.metadata {
        store.set(key, doc).unwrap();
    }
    for (src, dst) in &plan.chunks {
        store.set(dst, &fake.files[src]).unwrap();
    }
    let expected: Vec<i16> = (0..3).flat_map(|i| (0..4).map(move |j| value(&[i, j]))).collect();
    for path in ["/f", "/c"] {
        let array = Array::open(store.clone(), path).unwrap();
        assert_eq!(array.read_region::<i16>(&[0, 0], &[3, 4]).unwrap(), expected, "{path}");
    }
    let f3 = Array::open(store, "/f3").unwrap().read_region::<i16>(&[0, 0, 0], &[2, 3, 4]).unwrap();
    let expected3: Vec<i16> = (0..2)
        .flat_map(|i| (0..3).flat_map(move |j| (0..4).map(move |k| if j >= 2 { 5 } else { value(&[i, j, k]) })))
        .collect();
    assert_eq!(f3, expected3);
}

#[test]
fn filters_become_codecs_around_bytes() {
    let fso = json!({"offset": 1, "scale": 10, "dtype": ">f8", "astype": "<i2"});
    let mut filter = fso.clone();
    filter["id"] = json!("fixedscaleoffset");
    let codecs = codecs_of(json!({"order": "F", "dtype": ">f8", "fill_value": 0.0,
        "filters": [filter, {"id": "shuffle", "elementsize": 2}], "compressor": {"id": "lz4"}}));
    assert_eq!(
        codecs,
        vec![
            json!({"name": "transpose", "configuration": {"order": [1, 0]}}),
            json!({"name": "numcodecs.fixedscaleoffset", "configuration": fso}),
            // The filter's output is little-endian int16, whatever the array's byte order.
            json!({"name": "bytes", "configuration": {"endian": "little"}}),
            json!({"name": "numcodecs.shuffle", "configuration": {"elementsize": 2}}),
            json!({"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}),
        ]
    );
    let packed = codecs_of(json!({"dtype": "|b1", "fill_value": false, "filters": [{"id": "packbits"}]}));
    assert_eq!(packed[0], json!({"name": "numcodecs.packbits", "configuration": {}}));
    assert_eq!(packed[1], json!({"name": "bytes"}));
    // A configuration the codec refuses is an error of the converted chain, naming the field.
    let err = Fake::new(&[(".zarray", &zarray(json!({"filters": [{"id": "delta", "dtype": "<i4"}]})))]).plan();
    assert!(matches!(err, Err(PlanError::InvalidCodecs { .. })), "{err:?}");
}

#[test]
fn array_dimensions_become_dimension_names() {
    let attrs = |dims: Value| bytes(&json!({"_ARRAY_DIMENSIONS": dims, "units": "m"}));
    let good = attrs(json!(["y", "x"]));
    let plan = Fake::new(&[(".zarray", &zarray(json!({}))), (".zattrs", &good)]).plan().unwrap();
    let meta = array_at(&plan, "zarr.json");
    assert_eq!(meta.dimension_names, Some(vec![Some("y".into()), Some("x".into())]));
    assert_eq!(meta.attributes, json!({"units": "m", "_FillValue": 0}).as_object().unwrap().clone());
    assert!(plan.warnings.is_empty());

    // Not one string per dimension: kept as it is, no names, and the plan says why.
    for dims in [json!(["x"]), json!(["y", 1]), json!("yx"), json!(["y", null])] {
        let bad = attrs(dims.clone());
        let plan = Fake::new(&[(".zarray", &zarray(json!({}))), (".zattrs", &bad)]).plan().unwrap();
        let meta = array_at(&plan, "zarr.json");
        assert_eq!(meta.dimension_names, None, "{dims}");
        assert_eq!(meta.attributes["_ARRAY_DIMENSIONS"], dims);
        assert_eq!(plan.warnings.len(), 1, "{dims}");
        assert_eq!(plan.warnings[0].0, ".zattrs");
        assert!(plan.warnings[0].1.contains("_ARRAY_DIMENSIONS"), "{:?}", plan.warnings);
    }
}
