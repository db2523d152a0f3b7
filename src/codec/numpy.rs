//! What numcodecs' filters share: numpy data type strings (`"<i4"`, `"float32"`) in their
//! configurations, and numpy's element casts (`ndarray.astype`), which several filters end with.
//! Decoded chunks are little-endian element bytes, so the filters work on values and the byte
//! order in a dtype string only matters to the Zarr v2 import (see `transfer::plan::filters`).

use half::f16;
use serde_json::Value;

use super::config::Config;
use crate::error::CodecError;
use crate::metadata::DataType;

/// A numeric data type named by a numcodecs configuration member, with the string as written (so
/// the configuration is written back unchanged).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Dtype {
    pub data_type: DataType,
    pub text: String,
}

/// Parse a numpy dtype string: `<i4`, `>f8`, `|u1`, `i2`, `int32`, `bool`, `|b1`. Only the types
/// numcodecs' numeric filters accept are known; strings, objects and datetimes are not.
pub(crate) fn parse(text: &str) -> Option<DataType> {
    let body = text.strip_prefix(['<', '>', '|', '=']).unwrap_or(text);
    Some(match body {
        "b1" | "?" | "bool" => DataType::Bool,
        "i1" | "int8" => DataType::Int8,
        "i2" | "int16" => DataType::Int16,
        "i4" | "int32" => DataType::Int32,
        "i8" | "int64" => DataType::Int64,
        "u1" | "uint8" => DataType::UInt8,
        "u2" | "uint16" => DataType::UInt16,
        "u4" | "uint32" => DataType::UInt32,
        "u8" | "uint64" => DataType::UInt64,
        "f2" | "float16" => DataType::Float16,
        "f4" | "float32" => DataType::Float32,
        "f8" | "float64" => DataType::Float64,
        _ => return None,
    })
}

impl Dtype {
    /// The member `field` of `config`, when present.
    pub fn optional(config: &Config<'_>, field: &str) -> Result<Option<Dtype>, CodecError> {
        let Some(text) = config.string(field)? else { return Ok(None) };
        match parse(text) {
            Some(data_type) => Ok(Some(Dtype { data_type, text: text.to_owned() })),
            None => Err(config.error(field, format!("\"{text}\" is not a numeric numpy data type"))),
        }
    }

    pub fn required(config: &Config<'_>, field: &str) -> Result<Dtype, CodecError> {
        config.required(field)?;
        Ok(Dtype::optional(config, field)?.expect("required"))
    }

    /// The member `field`, or the type of the data the codec receives when it is absent, as
    /// zarr-python 3 fills it in (`evolve_from_array_spec`) for fixedscaleoffset, quantize and
    /// astype; written back explicitly.
    pub fn or_received(config: &Config<'_>, field: &str, received: &DataType) -> Result<Dtype, CodecError> {
        match Dtype::optional(config, field)? {
            Some(dtype) => Ok(dtype),
            None => {
                let kind = if is_float(received) {
                    'f'
                } else if *received == DataType::Bool {
                    'b'
                } else if is_integer(received) && received.name().starts_with('u') {
                    'u'
                } else {
                    'i'
                };
                let order = if received.size() == 1 { '|' } else { '<' };
                let text = format!("{order}{kind}{}", received.size());
                match parse(&text) {
                    Some(data_type) => Ok(Dtype { data_type, text }),
                    None => Err(config.error(field, format!("required for the data type {received}"))),
                }
            }
        }
    }

    /// Refuse a configuration whose dtype is not the type of the data the codec will receive:
    /// numcodecs would reinterpret the bytes, which a codec working on values cannot reproduce.
    pub fn must_be(&self, config: &Config<'_>, field: &str, actual: &DataType) -> Result<(), CodecError> {
        if self.data_type == *actual {
            Ok(())
        } else {
            Err(config.error(field, format!("\"{}\" does not match the data type {actual} it receives", self.text)))
        }
    }

    pub fn json(&self) -> Value {
        Value::String(self.text.clone())
    }
}

pub(crate) fn is_float(data_type: &DataType) -> bool {
    data_type.is_float()
}

pub(crate) fn is_integer(data_type: &DataType) -> bool {
    data_type.is_integer()
}

/// One element's exact value: every numeric type's values fit one of these without rounding, so
/// a cast through `Scalar` rounds once, like numpy's direct casts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Scalar {
    Int(i64),
    UInt(u64),
    Float(f64),
}

