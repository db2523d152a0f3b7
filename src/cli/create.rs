//! `zarrdb create STORE ARRAY --dtype T --shape S [--chunks C] [--shard S] [--codec X]...
//! [--fill F] [--dims a,b] [--attrs JSON]` and `zarrdb mkgroup STORE GROUP [--attrs JSON]`.
//! The metadata is put together here and validated by the library as any `zarr.json` is.

use serde_json::{json, Map, Value};
use zarrdb::metadata::NamedConfig;
use zarrdb::{Array, ArrayMetadata, DataType, FillValue, Group, NodePath};

use super::{args, locator, CliError, CliResult};

/// What `zarrdb create` was given.
pub(crate) struct ArraySpec {
    pub dtype: String,
    pub shape: String,
    pub chunks: Option<String>,
    pub shard: Option<String>,
    pub codecs: Vec<String>,
    pub fill: Option<String>,
    pub dims: Option<String>,
    pub attrs: Option<String>,
}

// Everything is checked before the store is opened: a refused command creates no database.
pub(crate) fn array(store: &str, path: &str, spec: &ArraySpec) -> CliResult {
    let metadata = metadata(spec)?;
    NodePath::parse(path)?;
    locator::edit(store, true, |store| {
        Array::create(store, path, metadata)?;
        Ok(())
    })
}

pub(crate) fn group(store: &str, path: &str, attrs: Option<&str>) -> CliResult {
    let attributes = attributes(attrs)?;
    NodePath::parse(path)?;
    locator::edit(store, true, |store| {
        Group::create(store, path, attributes)?;
        Ok(())
    })
}

fn metadata(spec: &ArraySpec) -> Result<ArrayMetadata, CliError> {
    let dtype_value = if spec.dtype.trim_start().starts_with(['{', '"']) {
        serde_json::from_str(&spec.dtype)
            .map_err(|e| CliError::new(format!("--dtype {}: not JSON: {e}", spec.dtype)))?
    } else {
        Value::String(spec.dtype.clone())
    };
    let data_type =
        DataType::from_json(&dtype_value).map_err(|e| CliError::new(format!("--dtype {}: {e}", spec.dtype)))?;
    let shape = args::shape("--shape", &spec.shape)?;
    let shard = spec.shard.as_deref().map(|s| args::shape("--shard", s)).transpose()?;
    // Without --chunks, the automatic chunk shape of the array (or of one shard).
    let chunks = match &spec.chunks {
        Some(text) => args::shape("--chunks", text)?,
        None => ArrayMetadata::auto_chunk_shape(&data_type, shard.as_deref().unwrap_or(&shape)),
    };
    let mut meta = ArrayMetadata::new(data_type.clone(), shape, shard.clone().unwrap_or_else(|| chunks.clone()));
    if let Some(fill) = &spec.fill {
        meta.fill_value = FillValue::from_json(&args::json_or_text(fill), data_type.clone())
            .map_err(|e| CliError::new(format!("--fill {fill}: {e}")))?;
    }
    let chain = chain(&spec.codecs, &data_type, &meta.codecs)?;
    meta.codecs = match shard {
        None => chain,
        Some(_) => {
            let inner: Vec<Value> = chain.iter().map(NamedConfig::to_json).collect();
            let sharding = json!([{
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": chunks,
                    "codecs": inner,
                    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                    "index_location": "end",
                },
            }]);
            NamedConfig::parse_list(&sharding).map_err(|e| CliError::new(format!("--shard: {e}")))?
        }
    };
    if let Some(dims) = &spec.dims {
        let names = dims.split(',').map(|d| Some(d.trim()).filter(|d| !d.is_empty()).map(str::to_owned)).collect();
        meta.dimension_names = Some(names);
    }
    meta.attributes = attributes(spec.attrs.as_deref())?;
    // Checked as a stored document is: rank agreement, chunk shapes, codec configurations.
    ArrayMetadata::from_json(&meta.to_json_bytes()).map_err(|e| CliError::new(format!("the array's metadata: {e}")))
}

/// The codec chain of `--codec` values: array-to-array codecs (transpose), then one
/// array-to-bytes codec (`default` when none is given: `bytes`, or the variable-length codec),
/// then bytes-to-bytes codecs.
fn chain(specs: &[String], data_type: &DataType, default: &[NamedConfig]) -> Result<Vec<NamedConfig>, CliError> {
    let mut codecs: Vec<Value> = specs.iter().map(|s| codec(s, data_type)).collect::<Result<_, _>>()?;
    let name = |v: &Value| v["name"].as_str().unwrap_or_default().to_owned();
    if !codecs.iter().any(|c| ARRAY_TO_BYTES.contains(&name(c).as_str())) {
        let at = codecs.iter().take_while(|c| name(c) == "transpose").count();
        let defaults: Vec<Value> = default.iter().map(NamedConfig::to_json).collect();
        codecs.splice(at..at, defaults);
    }
    NamedConfig::parse_list(&Value::Array(codecs)).map_err(|e| CliError::new(format!("--codec: {e}")))
}

const ARRAY_TO_BYTES: [&str; 4] = ["bytes", "vlen-utf8", "vlen-bytes", "sharding_indexed"];

