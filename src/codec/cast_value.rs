//! `cast_value` (zarr-extensions; zarr-python 3.2+, which runs it through `cast-value-rs`):
//! elements converted by value to `data_type` when encoding and back when decoding, each
//! conversion rounding once with the configured `rounding` (integer and float targets alike) and
//! handling values beyond the target by `out_of_range`. Optional `scalar_map` pairs replace
//! chosen inputs (NaN included) with chosen outputs before any conversion.
//!
//! What cast-value-rs does, and this too: NaN into an integer type is an error unless mapped;
//! a float result that would round to infinity from a finite input is out of range, which
//! `clamp` turns into the infinity of its sign. The spec's reading is kept where cast-value-rs
//! has none: `clamp` takes ±infinity into an integer type to its minimum or maximum.

use std::borrow::Cow;
use std::cmp::Ordering;

use half::{bf16, f16};
use serde_json::Value;

use super::config::Config;
use super::registry::{Build, Example, Registration};
use super::scale_offset::{int_range, read_int, write_int};
use super::{ArrayToArray, ChunkSpec};
use crate::error::CodecError;
use crate::metadata::{DataType, FillValue, NamedConfig};

pub(crate) const NAME: &str = "cast_value";

/// How a value between two representable ones is rounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rounding {
    NearestEven,
    TowardsZero,
    TowardsPositive,
    TowardsNegative,
    NearestAway,
}

/// What a value beyond the target's range becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OutOfRange {
    Error,
    Clamp,
    Wrap,
}

/// One element's exact value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Num {
    Int(i128),
    Float(f64),
}

/// The float formats, by their bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    F16,
    BF16,
    F32,
    F64,
}

impl Format {
    fn of(t: &DataType) -> Option<Format> {
        Some(match t {
            DataType::Float16 => Format::F16,
            DataType::BFloat16 => Format::BF16,
            DataType::Float32 => Format::F32,
            DataType::Float64 => Format::F64,
            _ => return None,
        })
    }

    fn sign_bit(self) -> u64 {
        match self {
            Format::F16 | Format::BF16 => 1 << 15,
            Format::F32 => 1 << 31,
            Format::F64 => 1 << 63,
        }
    }

    fn value(self, bits: u64) -> f64 {
        match self {
            Format::F16 => f16::from_bits(bits as u16).to_f64(),
            Format::BF16 => bf16::from_bits(bits as u16).to_f64(),
            Format::F32 => f64::from(f32::from_bits(bits as u32)),
            Format::F64 => f64::from_bits(bits),
        }
    }

    /// The nearest value, ties to even (IEEE's conversion).
    fn nearest(self, v: f64) -> u64 {
        match self {
            Format::F16 => f16::from_f64(v).to_bits().into(),
            Format::BF16 => bf16::from_f64(v).to_bits().into(),
            Format::F32 => (v as f32).to_bits().into(),
            Format::F64 => v.to_bits(),
        }
    }

    /// The next value towards +infinity of a value that is not NaN.
    fn up(self, bits: u64) -> u64 {
        let sign = self.sign_bit();
        match bits {
            b if b == sign => 1,
            b if b & sign != 0 => b - 1,
            b if self.value(b).is_infinite() => b,
            b => b + 1,
        }
    }

    /// The next value towards -infinity of a value that is not NaN.
    fn down(self, bits: u64) -> u64 {
        let sign = self.sign_bit();
        match bits {
            0 => sign | 1,
            b if b & sign == 0 => b - 1,
            b if self.value(b).is_infinite() => b,
            b => b + 1,
        }
    }

    fn write(self, bits: u64, out: &mut Vec<u8>) {
        let width = match self {
            Format::F16 | Format::BF16 => 2,
            Format::F32 => 4,
            Format::F64 => 8,
        };
        out.extend_from_slice(&bits.to_le_bytes()[..width]);
    }
}

