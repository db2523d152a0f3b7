//! `numcodecs.fixedscaleoffset`: `round((x - offset) * scale)` stored as `astype`, decoded as
//! `enc / scale + offset` cast back to `dtype`. The arithmetic follows numpy 2's type rules
//! (NEP 50) step by step, since that is what makes the stored bytes bit-exact:
//! - float data: both steps in the data's own precision, the Python scalars cast to it;
//! - integer data: a step with an integer operand stays in the integer type (wrapping), a step
//!   with a float operand moves to float64;
//! - decoding: integer encoded data is divided in float64, float encoded data in its precision.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::config::Config;
use super::numpy::{self, Dtype, Float, Scalar};
use super::registry::{Build, Example, Registration, V2Filter, V2};
use super::{ArrayToArray, ChunkSpec};
use crate::error::CodecError;
use crate::metadata::{DataType, FillValue, NamedConfig};

pub(crate) const NAME: &str = "numcodecs.fixedscaleoffset";

#[derive(Debug)]
pub(crate) struct FixedScaleOffset {
    offset: Scalar,
    scale: Scalar,
    /// The JSON numbers as written, so integer-valued floats (`10.0`) stay floats.
    raw: (Value, Value),
    dtype: Dtype,
    astype: Option<Dtype>,
}

fn number(config: &Config<'_>, field: &str) -> Result<(Scalar, Value), CodecError> {
    let value = config.required(field)?;
    let scalar = if let Some(i) = value.as_i64() {
        Scalar::Int(i)
    } else if let Some(u) = value.as_u64() {
        Scalar::UInt(u)
    } else if let Some(f) = value.as_f64() {
        Scalar::Float(f)
    } else {
        return Err(config.error(field, format!("expected a number, found {value}")));
    };
    Ok((scalar, value.clone()))
}

/// `v` wrapped to the integer type `t`, as numpy's integer arithmetic does.
fn wrap(v: i128, t: &DataType) -> Scalar {
    let mut out = Vec::with_capacity(8);
    Scalar::Int(v as i64).write(t, &mut out);
    Scalar::read(&out, t, 0)
}

fn as_i128(s: Scalar) -> Option<i128> {
    match s {
        Scalar::Int(v) => Some(i128::from(v)),
        Scalar::UInt(v) => Some(i128::from(v)),
        Scalar::Float(_) => None,
    }
}

fn as_f64(s: Scalar) -> f64 {
    match s {
        Scalar::Int(v) => v as f64,
        Scalar::UInt(v) => v as f64,
        Scalar::Float(v) => v,
    }
}

/// The range of an integer data type, for numpy 2's refusal of Python ints that do not fit.
fn fits(v: i128, t: &DataType) -> bool {
    let bits = 8 * t.size() as u32;
    let signed = matches!(t, DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64);
    let (lo, hi) = if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
    (lo..=hi).contains(&v)
}

impl FixedScaleOffset {
    pub fn from_metadata(meta: &NamedConfig, decoded: &ChunkSpec) -> Result<FixedScaleOffset, CodecError> {
        let config = Config::new(NAME, meta, &["offset", "scale", "dtype", "astype"])?;
        let (offset, raw_offset) = number(&config, "offset")?;
        let (scale, raw_scale) = number(&config, "scale")?;
        let dtype = Dtype::or_received(&config, "dtype", &decoded.data_type)?;
        dtype.must_be(&config, "dtype", &decoded.data_type)?;
        let astype = Dtype::optional(&config, "astype")?;
        let numeric = |t: &DataType| numpy::is_integer(t) || numpy::is_float(t);
        if !numeric(&dtype.data_type) {
            return Err(config.error("dtype", format!("{} is not an integer or float type", dtype.text)));
        }
        if let Some(a) = astype.as_ref().filter(|a| !numeric(&a.data_type)) {
            return Err(config.error("astype", format!("{} is not an integer or float type", a.text)));
        }
        if numpy::is_integer(&dtype.data_type) {
            for (field, v) in [("offset", offset), ("scale", scale)] {
                if as_i128(v).is_some_and(|i| !fits(i, &dtype.data_type)) {
                    return Err(config.error(field, format!("does not fit the data type {}", &dtype.data_type)));
                }
            }
        }
        Ok(FixedScaleOffset { offset, scale, raw: (raw_offset, raw_scale), dtype, astype })
    }

    fn astype(&self) -> &DataType {
        self.astype.as_ref().map_or(&self.dtype.data_type, |a| &a.data_type)
    }

    fn encode_float<T: Float>(&self, data: &[u8], out: &mut Vec<u8>) {
        let (offset, scale) = (T::from_f64(as_f64(self.offset)), T::from_f64(as_f64(self.scale)));
        let to = self.astype();
        for b in data.chunks_exact(T::SIZE) {
            let v = ((T::read(b) - offset) * scale).rint();
            Scalar::Float(v.to_f64()).write(to, out);
        }
    }

