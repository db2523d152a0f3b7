//! `zstd`: a Zstandard frame, with an optional content checksum.

use std::cell::RefCell;

use super::config::{map, Config};
use super::registry::{Build, Example, Registration, Settings, Short, V2Params, V2};
use super::BytesToBytes;
use crate::error::CodecError;
use crate::metadata::NamedConfig;

/// The codec's name in `zarr.json`.
pub(crate) const NAME: &str = "zstd";

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
            None => slot.insert(zstd::bulk::Decompressor::new().map_err(|e| CodecError::Corrupt {
                codec: "zstd",
                reason: e.to_string(),
                source: Some(e.into()),
            })?),
        };
        f(decompressor)
    })
}

/// Frames whose header announces at most this many bytes are decoded into a buffer of that size
/// in one call; larger ones, and frames that announce no size, stream into a buffer that grows with
/// what they produce. A header is untrusted: a few bytes can claim gigabytes.
const ONE_CALL_LIMIT: u64 = 64 << 20;

/// Decodes `encoded` into `out` (cleared first): at most `max_decoded` bytes, and memory in
/// proportion to the bytes the frames produce, not to what a header or the chunk's shape declares.
fn decode_bounded(encoded: &[u8], max_decoded: u64, out: &mut Vec<u8>) -> Result<(), CodecError> {
    out.clear();
    let declared = match zstd::zstd_safe::get_frame_content_size(encoded) {
        Ok(Some(size)) if size > max_decoded => return Err(CodecError::TooLarge { codec: "zstd", limit: max_decoded }),
        Ok(size) => size,
        Err(_) => None,
    };
    match declared {
        Some(size) if size <= ONE_CALL_LIMIT => {
            out.reserve(size as usize);
            with_decompressor(|d| d.decompress_to_buffer(encoded, out).map_err(|e| decompress_error(&e, max_decoded)))?;
        }
        _ => {
            // One byte past the limit tells a bomb from a frame of exactly the limit.
            let decoder = zstd::stream::read::Decoder::with_buffer(encoded).map_err(|e| CodecError::Corrupt {
                codec: "zstd",
                reason: e.to_string(),
                source: Some(e.into()),
            })?;
            std::io::Read::read_to_end(&mut std::io::Read::take(decoder, max_decoded.saturating_add(1)), out)
                .map_err(|e| CodecError::Corrupt { codec: "zstd", reason: e.to_string(), source: Some(e.into()) })?;
        }
    }
    // zstd may write up to the buffer's capacity, which a reused buffer can have beyond the limit.
    if out.len() as u64 > max_decoded {
        return Err(CodecError::TooLarge { codec: "zstd", limit: max_decoded });
    }
    Ok(())
}

fn decompress_error(e: &std::io::Error, max_decoded: u64) -> CodecError {
    let reason = e.to_string();
    if reason.contains("Destination buffer is too small") {
        CodecError::TooLarge { codec: "zstd", limit: max_decoded }
    } else {
        CodecError::Corrupt { codec: "zstd", reason, source: None }
    }
}

impl BytesToBytes for Zstd {
    fn encode(&self, decoded: std::borrow::Cow<'_, [u8]>) -> Result<Vec<u8>, CodecError> {
        let mut out = Vec::new();
        self.encode_append(&decoded, &mut out)?;
        Ok(out)
    }

    fn encode_append(&self, decoded: &[u8], out: &mut Vec<u8>) -> Result<(), CodecError> {
        let fail =
            |e: std::io::Error| CodecError::Encode { codec: "zstd", reason: e.to_string(), source: Some(e.into()) };
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
        let mut out = Vec::new();
        decode_bounded(&encoded, max_decoded, &mut out)?;
        Ok(out)
    }

