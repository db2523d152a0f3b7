//! Read-only commands (`tree`, `info`, `cat`, `check`, `export`) never change a redb or LMDB
//! database's files (byte-identical before and after; LMDB's `lock.mdb` is its reader table, not
//! data, and is left out) and work without write permission (as another user); sled, which has
//! no read-only mode, keeps its data. `DatabaseBuilder::read_only` refuses every write and creates
//! nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Error, Group, OpenError};

fn build(path: &Path, backend: Backend) -> String {
    let db = Database::builder().backend(backend).create(path).unwrap();
    let store = db.store();
    Group::create(store.clone(), "/", Default::default()).unwrap();
    let a = Array::create(store, "/g/a", ArrayMetadata::new(DataType::Int32, vec![10], vec![4])).unwrap();
    a.write_region(&[0], &[10], &(0..10).collect::<Vec<i32>>()).unwrap();
    match backend {
        Backend::Redb => path.display().to_string(),
        other => format!("{}:{}", other.name(), path.display()),
    }
}

/// The database's files once the writer that built them has finished: sled's background threads
/// go on writing for a moment after its last handle is dropped.
fn settled(path: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut last = contents(path);
    for _ in 0..50 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let now = contents(path);
        if now == last {
            return now;
        }
        last = now;
    }
    panic!("{}: the files keep changing", path.display());
}

/// Every file of the database (a file, or a folder's files) with its bytes, but LMDB's lock file.
fn contents(path: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut pending = vec![path.to_path_buf()];
    while let Some(p) = pending.pop() {
        if p.is_dir() {
            pending.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else if p.file_name().is_some_and(|n| n != "lock.mdb") {
            out.insert(p.clone(), std::fs::read(&p).unwrap());
        }
    }
    out
}

fn zarrdb(args: &[&str], as_nobody: bool) -> Output {
    let exe = env!("CARGO_BIN_EXE_zarrdb");
    let mut command = if as_nobody {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", exe]);
        c
    } else {
        Command::new(exe)
    };
    command.args(args).output().expect("run zarrdb")
}

fn read_everything(locator: &str, out_dir: &Path, as_nobody: bool) {
    let export = out_dir.join(format!("export-{}.zarr", out_dir.read_dir().unwrap().count()));
    for args in [
        vec!["tree", locator],
        vec!["info", locator, "/g/a", "--json"],
        vec!["cat", locator, "/g/a", "--json"],
        vec!["check", locator],
        vec!["export", locator, export.to_str().unwrap()],
    ] {
        let out = zarrdb(&args, as_nobody);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

#[test]
fn commands_leave_the_files_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    for (name, backend) in [("r.zarrdb", Backend::Redb), ("l", Backend::Lmdb)] {
        let path = dir.path().join(name);
        let locator = build(&path, backend);
        let before = settled(&path);
        read_everything(&locator, dir.path(), false);
        assert!(contents(&path) == before, "{locator}: a read-only command changed the files");
    }
    // sled has no read-only mode and its open rewrites its log (docs/format.md): the commands
    // work and leave the data as it was.
    let path = dir.path().join("s");
    let locator = build(&path, Backend::Sled);
    read_everything(&locator, dir.path(), false);
    let db = Database::builder().backend(Backend::Sled).open(&path).unwrap();
    let values: Vec<i32> = Array::open(db.store(), "/g/a").unwrap().read_all().unwrap();
    assert_eq!(values, (0..10).collect::<Vec<_>>());
}

#[test]
fn commands_work_without_write_permission() {
    let dir = tempfile::tempdir().unwrap();
    let as_nobody = is_root();
    let exports = dir.path().join("exports");
    std::fs::create_dir(&exports).unwrap();
    for (name, backend) in [("r.zarrdb", Backend::Redb), ("l", Backend::Lmdb)] {
        let path = dir.path().join(name);
        let locator = build(&path, backend);
        let before = settled(&path);
        // Readable by everyone, writable by no one but root (who is not the one reading).
        let mode = |p: &Path, m: u32| {
            let mut permissions = std::fs::metadata(p).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, m);
            std::fs::set_permissions(p, permissions).unwrap();
        };
        mode(dir.path(), 0o755);
        mode(&exports, 0o777);
        for file in before.keys().chain([&path.join("lock.mdb")]).filter(|p| p.exists()) {
            mode(file, 0o444);
        }
        if path.is_dir() {
            mode(&path, 0o555);
        }
        read_everything(&locator, &exports, as_nobody);
        assert!(contents(&path) == before, "{locator}: changed");
    }
}

#[test]
fn read_only_handles_refuse_writes_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.zarrdb");
    let err = Database::builder().read_only(true).create(&missing).unwrap_err();
    assert!(matches!(err, Error::Open(OpenError::NotFound { .. })), "{err}");
    assert!(!missing.exists());

    for (name, backend) in [("r.zarrdb", Backend::Redb), ("l", Backend::Lmdb), ("s", Backend::Sled)] {
        let path = dir.path().join(name);
        build(&path, backend);
        {
            let db = Database::builder().backend(backend).read_only(true).open(&path).unwrap();
            let a = Array::open(db.store(), "/g/a").unwrap();
            assert_eq!(a.read_region::<i32>(&[8], &[2]).unwrap(), [8, 9]);
            assert!(a.write_region(&[0], &[1], &[5i32]).is_err(), "{name}: a write went through");
            assert!(Group::create(db.store(), "/h", Default::default()).is_err());
            if backend != Backend::Sled {
                assert!(db.begin_write().is_err(), "{name}: a write transaction began");
            }
        }
        let db = Database::builder().backend(backend).open(&path).unwrap();
        assert_eq!(Array::open(db.store(), "/g/a").unwrap().read_region::<i32>(&[0], &[1]).unwrap(), [0]);
    }
}
