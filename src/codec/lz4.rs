//! `numcodecs.lz4`: numcodecs' LZ4 framing, a 4-byte little-endian uncompressed size then one
//! LZ4 block (not the LZ4 frame format). Encoding uses the reference C library (the `lz4` crate
//! builds it from source), the same `LZ4_compress_fast` numcodecs calls, so the bytes match.
//! Decoding trusts the size header only after checking it against the chain's bound.

use std::borrow::Cow;

use lz4::block::{self, CompressionMode};

use super::config::{map, Config};
use super::registry::{Build, Example, Registration, V2};
use super::BytesToBytes;
use crate::error::CodecError;
use crate::metadata::NamedConfig;

pub(crate) const NAME: &str = "numcodecs.lz4";

/// numcodecs refuses larger buffers (`LZ4.max_buffer_size`); LZ4 block sizes are `int`.
const MAX_BUFFER: u64 = 0x7E00_0000;

#[derive(Debug)]
pub(crate) struct Lz4 {
    acceleration: i32,
}

impl Lz4 {
    pub fn from_metadata(meta: &NamedConfig) -> Result<Lz4, CodecError> {
        let config = Config::new(NAME, meta, &["acceleration"])?;
        // zarr-python 3 writes `{}` for the default, 1.
        let acceleration = config.int("acceleration", i64::from(i32::MIN)..=i64::from(i32::MAX))?.unwrap_or(1) as i32;
        Ok(Lz4 { acceleration })
    }
}

fn corrupt(reason: impl Into<String>) -> CodecError {
    CodecError::Corrupt { codec: NAME, reason: reason.into(), source: None }
}

impl BytesToBytes for Lz4 {
    fn encode(&self, decoded: Cow<'_, [u8]>) -> Result<Vec<u8>, CodecError> {
        if decoded.len() as u64 > MAX_BUFFER {
            return Err(CodecError::Encode {
                codec: NAME,
                reason: format!("{} bytes exceed LZ4's limit", decoded.len()),
                source: None,
            });
        }
        // numcodecs passes a non-positive acceleration as 1.
        let mode = CompressionMode::FAST(self.acceleration.max(1));
        block::compress(&decoded, Some(mode), true).map_err(|e| CodecError::Encode {
            codec: NAME,
            reason: e.to_string(),
            source: Some(e.into()),
        })
    }

    fn decode(&self, encoded: Cow<'_, [u8]>, max_decoded: u64) -> Result<Vec<u8>, CodecError> {
        let Some((header, body)) = encoded.split_first_chunk::<4>() else {
            return Err(corrupt(format!("{} bytes are shorter than the 4-byte size header", encoded.len())));
        };
        let size = u64::from(u32::from_le_bytes(*header));
        if size > max_decoded {
            return Err(CodecError::TooLarge { codec: NAME, limit: max_decoded });
        }
        if size > MAX_BUFFER || body.len() as u64 > i32::MAX as u64 {
            return Err(corrupt(format!("a size of {size} bytes is beyond LZ4's limit")));
        }
        let mut out = vec![0u8; size as usize];
        let written = block::decompress_to_buffer(body, Some(size as i32), &mut out)
            .map_err(|e| corrupt(format!("the LZ4 block does not decode: {e}")))?;
        // A block that ends early is as corrupt to numcodecs as one that overruns.
        if written as u64 != size {
            return Err(corrupt(format!("the header promises {size} bytes, the block holds {written}")));
        }
        Ok(out)
    }

    fn max_encoded_size(&self, decoded: u64) -> u64 {
        // LZ4_compressBound plus the header.
        decoded + decoded / 255 + 16 + 4
    }

    fn fixed_encoded_size(&self, _decoded: u64) -> Option<u64> {
        None
    }

    fn to_metadata(&self) -> NamedConfig {
        NamedConfig::with_configuration(NAME, map([("acceleration", self.acceleration.into())]))
    }
}

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION: Registration = Registration {
    names: &[NAME],
    build: Build::BytesToBytes(|meta, _array, _encoded| Ok(Box::new(Lz4::from_metadata(meta)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "int64",
        codecs: r#"[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}]"#,
    }),
    v2: Some(V2 { id: "lz4", compressor: Some(|p, _| p.single(NAME, "acceleration", 1.into())), filter: None }),
    short: None,
};

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::Lz4;
    use crate::codec::BytesToBytes;
    use crate::error::CodecError;

    #[test]
    fn round_trip_and_lying_headers() {
        let lz4 = Lz4 { acceleration: 1 };
        let data: Vec<u8> = (0..5000u32).flat_map(|i| (i % 97).to_le_bytes()).collect();
        let enc = lz4.encode(Cow::Borrowed(&data)).unwrap();
        assert_eq!(&enc[..4], &(data.len() as u32).to_le_bytes());
        assert_eq!(lz4.decode(Cow::Borrowed(&enc), data.len() as u64).unwrap(), data);
        let mut huge = enc.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(lz4.decode(Cow::Owned(huge), 1 << 20), Err(CodecError::TooLarge { .. })));
        let mut short = enc.clone();
        short[..4].copy_from_slice(&10u32.to_le_bytes());
        assert!(matches!(lz4.decode(Cow::Owned(short), 1 << 20), Err(CodecError::Corrupt { .. })));
        let mut long = enc.clone();
        long[..4].copy_from_slice(&(data.len() as u32 + 1).to_le_bytes());
        assert!(matches!(lz4.decode(Cow::Owned(long), 1 << 20), Err(CodecError::Corrupt { .. })));
        for n in 0..enc.len() {
            assert!(lz4.decode(Cow::Borrowed(&enc[..n]), 1 << 20).is_err(), "truncated to {n}");
        }
    }
}
