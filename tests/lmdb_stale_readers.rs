//! A process killed while it holds an LMDB snapshot leaves its reader slot behind, and LMDB keeps
//! every page that slot could read: without `mdb_reader_check`, each later commit that rewrites a
//! value adds its size to the file. zarrdb's writers clear dead readers' slots, so the file stays
//! bounded.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use zarrdb::{Backend, Database};

const CHILD: &str = "ZARRDB_STALE_READER_CHILD";

/// Run as a child process (by the test below): hold a snapshot until killed.
#[test]
fn hold_a_snapshot_until_killed() {
    let Some(path) = std::env::var_os(CHILD) else { return };
    let db = Database::builder().backend(Backend::Lmdb).open(path).unwrap();
    let _snapshot = db.begin_read().unwrap();
    println!("holding");
    std::thread::sleep(std::time::Duration::from_secs(120));
}

#[test]
fn a_killed_reader_does_not_pin_pages() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("l");
    let value = vec![7u8; 1 << 20];
    // Open throughout: the first process to open an environment resets its reader table, so the
    // stale slot only matters to a process that had it open all along (a long-lived writer).
    let db = Database::builder().backend(Backend::Lmdb).create(&path).unwrap();
    db.store().set("v", &value).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "hold_a_snapshot_until_killed", "--nocapture", "--test-threads=1"])
        .env(CHILD, &path)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(lines.any(|l| l.is_ok_and(|l| l.contains("holding"))), "the child never held its snapshot");
    child.kill().unwrap(); // SIGKILL: the slot is left behind
    child.wait().unwrap();

    // Past the interval, so the next writer checks the reader table.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    for i in 0..100u8 {
        let mut v = value.clone();
        v[0] = i;
        db.store().set("v", &v).unwrap();
    }
    let size = std::fs::metadata(path.join("data.mdb")).unwrap().len();
    // Pinned pages would make it about 100 MiB; reused pages keep it to a few copies.
    assert!(size < 16 << 20, "data.mdb grew to {size} bytes");
}
