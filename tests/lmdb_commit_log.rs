//! LMDB behind the commit log (`lmdb_commit_log`, `src/store/lmdb/log.rs`): every acknowledged
//! commit survives a SIGKILL of the process and a simulated crash of the system (each page of
//! `data.mdb` either as the last checkpoint left it or as the process last wrote it), with a
//! large commit (a checkpoint) in between or not. A clean close leaves LMDB's files alone; the
//! folder is held alone while the log is in use.

#[path = "common/acknowledged.rs"]
mod acknowledged;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use zarrdb::error::OpenError;
use zarrdb::{Backend, Database, Error};

const CHILD_ENV: &str = "ZARRDB_LMDB_LOG_CHILD";
const COMMITS: u64 = 40;

/// A value for key `i`, different per key; some span several LMDB pages.
fn value(i: u64) -> Vec<u8> {
    (0..100 + (i % 7) * 3000).map(|b| (b * 31 + i) as u8).collect()
}

fn with_log() -> zarrdb::DatabaseBuilder {
    let mut builder = Database::builder();
    builder.backend(Backend::Lmdb).lmdb_commit_log(true);
    builder
}

/// Commit `k/0 .. k/COMMITS` into `db`, one durable commit each, calling `acknowledged` after
/// each; with `big_at`, one commit of 2 MiB (too large for the log: a checkpoint) before that one.
fn commit_all(db: &Database, big_at: Option<u64>, mut acknowledged: impl FnMut(u64)) {
    for i in 0..COMMITS {
        if big_at == Some(i) {
            db.store().set("big", &vec![7u8; 2 << 20]).unwrap();
        }
        db.store().set(&format!("k/{i}"), &value(i)).unwrap();
        acknowledged(i);
    }
}

/// The child: the commits, each acknowledged on stdout, then a wait to be killed.
#[test]
fn child_entry() {
    let Some(path) = std::env::var_os(CHILD_ENV) else { return };
    let big_at = std::env::var("ZARRDB_LMDB_LOG_BIG_AT").ok().and_then(|v| v.parse::<u64>().ok());
    let db = with_log().open(&path).unwrap();
    commit_all(&db, big_at, |i| println!("ACK {i}"));
    println!("DONE");
    std::thread::sleep(std::time::Duration::from_secs(60));
}

/// How many of `k/0 ..` the database holds (`common/acknowledged.rs`).
fn held(db: &Database) -> u64 {
    acknowledged::held(db, COMMITS, value)
}

/// A database with the log at a new path, holding `base`.
fn fresh(dir: &Path) -> PathBuf {
    let path = dir.join("db.lmdb");
    with_log().create(&path).unwrap().store().set("base", b"before").unwrap();
    path
}

#[test]
fn a_killed_process_loses_no_acknowledged_commit() {
    for big_at in [None, Some(COMMITS / 2)] {
        let dir = tempfile::tempdir().unwrap();
        let path = fresh(dir.path());
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &path)
            .stdout(Stdio::piped());
        if let Some(at) = big_at {
            command.env("ZARRDB_LMDB_LOG_BIG_AT", at.to_string());
        }
        let mut child = command.spawn().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let acknowledged =
            lines.map(Result::unwrap).take_while(|l| !l.ends_with("DONE")).filter(|l| l.contains("ACK ")).count();
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(acknowledged as u64, COMMITS, "the child did not finish");
        assert!(path.join("zarrdb-checkpoint").exists() && path.join("zarrdb-log").exists());

        // A read-only open cannot apply the log, and says so.
        let refused = Database::builder().backend(Backend::Lmdb).read_only(true).open(&path);
        assert!(matches!(refused, Err(Error::Open(OpenError::Engine { .. }))), "{:?}", refused.err());

        // An open without the log applies it too, and leaves LMDB's files whole.
        let db = Database::builder().backend(Backend::Lmdb).open(&path).unwrap();
        assert_eq!(held(&db), COMMITS);
        assert_eq!(db.store().get("base").unwrap().as_deref(), Some(&b"before"[..]));
        assert!(!path.join("zarrdb-checkpoint").exists() && !path.join("zarrdb-log").exists());
        db.store().set("after", b"x").unwrap();
        drop(db);
        let db = with_log().open(&path).unwrap();
        assert_eq!(held(&db), COMMITS);
        assert_eq!(db.store().get("after").unwrap().as_deref(), Some(&b"x"[..]));
    }
}