/// One `--codec`: a JSON object as `zarr.json` holds it, or a short form: `zstd[:LEVEL]`,
/// `gzip[:LEVEL]`, `blosc[:CNAME[:CLEVEL[:SHUFFLE]]]`, `crc32c`, `bytes[:ENDIAN]`,
/// `transpose:ORDER` (e.g. `transpose:1,0`), or any other codec's bare name.
fn codec(text: &str, data_type: &DataType) -> Result<Value, CliError> {
    if text.trim_start().starts_with('{') {
        return serde_json::from_str(text).map_err(|e| CliError::new(format!("--codec {text}: not JSON: {e}")));
    }
    let mut parts = text.split(':');
    let name = parts.next().unwrap_or_default();
    let args: Vec<&str> = parts.collect();
    let bad = |why: &str| CliError::new(format!("--codec {text}: {why}"));
    let number = |i: usize, default: i64| -> Result<i64, CliError> {
        args.get(i).map_or(Ok(default), |a| a.parse().map_err(|_| bad(&format!("\"{a}\" is not a whole number"))))
    };
    let most = |n: usize| if args.len() > n { Err(bad(&format!("{name} takes at most {n} settings"))) } else { Ok(()) };
    Ok(match name {
        "zstd" => {
            most(1)?;
            json!({"name": "zstd", "configuration": {"level": number(0, 3)?, "checksum": false}})
        }
        "gzip" => {
            most(1)?;
            json!({"name": "gzip", "configuration": {"level": number(0, 5)?}})
        }
        "blosc" => {
            most(3)?;
            json!({"name": "blosc", "configuration": {
                "cname": args.first().copied().unwrap_or("zstd"),
                "clevel": number(1, 5)?,
                "shuffle": args.get(2).copied().unwrap_or("shuffle"),
                "typesize": data_type.size(),
                "blocksize": 0,
            }})
        }
        "bytes" => {
            most(1)?;
            json!({"name": "bytes", "configuration": {"endian": args.first().copied().unwrap_or("little")}})
        }
        "transpose" => {
            let order = args::shape("--codec transpose", args.first().copied().unwrap_or_default())?;
            json!({"name": "transpose", "configuration": {"order": order}})
        }
        _ if args.is_empty() => json!({ "name": name }),
        _ => return Err(bad("settings are given in this short form only to zstd, gzip, blosc, bytes and transpose; write the codec as JSON")),
    })
}

/// `--attrs`: a JSON object, or nothing.
fn attributes(text: Option<&str>) -> Result<Map<String, Value>, CliError> {
    match text.map(serde_json::from_str::<Value>) {
        None => Ok(Map::new()),
        Some(Ok(Value::Object(map))) => Ok(map),
        Some(_) => Err(CliError::new(format!("--attrs {}: not a JSON object", text.unwrap_or_default()))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{metadata, ArraySpec};

    fn spec(dtype: &str, shape: &str) -> ArraySpec {
        ArraySpec {
            dtype: dtype.into(),
            shape: shape.into(),
            chunks: None,
            shard: None,
            codecs: Vec::new(),
            fill: None,
            dims: None,
            attrs: None,
        }
    }

    #[test]
    fn short_codec_forms_become_a_valid_chain() {
        let mut s = spec("float32", "100,200");
        s.chunks = Some("10,20".into());
        s.codecs = vec!["transpose:1,0".into(), "zstd:7".into(), "crc32c".into()];
        s.fill = Some("NaN".into());
        s.dims = Some("y,x".into());
        let meta = metadata(&s).ok().unwrap().to_json();
        let names: Vec<&str> = meta["codecs"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["transpose", "bytes", "zstd", "crc32c"]);
        assert_eq!(meta["codecs"][2]["configuration"]["level"], 7);
        assert_eq!(meta["fill_value"], "NaN");
        assert_eq!(meta["dimension_names"], json!(["y", "x"]));
    }

    #[test]
    fn shards_hold_the_chain_and_chunks_default_to_automatic() {
        let mut s = spec("uint8", "4096,4096");
        s.shard = Some("2048,2048".into());
        s.codecs = vec!["zstd".into()];
        let meta = metadata(&s).ok().unwrap().to_json();
        assert_eq!(meta["chunk_grid"]["configuration"]["chunk_shape"], json!([2048, 2048]));
        let sharding = &meta["codecs"][0];
        assert_eq!(sharding["name"], "sharding_indexed");
        assert_eq!(sharding["configuration"]["chunk_shape"], json!([1024, 1024]));
        assert_eq!(sharding["configuration"]["codecs"][1]["name"], "zstd");
        let meta = metadata(&spec("string", "10")).ok().unwrap().to_json();
        assert_eq!(meta["codecs"][0]["name"], "vlen-utf8");
    }

    #[test]
    fn bad_specs_name_the_option() {
        let cases = [
            (spec("float33", "10"), "--dtype"),
            (spec("int8", "10,x"), "--shape"),
            (ArraySpec { fill: Some("\"text\"".into()), ..spec("int8", "10") }, "--fill"),
            (ArraySpec { codecs: vec!["zstd:high".into()], ..spec("int8", "10") }, "--codec"),
            (ArraySpec { codecs: vec!["lz5:1".into()], ..spec("int8", "10") }, "--codec"),
            (ArraySpec { attrs: Some("[1]".into()), ..spec("int8", "10") }, "--attrs"),
            (ArraySpec { dims: Some("a,b".into()), ..spec("int8", "10") }, "dimension_names"),
            (ArraySpec { chunks: Some("3,3".into()), ..spec("int8", "10") }, "chunk"),
        ];
        for (s, expected) in cases {
            let err = metadata(&s).err().map(|e| e.message_for_tests().to_owned()).unwrap_or_default();
            assert!(err.contains(expected), "{err:?} lacks {expected:?}");
        }
    }
}
