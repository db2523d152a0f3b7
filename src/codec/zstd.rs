//! `zstd`: a Zstandard frame, with an optional content checksum.

use std::cell::RefCell;

use super::config::{map, Config};
use super::BytesToBytes;
use crate::error::CodecError;
use crate::metadata::NamedConfig;

#[derive(Debug)]
pub(crate) struct Zstd {
    level: i32,
    checksum: bool,
}

impl Zstd {
    pub fn from_metadata(meta: &NamedConfig) -> Result<Zstd, CodecError> {
        let config = Config::new("zstd", meta, &["level", "checksum"])?;
        let level = config.int("level", -131072..=22)?.unwrap_or(0) as i32;
        let checksum = config.bool("checksum")?.unwrap_or(false);
        Ok(Zstd { level, checksum })
    }
}

thread_local! {
    // Creating a zstd context costs about as much as compressing a small chunk, so each thread
    // keeps one of each and re-parameterises it per call.
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

impl BytesToBytes for Zstd {
    fn encode(&self, decoded: std::borrow::Cow<'_, [u8]>) -> Result<Vec<u8>, CodecError> {
        let fail = |e: std::io::Error| CodecError::Encode { codec: "zstd", reason: e.to_string() };
        COMPRESSOR.with(|cell| {
            let mut slot = cell.borrow_mut();
            let compressor = match slot.as_mut() {
                Some(c) => c,
                None => slot.insert(zstd::bulk::Compressor::new(self.level).map_err(fail)?),
            };
            compressor.set_compression_level(self.level).map_err(fail)?;
            compressor.include_checksum(self.checksum).map_err(fail)?;
            compressor.compress(&decoded).map_err(fail)
        })
    }

    fn decode(&self, encoded: std::borrow::Cow<'_, [u8]>, max_decoded: u64) -> Result<Vec<u8>, CodecError> {
        // The output buffer is bounded by the expected size: a frame that claims or produces more
        // fails inside zstd instead of allocating.
        let limit = usize::try_from(max_decoded).unwrap_or(usize::MAX);
        let mut decompressor = zstd::bulk::Decompressor::new()
            .map_err(|e| CodecError::Corrupt { codec: "zstd", reason: e.to_string() })?;
        if let Ok(Some(size)) = zstd::zstd_safe::get_frame_content_size(&encoded) {
            if size > max_decoded {
                return Err(CodecError::TooLarge { codec: "zstd", limit: max_decoded });
            }
        }
        decompressor.decompress(&encoded, limit).map_err(|e| {
            let reason = e.to_string();
            if reason.contains("Destination buffer is too small") {
                CodecError::TooLarge { codec: "zstd", limit: max_decoded }
            } else {
                CodecError::Corrupt { codec: "zstd", reason }
            }
        })
    }

    fn max_encoded_size(&self, decoded: u64) -> u64 {
        zstd::zstd_safe::compress_bound(usize::try_from(decoded).unwrap_or(usize::MAX)) as u64
    }

    fn fixed_encoded_size(&self, _decoded: u64) -> Option<u64> {
        None
    }

    fn to_metadata(&self) -> NamedConfig {
        let mut config = map([("level", self.level.into())]);
        if self.checksum {
            config.insert("checksum".into(), true.into());
        }
        NamedConfig::with_configuration("zstd", config)
    }
}
