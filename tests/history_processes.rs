//! Several processes commit at once to one database that keeps history, and no update is lost:
//! on LMDB (which any number of processes may open) and on redb in multi-writer mode (every
//! process opens it so). History is linear and whole, and each version is exactly what its commit
//! made.
//!
//! The parent creates the database with history on and writes nothing else. Four writer
//! processes (children of this test binary, `child_entry`, chosen by environment variables) each
//! make `ZARRDB_HISTORY_PROCS_COMMITS` (default 40) explicit transactions: read `counter` (a u64,
//! little-endian, absent = 0), write it plus one, set `w<w>/<i>`, and commit with the message
//! `w<w> <i>`. The engine's writer lock (`begin_write` waits for it) orders them, so none fails
//! and each reads the counter the previous commit left. Two reader processes meanwhile read the
//! log again and again and open random versions by commit id: in each, the counter equals the
//! number of `w*/*` keys and the commit's distance from the root, and a later commit never holds
//! a smaller counter.
//!
//! Once every child has exited successfully the parent checks: the counter is 4 × N; the log has
//! 4 × N + 1 entries (the root, "history begins", and one per commit), each the parent of the
//! one before it, with consecutive ids and strictly increasing times; every message appears once;
//! and the version of the k-th commit after the root holds counter k and exactly the keys of
//! commits 1..=k, the new key's value saying it read k - 1 — a commit built on a stale parent (a
//! lost update) would break this. Each version opened as of its commit's time is the same.
//! Every wait is bounded; children still running when the parent fails are killed.

#[path = "common/history.rs"]
#[expect(dead_code, reason = "the test uses only part of the shared helpers")]
mod history;
#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the readers use only part of the shared generator")]
mod splitmix;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use history::{env_or, tip, Kind, Proc, Procs};
use splitmix::SplitMix;
use zarrdb::db::{CommitInfo, VersionRef};
use zarrdb::error::HistoryError;
use zarrdb::{Database, Durability, Error, Store};

const WRITERS: u64 = 4;
const READERS: u64 = 2;
const COUNTER: &str = "counter";
const ROLE_ENV: &str = "ZARRDB_HISTORY_PROCS_ROLE";
const INDEX_ENV: &str = "ZARRDB_HISTORY_PROCS_INDEX";
const DB_ENV: &str = "ZARRDB_HISTORY_PROCS_DB";
const KIND_ENV: &str = "ZARRDB_HISTORY_PROCS_KIND";
const STOP_ENV: &str = "ZARRDB_HISTORY_PROCS_STOP";
const COMMITS_ENV: &str = "ZARRDB_HISTORY_PROCS_COMMITS";
/// How durable LMDB's commits are ([`Kind::builder`]; redb's multi-writer ones are durable anyway).
const DURABILITY: Durability = Durability::Fast;

/// Commits per writer process.
fn commits() -> u64 {
    env_or(COMMITS_ENV, 40)
}

/// How long a scenario may take, children included: generous, only there so nothing hangs.
fn time_limit() -> Duration {
    Duration::from_secs(120 + 6 * commits())
}

/// The counter `store` holds (0 when absent).
fn counter(store: &Arc<dyn Store>, what: &str) -> u64 {
    match store.get(COUNTER).unwrap_or_else(|e| panic!("{what}: reading the counter: {e}")) {
        None => 0,
        Some(bytes) => u64::from_le_bytes(bytes.try_into().unwrap_or_else(|b| panic!("{what}: counter {b:?}"))),
    }
}

/// The counter of a version and its `w*/*` keys, checked to agree with each other.
fn version_state(store: &Arc<dyn Store>, what: &str) -> (u64, BTreeSet<String>) {
    let count = counter(store, what);
    let mut written = BTreeSet::new();
    for key in store.list_prefix("").unwrap_or_else(|e| panic!("{what}: listing: {e}")) {
        if key == COUNTER {
            continue;
        }
        assert!(key.starts_with('w') && key.contains('/'), "{what}: a key no writer writes: {key:?}");
        written.insert(key);
    }
    assert_eq!(count, written.len() as u64, "{what}: the counter and the number of w*/* keys differ");
    (count, written)
}

/// The version `at` names, opened through `db`.
fn open(db: &Database, at: &VersionRef, what: &str) -> Arc<dyn Store> {
    db.open_version(at).unwrap_or_else(|e| panic!("{what}: opening {at}: {e}")).store()
}

