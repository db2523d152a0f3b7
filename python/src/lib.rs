//! The native half of the `zarrdb` Python package: a thin binding over the library's public API.
//!
//! Python code never sees these types directly: `pysrc/zarrdb/_store.py` wraps them in
//! `zarrdb.ZarrdbStore`, which implements zarr-python's `Store` contract (argument checking,
//! read-only refusal, async methods). Here every method only converts arguments, releases the GIL
//! around the engine call (`Python::detach`), and maps errors to the typed exceptions of
//! `errors.rs`.

mod array;
mod errors;
mod registry;
mod submit;
mod txn;
mod value;

use std::sync::Arc;

use pyo3::prelude::*;
use zarrdb::db::VersionRef;
use zarrdb::hierarchy::RawAccess;
use zarrdb::store::ByteRange;
use zarrdb::{Backend, Durability, Store};

use errors::to_py;
use value::Value;

/// A byte range as Python passes it: `(offset, length)` with `length` None for "to the end", or
/// `(None, n)` for the last `n` bytes. `None` for the whole value.
type PyRange = Option<(Option<u64>, Option<u64>)>;

/// An open database, shared by every `ZarrdbStore` of this process on the same path (the
/// embedded engines lock their files per process, so a second independent open would fail).
#[pyclass(frozen, module = "zarrdb._native")]
struct Database {
    db: registry::Handle,
}

