//! Files a killed process left beside a database (a commit log not yet renamed to its name, a
//! compaction's copy) are removed by what they are, never by their name alone: a leftover of this
//! database (of a process no longer running) goes, while files of the same names that hold
//! something else (a user's file, another database's log, a link, a running process's file) stay
//! as they were.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use zarrdb::{Backend, Database};

const CHILD_ENV: &str = "ZARRDB_LEFTOVER_CHILD";

/// The child: durable commits through the log, acknowledged, then wait to be killed.
#[test]
fn child_entry() {
    let Some(path) = std::env::var_os(CHILD_ENV) else { return };
    let db = Database::open(&path).unwrap();
    for i in 0..5u8 {
        db.store().set(&format!("k/{i}"), &[i; 40]).unwrap();
    }
    println!("DONE");
    std::thread::sleep(std::time::Duration::from_secs(60));
}

/// Leave `path`'s commit log behind as a killed writer does; returns the log's path.
fn killed_writer(path: &Path) -> PathBuf {
    Database::create(path).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        if line.unwrap().ends_with("DONE") {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let log = PathBuf::from(format!("{}-log", std::fs::canonicalize(path).unwrap().display()));
    assert!(log.is_file(), "the killed writer left no log at {}", log.display());
    log
}

/// The id of a process that has ended.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// `.NAME.WHAT.PID.N` beside `path`, as zarrdb names its own new files.
fn named(path: &Path, what: &str, pid: u32, n: u32) -> PathBuf {
    let name = path.file_name().unwrap().to_string_lossy();
    path.with_file_name(format!(".{name}.{what}.{pid}.{n}"))
}

fn assert_gone(path: &Path, what: &str) {
    assert!(std::fs::symlink_metadata(path).is_err(), "{what} was left at {}", path.display());
}

fn assert_kept(path: &Path, bytes: &[u8], what: &str) {
    assert_eq!(std::fs::read(path).unwrap(), bytes, "{what} at {} changed or went", path.display());
}

#[test]
fn a_killed_log_creation_is_removed_and_look_alikes_stay() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.redb");
    let log = killed_writer(&path);
    let ours = std::fs::read(&log).unwrap();
    let other_dir = tempfile::tempdir().unwrap();
    let theirs = std::fs::read(killed_writer(&other_dir.path().join("other.redb"))).unwrap();

    let dead = dead_pid();
    let abandoned = named(&log, "new", dead, 0);
    std::fs::write(&abandoned, &ours).unwrap();
    let header_only = named(&log, "new", dead, 1);
    std::fs::write(&header_only, &ours[..20]).unwrap();
    let other_database = named(&log, "new", dead, 2);
    std::fs::write(&other_database, &theirs).unwrap();
    let users = named(&log, "new", dead, 3);
    std::fs::write(&users, b"a user's notes").unwrap();
    // PID 1 always runs: its file may be in use.
    let running = named(&log, "new", 1, 0);
    std::fs::write(&running, &ours).unwrap();
    let outside = dir.path().join("outside");
    std::fs::write(&outside, &ours).unwrap();
    let link = named(&log, "new", dead, 4);
    std::os::unix::fs::symlink(&outside, &link).unwrap();

    // The open replays the killed writer's log; the next commits make a new one.
    let db = Database::open(&path).unwrap();
    for i in 0..5u8 {
        assert_eq!(db.store().get(&format!("k/{i}")).unwrap().as_deref(), Some(&[i; 40][..]));
    }
    for i in 0..3u8 {
        db.store().set(&format!("more/{i}"), &[i; 8]).unwrap();
    }
    drop(db);

    assert_gone(&abandoned, "this database's log a killed creation left");
    assert_gone(&header_only, "a log killed while its header was written");
    assert_kept(&other_database, &theirs, "another database's log");
    assert_kept(&users, b"a user's notes", "a user's file");
    assert_kept(&running, &ours, "a running process's file");
    assert_kept(&outside, &ours, "a link's target");
    assert_eq!(std::fs::read_link(&link).unwrap(), outside);
}

#[test]
fn a_killed_compactions_copy_is_removed_and_look_alikes_stay() {
    for backend in [Backend::Redb, Backend::Lmdb] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let mut builder = Database::builder();
        builder.backend(backend);
        let db = builder.create(&path).unwrap();
        db.store().set("kept", b"kept").unwrap();
        drop(db);
        let file = match backend {
            Backend::Lmdb => path.join("data.mdb"),
            _ => path.clone(),
        };
        let engine_file = std::fs::read(&file).unwrap();

        let dead = dead_pid();
        let abandoned = named(&file, "compacting", dead, 0);
        std::fs::write(&abandoned, &engine_file).unwrap();
        let empty = named(&file, "compacting", dead, 1);
        std::fs::write(&empty, b"").unwrap();
        let users = named(&file, "compacting", dead, 2);
        std::fs::write(&users, b"a user's notes").unwrap();
        let odd_name =
            file.with_file_name(format!(".{}.compacting.{dead}.0.mine", file.file_name().unwrap().to_string_lossy()));
        std::fs::write(&odd_name, &engine_file).unwrap();
        let running = named(&file, "compacting", 1, 0);
        std::fs::write(&running, &engine_file).unwrap();
        // The one name builds before this one used for the copy.
        let older = file.with_file_name(format!(".{}.compacting", file.file_name().unwrap().to_string_lossy()));
        std::fs::write(&older, &engine_file).unwrap();

        let db = builder.open(&path).unwrap();
        // redb copies (rather than compacting in place) while a snapshot is open.
        let snapshot = (backend == Backend::Redb).then(|| db.begin_read().unwrap());
        db.compact().unwrap();
        drop(snapshot);
        assert_eq!(db.store().get("kept").unwrap().as_deref(), Some(&b"kept"[..]));
        drop(db);

        assert_gone(&abandoned, &format!("{backend:?}: an interrupted compaction's copy"));
        assert_gone(&empty, &format!("{backend:?}: an empty copy"));
        assert_gone(&older, &format!("{backend:?}: a copy an earlier build left"));
        assert_kept(&users, b"a user's notes", &format!("{backend:?}: a user's file"));
        assert_kept(&odd_name, &engine_file, &format!("{backend:?}: a name zarrdb does not make"));
        assert_kept(&running, &engine_file, &format!("{backend:?}: a running process's copy"));
    }
}
