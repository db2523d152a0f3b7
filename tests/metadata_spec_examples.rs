//! The JSON examples of the Zarr v3.0 core spec (copied verbatim into
//! tests/fixtures/metadata/spec_examples/) must round-trip through the metadata layer: parse,
//! serialise, parse again, same metadata and same JSON. They are the documents every other
//! implementation was checked against, so disagreeing with them is disagreeing with the ecosystem.
//!
//! Two examples (the datetime array, the group) end objects with a trailing comma, which RFC 8259 -
//! the JSON the spec says it uses - forbids. Verbatim they must fail as a typed JSON error (not a
//! panic, not a silent "lenient" success); with the commas removed they are tested like the others.

use serde_json::{json, Map, Value};
use zarrdb::error::MetadataError;
use zarrdb::metadata::NodeMetadata;
use zarrdb::{ArrayMetadata, DataType, FillValue};

fn example(name: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/metadata/spec_examples/");
    std::fs::read_to_string(format!("{path}{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Drop every `,` followed only by whitespace and then `}` or `]`. Naive about string contents,
/// which is fine for the spec's examples (no string in them contains `,}` or `,]`).
fn strip_trailing_commas(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
        if c == ',' && matches!(next, Some('}' | ']')) {
            continue;
        }
        out.push(c);
    }
    out
}

/// Numbers compared as f64 (the spec's `1` and a writer's `1.0` are the same JSON number), object
/// members compared regardless of order.
fn normalise(value: &Value) -> Value {
    match value {
        Value::Number(n) => json!(n.as_f64().expect("finite number")),
        Value::Array(items) => Value::Array(items.iter().map(normalise).collect()),
        Value::Object(obj) => {
            let mut sorted: Vec<_> = obj.iter().collect();
            sorted.sort_by_key(|(k, _)| k.as_str());
            Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), normalise(v))).collect::<Map<_, _>>())
        }
        other => other.clone(),
    }
}

/// The verbatim text fails as a JSON syntax error iff the spec wrote trailing commas into it (which
/// examples do is asserted, so a broken helper cannot skip the check); the repaired text is returned.
fn repaired(name: &str) -> String {
    let verbatim = example(name);
    let fixed = strip_trailing_commas(&verbatim);
    let has_trailing_comma = name.starts_with("02_") || name.starts_with("03_");
    assert_eq!(fixed != verbatim, has_trailing_comma, "{name}: trailing commas where the spec has none, or vice versa");
    if has_trailing_comma {
        match NodeMetadata::from_json(verbatim.as_bytes()) {
            Err(MetadataError::Json { .. }) => {}
            other => panic!("{name}: verbatim text has a trailing comma, expected a JSON syntax error, got {other:?}"),
        }
    }
    fixed
}

/// Parse, serialise, parse: the same metadata, and JSON equal to the example's.
fn round_trip(name: &str) -> NodeMetadata {
    let text = repaired(name);
    let first = NodeMetadata::from_json(text.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let written = first.to_json();
    let second =
        NodeMetadata::from_json(&serde_json::to_vec(&written).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(second, first, "{name}: metadata changes when written and read back");
    let original: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(normalise(&written), normalise(&original), "{name}: written JSON differs from the spec's");
    first
}

#[test]
fn array_float64_gzip_round_trips_with_everything_in_it() {
    let NodeMetadata::Array(meta) = round_trip("01_array_float64_gzip.json") else { panic!("not an array") };
    // Spot checks on top of the JSON comparison, for the members most easily lost or mangled.
    assert_eq!(meta.codecs.len(), 1);
    assert_eq!(meta.codecs[0].name, "gzip");
    assert_eq!(meta.codecs[0].configuration.as_ref().unwrap()["level"], json!(1));
    assert_eq!(Value::Object(meta.attributes.clone()), json!({"foo": 42, "bar": "apples", "baz": [1, 2, 3, 4]}));
    assert_eq!(meta.dimension_names, Some(vec![Some("rows".to_owned()), Some("columns".to_owned())]));
    // "NaN" is the spec's one NaN (quiet, positive, no payload) and must be written back as "NaN".
    assert_eq!(meta.fill_value.as_le_bytes(), &0x7ff8_0000_0000_0000u64.to_le_bytes());
    assert_eq!(meta.to_json()["fill_value"], json!("NaN"));
}

#[test]
fn group_with_attributes_round_trips() {
    let NodeMetadata::Group(meta) = round_trip("03_group_attributes.json") else { panic!("not a group") };
    assert_eq!(Value::Object(meta.attributes), json!({"spam": "ham", "eggs": 42}));
}

/// "datetime" is a made-up extension data type. Extension points used by an array are required,
/// so a reader that does not implement it must refuse the document and say which one it lacks.
#[test]
fn unknown_extension_data_type_is_refused() {
    let text = repaired("02_array_extension_datetime.json");
    let err = NodeMetadata::from_json(text.as_bytes()).expect_err("datetime is not a data type zarrdb knows");
    let message = err.to_string();
    assert!(message.contains("data_type") && message.contains("datetime"), "unhelpful error: {message}");
    assert!(ArrayMetadata::from_json(text.as_bytes()).is_err());
}

/// The inline `chunk_grid` example ("For example, {"name": "regular", ...}") placed in an array.
#[test]
fn inline_chunk_grid_example_round_trips() {
    let grid: Value = serde_json::from_str(&example("04_chunk_grid_regular.json")).unwrap();
    let doc = json!({"zarr_format": 3, "node_type": "array", "shape": [4, 10], "data_type": "uint8",
        "chunk_grid": grid, "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "bytes"}]});
    let meta = ArrayMetadata::from_json(&serde_json::to_vec(&doc).unwrap()).unwrap();
    assert_eq!(meta.chunk_shape, vec![2, 5]);
    assert_eq!(normalise(&meta.to_json()["chunk_grid"]), normalise(&grid));
}

/// The complex fill value examples: [1, 2] is 1 + 2i; ["-Infinity", "NaN"] is -inf + NaN i.
#[test]
fn complex_fill_value_examples_round_trip() {
    for (name, real, imag) in [
        ("05_fill_value_complex_finite.json", 1.0f64, 2.0f64),
        ("06_fill_value_complex_special.json", f64::NEG_INFINITY, f64::from_bits(0x7ff8_0000_0000_0000)),
    ] {
        let value: Value = serde_json::from_str(&example(name)).unwrap();
        let fill = FillValue::from_json(&value, DataType::Complex128).unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected: Vec<u8> = real.to_bits().to_le_bytes().into_iter().chain(imag.to_bits().to_le_bytes()).collect();
        assert_eq!(fill.as_le_bytes(), &expected[..], "{name}");
        assert_eq!(normalise(&fill.to_json(DataType::Complex128)), normalise(&value), "{name}");
    }
}

#[test]
fn trailing_comma_helper_only_touches_trailing_commas() {
    assert_eq!(strip_trailing_commas("{\"a\": [1, 2,\n ],\n}"), "{\"a\": [1, 2\n ]\n}");
    assert_eq!(strip_trailing_commas("[1, 2]"), "[1, 2]");
}
