//! Two exports to the same destination at once: exactly one succeeds, the other is refused, and
//! the destination holds the complete export (staging names are per export, so neither removes
//! the other's work).

use std::sync::Arc;

use zarrdb::error::TransferError;
use zarrdb::{Array, ArrayMetadata, DataType, Database, DirectoryStore, Error, ExportOptions, ZipStore};

fn racing_exports_leave_one_complete_result(name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("db.redb")).unwrap();
    let a = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![4000], vec![2])).unwrap();
    a.write_region(&[0], &[4000], &vec![9u8; 4000]).unwrap();
    let dst = dir.path().join(name);
    for round in 0..5 {
        let results: Vec<Result<zarrdb::transfer::ExportReport, Error>> = std::thread::scope(|s| {
            let jobs: Vec<_> = (0..2).map(|_| s.spawn(|| db.export(&dst, &ExportOptions::default()))).collect();
            jobs.into_iter().map(|j| j.join().unwrap()).collect()
        });
        let won = results.iter().filter(|r| r.is_ok()).count();
        assert_eq!(won, 1, "round {round}: {results:?}");
        for r in &results {
            if let Err(e) = r {
                assert!(matches!(e, Error::Transfer(TransferError::DestinationExists { .. })), "round {round}: {e}");
            }
        }
        let store: Arc<dyn zarrdb::Store> = if name.ends_with(".zip") {
            Arc::new(ZipStore::open(&dst).unwrap())
        } else {
            Arc::new(DirectoryStore::open(&dst).unwrap())
        };
        assert!(store.get("a/zarr.json").unwrap().is_some());
        assert_eq!(Array::open(store, "/a").unwrap().read_all::<u8>().unwrap(), vec![9u8; 4000], "round {round}");
        std::fs::remove_dir_all(&dst).or_else(|_| std::fs::remove_file(&dst)).unwrap();
        let mut left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        // The open database's commit log is its own, not an export's.
        left.retain(|n| n != "db.redb-log");
        assert_eq!(left, ["db.redb"], "round {round}: staging left behind");
    }
}

#[test]
fn racing_folder_exports() {
    racing_exports_leave_one_complete_result("out");
}

#[test]
fn racing_zip_exports() {
    racing_exports_leave_one_complete_result("out.zip");
}