    fn encode_int(&self, data: &[u8], out: &mut Vec<u8>) {
        let (from, to) = (&self.dtype.data_type, self.astype());
        for i in 0..data.len() / from.size() {
            let x = Scalar::read(data, from, i);
            let x = as_i128(x).expect("integer data");
            let step = match as_i128(self.offset) {
                Some(o) => wrap(x - o, from),
                None => Scalar::Float(x as f64 - as_f64(self.offset)),
            };
            let step = match (as_i128(step), as_i128(self.scale)) {
                (Some(s), Some(k)) => wrap(s.wrapping_mul(k), from),
                _ => Scalar::Float((as_f64(step) * as_f64(self.scale)).round_ties_even()),
            };
            step.write(to, out);
        }
    }

    fn decode_float<T: Float>(&self, data: &[u8], out: &mut Vec<u8>) {
        let (offset, scale) = (T::from_f64(as_f64(self.offset)), T::from_f64(as_f64(self.scale)));
        for b in data.chunks_exact(T::SIZE) {
            Scalar::Float((T::read(b) / scale + offset).to_f64()).write(&self.dtype.data_type, out);
        }
    }

    fn decode_int(&self, data: &[u8], out: &mut Vec<u8>) {
        let from = self.astype();
        for i in 0..data.len() / from.size() {
            let e = as_f64(Scalar::read(data, from, i));
            Scalar::Float(e / as_f64(self.scale) + as_f64(self.offset)).write(&self.dtype.data_type, out);
        }
    }

    fn encode_values(&self, data: &[u8]) -> Vec<u8> {
        let count = data.len() / self.dtype.data_type.size();
        let mut out = Vec::with_capacity(count * self.astype().size());
        match &self.dtype.data_type {
            DataType::Float16 => self.encode_float::<half::f16>(data, &mut out),
            DataType::Float32 => self.encode_float::<f32>(data, &mut out),
            DataType::Float64 => self.encode_float::<f64>(data, &mut out),
            _ => self.encode_int(data, &mut out),
        }
        out
    }
}

impl ArrayToArray for FixedScaleOffset {
    fn encoded_spec(&self, decoded: &ChunkSpec) -> ChunkSpec {
        ChunkSpec {
            shape: decoded.shape.clone(),
            data_type: self.astype().clone(),
            fill_value: FillValue::from_le_bytes(self.encode_values(decoded.fill_value.as_le_bytes())),
        }
    }

    fn encode(&self, decoded: Cow<'_, [u8]>, _decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        Ok(self.encode_values(&decoded))
    }

    fn decode(&self, encoded: Vec<u8>, decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        let from = self.astype();
        numpy::check_len(NAME, encoded.len(), decoded_spec.num_elements() * from.size() as u64)?;
        let mut out = Vec::with_capacity(decoded_spec.num_bytes() as usize);
        match from {
            DataType::Float16 => self.decode_float::<half::f16>(&encoded, &mut out),
            DataType::Float32 => self.decode_float::<f32>(&encoded, &mut out),
            DataType::Float64 => self.decode_float::<f64>(&encoded, &mut out),
            _ => self.decode_int(&encoded, &mut out),
        }
        Ok(out)
    }

    fn to_metadata(&self) -> NamedConfig {
        let mut config = Map::new();
        config.insert("offset".into(), self.raw.0.clone());
        config.insert("scale".into(), self.raw.1.clone());
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
    build: Build::ArrayToArray(|meta, decoded| Ok(Box::new(FixedScaleOffset::from_metadata(meta, decoded)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "float64",
        codecs: r#"[{"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": 1, "scale": 2, "dtype": "<f8"}}, {"name": "bytes", "configuration": {"endian": "little"}}]"#,
    }),
    v2: Some(V2 {
        id: "fixedscaleoffset",
        compressor: None,
        filter: Some(V2Filter::Element { input: Some("dtype"), output: Some("astype"), no_byte_order: false }),
    }),
    short: None,
};

#[cfg(test)]
mod tests {
    use super::{fits, wrap};
    use crate::codec::numpy::Scalar;
    use crate::metadata::DataType;

    #[test]
    fn integer_steps_wrap_like_numpy() {
        assert_eq!(wrap(200, &DataType::Int8), Scalar::Int(-56));
        assert_eq!(wrap(-1, &DataType::UInt16), Scalar::UInt(65535));
        assert!(fits(255, &DataType::UInt8) & !fits(256, &DataType::UInt8) & !fits(-1, &DataType::UInt8));
        assert!(fits(-128, &DataType::Int8) & !fits(-129, &DataType::Int8));
    }

    #[test]
    fn uint64_extremes_wrap_without_overflow() {
        let meta = crate::metadata::NamedConfig::from_json(
            &serde_json::json!({"name": super::NAME,
                "configuration": {"offset": 0, "scale": u64::MAX, "dtype": "<u8"}}),
            "codecs[0]",
            false,
        )
        .unwrap();
        let spec = crate::codec::ChunkSpec {
            shape: vec![2],
            data_type: DataType::UInt64,
            fill_value: crate::metadata::FillValue::zero(DataType::UInt64),
        };
        let codec = super::FixedScaleOffset::from_metadata(&meta, &spec).unwrap();
        let data: Vec<u8> = [u64::MAX, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
        let enc = codec.encode_values(&data);
        // numpy: (x - 0) * (2^64 - 1) mod 2^64 = -x mod 2^64.
        let want: Vec<u8> = [1u64, u64::MAX - 2].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(enc, want);
    }
}
