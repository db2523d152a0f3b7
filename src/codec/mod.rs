//! Codecs and the codec chain (spec "Chunk encoding").
//!
//! A chain is zero or more array -> array codecs, exactly one array -> bytes codec, and zero or
//! more bytes -> bytes codecs. Decoded chunks are C-order little-endian element bytes: the same
//! layout as zarrdb's raw region API, so the common `bytes`(little) codec is a plain copy.

mod bytes;

use crate::error::CodecError;
use crate::metadata::{DataType, FillValue, NamedConfig};

/// What a codec receives or produces when it works on arrays.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ChunkSpec {
    pub shape: Vec<u64>,
    pub data_type: DataType,
    pub fill_value: FillValue,
}

impl ChunkSpec {
    pub fn num_elements(&self) -> u64 {
        self.shape.iter().product()
    }

    pub fn num_bytes(&self) -> u64 {
        self.num_elements() * self.data_type.size() as u64
    }
}

/// A codec that turns an array into bytes (exactly one per chain).
pub(crate) trait ArrayToBytes: Send + Sync + std::fmt::Debug {
    fn encode(&self, decoded: Vec<u8>, spec: &ChunkSpec) -> Result<Vec<u8>, CodecError>;
    /// Must return exactly `spec.num_bytes()` bytes or an error.
    fn decode(&self, encoded: Vec<u8>, spec: &ChunkSpec) -> Result<Vec<u8>, CodecError>;
    fn to_metadata(&self) -> NamedConfig;
}

/// The parsed, validated codec list of an array.
#[derive(Debug)]
pub(crate) struct CodecChain {
    array_to_bytes: Box<dyn ArrayToBytes>,
}

impl CodecChain {
    /// Build the chain from the metadata's `codecs`, refusing unknown names and invalid chains
    /// before any data is written.
    pub fn from_metadata(codecs: &[NamedConfig], data_type: DataType) -> Result<CodecChain, CodecError> {
        let mut array_to_bytes: Option<Box<dyn ArrayToBytes>> = None;
        for codec in codecs {
            match codec.name.as_str() {
                "bytes" => {
                    if array_to_bytes.is_some() {
                        return Err(CodecError::InvalidChain { reason: "more than one array -> bytes codec".into() });
                    }
                    array_to_bytes = Some(Box::new(bytes::BytesCodec::from_metadata(codec, data_type)?));
                }
                name => return Err(CodecError::UnknownCodec { name: name.to_owned() }),
            }
        }
        let array_to_bytes =
            array_to_bytes.ok_or_else(|| CodecError::InvalidChain { reason: "no array -> bytes codec".into() })?;
        Ok(CodecChain { array_to_bytes })
    }

    /// Encode one decoded chunk (C-order little-endian element bytes).
    pub fn encode(&self, decoded: Vec<u8>, spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        debug_assert_eq!(decoded.len() as u64, spec.num_bytes());
        self.array_to_bytes.encode(decoded, spec)
    }

    /// Decode one stored chunk; the result has exactly the chunk's size.
    pub fn decode(&self, encoded: Vec<u8>, spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        let decoded = self.array_to_bytes.decode(encoded, spec)?;
        if decoded.len() as u64 != spec.num_bytes() {
            return Err(CodecError::SizeMismatch {
                codec: "chain",
                expected: spec.num_bytes(),
                actual: decoded.len() as u64,
            });
        }
        Ok(decoded)
    }

    /// The chain as metadata, in canonical form (e.g. the short form `"bytes"` becomes an object).
    pub fn to_metadata(&self) -> Vec<NamedConfig> {
        vec![self.array_to_bytes.to_metadata()]
    }
}
