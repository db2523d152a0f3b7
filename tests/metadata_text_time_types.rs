//! The text, byte-string and time data types in `zarr.json`: what zarr-python 3.1 writes parses
//! and is written back the same, fill values read as zarr-python means them, and every
//! malformed configuration or fill value is a metadata error naming the field.

use serde_json::{json, Value};
use zarrdb::error::MetadataError;
use zarrdb::metadata::TimeUnit;
use zarrdb::{ArrayMetadata, DataType};

fn doc(data_type: Value, fill_value: Value, codecs: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill_value, "codecs": codecs, "attributes": {}
    }))
    .unwrap()
}

fn parse(data_type: Value, fill_value: Value) -> Result<ArrayMetadata, MetadataError> {
    let codecs = match data_type.as_str() {
        Some("string") => json!([{"name": "vlen-utf8", "configuration": {}}]),
        Some("variable_length_bytes") => json!([{"name": "vlen-bytes", "configuration": {}}]),
        _ => json!([{"name": "bytes", "configuration": {"endian": "little"}}]),
    };
    ArrayMetadata::from_json(&doc(data_type, fill_value, codecs))
}

#[test]
fn zarr_python_forms_parse_and_round_trip() {
    let cases = [
        (json!("string"), json!("n/a"), DataType::String, b"n/a".to_vec()),
        (json!("variable_length_bytes"), json!("AP8="), DataType::Bytes, vec![0, 0xff]),
        (
            json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}}),
            json!("\u{e9}"),
            DataType::FixedLengthUtf32 { length_bytes: 8 },
            vec![0xe9, 0, 0, 0, 0, 0, 0, 0],
        ),
        (
            json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 3}}),
            json!("YQ=="),
            DataType::NullTerminatedBytes { length_bytes: 3 },
            vec![b'a', 0, 0],
        ),
        (
            json!({"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}}),
            json!(-9223372036854775808i64),
            DataType::DateTime64 { unit: TimeUnit::Nanosecond, scale_factor: 1 },
            i64::MIN.to_le_bytes().to_vec(),
        ),
        (
            json!({"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 10}}),
            json!(7),
            DataType::TimeDelta64 { unit: TimeUnit::Second, scale_factor: 10 },
            7i64.to_le_bytes().to_vec(),
        ),
    ];
    for (data_type, fill, want_type, want_fill) in cases {
        let meta = parse(data_type.clone(), fill.clone()).unwrap_or_else(|e| panic!("{data_type}: {e}"));
        assert_eq!(meta.data_type, want_type);
        assert_eq!(meta.fill_value.as_le_bytes(), want_fill.as_slice(), "{data_type}");
        let written = meta.to_json();
        assert_eq!(written["data_type"], data_type, "written back as zarr-python writes it");
        assert_eq!(written["fill_value"], fill);
    }
    let nat =
        parse(json!({"name": "numpy.datetime64", "configuration": {"unit": "D", "scale_factor": 1}}), json!("NaT"));
    assert_eq!(nat.unwrap().fill_value.as_le_bytes(), i64::MIN.to_le_bytes());
}

#[test]
fn malformed_types_and_fill_values_name_the_field() {
    let utf32 = |config: Value| json!({"name": "fixed_length_utf32", "configuration": config});
    let time = |config: Value| json!({"name": "numpy.datetime64", "configuration": config});
    let cases = [
        (utf32(json!({"length_bytes": 6})), json!(""), "data_type.configuration.length_bytes"),
        (utf32(json!({"length_bytes": 0})), json!(""), "data_type.configuration.length_bytes"),
        (utf32(json!({"length_bytes": 4, "extra": 1})), json!(""), "data_type.configuration.extra"),
        (utf32(json!({})), json!(""), "data_type.configuration.length_bytes"),
        (utf32(json!({"length_bytes": 4})), json!("ab"), "fill_value"),
        (json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 1}}), json!("YWI="), "fill_value"),
        (json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 1}}), json!("a!"), "fill_value"),
        (time(json!({"unit": "fortnight", "scale_factor": 1})), json!(0), "data_type.configuration.unit"),
        (time(json!({"unit": "s", "scale_factor": 0})), json!(0), "data_type.configuration.scale_factor"),
        (time(json!({"unit": "s", "scale_factor": 2147483648u64})), json!(0), "data_type.configuration.scale_factor"),
        (time(json!({"unit": "s"})), json!(0), "data_type.configuration.scale_factor"),
        (time(json!({"unit": "s", "scale_factor": 1})), json!(1.5), "fill_value"),
        (time(json!({"unit": "s", "scale_factor": 1})), json!("nat"), "fill_value"),
        (json!("string"), json!(0), "fill_value"),
        (json!("variable_length_bytes"), json!([1, 2]), "fill_value"),
    ];
    for (data_type, fill, field) in cases {
        let err = parse(data_type.clone(), fill.clone()).unwrap_err();
        let named = match &err {
            MetadataError::InvalidValue { field, .. }
            | MetadataError::WrongType { field, .. }
            | MetadataError::MissingField { field }
            | MetadataError::UnknownField { field } => field.clone(),
            other => panic!("{data_type} {fill}: unexpected {other:?}"),
        };
        assert_eq!(named, field, "{data_type} {fill}: {err}");
    }
    let record = |fields: Value| json!({"name": "structured", "configuration": {"fields": fields}});
    for (fields, fill, field) in [
        (json!([]), json!(""), "data_type.configuration.fields"),
        (json!([["a", "int32"], ["a", "int8"]]), json!("AAAAAA=="), "data_type.configuration.fields"),
        (json!([["a", "string"]]), json!(""), "data_type.configuration.fields"),
        (json!([["a"]]), json!(""), "data_type.configuration.fields[0]"),
        (json!({"a": "int32"}), json!(""), "data_type.configuration.fields"),
        (json!([["a", "int32"]]), json!("AAAAAAA="), "fill_value"),
        (json!([["a", "int32"]]), json!([0, 0, 0, 0]), "fill_value"),
    ] {
        let err = parse(record(fields.clone()), fill).unwrap_err();
        let named = match &err {
            MetadataError::InvalidValue { field, .. } | MetadataError::WrongType { field, .. } => field.clone(),
            other => panic!("{fields}: unexpected {other:?}"),
        };
        assert_eq!(named, field, "{fields}: {err}");
    }
    assert!(matches!(parse(record(json!([["a", "int33"]])), json!("")), Err(MetadataError::Unsupported { .. })));
}