impl Scalar {
    /// Element `i` of little-endian `data` of type `data_type` (a numeric type or bool).
    pub fn read(data: &[u8], data_type: &DataType, i: usize) -> Scalar {
        let n = data_type.size();
        let b = &data[i * n..(i + 1) * n];
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(b);
        match data_type {
            DataType::Bool => Scalar::UInt(u64::from(b[0] != 0)),
            DataType::Int8 => Scalar::Int(i64::from(b[0] as i8)),
            DataType::Int16 => Scalar::Int(i64::from(i16::from_le_bytes([b[0], b[1]]))),
            DataType::Int32 => Scalar::Int(i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            DataType::Int64 => Scalar::Int(i64::from_le_bytes(w)),
            DataType::Float16 => Scalar::Float(f16::from_le_bytes([b[0], b[1]]).to_f64()),
            DataType::Float32 => Scalar::Float(f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            DataType::Float64 => Scalar::Float(f64::from_le_bytes(w)),
            // Unsigned types (and, unreachably, others) zero-extend.
            _ => Scalar::UInt(u64::from_le_bytes(w)),
        }
    }

    /// Append this value as an element of `data_type`, converting like numpy's unsafe cast:
    /// integers wrap, floats round to nearest, floats to integers truncate toward zero.
    /// numpy leaves floats outside the target's range to the C compiler, which on x86-64
    /// converts to `int32` (targets up to 16 bits and `int32`) or `int64` (wider) and keeps the
    /// low bits, so e.g. -1.0 becomes 255 as `uint8`. That is reproduced, with the "integer
    /// indefinite" (the intermediate type's minimum) for NaN and values beyond it.
    pub fn write(self, data_type: &DataType, out: &mut Vec<u8>) {
        // 2^31 and 2^63, exactly.
        const I32_END: f64 = 2_147_483_648.0;
        const I64_END: f64 = 9_223_372_036_854_775_808.0;
        let via_i32 = |v: f64| if v > -I32_END - 1.0 && v < I32_END { v as i32 } else { i32::MIN };
        let via_i64 = |v: f64| if (-I64_END..I64_END).contains(&v) { v as i64 } else { i64::MIN };
        let via_u64 = |v: f64| if v >= I64_END { v as u64 } else { via_i64(v) as u64 };
        // An integer target, with the intermediate type float conversions go through.
        macro_rules! int {
            ($t:ty, $via:expr) => {
                match self {
                    Scalar::Int(v) => v as $t,
                    Scalar::UInt(v) => v as $t,
                    Scalar::Float(v) => $via(v) as $t,
                }
            };
        }
        macro_rules! float {
            ($t:ty) => {
                match self {
                    Scalar::Int(v) => v as $t,
                    Scalar::UInt(v) => v as $t,
                    Scalar::Float(v) => v as $t,
                }
            };
        }
        match data_type {
            DataType::Bool => out.push(u8::from(match self {
                Scalar::Int(v) => v != 0,
                Scalar::UInt(v) => v != 0,
                Scalar::Float(v) => v != 0.0,
            })),
            DataType::Int8 => out.extend_from_slice(&int!(i8, via_i32).to_le_bytes()),
            DataType::Int16 => out.extend_from_slice(&int!(i16, via_i32).to_le_bytes()),
            DataType::Int32 => out.extend_from_slice(&int!(i32, via_i32).to_le_bytes()),
            DataType::Int64 => out.extend_from_slice(&int!(i64, via_i64).to_le_bytes()),
            DataType::UInt8 => out.extend_from_slice(&int!(u8, via_i32).to_le_bytes()),
            DataType::UInt16 => out.extend_from_slice(&int!(u16, via_i32).to_le_bytes()),
            DataType::UInt32 => out.extend_from_slice(&int!(u32, via_i64).to_le_bytes()),
            DataType::UInt64 => out.extend_from_slice(&int!(u64, via_u64).to_le_bytes()),
            DataType::Float16 => {
                let h = match self {
                    // numpy converts integers to half through double; so does this.
                    Scalar::Int(v) => f16::from_f64(v as f64),
                    Scalar::UInt(v) => f16::from_f64(v as f64),
                    Scalar::Float(v) => f16::from_f64(v),
                };
                out.extend_from_slice(&h.to_le_bytes())
            }
            DataType::Float32 => out.extend_from_slice(&float!(f32).to_le_bytes()),
            DataType::Float64 => out.extend_from_slice(&float!(f64).to_le_bytes()),
            other => unreachable!("{other} is refused when the codec is configured"),
        }
    }
}

/// `ndarray.astype(to)` of little-endian elements of type `from`.
pub(crate) fn cast(data: &[u8], from: &DataType, to: &DataType) -> Vec<u8> {
    if from == to {
        return data.to_vec();
    }
    let count = data.len() / from.size();
    let mut out = Vec::with_capacity(count * to.size());
    for i in 0..count {
        Scalar::read(data, from, i).write(to, &mut out);
    }
    out
}

/// The size check every filter's decoder makes before reading elements.
pub(crate) fn check_len(codec: &'static str, len: usize, expected: u64) -> Result<(), CodecError> {
    if len as u64 == expected {
        Ok(())
    } else {
        Err(CodecError::SizeMismatch { codec, expected, actual: len as u64 })
    }
}

/// Floating-point element types, for arithmetic done in the array's own precision as numpy does
/// (a Python scalar operand takes the array's type, NEP 50). `f16` arithmetic goes through `f32`
/// and rounds each result to half, like numpy's half loops.
pub(crate) trait Float:
    Copy
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    const SIZE: usize;
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    /// `np.around` / `np.rint`: round half to even.
    fn rint(self) -> Self;
    fn read(b: &[u8]) -> Self;
    fn write(self, out: &mut Vec<u8>);
}

macro_rules! float_impl {
    ($t:ty, $n:expr, $from:expr, $to:expr, $rint:expr) => {
        impl Float for $t {
            const SIZE: usize = $n;
            fn from_f64(v: f64) -> Self {
                $from(v)
            }
            fn to_f64(self) -> f64 {
                $to(self)
            }
            fn rint(self) -> Self {
                $rint(self)
            }
            fn read(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().expect("element width"))
            }
            fn write(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes())
            }
        }
    };
}

float_impl!(f16, 2, f16::from_f64, f16::to_f64, |v: f16| f16::from_f32(v.to_f32().round_ties_even()));
float_impl!(f32, 4, |v: f64| v as f32, f64::from, f32::round_ties_even);
float_impl!(f64, 8, |v: f64| v, |v: f64| v, f64::round_ties_even);