/// Each entry of `log` names the next as its parent, with a smaller id and an earlier time; the
/// last is the root.
fn check_linear(log: &[CommitInfo], what: &str) {
    for (i, pair) in log.windows(2).enumerate() {
        let (child, parent) = (&pair[0], &pair[1]);
        assert_eq!(child.parent, Some(parent.id), "{what}: entry {i}'s parent is not entry {}", i + 1);
        assert_eq!(
            child.id.sequence(),
            parent.id.sequence() + 1,
            "{what}: entry {i}'s id does not follow its parent's"
        );
        assert!(child.time > parent.time, "{what}: entry {i} is not later than its parent");
    }
    let root = log.last().unwrap_or_else(|| panic!("{what}: an empty log"));
    assert_eq!((root.parent, root.message.as_str()), (None, "history begins"), "{what}: the log's root");
}

/// A writer process: `n` transactions, each adding one to the counter and setting its own key.
fn writer(db: &Database, w: u64, n: u64) {
    let mut last = None;
    for i in 0..n {
        let what = format!("writer {w}, commit {i}");
        let txn = db.begin_write().unwrap_or_else(|e| panic!("{what}: begin_write: {e}"));
        let store = txn.store();
        let read = counter(&store, &what);
        assert!(last <= Some(read), "{what}: read counter {read} after its own commit left {last:?}");
        store.set(COUNTER, &(read + 1).to_le_bytes()).unwrap_or_else(|e| panic!("{what}: set: {e}"));
        let value = format!("w{w} {i} -> {}", read + 1);
        store.set(&format!("w{w}/{i}"), value.as_bytes()).unwrap_or_else(|e| panic!("{what}: set: {e}"));
        drop(store);
        txn.commit_with(&format!("w{w} {i}"), "").unwrap_or_else(|e| panic!("{what}: commit: {e}"));
        last = Some(read + 1);
    }
    println!("WRITER {w}: {n} commits");
}

/// A reader process: until `stop` exists (or `limit` passes), read the log and check random
/// versions of it.
fn reader(db: &Database, r: u64, stop: &Path, limit: Duration) {
    let deadline = Instant::now() + limit;
    let mut rng = SplitMix::new(0x4157_0f1e, r);
    // Counter of every commit this reader opened, by commit number.
    let mut seen: BTreeMap<u64, u64> = BTreeMap::new();
    let (mut logs, mut opened, mut longest) = (0u64, 0u64, 0usize);
    loop {
        // Before the reads, so the last round reads what every writer committed.
        let stopping = stop.exists();
        let log = db.log().unwrap_or_else(|e| panic!("reader {r}: log: {e}"));
        let what = format!("reader {r}, log {logs} ({} entries)", log.len());
        check_linear(&log, &what);
        assert!(log.len() >= longest, "{what}: shorter than a log read before ({longest} entries)");
        longest = log.len();
        logs += 1;
        let picks = [0, rng.range(0, log.len() as u64 - 1), rng.range(0, log.len() as u64 - 1)];
        for pick in picks {
            let info = &log[pick as usize];
            let position = (log.len() - 1 - pick as usize) as u64;
            let what = format!("{what}: commit {} ({:?})", info.id, info.message);
            let (count, _) = version_state(&open(db, &VersionRef::Commit(info.id), &what), &what);
            assert_eq!(count, position, "{what}: the counter is not the commit's distance from the root");
            let seq = info.id.sequence();
            if let Some((earlier, &c)) = seen.range(..=seq).next_back() {
                assert!(c <= count, "{what}: counter {count}, commit {earlier:016x} held {c}");
            }
            if let Some((later, &c)) = seen.range(seq..).next() {
                assert!(count <= c, "{what}: counter {count}, commit {later:016x} held {c}");
            }
            seen.insert(seq, count);
            opened += 1;
        }
        if stopping || Instant::now() > deadline {
            break;
        }
    }
    println!("READER {r}: {logs} logs, {opened} versions opened, {} distinct, longest log {longest}", seen.len());
}

/// The child process; does nothing in a normal test run.
#[test]
fn child_entry() {
    let (Some(role), Some(path)) = (std::env::var_os(ROLE_ENV), std::env::var_os(DB_ENV)) else { return };
    let index: u64 = std::env::var(INDEX_ENV).unwrap().parse().unwrap();
    let kind = Kind::from_name(&std::env::var(KIND_ENV).unwrap());
    let db =
        kind.builder(DURABILITY).open(PathBuf::from(path)).unwrap_or_else(|e| panic!("{role:?} {index}: open: {e}"));
    assert!(db.keeps_history(), "the database keeps no history");
    match role.to_str().unwrap() {
        "writer" => writer(&db, index, commits()),
        "reader" => reader(&db, index, Path::new(&std::env::var_os(STOP_ENV).unwrap()), time_limit()),
        other => panic!("unknown role {other:?}"),
    }
}

