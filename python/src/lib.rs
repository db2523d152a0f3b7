//! The native half of the `zarrdb` Python package: a thin binding over the library's public API.
//!
//! Python code never sees these types directly: `pysrc/zarrdb/_store.py` wraps them in
//! `zarrdb.ZarrdbStore`, which implements zarr-python's `Store` contract (argument checking,
//! read-only refusal, async methods). Here every method only converts arguments, releases the GIL
//! around the engine call (`Python::detach`), and maps errors to the typed exceptions of
//! `errors.rs`.

mod errors;
mod registry;
mod txn;
mod value;

use std::sync::Arc;

use pyo3::prelude::*;
use zarrdb::{Backend, ByteRange, Durability, Store};

use errors::to_py;
use value::Value;

/// A byte range as Python passes it: `(offset, length)` with `length` None for "to the end", or
/// `(None, n)` for the last `n` bytes. `None` for the whole value.
type PyRange = Option<(Option<u64>, Option<u64>)>;

/// An open database, shared by every `ZarrdbStore` of this process on the same path (the
/// embedded engines lock their files per process, so a second independent open would fail).
#[pyclass(frozen, module = "zarrdb._native")]
struct Database {
    db: Arc<registry::Entry>,
}

#[pymethods]
impl Database {
    /// Open the database at `path`; create it when `create` is true and nothing is there.
    /// `backend` is "redb" (default), "lmdb" or "sled"; `durability` "durable" (default) or "fast";
    /// `multi_process` opens redb in its multi-writer mode, so other processes that open it so
    /// too can read and write it at the same time.
    #[staticmethod]
    #[pyo3(signature = (path, create, backend=None, durability=None, multi_process=false))]
    fn open(
        py: Python<'_>,
        path: std::path::PathBuf,
        create: bool,
        backend: Option<&str>,
        durability: Option<&str>,
        multi_process: bool,
    ) -> PyResult<Database> {
        let backend = match backend.unwrap_or("redb") {
            "redb" => Backend::Redb,
            "lmdb" => Backend::Lmdb,
            "sled" => Backend::Sled,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown backend {other:?}: expected \"redb\", \"lmdb\" or \"sled\""
                )))
            }
        };
        let durability = match durability.unwrap_or("durable") {
            "durable" => Durability::Durable,
            "fast" => Durability::Fast,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown durability {other:?}: expected \"durable\" or \"fast\""
                )))
            }
        };
        let db = py.detach(|| registry::open(&path, create, backend, durability, multi_process)).map_err(to_py)?;
        Ok(Database { db })
    }

    /// The auto-commit store: each write commits on its own.
    fn store(&self) -> NativeStore {
        NativeStore { store: self.db.db.store(), db: self.db.clone() }
    }

    /// A read-only store fixed at the latest commit.
    fn snapshot(&self, py: Python<'_>) -> PyResult<NativeStore> {
        let snapshot = py.detach(|| self.db.db.begin_read()).map_err(to_py)?;
        Ok(NativeStore { store: snapshot.store(), db: self.db.clone() })
    }

    /// Begin a write transaction (waits while another one is open).
    fn begin_write(&self, py: Python<'_>) -> PyResult<txn::Txn> {
        let db = self.db.clone();
        py.detach(|| txn::Txn::begin(db)).map_err(to_py)
    }

    /// Store `value` under `key` unless a value is there, atomically (one transaction); returns
    /// whether it was stored.
    fn set_if_absent(&self, py: Python<'_>, key: &str, value: &[u8]) -> PyResult<bool> {
        py.detach(|| -> Result<bool, zarrdb::Error> {
            let txn = self.db.db.begin_write()?;
            let store = txn.store();
            if store.size(key)?.is_some() {
                return Ok(false);
            }
            store.set(key, value)?;
            txn.commit()?;
            Ok(true)
        })
        .map_err(to_py)
    }

    /// Store several values in one transaction: all of them or none.
    fn set_many(&self, py: Python<'_>, items: Vec<(String, Vec<u8>)>) -> PyResult<()> {
        py.detach(|| -> Result<(), zarrdb::Error> {
            let txn = self.db.db.begin_write()?;
            let store = txn.store();
            for (key, value) in items {
                store.set_owned(&key, value)?;
            }
            txn.commit()
        })
        .map_err(to_py)
    }

    /// The path the database was opened at.
    #[getter]
    fn path(&self) -> std::path::PathBuf {
        self.db.db.path().to_path_buf()
    }

    /// The backend's name: "redb", "lmdb" or "sled".
    #[getter]
    fn backend(&self) -> &'static str {
        self.db.db.backend().name()
    }
}

