//! redb's commit log (`src/store/log/`, `src/store/redb/log.rs`): a child process makes small durable commits,
//! which only the log beside the file holds, and is killed with SIGKILL. The next open applies
//! them: every acknowledged commit is there, though the file alone lacks them. A log cut in the
//! middle of a record gives the commits before the cut; a log that does not continue the file
//! (the file put back from an older copy) refuses to open, saying so; a log left beside a file
//! that another database's file replaced is not applied to it; a copy of the file is not given
//! the log; a read-only open applies the log in memory and changes no file.

#[path = "common/acknowledged.rs"]
mod acknowledged;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use zarrdb::error::OpenError;
use zarrdb::{Database, Error};

const CHILD_ENV: &str = "ZARRDB_LOG_CHILD";
const COMMITS: u64 = 40;
/// The log's header, before its records.
const HEADER: usize = 40;

/// A value for key `i`, different per key.
fn value(i: u64) -> Vec<u8> {
    (0..100 + i).map(|b| (b * 31 + i) as u8).collect()
}

/// The child: commit `k/0 .. k/COMMITS`, one durable commit each, acknowledging each on stdout;
/// with `ZARRDB_LOG_CHECKPOINT_AT`, one commit of 2 MiB after that many (a checkpoint: too large
/// for the log). Then wait to be killed.
#[test]
fn child_entry() {
    let Some(path) = std::env::var_os(CHILD_ENV) else { return };
    let checkpoint_at = std::env::var("ZARRDB_LOG_CHECKPOINT_AT").ok().and_then(|v| v.parse::<u64>().ok());
    let db = Database::open(&path).unwrap();
    for i in 0..COMMITS {
        if checkpoint_at == Some(i) {
            db.store().set("big", &vec![7u8; 2 << 20]).unwrap();
        }
        db.store().set(&format!("k/{i}"), &value(i)).unwrap();
        println!("ACK {i}");
    }
    println!("DONE");
    std::thread::sleep(std::time::Duration::from_secs(60));
}

/// Run the child on the database at `path` until it has acknowledged every commit, then kill it.
fn commit_and_kill(path: &Path, checkpoint_at: Option<u64>) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, path)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(at) = checkpoint_at {
        command.env("ZARRDB_LOG_CHECKPOINT_AT", at.to_string());
    }
    let mut child: Child = command.spawn().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut acknowledged = 0;
    for line in stdout.lines() {
        let line = line.unwrap();
        // The test harness's own "test child_entry ... " may begin the first line.
        if line.contains("ACK ") {
            acknowledged += 1;
        }
        if line.ends_with("DONE") {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(acknowledged, COMMITS, "the child did not finish its commits");
}

/// A database at a new path, holding `base` (so the file has been committed to durably).
fn fresh(dir: &Path) -> PathBuf {
    let path = dir.join("db.zarrdb");
    Database::create(&path).unwrap().store().set("base", b"before").unwrap();
    path
}

fn log_of(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}-log", path.display()))
}

/// How many of `k/0 ..` the database holds (`common/acknowledged.rs`).
fn held(db: &Database) -> u64 {
    acknowledged::held(db, COMMITS, value)
}

#[test]
fn a_killed_process_loses_no_acknowledged_commit() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(dir.path());
    commit_and_kill(&path, None);
    assert!(log_of(&path).exists(), "the commits went through the log");

    // The file alone (a copy without its log) holds none of them: the log is what keeps them.
    let alone = dir.path().join("alone.zarrdb");
    std::fs::copy(&path, &alone).unwrap();
    assert_eq!(held(&Database::open(&alone).unwrap()), 0);

    // Read-only: the log is applied in memory, and no file changes.
    let (file, log) = (std::fs::read(&path).unwrap(), std::fs::read(log_of(&path)).unwrap());
    assert_eq!(held(&Database::builder().read_only(true).open(&path).unwrap()), COMMITS);
    assert_eq!(std::fs::read(&path).unwrap(), file, "a read-only open changed the file");
    assert_eq!(std::fs::read(log_of(&path)).unwrap(), log, "a read-only open changed the log");

    let db = Database::open(&path).unwrap();
    assert_eq!(held(&db), COMMITS);
    assert_eq!(db.store().get("base").unwrap().as_deref(), Some(&b"before"[..]));
    // Commits after the replay follow the replayed ones, and a clean close folds all into the file.
    db.store().set("after", b"x").unwrap();
    drop(db);
    assert!(!log_of(&path).exists(), "a clean close removes the log");
    let db = Database::open(&path).unwrap();
    assert_eq!(held(&db), COMMITS);
    assert_eq!(db.store().get("after").unwrap().as_deref(), Some(&b"x"[..]));
}

