//! `zarrdb create STORE ARRAY --dtype T --shape S [--chunks C] [--shard S] [--codec X]...
//! [--fill F] [--dims a,b] [--attrs JSON]` and `zarrdb mkgroup STORE GROUP [--attrs JSON]`.
//! The metadata is put together here and validated by the library as any `zarr.json` is.

use serde_json::{Map, Value};
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
    meta = meta.with_codec_specs(&spec.codecs).map_err(|e| CliError::new(format!("--codec: {e}")))?;
    if shard.is_some() {
        meta = meta.with_shards(chunks);
    }
    if let Some(dims) = &spec.dims {
        let names = dims.split(',').map(|d| Some(d.trim()).filter(|d| !d.is_empty()).map(str::to_owned)).collect();
        meta.dimension_names = Some(names);
    }
    meta.attributes = attributes(spec.attrs.as_deref())?;
    // Checked as a stored document is: rank agreement, chunk shapes, codec configurations.
    ArrayMetadata::from_json(&meta.to_json_bytes()).map_err(|e| CliError::new(format!("the array's metadata: {e}")))
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
