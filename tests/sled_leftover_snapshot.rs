//! A crash while sled writes a snapshot leaves `snap.<lsn>.generating`, possibly empty. It is an
//! unfinished temporary file, not part of the database: the database opens with its data.

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database};

#[test]
fn empty_generating_snapshot_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    {
        let db = Database::builder().backend(Backend::Sled).create(&path).unwrap();
        let a = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![4], vec![2])).unwrap();
        a.write_region(&[0], &[4], &[1u8, 2, 3, 4]).unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    for name in ["snap.0000000000000000.generating", "snap.00000000FFFFFFFF.generating"] {
        std::fs::write(path.join(name), b"").unwrap();
    }
    let db = Database::builder().backend(Backend::Sled).open(&path).unwrap();
    let values: Vec<u8> = Array::open(db.store(), "/a").unwrap().read_all().unwrap();
    assert_eq!(values, [1, 2, 3, 4]);
}
