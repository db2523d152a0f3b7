//! The sharding codec the sharded-read tests use: inner chunks of `bytes` + zstd, an index of
//! `bytes` + crc32c at the end.

use serde_json::json;
use zarrdb::metadata::NamedConfig;

/// `sharding_indexed` over inner chunks of `inner`.
pub fn zstd_shards(inner: &[u64]) -> Vec<NamedConfig> {
    let codecs = json!([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": inner,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": "end"}}]);
    NamedConfig::parse_list(&codecs).expect("valid codecs")
}
