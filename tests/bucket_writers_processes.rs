//! Four processes commit at once to one bucket database (`zarrdb+s3://`, on a real S3 server:
//! SeaweedFS on 127.0.0.1), where the only lock is the conditional write of the `head` object, and
//! no acknowledged update is lost: a writer that lost the race for the head commits again over the
//! winner's only when what it read still holds there, and otherwise fails with a conflict.
//!
//! The parent creates the database with two Int64 arrays of 64 elements in chunks of 8:
//! `/counters` and `/cells`. Four writer processes (children of this test binary, `child_entry`,
//! chosen by environment variables) each make `ZARRDB_BUCKET_WRITERS_OPS` (default 40) operations,
//! each of them two commits:
//!
//! - an explicit transaction that reads a counter of its own (in a chunk only it writes) and, in
//!   three operations of four, one of three shared counters (in chunks every writer writes), and
//!   writes each plus one. A `TransactionError::Conflict` runs the whole transaction again. The
//!   transactions that read only the writer's own chunk can always be rebased; those that read a
//!   shared one conflict when another writer changed it first.
//! - a region write (auto-commit, a read-modify-write of its chunk that the engine retries) of the
//!   writer's own two cells of one chunk of `/cells`, whose other cells the other writers own.
//!
//! Each child prints one line per acknowledged commit, flushed at once, then a summary. Once all
//! have exited successfully (within a time limit; otherwise they are killed and the test fails),
//! the parent opens the database again and checks: each shared counter equals the number of
//! acknowledged transactions that incremented it, and those transactions read each value from 0
//! up exactly once (two that read the same value are a lost update); each writer's own counter
//! equals its acknowledged transactions (each of which read the count of those before it); each
//! cell holds the last value acknowledged for it (0 if none); nothing else was written.

#[path = "common/history.rs"]
#[expect(dead_code, reason = "the test uses only the child-process helpers")]
mod history;
#[path = "common/seaweed.rs"]
mod seaweed;

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

use history::{Proc, Procs};

use zarrdb::error::TransactionError;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Error};

const WRITERS: u64 = 4;
const LEN: u64 = 64;
const CHUNK: u64 = 8;
/// The counters every writer increments, in chunks 0, 1 and 2 of `/counters`.
const SHARED: [u64; 3] = [0, 9, 18];
const DB_ENV: &str = "ZARRDB_BUCKET_WRITERS_DB";
const WRITER_ENV: &str = "ZARRDB_BUCKET_WRITERS_WRITER";
const OPS_ENV: &str = "ZARRDB_BUCKET_WRITERS_OPS";
/// How long the writers may take, all together: generous, only there so nothing hangs.
const TIME_LIMIT: Duration = Duration::from_secs(240);
/// Conflicts one operation may meet before its writer gives up (a livelock, not a race).
const MAX_CONFLICTS: u64 = 500;

