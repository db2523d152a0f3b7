//! The database the compaction tests start from: two arrays of 16 MiB, one erased. Included with
//! `#[path]`.

use zarrdb::{Array, ArrayMetadata, DataType, Database, Node};

/// The bytes of the array a compaction keeps: 16 MiB (a redb file has about 1 MiB of its own).
pub const KEPT: f64 = (16 << 20) as f64;

/// The values of the kept array.
pub fn values() -> Vec<u32> {
    (0..1 << 22).map(|i: u32| i.wrapping_mul(2_654_435_761)).collect()
}

/// Two arrays of 16 chunks of 1 MiB, `/gone` and `/kept`; the first is erased. Returns the
/// second's values.
pub fn fill(db: &Database) -> Vec<u32> {
    let values = values();
    for name in ["/gone", "/kept"] {
        let meta = ArrayMetadata::new(DataType::UInt32, vec![2048, 2048], vec![512, 512]);
        Array::create(db.store(), name, meta).unwrap().write_region(&[0, 0], &[2048, 2048], &values).unwrap();
    }
    Node::erase(db.store(), "/gone").unwrap();
    values
}

/// Fill `db`, then check that a compaction with a snapshot open is refused with
/// `CompactError::InUse` and changes nothing, and that it runs once the snapshot has ended.
pub fn refused_while_a_snapshot_is_open(db: &Database) {
    let values = fill(db);
    let snapshot = db.begin_read().unwrap();
    let err = db.compact().unwrap_err();
    assert!(matches!(err, zarrdb::Error::Compact(zarrdb::error::CompactError::InUse { .. })), "{err}");
    assert_eq!(Array::open(snapshot.store(), "/kept").unwrap().read_all::<u32>().unwrap(), values);
    drop(snapshot);
    let done = db.compact().unwrap();
    assert!(done.bytes_after < done.bytes_before, "{done:?}");
    assert_eq!(Array::open(db.store(), "/kept").unwrap().read_all::<u32>().unwrap(), values);
}
