//! Expiry and collection running in one process while others commit and read, on LMDB (which
//! any number of processes may open) and on redb in multi-writer mode: no update is lost, no
//! reader sees a torn version, a tagged version stays exact, and the collector frees values.
//!
//! The parent creates the database with history on and commits `base/0`…`base/7` (8 KiB each)
//! three times over, tagging the second version (`before-writers`) and recording the hash of
//! what it holds (FNV-1a over its keys and values in order): the third commit overwrites every
//! value of it, so only the tag keeps them. Then it starts seven children of this test binary
//! (`child_entry`, chosen by environment variables), each printing its acknowledgements on
//! stdout:
//!
//! - four writers, each looping over durable transactions: read `w/<w>/count` (a u64,
//!   little-endian, absent = 0), write it plus one, and set `w/<w>/<count>` to an 8 KiB value
//!   that follows from (w, count); after each commit it prints `acked N`. No one else writes a
//!   writer's keys, so the count it reads must be the number it acknowledged before.
//! - two readers, each looping: open the tagged version and check its hash; resolve `main` and
//!   open that commit by id right away, read it whole and check that, for every writer, the count
//!   equals the number of `w/<w>/<n>` keys, which are exactly `0..count`, each holding its value,
//!   that `base/*` holds the parent's last values, and that no count is lower than in the recent
//!   version read before (a torn or stale read would break one of these). The collector may
//!   expire the version between the resolve and the open: `Expired` is counted, not a failure. A
//!   version opened is read whole even when it expires and is collected during the read: every
//!   64 values the reader asks whether it has expired yet and counts those that had (the values
//!   after were read from a version the collector was free to collect).
//! - one collector, looping: `expire(main)` and `collect()`, printing `collected VERSIONS VALUES
//!   BYTES` after each, with a 10 ms pause between rounds so that a recent version is sometimes
//!   still there when a reader opens it. What it frees is each writer's superseded counts and the
//!   parent's first `base/*` values (the writers' own keys are never overwritten).
//!
//! After `ZARRDB_GC_PROCESSES_SECS` (default 6) the parent creates a stop file; each child
//! finishes what it is doing, prints a summary and exits. The parent then checks that every
//! child exited successfully, that each writer's count is the number of increments it
//! acknowledged and its keys are exactly those, that no reader saw a torn version or a wrong
//! tagged one, that `check_history` finds nothing wrong, that the tagged version is exact, and
//! that the collector freed values. Last it expires and collects once more itself: the history
//! stays whole and the log keeps only the head and the tagged commit. Every wait is bounded;
//! children still running when the parent fails are killed.

#[path = "common/history.rs"]
#[expect(dead_code, reason = "the test uses only part of the shared helpers")]
mod history;
#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the workload uses only part of the shared generator")]
mod splitmix;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use history::{contents, env_or, hash, numbers, tip, Kind, Proc, Procs, State};
use splitmix::SplitMix;
use zarrdb::db::VersionRef;
use zarrdb::error::HistoryError;
use zarrdb::{Database, Durability, Error};

const WRITERS: u64 = 4;
const READERS: u64 = 2;
/// The keys the parent writes before the children start: `base/0` to `base/7`.
const BASE: u64 = 8;
const TAG: &str = "before-writers";
const ROLE_ENV: &str = "ZARRDB_GC_PROCS_ROLE";
const INDEX_ENV: &str = "ZARRDB_GC_PROCS_INDEX";
const DB_ENV: &str = "ZARRDB_GC_PROCS_DB";
const KIND_ENV: &str = "ZARRDB_GC_PROCS_KIND";
const STOP_ENV: &str = "ZARRDB_GC_PROCS_STOP";
const TAGGED_ENV: &str = "ZARRDB_GC_PROCS_TAGGED";
/// Durable commits on LMDB too ([`Kind::builder`]; redb's multi-writer mode always makes them so).
const DURABILITY: Durability = Durability::Durable;

/// How long the children run.
fn run_time() -> Duration {
    Duration::from_secs_f64(env_or("ZARRDB_GC_PROCESSES_SECS", 6.0))
}

/// The 8 KiB value stream `stream` writes as its `n`-th (writers are streams 0–3, the parent's
/// commits 100 and up).
fn chunk(stream: u64, n: u64) -> Vec<u8> {
    let mut rng = SplitMix::new(stream, n);
    (0..1024).flat_map(|_| rng.next_u64().to_le_bytes()).collect()
}

fn count_key(w: u64) -> String {
    format!("w/{w}/count")
}

