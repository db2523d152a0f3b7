//! `numcodecs.shuffle`: a bytes -> bytes transposition that groups the first byte of every
//! element, then every second byte, and so on (`elementsize` bytes per element); the
//! uncompressed counterpart of blosc's byte shuffle. An `elementsize` of 0 or 1 changes nothing.

use std::borrow::Cow;

use super::config::{map, Config};
use super::registry::{Build, Example, Registration, V2Filter, V2};
use super::BytesToBytes;
use crate::error::CodecError;
use crate::metadata::NamedConfig;

pub(crate) const NAME: &str = "numcodecs.shuffle";

#[derive(Debug)]
pub(crate) struct Shuffle {
    elementsize: usize,
}

impl Shuffle {
    /// `item_size`: the array's element size, which zarr-python 3 uses when `elementsize` is
    /// absent (numcodecs' own default, 4, applies to v2 filters, whose import writes it out).
    pub fn from_metadata(meta: &NamedConfig, item_size: usize) -> Result<Shuffle, CodecError> {
        let config = Config::new(NAME, meta, &["elementsize"])?;
        let elementsize = config.int("elementsize", 0..=i64::from(u32::MAX))?.map_or(item_size, |v| v as usize);
        Ok(Shuffle { elementsize })
    }

    /// Reorder `data` as a `rows x cols` matrix into `cols x rows`; numcodecs refuses data that
    /// is not whole elements.
    fn transpose(&self, data: &[u8], decode: bool) -> Option<Vec<u8>> {
        let size = self.elementsize;
        if size <= 1 {
            return Some(data.to_vec());
        }
        if data.len() % size != 0 {
            return None;
        }
        let count = data.len() / size;
        let (rows, cols) = if decode { (size, count) } else { (count, size) };
        let mut out = vec![0u8; data.len()];
        for r in 0..rows {
            for c in 0..cols {
                out[c * rows + r] = data[r * cols + c];
            }
        }
        Some(out)
    }
}

impl BytesToBytes for Shuffle {
    fn encode(&self, decoded: Cow<'_, [u8]>) -> Result<Vec<u8>, CodecError> {
        self.transpose(&decoded, false).ok_or_else(|| CodecError::Encode {
            codec: NAME,
            reason: format!("{} bytes are not whole elements of {} bytes", decoded.len(), self.elementsize),
            source: None,
        })
    }

    fn decode(&self, encoded: Cow<'_, [u8]>, max_decoded: u64) -> Result<Vec<u8>, CodecError> {
        if encoded.len() as u64 > max_decoded {
            return Err(CodecError::TooLarge { codec: NAME, limit: max_decoded });
        }
        self.transpose(&encoded, true).ok_or_else(|| CodecError::Corrupt {
            codec: NAME,
            reason: format!("{} bytes are not whole elements of {} bytes", encoded.len(), self.elementsize),
            source: None,
        })
    }

    fn max_encoded_size(&self, decoded: u64) -> u64 {
        decoded
    }

    fn fixed_encoded_size(&self, decoded: u64) -> Option<u64> {
        Some(decoded)
    }

    fn to_metadata(&self) -> NamedConfig {
        NamedConfig::with_configuration(NAME, map([("elementsize", self.elementsize.into())]))
    }
}

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION: Registration = Registration {
    names: &[NAME],
    // numcodecs shuffles by the array's element size, whatever a filter made of the elements.
    build: Build::BytesToBytes(|meta, array, _encoded| {
        Ok(Box::new(Shuffle::from_metadata(meta, array.data_type.size())?))
    }),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "int64",
        codecs: r#"[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "numcodecs.shuffle", "configuration": {"elementsize": 8}}]"#,
    }),
    v2: Some(V2 {
        id: "shuffle",
        compressor: None,
        // numcodecs' default element size; the v3 codec's default is the array's item size.
        filter: Some(V2Filter::Bytes(|p, _| {
            let mut params = p.params.clone();
            params.entry("elementsize").or_insert(serde_json::Value::from(4));
            Ok(NamedConfig::with_configuration(NAME, params))
        })),
    }),
    short: None,
};

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::Shuffle;
    use crate::codec::BytesToBytes;

    #[test]
    fn groups_bytes_by_position_and_inverts() {
        let s = Shuffle { elementsize: 4 };
        let data: Vec<u8> = (0..12).collect();
        let enc = s.encode(Cow::Borrowed(&data)).unwrap();
        assert_eq!(enc, [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
        assert_eq!(s.decode(Cow::Owned(enc), 12).unwrap(), data);
        assert!(s.decode(Cow::Owned(vec![0; 13]), 13).is_err());
        assert!(s.decode(Cow::Owned(vec![0; 16]), 12).is_err());
    }
}
