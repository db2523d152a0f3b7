//! `crc32c`: appends the CRC-32C (Castagnoli) of the data as 4 little-endian bytes.

use super::config::Config;
use super::registry::{Build, Example, Registration};
use super::BytesToBytes;
use crate::error::CodecError;
use crate::metadata::NamedConfig;

/// The codec's name in `zarr.json`.
pub(crate) const NAME: &str = "crc32c";

#[derive(Debug)]
pub(crate) struct Crc32c;

impl Crc32c {
    pub fn from_metadata(meta: &NamedConfig) -> Result<Crc32c, CodecError> {
        Config::new("crc32c", meta, &[])?;
        Ok(Crc32c)
    }
}

/// Check the trailing checksum of `encoded`; the length of the data before it.
fn verify(encoded: &[u8], max_decoded: u64) -> Result<usize, CodecError> {
    let Some(body_len) = encoded.len().checked_sub(4) else {
        return Err(CodecError::Corrupt {
            codec: "crc32c",
            reason: format!("{} bytes cannot hold a checksum", encoded.len()),
            source: None,
        });
    };
    if body_len as u64 > max_decoded {
        return Err(CodecError::TooLarge { codec: "crc32c", limit: max_decoded });
    }
    let stored = u32::from_le_bytes(encoded[body_len..].try_into().expect("4 bytes"));
    let computed = crc32c::crc32c(&encoded[..body_len]);
    if stored != computed {
        return Err(CodecError::ChecksumMismatch { codec: "crc32c", stored, computed });
    }
    Ok(body_len)
}

impl BytesToBytes for Crc32c {
    fn encode(&self, decoded: std::borrow::Cow<'_, [u8]>) -> Result<Vec<u8>, CodecError> {
        let mut decoded = decoded.into_owned();
        let sum = crc32c::crc32c(&decoded);
        decoded.extend_from_slice(&sum.to_le_bytes());
        Ok(decoded)
    }

    fn decode(&self, encoded: std::borrow::Cow<'_, [u8]>, max_decoded: u64) -> Result<Vec<u8>, CodecError> {
        let body_len = verify(&encoded, max_decoded)?;
        Ok(match encoded {
            std::borrow::Cow::Owned(mut body) => {
                body.truncate(body_len);
                body
            }
            std::borrow::Cow::Borrowed(all) => all[..body_len].to_vec(),
        })
    }

    fn decode_into(&self, encoded: &[u8], max_decoded: u64, out: &mut Vec<u8>) -> Result<(), CodecError> {
        let body_len = verify(encoded, max_decoded)?;
        out.clear();
        out.extend_from_slice(&encoded[..body_len]);
        Ok(())
    }

    fn max_encoded_size(&self, decoded: u64) -> u64 {
        decoded + 4
    }

    fn fixed_encoded_size(&self, decoded: u64) -> Option<u64> {
        Some(decoded + 4)
    }

    fn to_metadata(&self) -> NamedConfig {
        NamedConfig::new("crc32c")
    }
}

/// The typed `Codec::Crc32c` of the Rust API as its `zarr.json` entry.
pub(crate) fn typed() -> NamedConfig {
    NamedConfig::new(NAME)
}

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION: Registration = Registration {
    names: &[NAME],
    build: Build::BytesToBytes(|meta, _array, _encoded| Ok(Box::new(Crc32c::from_metadata(meta)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "uint16",
        codecs: r#"[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]"#,
    }),
    v2: None,
    short: None,
};