fn decode_count(bytes: &[u8], what: &str) -> u64 {
    u64::from_le_bytes(bytes.try_into().unwrap_or_else(|_| panic!("{what}: a count of {} bytes", bytes.len())))
}

/// A writer process: increments until `stop` exists, acknowledging each.
fn writer(db: &Database, w: u64, stop: &Path) {
    let mut acked = 0;
    while !stop.exists() {
        let what = format!("writer {w}, increment {acked}");
        let txn = db.begin_write().unwrap_or_else(|e| panic!("{what}: begin_write: {e}"));
        let store = txn.store();
        let read = store.get(&count_key(w)).unwrap_or_else(|e| panic!("{what}: reading the count: {e}"));
        let count = read.map_or(0, |b| decode_count(&b, &what));
        // Only this process writes its keys: anything but its own last count is a lost update.
        assert_eq!(count, acked, "{what}: read count {count}");
        store.set(&count_key(w), &(count + 1).to_le_bytes()).unwrap_or_else(|e| panic!("{what}: set: {e}"));
        store.set(&format!("w/{w}/{count}"), &chunk(w, count)).unwrap_or_else(|e| panic!("{what}: set: {e}"));
        drop(store);
        txn.commit_with(&format!("w{w} {count}"), "writer").unwrap_or_else(|e| panic!("{what}: commit: {e}"));
        acked += 1;
        println!("acked {acked}");
    }
    println!("WRITER {w}: {acked} increments");
}

/// What is wrong with a recent version `state` (`None`: nothing), given the counts of the recent
/// version read before.
fn problem_in(state: &State, last: &mut [u64; WRITERS as usize]) -> Option<String> {
    let mut keys: [Vec<u64>; WRITERS as usize] = Default::default();
    let mut counts = [0; WRITERS as usize];
    for (key, value) in state {
        let parts: Vec<&str> = key.split('/').collect();
        match parts[..] {
            ["base", i] if i.parse::<u64>().is_ok_and(|i| i < BASE) => {
                if *value != chunk(102, i.parse().unwrap()) {
                    return Some(format!("{key} is not the parent's last value"));
                }
            }
            ["w", w, n] if w.parse::<u64>().is_ok_and(|w| w < WRITERS) => {
                let w: usize = w.parse().unwrap();
                if n == "count" {
                    counts[w] = decode_count(value, key);
                } else {
                    let Ok(n) = n.parse::<u64>() else { return Some(format!("a key no writer writes: {key}")) };
                    if *value != chunk(w as u64, n) {
                        return Some(format!("{key} does not hold its value"));
                    }
                    keys[w].push(n);
                }
            }
            _ => return Some(format!("a key no process writes: {key}")),
        }
    }
    for w in 0..WRITERS as usize {
        keys[w].sort_unstable();
        if keys[w] != (0..counts[w]).collect::<Vec<_>>() {
            return Some(format!("writer {w}: count {}, {} keys ({:?}…)", counts[w], keys[w].len(), keys[w].first()));
        }
        if counts[w] < last[w] {
            return Some(format!("writer {w}: count {} after {} in an earlier version", counts[w], last[w]));
        }
    }
    *last = counts;
    None
}

/// A reader process: until `stop` exists, the tagged version and the newest, read whole.
fn reader(db: &Database, r: u64, stop: &Path, tagged: u64) {
    let (mut tagged_reads, mut wrong, mut recent, mut expired, mut torn_reads) = (0u64, 0u64, 0u64, 0u64, 0u64);
    // Recent versions that expired while being read (values were read after), and the bytes read.
    let (mut overtaken, mut bytes) = (0u64, 0u64);
    let mut last = [0; WRITERS as usize];
    while !stop.exists() {
        let what = format!("reader {r}, tagged read {tagged_reads}");
        let version = db.open_version(&VersionRef::Tag(TAG.into())).unwrap_or_else(|e| panic!("{what}: {e}"));
        let got = hash(&contents(version.store().as_ref(), &what));
        drop(version);
        tagged_reads += 1;
        if got != tagged {
            wrong += 1;
            println!("wrong tagged version: hash {got:016x}");
        }
        let id = db.resolve(&VersionRef::Branch("main".into())).unwrap_or_else(|e| panic!("reader {r}: main: {e}")).id;
        let what = format!("reader {r}, commit {id}");
        match db.open_version(&VersionRef::Commit(id)) {
            // The collector expired it between the resolve and the open.
            Err(Error::History(HistoryError::Expired { .. })) => expired += 1,
            Err(e) => panic!("{what}: {e}"),
            Ok(version) => {
                let store = version.store();
                let keys = store.list_prefix("").unwrap_or_else(|e| panic!("{what}: listing: {e}"));
                let (mut state, mut gone) = (State::new(), false);
                for (i, key) in keys.into_iter().enumerate() {
                    if i % 64 == 63 && !gone {
                        let now = db.resolve(&VersionRef::Commit(id));
                        gone = matches!(now, Err(Error::History(HistoryError::Expired { .. })));
                        overtaken += u64::from(gone);
                    }
                    let value = store.get(&key).unwrap_or_else(|e| panic!("{what}: reading {key}: {e}"));
                    let value = value.unwrap_or_else(|| panic!("{what}: listed {key} is gone"));
                    bytes += value.len() as u64;
                    state.insert(key, value);
                }
                recent += 1;
                if let Some(problem) = problem_in(&state, &mut last) {
                    torn_reads += 1;
                    println!("torn {id}: {problem}");
                }
            }
        }
    }
    println!(
        "READER {r}: {tagged_reads} tagged reads, {wrong} wrong, {recent} recent reads, {expired} expired, \
         {torn_reads} torn; {overtaken} expired while being read; {} MiB read; last counts {last:?}",
        bytes >> 20
    );
}

