//! `numcodecs.zlib`: an RFC 1950 zlib stream, levels 0..=9. Zarr v2's "zlib" compressor writes
//! these; zarr-python 3 names the codec `numcodecs.zlib` when it reads such arrays as v3. The v3
//! `gzip` codec reads RFC 1952 streams only, whose header differs, so the two are not
//! interchangeable.

use std::io::{Read, Write};

use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;

use super::config::{map, Config};
use super::registry::{Build, Example, Registration, V2};
use super::BytesToBytes;
use crate::error::CodecError;
use crate::metadata::NamedConfig;

pub(crate) const NAME: &str = "numcodecs.zlib";

#[derive(Debug)]
pub(crate) struct Zlib {
    level: u32,
}

impl Zlib {
    pub fn from_metadata(meta: &NamedConfig) -> Result<Zlib, CodecError> {
        let config = Config::new(NAME, meta, &["level"])?;
        config.required("level")?;
        let level = config.int("level", 0..=9)?.expect("required") as u32;
        Ok(Zlib { level })
    }
}

impl BytesToBytes for Zlib {
    fn encode(&self, decoded: std::borrow::Cow<'_, [u8]>) -> Result<Vec<u8>, CodecError> {
        let mut encoder = ZlibEncoder::new(Vec::with_capacity(decoded.len() / 2 + 64), Compression::new(self.level));
        encoder.write_all(&decoded).and_then(|()| encoder.finish()).map_err(|e| CodecError::Encode {
            codec: NAME,
            reason: e.to_string(),
            source: Some(e.into()),
        })
    }

    fn decode(&self, encoded: std::borrow::Cow<'_, [u8]>, max_decoded: u64) -> Result<Vec<u8>, CodecError> {
        // One byte past the limit tells a bomb from a stream that fills the limit exactly, without
        // ever holding more than the limit.
        let mut decoder = ZlibDecoder::new(&encoded[..]);
        let mut out = Vec::new();
        (&mut decoder).take(max_decoded.saturating_add(1)).read_to_end(&mut out).map_err(|e| CodecError::Corrupt {
            codec: NAME,
            reason: e.to_string(),
            source: Some(e.into()),
        })?;
        if out.len() as u64 > max_decoded {
            return Err(CodecError::TooLarge { codec: NAME, limit: max_decoded });
        }
        // flate2 stops at the end of the zlib stream; bytes after it mean the value is not one
        // stream (e.g. two concatenated chunks), which numcodecs would refuse too.
        if decoder.total_in() != encoded.len() as u64 {
            return Err(CodecError::Corrupt {
                codec: NAME,
                reason: format!(
                    "{} bytes follow the end of the zlib stream",
                    encoded.len() as u64 - decoder.total_in()
                ),
                source: None,
            });
        }
        Ok(out)
    }

    fn max_encoded_size(&self, decoded: u64) -> u64 {
        super::gzip::deflate_bound(decoded)
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
    build: Build::BytesToBytes(|meta, _array, _encoded| Ok(Box::new(Zlib::from_metadata(meta)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "uint16",
        codecs: r#"[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "numcodecs.zlib", "configuration": {"level": 1}}]"#,
    }),
    v2: Some(V2 { id: "zlib", compressor: Some(|p, _| super::gzip::deflate_from_v2(NAME, p)), filter: None }),
    short: None,
};

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use serde_json::json;

    use super::{Zlib, NAME};
    use crate::codec::{BytesToBytes, ChunkSpec, CodecChain};
    use crate::error::CodecError;
    use crate::metadata::{ArrayMetadata, DataType, FillValue, NamedConfig};

    fn codec(config: serde_json::Value) -> Result<Zlib, CodecError> {
        let meta = NamedConfig::from_json(&json!({"name": NAME, "configuration": config}), "codecs[0]", false)
            .expect("well-formed entry");
        Zlib::from_metadata(&meta)
    }

    fn sample() -> Vec<u8> {
        (0..10_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect()
    }

    #[test]
    fn round_trip_every_level_and_reads_plain_zlib_streams() {
        let data = sample();
        for level in 0..=9 {
            let zlib = codec(json!({"level": level})).unwrap();
            let encoded = zlib.encode(Cow::Borrowed(&data)).unwrap();
            assert_eq!(&encoded[..1], &[0x78], "a zlib header (deflate, 32 KiB window)");
            assert_eq!(zlib.decode(Cow::Owned(encoded), data.len() as u64).unwrap(), data);
        }
        // A stream written by another encoder (flate2 directly, as Python's zlib.compress would).
        let mut other = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut other, &data).unwrap();
        let foreign = other.finish().unwrap();
        assert_eq!(codec(json!({"level": 1})).unwrap().decode(Cow::Owned(foreign), 1 << 20).unwrap(), data);
    }

    #[test]
    fn gzip_streams_and_garbage_are_corrupt() {
        let zlib = codec(json!({"level": 5})).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, b"hello").unwrap();
        let garbage = zlib.decode(Cow::Borrowed(b"not a zlib stream"), 1 << 20).unwrap_err();
        assert!(std::error::Error::source(&garbage).is_some(), "the inflater's error is kept: {garbage:?}");
        for bad in [gz.finish().unwrap(), b"not a zlib stream".to_vec(), vec![]] {
            match zlib.decode(Cow::Owned(bad), 1 << 20) {
                Err(CodecError::Corrupt { codec, source, .. }) => {
                    assert_eq!(codec, NAME);
                    // Where the inflater refused the bytes, its own error is kept, not only its text.
                    if let Some(source) = source {
                        assert!(source.downcast_ref::<std::io::Error>().is_some(), "{source}");
                    }
                }
                other => panic!("expected Corrupt, got {other:?}"),
            }
        }
    }

