//! Codecs written in a line of text (`zstd:7`, `blosc:lz4:5`, a JSON object, a bare name), as the
//! CLI's `create --codec` takes them, and the chain made of such specs. Each codec that has a
//! short form with settings hands it over in its [`Registration`](super::registry::Registration)
//! (`short`); this module only splits the text and puts the chain in the spec's order.

use std::str::FromStr;

use serde_json::Value;

use super::registry::{self, Kind};
use crate::error::CodecError;
use crate::metadata::{ArrayMetadata, DataType, NamedConfig};

/// A codec's short form: `NAME[:SETTING]...`.
#[derive(Clone, Copy)]
pub(crate) struct Short {
    /// The settings it takes, for messages (e.g. `[:LEVEL]`).
    pub usage: &'static str,
    /// The most settings it takes.
    pub most: usize,
    /// The codec's entry from its settings.
    pub build: fn(&Settings<'_>) -> Result<NamedConfig, CodecError>,
}

/// The settings of one short form, and the data type of the array it is for.
pub(crate) struct Settings<'a> {
    codec: &'a str,
    args: Vec<&'a str>,
    pub data_type: &'a DataType,
}

impl Settings<'_> {
    /// The setting at `index` as a number, `default` when it is not given.
    pub fn number<T: FromStr>(&self, index: usize, field: &str, default: T) -> Result<T, CodecError> {
        match self.args.get(index) {
            None => Ok(default),
            Some(text) => text.parse().map_err(|_| self.error(field, format!("\"{text}\" is not a whole number"))),
        }
    }

    /// The setting at `index` as text, `default` when it is not given.
    pub fn text<'b>(&'b self, index: usize, default: &'b str) -> &'b str {
        self.args.get(index).copied().unwrap_or(default)
    }

    /// Refuse the setting `field`.
    pub fn error(&self, field: &str, reason: String) -> CodecError {
        CodecError::InvalidConfiguration { codec: self.codec.to_owned(), field: field.to_owned(), reason }
    }
}

impl NamedConfig {
    /// A codec from a line of text: a JSON object as `zarr.json` holds it, a codec's bare name
    /// (`crc32c`), or a short form with settings after colons: `zstd[:LEVEL]`, `gzip[:LEVEL]`,
    /// `blosc[:CNAME[:CLEVEL[:SHUFFLE]]]`, `bytes[:ENDIAN]`, `transpose:ORDER` (e.g.
    /// `transpose:1,0`). `data_type` is the array's (blosc records its element size). Whether
    /// the configuration is valid is checked when the array is created.
    ///
    /// ```
    /// use zarrdb::metadata::NamedConfig;
    /// use zarrdb::DataType;
    ///
    /// let zstd = NamedConfig::from_spec("zstd:7", &DataType::Float32)?;
    /// assert_eq!(zstd.to_json()["configuration"]["level"], 7);
    /// assert!(NamedConfig::from_spec("zstd:fast", &DataType::Float32).is_err());
    /// # Ok::<(), zarrdb::error::CodecError>(())
    /// ```
    pub fn from_spec(text: &str, data_type: &DataType) -> Result<NamedConfig, CodecError> {
        if text.trim_start().starts_with('{') {
            let value: Value = serde_json::from_str(text)
                .map_err(|e| CodecError::InvalidChain { reason: format!("{text}: not JSON: {e}") })?;
            return NamedConfig::from_json(&value, "codec", false)
                .map_err(|e| CodecError::InvalidChain { reason: format!("{text}: {e}") });
        }
        let mut parts = text.split(':');
        let codec = parts.next().unwrap_or_default();
        let args: Vec<&str> = parts.collect();
        let short = registry::find(codec).and_then(|r| r.short);
        let Some(short) = short else {
            if args.is_empty() {
                return Ok(NamedConfig::new(codec));
            }
            let known = registry::REGISTRY.iter().filter(|r| r.short.is_some()).map(|r| r.names[0]);
            let known: Vec<&str> = known.collect();
            return Err(CodecError::InvalidChain {
                reason: format!(
                    "{text}: settings are given in this short form only to {}; write the codec as JSON",
                    known.join(", ")
                ),
            });
        };
        let settings = Settings { codec, args, data_type };
        if settings.args.len() > short.most {
            let reason = format!("takes at most {} settings: {codec}{}", short.most, short.usage);
            return Err(settings.error("(settings)", reason));
        }
        (short.build)(&settings)
    }
}