#[pymethods]
impl Database {
    /// Open the database at `path`; create it when `create` is true and nothing is there.
    /// `path` may be a bucket locator (`zarrdb+s3://bucket/prefix`, `zarrdb+memory://name`),
    /// whose backend is "bucket" (the S3 client reads the `AWS_*` environment variables).
    /// `backend` is "redb" (default), "lmdb" or "sled"; `durability` "durable" (default) or "fast";
    /// `multi_process` opens redb in its multi-writer mode, so other processes that open it so
    /// too can read and write it at the same time; `cache_size` is redb's page cache in bytes
    /// (`registry::DEFAULT_REDB_CACHE` when None); `commit_log` runs LMDB behind zarrdb's commit
    /// log (`DatabaseBuilder::lmdb_commit_log`: faster durable commits, the folder held alone);
    /// `read_only` opens it without ever writing its files, unless a writable handle of this
    /// process is open on it already (`registry::open`).
    #[staticmethod]
    #[pyo3(signature = (path, create, backend=None, durability=None, multi_process=false, cache_size=None, commit_log=false, read_only=false, history=false))]
    #[expect(clippy::too_many_arguments, reason = "Python's keyword arguments, passed through")]
    fn open(
        py: Python<'_>,
        path: std::path::PathBuf,
        create: bool,
        backend: Option<&str>,
        durability: Option<&str>,
        multi_process: bool,
        cache_size: Option<usize>,
        commit_log: bool,
        read_only: bool,
        history: bool,
    ) -> PyResult<Database> {
        // A bucket locator names its backend itself (`DatabaseBuilder::open` redirects it too;
        // the registry must know it to compare the backends of two opens).
        let locator = registry::is_locator(&path);
        let backend = match (backend, locator) {
            (None | Some("bucket"), true) => Backend::Bucket,
            (Some(other), true) => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "backend {other:?} cannot open a bucket locator ({}): leave backend unset",
                    path.display()
                )))
            }
            (Some("bucket"), false) => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "backend \"bucket\" needs a zarrdb+s3:// or zarrdb+memory:// locator, not {:?}",
                    path.display().to_string()
                )))
            }
            (backend, false) => match backend.unwrap_or("redb") {
                "redb" => Backend::Redb,
                "lmdb" => Backend::Lmdb,
                "sled" => Backend::Sled,
                other => {
                    return Err(pyo3::exceptions::PyValueError::new_err(format!(
                        "unknown backend {other:?}: expected \"redb\", \"lmdb\" or \"sled\""
                    )))
                }
            },
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
        if commit_log && backend != Backend::Lmdb {
            return Err(pyo3::exceptions::PyValueError::new_err("commit_log applies to backend='lmdb' only"));
        }
        let settings = registry::Settings { durability, multi_process, cache_size, commit_log, history };
        let db =
            py.detach(|| registry::open(&path, create && !read_only, read_only, backend, settings)).map_err(to_py)?;
        Ok(Database { db: registry::Handle { entry: db, branch: None } })
    }

    /// The same database on branch `name`: its stores read the branch's head and its writes,
    /// transactions and restores commit to the branch (`zarrdb::Database::on_branch`).
    fn on_branch(&self, py: Python<'_>, name: &str) -> PyResult<Database> {
        let db = py.detach(|| self.db.on_branch(name)).map_err(to_py)?;
        Ok(Database { db })
    }

    /// The branch this database object reads and commits to.
    #[getter]
    fn branch(&self) -> &str {
        self.db.branch.as_deref().unwrap_or("main")
    }

    /// The auto-commit store: each write commits on its own.
    fn store(&self) -> NativeStore {
        NativeStore { store: None, db: self.db.clone(), checked: true, auto_commit: true }
    }

    /// A read-only store fixed at the latest commit.
    fn snapshot(&self, py: Python<'_>) -> PyResult<NativeStore> {
        let snapshot = py.detach(|| self.db.db()?.begin_read()).map_err(to_py)?;
        Ok(NativeStore { store: Some(snapshot.store()), db: self.db.clone(), checked: true, auto_commit: false })
    }

    /// A read-only store of one version of a database that keeps history: `reference` names it
    /// (a tag, `main`, or a commit id of 16 hexadecimal digits), or `as_of_us` (microseconds
    /// since the Unix epoch) takes the newest commit made then or before.
    #[pyo3(signature = (reference=None, as_of_us=None))]
    fn version(&self, py: Python<'_>, reference: Option<&str>, as_of_us: Option<u64>) -> PyResult<NativeStore> {
        let at = match (reference, as_of_us) {
            (Some(text), None) => VersionRef::named(text),
            (None, Some(us)) => VersionRef::AsOf(std::time::UNIX_EPOCH + std::time::Duration::from_micros(us)),
            _ => return Err(pyo3::exceptions::PyValueError::new_err("give a version or a time, not both or neither")),
        };
        let snapshot = py.detach(|| self.db.db()?.open_version(&at)).map_err(to_py)?;
        Ok(NativeStore { store: Some(snapshot.store()), db: self.db.clone(), checked: true, auto_commit: false })
    }

    /// The commits of this object's branch, newest first: (id, parent or None, time in µs since
    /// the Unix epoch, message, author, changes, bytes written).
    #[expect(clippy::type_complexity, reason = "a Python tuple per commit")]
    fn log(&self, py: Python<'_>) -> PyResult<Vec<(String, Option<String>, u64, String, String, u64, u64)>> {
        let log = py.detach(|| self.db.db()?.log()).map_err(to_py)?;
        Ok(log
            .into_iter()
            .map(|c| {
                let us = c.time.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64);
                (c.id.to_string(), c.parent.map(|p| p.to_string()), us, c.message, c.author, c.changes, c.bytes)
            })
            .collect())
    }

    /// The commit the version `at` names now (as `version` reads it): (id, parent id or None).
    fn resolve(&self, py: Python<'_>, at: &str) -> PyResult<(String, Option<String>)> {
        let commit = py.detach(|| self.db.db()?.resolve(&VersionRef::named(at))).map_err(to_py)?;
        Ok((commit.id.to_string(), commit.parent.map(|p| p.to_string())))
    }

    /// Tag the version `at` names (as `version` reads it) as `name`, for good; its commit id.
    fn tag(&self, py: Python<'_>, name: &str, at: &str) -> PyResult<String> {
        let id = py.detach(|| self.db.db()?.tag(name, &VersionRef::named(at))).map_err(to_py)?;
        Ok(id.to_string())
    }

    /// Delete tag `name`; the name is never used again.
    fn delete_tag(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        py.detach(|| self.db.db()?.delete_tag(name)).map_err(to_py)
    }

    /// Make `node` hold again what it held in the version `at` names, as one new commit; the
    /// commit id the database is at afterwards.
    fn restore(&self, py: Python<'_>, node: &str, at: &str) -> PyResult<String> {
        let commit = py.detach(|| self.db.db()?.restore(node, &VersionRef::named(at))).map_err(to_py)?;
        Ok(commit.id.to_string())
    }

    /// The keys that differ between two versions (as `version` names them): (key, length
    /// before or None, length after or None).
    #[expect(clippy::type_complexity, reason = "a Python tuple per key")]
    fn diff(&self, py: Python<'_>, from: &str, to: &str) -> PyResult<Vec<(String, Option<u64>, Option<u64>)>> {
        let changes =
            py.detach(|| self.db.db()?.diff(&VersionRef::named(from), &VersionRef::named(to))).map_err(to_py)?;
        Ok(changes.into_iter().map(|c| (c.key, c.before, c.after)).collect())
    }

    /// Expire every version older than the one `keep` names (as `version` reads it; or
    /// `as_of_us`, the one current then) that no tag names; the commit id of the horizon (None
    /// while no version has expired).
    #[pyo3(signature = (keep=None, as_of_us=None))]
    fn expire(&self, py: Python<'_>, keep: Option<&str>, as_of_us: Option<u64>) -> PyResult<Option<String>> {
        let at = match (keep, as_of_us) {
            (Some(text), None) => VersionRef::named(text),
            (None, Some(us)) => VersionRef::AsOf(std::time::UNIX_EPOCH + std::time::Duration::from_micros(us)),
            _ => return Err(pyo3::exceptions::PyValueError::new_err("give a version or a time, not both or neither")),
        };
        let horizon = py.detach(|| self.db.db()?.expire(&at)).map_err(to_py)?;
        Ok(horizon.map(|id| id.to_string()))
    }

    /// Free what only expired versions read: (versions, values, bytes) freed.
    fn collect(&self, py: Python<'_>) -> PyResult<(u64, u64, u64)> {
        let freed = py.detach(|| self.db.db()?.collect()).map_err(to_py)?;
        Ok((freed.versions, freed.values, freed.bytes))
    }

    /// Make branch `name` at the version `at` names (as `version` reads it); its commit id.
    fn create_branch(&self, py: Python<'_>, name: &str, at: &str) -> PyResult<String> {
        let id = py.detach(|| self.db.db()?.create_branch(name, &VersionRef::named(at))).map_err(to_py)?;
        Ok(id.to_string())
    }

    /// Delete branch `name` (not `main`).
    fn delete_branch(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        py.detach(|| self.db.db()?.delete_branch(name)).map_err(to_py)
    }

    /// Every branch and the commit id it points at.
    fn branches(&self, py: Python<'_>) -> PyResult<Vec<(String, String)>> {
        let branches = py.detach(|| self.db.db()?.branches()).map_err(to_py)?;
        Ok(branches.into_iter().map(|(name, id)| (name, id.to_string())).collect())
    }

    /// Merge the version `from` names into branch `into`: ("up_to_date" | "fast_forward" |
    /// "merged", the branch's commit id afterwards). With `fast_forward` false, a merge commit
    /// even where the branch could fast-forward (`Database::merge_commit`).
    #[pyo3(signature = (from, into, message, fast_forward=true))]
    fn merge(
        &self,
        py: Python<'_>,
        from: &str,
        into: &str,
        message: &str,
        fast_forward: bool,
    ) -> PyResult<(&'static str, String)> {
        let from = VersionRef::named(from);
        let outcome = py
            .detach(|| {
                let db = self.db.db()?;
                match fast_forward {
                    true => db.merge(&from, into, message),
                    false => db.merge_commit(&from, into, message),
                }
            })
            .map_err(to_py)?;
        let kind = match outcome {
            zarrdb::db::MergeOutcome::UpToDate(_) => "up_to_date",
            zarrdb::db::MergeOutcome::FastForward(_) => "fast_forward",
            _ => "merged",
        };
        Ok((kind, outcome.head().to_string()))
    }

    /// Point branch `name` at the version `to` names; its commit id.
    fn reset(&self, py: Python<'_>, name: &str, to: &str) -> PyResult<String> {
        let id = py.detach(|| self.db.db()?.reset(name, &VersionRef::named(to))).map_err(to_py)?;
        Ok(id.to_string())
    }

    /// Every tag and the commit id it names.
    fn tags(&self, py: Python<'_>) -> PyResult<Vec<(String, String)>> {
        let tags = py.detach(|| self.db.db()?.tags()).map_err(to_py)?;
        Ok(tags.into_iter().map(|(name, id)| (name, id.to_string())).collect())
    }

    /// Whether the database keeps history.
    fn keeps_history(&self, py: Python<'_>) -> PyResult<bool> {
        py.detach(|| Ok::<_, zarrdb::Error>(self.db.db()?.keeps_history())).map_err(to_py)
    }

    /// Begin a write transaction (waits while another one is open).
    fn begin_write(&self, py: Python<'_>) -> PyResult<txn::Txn> {
        let db = self.db.clone();
        py.detach(|| txn::Txn::begin(db)).map_err(to_py)
    }

    /// Store `value` under `key` unless a value is there, atomically (one transaction); returns
    /// whether it was stored. `checked` as for `Store.checked`.
    #[pyo3(signature = (key, value, checked=true))]
    fn set_if_absent(&self, py: Python<'_>, key: &str, value: &[u8], checked: bool) -> PyResult<bool> {
        py.detach(|| -> Result<bool, zarrdb::Error> {
            let txn = self.db.db()?.begin_write()?;
            let store = txn.store();
            if store.size(key)?.is_some() {
                return Ok(false);
            }
            set(store.as_ref(), key, value, checked)?;
            txn.commit()?;
            Ok(true)
        })
        .map_err(to_py)
    }

    /// Store several values in one transaction: all of them or none. `checked` as for
    /// `Store.checked`.
    #[pyo3(signature = (items, checked=true))]
    fn set_many(&self, py: Python<'_>, items: Vec<(String, Vec<u8>)>, checked: bool) -> PyResult<()> {
        py.detach(|| -> Result<(), zarrdb::Error> {
            let txn = self.db.db()?.begin_write()?;
            let store = txn.store();
            for (key, value) in items {
                if checked {
                    RawAccess::new(store.as_ref()).set(&key, &value)?;
                } else {
                    store.set_owned(&key, value)?;
                }
            }
            txn.commit()
        })
        .map_err(to_py)
    }

    /// Give the space of erased and overwritten data back to the file system
    /// (`zarrdb::Database::compact`, or `compact_older_than` when `older_than` seconds are
    /// given); returns the file's length before and after, in bytes.
    #[pyo3(signature = (older_than=None))]
    fn compact(&self, py: Python<'_>, older_than: Option<f64>) -> PyResult<(u64, u64)> {
        let age = match older_than {
            None => None,
            Some(seconds) => Some(std::time::Duration::try_from_secs_f64(seconds).map_err(|_| {
                pyo3::exceptions::PyValueError::new_err(format!(
                    "older_than must be a finite number of seconds, at least 0 (got {seconds})"
                ))
            })?),
        };
        let done = py
            .detach(|| {
                let db = self.db.db()?;
                match age {
                    Some(age) => db.compact_older_than(age),
                    None => db.compact(),
                }
            })
            .map_err(to_py)?;
        Ok((done.bytes_before, done.bytes_after))
    }

    /// The path the database was opened at.
    #[getter]
    fn path(&self) -> PyResult<std::path::PathBuf> {
        Ok(self.db.db().map_err(to_py)?.path().to_path_buf())
    }

    /// The backend's name: "redb", "lmdb", "sled" or "bucket".
    #[getter]
    fn backend(&self) -> PyResult<&'static str> {
        Ok(self.db.db().map_err(to_py)?.backend().name())
    }
}

