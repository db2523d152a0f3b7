//! A truncated LMDB `data.mdb` (a copy cut short, a full disk) is refused at open with
//! `OpenError::Corrupted`, before any page past the end is touched: LMDB maps the file, and a
//! read of a page beyond its end is a SIGBUS that kills the process.

use zarrdb::error::OpenError;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Error, Group};

#[test]
fn truncated_data_file_is_refused_not_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("l");
    {
        let db = Database::builder().backend(Backend::Lmdb).create(&path).unwrap();
        Group::create(db.store(), "/", Default::default()).unwrap();
        let a =
            Array::create(db.store(), "/a", ArrayMetadata::new(DataType::Float64, vec![200_000], vec![1000])).unwrap();
        a.write_region(&[0], &[200_000], &vec![1.5f64; 200_000]).unwrap();
    }
    let data = path.join("data.mdb");
    let full = std::fs::metadata(&data).unwrap().len();
    for cut in [full / 2, full - 4096, 3 * 4096] {
        let file = std::fs::OpenOptions::new().write(true).open(&data).unwrap();
        file.set_len(cut).unwrap();
        drop(file);
        // With and without the page walk (`lmdb_check_pages`): the size check stands alone.
        for (read_only, walk) in [(false, true), (true, true), (false, false), (true, false)] {
            let err = Database::builder()
                .backend(Backend::Lmdb)
                .read_only(read_only)
                .lmdb_check_pages(walk)
                .open(&path)
                .unwrap_err();
            assert!(matches!(err, Error::Open(OpenError::Corrupted { .. })), "cut at {cut}: {err}");
            assert!(err.to_string().contains("cut short"), "{err}");
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
