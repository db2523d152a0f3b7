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
    // Creating a zstd context costs about as much as compressing a small chunk (it runs CPUID,
    // which a virtual machine may trap), so each thread keeps one of each and reuses it.
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

fn with_decompressor<R>(
    f: impl FnOnce(&mut zstd::bulk::Decompressor<'static>) -> Result<R, CodecError>,
) -> Result<R, CodecError> {
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let decompressor = match slot.as_mut() {
            Some(d) => d,
            None => slot.insert(
                zstd::bulk::Decompressor::new()
                    .map_err(|e| CodecError::Corrupt { codec: "zstd", reason: e.to_string() })?,
            ),
        };
        f(decompressor)
    })
}

/// Refuse a frame whose header announces more than `max_decoded` bytes before decoding any of it.
fn check_content_size(encoded: &[u8], max_decoded: u64) -> Result<(), CodecError> {
    match zstd::zstd_safe::get_frame_content_size(encoded) {
        Ok(Some(size)) if size > max_decoded => Err(CodecError::TooLarge { codec: "zstd", limit: max_decoded }),
        _ => Ok(()),
    }
}

fn decompress_error(e: &std::io::Error, max_decoded: u64) -> CodecError {
    let reason = e.to_string();
    if reason.contains("Destination buffer is too small") {
        CodecError::TooLarge { codec: "zstd", limit: max_decoded }
    } else {
        CodecError::Corrupt { codec: "zstd", reason }
    }
}

impl BytesToBytes for Zstd {
    fn encode(&self, decoded: std::borrow::Cow<'_, [u8]>) -> Result<Vec<u8>, CodecError> {
        let mut out = Vec::new();
        self.encode_append(&decoded, &mut out)?;
        Ok(out)
    }

    fn encode_append(&self, decoded: &[u8], out: &mut Vec<u8>) -> Result<(), CodecError> {
        let fail = |e: std::io::Error| CodecError::Encode { codec: "zstd", reason: e.to_string() };
        // Room for the worst case, so the frame is written once, in place, after what `out` holds.
        out.reserve(zstd::zstd_safe::compress_bound(decoded.len()));
        COMPRESSOR.with(|cell| {
            let mut slot = cell.borrow_mut();
            let compressor = match slot.as_mut() {
                Some(c) => c,
                None => slot.insert(zstd::bulk::Compressor::new(self.level).map_err(fail)?),
            };
            compressor.set_compression_level(self.level).map_err(fail)?;
            compressor.include_checksum(self.checksum).map_err(fail)?;
            let mut at_end = std::io::Cursor::new(out);
            at_end.set_position(at_end.get_ref().len() as u64);
            compressor.compress_to_buffer(decoded, &mut at_end).map_err(fail)?;
            Ok(())
        })
    }

    fn decode(&self, encoded: std::borrow::Cow<'_, [u8]>, max_decoded: u64) -> Result<Vec<u8>, CodecError> {
        // The output buffer is bounded by the expected size: a frame that claims or produces more
        // fails inside zstd instead of allocating.
        let limit = usize::try_from(max_decoded).unwrap_or(usize::MAX);
        check_content_size(&encoded, max_decoded)?;
        with_decompressor(|d| d.decompress(&encoded, limit).map_err(|e| decompress_error(&e, max_decoded)))
    }

    fn decode_into(&self, encoded: &[u8], max_decoded: u64, out: &mut Vec<u8>) -> Result<(), CodecError> {
        check_content_size(encoded, max_decoded)?;
        let limit = usize::try_from(max_decoded).unwrap_or(usize::MAX);
        out.clear();
        out.reserve(limit);
        with_decompressor(|d| d.decompress_to_buffer(encoded, out).map_err(|e| decompress_error(&e, max_decoded)))?;
        // zstd may write up to the buffer's capacity, which a reused buffer can have beyond the limit.
        if out.len() as u64 > max_decoded {
            return Err(CodecError::TooLarge { codec: "zstd", limit: max_decoded });
        }
        Ok(())
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