    fn decode_into(&self, encoded: &[u8], max_decoded: u64, out: &mut Vec<u8>) -> Result<(), CodecError> {
        decode_bounded(encoded, max_decoded, out)
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

/// The typed `Codec::Zstd` of the Rust API as its `zarr.json` entry (the checksum flag always
/// written, as zarr-python does).
pub(crate) fn typed(level: i32, checksum: bool) -> NamedConfig {
    NamedConfig::with_configuration(NAME, map([("level", level.into()), ("checksum", checksum.into())]))
}

/// `zstd[:LEVEL]`: level 3 when not given, without zstd's checksum.
const SHORT: Short =
    Short { usage: "[:LEVEL]", most: 1, build: |s: &Settings<'_>| Ok(typed(s.number(0, "level", 3)?, false)) };

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION: Registration = Registration {
    names: &[NAME],
    build: Build::BytesToBytes(|meta, _array, _encoded| Ok(Box::new(Zstd::from_metadata(meta)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "uint16",
        codecs: r#"[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 3, "checksum": false}}]"#,
    }),
    v2: Some(V2 { id: "zstd", compressor: Some(from_v2), filter: None }),
    short: Some(SHORT),
};

/// A v2 `zstd` compressor: numcodecs' level (default 0) and checksum flag.
fn from_v2(p: &V2Params<'_>, _: &crate::metadata::DataType) -> Result<NamedConfig, crate::error::PlanError> {
    p.only(&["level", "checksum"])?;
    let mut config = map([("level", p.get("level").cloned().unwrap_or(serde_json::Value::from(0)))]);
    match p.get("checksum") {
        None | Some(serde_json::Value::Bool(false)) => {}
        Some(serde_json::Value::Bool(true)) => {
            config.insert("checksum".into(), true.into());
        }
        Some(other) => return Err(p.wrong_type("checksum", "true or false", other)),
    }
    Ok(NamedConfig::with_configuration(NAME, config))
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    /// A frame of one raw block holding `data`, announcing `content_size` in its header (or no
    /// size at all).
    fn frame(content_size: Option<u64>, data: &[u8]) -> Vec<u8> {
        let mut out = 0xFD2F_B528u32.to_le_bytes().to_vec();
        match content_size {
            // An 8-byte content size, and a window descriptor of 1 KiB.
            Some(size) => {
                out.extend([0xC0, 0x00]);
                out.extend(size.to_le_bytes());
            }
            None => out.extend([0x00, 0x00]),
        }
        let block = 1 | (data.len() as u32) << 3;
        out.extend(&block.to_le_bytes()[..3]);
        out.extend(data);
        out
    }

    #[test]
    fn a_frame_without_a_size_decodes() {
        let zstd = Zstd { level: 1, checksum: false };
        let decoded = zstd.decode(Cow::Owned(frame(None, b"ten bytes!")), 4 << 30).unwrap();
        assert_eq!(decoded, b"ten bytes!");
        assert!(matches!(zstd.decode(Cow::Owned(frame(None, b"ten bytes!")), 9), Err(CodecError::TooLarge { .. })));
    }

    #[test]
    fn memory_follows_the_bytes_decoded_not_the_sizes_declared() {
        let zstd = Zstd { level: 1, checksum: false };
        let mut out = Vec::new();
        // A header claiming 1 GiB over ten bytes, under a limit of 4 GiB.
        let lying = frame(Some(1 << 30), b"ten bytes!");
        assert!(zstd.decode_into(&lying, 4 << 30, &mut out).is_err());
        assert!(out.capacity() < 1 << 20, "reserved {} bytes", out.capacity());
        // No size at all, under the same limit.
        zstd.decode_into(&frame(None, b"ten bytes!"), 4 << 30, &mut out).unwrap();
        assert_eq!(out, b"ten bytes!");
        assert!(out.capacity() < 1 << 20, "reserved {} bytes", out.capacity());
    }

    #[test]
    fn a_header_beyond_the_limit_is_refused_before_decoding() {
        let zstd = Zstd { level: 1, checksum: false };
        let result = zstd.decode(Cow::Owned(frame(Some(1 << 40), b"x")), 4 << 30);
        assert!(matches!(result, Err(CodecError::TooLarge { .. })), "{result:?}");
    }

    #[test]
    fn real_frames_round_trip_on_both_paths() {
        let zstd = Zstd { level: 1, checksum: true };
        for len in [0usize, 1, 1000, (ONE_CALL_LIMIT + 1) as usize] {
            let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let encoded = zstd.encode(Cow::Borrowed(&data)).unwrap();
            assert_eq!(zstd.decode(Cow::Owned(encoded), len as u64).unwrap(), data, "{len} bytes");
        }
    }
}
