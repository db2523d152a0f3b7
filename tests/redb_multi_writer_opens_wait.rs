//! In redb's multi-writer mode, handles open and close all the time (every Python process, every
//! `zarrdb` command), and an open must not fail because it met another handle's open or close:
//! a closing writer compacts the file under an exclusive lock, and two opens that meet take each
//! other's locks for a moment. Such an open waits for the moment to pass. Before it did, a
//! `zarrdb tree` beside a Python writer that reopened in a loop was refused as "locked" several
//! times a second, and the writer's own open as a process of "another locking protocol".
//!
//! Each handle here takes the file's locks as a process of its own would. A holder that keeps
//! the locks (a writer in single-process mode) still keeps other opens out.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zarrdb::Database;

const RUN: Duration = Duration::from_secs(3);

fn writer(path: &std::path::Path) -> Result<Database, zarrdb::Error> {
    Database::builder().redb_multi_writer(true).open(path)
}

#[test]
fn opens_beside_closing_writers_are_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cohort.zarrdb");
    drop(Database::builder().redb_multi_writer(true).create(&path).unwrap());

    let stop = Arc::new(AtomicBool::new(false));
    // Writers that grow the file, so that each close compacts it, then erase what they wrote.
    let growers: Vec<_> = (0..2)
        .map(|w| {
            let (path, stop) = (path.clone(), stop.clone());
            std::thread::spawn(move || -> Result<usize, String> {
                let mut opens = 0;
                while !stop.load(Ordering::Relaxed) {
                    let db = writer(&path).map_err(|e| format!("writer {w} open {opens}: {e}"))?;
                    let store = db.store();
                    let key = format!("grow/{w}");
                    store.set(&key, &vec![w as u8; 1 << 20]).map_err(|e| e.to_string())?;
                    store.erase(&key).map_err(|e| e.to_string())?;
                    drop(store);
                    drop(db);
                    opens += 1;
                }
                Ok(opens)
            })
        })
        .collect();
    // Readers: one read-only in the multi-writer mode (a Python `read_only` store), one as
    // `zarrdb tree` opens (read-only, no mode asked for).
    let readers: Vec<_> = [true, false]
        .into_iter()
        .enumerate()
        .map(|(r, multi_writer)| {
            let (path, stop) = (path.clone(), stop.clone());
            std::thread::spawn(move || -> Result<usize, String> {
                let mut opens = 0;
                while !stop.load(Ordering::Relaxed) {
                    let db = Database::builder()
                        .redb_multi_writer(multi_writer)
                        .read_only(true)
                        .open(&path)
                        .map_err(|e| format!("reader {r} open {opens}: {e}"))?;
                    db.store().get("grow/0").map_err(|e| e.to_string())?;
                    drop(db);
                    opens += 1;
                }
                Ok(opens)
            })
        })
        .collect();

    let start = Instant::now();
    while start.elapsed() < RUN && !growers.iter().chain(&readers).any(|t| t.is_finished()) {
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::Relaxed);
    let mut failures = Vec::new();
    let mut opens = 0;
    for thread in growers.into_iter().chain(readers) {
        match thread.join().unwrap() {
            Ok(n) => opens += n,
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "opens refused beside the cohort's opens and closes: {failures:?}");
    assert!(opens > 20, "the handles opened {opens} times in all");

    // A holder that keeps the locks still refuses, once the wait has passed.
    let holder = Database::builder().redb_multi_writer(false).open(&path).unwrap();
    let started = Instant::now();
    match writer(&path) {
        Err(zarrdb::Error::Open(zarrdb::error::OpenError::Locked { .. })) => {}
        Err(other) => panic!("a single-process holder: {other:?}"),
        Ok(_) => panic!("a multi-writer open beside a single-process holder was let in"),
    }
    assert!(started.elapsed() < Duration::from_secs(30));
    drop(holder);
    writer(&path).unwrap();
}