/// The collector process: expire all but the head (and the tagged version) and collect, until
/// `stop` exists.
fn collector(db: &Database, stop: &Path) {
    let (mut rounds, mut versions, mut values, mut bytes) = (0u64, 0u64, 0u64, 0u64);
    while !stop.exists() {
        db.expire(&VersionRef::Branch("main".into()))
            .unwrap_or_else(|e| panic!("collector, round {rounds}: expire: {e}"));
        let freed = db.collect().unwrap_or_else(|e| panic!("collector, round {rounds}: collect: {e}"));
        println!("collected {} {} {}", freed.versions, freed.values, freed.bytes);
        (rounds, versions, values, bytes) =
            (rounds + 1, versions + freed.versions, values + freed.values, bytes + freed.bytes);
        // A pause, so a reader's recent version is sometimes still there when it opens it.
        std::thread::sleep(Duration::from_millis(10));
    }
    println!("COLLECTOR: {rounds} rounds, {versions} versions, {values} values, {bytes} bytes freed");
}

/// The child process; does nothing in a normal test run.
#[test]
fn child_entry() {
    let (Some(role), Some(path)) = (std::env::var_os(ROLE_ENV), std::env::var_os(DB_ENV)) else { return };
    // The test harness has printed the start of a line ("test child_entry ... "): end it, so the
    // first acknowledgement has a line of its own.
    println!();
    let index: u64 = std::env::var(INDEX_ENV).unwrap().parse().unwrap();
    let kind = Kind::from_name(&std::env::var(KIND_ENV).unwrap());
    let stop = PathBuf::from(std::env::var_os(STOP_ENV).unwrap());
    let db =
        kind.builder(DURABILITY).open(PathBuf::from(path)).unwrap_or_else(|e| panic!("{role:?} {index}: open: {e}"));
    match role.to_str().unwrap() {
        "writer" => writer(&db, index, &stop),
        "reader" => reader(&db, index, &stop, std::env::var(TAGGED_ENV).unwrap().parse().unwrap()),
        "collector" => collector(&db, &stop),
        other => panic!("unknown role {other:?}"),
    }
}

/// Start `role` number `index` of the scenario of `kind` in `dir` (`tagged`: the hash of the
/// tagged version).
fn spawn(kind: Kind, dir: &Path, role: &str, index: u64, tagged: u64) -> Proc {
    let env = [
        (ROLE_ENV, role.into()),
        (INDEX_ENV, index.to_string().into()),
        (DB_ENV, dir.join("db").into()),
        (KIND_ENV, kind.name().into()),
        (STOP_ENV, dir.join("stop").into()),
        (TAGGED_ENV, tagged.to_string().into()),
    ];
    Proc::spawn(dir, role, index, env)
}

