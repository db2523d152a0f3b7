//! Atomicity of write transactions across arrays and a group (DESIGN.md §5), on redb and LMDB.
//!
//! Arrays `/a` and `/b` (int64, 64x64 in 16x16 chunks) and group `/g`. Transaction `n` adds a
//! random non-zero delta to 1 to 4 random regions of `/a` and subtracts it from a region of the
//! same size elsewhere in `/b` (read-modify-write inside the transaction), then sets the
//! attributes of `/g` to `{"txn": n, "sum_a": sum(a)}`. Reader threads take snapshots in a loop
//! and check each one: sum(a) == g.sum_a, sum(a) + sum(b) == 0, `/a` and `/b` hold exactly what
//! the writer recorded for transaction `g.txn`, and `g.txn` never goes backwards.
//!
//! After every 8th commit the writer waits until a reader holds a snapshot of it, so the readers
//! check many distinct states without any timing assumption. The control test makes the same
//! writes through the auto-commit store (one commit per region write, one for the attributes),
//! the writer waiting after the first region write of every 8th transaction: there the readers
//! must report violations, which shows the checks can fail.

#[path = "common/splitmix.rs"]
mod splitmix;

use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Mutex;

use serde_json::{json, Map, Value};
use splitmix::SplitMix;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Group, Snapshot};

const SIDE: u64 = 64;
const CHUNK: u64 = 16;
const READERS: usize = 3;
const SYNC_EVERY: u64 = 8;
const SEED: u64 = 0x5eed_a70c;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Mode {
    /// Each writer step is one explicit transaction.
    Transaction,
    /// Each region write and the attribute update commit on their own.
    AutoCommit,
}

/// One region update of a transaction: `delta` added to `/a` at `at_a`, subtracted from `/b` at `at_b`.
struct Region {
    shape: [u64; 2],
    at_a: [u64; 2],
    at_b: [u64; 2],
    delta: i64,
}

fn regions(n: u64) -> Vec<Region> {
    let mut rng = SplitMix::new(SEED, n);
    (0..rng.range(1, 4))
        .map(|_| {
            let shape = [rng.range(1, 24), rng.range(1, 24)];
            let mut at = || [rng.range(0, SIDE - shape[0]), rng.range(0, SIDE - shape[1])];
            let (at_a, at_b) = (at(), at());
            Region { shape, at_a, at_b, delta: rng.nonzero(1000) }
        })
        .collect()
}

/// The writer's record of the arrays, and what it publishes to the readers.
struct Shared {
    db: Database,
    /// Fingerprints of (`/a`, `/b`) after transaction `n`, at index `n`; pushed before the commit.
    history: Mutex<Vec<(u64, u64)>>,
    /// Sync points reached by the writer, and the highest one a reader took a snapshot after.
    published: AtomicU64,
    acked: AtomicU64,
    done: AtomicBool,
    /// Snapshots that broke an invariant (the first few described).
    violations: AtomicU64,
    described: Mutex<Vec<String>>,
}

fn fingerprint(values: &[i64]) -> u64 {
    let mut h = DefaultHasher::new();
    values.hash(&mut h);
    h.finish()
}

fn attributes(txn: u64, sum_a: i64) -> Map<String, Value> {
    json!({"txn": txn, "sum_a": sum_a}).as_object().unwrap().clone()
}

fn setup(backend: Backend, path: &std::path::Path) -> Database {
    let db = Database::builder().backend(backend).create(path).unwrap();
    let txn = db.begin_write().unwrap();
    for name in ["/a", "/b"] {
        Array::create(txn.store(), name, ArrayMetadata::new(DataType::Int64, vec![SIDE; 2], vec![CHUNK; 2])).unwrap();
    }
    Group::create(txn.store(), "/g", attributes(0, 0)).unwrap();
    txn.commit().unwrap();
    db
}

/// Add `delta` to the region of `array` at `at` (read-modify-write on the array's store).
fn add(array: &Array, at: [u64; 2], shape: [u64; 2], delta: i64) {
    let values: Vec<i64> = array.read_region::<i64>(&at, &shape).unwrap().iter().map(|v| v + delta).collect();
    array.write_region(&at, &shape, &values).unwrap();
}

fn add_model(model: &mut [i64], at: [u64; 2], shape: [u64; 2], delta: i64) {
    for r in at[0]..at[0] + shape[0] {
        for c in at[1]..at[1] + shape[1] {
            model[(r * SIDE + c) as usize] += delta;
        }
    }
}