/// Copy the database folder's `data.mdb` as it stands: at a checkpoint, what the disk holds.
fn image(path: &Path) -> Vec<u8> {
    std::fs::read(path.join("data.mdb")).unwrap()
}

/// The folder a system crash could leave: each 4 KiB page of `data.mdb` from `durable` (the
/// last checkpoint) or from the file as the process left it, at random; the log and the
/// checkpoint as they are (synced before each acknowledgement).
fn crash_image(path: &Path, durable: &[u8], seed: u64, to: &Path) {
    let last = image(path);
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut coin = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state & 1 == 0
    };
    let mut mixed = Vec::with_capacity(last.len().max(durable.len()));
    for at in (0..last.len().max(durable.len())).step_by(4096) {
        let old = durable.get(at..(at + 4096).min(durable.len()));
        let new = last.get(at..(at + 4096).min(last.len()));
        mixed.extend_from_slice(match (old, new) {
            (Some(old), Some(new)) => {
                if coin() {
                    old
                } else {
                    new
                }
            }
            (Some(old), None) => old,
            (None, Some(new)) => new,
            (None, None) => unreachable!(),
        });
    }
    std::fs::create_dir_all(to).unwrap();
    std::fs::write(to.join("data.mdb"), mixed).unwrap();
    for name in ["zarrdb-log", "zarrdb-checkpoint"] {
        std::fs::copy(path.join(name), to.join(name)).unwrap();
    }
}

#[test]
fn a_simulated_system_crash_loses_no_acknowledged_commit() {
    for (seed, big_at) in (0..12).zip([None, Some(COMMITS / 2)].into_iter().cycle()) {
        let dir = tempfile::tempdir().unwrap();
        let path = fresh(dir.path());
        let db = with_log().open(&path).unwrap();
        // The open checkpointed: the disk holds the file as it is now.
        let mut durable = image(&path);
        for i in 0..COMMITS {
            if big_at == Some(i) {
                db.store().set("big", &vec![7u8; 2 << 20]).unwrap();
                // Too large for the log: it checkpointed, so the disk holds the file as it is.
                durable = image(&path);
            }
            db.store().set(&format!("k/{i}"), &value(i)).unwrap();
        }
        let crashed = dir.path().join("crashed.lmdb");
        crash_image(&path, &durable, seed, &crashed);
        // The process "crashes": its handle is never closed.
        std::mem::forget(db);
        let db = with_log().open(&crashed).unwrap();
        assert_eq!(held(&db), COMMITS, "seed {seed}");
        assert_eq!(db.store().get("base").unwrap().as_deref(), Some(&b"before"[..]));
        assert_eq!(db.store().get("big").unwrap().map(|v| v.len()), big_at.map(|_| 2 << 20));
    }
}

#[test]
fn a_clean_close_leaves_lmdb_files_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(dir.path());
    let db = with_log().open(&path).unwrap();
    commit_all(&db, None, |_| {});
    db.compact().unwrap();
    db.store().set("after compaction", b"y").unwrap();
    drop(db);
    let mut names: Vec<_> = std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["data.mdb", "lock.mdb"]);
    let db = Database::builder().backend(Backend::Lmdb).read_only(true).open(&path).unwrap();
    assert_eq!(held(&db), COMMITS);
    assert_eq!(db.store().get("after compaction").unwrap().as_deref(), Some(&b"y"[..]));
}
