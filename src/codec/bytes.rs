//! The `bytes` codec: elements in C order with a fixed byte order.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::registry::{Build, Example, Registration, Settings, Short};
use super::{ArrayToBytes, ChunkSpec};
use crate::error::CodecError;
use crate::metadata::{DataType, Layout, NamedConfig};

/// The codec's name in `zarr.json`.
pub(crate) const NAME: &str = "bytes";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Endian {
    Little,
    Big,
}

#[derive(Debug)]
pub(crate) struct BytesCodec {
    /// `None` for one-byte types written without an `endian` member.
    endian: Option<Endian>,
}

fn config_error(field: &str, reason: impl Into<String>) -> CodecError {
    CodecError::InvalidConfiguration { codec: "bytes".into(), field: field.into(), reason: reason.into() }
}

impl BytesCodec {
    pub fn from_metadata(meta: &NamedConfig, data_type: DataType) -> Result<BytesCodec, CodecError> {
        let empty = Map::new();
        let config = meta.configuration.as_ref().unwrap_or(&empty);
        if let Some(extra) = config.keys().find(|k| *k != "endian") {
            return Err(config_error(extra, "not a member of the bytes codec's configuration"));
        }
        let endian = match config.get("endian") {
            None => None,
            Some(Value::String(s)) if s == "little" => Some(Endian::Little),
            Some(Value::String(s)) if s == "big" => Some(Endian::Big),
            Some(other) => return Err(config_error("endian", format!("must be \"little\" or \"big\", found {other}"))),
        };
        if data_type.is_variable_length() {
            return Err(CodecError::InvalidChain {
                reason: format!(
                    "the data type {data_type} has no fixed element size; its array -> bytes codec is {}",
                    super::vlen::codec_name(&data_type).unwrap_or("vlen-utf8 or vlen-bytes")
                ),
            });
        }
        if matches!(data_type, DataType::Structured(_)) && endian == Some(Endian::Big) {
            return Err(config_error("endian", "structured elements are stored with little-endian fields"));
        }
        if endian.is_none() && data_type.layout() != Layout::Bytes {
            return Err(config_error(
                "endian",
                format!("required for the {}-byte data type {data_type}", data_type.size()),
            ));
        }
        Ok(BytesCodec { endian })
    }

    fn swap_needed(&self, spec: &ChunkSpec) -> Option<usize> {
        match (self.endian, spec.data_type.layout()) {
            (Some(Endian::Big), Layout::Scalar(n) | Layout::Pair(n) | Layout::Units(n)) => Some(n),
            _ => None,
        }
    }
}

fn check_len(len: usize, spec: &ChunkSpec) -> Result<(), CodecError> {
    if len as u64 == spec.num_bytes() {
        Ok(())
    } else {
        Err(CodecError::SizeMismatch { codec: "bytes", expected: spec.num_bytes(), actual: len as u64 })
    }
}

/// Reverse the bytes of every `width`-byte scalar in place.
fn swap_in_place(bytes: &mut [u8], width: usize) {
    for scalar in bytes.chunks_exact_mut(width) {
        scalar.reverse();
    }
}

impl ArrayToBytes for BytesCodec {
    fn encode<'a>(&self, decoded: Cow<'a, [u8]>, spec: &ChunkSpec) -> Result<Cow<'a, [u8]>, CodecError> {
        match self.swap_needed(spec) {
            Some(width) => {
                let mut swapped = decoded.into_owned();
                swap_in_place(&mut swapped, width);
                Ok(Cow::Owned(swapped))
            }
            None => Ok(decoded),
        }
    }

    fn decode(&self, encoded: Cow<'_, [u8]>, spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        check_len(encoded.len(), spec)?;
        let mut decoded = encoded.into_owned();
        if let Some(width) = self.swap_needed(spec) {
            swap_in_place(&mut decoded, width);
        }
        Ok(decoded)
    }

    fn decodes_as_is(&self, spec: &ChunkSpec) -> bool {
        self.swap_needed(spec).is_none()
    }

    fn decode_in_place(&self, data: &mut [u8], spec: &ChunkSpec) -> Option<Result<(), CodecError>> {
        Some(check_len(data.len(), spec).map(|()| {
            if let Some(width) = self.swap_needed(spec) {
                swap_in_place(data, width);
            }
        }))
    }

    fn max_encoded_size(&self, spec: &ChunkSpec) -> u64 {
        spec.num_bytes()
    }

    fn fixed_encoded_size(&self, spec: &ChunkSpec) -> Option<u64> {
        Some(spec.num_bytes())
    }

    fn to_metadata(&self) -> NamedConfig {
        let mut config = Map::new();
        match self.endian {
            Some(Endian::Little) => config.insert("endian".into(), "little".into()),
            Some(Endian::Big) => config.insert("endian".into(), "big".into()),
            None => return NamedConfig::new("bytes"),
        };
        NamedConfig::with_configuration("bytes", config)
    }
}

/// The typed `Codec::Bytes` of the Rust API as its `zarr.json` entry.
pub(crate) fn typed(endian: Option<crate::metadata::Endian>) -> NamedConfig {
    match endian {
        None => NamedConfig::new(NAME),
        Some(endian) => {
            let endian = if endian == crate::metadata::Endian::Little { "little" } else { "big" };
            NamedConfig::with_configuration(NAME, [("endian".to_owned(), endian.into())].into_iter().collect())
        }
    }
}

/// `bytes[:ENDIAN]`: `little` or `big`, little when not given.
const SHORT: Short = Short {
    usage: "[:ENDIAN]",
    most: 1,
    build: |s: &Settings<'_>| match s.text(0, "little") {
        "little" => Ok(typed(Some(crate::metadata::Endian::Little))),
        "big" => Ok(typed(Some(crate::metadata::Endian::Big))),
        other => Err(s.error("endian", format!("\"{other}\" is neither little nor big"))),
    },
};

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION: Registration = Registration {
    names: &[NAME],
    build: Build::ArrayToBytes(|meta, decoded| {
        Ok(Box::new(BytesCodec::from_metadata(meta, decoded.data_type.clone())?))
    }),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "uint16",
        codecs: r#"[{"name": "bytes", "configuration": {"endian": "little"}}]"#,
    }),
    v2: None,
    short: Some(SHORT),
};
