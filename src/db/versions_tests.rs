//! Chunk versions are kept per database: a commit on one database leaves another's alone, and
//! every store of one database (auto-commit, transaction, snapshot) uses the same table.

use crate::store::Sealed;
use crate::store::{DirectoryStore, MemoryStore, Store};
use crate::Database;

#[test]
fn a_commit_bumps_its_own_database_s_versions_only() {
    let dir = tempfile::tempdir().unwrap();
    let a = Database::create(dir.path().join("a.zarrdb")).unwrap();
    let b = Database::create(dir.path().join("b.zarrdb")).unwrap();
    let key = "x/c/0";
    let (a_before, b_before) =
        (a.store().chunk_versions(Sealed::new()).current(key), b.store().chunk_versions(Sealed::new()).current(key));

    a.store().set(key, b"one").unwrap();
    let txn = a.begin_write().unwrap();
    txn.store().set(key, b"two").unwrap();
    assert!(
        std::ptr::eq(txn.store().chunk_versions(Sealed::new()), a.store().chunk_versions(Sealed::new())),
        "the transaction's table is the database's"
    );
    txn.commit().unwrap();

    assert_eq!(
        a.store().chunk_versions(Sealed::new()).current(key),
        a_before + 2,
        "each commit bumped A's version of the key"
    );
    assert_eq!(b.store().chunk_versions(Sealed::new()).current(key), b_before, "B's table is untouched");
    assert!(std::ptr::eq(
        a.begin_read().unwrap().store().chunk_versions(Sealed::new()),
        a.store().chunk_versions(Sealed::new())
    ));
    assert!(!std::ptr::eq(a.store().chunk_versions(Sealed::new()), b.store().chunk_versions(Sealed::new())));
}

#[test]
fn handles_on_one_folder_share_a_table_and_other_stores_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let first = DirectoryStore::create(dir.path().join("data.zarr")).unwrap();
    let second = DirectoryStore::open(dir.path().join("./data.zarr")).unwrap();
    let other = DirectoryStore::create(dir.path().join("other.zarr")).unwrap();
    assert!(std::ptr::eq(first.chunk_versions(Sealed::new()), second.chunk_versions(Sealed::new())));
    assert!(!std::ptr::eq(first.chunk_versions(Sealed::new()), other.chunk_versions(Sealed::new())));
    let (m1, m2) = (MemoryStore::new(), MemoryStore::new());
    assert!(!std::ptr::eq(m1.chunk_versions(Sealed::new()), m2.chunk_versions(Sealed::new())));
}
