//! `gzip`: an RFC 1952 gzip stream (not zlib), levels 0..=9.

use std::io::{Read, Write};

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;

use super::config::{map, Config};
use super::BytesToBytes;
use crate::error::CodecError;
use crate::metadata::NamedConfig;

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
