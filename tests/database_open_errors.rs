//! Opening something that is not a database of the requested backend is a typed [`OpenError`] —
//! never a panic, never a success that overwrites what was there — and its message is one line
//! naming the path: another backend's database (`WrongBackend` naming both), a missing path
//! (`NotFound`), a database already open in this process (`Locked`), foreign or damaged files and
//! folders (`WrongBackend` or `Corrupted`), and a newer format marker (`FormatVersion`).

use std::path::Path;

use zarrdb::error::OpenError;
use zarrdb::{Backend, Database, DatabaseBuilder, Error};

const ALL: [Backend; 3] = [Backend::Redb, Backend::Lmdb, Backend::Sled];

fn builder(backend: Backend) -> DatabaseBuilder {
    let mut b = Database::builder();
    b.backend(backend);
    b
}

/// The error of opening (or creating) `path` as `backend`; checks the message is one line naming
/// the path.
fn open_error(backend: Backend, path: &Path, create: bool) -> OpenError {
    let b = builder(backend);
    let error = match if create { b.create(path) } else { b.open(path) } {
        Ok(db) => panic!("{} opened {} as a database: {db:?}", backend.name(), path.display()),
        Err(e) => e,
    };
    let text = error.to_string();
    assert!(!text.contains('\n'), "one line: {text:?}");
    assert!(text.contains(&path.display().to_string()), "names the path: {text}");
    match error {
        Error::Open(e) => e,
        other => panic!("{}: expected an OpenError, got {other:?}", backend.name()),
    }
}

/// A database of `backend` at `path` holding one user key.
fn make(backend: Backend, path: &Path) {
    let db = builder(backend).create(path).unwrap();
    db.store().set("a/zarr.json", b"{}").unwrap();
}

#[test]
fn another_backends_database_is_wrong_backend_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    for found in ALL {
        let path = dir.path().join(found.name());
        make(found, &path);
        for requested in ALL.into_iter().filter(|b| *b != found) {
            for create in [false, true] {
                let e = open_error(requested, &path, create);
                let text = e.to_string();
                match e {
                    OpenError::WrongBackend { requested: r, found: f, .. } => {
                        assert_eq!(r, requested.name());
                        assert!(f.to_lowercase().contains(found.name()), "{f}");
                    }
                    other => panic!("{} as {}: {other:?}", found.name(), requested.name()),
                }
                let lower = text.to_lowercase();
                assert!(lower.contains(found.name()) && lower.contains(requested.name()), "{text}");
            }
        }
        // Refusing left the database as it was.
        let db = builder(found).open(&path).unwrap();
        assert_eq!(db.store().get("a/zarr.json").unwrap().as_deref(), Some(&b"{}"[..]), "{}", found.name());
    }
}

#[test]
fn open_on_a_missing_path_is_not_found_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for backend in ALL {
        let path = dir.path().join(format!("missing-{}", backend.name()));
        assert!(matches!(open_error(backend, &path, false), OpenError::NotFound { .. }), "{}", backend.name());
        assert!(!path.exists(), "{}: open created {}", backend.name(), path.display());
    }
    // The default builder is redb.
    assert!(matches!(Database::open(dir.path().join("nothing")), Err(Error::Open(OpenError::NotFound { .. }))));
}

#[test]
fn redb_database_opened_twice_in_one_process_is_locked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.redb");
    let first = Database::create(&path).unwrap();
    first.store().set("k", b"v").unwrap();
    for create in [false, true] {
        match open_error(Backend::Redb, &path, create) {
            OpenError::Locked { backend, .. } => assert_eq!(backend, "redb"),
            other => panic!("{other:?}"),
        }
    }
    // A clone is the same handle, not a second opening; closing the last one unlocks.
    let clone = first.clone();
    drop(first);
    assert!(matches!(open_error(Backend::Redb, &path, false), OpenError::Locked { .. }));
    drop(clone);
    assert_eq!(Database::open(&path).unwrap().store().get("k").unwrap().as_deref(), Some(&b"v"[..]));
}

/// Open `backend` at a fresh path, then again while the first handle is open: returns the second
/// opening's error; checks the first handle is undisturbed and the path opens once it is closed.
fn open_twice(backend: Backend) -> OpenError {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(backend.name());
    let first = builder(backend).create(&path).unwrap();
    first.store().set("k", b"v").unwrap();
    let error = open_error(backend, &path, false);
    first.store().set("k", b"w").unwrap();
    drop(first);
    let again = builder(backend).open(&path).unwrap();
    assert_eq!(again.store().get("k").unwrap().as_deref(), Some(&b"w"[..]), "{}", backend.name());
    error
}

#[test]
fn lmdb_and_sled_databases_opened_twice_in_one_process_are_refused() {
    // heed refuses a second environment on one path in one process ("environment already
    // opened"); zarrdb reports that as an engine error rather than `Locked`.
    let e = open_twice(Backend::Lmdb);
    assert!(matches!(e, OpenError::Locked { .. } | OpenError::Engine { .. }), "{e:?}");
    // For sled see the ignored test below: refused, but not yet as `Locked`.
    let e = open_twice(Backend::Sled);
    assert!(matches!(e, OpenError::Locked { .. } | OpenError::Io { .. }), "{e:?}");
}

#[test]
fn sled_database_opened_twice_in_one_process_is_locked() {
    let e = open_twice(Backend::Sled);
    assert!(matches!(e, OpenError::Locked { backend: "sled", .. }), "{e:?}");
}
