//! LMDB's commit log needs the database alone (`lmdb_commit_log`): another process's open is
//! refused as locked while it is in use, and it is refused while another process has the
//! database open, by another process or by a second handle of this one. A damaged checkpoint
//! left by a crash is reported, not applied.

use std::path::{Path, PathBuf};
use std::process::Command;

use zarrdb::error::OpenError;
use zarrdb::{Backend, Database, Error};

const CHILD_ENV: &str = "ZARRDB_LMDB_ALONE_CHILD";

/// The child: open the database at `$CHILD_ENV` (with the log when `ZARRDB_LMDB_ALONE_LOG` is
/// set) and say how it went.
#[test]
fn child_entry() {
    let Some(path) = std::env::var_os(CHILD_ENV) else { return };
    let with_log = std::env::var_os("ZARRDB_LMDB_ALONE_LOG").is_some();
    match Database::builder().backend(Backend::Lmdb).lmdb_commit_log(with_log).open(&path) {
        Ok(_) => println!("OUTCOME opened"),
        Err(Error::Open(OpenError::Locked { .. })) => println!("OUTCOME locked"),
        Err(e) => println!("OUTCOME {e}"),
    }
}

/// A new LMDB database `db.lmdb` in `dir`, open with the commit log.
fn create_logged(dir: &Path) -> (PathBuf, Database) {
    let path = dir.join("db.lmdb");
    let db = Database::builder().backend(Backend::Lmdb).lmdb_commit_log(true).create(&path).unwrap();
    (path, db)
}

/// What the child's open of `path` gave.
fn child_opens(path: &Path, with_log: bool) -> String {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(["--exact", "child_entry", "--nocapture", "--test-threads=1"]).env(CHILD_ENV, path);
    if with_log {
        command.env("ZARRDB_LMDB_ALONE_LOG", "1");
    }
    let out = String::from_utf8(command.output().unwrap().stdout).unwrap();
    let line = out.lines().find_map(|l| l.split_once("OUTCOME ")).map(|(_, rest)| rest.to_owned());
    line.unwrap_or_else(|| panic!("the child said nothing: {out}"))
}

#[test]
fn the_log_holds_the_database_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (path, db) = create_logged(dir.path());
    db.store().set("k", b"v").unwrap();
    assert_eq!(child_opens(&path, false), "locked");
    assert_eq!(child_opens(&path, true), "locked");
    drop(db);
    assert_eq!(child_opens(&path, true), "opened");

    // The other way round: a process has it open without the log.
    let db = Database::builder().backend(Backend::Lmdb).open(&path).unwrap();
    assert_eq!(child_opens(&path, true), "locked");
    assert_eq!(child_opens(&path, false), "opened");
    assert_eq!(db.store().get("k").unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn a_damaged_checkpoint_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (path, db) = create_logged(dir.path());
    db.store().set("k", b"v").unwrap();
    // A crash: the handle is never closed, and the checkpoint stays.
    std::mem::forget(db);
    let crashed = dir.path().join("crashed.lmdb");
    std::fs::create_dir(&crashed).unwrap();
    for name in ["data.mdb", "zarrdb-checkpoint", "zarrdb-log"] {
        if path.join(name).exists() {
            std::fs::copy(path.join(name), crashed.join(name)).unwrap();
        }
    }
    let checkpoint = crashed.join("zarrdb-checkpoint");
    let mut bytes = std::fs::read(&checkpoint).unwrap();
    bytes[100] ^= 0x40;
    std::fs::write(&checkpoint, &bytes).unwrap();
    let opened = Database::builder().backend(Backend::Lmdb).open(&crashed);
    match opened {
        Err(Error::Open(OpenError::Corrupted { source, .. })) => {
            assert!(source.to_string().contains("zarrdb-checkpoint is damaged"), "{source}")
        }
        other => panic!("expected a damaged checkpoint, got {:?}", other.err()),
    }
    // Cut short too.
    std::fs::write(&checkpoint, &bytes[..50]).unwrap();
    let opened = Database::builder().backend(Backend::Lmdb).open(&crashed);
    assert!(matches!(opened, Err(Error::Open(OpenError::Corrupted { .. }))), "{:?}", opened.err());
}

#[test]
fn a_second_handle_in_this_process_is_refused_before_it_touches_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let (path, db) = create_logged(dir.path());
    // Logged commits after the open's checkpoint: writing its meta pages back now would undo them.
    for i in 0..20u32 {
        db.store().set(&format!("k/{i}"), &i.to_le_bytes()).unwrap();
    }
    for with_log in [true, false] {
        let again = Database::builder().backend(Backend::Lmdb).lmdb_commit_log(with_log).open(&path);
        assert!(matches!(again, Err(Error::Open(OpenError::Locked { .. }))), "{:?}", again.err());
    }
    db.store().set("k/20", &20u32.to_le_bytes()).unwrap();
    drop(db);
    let db = Database::builder().backend(Backend::Lmdb).open(&path).unwrap();
    for i in 0..=20u32 {
        assert_eq!(db.store().get(&format!("k/{i}")).unwrap(), Some(i.to_le_bytes().to_vec()), "k/{i}");
    }
}
