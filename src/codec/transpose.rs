//! `transpose`: permutes the dimensions of a chunk; `encoded_shape[i] = decoded_shape[order[i]]`.

use serde_json::Value;

use super::config::{map, Config};
use super::region::for_each_index;
use super::registry::{Build, Example, Registration, Settings, Short};
use super::{ArrayToArray, ChunkSpec};
use crate::error::CodecError;
use crate::metadata::NamedConfig;

/// The codec's name in `zarr.json`.
pub(crate) const NAME: &str = "transpose";

#[derive(Debug)]
pub(crate) struct Transpose {
    order: Vec<usize>,
    inverse: Vec<usize>,
}

impl Transpose {
    pub fn from_metadata(meta: &NamedConfig, decoded: &ChunkSpec) -> Result<Transpose, CodecError> {
        let config = Config::new("transpose", meta, &["order"])?;
        let rank = decoded.shape.len();
        let order: Vec<usize> = match config.required("order")? {
            Value::String(s) => {
                return Err(config.error(
                    "order",
                    format!("the legacy order \"{s}\" is not valid in Zarr v3; give an explicit permutation"),
                ))
            }
            Value::Array(items) => items
                .iter()
                .map(|v| {
                    v.as_u64()
                        .map(|u| u as usize)
                        .ok_or_else(|| config.error("order", format!("{v} is not a dimension index")))
                })
                .collect::<Result<_, _>>()?,
            other => return Err(config.error("order", format!("expected a list, found {other}"))),
        };
        let mut seen = vec![false; rank];
        if order.len() != rank || order.iter().any(|&d| d >= rank || std::mem::replace(&mut seen[d], true)) {
            return Err(config.error("order", format!("{order:?} is not a permutation of 0..{rank}")));
        }
        let mut inverse = vec![0; rank];
        for (i, &d) in order.iter().enumerate() {
            inverse[d] = i;
        }
        Ok(Transpose { order, inverse })
    }
}

/// Transpose a C-order array of `shape` so that output dimension `k` is input dimension `perm[k]`.
fn permute(input: &[u8], shape: &[u64], perm: &[usize], elem: usize) -> Vec<u8> {
    let n = shape.len();
    let mut strides = vec![1u64; n];
    for d in (0..n.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let out_shape: Vec<u64> = perm.iter().map(|&d| shape[d]).collect();
    let out_strides: Vec<u64> = perm.iter().map(|&d| strides[d]).collect();
    let mut out = vec![0u8; input.len()];
    if n == 0 || input.is_empty() {
        out.copy_from_slice(input);
        return out;
    }
    // Walk the output in C order: the outer dimensions by index, the last one as a strided run.
    let last = out_shape[n - 1] as usize;
    let last_stride = out_strides[n - 1] as usize * elem;
    let outer: Vec<std::ops::Range<u64>> = out_shape[..n - 1].iter().map(|&s| 0..s).collect();
    let mut pos = 0usize;
    for_each_index(&outer, |idx| {
        let base = idx.iter().zip(&out_strides).map(|(i, s)| i * s).sum::<u64>() as usize * elem;
        for j in 0..last {
            let src = base + j * last_stride;
            out[pos..pos + elem].copy_from_slice(&input[src..src + elem]);
            pos += elem;
        }
    });
    out
}

impl ArrayToArray for Transpose {
    fn encoded_spec(&self, decoded: &ChunkSpec) -> ChunkSpec {
        ChunkSpec { shape: self.order.iter().map(|&d| decoded.shape[d]).collect(), ..decoded.clone() }
    }

    fn encode(&self, decoded: std::borrow::Cow<'_, [u8]>, decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        Ok(permute(&decoded, &decoded_spec.shape, &self.order, decoded_spec.data_type.size()))
    }

    fn decode(&self, encoded: Vec<u8>, decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        if encoded.len() as u64 != decoded_spec.num_bytes() {
            return Err(CodecError::SizeMismatch {
                codec: "transpose",
                expected: decoded_spec.num_bytes(),
                actual: encoded.len() as u64,
            });
        }
        let encoded_shape = self.encoded_spec(decoded_spec).shape;
        Ok(permute(&encoded, &encoded_shape, &self.inverse, decoded_spec.data_type.size()))
    }

    fn to_metadata(&self) -> NamedConfig {
        NamedConfig::with_configuration("transpose", map([("order", self.order.clone().into())]))
    }
}

/// The typed `Codec::Transpose` of the Rust API as its `zarr.json` entry.
pub(crate) fn typed(order: Vec<usize>) -> NamedConfig {
    NamedConfig::with_configuration(NAME, map([("order", order.into())]))
}

/// `transpose:ORDER`, the axes separated by commas (`transpose:1,0`).
const SHORT: Short =
    Short { usage: ":ORDER", most: 1, build: |s: &Settings<'_>| Ok(typed(super::short::axes(s, 0, "order")?)) };

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION: Registration = Registration {
    names: &[NAME],
    build: Build::ArrayToArray(|meta, decoded| Ok(Box::new(Transpose::from_metadata(meta, decoded)?))),
    fixed_size_only: true,
    home: file!(),
    example: Some(Example {
        data_type: "float32",
        codecs: r#"[{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes", "configuration": {"endian": "little"}}]"#,
    }),
    v2: None,
    short: Some(SHORT),
};

#[cfg(test)]
mod tests {
    use super::permute;

    #[test]
    fn permute_2d_is_a_matrix_transpose_and_inverts() {
        let a: Vec<u8> = (0..6).collect(); // 2x3
        let t = permute(&a, &[2, 3], &[1, 0], 1);
        assert_eq!(t, vec![0, 3, 1, 4, 2, 5]);
        assert_eq!(permute(&t, &[3, 2], &[1, 0], 1), a);
    }

    #[test]
    fn permute_3d_cycle_inverts() {
        let a: Vec<u8> = (0..24).collect(); // 2x3x4
        let t = permute(&a, &[2, 3, 4], &[2, 0, 1], 1); // shape 4x2x3
        assert_eq!(t[1], 4, "out (0,0,1) = in (0,1,0)");
        // inverse of [2,0,1] is [1,2,0]
        assert_eq!(permute(&t, &[4, 2, 3], &[1, 2, 0], 1), a);
    }
}
