//! Reading large values from LMDB does not keep the file's pages in the process's memory: pages
//! touched through LMDB's map count as the process's resident memory (`RssFile` in
//! `/proc/self/status`) until unmapped, and a whole-array read of 1 MiB chunks grew it by the
//! array's size. Each value of 256 KiB or more now gives its pages back once read
//! (`store/lmdb/snapshot.rs`). The values read back must still be exact, twice (the second read
//! maps the pages again). What is counted is the resident part of this process's mappings of
//! `data.mdb` (`/proc/self/smaps`).

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database};

/// 32 chunks of 512 x 512 u32: 1 MiB each, 32 MiB in all.
const SHAPE: [u64; 2] = [512, 512 * 32];
const CHUNK: [u64; 2] = [512, 512];

/// The resident bytes of this process's mappings of `file` (`/proc/self/smaps`): counted whatever
/// the file system (page cache or tmpfs), and nothing else of the process.
fn resident(file: &std::path::Path) -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut inside = false;
    let mut bytes = 0;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if first.contains('-') && first.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            // A mapping's header: address range, permissions, offset, device, inode, path.
            inside = line.split_whitespace().nth(5).is_some_and(|path| std::path::Path::new(path) == file);
        } else if inside && first == "Rss:" {
            let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
            bytes += kib * 1024;
        }
    }
    bytes
}

#[test]
fn a_whole_array_read_leaves_the_map_unmapped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("released.lmdb");
    let values: Vec<u32> = (0..SHAPE[0] * SHAPE[1]).map(|i| (i as u32).wrapping_mul(2_654_435_761) | 1).collect();
    {
        let db = Database::builder().backend(Backend::Lmdb).create(&path).unwrap();
        let meta = ArrayMetadata::new(DataType::UInt32, SHAPE.to_vec(), CHUNK.to_vec());
        Array::create(db.store(), "/a", meta).unwrap().write_region(&[0, 0], &SHAPE, &values).unwrap();
    }
    let data = path.join("data.mdb").canonicalize().unwrap();
    let db = Database::builder().backend(Backend::Lmdb).open(&path).unwrap();
    let array = Array::open(db.store(), "/a").unwrap();
    for round in 0..2 {
        let before = resident(&data);
        let read = array.read_all::<u32>().unwrap();
        let grown = resident(&data).saturating_sub(before);
        assert!(read == values, "round {round}: the values read back differ");
        // 32 MiB read; what stays mapped is metadata and branch pages, and the pages at the ends of
        // values that do not fill them.
        assert!(grown < 4 << 20, "round {round}: the read left {grown} bytes of data.mdb mapped");
    }
}
