//! A redb file opened in multi-writer mode is cut to its pages when the last handle of the
//! process closes it, as in the single-process mode: redb grows a file by doubling, and without
//! the compaction at close the file stays up to twice as long as its data. One chunk per durable
//! commit, as a loop of zarr-python assignments writes them.

use zarrdb::{Array, ArrayMetadata, DataType, Database};

/// Chunks of 4,000 bytes, one commit each: with its key and redb's leaf header a chunk fits one
/// 4 KiB page (a chunk of exactly 4 KiB takes an 8 KiB page, `store/redb/layout.rs`), so what the
/// file holds beyond the chunks is free space the close gives back.
const CHUNKS: u64 = 1500;
const CHUNK: u64 = 1000;

#[test]
fn a_multi_writer_file_is_cut_to_its_data_at_close() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Database::builder().redb_multi_writer(true).create(&path).unwrap();
    let meta = ArrayMetadata::new(DataType::UInt32, vec![CHUNKS * CHUNK], vec![CHUNK]);
    let array = Array::create(db.store(), "/a", meta).unwrap();
    let values: Vec<u32> = (0..(CHUNKS * CHUNK) as u32).map(|v| v.wrapping_mul(2_654_435_761)).collect();
    for (i, chunk) in values.chunks(CHUNK as usize).enumerate() {
        array.write_region(&[i as u64 * CHUNK], &[CHUNK], chunk).unwrap();
    }
    drop((array, db));
    let stored = (CHUNKS * CHUNK * 4) as f64;
    let length = std::fs::metadata(&path).unwrap().len() as f64;
    assert!(length <= 1.15 * stored, "file {length} bytes for {stored} bytes of chunks");
    // Every chunk is there after the compaction.
    let db = Database::builder().redb_multi_writer(true).open(&path).unwrap();
    assert_eq!(Array::open(db.store(), "/a").unwrap().read_all::<u32>().unwrap(), values);
}