/// Operations per writer process.
fn ops() -> u64 {
    std::env::var(OPS_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(40)
}

/// Writer `w`'s own counter, in chunk 4 + w of `/counters`, which no other writer touches.
fn own(w: u64) -> u64 {
    32 + CHUNK * w + w
}

/// The shared counter operation `i` of writer `w` increments, if any.
fn shared(w: u64, i: u64) -> Option<u64> {
    (i % 4 != 3).then(|| SHARED[((i + w) % 3) as usize])
}

/// The first of writer `w`'s two cells in chunk `k` of `/cells`.
fn cell(w: u64, k: u64) -> u64 {
    CHUNK * k + 2 * w
}

/// The chunk of `/cells` operation `i` of writer `w` writes, and the value.
fn region(w: u64, i: u64) -> (u64, i64) {
    ((3 * i + w) % (LEN / CHUNK), ((w + 1) * 1000 + i) as i64)
}

/// Element `index` of `array`.
fn element(array: &Array, index: u64, what: &str) -> i64 {
    array.read_region::<i64>(&[index], &[1]).unwrap_or_else(|e| panic!("{what}: reading {index}: {e}"))[0]
}

/// Set element `index` of `array` to `value`.
fn set(array: &Array, index: u64, value: i64, what: &str) {
    array.write_region(&[index], &[1], &[value]).unwrap_or_else(|e| panic!("{what}: writing {index}: {e}"));
}

/// A writer process: `n` operations, printing `ack` for each acknowledged commit.
fn writer(db: &Database, w: u64, n: u64) {
    let mut out = std::io::stdout().lock();
    // The harness has printed "test child_entry ... " without ending the line.
    writeln!(out).unwrap();
    let cells = Array::open(db.store(), "/cells").unwrap();
    let (mut acks, mut conflicts, mut own_acks) = (0u64, 0u64, 0i64);
    for i in 0..n {
        let what = format!("writer {w}, op {i}");
        let mut tries = 0u64;
        let read_shared = loop {
            let txn = db.begin_write().unwrap_or_else(|e| panic!("{what}: begin_write: {e}"));
            let counters = Array::open(txn.store(), "/counters").unwrap_or_else(|e| panic!("{what}: open: {e}"));
            let mine = element(&counters, own(w), &what);
            assert_eq!(mine, own_acks, "{what}: the own counter is not the number of this writer's commits");
            set(&counters, own(w), mine + 1, &what);
            let read = shared(w, i).map(|s| {
                let value = element(&counters, s, &what);
                set(&counters, s, value + 1, &what);
                value
            });
            drop(counters);
            match txn.commit() {
                Ok(()) => break read,
                Err(Error::Transaction(TransactionError::Conflict { key })) => {
                    conflicts += 1;
                    tries += 1;
                    assert!(tries < MAX_CONFLICTS, "{what}: {tries} conflicts in a row, the last on {key}");
                }
                Err(e) => panic!("{what}: commit: {e} ({e:?})"),
            }
        };
        own_acks += 1;
        acks += 1;
        let (s, r) = match (shared(w, i), read_shared) {
            (Some(s), Some(r)) => (s.to_string(), r.to_string()),
            _ => ("-".into(), "-".into()),
        };
        writeln!(out, "ack {w} txn {i} {s} {r} {tries}").unwrap();
        out.flush().unwrap();

        let (k, value) = region(w, i);
        cells
            .write_region(&[cell(w, k)], &[2], &[value, value])
            .unwrap_or_else(|e| panic!("{what}: region write of chunk {k}: {e} ({e:?})"));
        acks += 1;
        writeln!(out, "ack {w} region {i} {k} {value}").unwrap();
        out.flush().unwrap();
    }
    writeln!(out, "done {acks} {conflicts}").unwrap();
    out.flush().unwrap();
}

/// The child process; does nothing in a normal test run.
#[test]
fn child_entry() {
    let (Some(locator), Some(w)) = (std::env::var_os(DB_ENV), std::env::var_os(WRITER_ENV)) else { return };
    let w: u64 = w.to_str().unwrap().parse().unwrap();
    let locator = locator.into_string().unwrap();
    let db = Database::open(&locator).unwrap_or_else(|e| panic!("writer {w}: open {locator}: {e}"));
    assert_eq!(db.backend(), Backend::Bucket);
    writer(&db, w, ops());
}

/// What the writers' acknowledgements say the database must hold.
#[derive(Default)]
struct Acked {
    /// Per shared counter, the value each acknowledged transaction incrementing it read.
    shared_reads: BTreeMap<u64, Vec<i64>>,
    /// Per writer, its acknowledged transactions.
    txns: BTreeMap<u64, u64>,
    /// Per cell, the value of the last acknowledged region write.
    cells: BTreeMap<u64, i64>,
    /// Per writer, its acknowledged commits and conflicts, as its summary says.
    done: BTreeMap<u64, (u64, u64)>,
    /// Acknowledged region writes.
    regions: u64,
    /// Transactions that met a conflict before they committed.
    retried: u64,
}

impl Acked {
    /// Read writer `w`'s lines.
    fn add(&mut self, w: u64, stdout: &str) {
        let mut commits = 0;
        let mut next_op = [0u64; 2];
        for line in stdout.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let num = |at: usize| -> i64 { fields[at].parse().unwrap_or_else(|_| panic!("writer {w}: {line:?}")) };
            match fields.first().copied() {
                Some("ack") => {
                    assert_eq!(num(1), w as i64, "writer {w} printed another's ack: {line:?}");
                    let i = num(3) as u64;
                    commits += 1;
                    match fields[2] {
                        "txn" => {
                            assert_eq!(i, next_op[0], "writer {w}: transactions out of order: {line:?}");
                            next_op[0] += 1;
                            *self.txns.entry(w).or_default() += 1;
                            if fields[4] != "-" {
                                let s = num(4) as u64;
                                assert_eq!(Some(s), shared(w, i), "writer {w}: {line:?}");
                                self.shared_reads.entry(s).or_default().push(num(5));
                            }
                            self.retried += u64::from(num(6) > 0);
                        }
                        "region" => {
                            assert_eq!(i, next_op[1], "writer {w}: region writes out of order: {line:?}");
                            next_op[1] += 1;
                            let (k, value) = region(w, i);
                            assert_eq!((num(4) as u64, num(5)), (k, value), "writer {w}: {line:?}");
                            self.cells.insert(cell(w, k), value);
                            self.cells.insert(cell(w, k) + 1, value);
                            self.regions += 1;
                        }
                        other => panic!("writer {w}: an ack of {other:?}: {line:?}"),
                    }
                }
                Some("done") => {
                    assert_eq!(num(1), commits, "writer {w}: its summary and its acks differ");
                    self.done.insert(w, (num(1) as u64, num(2) as u64));
                }
                _ => {}
            }
        }
        assert!(self.done.contains_key(&w), "writer {w} printed no summary:\n{stdout}");
    }
}

