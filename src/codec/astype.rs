//! `numcodecs.astype`: stores the elements as `encode_dtype` (numpy's unsafe cast: integers
//! wrap, floats round to nearest, floats to integers truncate) and casts back to
//! `decode_dtype`, the array's type, when reading.

use std::borrow::Cow;

use super::config::{map, Config};
use super::numpy::{self, Dtype};
use super::registry::{Build, Example, Registration, V2Filter, V2};
use super::{ArrayToArray, ChunkSpec};
use crate::error::CodecError;
use crate::metadata::{FillValue, NamedConfig};

pub(crate) const NAME: &str = "numcodecs.astype";

#[derive(Debug)]
pub(crate) struct AsType {
    encode_dtype: Dtype,
    decode_dtype: Dtype,
}

impl AsType {
    pub fn from_metadata(meta: &NamedConfig, decoded: &ChunkSpec) -> Result<AsType, CodecError> {
        let config = Config::new(NAME, meta, &["encode_dtype", "decode_dtype"])?;
        let encode_dtype = Dtype::required(&config, "encode_dtype")?;
        let decode_dtype = Dtype::or_received(&config, "decode_dtype", &decoded.data_type)?;
        decode_dtype.must_be(&config, "decode_dtype", &decoded.data_type)?;
        Ok(AsType { encode_dtype, decode_dtype })
    }
}

impl ArrayToArray for AsType {
    fn encoded_spec(&self, decoded: &ChunkSpec) -> ChunkSpec {
        let (from, to) = (&self.decode_dtype.data_type, &self.encode_dtype.data_type);
        ChunkSpec {
            shape: decoded.shape.clone(),
            data_type: to.clone(),
            fill_value: FillValue::from_le_bytes(numpy::cast(decoded.fill_value.as_le_bytes(), from, to)),
        }
    }

    fn encode(&self, decoded: Cow<'_, [u8]>, _decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        Ok(numpy::cast(&decoded, &self.decode_dtype.data_type, &self.encode_dtype.data_type))
    }

    fn decode(&self, encoded: Vec<u8>, decoded_spec: &ChunkSpec) -> Result<Vec<u8>, CodecError> {
        let from = &self.encode_dtype.data_type;
        numpy::check_len(NAME, encoded.len(), decoded_spec.num_elements() * from.size() as u64)?;
        Ok(numpy::cast(&encoded, from, &self.decode_dtype.data_type))
    }

    fn to_metadata(&self) -> NamedConfig {
        NamedConfig::with_configuration(
            NAME,
            map([("encode_dtype", self.encode_dtype.json()), ("decode_dtype", self.decode_dtype.json())]),
        )
    }
}

/// The codec's entry in `registry::REGISTRY`.
pub(crate) const REGISTRATION: Registration = Registration {
    names: &[NAME],
    build: Build::ArrayToArray(|meta, decoded| Ok(Box::new(AsType::from_metadata(meta, decoded)?))),
    fixed_size_only: false,
    home: file!(),
    example: Some(Example {
        data_type: "float64",
        codecs: r#"[{"name": "numcodecs.astype", "configuration": {"encode_dtype": "<f4", "decode_dtype": "<f8"}}, {"name": "bytes", "configuration": {"endian": "little"}}]"#,
    }),
    v2: Some(V2 {
        id: "astype",
        compressor: None,
        filter: Some(V2Filter::Element {
            input: Some("decode_dtype"),
            output: Some("encode_dtype"),
            no_byte_order: false,
        }),
    }),
    short: None,
};