/// How an exact value compares with a float value that is not NaN.
fn compare(v: Num, x: f64) -> Ordering {
    match v {
        Num::Float(f) => f.partial_cmp(&x).unwrap_or(Ordering::Equal),
        Num::Int(i) => {
            if x.is_infinite() {
                return if x > 0.0 { Ordering::Less } else { Ordering::Greater };
            }
            let floor = x.floor();
            // Every value here is below 2^65 in magnitude; larger floats compare by sign.
            if !(-1.7e38..1.7e38).contains(&floor) {
                return if floor > 0.0 { Ordering::Less } else { Ordering::Greater };
            }
            match i.cmp(&(floor as i128)) {
                Ordering::Equal if x > floor => Ordering::Less,
                other => other,
            }
        }
    }
}

/// `v` rounded into `format` by `rounding`; `None` when a finite value rounds to infinity.
fn to_float(v: Num, format: Format, rounding: Rounding) -> Option<u64> {
    let approx = match v {
        Num::Float(f) if f.is_nan() || f.is_infinite() => return Some(format.nearest(f)),
        Num::Float(f) => f,
        Num::Int(i) => i as f64,
    };
    let mut candidate = format.nearest(approx);
    if compare(v, format.value(candidate)) == Ordering::Equal {
        return Some(candidate);
    }
    // The representable neighbours below and above `v` (the candidate is within one step).
    while compare(v, format.value(candidate)) == Ordering::Less {
        candidate = format.down(candidate);
    }
    while compare(v, format.value(format.up(candidate))) != Ordering::Less {
        candidate = format.up(candidate);
    }
    let (lower, upper) = (candidate, format.up(candidate));
    let positive = compare(v, 0.0) == Ordering::Greater;
    let chosen = match rounding {
        Rounding::TowardsPositive => upper,
        Rounding::TowardsNegative => lower,
        Rounding::TowardsZero if positive => lower,
        Rounding::TowardsZero => upper,
        Rounding::NearestEven | Rounding::NearestAway => {
            let (lo, hi) = (format.value(lower), format.value(upper));
            // An infinite neighbour stands for the power of two one step beyond the largest
            // finite value, which is where IEEE rounding puts the overflow threshold.
            let beyond = |finite: u64| {
                let f = format.value(finite);
                f + (f - format.value(if f > 0.0 { format.down(finite) } else { format.up(finite) }))
            };
            let lo = if lo.is_infinite() { beyond(upper) } else { lo };
            let hi = if hi.is_infinite() { beyond(lower) } else { hi };
            let below = match v {
                Num::Float(f) => (f - lo).partial_cmp(&(hi - f)),
                Num::Int(i) => (i - lo as i128).partial_cmp(&(hi as i128 - i)),
            };
            match below {
                Some(Ordering::Less) => lower,
                Some(Ordering::Greater) => upper,
                _ if rounding == Rounding::NearestAway => {
                    if positive {
                        upper
                    } else {
                        lower
                    }
                }
                _ => {
                    // Ties to the even significand; the step beyond the largest finite value
                    // counts as even, so the tie there goes to infinity.
                    let even = |b: u64| b & 1 == 0 || format.value(b).is_infinite();
                    if even(lower) && !format.value(upper).is_infinite() {
                        lower
                    } else if format.value(upper).is_infinite() || even(upper) {
                        upper
                    } else {
                        lower
                    }
                }
            }
        }
    };
    (!format.value(chosen).is_infinite()).then_some(chosen)
}

/// `v` rounded by `rounding`, for an integer target.
fn round(f: f64, rounding: Rounding) -> f64 {
    match rounding {
        Rounding::NearestEven => f.round_ties_even(),
        Rounding::TowardsZero => f.trunc(),
        Rounding::TowardsPositive => f.ceil(),
        Rounding::TowardsNegative => f.floor(),
        Rounding::NearestAway => f.round(),
    }
}

/// One direction of the cast, with its scalar map.
#[derive(Debug)]
struct Direction {
    from: DataType,
    to: DataType,
    /// Inputs (exact values; NaN matches any NaN) and the target bytes they become.
    map: Vec<(Num, Vec<u8>)>,
}

#[derive(Debug)]
pub(crate) struct CastValue {
    meta: NamedConfig,
    rounding: Rounding,
    out_of_range: OutOfRange,
    encode: Direction,
    decode: Direction,
    encoded_fill: FillValue,
}