/// One of the library's stores (auto-commit, snapshot or transaction), with the database it
/// belongs to kept open.
#[pyclass(frozen, module = "zarrdb._native", name = "Store")]
struct NativeStore {
    /// A snapshot's or transaction's store; `None` for the database's auto-commit store, taken
    /// from the entry's current handle on every call (it changes when a read-only handle is
    /// upgraded, `registry::Entry::upgrade`).
    store: Option<Arc<dyn Store>>,
    db: registry::Handle,
    /// Whether node documents are checked on the way in and consolidated metadata presented
    /// fresh on the way out (`zarrdb::hierarchy::RawAccess`), or every key is read and written
    /// as bytes.
    checked: bool,
    /// Whether this is the database's auto-commit store, whose sets can be submitted.
    auto_commit: bool,
}

#[pymethods]
impl NativeStore {
    /// The value under `key` (or the part of it given by `range`), or None when absent.
    /// A range reaching past the end of the value is cut at the end, as Python slices are.
    #[pyo3(signature = (key, range=None))]
    fn get(&self, py: Python<'_>, key: &str, range: PyRange) -> PyResult<Option<Value>> {
        let value = py.detach(|| self.get_clamped(key, range)).map_err(to_py)?;
        Ok(value.map(Value::new))
    }

    /// Several (ranged) values at once, each None when absent.
    fn get_many(&self, py: Python<'_>, requests: Vec<(String, PyRange)>) -> PyResult<Vec<Option<Value>>> {
        let values = py
            .detach(|| requests.iter().map(|(key, range)| self.get_clamped(key, *range)).collect::<Result<Vec<_>, _>>())
            .map_err(to_py)?;
        Ok(values.into_iter().map(|v| v.map(Value::new)).collect())
    }

