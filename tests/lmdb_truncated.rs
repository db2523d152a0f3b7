//! A truncated LMDB `data.mdb` (a copy cut short, a full disk) is refused at open with
//! `OpenError::Corrupted`, before any page past the end is touched: LMDB maps the file, and a
//! read of a page beyond its end is a SIGBUS that kills the process. A sound file may end before
//! the last page its meta page counts (pages a transaction allocated and freed before it
//! committed are never written): that one opens, reads and writes.

use std::path::Path;

use zarrdb::error::OpenError;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Error, Group};

/// A database of one array, 200,000 float64 of 1.5 in chunks of 1,000.
fn make(path: &Path) {
    let db = Database::builder().backend(Backend::Lmdb).create(path).unwrap();
    Group::create(db.store(), "/", Default::default()).unwrap();
    let a = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::Float64, vec![200_000], vec![1000])).unwrap();
    a.write_region(&[0], &[200_000], &vec![1.5f64; 200_000]).unwrap();
}

fn open(path: &Path, read_only: bool, walk: bool) -> Result<Database, Error> {
    Database::builder().backend(Backend::Lmdb).read_only(read_only).lmdb_check_pages(walk).open(path)
}

fn reads_whole(db: &Database) -> bool {
    let a = Array::open(db.store(), "/a").unwrap();
    a.read_region::<f64>(&[0], &[200_000]).unwrap().iter().all(|v| *v == 1.5)
}

#[test]
fn truncated_data_file_is_refused_not_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("l");
    make(&path);
    let data = path.join("data.mdb");
    let full = std::fs::metadata(&data).unwrap().len();
    for cut in [full - 4096, full / 2, 3 * 4096] {
        let file = std::fs::OpenOptions::new().write(true).open(&data).unwrap();
        file.set_len(cut).unwrap();
        drop(file);
        // With and without the page walk (`lmdb_check_pages`): the size check stands alone.
        for (read_only, walk) in [(false, true), (true, true), (false, false), (true, false)] {
            match open(&path, read_only, walk) {
                Err(err) => {
                    assert!(matches!(err, Error::Open(OpenError::Corrupted { .. })), "cut at {cut}: {err}");
                    assert!(err.to_string().contains("cut short"), "{err}");
                }
                // Only the last page can have been a free one: what opens reads whole.
                Ok(db) => assert!(cut == full - 4096 && reads_whole(&db), "cut at {cut}: opened"),
            }
        }
    }
    // Cut into the meta pages themselves: refused too (by LMDB's own header check), never a signal.
    for cut in [4096 + 100, 100, 0] {
        std::fs::OpenOptions::new().write(true).open(&data).unwrap().set_len(cut).unwrap();
        match Database::builder().backend(Backend::Lmdb).open(&path) {
            Err(err) => assert!(matches!(err, Error::Open(_)), "cut at {cut}: {err}"),
            Ok(_) => panic!("cut at {cut}: opened"),
        }
    }
}

/// The newest meta page counts `extra` pages past the end of the file, as a commit that
/// allocated and freed pages leaves it: the file opens (with and without the walk), reads,
/// takes new writes, and reopens.
#[test]
fn pages_counted_past_the_end_that_nothing_reaches_are_no_damage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("l");
    make(&path);
    let data = path.join("data.mdb");
    let mut bytes = std::fs::read(&data).unwrap();
    let page = u32::from_le_bytes(bytes[40..44].try_into().unwrap()) as usize;
    let txnid = |at: usize| u64::from_le_bytes(bytes[at + 144..at + 152].try_into().unwrap());
    let newest = if txnid(page) > txnid(0) { page } else { 0 };
    let last = u64::from_le_bytes(bytes[newest + 136..newest + 144].try_into().unwrap());
    assert_eq!((last + 1) * page as u64, bytes.len() as u64, "a fresh file ends at its last page");
    let extra = 3u64;
    bytes[newest + 136..newest + 144].copy_from_slice(&(last + extra).to_le_bytes());
    std::fs::write(&data, &bytes).unwrap();
    for (read_only, walk) in [(true, true), (true, false), (false, false), (false, true)] {
        let db = open(&path, read_only, walk).unwrap_or_else(|e| panic!("read-only {read_only}, walk {walk}: {e}"));
        assert!(reads_whole(&db));
        if !read_only {
            let a = Array::open(db.store(), "/a").unwrap();
            a.write_region(&[0], &[1000], &vec![2.5f64; 1000]).unwrap();
            a.write_region(&[0], &[1000], &vec![1.5f64; 1000]).unwrap();
        }
    }
    let db = open(&path, false, true).unwrap();
    assert!(reads_whole(&db));
}
