//! Two handles of one redb file in one process (its multi-writer mode; LMDB and redb's
//! single-process mode refuse the second open as `Locked`): a thread
//! that holds a transaction on one and writes through the other (the same path opened again, or
//! another name of the file) would wait for its own engine lock; it gets `WouldDeadlock` at once,
//! and another thread's write waits for the transaction and then succeeds.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use zarrdb::error::{StoreError, TransactionError};
use zarrdb::{Backend, Database, Error};

/// Run `scenario` on a thread; its outcome, or a failure after 10 s (a hang).
fn bounded<R: Send + 'static>(scenario: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(scenario());
    });
    rx.recv_timeout(Duration::from_secs(10)).expect("still waiting after 10 s: a hang")
}

fn open(backend: Backend, path: &Path) -> Database {
    let mut builder = Database::builder();
    builder.backend(backend).redb_multi_writer(true);
    builder.open(path).unwrap()
}

/// `alias` gives the name the second handle opens the file by.
fn case(backend: Backend, name: &str, alias: impl FnOnce(&Path, &Path) -> std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let mut builder = Database::builder();
    builder.backend(backend).redb_multi_writer(true);
    builder.create(&path).unwrap();
    let other_name = dir.path().join(format!("other-{name}"));
    let second_path = alias(&path, &other_name);
    let (first, second) = (open(backend, &path), open(backend, &second_path));
    let second_store = second.store();
    let outcome = bounded(move || {
        let txn = first.begin_write().unwrap();
        let refused = second_store.set("k", b"v");
        let nested = second.begin_write().map(drop);
        txn.commit().unwrap();
        let after = second_store.set("k", b"after");
        (refused, nested, after)
    });
    let deadlock = |r: &Result<(), Error>| matches!(r, Err(Error::Transaction(TransactionError::WouldDeadlock { .. })));
    // Through the auto-commit store: the deadlock refusal, reported as the store's unsupported call.
    assert!(
        matches!(&outcome.0, Err(StoreError::Unsupported { store, .. }) if store.contains("inside an open write transaction")),
        "{backend:?} {name}: {:?}",
        outcome.0
    );
    assert!(deadlock(&outcome.1), "{backend:?} {name}: {:?}", outcome.1);
    outcome.2.unwrap();
}

#[test]
fn a_write_through_another_handle_of_the_file_inside_a_transaction_is_refused_at_once() {
    let backend = Backend::Redb;
    case(backend, "same", |path, _| path.to_path_buf());
    case(backend, "hard", |path, other| {
        std::fs::hard_link(path, other).unwrap();
        other.to_path_buf()
    });
    case(backend, "symbolic", |path, other| {
        std::os::unix::fs::symlink(path, other).unwrap();
        other.to_path_buf()
    });
}