#[test]
fn bucket_writers_lose_no_update() {
    let locator = format!("zarrdb+{}", seaweed::bucket("bucket-writers"));
    let n = ops();
    let started = Instant::now();
    let db = Database::create(&locator).unwrap();
    assert_eq!(db.backend(), Backend::Bucket);
    for name in ["/counters", "/cells"] {
        Array::create(db.store(), name, ArrayMetadata::new(DataType::Int64, vec![LEN], vec![CHUNK])).unwrap();
    }

    let dir = tempfile::tempdir().unwrap();
    let spawn = |w: u64| {
        let env =
            [(DB_ENV, locator.clone().into()), (WRITER_ENV, w.to_string().into()), (OPS_ENV, ops().to_string().into())];
        Proc::spawn(dir.path(), "writer", w, env)
    };
    let mut procs = Procs((0..WRITERS).map(spawn).collect());
    procs.wait("", started + TIME_LIMIT);
    let mut acked = Acked::default();
    for (w, proc) in (0..).zip(&procs.0) {
        acked.add(w, &proc.stdout());
    }
    drop(procs);
    let written = started.elapsed();

    let total_txns: u64 = acked.txns.values().sum();
    let total_conflicts: u64 = acked.done.values().map(|d| d.1).sum();
    let total_acks: u64 = acked.done.values().map(|d| d.0).sum();
    let per_writer: Vec<String> =
        acked.done.iter().map(|(w, (a, c))| format!("writer {w}: {a} acks, {c} conflicts")).collect();
    let summary = format!(
        "{total_acks} acks ({total_txns} transactions, {} region writes), {total_conflicts} conflicts, {} \
         transactions retried; {}",
        acked.regions,
        acked.retried,
        per_writer.join("; ")
    );
    println!("{WRITERS} writers x {n} operations in {written:.1?}: {summary}");
    assert_eq!(total_txns, WRITERS * n, "every transaction commits in the end; {summary}");
    assert_eq!(acked.regions, WRITERS * n, "every region write commits; {summary}");

    // Opened again, so nothing of the creating handle's state is read.
    drop(db);
    let db = Database::open(&locator).unwrap();
    let counters = Array::open(db.store(), "/counters").unwrap().read_all::<i64>().unwrap();
    let cells = Array::open(db.store(), "/cells").unwrap().read_all::<i64>().unwrap();

    let mut want_counters = vec![0i64; LEN as usize];
    for (&s, reads) in &acked.shared_reads {
        let mut sorted = reads.clone();
        sorted.sort_unstable();
        let duplicated: Vec<i64> = sorted.windows(2).filter(|p| p[0] == p[1]).map(|p| p[0]).collect();
        assert!(
            duplicated.is_empty(),
            "shared counter {s}: acknowledged transactions read the same value twice (a lost update): \
             {duplicated:?}; {summary}"
        );
        let expected: Vec<i64> = (0..reads.len() as i64).collect();
        assert_eq!(sorted, expected, "shared counter {s}: the values its {} increments read; {summary}", reads.len());
        assert_eq!(
            counters[s as usize],
            reads.len() as i64,
            "shared counter {s}: {} acknowledged increments, the database holds {} ({} lost); {summary}",
            reads.len(),
            counters[s as usize],
            reads.len() as i64 - counters[s as usize]
        );
        want_counters[s as usize] = reads.len() as i64;
    }
    for (&w, &txns) in &acked.txns {
        assert_eq!(
            counters[own(w) as usize],
            txns as i64,
            "writer {w}'s own counter: {txns} acknowledged increments; {summary}"
        );
        want_counters[own(w) as usize] = txns as i64;
    }
    assert_eq!(counters, want_counters, "/counters as a whole; {summary}");

    let mut want_cells = vec![0i64; LEN as usize];
    for (&c, &value) in &acked.cells {
        want_cells[c as usize] = value;
    }
    let lost: Vec<String> = (0..LEN as usize)
        .filter(|&c| cells[c] != want_cells[c])
        .map(|c| format!("cell {c}: acknowledged {}, holds {}", want_cells[c], cells[c]))
        .collect();
    assert!(lost.is_empty(), "region writes lost: {}; {summary}", lost.join(", "));
}