impl ArrayMetadata {
    /// The same metadata with its codec chain made of `specs` ([`NamedConfig::from_spec`]):
    /// array-to-array codecs, the array-to-bytes codec (the one [`ArrayMetadata::new`] chose when
    /// `specs` name none: `bytes`, or the variable-length codec), then bytes-to-bytes codecs.
    ///
    /// ```
    /// use zarrdb::{ArrayMetadata, DataType};
    ///
    /// let meta = ArrayMetadata::new(DataType::Int16, vec![100, 100], vec![10, 10])
    ///     .with_codec_specs(&["transpose:1,0", "zstd:5", "crc32c"])?;
    /// let names: Vec<&str> = meta.codecs.iter().map(|c| c.name.as_str()).collect();
    /// assert_eq!(names, ["transpose", "bytes", "zstd", "crc32c"]);
    /// # Ok::<(), zarrdb::error::CodecError>(())
    /// ```
    pub fn with_codec_specs(mut self, specs: &[impl AsRef<str>]) -> Result<ArrayMetadata, CodecError> {
        let mut codecs: Vec<NamedConfig> =
            specs.iter().map(|s| NamedConfig::from_spec(s.as_ref(), &self.data_type)).collect::<Result<_, _>>()?;
        let kind = |c: &NamedConfig| registry::find(&c.name).map(|r| r.build.kind());
        if !codecs.iter().any(|c| kind(c) == Some(Kind::ArrayToBytes)) {
            let at = codecs.iter().take_while(|c| kind(c) == Some(Kind::ArrayToArray)).count();
            let defaults = std::mem::take(&mut self.codecs);
            codecs.splice(at..at, defaults);
        }
        self.codecs = codecs;
        Ok(self)
    }

    /// The same metadata with its chunks made shards of inner chunks of `chunk_shape`: the codec
    /// chain becomes the inner chunks' chain, and the shard index is protected by `crc32c` at the
    /// end of each shard (what zarr-python writes by default).
    ///
    /// ```
    /// use zarrdb::{ArrayMetadata, DataType};
    ///
    /// let meta = ArrayMetadata::new(DataType::UInt8, vec![1024], vec![256])
    ///     .with_codec_specs(&["zstd"])?
    ///     .with_shards(vec![16]);
    /// assert_eq!(meta.codecs[0].name, "sharding_indexed");
    /// # Ok::<(), zarrdb::error::CodecError>(())
    /// ```
    pub fn with_shards(mut self, chunk_shape: Vec<u64>) -> ArrayMetadata {
        let inner = std::mem::take(&mut self.codecs);
        self.codecs = vec![super::sharding::wrap(chunk_shape, inner)];
        self
    }
}

