//! Four processes write random unaligned runs of their own rows of a shared array, so every chunk
//! and shard is read-modify-written by all of them (issue 6, acceptance 2): on one LMDB database,
//! one redb database in multi-writer mode, and one directory store with `Synchronizer::Processes`.
//! Another process's write is invisible to this process's chunk versions; the commit (databases)
//! or the store under the chunk's lock file (directory) must still find that a chunk it read
//! changed, and retry. No update may be lost.

#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the workload uses only part of the shared generator")]
mod splitmix;
#[path = "common/unaligned_workload.rs"]
#[expect(dead_code, reason = "each process is one writer: the threaded runner goes unused")]
mod unaligned_workload;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use unaligned_workload::{lost_updates, metadata, write, COLS, ROWS};
use zarrdb::{Array, Backend, Database, DirectoryStore, Durability, Store, Synchronizer};

const PROCESSES: u64 = 4;
const STEPS: u64 = 400;
const DB_ENV: &str = "ZARRDB_MULTIPROCESS_DB";
const WRITER_ENV: &str = "ZARRDB_MULTIPROCESS_WRITER";
const SHARDED_ENV: &str = "ZARRDB_MULTIPROCESS_SHARDED";
const KIND_ENV: &str = "ZARRDB_MULTIPROCESS_KIND";

/// Where the processes write.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Lmdb,
    RedbMultiWriter,
    Directory,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Lmdb => "lmdb",
            Kind::RedbMultiWriter => "redb",
            Kind::Directory => "directory",
        }
    }

    fn from_name(name: &str) -> Kind {
        [Kind::Lmdb, Kind::RedbMultiWriter, Kind::Directory].into_iter().find(|k| k.name() == name).unwrap()
    }

    fn database(self, path: &Path, create: bool) -> Database {
        let mut builder = Database::builder();
        match self {
            Kind::Lmdb => builder.backend(Backend::Lmdb),
            _ => builder.backend(Backend::Redb).redb_multi_writer(true),
        };
        builder.durability(Durability::Fast);
        if create { builder.create(path) } else { builder.open(path) }.unwrap()
    }

    /// The store at `path` (and the database keeping it open).
    fn open(self, path: &Path) -> (Arc<dyn Store>, Option<Database>) {
        match self {
            Kind::Directory => (Arc::new(DirectoryStore::open(path).unwrap()), None),
            _ => {
                let db = self.database(path, false);
                (db.store(), Some(db))
            }
        }
    }
}

/// The lock folder of the directory store at `path`, beside it.
fn locks(path: &Path) -> PathBuf {
    path.with_extension("locks")
}

fn array_name(sharded: bool) -> &'static str {
    if sharded {
        "/sharded"
    } else {
        "/plain"
    }
}

/// The child process; does nothing in a normal test run. Writes its rows, then prints what it
/// last wrote to each element as `@index value` lines.
#[test]
fn child_entry() {
    let (Some(path), Some(writer)) = (std::env::var_os(DB_ENV), std::env::var_os(WRITER_ENV)) else { return };
    let writer: u64 = writer.to_str().unwrap().parse().unwrap();
    let kind = Kind::from_name(&std::env::var(KIND_ENV).unwrap());
    let path = PathBuf::from(path);
    let (store, _db) = kind.open(&path);
    let mut array = Array::open(store, array_name(std::env::var_os(SHARDED_ENV).is_some())).unwrap();
    if let Kind::Directory = kind {
        array = array.with_synchronizer(Synchronizer::processes(locks(&path)).unwrap());
    }
    let last = write(&array, writer, PROCESSES, STEPS, 0xfeed);
    let mut out = std::io::stdout().lock();
    for (i, value) in last.iter().enumerate() {
        if let Some(v) = value {
            writeln!(out, "@{i} {v}").unwrap();
        }
    }
    out.flush().unwrap();
}

fn run(sharded: bool, kind: Kind) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let name = array_name(sharded);
    match kind {
        Kind::Directory => {
            Array::create(Arc::new(DirectoryStore::create(&path).unwrap()), name, metadata(sharded)).unwrap();
        }
        _ => {
            Array::create(kind.database(&path, true).store(), name, metadata(sharded)).unwrap();
        }
    }
    let children: Vec<_> = (0..PROCESSES)
        .map(|w| {
            let mut command = Command::new(std::env::current_exe().unwrap());
            command
                .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
                .env(DB_ENV, &path)
                .env(WRITER_ENV, w.to_string())
                .env(KIND_ENV, kind.name())
                .stdout(Stdio::piped());
            if sharded {
                command.env(SHARDED_ENV, "1");
            }
            command.spawn().unwrap()
        })
        .collect();
    let records: Vec<Vec<Option<u32>>> = children
        .into_iter()
        .map(|child| {
            let output = child.wait_with_output().unwrap();
            assert!(output.status.success(), "{kind:?}: a writer process failed: {:?}", output.status);
            let mut last = vec![None; (ROWS * COLS) as usize];
            for line in String::from_utf8(output.stdout).unwrap().lines() {
                // The harness may print "test child_entry ... " on the line of the first record.
                let Some(at) = line.find('@') else { continue };
                let (i, v) = line[at + 1..].split_once(' ').unwrap();
                last[i.parse::<usize>().unwrap()] = Some(v.parse().unwrap());
            }
            last
        })
        .collect();
    let (store, _db) = kind.open(&path);
    let array = Array::open(store, name).unwrap();
    let lost = lost_updates(&array, &records);
    assert!(
        lost.is_empty(),
        "{kind:?}, sharded {sharded}: {} lost updates, e.g. {:?}",
        lost.len(),
        &lost[..lost.len().min(5)]
    );
}

#[test]
fn lmdb_four_processes_plain_chunks() {
    run(false, Kind::Lmdb);
}

#[test]
fn lmdb_four_processes_shards() {
    run(true, Kind::Lmdb);
}

#[test]
fn redb_multi_writer_four_processes_plain_chunks() {
    run(false, Kind::RedbMultiWriter);
}

#[test]
fn redb_multi_writer_four_processes_shards() {
    run(true, Kind::RedbMultiWriter);
}

#[test]
fn directory_four_processes_plain_chunks() {
    run(false, Kind::Directory);
}

#[test]
fn directory_four_processes_shards() {
    run(true, Kind::Directory);
}
