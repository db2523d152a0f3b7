//! Four processes write random unaligned runs of their own rows of a shared array, so every chunk
//! and shard is read-modify-written by all of them (issue 6, acceptance 2): on one LMDB database,
//! and on one directory store with `Synchronizer::Processes`. Another process's write is invisible
//! to this process's chunk versions; the commit (LMDB) or the store under the chunk's lock file
//! (directory) must still find that a chunk it read changed, and retry. No update may be lost.

#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the workload uses only part of the shared generator")]
mod splitmix;
#[path = "common/unaligned_workload.rs"]
mod unaligned_workload;

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;

use unaligned_workload::{lost_updates, metadata, write, COLS, ROWS};
use zarrdb::{Array, Backend, Database, DirectoryStore, Durability, Store, Synchronizer};

const PROCESSES: u64 = 4;
const STEPS: u64 = 400;
const DB_ENV: &str = "ZARRDB_MULTIPROCESS_DB";
const WRITER_ENV: &str = "ZARRDB_MULTIPROCESS_WRITER";
const SHARDED_ENV: &str = "ZARRDB_MULTIPROCESS_SHARDED";
const DIRECTORY_ENV: &str = "ZARRDB_MULTIPROCESS_DIRECTORY";

/// The lock folder of the directory store at `path`, beside it.
fn locks(path: &std::path::Path) -> std::path::PathBuf {
    path.with_extension("locks")
}

/// The child process; does nothing in a normal test run. Writes its rows, then prints what it
/// last wrote to each element as `index value` lines.
#[test]
fn child_entry() {
    let (Some(path), Some(writer)) = (std::env::var_os(DB_ENV), std::env::var_os(WRITER_ENV)) else { return };
    let writer: u64 = writer.to_str().unwrap().parse().unwrap();
    let sharded = std::env::var_os(SHARDED_ENV).is_some();
    let name = if sharded { "/sharded" } else { "/plain" };
    let last = if std::env::var_os(DIRECTORY_ENV).is_some() {
        let path = std::path::PathBuf::from(path);
        let store: Arc<dyn Store> = Arc::new(DirectoryStore::open(&path).unwrap());
        let array = Array::open(store, name).unwrap().with_synchronizer(Synchronizer::processes(locks(&path)).unwrap());
        write(&array, writer, PROCESSES, STEPS, 0xfeed)
    } else {
        let db = Database::builder().backend(Backend::Lmdb).durability(Durability::Fast).open(&path).unwrap();
        let array = Array::open(db.store(), name).unwrap();
        write(&array, writer, PROCESSES, STEPS, 0xfeed)
    };
    let mut out = std::io::stdout().lock();
    for (i, value) in last.iter().enumerate() {
        if let Some(v) = value {
            writeln!(out, "@{i} {v}").unwrap();
        }
    }
    out.flush().unwrap();
}

fn run(sharded: bool, directory: bool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let name = if sharded { "/sharded" } else { "/plain" };
    let open = || -> (Arc<dyn Store>, Option<Database>) {
        if directory {
            (Arc::new(DirectoryStore::open(&path).unwrap()), None)
        } else {
            let db = Database::builder().backend(Backend::Lmdb).durability(Durability::Fast).open(&path).unwrap();
            (db.store(), Some(db))
        }
    };
    if directory {
        Array::create(Arc::new(DirectoryStore::create(&path).unwrap()), name, metadata(sharded)).unwrap();
    } else {
        let db = Database::builder().backend(Backend::Lmdb).durability(Durability::Fast).create(&path).unwrap();
        Array::create(db.store(), name, metadata(sharded)).unwrap();
    }
    let children: Vec<_> = (0..PROCESSES)
        .map(|w| {
            let mut command = Command::new(std::env::current_exe().unwrap());
            command
                .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
                .env(DB_ENV, &path)
                .env(WRITER_ENV, w.to_string())
                .stdout(Stdio::piped());
            if sharded {
                command.env(SHARDED_ENV, "1");
            }
            if directory {
                command.env(DIRECTORY_ENV, "1");
            }
            command.spawn().unwrap()
        })
        .collect();
    let records: Vec<Vec<Option<u32>>> = children
        .into_iter()
        .map(|child| {
            let output = child.wait_with_output().unwrap();
            assert!(output.status.success(), "a writer process failed: {:?}", output.status);
            let mut last = vec![None; (ROWS * COLS) as usize];
            for line in String::from_utf8(output.stdout).unwrap().lines() {
                // The harness may print "test child_entry ... " on the line of the first record.
                let Some(at) = line.find('@') else { continue };
                let rest = &line[at + 1..];
                let (i, v) = rest.split_once(' ').unwrap();
                last[i.parse::<usize>().unwrap()] = Some(v.parse().unwrap());
            }
            last
        })
        .collect();
    let (store, _db) = open();
    let array = Array::open(store, name).unwrap();
    let lost = lost_updates(&array, &records);
    let what = if directory { "directory" } else { "LMDB" };
    assert!(
        lost.is_empty(),
        "{what}, sharded {sharded}: {} lost updates, e.g. {:?}",
        lost.len(),
        &lost[..lost.len().min(5)]
    );
}

#[test]
fn lmdb_four_processes_plain_chunks() {
    run(false, false);
}

#[test]
fn lmdb_four_processes_shards() {
    run(true, false);
}

#[test]
fn directory_four_processes_plain_chunks() {
    run(false, true);
}

#[test]
fn directory_four_processes_shards() {
    run(true, true);
}