/// A comma-separated list of axes (`transpose:1,0`).
pub(crate) fn axes(settings: &Settings<'_>, index: usize, field: &str) -> Result<Vec<usize>, CodecError> {
    let text = settings.text(index, "");
    if text.is_empty() {
        return Err(settings.error(field, "is required (e.g. transpose:1,0)".into()));
    }
    text.split(',')
        .map(|a| a.trim().parse().map_err(|_| settings.error(field, format!("\"{a}\" is not an axis number"))))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::registry::REGISTRY;
    use crate::codec::{ChunkSpec, CodecChain};
    use crate::error::CodecError;
    use crate::metadata::{ArrayMetadata, DataType, FillValue, NamedConfig};

    fn spec(text: &str, data_type: &DataType) -> serde_json::Value {
        NamedConfig::from_spec(text, data_type).unwrap_or_else(|e| panic!("{text}: {e}")).to_json()
    }

    #[test]
    fn short_forms_fill_in_defaults_and_settings() {
        let f32 = DataType::Float32;
        assert_eq!(spec("zstd", &f32), json!({"name": "zstd", "configuration": {"level": 3, "checksum": false}}));
        assert_eq!(spec("zstd:-5", &f32)["configuration"]["level"], -5);
        assert_eq!(spec("gzip", &f32), json!({"name": "gzip", "configuration": {"level": 5}}));
        assert_eq!(spec("gzip:9", &f32)["configuration"]["level"], 9);
        assert_eq!(spec("bytes", &f32), json!({"name": "bytes", "configuration": {"endian": "little"}}));
        assert_eq!(spec("bytes:big", &f32)["configuration"]["endian"], "big");
        assert_eq!(spec("transpose:2,0,1", &f32)["configuration"]["order"], json!([2, 0, 1]));
        let blosc = spec("blosc:lz4:7:bitshuffle", &DataType::Int16);
        assert_eq!(blosc["configuration"]["cname"], "lz4");
        assert_eq!(blosc["configuration"]["clevel"], 7);
        assert_eq!(blosc["configuration"]["shuffle"], "bitshuffle");
        assert_eq!(blosc["configuration"]["typesize"], 2);
        assert_eq!(spec("crc32c", &f32), json!({"name": "crc32c"}));
        let given = r#"{"name": "zstd", "configuration": {"level": 1, "checksum": true}}"#;
        assert_eq!(spec(given, &f32)["configuration"]["checksum"], true);
    }

    #[test]
    fn bad_settings_name_the_codec_and_field() {
        let f32 = DataType::Float32;
        let refused = |text: &str| NamedConfig::from_spec(text, &f32).err().unwrap_or_else(|| panic!("{text} passed"));
        assert!(matches!(refused("zstd:high"),
            CodecError::InvalidConfiguration { codec, field, .. } if codec == "zstd" && field == "level"));
        assert!(matches!(refused("gzip:1:2"), CodecError::InvalidConfiguration { codec, .. } if codec == "gzip"));
        assert!(matches!(refused("bytes:middle"),
            CodecError::InvalidConfiguration { field, .. } if field == "endian"));
        assert!(matches!(refused("transpose"), CodecError::InvalidConfiguration { field, .. } if field == "order"));
        assert!(matches!(refused("transpose:1,x"), CodecError::InvalidConfiguration { field, .. } if field == "order"));
        let CodecError::InvalidChain { reason } = refused("lz5:1") else { panic!("lz5:1") };
        assert!(reason.contains("zstd") && reason.contains("blosc"), "{reason}");
        assert!(matches!(refused("{not json"), CodecError::InvalidChain { .. }));
        assert!(matches!(refused(r#"{"name": 3}"#), CodecError::InvalidChain { .. }));
    }

    #[test]
    fn every_short_form_with_its_defaults_builds_a_chain_that_runs() {
        for r in REGISTRY.iter().filter(|r| r.short.is_some()) {
            let name = r.names[0];
            let text = if name == "transpose" { "transpose:1,0".to_owned() } else { name.to_owned() };
            let meta = ArrayMetadata::new(DataType::UInt16, vec![4, 5], vec![4, 5])
                .with_codec_specs(&[text.as_str()])
                .unwrap_or_else(|e| panic!("{text}: {e}"));
            let spec = ChunkSpec {
                shape: vec![4, 5],
                data_type: DataType::UInt16,
                fill_value: FillValue::zero(DataType::UInt16),
            };
            let chain = CodecChain::from_metadata(&meta.codecs, &spec).unwrap_or_else(|e| panic!("{text}: {e}"));
            let decoded: Vec<u8> = (0..40).collect();
            let encoded = chain.encode(&decoded[..]).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(chain.decode(encoded).unwrap(), decoded, "{text}");
        }
    }

    #[test]
    fn chains_get_the_default_array_to_bytes_codec_in_its_place() {
        let names = |meta: &ArrayMetadata| meta.codecs.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        let meta = ArrayMetadata::new(DataType::Int8, vec![8, 8], vec![4, 4]);
        assert_eq!(names(&meta.clone().with_codec_specs(&[] as &[&str]).unwrap()), ["bytes"]);
        let given = meta.clone().with_codec_specs(&["transpose:1,0", "bytes:big", "gzip"]).unwrap();
        assert_eq!(names(&given), ["transpose", "bytes", "gzip"]);
        assert_eq!(given.codecs[1].to_json()["configuration"]["endian"], "big");
        let text = ArrayMetadata::new(DataType::String, vec![8], vec![4]).with_codec_specs(&["zstd"]).unwrap();
        assert_eq!(names(&text), ["vlen-utf8", "zstd"]);
        let sharded = meta.with_codec_specs(&["zstd"]).unwrap().with_shards(vec![2, 2]).to_json();
        let config = &sharded["codecs"][0]["configuration"];
        assert_eq!(config["chunk_shape"], json!([2, 2]));
        assert_eq!(config["codecs"][1]["name"], "zstd");
        assert_eq!(config["index_codecs"][1]["name"], "crc32c");
        assert_eq!(config["index_location"], "end");
    }
}