fn run(kind: Kind) {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let (tagged, tagged_id) = {
        let db = kind.builder(DURABILITY).create(&path).unwrap();
        let mut tagged = None;
        for round in 0..3 {
            let txn = db.begin_write().unwrap();
            for i in 0..BASE {
                txn.store().set(&format!("base/{i}"), &chunk(100 + round, i)).unwrap();
            }
            txn.commit_with(&format!("base {round}"), "parent").unwrap();
            if round == 1 {
                let id = db.tag(TAG, &VersionRef::Branch("main".into())).unwrap();
                tagged = Some((hash(&contents(db.store().as_ref(), "the tagged head")), id));
            }
        }
        tagged.unwrap()
    };

    // Readers and the collector first, so they run while the writers commit.
    let mut procs = Procs(Vec::new());
    for r in 0..READERS {
        procs.0.push(spawn(kind, dir.path(), "reader", r, tagged));
    }
    procs.0.push(spawn(kind, dir.path(), "collector", 0, tagged));
    for w in 0..WRITERS {
        procs.0.push(spawn(kind, dir.path(), "writer", w, tagged));
    }
    let stop_at = Instant::now() + run_time();
    while Instant::now() < stop_at {
        procs.check();
        std::thread::sleep(Duration::from_millis(50));
    }
    File::create(dir.path().join("stop")).unwrap();
    // Generous, only there so nothing hangs.
    procs.wait("", Instant::now() + Duration::from_secs(120));

    let mut acked = [0u64; WRITERS as usize];
    let (mut torn_lines, mut torn, mut wrong, mut recent, mut tagged_reads, mut expired) = (Vec::new(), 0, 0, 0, 0, 0);
    let mut freed = 0;
    for proc in &procs.0 {
        let out = proc.stdout();
        match proc.name.split(' ').collect::<Vec<_>>()[..] {
            ["writer", w] => {
                let last = out.lines().filter_map(|l| l.strip_prefix("acked ")).next_back();
                acked[w.parse::<usize>().unwrap()] = last.map_or(0, |n| n.parse().unwrap());
                eprintln!("{kind:?}: {}", proc.summary("WRITER "));
            }
            ["reader", _] => {
                let summary = proc.summary("READER ");
                let n = numbers(&summary);
                (tagged_reads, wrong, recent, expired, torn) =
                    (tagged_reads + n[1], wrong + n[2], recent + n[3], expired + n[4], torn + n[5]);
                torn_lines.extend(
                    out.lines().filter(|l| l.starts_with("torn ") || l.starts_with("wrong ")).map(String::from),
                );
                eprintln!("{kind:?}: {summary}");
            }
            _ => {
                let summary = proc.summary("COLLECTOR: ");
                freed = numbers(&summary)[2];
                eprintln!("{kind:?}: {summary}");
            }
        }
    }

    let db = kind.builder(DURABILITY).open(&path).unwrap();
    let head = contents(db.store().as_ref(), "the head");
    for (w, &n) in acked.iter().enumerate() {
        let count = head.get(&count_key(w as u64)).map_or(0, |b| decode_count(b, "the head"));
        assert_eq!(count, n, "{kind:?}: writer {w} acknowledged {n} increments, its count is {count} (lost updates)");
    }
    // And each writer's keys are exactly `0..count`, with their values.
    assert_eq!(problem_in(&head, &mut [0; WRITERS as usize]), None, "{kind:?}: the head");
    assert!(torn_lines.is_empty() && torn == 0 && wrong == 0, "{kind:?}: readers saw:\n{}", torn_lines.join("\n"));
    let problems = db.check_history().unwrap();
    assert!(problems.is_empty(), "{kind:?}: {problems:?}");
    let version = db.open_version(&VersionRef::Tag(TAG.into())).unwrap();
    assert_eq!(hash(&contents(version.store().as_ref(), "the tagged version")), tagged, "{kind:?}: the tagged version");
    drop(version);
    assert!(acked.iter().all(|&n| n > 0), "{kind:?}: a writer committed nothing: {acked:?}");
    assert!(
        tagged_reads > 0 && recent > 0,
        "{kind:?}: the readers read {tagged_reads} tagged and {recent} recent versions"
    );
    assert!(freed > 0, "{kind:?}: the collector freed nothing");

    // Everything but the head and the tagged version goes.
    db.expire(&VersionRef::Branch("main".into())).unwrap();
    db.collect().unwrap();
    let problems = db.check_history().unwrap();
    assert!(problems.is_empty(), "{kind:?}: after the last collection: {problems:?}");
    let log: Vec<_> = db.log().unwrap().into_iter().map(|c| c.id).collect();
    let head_id = tip(&db);
    assert_eq!(log, [head_id, tagged_id], "{kind:?}: the log after the last collection");
    assert_eq!(contents(db.store().as_ref(), "the head"), head, "{kind:?}: the head after the last collection");
    eprintln!(
        "{kind:?}: {} increments acknowledged, {recent} recent versions read ({expired} more expired before they \
         opened) and {tagged_reads} tagged ones, {freed} values freed, in {:.1?}",
        acked.iter().sum::<u64>(),
        started.elapsed()
    );
}

#[test]
fn lmdb_collects_while_processes_write_and_read() {
    run(Kind::Lmdb);
}

#[test]
fn redb_multi_writer_collects_while_processes_write_and_read() {
    run(Kind::RedbMultiWriter);
}
