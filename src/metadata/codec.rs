//! Typed codec configuration for the Rust API: [`Codec`] and [`ShardingConfig`] describe an
//! array's codec chain without writing JSON. They become the `codecs` entries of `zarr.json`
//! ([`NamedConfig`]) exactly as the Zarr v3 spec and `docs/format.md` spell them. This layer only
//! describes them: the metadata layer sits below the codecs, so each codec's module writes its
//! own entry (`From<Codec> for NamedConfig` and `ArrayMetadata::with_codecs` are in
//! `codec/typed.rs`). Which chains can run is checked when the array is created.

/// Byte order of the `bytes` codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endian {
    /// Little endian (what zarrdb writes by default).
    Little,
    /// Big endian.
    Big,
}

/// Where a shard keeps its index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IndexLocation {
    /// After the inner chunks (the spec's default).
    #[default]
    End,
    /// Before the inner chunks.
    Start,
}

/// One codec of an array's chain.
///
/// ```
/// use zarrdb::metadata::{Codec, ShardingConfig};
/// use zarrdb::{ArrayMetadata, DataType};
///
/// // 1 MiB chunks compressed with zstd at level 3.
/// let meta = ArrayMetadata::new(DataType::Float32, vec![4096, 4096], vec![512, 512])
///     .with_codecs([Codec::bytes(), Codec::zstd(3)]);
/// assert_eq!(meta.codecs[1].name, "zstd");
///
/// // Shards of 512 x 512 holding 64 x 64 inner chunks, each compressed, with a checksummed index.
/// let sharded = ArrayMetadata::new(DataType::UInt16, vec![4096, 4096], vec![512, 512])
///     .with_codecs([Codec::Sharding(ShardingConfig::new(vec![64, 64]).with_codecs([Codec::bytes(), Codec::zstd(1)]))]);
/// assert_eq!(sharded.codecs[0].name, "sharding_indexed");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Codec {
    /// `bytes`: elements to bytes in the given byte order (`None` for one-byte types, which have
    /// none).
    Bytes {
        /// The byte order.
        endian: Option<Endian>,
    },
    /// `transpose`: the axes in the order they are stored.
    Transpose {
        /// A permutation of the array's dimensions.
        order: Vec<usize>,
    },
    /// `gzip` at `level` (0 to 9).
    Gzip {
        /// The compression level.
        level: u32,
    },
    /// `zstd` at `level` (-131072 to 22), with or without zstd's own content checksum.
    Zstd {
        /// The compression level.
        level: i32,
        /// Whether frames carry zstd's checksum.
        checksum: bool,
    },
    /// `crc32c`: a CRC-32C of the encoded bytes, checked on every read.
    Crc32c,
    /// `sharding_indexed`: each chunk is a shard of inner chunks with an index.
    Sharding(ShardingConfig),
}

impl Codec {
    /// `bytes`, little endian.
    pub fn bytes() -> Codec {
        Codec::Bytes { endian: Some(Endian::Little) }
    }

    /// `zstd` at `level`, without zstd's checksum (zarr-python's default).
    pub fn zstd(level: i32) -> Codec {
        Codec::Zstd { level, checksum: false }
    }

    /// `gzip` at `level`.
    pub fn gzip(level: u32) -> Codec {
        Codec::Gzip { level }
    }

    /// `crc32c`.
    pub fn crc32c() -> Codec {
        Codec::Crc32c
    }

    /// `transpose` with `order`.
    pub fn transpose(order: Vec<usize>) -> Codec {
        Codec::Transpose { order }
    }
}

/// The configuration of the `sharding_indexed` codec.
#[derive(Clone, Debug, PartialEq)]
pub struct ShardingConfig {
    /// The shape of the inner chunks; it divides the array's chunk (shard) shape.
    pub chunk_shape: Vec<u64>,
    /// The codecs of each inner chunk.
    pub codecs: Vec<Codec>,
    /// The codecs of the index.
    pub index_codecs: Vec<Codec>,
    /// Where the index is.
    pub index_location: IndexLocation,
}

impl ShardingConfig {
    /// Inner chunks of `chunk_shape` stored with `bytes`, and an index protected by `crc32c` at
    /// the end of each shard (what zarr-python writes by default).
    pub fn new(chunk_shape: Vec<u64>) -> ShardingConfig {
        ShardingConfig {
            chunk_shape,
            codecs: vec![Codec::bytes()],
            index_codecs: vec![Codec::bytes(), Codec::crc32c()],
            index_location: IndexLocation::End,
        }
    }

    /// The same with the inner chunks' codecs replaced.
    pub fn with_codecs(mut self, codecs: impl IntoIterator<Item = Codec>) -> ShardingConfig {
        self.codecs = codecs.into_iter().collect();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::{Codec, Endian, IndexLocation, ShardingConfig};
    use crate::metadata::NamedConfig;

    #[test]
    fn typed_codecs_are_written_as_the_spec_spells_them() {
        let chain: Vec<serde_json::Value> = [
            Codec::bytes(),
            Codec::Bytes { endian: Some(Endian::Big) },
            Codec::Bytes { endian: None },
            Codec::transpose(vec![1, 0]),
            Codec::gzip(5),
            Codec::Zstd { level: -3, checksum: true },
            Codec::crc32c(),
            Codec::Sharding(ShardingConfig {
                index_location: IndexLocation::Start,
                ..ShardingConfig::new(vec![4, 4]).with_codecs([Codec::bytes(), Codec::zstd(1)])
            }),
        ]
        .into_iter()
        .map(|c| NamedConfig::from(c).to_json())
        .collect();
        let want = serde_json::json!([
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "bytes", "configuration": {"endian": "big"}},
            {"name": "bytes"},
            {"name": "transpose", "configuration": {"order": [1, 0]}},
            {"name": "gzip", "configuration": {"level": 5}},
            {"name": "zstd", "configuration": {"level": -3, "checksum": true}},
            {"name": "crc32c"},
            {"name": "sharding_indexed", "configuration": {
                "chunk_shape": [4, 4],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                "index_location": "start",
            }},
        ]);
        assert_eq!(serde_json::Value::Array(chain), want);
    }
}