fn permitted(t: &DataType) -> bool {
    t.is_integer() || Format::of(t).is_some()
}

fn read(data: &[u8], t: &DataType, i: usize) -> Num {
    match Format::of(t) {
        Some(format) => {
            let n = t.size();
            let mut w = [0u8; 8];
            w[..n].copy_from_slice(&data[i * n..(i + 1) * n]);
            Num::Float(format.value(u64::from_le_bytes(w)))
        }
        None => Num::Int(read_int(data, t, i)),
    }
}

impl CastValue {
    pub fn from_metadata(meta: &NamedConfig, decoded: &ChunkSpec) -> Result<CastValue, CodecError> {
        let config = Config::new(NAME, meta, &["data_type", "rounding", "out_of_range", "scalar_map"])?;
        let target =
            DataType::from_json(config.required("data_type")?).map_err(|e| config.error("data_type", e.to_string()))?;
        let source = decoded.data_type.clone();
        if !permitted(&target) {
            return Err(config.error("data_type", format!("{target} is not an integer or float type")));
        }
        if !permitted(&source) {
            return Err(
                config.error("data_type", format!("the array's data type {source} is not an integer or float type"))
            );
        }
        let rounding = match config.string("rounding")? {
            None | Some("nearest-even") => Rounding::NearestEven,
            Some("towards-zero") => Rounding::TowardsZero,
            Some("towards-positive") => Rounding::TowardsPositive,
            Some("towards-negative") => Rounding::TowardsNegative,
            Some("nearest-away") => Rounding::NearestAway,
            Some(other) => return Err(config.error("rounding", format!("\"{other}\" is not a rounding mode"))),
        };
        let out_of_range = match config.string("out_of_range")? {
            None | Some("error") => OutOfRange::Error,
            Some("clamp") => OutOfRange::Clamp,
            Some("wrap") if target.is_integer() => OutOfRange::Wrap,
            Some("wrap") => {
                return Err(config.error("out_of_range", format!("\"wrap\" needs an integer target, not {target}")))
            }
            Some(other) => {
                return Err(config.error("out_of_range", format!("\"{other}\" is not \"error\", \"clamp\" or \"wrap\"")))
            }
        };
        let (mut encode_map, mut decode_map) = (Vec::new(), Vec::new());
        if let Some(map) = config.get("scalar_map") {
            let Value::Object(map) = map else {
                return Err(config.error("scalar_map", format!("expected an object, found {map}")));
            };
            for (direction, pairs) in map {
                let (list, from, to) = match direction.as_str() {
                    "encode" => (&mut encode_map, &source, &target),
                    "decode" => (&mut decode_map, &target, &source),
                    other => {
                        return Err(config.error("scalar_map", format!("\"{other}\" is not \"encode\" or \"decode\"")))
                    }
                };
                *list = scalar_pairs(&config, direction, pairs, from, to)?;
            }
        }
        let mut codec = CastValue {
            meta: meta.clone(),
            rounding,
            out_of_range,
            encode: Direction { from: source.clone(), to: target.clone(), map: encode_map },
            decode: Direction { from: target.clone(), to: source, map: decode_map },
            encoded_fill: FillValue::zero(target),
        };
        let fill = codec
            .cast(decoded.fill_value.as_le_bytes(), &codec.encode)
            .map_err(|e| config.error("data_type", format!("the fill value cannot be cast: {e}")))?;
        codec.encoded_fill = FillValue::from_le_bytes(fill);
        Ok(codec)
    }

    /// Cast every element of `data` along `dir`; `Err` names the first value that cannot be.
    fn cast(&self, data: &[u8], dir: &Direction) -> Result<Vec<u8>, String> {
        let count = data.len() / dir.from.size();
        let mut out = Vec::with_capacity(count * dir.to.size());
        for i in 0..count {
            let v = read(data, &dir.from, i);
            let mapped = dir.map.iter().find(|(key, _)| match (key, v) {
                (Num::Float(k), Num::Float(x)) if k.is_nan() => x.is_nan(),
                (key, v) => *key == v,
            });
            match mapped {
                Some((_, bytes)) => out.extend_from_slice(bytes),
                None => self.cast_one(v, &dir.to, &mut out)?,
            }
        }
        Ok(out)
    }