#[test]
fn structured_types_parse_as_zarr_python_writes_them() {
    let data_type = json!({"name": "structured", "configuration": {"fields": [
        ["id", "int32"], ["when", {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}],
        ["tag", {"name": "null_terminated_bytes", "configuration": {"length_bytes": 3}}]]}});
    let meta = parse(data_type.clone(), json!("AQAAAAIAAAAAAAAAYWJj")).unwrap();
    let DataType::Structured(record) = &meta.data_type else { panic!("{:?}", meta.data_type) };
    let offsets: Vec<(&str, usize)> = record.offsets().map(|(name, _, at)| (name, at)).collect();
    assert_eq!(offsets, vec![("id", 0), ("when", 4), ("tag", 12)]);
    assert_eq!(meta.data_type.size(), 15);
    assert_eq!(&meta.fill_value.as_le_bytes()[12..], b"abc");
    let written = meta.to_json();
    assert_eq!(written["data_type"], data_type);
    assert_eq!(written["fill_value"], json!("AQAAAAIAAAAAAAAAYWJj"));
}

#[test]
fn variable_length_types_refuse_fixed_size_codecs() {
    for codecs in [
        json!([{"name": "bytes"}]),
        json!([{"name": "transpose", "configuration": {"order": [0]}}, {"name": "vlen-utf8", "configuration": {}}]),
        json!([{"name": "vlen-bytes", "configuration": {}}]),
        json!([{"name": "vlen-utf8", "configuration": {"x": 1}}]),
    ] {
        let meta = ArrayMetadata::from_json(&doc(json!("string"), json!(""), codecs.clone())).unwrap();
        let store: std::sync::Arc<dyn zarrdb::Store> = std::sync::Arc::new(zarrdb::MemoryStore::new());
        let err = zarrdb::Array::create(store, "/a", meta).unwrap_err();
        assert!(matches!(err, zarrdb::Error::Codec { .. }), "{codecs}: {err}");
    }
}
