//! Helpers of the read-only command tests: a small database per backend, its files' bytes, and
//! every read-only command run against it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Group};

/// Build a database with a group and an array `/g/a` of 0..10 at `path`; its CLI locator.
pub fn build(path: &Path, backend: Backend) -> String {
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
pub fn settled(path: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
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
pub fn contents(path: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
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

pub fn zarrdb(args: &[&str], as_nobody: bool) -> Output {
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

pub fn read_everything(locator: &str, out_dir: &Path, as_nobody: bool) {
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

pub fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}
