//! One auto-commit region write on a database that stores a whole chunk and read-modify-writes
//! another whose key shares its process-wide version counter (`x/c/1/1` and `x/c/0/1` hash to the
//! same one of the 4,096 stripes). The whole-chunk store used to bump the counter while still
//! buffered, which failed the same write's check of the other chunk at every commit attempt: the
//! write retried for ever (found by the LMDB hierarchy model). It must finish, with both chunks
//! right, on every database backend.

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database};

#[test]
fn a_write_over_chunks_sharing_a_counter_finishes() {
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::builder().backend(backend).create(dir.path().join("db")).unwrap();
        let meta = ArrayMetadata::new(DataType::Int32, vec![4, 4], vec![2, 2]);
        let a = Array::create(db.store(), "/x", meta).unwrap();
        a.write_region(&[0, 2], &[1, 2], &[7i32, 8]).unwrap();
        // Rows 1..4 of columns 2..4: chunk (0, 1) in part (its row 0 stays), chunk (1, 1) whole.
        a.write_region(&[1, 2], &[3, 2], &[1i32, 2, 3, 4, 5, 6]).unwrap();
        assert_eq!(a.read_region::<i32>(&[0, 2], &[4, 2]).unwrap(), vec![7, 8, 1, 2, 3, 4, 5, 6], "{backend:?}");
    }
}