    /// The size in bytes of the value under `key`, or None when absent.
    fn size(&self, py: Python<'_>, key: &str) -> PyResult<Option<u64>> {
        py.detach(|| -> Result<Option<u64>, zarrdb::Error> {
            let store = self.store()?;
            if self.checked {
                RawAccess::new(store.as_ref()).size(key)
            } else {
                Ok(store.size(key)?)
            }
        })
        .map_err(to_py)
    }

    /// Store `value` under `key`; a node document is checked first unless `checked` is off.
    fn set(&self, py: Python<'_>, key: &str, value: &[u8]) -> PyResult<()> {
        py.detach(|| set(self.store()?.as_ref(), key, value, self.checked)).map_err(to_py)
    }

    /// Queue `value` for `key` and return at once; `token`'s outcome is posted to `completions`
    /// once the write is committed (as durable as a `set`) or has failed. Only for data (not node
    /// documents) on the auto-commit store: `ValueError` otherwise.
    fn submit(&self, key: &str, value: &[u8], completions: &submit::Completions, token: u64) -> PyResult<()> {
        if !self.can_submit(key) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "submit() takes data keys of the auto-commit store only, not {key:?} here: use set()"
            )));
        }
        self.db
            .entry
            .submitter
            .submit(self.db.clone(), key.to_owned(), value.to_vec(), completions, token)
            .map_err(to_py)
    }

    /// The array at `path` (e.g. "/a/b"), for region reads and writes in one engine call. With
    /// `document`, the `zarr.json` the caller read before, the array opened must be the one it
    /// describes (`zarrdb.NodeError`, kind "changed", when it was made again in between).
    #[pyo3(signature = (path, document=None))]
    fn open_array(&self, py: Python<'_>, path: &str, document: Option<&[u8]>) -> PyResult<array::NativeArray> {
        let opened = py
            .detach(|| match &self.store {
                Some(store) => Ok(array::NativeArray::fixed(zarrdb::Array::open(store.clone(), path)?)),
                None => array::NativeArray::following(self.db.clone(), path),
            })
            .map_err(to_py)?;
        match document {
            Some(document) if !opened.described_by(document) => Err(errors::array_changed(path)),
            _ => Ok(opened),
        }
    }

    /// Whether `submit` takes `key` on this store.
    fn can_submit(&self, key: &str) -> bool {
        self.auto_commit && !RawAccess::is_document(key)
    }

    /// The same store with node document checks on or off.
    fn with_checks(&self, checked: bool) -> NativeStore {
        NativeStore { store: self.store.clone(), db: self.db.clone(), checked, auto_commit: self.auto_commit }
    }

    /// Whether node documents are checked (see `with_checks`).
    #[getter]
    fn checked(&self) -> bool {
        self.checked
    }

    /// Remove `key` (absent keys are not an error).
    fn erase(&self, py: Python<'_>, key: &str) -> PyResult<()> {
        py.detach(|| Ok::<_, zarrdb::Error>(self.store()?.erase(key)?)).map_err(to_py)
    }

    /// Remove every key starting with `prefix` ("" removes everything).
    fn erase_prefix(&self, py: Python<'_>, prefix: &str) -> PyResult<()> {
        py.detach(|| Ok::<_, zarrdb::Error>(self.store()?.erase_prefix(prefix)?)).map_err(to_py)
    }

    /// Every key starting with `prefix`, sorted.
    fn list_prefix(&self, py: Python<'_>, prefix: &str) -> PyResult<Vec<String>> {
        py.detach(|| Ok::<_, zarrdb::Error>(self.store()?.list_prefix(prefix)?)).map_err(to_py)
    }

    /// The key names and child prefix names directly under `prefix` ("" or ending with "/").
    fn list_dir(&self, py: Python<'_>, prefix: &str) -> PyResult<(Vec<String>, Vec<String>)> {
        let listing = py.detach(|| Ok::<_, zarrdb::Error>(self.store()?.list_dir(prefix)?)).map_err(to_py)?;
        Ok((listing.keys, listing.prefixes))
    }

    /// Whether this store accepts writes (false for snapshots).
    #[getter]
    fn writable(&self) -> PyResult<bool> {
        Ok(self.store().map_err(to_py)?.capabilities().writable)
    }

    /// The database this store belongs to.
    #[getter]
    fn database(&self) -> Database {
        Database { db: self.db.clone() }
    }
}

