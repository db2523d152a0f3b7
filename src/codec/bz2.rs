//! `numcodecs.bz2`: a bzip2 stream as Python's `bz2.compress(data, level)` writes it. Decoding
//! follows `bz2.decompress`: concatenated streams are read, and data after a complete stream
//! that is not another one is ignored. The `bzip2` crate's default backend is a Rust port of
//! libbzip2, so nothing but cargo is needed to build it.

use std::borrow::Cow;
use std::io::{Read, Write};

use bzip2::bufread::BzDecoder;
use bzip2::write::BzEncoder;
use bzip2::Compression;

use super::config::{map, Config};
use super::registry::{Build, Example, Registration, V2};
use super::BytesToBytes;
use crate::error::CodecError;
use crate::metadata::NamedConfig;

pub(crate) const NAME: &str = "numcodecs.bz2";

#[derive(Debug)]
pub(crate) struct Bz2 {
    level: u32,
}

impl Bz2 {
    pub fn from_metadata(meta: &NamedConfig) -> Result<Bz2, CodecError> {
        let config = Config::new(NAME, meta, &["level"])?;
        // numcodecs' default level is 1; zarr-python 3 then writes `{}`.
        let level = config.int("level", 1..=9)?.unwrap_or(1) as u32;
        Ok(Bz2 { level })
    }
}

impl BytesToBytes for Bz2 {
    fn encode(&self, decoded: Cow<'_, [u8]>) -> Result<Vec<u8>, CodecError> {
        let mut encoder = BzEncoder::new(Vec::with_capacity(decoded.len() / 2 + 64), Compression::new(self.level));
        encoder.write_all(&decoded).and_then(|()| encoder.finish()).map_err(|e| CodecError::Encode {
            codec: NAME,
            reason: e.to_string(),
            source: Some(e.into()),
        })
    }

    fn decode(&self, encoded: Cow<'_, [u8]>, max_decoded: u64) -> Result<Vec<u8>, CodecError> {
        if encoded.is_empty() {
            // The decoder would read no stream at all and return nothing; an empty value is no
            // bzip2 data.
            return Err(CodecError::Corrupt { codec: NAME, reason: "empty input".into(), source: None });
        }
        let mut out = Vec::new();
        let mut rest: &[u8] = &encoded;
        let mut first = true;
        while !rest.is_empty() {
            let before = out.len();
            // One byte past the limit tells a bomb from a stream that fills the limit exactly.
            let room = (max_decoded + 1).saturating_sub(before as u64);
            let mut decoder = BzDecoder::new(rest);
            let result = (&mut decoder).take(room).read_to_end(&mut out);
            if out.len() as u64 > max_decoded {
                return Err(CodecError::TooLarge { codec: NAME, limit: max_decoded });
            }
            // Below the limit, `Ok` means the stream reached its end marker.
            match result {
                Ok(_) => rest = decoder.into_inner(),
                Err(e) if first => {
                    return Err(CodecError::Corrupt { codec: NAME, reason: e.to_string(), source: Some(e.into()) })
                }
                Err(_) => {
                    out.truncate(before);
                    break;
                }
            }
            first = false;
        }
        Ok(out)
    }

    fn max_encoded_size(&self, decoded: u64) -> u64 {
        // bzip2's documented worst case: 1% larger plus 600 bytes.
        decoded + decoded / 100 + 600
    }

    fn fixed_encoded_size(&self, _decoded: u64) -> Option<u64> {
        None
    }

    fn to_metadata(&self) -> NamedConfig {
        NamedConfig::with_configuration(NAME, map([("level", self.level.into())]))
    }
}

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION: Registration = Registration {
    names: &[NAME],
    build: Build::BytesToBytes(|meta, _array, _encoded| Ok(Box::new(Bz2::from_metadata(meta)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "int64",
        codecs: r#"[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "numcodecs.bz2", "configuration": {"level": 1}}]"#,
    }),
    v2: Some(V2 { id: "bz2", compressor: Some(|p, _| p.single(NAME, "level", 1.into())), filter: None }),
    short: None,
};

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::Bz2;
    use crate::codec::BytesToBytes;
    use crate::error::CodecError;

    #[test]
    fn round_trip_bounds_and_corruption() {
        let bz2 = Bz2 { level: 9 };
        let data: Vec<u8> = (0..20_000u32).flat_map(|i| (i % 13).to_le_bytes()).collect();
        let enc = bz2.encode(Cow::Borrowed(&data)).unwrap();
        assert_eq!(bz2.decode(Cow::Borrowed(&enc), data.len() as u64).unwrap(), data);
        assert!(matches!(bz2.decode(Cow::Borrowed(&enc), data.len() as u64 - 1), Err(CodecError::TooLarge { .. })));
        let mut twice = enc.clone();
        twice.extend_from_slice(&enc);
        assert_eq!(bz2.decode(Cow::Owned(twice), 2 * data.len() as u64).unwrap().len(), 2 * data.len());
        // Python's bz2.decompress ignores data after a complete stream that is not another one.
        let mut trailing = enc.clone();
        trailing.extend_from_slice(b"trailing garbage");
        assert_eq!(bz2.decode(Cow::Owned(trailing), data.len() as u64).unwrap(), data);
        for bad in [enc[..enc.len() / 2].to_vec(), b"BZh9garbage".to_vec(), vec![]] {
            assert!(matches!(bz2.decode(Cow::Owned(bad), 1 << 20), Err(CodecError::Corrupt { .. })));
        }
    }
}