/// Block until a reader holds a snapshot taken after this point; fail if every reader is gone.
fn sync_point(shared: &Shared, readers_alive: &dyn Fn() -> bool) {
    let target = shared.published.fetch_add(1, SeqCst) + 1;
    while shared.acked.load(SeqCst) < target {
        assert!(readers_alive(), "every reader thread ended (panicked?) while the writer waited");
        std::thread::yield_now();
    }
}

fn writer(shared: &Shared, mode: Mode, count: u64, readers_alive: &dyn Fn() -> bool) -> (Vec<i64>, Vec<i64>) {
    let cells = (SIDE * SIDE) as usize;
    let (mut model_a, mut model_b) = (vec![0i64; cells], vec![0i64; cells]);
    let auto = shared.db.store();
    for n in 1..=count {
        let plan = regions(n);
        for r in &plan {
            add_model(&mut model_a, r.at_a, r.shape, r.delta);
            add_model(&mut model_b, r.at_b, r.shape, -r.delta);
        }
        shared.history.lock().unwrap().push((fingerprint(&model_a), fingerprint(&model_b)));
        let sum_a: i64 = model_a.iter().sum();
        let txn = (mode == Mode::Transaction).then(|| shared.db.begin_write().unwrap());
        let store = txn.as_ref().map_or_else(|| auto.clone(), |t| t.store());
        let (a, b) = (Array::open(store.clone(), "/a").unwrap(), Array::open(store.clone(), "/b").unwrap());
        let mut g = Group::open(store, "/g").unwrap();
        for (i, r) in plan.iter().enumerate() {
            add(&a, r.at_a, r.shape, r.delta);
            if mode == Mode::AutoCommit && i == 0 && n % SYNC_EVERY == 0 {
                sync_point(shared, readers_alive);
            }
            add(&b, r.at_b, r.shape, -r.delta);
        }
        g.set_attributes(attributes(n, sum_a)).unwrap();
        if let Some(txn) = txn {
            // Reads inside the transaction see its own writes.
            assert_eq!(a.read_all::<i64>().unwrap(), model_a, "transaction {n} does not read its own writes");
            txn.commit().unwrap();
            if n % SYNC_EVERY == 0 {
                sync_point(shared, readers_alive);
            }
        }
    }
    (model_a, model_b)
}

/// What one reader saw.
#[derive(Default)]
struct Seen {
    snapshots: u64,
    txns: BTreeSet<u64>,
    last: u64,
}

/// Check the invariants on one snapshot; record any violation.
fn check(shared: &Shared, snapshot: &Snapshot, seen: &mut Seen) {
    let store = snapshot.store();
    let attrs = Group::open(store.clone(), "/g").unwrap().attributes();
    let txn = attrs["txn"].as_u64().expect("txn attribute");
    let sum_attr = attrs["sum_a"].as_i64().expect("sum_a attribute");
    let a = Array::open(store.clone(), "/a").unwrap().read_all::<i64>().unwrap();
    let b = Array::open(store, "/b").unwrap().read_all::<i64>().unwrap();
    let (sum_a, sum_b) = (a.iter().sum::<i64>(), b.iter().sum::<i64>());
    let recorded = shared.history.lock().unwrap().get(txn as usize).copied();
    let mut problems = Vec::new();
    if sum_a != sum_attr {
        problems.push(format!("sum(a) = {sum_a} but g.sum_a = {sum_attr}"));
    }
    if sum_a + sum_b != 0 {
        problems.push(format!("sum(a) + sum(b) = {}", sum_a + sum_b));
    }
    if txn < seen.last {
        problems.push(format!("txn went back from {} to {txn}", seen.last));
    }
    if recorded != Some((fingerprint(&a), fingerprint(&b))) {
        problems.push(format!("content is not the state after transaction {txn}"));
    }
    if !problems.is_empty() {
        shared.violations.fetch_add(1, SeqCst);
        let mut described = shared.described.lock().unwrap();
        if described.len() < 10 {
            described.push(format!("snapshot at g.txn = {txn}: {}", problems.join("; ")));
        }
    }
    seen.snapshots += 1;
    seen.txns.insert(txn);
    seen.last = seen.last.max(txn);
}

