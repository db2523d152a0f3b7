//! `scale_offset` (zarr-extensions; zarr-python 3.2+): encoded `(x - offset) * scale`, decoded
//! `x / scale + offset`, in the arithmetic of the array's own type. Floats compute each step in
//! their precision (half through `f32`, rounded back at each step, as numpy's half loops do), so
//! the stored bits are zarr-python's. Integers compute exactly: a result outside the type, or a
//! stored value that `scale` does not divide, is an error, never a wrapped value (the spec's
//! rule).

use std::borrow::Cow;

use half::f16;

use super::config::Config;
use super::numpy::Scalar;
use super::registry::{Build, Example, Registration};
use super::{ArrayToArray, ChunkSpec};
use crate::error::CodecError;
use crate::metadata::{DataType, FillValue, NamedConfig};

pub(crate) const NAME: &str = "scale_offset";

/// The two parameters, as values of the array's type.
#[derive(Clone, Copy, Debug)]
enum Arith {
    Int { offset: i128, scale: i128 },
    F16 { offset: f16, scale: f16 },
    F32 { offset: f32, scale: f32 },
    F64 { offset: f64, scale: f64 },
}

#[derive(Debug)]
pub(crate) struct ScaleOffset {
    /// The metadata as written (zarr-python omits default members, and may omit the whole
    /// configuration), written back unchanged.
    meta: NamedConfig,
    data_type: DataType,
    arith: Arith,
    /// The array's fill value once encoded: the fill value of the codecs after this one.
    encoded_fill: FillValue,
}