/// Start `role` number `index` of the scenario of `kind` in `dir`.
fn spawn(kind: Kind, dir: &Path, path: &Path, stop: &Path, role: &str, index: u64) -> Proc {
    let env = [
        (ROLE_ENV, role.into()),
        (INDEX_ENV, index.to_string().into()),
        (DB_ENV, path.into()),
        (KIND_ENV, kind.name().into()),
        (STOP_ENV, stop.into()),
        (COMMITS_ENV, commits().to_string().into()),
    ];
    Proc::spawn(dir, role, index, env)
}

fn run(kind: Kind) {
    let n = commits();
    let total = WRITERS * n;
    let started = Instant::now();
    let deadline = started + time_limit();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let stop = dir.path().join("stop");
    {
        let db = kind.builder(DURABILITY).create(&path).unwrap();
        assert!(db.keeps_history());
        assert_eq!(db.log().unwrap().len(), 1, "a new database's history is its root");
    }

    // Readers first, so they read while the writers commit.
    let mut procs = Procs(Vec::new());
    for r in 0..READERS {
        procs.0.push(spawn(kind, dir.path(), &path, &stop, "reader", r));
    }
    for w in 0..WRITERS {
        procs.0.push(spawn(kind, dir.path(), &path, &stop, "writer", w));
    }
    procs.wait("writer", deadline);
    let written = started.elapsed();
    File::create(&stop).unwrap();
    procs.wait("reader", deadline);
    for proc in &procs.0 {
        let tag = if proc.name.starts_with("reader") { "READER " } else { "WRITER " };
        eprintln!("{kind:?}: {}", proc.summary(tag));
    }
    eprintln!("{kind:?}: {total} commits by {WRITERS} processes in {written:.1?}");

    let db = kind.builder(DURABILITY).open(&path).unwrap();
    assert_eq!(counter(&db.store(), "the head"), total, "{kind:?}: updates were lost");
    let log = db.log().unwrap();
    assert_eq!(log.len() as u64, total + 1, "{kind:?}: the log does not hold one entry per commit and the root");
    check_linear(&log, &format!("{kind:?}: the final log"));
    assert_eq!(tip(&db), log[0].id, "{kind:?}: main");

    let mut messages: BTreeMap<&str, u64> = BTreeMap::new();
    for info in &log[..log.len() - 1] {
        *messages.entry(info.message.as_str()).or_default() += 1;
    }
    let want: BTreeMap<String, u64> =
        (0..WRITERS).flat_map(|w| (0..n).map(move |i| (format!("w{w} {i}"), 1))).collect();
    let got: BTreeMap<String, u64> = messages.into_iter().map(|(m, c)| (m.to_owned(), c)).collect();
    assert_eq!(got, want, "{kind:?}: the messages of the log are not each writer's commits once each");

    // From the root: commit k holds counter k and exactly the keys of commits 1..=k.
    let mut keys = BTreeSet::new();
    for (k, info) in log.iter().rev().enumerate() {
        let k = k as u64;
        let what = format!("{kind:?}: commit {k} after the root ({}, {:?})", info.id, info.message);
        let store = open(&db, &VersionRef::Commit(info.id), &what);
        if k > 0 {
            let key = info.message.replacen(' ', "/", 1);
            let value = store.get(&key).unwrap().unwrap_or_else(|| panic!("{what}: its key {key} is missing"));
            let want = format!("{} -> {k}", info.message);
            assert_eq!(String::from_utf8_lossy(&value), want, "{what}: it read a stale counter");
            keys.insert(key);
            assert_eq!((info.changes, info.author.as_str()), (2, ""), "{what}: changes and author");
        }
        let (count, written) = version_state(&store, &what);
        assert_eq!(count, k, "{what}: the counter is not the commit's distance from the root (a lost update)");
        assert_eq!(written, keys, "{what}: the version does not hold exactly the keys of its ancestry");
        let as_of = VersionRef::AsOf(info.time);
        assert_eq!(db.resolve(&as_of).unwrap().id, info.id, "{what}: as of its time");
        assert_eq!(version_state(&open(&db, &as_of, &what), &what).0, k, "{what}: as of its time");
    }
    let past = format!("{:016x}", log[0].id.sequence() + 1).parse().unwrap();
    let missing = db.open_version(&VersionRef::Commit(past));
    assert!(
        matches!(missing, Err(Error::History(HistoryError::NotFound { .. }))),
        "{kind:?}: a commit after the last: {:?}",
        missing.err()
    );
    eprintln!("{kind:?}: done in {:.1?}", started.elapsed());
}

#[test]
fn lmdb_processes_commit_to_one_history() {
    run(Kind::Lmdb);
}

#[test]
fn redb_multi_writer_processes_commit_to_one_history() {
    run(Kind::RedbMultiWriter);
}
