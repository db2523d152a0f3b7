//! A database for the object-storage fault tests: one array of `chunks` small chunks under
//! `/many/a` (thousands make a transfer take several windows of values).

use zarrdb::{Array, ArrayMetadata, DataType, Database};

/// The values of `/many/a`.
pub fn values(chunks: u64) -> Vec<u8> {
    (0..chunks * 16).map(|i| (i % 251) as u8).collect()
}

/// Create the database at `path`.
pub fn database(path: &std::path::Path, chunks: u64) -> Database {
    let db = Database::create(path).unwrap();
    let array =
        Array::create(db.store(), "/many/a", ArrayMetadata::new(DataType::UInt8, vec![chunks * 16], vec![16])).unwrap();
    array.write_region(&[0], &[chunks * 16], &values(chunks)).unwrap();
    db
}
