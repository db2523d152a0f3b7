//! Four processes open one LMDB database and write random unaligned runs of their own rows of a
//! shared array, so every chunk and shard is read-modify-written by all of them (issue 6,
//! acceptance 2). Another process's commit is invisible to this process's chunk versions; the
//! commit must still find that a chunk it read changed, and retry. No update may be lost.

#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the workload uses only part of the shared generator")]
mod splitmix;
#[path = "common/unaligned_workload.rs"]
mod unaligned_workload;

use std::io::Write;
use std::process::{Command, Stdio};

use unaligned_workload::{lost_updates, metadata, write, COLS, ROWS};
use zarrdb::{Array, Backend, Database, Durability};

const PROCESSES: u64 = 4;
const STEPS: u64 = 400;
const DB_ENV: &str = "ZARRDB_MULTIPROCESS_DB";
const WRITER_ENV: &str = "ZARRDB_MULTIPROCESS_WRITER";
const SHARDED_ENV: &str = "ZARRDB_MULTIPROCESS_SHARDED";

/// The child process; does nothing in a normal test run. Writes its rows, then prints what it
/// last wrote to each element as `index value` lines.
#[test]
fn child_entry() {
    let (Some(path), Some(writer)) = (std::env::var_os(DB_ENV), std::env::var_os(WRITER_ENV)) else { return };
    let writer: u64 = writer.to_str().unwrap().parse().unwrap();
    let sharded = std::env::var_os(SHARDED_ENV).is_some();
    let db = Database::builder().backend(Backend::Lmdb).durability(Durability::Fast).open(&path).unwrap();
    let array = Array::open(db.store(), if sharded { "/sharded" } else { "/plain" }).unwrap();
    let last = write(&array, writer, PROCESSES, STEPS, 0xfeed);
    let mut out = std::io::stdout().lock();
    for (i, value) in last.iter().enumerate() {
        if let Some(v) = value {
            writeln!(out, "@{i} {v}").unwrap();
        }
    }
    out.flush().unwrap();
}

fn run(sharded: bool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let name = if sharded { "/sharded" } else { "/plain" };
    {
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
    let db = Database::builder().backend(Backend::Lmdb).open(&path).unwrap();
    let array = Array::open(db.store(), name).unwrap();
    let lost = lost_updates(&array, &records);
    assert!(lost.is_empty(), "sharded {sharded}: {} lost updates, e.g. {:?}", lost.len(), &lost[..lost.len().min(5)]);
}

#[test]
fn lmdb_four_processes_plain_chunks() {
    run(false);
}

#[test]
fn lmdb_four_processes_shards() {
    run(true);
}
