//! A redb file holds chunks of every common size in about their own size: power-of-two chunks
//! (16 KiB to 1 MiB) written the way arrays are (metadata first, then the chunks, several
//! arrays), with the file's blocks and length compared with the stored chunk bytes.
//!
//! Cut into one full page and a short rest, 64 KiB and 256 KiB chunks took 1.85x their size
//! once other keys followed them: redb splits a leaf by halving its bytes, and the rest shared
//! the next chunk's leaf, doubling its page (`store/redb/layout.rs`).

use std::os::unix::fs::MetadataExt;

use zarrdb::{Array, ArrayMetadata, DataType, Database};

/// Four arrays of `grid` x `grid` square uint32 chunks of `side` x `side` (`side`² x 4 bytes).
fn file_over_stored(side: u64, grid: u64) -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = Database::create(&path).unwrap();
    let mut stored = 0;
    let n = grid * side;
    for a in 0..4u32 {
        let meta = ArrayMetadata::new(DataType::UInt32, vec![n, n], vec![side, side]);
        let array = Array::create(db.store(), &format!("/runs/a{a}"), meta).unwrap();
        let values: Vec<u32> = (0..(n * n) as u32).map(|i| i.wrapping_mul(2_654_435_761) ^ a).collect();
        array.write_region(&[0, 0], &[n, n], &values).unwrap();
        stored += array.stored_chunks().unwrap().iter().map(|(_, size)| size).sum::<u64>();
    }
    let blocks = std::fs::metadata(&path).unwrap().blocks() * 512;
    drop(db);
    let length = std::fs::metadata(&path).unwrap().len();
    (blocks as f64 / stored as f64, length as f64 / stored as f64)
}

#[test]
fn chunks_of_power_of_two_sizes_take_about_their_size() {
    // 32 -> 4 KiB, 64 -> 16 KiB, 128 -> 64 KiB, 256 -> 256 KiB, 512 -> 1 MiB.
    // Grids of at least 4 MiB in all, so that redb's own few pages do not count. The closed file
    // is the one copies and archives carry; the open file's blocks may hold a little more (its
    // free pages are cut at the close).
    for (side, grid, blocks_at_most) in [(32, 16, 1.15), (64, 8, 1.15), (128, 4, 1.20), (256, 4, 1.15), (512, 4, 1.15)]
    {
        let (blocks, length) = file_over_stored(side, grid);
        let bytes = side * side * 4;
        assert!(
            blocks <= blocks_at_most,
            "{bytes}-byte chunks: the open file's blocks are {blocks:.2}x the stored bytes"
        );
        assert!(length <= 1.15, "{bytes}-byte chunks: the closed file is {length:.2}x the stored bytes");
    }
}
