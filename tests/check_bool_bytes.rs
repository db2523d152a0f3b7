//! A bool is stored as one byte, 0 or 1: `check` reports a chunk holding any other byte (damage,
//! or a foreign writer's bug), while reads take it as true, as numpy does.

use std::sync::Arc;

use zarrdb::error::CodecError;
use zarrdb::{Array, ArrayMetadata, DataType, Error, MemoryStore, Store};

#[test]
fn check_reports_bool_bytes_other_than_zero_and_one() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = Array::create(store.clone(), "/b", ArrayMetadata::new(DataType::Bool, vec![4], vec![2])).unwrap();
    array.write_region(&[0], &[4], &[true, false, true, true]).unwrap();
    assert!(array.check().unwrap().is_ok());

    store.set("b/c/1", &[1, 2]).unwrap();
    let report = array.check().unwrap();
    assert_eq!(report.corrupt.len(), 1);
    let (key, err) = &report.corrupt[0];
    assert_eq!(key, "b/c/1");
    assert!(matches!(err, Error::Codec { source: CodecError::Corrupt { .. }, .. }), "{err}");
    assert!(err.to_string().contains("bool element 1 holds byte 0x02"), "{err}");
    assert_eq!(array.read_region::<bool>(&[2], &[2]).unwrap(), [true, true]);
}
