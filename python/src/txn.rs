//! Explicit transactions for Python.
//!
//! A library `Transaction` must end on the thread that began it (it owns the database's writer
//! lock), but Python calls arrive on any thread: the event loop, `asyncio.to_thread` workers,
//! dask threads. So each transaction lives on a thread of its own that begins it, waits for one
//! word (commit or abort) and ends it there; the transaction's store is shared and usable from
//! every thread meanwhile.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use zarrdb::Store;

use crate::errors::to_py;
use crate::registry::Handle;
use crate::NativeStore;

/// How a transaction's owner thread is told to end it (`Some` commits with that note, `None`
/// aborts), and how it answers.
type EndChannel = (mpsc::Sender<Option<Note>>, mpsc::Receiver<Result<(), zarrdb::Error>>);

/// A commit's message and author (recorded by a database that keeps history).
type Note = (String, String);

/// An open write transaction.
#[pyclass(frozen, module = "zarrdb._native")]
pub(crate) struct Txn {
    store: Arc<dyn Store>,
    db: Handle,
    /// `Some` until the transaction ends: true commits, false aborts; the answer comes back.
    end: Mutex<Option<EndChannel>>,
}

impl Txn {
    pub(crate) fn begin(db: Handle) -> Result<Txn, zarrdb::Error> {
        let (started_tx, started_rx) = mpsc::channel();
        let (end_tx, end_rx) = mpsc::channel::<Option<Note>>();
        let (done_tx, done_rx) = mpsc::channel();
        let database = db.db()?;
        std::thread::Builder::new()
            .name("zarrdb-transaction".into())
            .spawn(move || {
                let txn = match database.begin_write() {
                    Ok(txn) => txn,
                    Err(e) => {
                        let _ = started_tx.send(Err(e));
                        return;
                    }
                };
                if started_tx.send(Ok(txn.store())).is_err() {
                    return;
                }
                // A dropped sender (the Python object collected unfinished) aborts.
                let result = match end_rx.recv() {
                    Ok(Some((message, author))) => txn.commit_with(&message, &author),
                    _ => {
                        txn.abort();
                        Ok(())
                    }
                };
                let _ = done_tx.send(result);
            })
            .map_err(|e| zarrdb::error::StoreError::Io {
                operation: "begin transaction",
                key: String::new(),
                source: e,
            })?;
        let store = started_rx.recv().map_err(|_| ended("begin"))??;
        Ok(Txn { store, db, end: Mutex::new(Some((end_tx, done_rx))) })
    }

    fn finish(&self, commit: Option<Note>) -> Result<(), zarrdb::Error> {
        let Some((end, done)) = self.end.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return Err(ended(if commit.is_some() { "commit" } else { "abort" }).into());
        };
        end.send(commit).map_err(|_| ended("commit"))?;
        done.recv().map_err(|_| ended("commit"))?
    }
}

fn ended(operation: &'static str) -> zarrdb::error::StoreError {
    zarrdb::error::StoreError::TransactionEnded { operation, key: String::new() }
}

#[pymethods]
impl Txn {
    /// The store of this transaction: reads see its own writes.
    fn store(&self) -> NativeStore {
        NativeStore { store: Some(self.store.clone()), db: self.db.clone(), checked: true, auto_commit: false }
    }

    /// Apply every write atomically (durably, in durable mode).
    /// `message` and `author` are recorded with the commit by a database that keeps history.
    #[pyo3(signature = (message=String::new(), author=String::new()))]
    fn commit(&self, py: Python<'_>, message: String, author: String) -> PyResult<()> {
        py.detach(|| self.finish(Some((message, author)))).map_err(to_py)
    }

    /// Discard every write.
    fn abort(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.finish(None)).map_err(to_py)
    }

    /// Whether commit or abort has run.
    #[getter]
    fn ended(&self) -> bool {
        self.end.lock().unwrap_or_else(|p| p.into_inner()).is_none()
    }
}