#[test]
fn a_log_cut_in_a_record_gives_the_commits_before_it() {
    let dir = tempfile::tempdir().unwrap();
    for damage in ["cut", "torn", "flipped"] {
        // The log belongs to its file (not to a copy of it): each damage on a database of its own.
        let folder = dir.path().join(damage);
        std::fs::create_dir(&folder).unwrap();
        let path = fresh(&folder);
        commit_and_kill(&path, None);
        let mut bytes = std::fs::read(log_of(&path)).unwrap();
        // Cut inside the 11th record: records follow the log's header (40 bytes), and each
        // record's header says how long it is (`store/log/`).
        let mut at = HEADER;
        for _ in 0..10 {
            let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
            at += 28 + len;
        }
        let cut = match damage {
            "cut" => at + 30,
            "torn" => at + 5,
            _ => at + 40,
        };
        match damage {
            "cut" => bytes.truncate(cut),
            // A torn write: the record's bytes are garbage from here, the file keeps its length.
            "torn" => bytes[cut..].iter_mut().for_each(|b| *b = 0xa5),
            // One byte of the payload wrong, its length and every later record intact: the CRC
            // alone tells.
            _ => bytes[cut] ^= 1,
        }
        std::fs::write(log_of(&path), bytes).unwrap();
        assert_eq!(held(&Database::open(&path).unwrap()), 10, "{damage} at {cut}");
    }
}

#[test]
fn a_log_that_does_not_continue_the_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(dir.path());
    let older = dir.path().join("older.zarrdb");
    // The file as it is before any logged commit: its log position is where the log begins.
    Database::open(&path).unwrap().store().set("anchor", b"1").unwrap();
    std::fs::copy(&path, &older).unwrap();
    // A checkpoint after 5 commits, then 35 more only in the log.
    commit_and_kill(&path, Some(5));
    std::fs::copy(&older, &path).unwrap();
    let err = Database::open(&path).unwrap_err();
    let Error::Open(OpenError::Corrupted { source, .. }) = &err else { panic!("{err:?}") };
    assert!(source.to_string().contains("does not continue the database"), "{err}");
    assert!(source.to_string().contains("db.zarrdb-log"), "the error names the log: {err}");
}

#[test]
fn records_after_a_checkpoint_start_the_log_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(dir.path());
    // 35 records, a checkpoint (the 2 MiB value goes to redb durably), then 5 records written
    // over the first 5 of the 35, which stay behind them in the file.
    commit_and_kill(&path, Some(35));
    let db = Database::open(&path).unwrap();
    assert_eq!(held(&db), COMMITS);
    assert_eq!(db.store().get("big").unwrap().map(|v| v.len()), Some(2 << 20));
}

#[test]
fn a_file_put_back_from_before_a_large_commit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(dir.path());
    let older = dir.path().join("older.zarrdb");
    std::fs::copy(&path, &older).unwrap();
    {
        // A commit too large for the log, then records: the file put back from before the large
        // commit would take them over a state that lacks it.
        let db = Database::open(&path).unwrap();
        db.store().set("big", &vec![7u8; 2 << 20]).unwrap();
        db.store().set("small", b"1").unwrap();
        std::fs::copy(log_of(&path), dir.path().join("saved-log")).unwrap();
    }
    // The file put back in place (the same file, its bytes from before), its log as it was.
    std::fs::copy(&older, &path).unwrap();
    std::fs::copy(dir.path().join("saved-log"), log_of(&path)).unwrap();
    let err = Database::open(&path).unwrap_err();
    assert!(matches!(err, Error::Open(OpenError::Corrupted { .. })), "{err:?}");
}

#[test]
fn a_log_left_beside_another_database_is_not_applied() {
    let dir = tempfile::tempdir().unwrap();
    let path = fresh(dir.path());
    commit_and_kill(&path, None);
    // Another database, made the same way (so its log position is the same number), copied
    // over the killed one's file: the log beside it is not its own.
    let other_dir = dir.path().join("other");
    std::fs::create_dir(&other_dir).unwrap();
    let other = fresh(&other_dir);
    Database::open(&other).unwrap().store().set("base", b"other").unwrap();
    std::fs::copy(&other, &path).unwrap();
    let db = Database::open(&path).unwrap();
    assert_eq!(held(&db), 0);
    assert_eq!(db.store().get("base").unwrap().as_deref(), Some(&b"other"[..]));
    // Its own commits go to the log as usual, and survive a reopen.
    db.store().set("k/0", &value(0)).unwrap();
    db.store().set("k/1", &value(1)).unwrap();
    drop(db);
    assert_eq!(held(&Database::open(&path).unwrap()), 2);
}

#[test]
fn without_the_log_every_commit_is_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plain.zarrdb");
    let db = Database::builder().redb_commit_log(false).create(&path).unwrap();
    db.store().set("k/0", &value(0)).unwrap();
    assert!(!log_of(&path).exists());
    let copy = dir.path().join("copy.zarrdb");
    std::fs::copy(&path, &copy).unwrap();
    assert_eq!(held(&Database::open(&copy).unwrap()), 1);
}
