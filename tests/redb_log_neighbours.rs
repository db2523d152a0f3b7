//! A file named like redb's commit log (`<database>-log`) that is not the database's own log is
//! left alone: another redb database of that name, a symbolic link to a file outside the folder,
//! a FIFO. The database beside it is created (through the command and the library), commits
//! through its log (which takes another name, recorded in the database), is killed, and opens
//! again with every acknowledged commit; the neighbour's bytes, link and FIFO are as they were.

#[path = "common/acknowledged.rs"]
mod acknowledged;

use std::ffi::CString;
use std::io::{BufRead, BufReader};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use zarrdb::Database;

const CHILD_ENV: &str = "ZARRDB_NEIGHBOUR_CHILD";
const COMMITS: u64 = 20;

fn value(i: u64) -> Vec<u8> {
    (0..50 + i).map(|b| (b * 7 + i) as u8).collect()
}

/// The child: small durable commits (through the log), each acknowledged, then wait to be killed.
#[test]
fn child_entry() {
    let Some(path) = std::env::var_os(CHILD_ENV) else { return };
    let db = Database::open(&path).unwrap();
    for i in 0..COMMITS {
        db.store().set(&format!("k/{i}"), &value(i)).unwrap();
        println!("ACK {i}");
    }
    println!("DONE");
    std::thread::sleep(std::time::Duration::from_secs(60));
}

fn commit_and_kill(path: &Path) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut acknowledged = 0;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        acknowledged += u64::from(line.contains("ACK "));
        if line.ends_with("DONE") {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(acknowledged, COMMITS);
}

/// What is at `path`, without following a link: the link's target, a FIFO, or the file's bytes.
fn snapshot(path: &Path) -> String {
    let meta = std::fs::symlink_metadata(path).unwrap();
    if meta.file_type().is_symlink() {
        format!("link to {}", std::fs::read_link(path).unwrap().display())
    } else if meta.file_type().is_fifo() {
        "fifo".to_owned()
    } else {
        format!("file {:?}", std::fs::read(path).unwrap())
    }
}

fn log_name(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}-log", path.display()))
}

#[test]
fn a_neighbour_named_like_the_log_is_left_alone_and_the_database_commits() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("precious.txt");
    std::fs::write(&target, b"not a log").unwrap();
    for kind in ["database", "symlink", "fifo"] {
        let folder = dir.path().join(kind);
        std::fs::create_dir(&folder).unwrap();
        let path = folder.join("data");
        let neighbour = log_name(&path);
        match kind {
            "database" => {
                let other = Database::create(&neighbour).unwrap();
                other.store().set("mine", b"other database").unwrap();
            }
            "symlink" => std::os::unix::fs::symlink(&target, &neighbour).unwrap(),
            _ => {
                let name = CString::new(neighbour.as_os_str().as_bytes()).unwrap();
                // SAFETY: `name` is a NUL-terminated path that outlives the call.
                assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
            }
        }
        let before = snapshot(&neighbour);
        // Created through the command, as a user would.
        let out = Command::new(env!("CARGO_BIN_EXE_zarrdb"))
            .args(["create", path.to_str().unwrap(), "/a", "--shape", "4", "--chunks", "2", "--dtype", "int32"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{kind}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(snapshot(&neighbour), before, "{kind}: the create changed the neighbour");

        commit_and_kill(&path);
        assert_eq!(snapshot(&neighbour), before, "{kind}: the commits changed the neighbour");
        assert_eq!(std::fs::read(&target).unwrap(), b"not a log", "{kind}: the link's target changed");
        let db = Database::open(&path).unwrap();
        assert_eq!(acknowledged::held(&db, COMMITS, value), COMMITS, "{kind}: acknowledged commits lost");
        db.store().set("after", b"1").unwrap();
        drop(db);
        assert_eq!(snapshot(&neighbour), before, "{kind}: the reopen or close changed the neighbour");
        // The log went beside the neighbour, and the close removed it: only the two are left.
        let mut names: Vec<_> = std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        assert_eq!(names, ["data", "data-log"], "{kind}");
        if kind == "database" {
            let other = Database::open(&neighbour).unwrap();
            assert_eq!(other.store().get("mine").unwrap().as_deref(), Some(&b"other database"[..]));
        }
    }
}