impl NativeStore {
    /// The store this object reads and writes: its own, or the entry's current auto-commit store.
    fn store(&self) -> Result<Arc<dyn Store>, zarrdb::Error> {
        match &self.store {
            Some(store) => Ok(store.clone()),
            None => self.db.store(),
        }
    }

    /// Read `key`, or a range of it cut to the value's end, from one consistent view: a ranged
    /// read asks for the size and then the bytes, and a writer in between must not make them
    /// disagree, so both run on a snapshot when the store is the auto-commit one. A node
    /// document (small) is read whole through `RawAccess` and cut here.
    fn get_clamped(&self, key: &str, range: PyRange) -> Result<Option<Vec<u8>>, zarrdb::Error> {
        let store = self.store()?;
        let store = store.as_ref();
        if self.checked && RawAccess::is_document(key) {
            let Some(value) = RawAccess::new(store).get(key)? else { return Ok(None) };
            let len = value.len() as u64;
            return Ok(Some(match clamp(range, len) {
                None => value,
                Some(range) => range.resolve(len).map_or_else(Vec::new, |r| value[r].to_vec()),
            }));
        }
        let Some(_) = range else { return Ok(store.get(key)?) };
        zarrdb::store::read_consistently(store, |view| {
            let Some(len) = view.size(key)? else { return Ok(None) };
            let range = clamp(range, len).unwrap_or(ByteRange::FromStart { offset: 0, length: None });
            Ok(view.get_partial_values(&[(key, range)])?.pop().flatten())
        })
    }
}

/// Python's range (see `PyRange`) as the engine's, cut to a value of `len` bytes.
fn clamp(range: PyRange, len: u64) -> Option<ByteRange> {
    let (offset, length) = range?;
    Some(match (offset, length) {
        (None, Some(n)) => ByteRange::Suffix(n.min(len)),
        (None, None) => ByteRange::FromStart { offset: 0, length: None },
        (Some(start), length) => {
            let start = start.min(len);
            ByteRange::FromStart { offset: start, length: Some(length.map_or(len - start, |n| n.min(len - start))) }
        }
    })
}

/// Write through `RawAccess` when `checked`, else as bytes.
fn set(store: &dyn Store, key: &str, value: &[u8], checked: bool) -> Result<(), zarrdb::Error> {
    if checked {
        RawAccess::new(store).set(key, value)
    } else {
        Ok(store.set(key, value)?)
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Database>()?;
    m.add_class::<NativeStore>()?;
    m.add_class::<txn::Txn>()?;
    m.add_class::<submit::Completions>()?;
    m.add_class::<array::NativeArray>()?;
    m.add_class::<Value>()?;
    errors::register(m)?;
    Ok(())
}
