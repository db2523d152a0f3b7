//! The typed codecs of the Rust API ([`Codec`], in the metadata layer, which only describes
//! them) as `zarr.json` entries: each codec's module writes its own (`typed` there).

use super::{bytes, crc32c, gzip, sharding, transpose, zstd};
use crate::metadata::{ArrayMetadata, Codec, NamedConfig};

impl From<Codec> for NamedConfig {
    fn from(codec: Codec) -> NamedConfig {
        match codec {
            Codec::Bytes { endian } => bytes::typed(endian),
            Codec::Transpose { order } => transpose::typed(order),
            Codec::Gzip { level } => gzip::typed(level),
            Codec::Zstd { level, checksum } => zstd::typed(level, checksum),
            Codec::Crc32c => crc32c::typed(),
            Codec::Sharding(config) => sharding::typed(config),
        }
    }
}

impl ArrayMetadata {
    /// The same metadata with its codec chain replaced by `codecs` (array-to-array codecs, one
    /// array-to-bytes codec, then bytes-to-bytes codecs, as the spec orders them). For a
    /// variable-length data type, keep the `vlen-utf8` or `vlen-bytes` codec that
    /// [`ArrayMetadata::new`] chose and add compressors to `codecs` after it by hand.
    pub fn with_codecs(mut self, codecs: impl IntoIterator<Item = Codec>) -> ArrayMetadata {
        self.codecs = codecs.into_iter().map(NamedConfig::from).collect();
        self
    }
}
