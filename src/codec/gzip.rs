//! `gzip`: an RFC 1952 gzip stream (not zlib), levels 0..=9.

use std::io::{Read, Write};

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

use super::config::{map, Config};
use super::registry::{Build, Example, Registration, Settings, Short, V2Params, V2};
use super::BytesToBytes;
use crate::error::CodecError;
use crate::metadata::NamedConfig;

/// The codec's name in `zarr.json`.
pub(crate) const NAME: &str = "gzip";

#[derive(Debug)]
pub(crate) struct Gzip {
    level: u32,
}

impl Gzip {
    pub fn from_metadata(meta: &NamedConfig) -> Result<Gzip, CodecError> {
        let config = Config::new("gzip", meta, &["level"])?;
        config.required("level")?;
        let level = config.int("level", 0..=9)?.expect("required") as u32;
        Ok(Gzip { level })
    }
}

impl BytesToBytes for Gzip {
    fn encode(&self, decoded: std::borrow::Cow<'_, [u8]>) -> Result<Vec<u8>, CodecError> {
        let mut encoder = GzEncoder::new(Vec::with_capacity(decoded.len() / 2 + 64), Compression::new(self.level));
        encoder.write_all(&decoded).and_then(|()| encoder.finish()).map_err(|e| CodecError::Encode {
            codec: "gzip",
            reason: e.to_string(),
            source: Some(e.into()),
        })
    }

    fn decode(&self, encoded: std::borrow::Cow<'_, [u8]>, max_decoded: u64) -> Result<Vec<u8>, CodecError> {
        // Read at most one byte past the limit: enough to tell a bomb from a valid stream without
        // ever holding more than the limit.
        let mut out = Vec::new();
        MultiGzDecoder::new(&encoded[..])
            .take(max_decoded + 1)
            .read_to_end(&mut out)
            .map_err(|e| CodecError::Corrupt { codec: "gzip", reason: e.to_string(), source: Some(e.into()) })?;
        if out.len() as u64 > max_decoded {
            return Err(CodecError::TooLarge { codec: "gzip", limit: max_decoded });
        }
        Ok(out)
    }

    fn max_encoded_size(&self, decoded: u64) -> u64 {
        deflate_bound(decoded)
    }

    fn fixed_encoded_size(&self, _decoded: u64) -> Option<u64> {
        None
    }

    fn to_metadata(&self) -> NamedConfig {
        NamedConfig::with_configuration("gzip", map([("level", self.level.into())]))
    }
}

/// The largest deflate stream (gzip or zlib framed) of `decoded` bytes: stored blocks add 5
/// bytes per 16 KiB block in the worst case, plus room for the header and trailer.
pub(crate) fn deflate_bound(decoded: u64) -> u64 {
    decoded + 5 * (decoded / 16383 + 1) + 64
}

/// The typed `Codec::Gzip` of the Rust API as its `zarr.json` entry.
pub(crate) fn typed(level: u32) -> NamedConfig {
    NamedConfig::with_configuration(NAME, map([("level", level.into())]))
}

/// `gzip[:LEVEL]`: level 5 when not given.
const SHORT: Short =
    Short { usage: "[:LEVEL]", most: 1, build: |s: &Settings<'_>| Ok(typed(s.number(0, "level", 5)?)) };

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION: Registration = Registration {
    names: &[NAME],
    build: Build::BytesToBytes(|meta, _array, _encoded| Ok(Box::new(Gzip::from_metadata(meta)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "uint16",
        codecs: r#"[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 5}}]"#,
    }),
    v2: Some(V2 { id: "gzip", compressor: Some(|p, _| deflate_from_v2(NAME, p)), filter: None }),
    short: Some(SHORT),
};

/// A v2 `gzip` or `zlib` compressor as the codec `name`: numcodecs' parameters are the level.
pub(crate) fn deflate_from_v2(name: &str, p: &V2Params<'_>) -> Result<NamedConfig, crate::error::PlanError> {
    p.only(&["level"])?;
    // numcodecs' default level for both.
    let mut level = p.get("level").cloned().unwrap_or(serde_json::Value::from(1));
    // zlib's "default level" (-1, which numcodecs passes through) is level 6. The level only
    // matters for encoding; the stored chunks read the same at any level.
    if level.as_i64() == Some(-1) {
        level = serde_json::Value::from(6);
    }
    Ok(NamedConfig::with_configuration(name, map([("level", level)])))
}