/// The smallest and largest value of an integer type.
pub(crate) fn int_range(t: &DataType) -> (i128, i128) {
    let bits = 8 * t.size() as u32;
    let signed = matches!(t, DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64);
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// Element `i` of an integer type as an exact integer.
pub(crate) fn read_int(data: &[u8], t: &DataType, i: usize) -> i128 {
    match Scalar::read(data, t, i) {
        Scalar::Int(v) => v.into(),
        Scalar::UInt(v) => v.into(),
        Scalar::Float(v) => v as i128,
    }
}

/// Append `v`, which fits the integer type `t`, as an element of `t`.
pub(crate) fn write_int(v: i128, t: &DataType, out: &mut Vec<u8>) {
    out.extend_from_slice(&v.to_le_bytes()[..t.size()]);
}

fn parameter(config: &Config<'_>, field: &str, t: &DataType, default: i64) -> Result<Vec<u8>, CodecError> {
    match config.get(field) {
        None => {
            let mut out = Vec::with_capacity(8);
            Scalar::Int(default).write(t, &mut out);
            Ok(out)
        }
        // The spec: the fill value encoding of the array's type (so `"NaN"`, `"0x..."` too).
        Some(value) => FillValue::from_json(value, t.clone())
            .map(|v| v.as_le_bytes().to_vec())
            .map_err(|e| config.error(field, format!("not a value of the data type {t}: {e}"))),
    }
}

impl ScaleOffset {
    pub fn from_metadata(meta: &NamedConfig, decoded: &ChunkSpec) -> Result<ScaleOffset, CodecError> {
        let config = Config::new(NAME, meta, &["offset", "scale"])?;
        let t = &decoded.data_type;
        let offset = parameter(&config, "offset", t, 0)?;
        let scale = parameter(&config, "scale", t, 1)?;
        let arith = match t {
            DataType::Float16 => Arith::F16 {
                offset: f16::from_le_bytes([offset[0], offset[1]]),
                scale: f16::from_le_bytes([scale[0], scale[1]]),
            },
            DataType::Float32 => Arith::F32 {
                offset: f32::from_le_bytes(offset[..4].try_into().expect("4 bytes")),
                scale: f32::from_le_bytes(scale[..4].try_into().expect("4 bytes")),
            },
            DataType::Float64 => Arith::F64 {
                offset: f64::from_le_bytes(offset[..8].try_into().expect("8 bytes")),
                scale: f64::from_le_bytes(scale[..8].try_into().expect("8 bytes")),
            },
            t if t.is_integer() => Arith::Int { offset: read_int(&offset, t, 0), scale: read_int(&scale, t, 0) },
            other => return Err(config.error("data_type", format!("{other} is not an integer or float16/32/64 type"))),
        };
        let zero = match arith {
            Arith::Int { scale, .. } => scale == 0,
            Arith::F16 { scale, .. } => scale.to_f32() == 0.0,
            Arith::F32 { scale, .. } => scale == 0.0,
            Arith::F64 { scale, .. } => scale == 0.0,
        };
        if zero {
            return Err(config.error("scale", "must not be zero"));
        }
        let mut codec =
            ScaleOffset { meta: meta.clone(), data_type: t.clone(), arith, encoded_fill: decoded.fill_value.clone() };
        let fill = codec
            .encode_values(decoded.fill_value.as_le_bytes())
            .map_err(|e| config.error("scale", format!("the fill value cannot be encoded: {e}")))?;
        codec.encoded_fill = FillValue::from_le_bytes(fill);
        Ok(codec)
    }

    fn encode_values(&self, data: &[u8]) -> Result<Vec<u8>, CodecError> {
        let t = &self.data_type;
        let mut out = Vec::with_capacity(data.len());
        match self.arith {
            Arith::Int { offset, scale } => {
                let (min, max) = int_range(t);
                for i in 0..data.len() / t.size() {
                    let x = read_int(data, t, i);
                    let v = (x - offset).checked_mul(scale).filter(|v| (min..=max).contains(v)).ok_or_else(|| {
                        CodecError::Encode {
                            codec: NAME,
                            reason: format!("({x} - {offset}) * {scale} is outside the range of {t}"),
                            source: None,
                        }
                    })?;
                    write_int(v, t, &mut out);
                }
            }
            Arith::F16 { offset, scale } => {
                for b in data.chunks_exact(2) {
                    out.extend_from_slice(&((f16::from_le_bytes([b[0], b[1]]) - offset) * scale).to_le_bytes());
                }
            }
            Arith::F32 { offset, scale } => {
                for b in data.chunks_exact(4) {
                    let x = f32::from_le_bytes(b.try_into().expect("4 bytes"));
                    out.extend_from_slice(&((x - offset) * scale).to_le_bytes());
                }
            }
            Arith::F64 { offset, scale } => {
                for b in data.chunks_exact(8) {
                    let x = f64::from_le_bytes(b.try_into().expect("8 bytes"));
                    out.extend_from_slice(&((x - offset) * scale).to_le_bytes());
                }
            }
        }
        Ok(out)
    }
}

impl ArrayToArray for ScaleOffset {
    fn encoded_spec(&self, decoded: &ChunkSpec) -> ChunkSpec {
        ChunkSpec {
            shape: decoded.shape.clone(),
            data_type: decoded.data_type.clone(),
            fill_value: self.encoded_fill.clone(),
        }
    }

    fn encode(&self, decoded: Cow<'_, [u8]>, _decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        self.encode_values(&decoded)
    }

    fn decode(&self, encoded: Vec<u8>, decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        let t = &self.data_type;
        super::numpy::check_len(NAME, encoded.len(), decoded_spec.num_bytes())?;
        let mut out = Vec::with_capacity(encoded.len());
        match self.arith {
            Arith::Int { offset, scale } => {
                let (min, max) = int_range(t);
                for i in 0..encoded.len() / t.size() {
                    let x = read_int(&encoded, t, i);
                    let v = x / scale + offset;
                    if x % scale != 0 || !(min..=max).contains(&v) {
                        return Err(CodecError::Corrupt {
                            codec: NAME,
                            reason: format!("{x} / {scale} + {offset} is not a value of {t}"),
                            source: None,
                        });
                    }
                    write_int(v, t, &mut out);
                }
            }
            Arith::F16 { offset, scale } => {
                for b in encoded.chunks_exact(2) {
                    out.extend_from_slice(&(f16::from_le_bytes([b[0], b[1]]) / scale + offset).to_le_bytes());
                }
            }
            Arith::F32 { offset, scale } => {
                for b in encoded.chunks_exact(4) {
                    let x = f32::from_le_bytes(b.try_into().expect("4 bytes"));
                    out.extend_from_slice(&(x / scale + offset).to_le_bytes());
                }
            }
            Arith::F64 { offset, scale } => {
                for b in encoded.chunks_exact(8) {
                    let x = f64::from_le_bytes(b.try_into().expect("8 bytes"));
                    out.extend_from_slice(&(x / scale + offset).to_le_bytes());
                }
            }
        }
        Ok(out)
    }

    fn to_metadata(&self) -> NamedConfig {
        self.meta.clone()
    }
}

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION: Registration = Registration {
    names: &[NAME],
    build: Build::ArrayToArray(|meta, decoded| Ok(Box::new(ScaleOffset::from_metadata(meta, decoded)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "float64",
        codecs: r#"[{"name": "scale_offset", "configuration": {"offset": 1.5, "scale": 4.0}}, {"name": "bytes", "configuration": {"endian": "little"}}]"#,
    }),
    v2: None,
    short: None,
};
