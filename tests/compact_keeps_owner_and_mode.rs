//! A compaction that replaces the database's file by a copy (redb's copy while a snapshot is
//! open, LMDB's always) gives the copy the file's mode, owner and group: a file of mode 0600 owned
//! by another user and group stays so, through `Database::compact` and `zarrdb compact`.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Node};

/// A user and group that are not the test's (root here, which may give files away).
const OWNER: (u32, u32) = (1, 1);

fn fill(db: &Database) {
    let a =
        Array::create(db.store(), "/gone", ArrayMetadata::new(DataType::UInt32, vec![262_144], vec![16_384])).unwrap();
    a.write_region(&[0], &[262_144], &vec![7u32; 262_144]).unwrap();
    Node::erase(db.store(), "/gone").unwrap();
    db.store().set("kept", b"kept").unwrap();
}

/// The file whose mode and owner count: redb's file, LMDB's `data.mdb`.
fn file_of(path: &Path, backend: Backend) -> PathBuf {
    match backend {
        Backend::Lmdb => path.join("data.mdb"),
        _ => path.to_owned(),
    }
}

fn give_away(file: &Path) {
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::chown(file, Some(OWNER.0), Some(OWNER.1)).unwrap();
}

fn assert_kept(file: &Path, what: &str) {
    let meta = std::fs::metadata(file).unwrap();
    assert_eq!(meta.mode() & 0o7777, 0o600, "{what}: mode");
    assert_eq!((meta.uid(), meta.gid()), OWNER, "{what}: owner and group");
}

#[test]
fn compaction_keeps_the_files_mode_owner_and_group() {
    // SAFETY: `geteuid` reads no memory and cannot fail.
    assert_eq!(unsafe { libc::geteuid() }, 0, "this test gives files to another user, which needs root");
    for backend in [Backend::Redb, Backend::Lmdb] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let mut builder = Database::builder();
        builder.backend(backend);
        let db = builder.create(&path).unwrap();
        fill(&db);
        let file = file_of(&path, backend);
        give_away(&file);
        let inode = std::fs::metadata(&file).unwrap().ino();
        // A snapshot open: redb copies instead of compacting in place.
        let snapshot = (backend == Backend::Redb).then(|| db.begin_read().unwrap());
        let done = db.compact().unwrap();
        drop(snapshot);
        assert!(done.bytes_after < done.bytes_before, "{backend:?}: {done:?}");
        assert_ne!(std::fs::metadata(&file).unwrap().ino(), inode, "{backend:?}: the file was not replaced");
        assert_kept(&file, &format!("{backend:?} Database::compact"));
        assert_eq!(db.store().get("kept").unwrap().as_deref(), Some(&b"kept"[..]));
        drop(db);
        assert_kept(&file, &format!("{backend:?} after the close"));

        // The command, on a database filled again (LMDB's replaces data.mdb; redb's compacts
        // in place, keeping the file).
        let db = builder.open(&path).unwrap();
        fill(&db);
        drop(db);
        give_away(&file);
        let locator = match backend {
            Backend::Lmdb => format!("lmdb:{}", path.display()),
            _ => path.display().to_string(),
        };
        let out = Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(["compact", &locator]).output().unwrap();
        assert!(out.status.success(), "{backend:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert_kept(&file, &format!("{backend:?} zarrdb compact"));
    }
}
