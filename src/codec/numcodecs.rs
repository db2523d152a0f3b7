//! The numcodecs filters and compressors zarr-python 3 names `numcodecs.<id>`: which are
//! array -> array and which bytes -> bytes, and their constructors. Zarr v2 `filters` and
//! `compressor` objects are imported as these (see `transfer::plan::filters`).

use super::{astype, bitround, bz2, delta, fixedscaleoffset, lz4, lzma, packbits, quantize, shuffle};
use super::{ArrayToArray, BytesToBytes, ChunkSpec};
use crate::error::CodecError;
use crate::metadata::NamedConfig;

/// The numcodecs filters that work on elements (v2 filters; v3 array -> array codecs).
pub(crate) const ARRAY_TO_ARRAY: [&str; 6] =
    [delta::NAME, fixedscaleoffset::NAME, quantize::NAME, bitround::NAME, astype::NAME, packbits::NAME];

/// The numcodecs codecs that work on bytes (`shuffle` and the compressors).
pub(crate) const BYTES_TO_BYTES: [&str; 4] = [shuffle::NAME, lz4::NAME, bz2::NAME, lzma::NAME];

/// The array -> array codec `meta` for chunks of `decoded`.
pub(crate) fn array_to_array(meta: &NamedConfig, decoded: &ChunkSpec) -> Result<Box<dyn ArrayToArray>, CodecError> {
    Ok(match meta.name.as_str() {
        delta::NAME => Box::new(delta::Delta::from_metadata(meta, decoded)?),
        fixedscaleoffset::NAME => Box::new(fixedscaleoffset::FixedScaleOffset::from_metadata(meta, decoded)?),
        quantize::NAME => Box::new(quantize::Quantize::from_metadata(meta, decoded)?),
        bitround::NAME => Box::new(bitround::BitRound::from_metadata(meta, decoded)?),
        astype::NAME => Box::new(astype::AsType::from_metadata(meta, decoded)?),
        packbits::NAME => Box::new(packbits::PackBits::from_metadata(meta, decoded)?),
        other => return Err(CodecError::UnknownCodec { name: other.to_owned() }),
    })
}

/// The bytes -> bytes codec `meta`.
pub(crate) fn bytes_to_bytes(meta: &NamedConfig) -> Result<Box<dyn BytesToBytes>, CodecError> {
    Ok(match meta.name.as_str() {
        shuffle::NAME => Box::new(shuffle::Shuffle::from_metadata(meta)?),
        lz4::NAME => Box::new(lz4::Lz4::from_metadata(meta)?),
        bz2::NAME => Box::new(bz2::Bz2::from_metadata(meta)?),
        lzma::NAME => Box::new(lzma::Lzma::from_metadata(meta)?),
        other => return Err(CodecError::UnknownCodec { name: other.to_owned() }),
    })
}
