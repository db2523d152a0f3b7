//! A read-only redb handle in the multi-writer mode is redb's own shared reader: a writer of
//! that mode (another handle, as another process would be) goes on committing while it is open,
//! the reader sees the commits, and the file is never written by the reader. A handle reading
//! through the in-memory overlay instead holds the single-writer layout's locks shared, and the
//! writer's next commit would wait for it to close.

use std::sync::mpsc;
use std::time::Duration;

use zarrdb::Database;

#[test]
fn a_writer_commits_while_a_read_only_handle_is_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.zarrdb");
    let writer = Database::builder().redb_multi_writer(true).create(&path).unwrap();
    writer.store().set("before", b"1").unwrap();

    let reader = Database::builder().redb_multi_writer(true).read_only(true).open(&path).unwrap();
    assert_eq!(reader.store().get("before").unwrap().as_deref(), Some(&b"1"[..]));
    assert!(reader.store().set("x", b"1").is_err(), "a read-only handle refuses writes");

    // In a thread, so that a commit waiting for the reader fails the test instead of hanging it.
    let (done, committed) = mpsc::channel();
    let store = writer.store();
    std::thread::spawn(move || {
        let _ = done.send(store.set("after", b"2").map_err(|e| e.to_string()));
    });
    let outcome = committed.recv_timeout(Duration::from_secs(20));
    assert!(matches!(outcome, Ok(Ok(()))), "the writer's commit beside the read-only handle: {outcome:?}");
    assert_eq!(reader.store().get("after").unwrap().as_deref(), Some(&b"2"[..]));
    drop(reader);
    drop(writer);
}

#[test]
fn the_last_handle_is_known() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sole.zarrdb");
    let db = Database::create(&path).unwrap();
    assert!(db.is_sole_handle());
    let store = db.store();
    assert!(!db.is_sole_handle());
    drop(store);
    let snapshot = db.begin_read().unwrap();
    assert!(!db.is_sole_handle());
    drop(snapshot);
    assert!(db.is_sole_handle());
}
