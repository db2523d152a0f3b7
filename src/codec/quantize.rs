//! `numcodecs.quantize`: keeps `digits` decimal digits by rounding to a multiple of a power of
//! two, `around(x * 2^bits) / 2^bits`, in the data's own float precision, then stores the result
//! as `astype` (also a float type). Decoding only casts back. `bits` is computed exactly as
//! numcodecs does, from `log10` and `log2` of `10^-digits`.

use std::borrow::Cow;

use serde_json::Map;

use super::config::Config;
use super::numpy::{self, Dtype, Float, Scalar};
use super::registry::{Build, Example, Registration, V2Filter, V2};
use super::{ArrayToArray, ChunkSpec};
use crate::error::CodecError;
use crate::metadata::{DataType, FillValue, NamedConfig};

pub(crate) const NAME: &str = "numcodecs.quantize";

#[derive(Debug)]
pub(crate) struct Quantize {
    digits: i64,
    scale: f64,
    dtype: Dtype,
    astype: Option<Dtype>,
}

/// numcodecs' scale for `digits`: `2^ceil(log2(10^-e))` with `e = floor(log10(10^-digits))`
/// (or `ceil` when not negative).
fn scale(digits: i64) -> f64 {
    let precision = 10f64.powf(-(digits as f64));
    let exp = precision.log10();
    let exp = if exp < 0.0 { exp.floor() } else { exp.ceil() };
    let bits = 10f64.powf(-exp).log2().ceil();
    2f64.powf(bits)
}

impl Quantize {
    pub fn from_metadata(meta: &NamedConfig, decoded: &ChunkSpec) -> Result<Quantize, CodecError> {
        let config = Config::new(NAME, meta, &["digits", "dtype", "astype"])?;
        config.required("digits")?;
        // Beyond ±300 digits 10^-digits leaves the float64 range and numcodecs' scale is 0 or inf.
        let digits = config.int("digits", -300..=300)?.expect("required");
        let dtype = Dtype::or_received(&config, "dtype", &decoded.data_type)?;
        dtype.must_be(&config, "dtype", &decoded.data_type)?;
        let astype = Dtype::optional(&config, "astype")?;
        for (field, t) in [("dtype", Some(&dtype)), ("astype", astype.as_ref())] {
            if let Some(t) = t.filter(|t| !numpy::is_float(&t.data_type)) {
                return Err(config.error(field, format!("only float types are supported, not {}", t.text)));
            }
        }
        Ok(Quantize { digits, scale: scale(digits), dtype, astype })
    }

    fn astype(&self) -> &DataType {
        self.astype.as_ref().map_or(&self.dtype.data_type, |a| &a.data_type)
    }

    fn quantize<T: Float>(&self, data: &[u8], out: &mut Vec<u8>) {
        let scale = T::from_f64(self.scale);
        let to = self.astype();
        for b in data.chunks_exact(T::SIZE) {
            let v = (scale * T::read(b)).rint() / scale;
            Scalar::Float(v.to_f64()).write(to, out);
        }
    }

    fn encode_values(&self, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(data.len() / self.dtype.data_type.size() * self.astype().size());
        match &self.dtype.data_type {
            DataType::Float16 => self.quantize::<half::f16>(data, &mut out),
            DataType::Float32 => self.quantize::<f32>(data, &mut out),
            _ => self.quantize::<f64>(data, &mut out),
        }
        out
    }
}

impl ArrayToArray for Quantize {
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
        Ok(numpy::cast(&encoded, from, &self.dtype.data_type))
    }

    fn to_metadata(&self) -> NamedConfig {
        let mut config = Map::new();
        config.insert("digits".into(), self.digits.into());
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
    build: Build::ArrayToArray(|meta, decoded| Ok(Box::new(Quantize::from_metadata(meta, decoded)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "float64",
        codecs: r#"[{"name": "numcodecs.quantize", "configuration": {"digits": 3, "dtype": "<f8"}}, {"name": "bytes", "configuration": {"endian": "little"}}]"#,
    }),
    v2: Some(V2 {
        id: "quantize",
        compressor: None,
        filter: Some(V2Filter::Element { input: Some("dtype"), output: Some("astype"), no_byte_order: false }),
    }),
    short: None,
};

#[cfg(test)]
mod tests {
    use super::scale;

    #[test]
    fn scales_match_numcodecs() {
        // Python: 2.0 ** math.ceil(math.log2(10.0 ** -math.floor(math.log10(10.0 ** -d))))
        assert_eq!(scale(0), 1.0);
        assert_eq!(scale(1), 16.0);
        assert_eq!(scale(2), 128.0);
        assert_eq!(scale(3), 1024.0);
        assert_eq!(scale(-1), 0.125);
    }
}