/// One of the library's stores (auto-commit, snapshot or transaction), with the database it
/// belongs to kept open.
#[pyclass(frozen, module = "zarrdb._native", name = "Store")]
struct NativeStore {
    store: Arc<dyn Store>,
    db: Arc<registry::Entry>,
}

#[pymethods]
impl NativeStore {
    /// The value under `key` (or the part of it given by `range`), or None when absent.
    /// A range reaching past the end of the value is cut at the end, as Python slices are.
    #[pyo3(signature = (key, range=None))]
    fn get(&self, py: Python<'_>, key: &str, range: PyRange) -> PyResult<Option<Value>> {
        let value = py.detach(|| get_clamped(self.store.as_ref(), key, range)).map_err(to_py)?;
        Ok(value.map(Value::new))
    }

    /// Several (ranged) values at once, each None when absent.
    fn get_many(&self, py: Python<'_>, requests: Vec<(String, PyRange)>) -> PyResult<Vec<Option<Value>>> {
        let values = py
            .detach(|| {
                requests
                    .iter()
                    .map(|(key, range)| get_clamped(self.store.as_ref(), key, *range))
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(to_py)?;
        Ok(values.into_iter().map(|v| v.map(Value::new)).collect())
    }

    /// The size in bytes of the value under `key`, or None when absent.
    fn size(&self, py: Python<'_>, key: &str) -> PyResult<Option<u64>> {
        py.detach(|| self.store.size(key)).map_err(to_py)
    }

    /// Store `value` under `key`.
    fn set(&self, py: Python<'_>, key: &str, value: &[u8]) -> PyResult<()> {
        py.detach(|| self.store.set(key, value)).map_err(to_py)
    }

    /// Remove `key` (absent keys are not an error).
    fn erase(&self, py: Python<'_>, key: &str) -> PyResult<()> {
        py.detach(|| self.store.erase(key)).map_err(to_py)
    }

    /// Remove every key starting with `prefix` ("" removes everything).
    fn erase_prefix(&self, py: Python<'_>, prefix: &str) -> PyResult<()> {
        py.detach(|| self.store.erase_prefix(prefix)).map_err(to_py)
    }

    /// Every key starting with `prefix`, sorted.
    fn list_prefix(&self, py: Python<'_>, prefix: &str) -> PyResult<Vec<String>> {
        py.detach(|| self.store.list_prefix(prefix)).map_err(to_py)
    }

    /// The key names and child prefix names directly under `prefix` ("" or ending with "/").
    fn list_dir(&self, py: Python<'_>, prefix: &str) -> PyResult<(Vec<String>, Vec<String>)> {
        let listing = py.detach(|| self.store.list_dir(prefix)).map_err(to_py)?;
        Ok((listing.keys, listing.prefixes))
    }

    /// Whether this store accepts writes (false for snapshots).
    #[getter]
    fn writable(&self) -> bool {
        self.store.capabilities().writable
    }

    /// The database this store belongs to.
    #[getter]
    fn database(&self) -> Database {
        Database { db: self.db.clone() }
    }
}

/// Read `key`, or a range of it cut to the value's end, from one consistent view: a ranged read
/// asks for the size and then the bytes, and a writer in between must not make them disagree, so
/// both run on a snapshot when the store is the auto-commit one.
fn get_clamped(store: &dyn Store, key: &str, range: PyRange) -> Result<Option<Vec<u8>>, zarrdb::Error> {
    let Some((offset, length)) = range else { return Ok(store.get(key)?) };
    let scope = store.begin_scope(false)?;
    let view = scope.as_ref().map_or_else(|| None, |s| Some(s.store()));
    let view: &dyn Store = view.as_deref().unwrap_or(store);
    let Some(len) = view.size(key)? else { return Ok(None) };
    let range = match (offset, length) {
        (None, Some(n)) => ByteRange::Suffix(n.min(len)),
        (None, None) => ByteRange::FromStart { offset: 0, length: None },
        (Some(start), length) => {
            let start = start.min(len);
            ByteRange::FromStart { offset: start, length: Some(length.map_or(len - start, |n| n.min(len - start))) }
        }
    };
    let mut values = view.get_partial_values(&[(key, range)])?;
    if let Some(scope) = scope {
        scope.finish()?;
    }
    Ok(values.pop().flatten())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Database>()?;
    m.add_class::<NativeStore>()?;
    m.add_class::<txn::Txn>()?;
    m.add_class::<Value>()?;
    errors::register(m)?;
    Ok(())
}
