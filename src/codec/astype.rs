//! `numcodecs.astype`: stores the elements as `encode_dtype` (numpy's unsafe cast: integers
//! wrap, floats round to nearest, floats to integers truncate) and casts back to
//! `decode_dtype`, the array's type, when reading.

use std::borrow::Cow;

use super::config::{map, Config};
use super::numpy::{self, Dtype};
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
