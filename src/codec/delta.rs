//! `numcodecs.delta`: the first element, then each element minus the one before it (in v2, over
//! the chunk's flattened elements; in v3, an array -> array codec over the C-order elements).
//! Integers wrap, as numpy's do; floats subtract and add in their own precision, so the
//! round trip of floats is exactly numpy's `np.diff` then `np.cumsum`.

use std::borrow::Cow;

use serde_json::Map;

use super::config::Config;
use super::numpy::{self, Dtype, Float};
use super::registry::{Build, Example, Registration, V2Filter, V2};
use super::{ArrayToArray, ChunkSpec};
use crate::error::CodecError;
use crate::metadata::{DataType, NamedConfig};

pub(crate) const NAME: &str = "numcodecs.delta";

#[derive(Debug)]
pub(crate) struct Delta {
    dtype: Dtype,
    /// Written back when the configuration had it; numcodecs' own `get_config` always does.
    astype: Option<Dtype>,
}

impl Delta {
    pub fn from_metadata(meta: &NamedConfig, decoded: &ChunkSpec) -> Result<Delta, CodecError> {
        let config = Config::new(NAME, meta, &["dtype", "astype"])?;
        let dtype = Dtype::required(&config, "dtype")?;
        dtype.must_be(&config, "dtype", &decoded.data_type)?;
        if !numpy::is_integer(&dtype.data_type) & !numpy::is_float(&dtype.data_type) {
            return Err(config.error("dtype", format!("delta works on integers and floats, not {}", dtype.text)));
        }
        let astype = Dtype::optional(&config, "astype")?;
        if let Some(astype) = &astype {
            // A narrower type would make the differences wrap or round before numpy's cumsum,
            // whose result type rules for mixed types this codec does not reproduce.
            if astype.data_type != dtype.data_type {
                return Err(config.error("astype", "only the same type as \"dtype\" is supported"));
            }
        }
        Ok(Delta { dtype, astype })
    }
}

/// Integer elements of `n` bytes, wrapping: arithmetic modulo 2^64 then truncated to the width
/// is arithmetic modulo 2^(8n), for signed and unsigned types alike.
fn int_elems(data: &[u8], n: usize) -> impl Iterator<Item = u64> + '_ {
    data.chunks_exact(n).map(move |b| {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(b);
        u64::from_le_bytes(w)
    })
}

fn int_delta(data: &[u8], n: usize, decode: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut prev = 0u64;
    for v in int_elems(data, n) {
        let next = if decode { prev.wrapping_add(v) } else { v.wrapping_sub(prev) };
        out.extend_from_slice(&next.to_le_bytes()[..n]);
        prev = if decode { next } else { v };
    }
    out
}

fn float_delta<T: Float>(data: &[u8], decode: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut prev: Option<T> = None;
    for b in data.chunks_exact(T::SIZE) {
        let v = T::read(b);
        // The first element is copied, not computed from zero (0 - -0.0 would lose the sign).
        let next = match prev {
            None => v,
            Some(p) if decode => p + v,
            Some(p) => v - p,
        };
        next.write(&mut out);
        prev = Some(if decode { next } else { v });
    }
    out
}

impl Delta {
    fn apply(&self, data: &[u8], decode: bool) -> Vec<u8> {
        match &self.dtype.data_type {
            DataType::Float16 => float_delta::<half::f16>(data, decode),
            DataType::Float32 => float_delta::<f32>(data, decode),
            DataType::Float64 => float_delta::<f64>(data, decode),
            other => int_delta(data, other.size(), decode),
        }
    }
}

impl ArrayToArray for Delta {
    fn encoded_spec(&self, decoded: &ChunkSpec) -> ChunkSpec {
        decoded.clone()
    }

    fn encode(&self, decoded: Cow<'_, [u8]>, _decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        Ok(self.apply(&decoded, false))
    }

    fn decode(&self, encoded: Vec<u8>, decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        numpy::check_len(NAME, encoded.len(), decoded_spec.num_bytes())?;
        Ok(self.apply(&encoded, true))
    }

    fn to_metadata(&self) -> NamedConfig {
        let mut config = Map::new();
        config.insert("dtype".into(), self.dtype.json());
        if let Some(astype) = &self.astype {
            config.insert("astype".into(), astype.json());
        }
        NamedConfig::with_configuration(NAME, config)
    }
}

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION: Registration = Registration {
    names: &[NAME],
    build: Build::ArrayToArray(|meta, decoded| Ok(Box::new(Delta::from_metadata(meta, decoded)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "int64",
        codecs: r#"[{"name": "numcodecs.delta", "configuration": {"dtype": "<i8"}}, {"name": "bytes", "configuration": {"endian": "little"}}]"#,
    }),
    v2: Some(V2 {
        id: "delta",
        compressor: None,
        filter: Some(V2Filter::Element { input: Some("dtype"), output: Some("astype"), no_byte_order: false }),
    }),
    short: None,
};

#[cfg(test)]
mod tests {
    use super::{float_delta, int_delta};

    #[test]
    fn integers_wrap_and_invert() {
        let data: Vec<u8> = [i16::MIN, i16::MAX, -1, 0, 7].iter().flat_map(|v| v.to_le_bytes()).collect();
        let enc = int_delta(&data, 2, false);
        let values: Vec<i16> = enc.chunks(2).map(|b| i16::from_le_bytes([b[0], b[1]])).collect();
        assert_eq!(values, [i16::MIN, -1, i16::MIN, 1, 7]);
        assert_eq!(int_delta(&enc, 2, true), data);
    }

    #[test]
    fn floats_keep_the_first_element_exactly() {
        let data: Vec<u8> = [-0.0f32, 1.5, 1.25].iter().flat_map(|v| v.to_le_bytes()).collect();
        let enc = float_delta::<f32>(&data, false);
        assert_eq!(&enc[..4], &(-0.0f32).to_le_bytes());
        assert_eq!(float_delta::<f32>(&enc, true), data);
    }
}
