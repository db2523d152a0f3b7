//! Read-only commands (`tree`, `info`, `cat`, `check`, `export`) never change a database's files
//! (byte-identical before and after; LMDB's `lock.mdb` is its reader table, not data, and is left
//! out; sled, which has no read-only mode, is read through a private copy) and work without write
//! permission (as another user). `DatabaseBuilder::read_only` refuses every write and creates
//! nothing.

use std::path::Path;

use zarrdb::error::OpenError;
use zarrdb::{Array, Backend, Database, Error, Group};

#[path = "common/read_only.rs"]
mod read_only;
use read_only::{build, contents, is_root, read_everything, settled};

#[test]
fn commands_leave_the_files_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    for (name, backend) in [("r.zarrdb", Backend::Redb), ("l", Backend::Lmdb), ("s", Backend::Sled)] {
        let path = dir.path().join(name);
        let locator = build(&path, backend);
        let before = settled(&path);
        read_everything(&locator, dir.path(), false);
        assert!(contents(&path) == before, "{locator}: a read-only command changed the files");
    }
}

#[test]
fn commands_work_without_write_permission() {
    let dir = tempfile::tempdir().unwrap();
    let as_nobody = is_root();
    let exports = dir.path().join("exports");
    std::fs::create_dir(&exports).unwrap();
    for (name, backend) in [("r.zarrdb", Backend::Redb), ("l", Backend::Lmdb), ("s", Backend::Sled)] {
        let path = dir.path().join(name);
        let locator = build(&path, backend);
        let before = settled(&path);
        // Readable by everyone, writable by no one but root (who is not the one reading).
        let mode = |p: &Path, m: u32| {
            let mut permissions = std::fs::metadata(p).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, m);
            std::fs::set_permissions(p, permissions).unwrap();
        };
        mode(dir.path(), 0o755);
        mode(&exports, 0o777);
        for file in before.keys().chain([&path.join("lock.mdb")]).filter(|p| p.exists()) {
            mode(file, 0o444);
        }
        if path.is_dir() {
            mode(&path, 0o555);
        }
        read_everything(&locator, &exports, as_nobody);
        assert!(contents(&path) == before, "{locator}: changed");
    }
}

#[test]
fn read_only_handles_refuse_writes_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.zarrdb");
    let err = Database::builder().read_only(true).create(&missing).unwrap_err();
    assert!(matches!(err, Error::Open(OpenError::NotFound { .. })), "{err}");
    assert!(!missing.exists());

    for (name, backend) in [("r.zarrdb", Backend::Redb), ("l", Backend::Lmdb), ("s", Backend::Sled)] {
        let path = dir.path().join(name);
        build(&path, backend);
        {
            let db = Database::builder().backend(backend).read_only(true).open(&path).unwrap();
            let a = Array::open(db.store(), "/g/a").unwrap();
            assert_eq!(a.read_region::<i32>(&[8], &[2]).unwrap(), [8, 9]);
            assert!(a.write_region(&[0], &[1], &[5i32]).is_err(), "{name}: a write went through");
            assert!(Group::create(db.store(), "/h", Default::default()).is_err());
            if backend != Backend::Sled {
                assert!(db.begin_write().is_err(), "{name}: a write transaction began");
            }
        }
        let db = Database::builder().backend(backend).open(&path).unwrap();
        assert_eq!(Array::open(db.store(), "/g/a").unwrap().read_region::<i32>(&[0], &[1]).unwrap(), [0]);
    }
}
