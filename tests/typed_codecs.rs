//! Arrays made with typed codecs (`zarrdb::metadata::Codec`) write, reopen and read back, and a
//! typed chain the codecs refuse is refused when the array is created, as the JSON form would be.

use std::sync::Arc;

use zarrdb::metadata::{Codec, IndexLocation, ShardingConfig};
use zarrdb::{Array, ArrayMetadata, DataType, Error, MemoryStore, Store};

fn round_trip(codecs: Vec<Codec>) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let meta = ArrayMetadata::new(DataType::UInt16, vec![40, 30], vec![16, 16]).with_codecs(codecs.clone());
    let array = Array::create(store.clone(), "/a", meta).unwrap();
    let values: Vec<u16> = (0..40 * 30).map(|i| (i * 7 % 65_521) as u16).collect();
    array.write_region(&[0, 0], &[40, 30], &values).unwrap();
    let again = Array::open(store, "/a").unwrap();
    assert_eq!(again.read_region::<u16>(&[0, 0], &[40, 30]).unwrap(), values, "{codecs:?}");
}

#[test]
fn every_typed_codec_round_trips() {
    round_trip(vec![Codec::bytes()]);
    round_trip(vec![Codec::transpose(vec![1, 0]), Codec::bytes(), Codec::zstd(3), Codec::crc32c()]);
    round_trip(vec![Codec::bytes(), Codec::gzip(6)]);
    round_trip(vec![Codec::bytes(), Codec::Zstd { level: -1, checksum: true }]);
    round_trip(vec![Codec::Sharding(ShardingConfig::new(vec![8, 4]).with_codecs([Codec::bytes(), Codec::zstd(1)]))]);
    round_trip(vec![Codec::Sharding(ShardingConfig {
        index_location: IndexLocation::Start,
        ..ShardingConfig::new(vec![4, 8])
    })]);
}

#[test]
fn a_typed_chain_the_codecs_refuse_is_refused_at_creation() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    for codecs in [
        vec![Codec::bytes(), Codec::gzip(12)],
        vec![Codec::Sharding(ShardingConfig::new(vec![5, 5]))],
        vec![Codec::transpose(vec![0, 0]), Codec::bytes()],
        vec![Codec::zstd(1)],
    ] {
        let meta = ArrayMetadata::new(DataType::UInt16, vec![40, 30], vec![16, 16]).with_codecs(codecs.clone());
        assert!(matches!(Array::create(store.clone(), "/bad", meta), Err(Error::Codec { .. })), "{codecs:?}");
    }
}