    fn cast_one(&self, v: Num, to: &DataType, out: &mut Vec<u8>) -> Result<(), String> {
        if let Some(format) = Format::of(to) {
            let bits = match to_float(v, format, self.rounding) {
                Some(bits) => bits,
                None if self.out_of_range == OutOfRange::Clamp => {
                    format.nearest(if compare(v, 0.0) == Ordering::Greater { f64::INFINITY } else { f64::NEG_INFINITY })
                }
                None => return Err(format!("{} is out of the range of {to}", show(v))),
            };
            format.write(bits, out);
            return Ok(());
        }
        let (min, max) = int_range(to);
        let exact = match v {
            Num::Int(i) => Ok(i),
            Num::Float(f) if f.is_nan() => {
                return Err(format!("NaN cannot be cast to {to} without a scalar_map entry"))
            }
            Num::Float(f) if f.is_infinite() => Err(f),
            Num::Float(f) => {
                let r = round(f, self.rounding);
                if r.abs() < 1.7e38 {
                    Ok(r as i128)
                } else {
                    Err(r)
                }
            }
        };
        let value = match exact {
            Ok(i) if (min..=max).contains(&i) => i,
            _ if self.out_of_range == OutOfRange::Error => {
                return Err(format!("{} is out of the range of {to}", show(v)));
            }
            Ok(i) if self.out_of_range == OutOfRange::Clamp => i.clamp(min, max),
            Err(f) if self.out_of_range == OutOfRange::Clamp => {
                if f > 0.0 {
                    max
                } else {
                    min
                }
            }
            Ok(i) => wrap(i, min, max),
            // A float of magnitude 2^127 or more is a multiple of 2^74: zero modulo any integer
            // type's size.
            Err(f) if f.is_finite() => 0,
            Err(_) => return Err(format!("{} cannot wrap into {to}", show(v))),
        };
        write_int(value, to, out);
        Ok(())
    }
}

/// `i` modulo the size of the integer range `min..=max`, into that range.
fn wrap(i: i128, min: i128, max: i128) -> i128 {
    let size = max - min + 1;
    (i - min).rem_euclid(size) + min
}

fn show(v: Num) -> String {
    match v {
        Num::Int(i) => i.to_string(),
        Num::Float(f) => f.to_string(),
    }
}

/// A `scalar_map` direction: `[[input, output], ...]`, each in the fill value encoding of its type.
fn scalar_pairs(
    config: &Config<'_>,
    direction: &str,
    pairs: &Value,
    from: &DataType,
    to: &DataType,
) -> Result<Vec<(Num, Vec<u8>)>, CodecError> {
    let field = format!("scalar_map.{direction}");
    let list = pairs.as_array().ok_or_else(|| config.error(&field, "expected a list of [input, output] pairs"))?;
    let mut out = Vec::with_capacity(list.len().min(1024));
    for (i, pair) in list.iter().enumerate() {
        let field = format!("{field}[{i}]");
        let Some([key, value]) = pair.as_array().map(Vec::as_slice) else {
            return Err(config.error(&field, format!("expected an [input, output] pair, found {pair}")));
        };
        let key = FillValue::from_json(key, from.clone())
            .map_err(|e| config.error(&field, format!("the input is not a value of {from}: {e}")))?;
        let value = FillValue::from_json(value, to.clone())
            .map_err(|e| config.error(&field, format!("the output is not a value of {to}: {e}")))?;
        out.push((read(key.as_le_bytes(), from, 0), value.as_le_bytes().to_vec()));
    }
    Ok(out)
}

impl ArrayToArray for CastValue {
    fn encoded_spec(&self, decoded: &ChunkSpec) -> ChunkSpec {
        ChunkSpec {
            shape: decoded.shape.clone(),
            data_type: self.encode.to.clone(),
            fill_value: self.encoded_fill.clone(),
        }
    }