    #[test]
    fn truncated_flipped_and_trailing_bytes_are_corrupt() {
        let zlib = codec(json!({"level": 6})).unwrap();
        let data = sample();
        let encoded = zlib.encode(Cow::Borrowed(&data)).unwrap();
        let truncated = encoded[..encoded.len() - 3].to_vec();
        let mut flipped = encoded.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 0xff; // the Adler-32 trailer
        let mut trailing = encoded.clone();
        trailing.extend_from_slice(&encoded);
        for bad in [truncated, flipped, trailing] {
            assert!(
                matches!(zlib.decode(Cow::Owned(bad), data.len() as u64), Err(CodecError::Corrupt { codec: NAME, .. })),
                "must be Corrupt"
            );
        }
    }

    #[test]
    fn decoding_past_the_limit_is_refused() {
        let zlib = codec(json!({"level": 9})).unwrap();
        let encoded = zlib.encode(Cow::Owned(vec![0u8; 1 << 20])).unwrap();
        assert!(matches!(
            zlib.decode(Cow::Borrowed(&encoded), (1 << 20) - 1),
            Err(CodecError::TooLarge { codec: NAME, limit }) if limit == (1 << 20) - 1
        ));
        assert_eq!(zlib.decode(Cow::Owned(encoded), 1 << 20).unwrap().len(), 1 << 20);
    }

    #[test]
    fn invalid_or_missing_configuration_is_refused() {
        for config in
            [json!({"level": 10}), json!({"level": -1}), json!({"level": "1"}), json!({}), json!({"level": 1, "x": 0})]
        {
            assert!(
                matches!(codec(config.clone()), Err(CodecError::InvalidConfiguration { ref codec, .. }) if codec == NAME),
                "{config} must be refused"
            );
        }
        assert!(matches!(
            Zlib::from_metadata(&NamedConfig::new(NAME)),
            Err(CodecError::InvalidConfiguration { ref field, .. }) if field == "level"
        ));
    }

    #[test]
    fn array_metadata_with_the_codec_opens_and_writes_it_back() {
        let doc = br#"{"zarr_format": 3, "node_type": "array", "shape": [6], "data_type": "int16",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "numcodecs.zlib", "configuration": {"level": 1}}]}"#;
        let meta = ArrayMetadata::from_json(doc).unwrap();
        let spec =
            ChunkSpec { shape: vec![4], data_type: DataType::Int16, fill_value: FillValue::zero(DataType::Int16) };
        let chain = CodecChain::from_metadata(&meta.codecs, &spec).unwrap();
        assert_eq!(chain.to_metadata()[1], meta.codecs[1]);
        let data: Vec<u8> = [1i16, -2, 3, -4].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(chain.decode(chain.encode(&data[..]).unwrap()).unwrap(), data);

        let mut bad = meta.codecs.clone();
        bad[1] = NamedConfig::new(NAME);
        assert!(matches!(CodecChain::from_metadata(&bad, &spec), Err(CodecError::InvalidConfiguration { .. })));
    }
}
