//! Opening a path that holds something other than a healthy database — random bytes, a zip
//! archive, a text file that happens to start with "redb", an ordinary folder, a truncated redb
//! file, an LMDB or sled folder with damaged files — gives a typed error (`WrongBackend` or
//! `Corrupted`) with a one-line message naming the path, for every backend and for both `open` and
//! `create`. It never panics, and it never changes what was there (beyond an engine's own lock or
//! blob files in what really is that engine's folder).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use zarrdb::error::OpenError;
use zarrdb::{Backend, Database, DirectoryStore, Error, Group, Store};

const ALL: [Backend; 3] = [Backend::Redb, Backend::Lmdb, Backend::Sled];

/// Deterministic noise (xorshift), so a failure can be replayed.
fn noise(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        })
        .collect()
}

/// Every file under `path` with its length and a hash of its bytes (folders as `(0, 0)`), to
/// prove nothing changed.
fn contents(path: &Path) -> BTreeMap<PathBuf, (usize, u64)> {
    let mut out = BTreeMap::new();
    if path.is_dir() {
        out.insert(path.to_owned(), (0, 0));
        for entry in fs::read_dir(path).unwrap() {
            out.extend(contents(&entry.unwrap().path()));
        }
    } else {
        let bytes = fs::read(path).unwrap();
        let hash =
            bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3));
        out.insert(path.to_owned(), (bytes.len(), hash));
    }
    out
}

/// Open `path` as every backend, with `open` and `create`: each is refused with one of `allowed`
/// (by variant name), a one-line message naming the path, and leaves every file as it was (the
/// engine may add its own files named in `new_files`, like LMDB's `lock.mdb`).
fn assert_refused(path: &Path, allowed: &[&str], new_files: &[&str]) {
    let before = contents(path);
    for backend in ALL {
        for create in [false, true] {
            let mut b = Database::builder();
            b.backend(backend);
            let what = format!("{} {} as {}", if create { "create" } else { "open" }, path.display(), backend.name());
            let error = match if create { b.create(path) } else { b.open(path) } {
                Ok(_) => panic!("{what}: opened"),
                Err(e) => e,
            };
            let text = error.to_string();
            assert!(!text.contains('\n') && text.contains(&path.display().to_string()), "{what}: {text:?}");
            let variant = match &error {
                Error::Open(OpenError::WrongBackend { .. }) => "WrongBackend",
                Error::Open(OpenError::Corrupted { .. }) => "Corrupted",
                Error::Open(OpenError::Io { .. }) => "Io",
                _ => "other",
            };
            assert!(allowed.contains(&variant), "{what}: {error:?}");
            let mut after = contents(path);
            after.retain(|file, _| before.contains_key(file) || !new_files.iter().any(|n| file.ends_with(n)));
            assert_eq!(after, before, "{what}: changed the files");
        }
    }
}

#[test]
fn random_bytes_zip_archive_and_text_file() {
    let dir = tempfile::tempdir().unwrap();
    let random = dir.path().join("random.bin");
    fs::write(&random, noise(64 << 10, 0x9E37_79B9_7F4A_7C15)).unwrap();
    assert_refused(&random, &["WrongBackend"], &[]);

    // An empty zip archive: just the end-of-central-directory record.
    let zip = dir.path().join("store.zip");
    fs::write(&zip, [&b"PK\x05\x06"[..], &[0u8; 18]].concat()).unwrap();
    assert_refused(&zip, &["WrongBackend"], &[]);
}

#[test]
fn single_file_formats_are_named_by_their_magic_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 4] = [
        ("data.zarrdb", b"SQLite format 3\0\x10\x00", "an SQLite database"),
        ("data.h5", b"\x89HDF\r\n\x1a\n\0\0\0\0", "an HDF5 file"),
        ("data.nc", b"CDF\x01\0\0\0\x0a", "a netCDF classic file"),
        ("data.gz", b"\x1f\x8b\x08\0", "a gzip file"),
    ];
    for (name, head, what) in cases {
        let path = dir.path().join(name);
        fs::write(&path, [head, &noise(4096, 7)[..]].concat()).unwrap();
        assert_refused(&path, &["WrongBackend"], &[]);
        let err = Database::open(&path).unwrap_err();
        assert!(err.to_string().contains(what), "{name}: {err}");
    }
}

#[test]
fn ordinary_folder_with_files() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("photos");
    fs::create_dir(&folder).unwrap();
    fs::write(folder.join("zarr.json"), br#"{"zarr_format":3,"node_type":"group"}"#).unwrap();
    fs::write(folder.join("data.bin"), noise(100, 7)).unwrap();
    assert_refused(&folder, &["WrongBackend"], &[]);
}

#[test]
fn truncated_redb_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.redb");
    {
        let db = Database::create(&good).unwrap();
        db.store().set("a/c/0", &noise(200 << 10, 3)).unwrap();
    }
    let bytes = fs::read(&good).unwrap();
    assert!(bytes.starts_with(b"redb"));
    for len in [512, 4096, bytes.len() / 2, bytes.len() - 1] {
        let cut = dir.path().join(format!("cut-{len}.redb"));
        fs::write(&cut, &bytes[..len]).unwrap();
        assert_refused(&cut, &["WrongBackend", "Corrupted"], &[]);
    }
    // Cut inside the header: refused and untouched (see the ignored test below for the variant).
    for len in [4, 9, 100] {
        let cut = dir.path().join(format!("cut-{len}.redb"));
        fs::write(&cut, &bytes[..len]).unwrap();
        assert_refused(&cut, &["WrongBackend", "Corrupted", "Io"], &[]);
    }
}

#[test]
fn lmdb_folder_with_a_damaged_data_file() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("db.lmdb");
    fs::create_dir(&folder).unwrap();
    fs::write(folder.join("data.mdb"), noise(64 << 10, 11)).unwrap();
    assert_refused(&folder, &["WrongBackend", "Corrupted"], &["lock.mdb"]);
}

#[test]
fn sled_folder_with_damaged_files() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("db.sled");
    fs::create_dir(&folder).unwrap();
    fs::write(folder.join("conf"), noise(300, 13)).unwrap();
    fs::write(folder.join("db"), noise(64 << 10, 17)).unwrap();
    assert_refused(&folder, &["WrongBackend", "Corrupted"], &["blobs"]);
}

#[test]
fn a_zarr_folder_with_nodes_named_like_engine_files_is_not_a_database() {
    let dir = tempfile::tempdir().unwrap();
    for names in [&["conf", "db"][..], &["data.mdb"]] {
        let root = dir.path().join(names.join("-"));
        let store: Arc<dyn Store> = Arc::new(DirectoryStore::create(&root).unwrap());
        for name in names {
            Group::create(store.clone(), &format!("/{name}"), Default::default()).unwrap();
        }
        assert_refused(&root, &["WrongBackend"], &[]);
    }
}

#[test]
fn a_file_that_only_starts_like_redb_is_corrupted() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    fs::write(&text, "redbud: a small tree with pink flowers\n").unwrap();
    assert_refused(&text, &["WrongBackend", "Corrupted"], &[]);
    let good = dir.path().join("good.redb");
    drop(Database::create(&good).unwrap());
    let bytes = fs::read(&good).unwrap();
    for len in [4, 9, 100] {
        let cut = dir.path().join(format!("cut-{len}.redb"));
        fs::write(&cut, &bytes[..len]).unwrap();
        assert_refused(&cut, &["WrongBackend", "Corrupted"], &[]);
    }
}