fn reader(shared: &Shared) -> Seen {
    let mut seen = Seen::default();
    loop {
        // Read `done` first: the loop always checks one snapshot taken after the last commit.
        let finished = shared.done.load(SeqCst);
        let published = shared.published.load(SeqCst);
        let snapshot = shared.db.begin_read().unwrap();
        shared.acked.fetch_max(published, SeqCst);
        check(shared, &snapshot, &mut seen);
        if finished {
            return seen;
        }
    }
}

/// Run `count` writer steps against `READERS` readers; returns the readers' observations and the
/// writer's final model.
fn run(backend: Backend, mode: Mode, count: u64) -> (Shared, Vec<Seen>, (Vec<i64>, Vec<i64>)) {
    let dir = tempfile::tempdir().unwrap();
    let cells = (SIDE * SIDE) as usize;
    let zeros = fingerprint(&vec![0i64; cells]);
    let shared = Shared {
        db: setup(backend, &dir.path().join("db")),
        history: Mutex::new(vec![(zeros, zeros)]),
        published: AtomicU64::new(0),
        acked: AtomicU64::new(0),
        done: AtomicBool::new(false),
        violations: AtomicU64::new(0),
        described: Mutex::new(Vec::new()),
    };
    let (seen, model) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..READERS).map(|_| scope.spawn(|| reader(&shared))).collect();
        let alive = || handles.iter().any(|h| !h.is_finished());
        let model = writer(&shared, mode, count, &alive);
        shared.done.store(true, SeqCst);
        let seen: Vec<Seen> = handles.into_iter().map(|h| h.join().expect("reader panicked")).collect();
        (seen, model)
    });
    (shared, seen, model)
}

fn atomic_across_arrays_and_group(backend: Backend) {
    let count = 240;
    let (shared, seen, (model_a, model_b)) = run(backend, Mode::Transaction, count);
    let violations = shared.violations.load(SeqCst);
    let described = shared.described.lock().unwrap();
    assert_eq!(violations, 0, "{backend:?}: readers saw part of a transaction:\n{}", described.join("\n"));
    let all: BTreeSet<u64> = seen.iter().flat_map(|s| s.txns.iter().copied()).collect();
    for (i, s) in seen.iter().enumerate() {
        assert_eq!(s.last, count, "{backend:?}: reader {i} did not see the last commit");
    }
    // The writer waited for a reader at each of these commits.
    for n in (SYNC_EVERY..=count).step_by(SYNC_EVERY as usize) {
        assert!(all.contains(&n), "{backend:?}: no reader checked the state after transaction {n}");
    }
    let latest = shared.db.begin_read().unwrap();
    assert_eq!(Array::open(latest.store(), "/a").unwrap().read_all::<i64>().unwrap(), model_a);
    assert_eq!(Array::open(latest.store(), "/b").unwrap().read_all::<i64>().unwrap(), model_b);
    let snapshots: u64 = seen.iter().map(|s| s.snapshots).sum();
    eprintln!("{backend:?}: {count} transactions, {snapshots} snapshots checked, {} distinct states seen", all.len());
}

#[test]
fn redb_readers_never_see_part_of_a_transaction() {
    atomic_across_arrays_and_group(Backend::Redb);
}

#[test]
fn lmdb_readers_never_see_part_of_a_transaction() {
    atomic_across_arrays_and_group(Backend::Lmdb);
}

/// The control: without an enclosing transaction the same writes are seen half done.
fn autocommit_is_seen_half_done(backend: Backend) {
    let count = 48;
    let (shared, _, _) = run(backend, Mode::AutoCommit, count);
    let violations = shared.violations.load(SeqCst);
    // The writer stopped after the first region write of each of these transactions until a
    // reader had a snapshot: at least that many snapshots broke the invariants.
    assert!(
        violations >= count / SYNC_EVERY,
        "{backend:?}: the checks saw only {violations} violations of auto-commit writes; they cannot detect torn transactions"
    );
    eprintln!(
        "{backend:?}: auto-commit, {violations} snapshots violated the invariants, e.g. {:?}",
        shared.described.lock().unwrap().first()
    );
}

#[test]
fn redb_checks_detect_autocommit_writes_seen_half_done() {
    autocommit_is_seen_half_done(Backend::Redb);
}

#[test]
fn lmdb_checks_detect_autocommit_writes_seen_half_done() {
    autocommit_is_seen_half_done(Backend::Lmdb);
}
