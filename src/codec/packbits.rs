//! `numcodecs.packbits`: booleans packed eight to a byte, first element in the most significant
//! bit (numpy's `packbits`), after one header byte giving how many bits of the last byte are
//! padding. The encoded array is one-dimensional `uint8` of `1 + ceil(n / 8)` elements.

use std::borrow::Cow;

use serde_json::Map;

use super::config::Config;
use super::registry::{Build, Example, Registration, V2Filter, V2};
use super::{ArrayToArray, ChunkSpec};
use crate::error::CodecError;
use crate::metadata::{DataType, FillValue, NamedConfig};

pub(crate) const NAME: &str = "numcodecs.packbits";

#[derive(Debug)]
pub(crate) struct PackBits;

impl PackBits {
    pub fn from_metadata(meta: &NamedConfig, decoded: &ChunkSpec) -> Result<PackBits, CodecError> {
        let config = Config::new(NAME, meta, &[])?;
        if decoded.data_type != DataType::Bool {
            return Err(config.error("(data type)", format!("packbits needs bool data, not {}", &decoded.data_type)));
        }
        Ok(PackBits)
    }
}

fn padding(n: u64) -> u8 {
    ((8 - n % 8) % 8) as u8
}

impl ArrayToArray for PackBits {
    fn encoded_spec(&self, decoded: &ChunkSpec) -> ChunkSpec {
        ChunkSpec {
            shape: vec![1 + decoded.num_elements().div_ceil(8)],
            data_type: DataType::UInt8,
            fill_value: FillValue::zero(DataType::UInt8),
        }
    }

    fn encode(&self, decoded: Cow<'_, [u8]>, _decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        let mut out = Vec::with_capacity(1 + decoded.len().div_ceil(8));
        out.push(padding(decoded.len() as u64));
        for group in decoded.chunks(8) {
            let byte = group.iter().enumerate().fold(0u8, |acc, (i, &b)| acc | (u8::from(b != 0) << (7 - i)));
            out.push(byte);
        }
        Ok(out)
    }

    fn decode(&self, encoded: Vec<u8>, decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        let n = decoded_spec.num_elements();
        super::numpy::check_len(NAME, encoded.len(), 1 + n.div_ceil(8))?;
        // The header must agree with the chunk's size; any other value would make numcodecs
        // return a different number of elements.
        if encoded[0] != padding(n) {
            return Err(CodecError::Corrupt {
                codec: NAME,
                reason: format!("header says {} padding bits, the chunk's size needs {}", encoded[0], padding(n)),
                source: None,
            });
        }
        let mut out = Vec::with_capacity(n as usize);
        for &byte in &encoded[1..] {
            for i in 0..8 {
                out.push((byte >> (7 - i)) & 1);
            }
        }
        out.truncate(n as usize);
        Ok(out)
    }

    fn to_metadata(&self) -> NamedConfig {
        NamedConfig::with_configuration(NAME, Map::new())
    }
}

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION: Registration = Registration {
    names: &[NAME],
    build: Build::ArrayToArray(|meta, decoded| Ok(Box::new(PackBits::from_metadata(meta, decoded)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example { data_type: "bool", codecs: r#"[{"name": "numcodecs.packbits"}, {"name": "bytes"}]"# }),
    v2: Some(V2 {
        id: "packbits",
        compressor: None,
        filter: Some(V2Filter::Element { input: None, output: None, no_byte_order: true }),
    }),
    short: None,
};
