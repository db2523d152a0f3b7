//! The shared commit log of redb's multi-writer mode holds many records between checkpoints, and
//! gives its space back when a handle closes with no other holding its lock: a closed database
//! takes its file and a log of a header, and a handle still open beside the one that closed
//! goes on committing, its commits read by every handle.

use std::path::{Path, PathBuf};

use zarrdb::{Database, Durability};

fn open(path: &Path) -> Database {
    Database::builder().redb_multi_writer(true).durability(Durability::Durable).open(path).unwrap()
}

fn log_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-log");
    PathBuf::from(name)
}

fn value(n: u64) -> Vec<u8> {
    (0..8000u64).map(|i| (i ^ n.wrapping_mul(31)) as u8).collect()
}

#[test]
fn a_closed_database_gives_its_logs_space_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("space.zarrdb");
    let db = Database::builder().redb_multi_writer(true).create(&path).unwrap();
    let store = db.store();
    for n in 0..300 {
        store.set(&format!("k/{n}"), &value(n)).unwrap();
    }
    // Commits of 8 KB each: records of the log, not checkpoints, until it is full.
    let log_len = std::fs::metadata(log_of(&path)).unwrap().len();
    assert!(log_len > 2 << 20, "300 commits of 8 KB went to the log ({log_len} bytes)");
    drop(store);
    drop(db);
    let log_len = std::fs::metadata(log_of(&path)).unwrap().len();
    assert!(log_len < 4096, "the closed database's log holds no record ({log_len} bytes)");
    let file_len = std::fs::metadata(&path).unwrap().len();
    assert!(file_len < 2 * 300 * 8000, "the file holds the values once ({file_len} bytes)");
    let db = open(&path);
    for n in 0..300 {
        assert_eq!(db.store().get(&format!("k/{n}")).unwrap(), Some(value(n)), "k/{n} after the close");
    }
}

#[test]
fn a_handle_goes_on_after_another_closed_and_cut_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two.zarrdb");
    drop(Database::builder().redb_multi_writer(true).create(&path).unwrap());
    let (first, second) = (open(&path), open(&path));
    for n in 0..100 {
        first.store().set(&format!("k/{n}"), &value(n)).unwrap();
    }
    // The second reads the first's records (and remembers them), then closes: the lock is free,
    // so it checkpoints them into the file and cuts the log back.
    assert_eq!(second.store().get("k/99").unwrap(), Some(value(99)));
    drop(second);
    assert!(std::fs::metadata(log_of(&path)).unwrap().len() < 4096, "the log was cut");
    // The first goes on in the cut log; what it remembered of the log is not taken for it.
    for n in 100..200 {
        first.store().set(&format!("k/{n}"), &value(n + 1000)).unwrap();
    }
    first.store().set("k/5", &value(5000)).unwrap();
    let third = open(&path);
    for db in [&first, &third] {
        for n in 0..200 {
            let want = match n {
                5 => value(5000),
                n if n >= 100 => value(n + 1000),
                n => value(n),
            };
            assert_eq!(db.store().get(&format!("k/{n}")).unwrap(), Some(want), "k/{n}");
        }
    }
}
