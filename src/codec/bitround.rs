//! `numcodecs.bitround`: keeps the top `keepbits` bits of a float's mantissa, rounding half to
//! even on the integer view of the float, then zeroes the rest (better compression, bounded
//! error). Decoding is the identity: the rounded floats are the data.

use std::borrow::Cow;

use super::config::{map, Config};
use super::registry::{Build, Example, Registration, V2Filter, V2};
use super::{ArrayToArray, ChunkSpec};
use crate::error::CodecError;
use crate::metadata::{DataType, NamedConfig};

pub(crate) const NAME: &str = "numcodecs.bitround";

#[derive(Debug)]
pub(crate) struct BitRound {
    keepbits: u32,
    /// The mantissa width of the data type (10, 23 or 52).
    bits: u32,
}

impl BitRound {
    pub fn from_metadata(meta: &NamedConfig, decoded: &ChunkSpec) -> Result<BitRound, CodecError> {
        let config = Config::new(NAME, meta, &["keepbits"])?;
        config.required("keepbits")?;
        let bits = match &decoded.data_type {
            DataType::Float16 => 10,
            DataType::Float32 => 23,
            DataType::Float64 => 52,
            other => {
                return Err(config.error("keepbits", format!("bit rounding needs float16, 32 or 64 data, not {other}")))
            }
        };
        let keepbits = config.int("keepbits", 0..=i64::from(bits))?.expect("required") as u32;
        Ok(BitRound { keepbits, bits })
    }

    /// numcodecs' arithmetic on the signed integer view: `b += ((b >> m) & 1) + (1 << (m-1)) - 1;
    /// b &= mask`, wrapping. Done on 64-bit values sign-extended from the element width, so the
    /// shifts are arithmetic like numpy's, and truncated back.
    fn round(&self, data: &[u8]) -> Vec<u8> {
        if self.keepbits == self.bits {
            return data.to_vec();
        }
        let width = match self.bits {
            10 => 2,
            23 => 4,
            _ => 8,
        };
        let m = self.bits - self.keepbits;
        let mask = (-1i64 >> m) << m;
        let half_quantum = (1i64 << (m - 1)) - 1;
        let mut out = Vec::with_capacity(data.len());
        for e in data.chunks_exact(width) {
            let mut w = [0u8; 8];
            w[..width].copy_from_slice(e);
            let shift = 64 - 8 * width as u32;
            let b = (i64::from_le_bytes(w) << shift) >> shift;
            let b = b.wrapping_add(((b >> m) & 1) + half_quantum) & mask;
            out.extend_from_slice(&b.to_le_bytes()[..width]);
        }
        out
    }
}

impl ArrayToArray for BitRound {
    fn encoded_spec(&self, decoded: &ChunkSpec) -> ChunkSpec {
        decoded.clone()
    }

    fn encode(&self, decoded: Cow<'_, [u8]>, _decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        Ok(self.round(&decoded))
    }

    fn decode(&self, encoded: Vec<u8>, decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        super::numpy::check_len(NAME, encoded.len(), decoded_spec.num_bytes())?;
        Ok(encoded)
    }

    fn to_metadata(&self) -> NamedConfig {
        NamedConfig::with_configuration(NAME, map([("keepbits", self.keepbits.into())]))
    }
}

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION: Registration = Registration {
    names: &[NAME],
    build: Build::ArrayToArray(|meta, decoded| Ok(Box::new(BitRound::from_metadata(meta, decoded)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "float32",
        codecs: r#"[{"name": "numcodecs.bitround", "configuration": {"keepbits": 10}}, {"name": "bytes", "configuration": {"endian": "little"}}]"#,
    }),
    v2: Some(V2 {
        id: "bitround",
        compressor: None,
        filter: Some(V2Filter::Element { input: None, output: None, no_byte_order: false }),
    }),
    short: None,
};

#[cfg(test)]
mod tests {
    use super::BitRound;

    #[test]
    fn rounds_half_to_even_on_the_mantissa() {
        let r = BitRound { keepbits: 1, bits: 23 };
        let data: Vec<u8> = [1.0f32, 1.25, 1.75, 1.3].iter().flat_map(|v| v.to_le_bytes()).collect();
        let out: Vec<f32> = r.round(&data).chunks(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
        // 1.25 is halfway between 1.0 and 1.5: to even (1.0); 1.75 between 1.5 and 2.0: to 2.0.
        assert_eq!(out, [1.0, 1.0, 2.0, 1.5]);
    }
}