    fn encode(&self, decoded: Cow<'_, [u8]>, _decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        self.cast(&decoded, &self.encode).map_err(|reason| CodecError::Encode { codec: NAME, reason, source: None })
    }

    fn decode(&self, encoded: Vec<u8>, decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        let expected = decoded_spec.num_elements().saturating_mul(self.decode.from.size() as u64);
        super::numpy::check_len(NAME, encoded.len(), expected)?;
        self.cast(&encoded, &self.decode).map_err(|reason| CodecError::Corrupt { codec: NAME, reason, source: None })
    }

    fn to_metadata(&self) -> NamedConfig {
        self.meta.clone()
    }
}

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION: Registration = Registration {
    names: &[NAME],
    build: Build::ArrayToArray(|meta, decoded| Ok(Box::new(CastValue::from_metadata(meta, decoded)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "float64",
        codecs: r#"[{"name": "cast_value", "configuration": {"data_type": "int16"}}, {"name": "bytes", "configuration": {"endian": "little"}}]"#,
    }),
    v2: None,
    short: None,
};

#[cfg(test)]
mod tests {
    use super::{to_float, wrap, Format, Num, Rounding};

    fn f32_of(v: Num, r: Rounding) -> Option<f32> {
        to_float(v, Format::F32, r).map(|b| f32::from_bits(b as u32))
    }

    #[test]
    fn float_targets_round_by_the_mode_as_cast_value_rs_does() {
        let x = Num::Float(1.0 + 2f64.powi(-30));
        let next = f32::from_bits(1.0f32.to_bits() + 1);
        assert_eq!(f32_of(x, Rounding::NearestEven), Some(1.0));
        assert_eq!(f32_of(x, Rounding::TowardsPositive), Some(next));
        assert_eq!(f32_of(Num::Float(-(1.0 + 2f64.powi(-30))), Rounding::TowardsNegative), Some(-next));
        // Ties: 1 + 2^-24 lies halfway between 1 and the next f32.
        let tie = Num::Float(1.0 + 2f64.powi(-24));
        assert_eq!(f32_of(tie, Rounding::NearestEven), Some(1.0));
        assert_eq!(f32_of(tie, Rounding::NearestAway), Some(next));
        // 2^24 + 1 from an integer, towards +infinity.
        assert_eq!(f32_of(Num::Int((1 << 24) + 1), Rounding::TowardsPositive), Some(16_777_218.0));
        // float16: 2049 and 2051 are ties; 65519 rounds down to the largest half, 65520 overflows.
        let to_half =
            |v: i128, r| to_float(Num::Int(v), Format::F16, r).map(|b| half::f16::from_bits(b as u16).to_f64());
        assert_eq!(to_half(2049, Rounding::NearestEven), Some(2048.0));
        assert_eq!(to_half(2049, Rounding::NearestAway), Some(2050.0));
        assert_eq!(to_half(2051, Rounding::NearestEven), Some(2052.0));
        assert_eq!(to_half(65519, Rounding::NearestEven), Some(65504.0));
        assert_eq!(to_half(65520, Rounding::NearestEven), None);
        assert_eq!(to_half(65519, Rounding::TowardsZero), Some(65504.0));
        assert_eq!(to_half(65510, Rounding::TowardsPositive), None);
        // The smallest f32 subnormal: 1e-45 rounds to it, 1e-46 to zero.
        assert_eq!(f32_of(Num::Float(1e-45), Rounding::NearestEven), Some(f32::from_bits(1)));
        assert_eq!(f32_of(Num::Float(1e-46), Rounding::NearestEven), Some(0.0));
        assert_eq!(f32_of(Num::Float(1e-46), Rounding::TowardsPositive), Some(f32::from_bits(1)));
    }

    #[test]
    fn wrapping_is_modular_in_the_targets_range() {
        assert_eq!(wrap(300, -128, 127), 44);
        assert_eq!(wrap(-129, -128, 127), 127);
        assert_eq!(wrap(-1, 0, 255), 255);
        assert_eq!(wrap(256, 0, 255), 0);
    }
}
