//! Two branches committed to by processes at once, while others read old versions and one expires
//! and collects, on LMDB and on redb in multi-writer mode: no update is lost on either branch, no
//! reader sees a torn version or one branch's keys on the other, a tagged version stays exact, the
//! collector frees values, and the branch merges cleanly into `main` afterwards.
//!
//! The parent creates the database with history on and commits `base/0`…`base/7` (4 KiB each)
//! three times over, tagging the second version (`before-writers`, kept only by the tag since the
//! third overwrites every value) and recording the hash of what it holds (FNV-1a over its keys and
//! values in order). It then makes branch `dev` at `main`'s head and starts nine children of this
//! test binary (`child_entry`, chosen by environment variables), each printing acknowledgements on
//! stdout:
//!
//! - four writers on `main` and two on `dev` (through `Database::on_branch`), each looping over
//!   durable transactions: read `<p>/<w>/count` (a u64, little-endian, absent = 0), write it plus
//!   one, and set `<p>/<w>/<count>` to a 4 KiB value that follows from (branch, w, count); after
//!   each commit it prints `acked N`. The prefix `p` is `m` on `main` and `d` on `dev`, so each
//!   branch's keys must never show on the other, and since no one else writes a writer's keys the
//!   count it reads must be the number it acknowledged before (anything else is a lost update or a
//!   commit landing on the wrong branch).
//! - two readers, each looping: open the tagged version and check its hash; then for `main` and
//!   for `dev`, resolve the head and open that commit by id right away, read it whole and check
//!   that it holds `base/*` with the parent's last values and only its own branch's writers' keys,
//!   that each writer's count equals the number of its value keys, which are exactly `0..count`
//!   with their values, and that no count is lower than in the version of that branch read before
//!   (a torn or stale read breaks one of these). The collector may expire a `main` commit between
//!   the resolve and the open: `Expired` is counted, not a failure. A `dev` commit is kept by its
//!   branch whatever `main`'s horizon, so `Expired` there is a failure.
//! - one collector, looping: `expire(main)` and `collect()`, printing `collected VERSIONS VALUES
//!   BYTES` after each, with a 10 ms pause between rounds so a recent `main` version is sometimes
//!   still there when a reader opens it. It frees the `main` writers' superseded counts and the
//!   parent's first `base/*` values; what `dev` reaches stays.
//!
//! After `ZARRDB_BRANCH_PROCESSES_SECS` (default 6) the parent creates a stop file; each child
//! finishes what it is doing, prints a summary and exits. The parent then checks that every child
//! exited successfully, that each branch's head holds each of its writers' count as the number of
//! increments acknowledged, with exactly those keys, and none of the other branch's, that no
//! reader saw a torn, foreign or wrong tagged version, that `check_history` finds nothing wrong,
//! that the tagged version is exact and that the collector freed values. Last it merges `dev` into
//! `main` (a merge commit: the two changed disjoint keys), checks that `main` then holds exactly
//! both sides' keys and `dev` is unchanged, and expires and collects once more: `check_history`
//! stays clean and both heads keep what they held. Every wait is bounded; children still running
//! when the parent fails are killed.

#[path = "common/history.rs"]
#[expect(dead_code, reason = "the test uses only part of the shared helpers")]
mod history;
#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the workload uses only part of the shared generator")]
mod splitmix;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use history::{contents, env_or, hash, numbers, Kind, Proc, Procs, State};
use splitmix::SplitMix;
use zarrdb::db::{MergeOutcome, VersionRef};
use zarrdb::error::HistoryError;
use zarrdb::{Database, Durability, Error};

/// The keys the parent writes before the children start: `base/0` to `base/7`.
const BASE: u64 = 8;
const READERS: u64 = 2;
const TAG: &str = "before-writers";
const DEV: &str = "dev";
const ROLE_ENV: &str = "ZARRDB_BRANCH_PROCS_ROLE";
const INDEX_ENV: &str = "ZARRDB_BRANCH_PROCS_INDEX";
const DB_ENV: &str = "ZARRDB_BRANCH_PROCS_DB";
const KIND_ENV: &str = "ZARRDB_BRANCH_PROCS_KIND";
const STOP_ENV: &str = "ZARRDB_BRANCH_PROCS_STOP";
const TAGGED_ENV: &str = "ZARRDB_BRANCH_PROCS_TAGGED";
/// Durable commits on LMDB too ([`Kind::builder`]; redb's multi-writer mode always makes them so).
const DURABILITY: Durability = Durability::Durable;

/// The writers of one branch: how many, the prefix of their keys and the first value stream.
struct Side {
    branch: &'static str,
    prefix: &'static str,
    writers: u64,
    /// Writer `w` of this side writes value stream `stream + w` (the parent's are 100 and up).
    stream: u64,
}

const MAIN_SIDE: Side = Side { branch: "main", prefix: "m", writers: 4, stream: 0 };
const DEV_SIDE: Side = Side { branch: DEV, prefix: "d", writers: 2, stream: 10 };
const SIDES: [&Side; 2] = [&MAIN_SIDE, &DEV_SIDE];

impl Side {
    fn role(&self) -> String {
        format!("{}-writer", self.branch)
    }

    fn count_key(&self, w: u64) -> String {
        format!("{}/{w}/count", self.prefix)
    }

    fn value(&self, w: u64, n: u64) -> Vec<u8> {
        chunk(self.stream + w, n)
    }
}

/// How long the children run.
fn run_time() -> Duration {
    Duration::from_secs_f64(env_or("ZARRDB_BRANCH_PROCESSES_SECS", 6.0))
}

/// The 4 KiB value stream `stream` writes as its `n`-th.
fn chunk(stream: u64, n: u64) -> Vec<u8> {
    let mut rng = SplitMix::new(stream, n);
    (0..512).flat_map(|_| rng.next_u64().to_le_bytes()).collect()
}

fn decode_count(bytes: &[u8], what: &str) -> u64 {
    u64::from_le_bytes(bytes.try_into().unwrap_or_else(|_| panic!("{what}: a count of {} bytes", bytes.len())))
}

/// A writer process on `side`'s branch (`db`: a handle on it): increments until `stop` exists,
/// acknowledging each.
fn writer(db: &Database, side: &Side, w: u64, stop: &Path) {
    let mut acked = 0;
    while !stop.exists() {
        let what = format!("{} writer {w}, increment {acked}", side.branch);
        let txn = db.begin_write().unwrap_or_else(|e| panic!("{what}: begin_write: {e}"));
        let store = txn.store();
        let read = store.get(&side.count_key(w)).unwrap_or_else(|e| panic!("{what}: reading the count: {e}"));
        let count = read.map_or(0, |b| decode_count(&b, &what));
        // Only this process writes its keys, and only on this branch: anything but its own last
        // count is a lost update or a commit that went to the other branch.
        assert_eq!(count, acked, "{what}: read count {count}");
        store.set(&side.count_key(w), &(count + 1).to_le_bytes()).unwrap_or_else(|e| panic!("{what}: set: {e}"));
        let key = format!("{}/{w}/{count}", side.prefix);
        store.set(&key, &side.value(w, count)).unwrap_or_else(|e| panic!("{what}: set: {e}"));
        drop(store);
        let message = format!("{}{w} {count}", side.prefix);
        txn.commit_with(&message, "writer").unwrap_or_else(|e| panic!("{what}: commit: {e}"));
        acked += 1;
        println!("acked {acked}");
    }
    println!("WRITER {} {w}: {acked} increments", side.branch);
}

/// Each side's writers' counts, by side (as in [`SIDES`]) and writer.
type Counts = Vec<Vec<u64>>;

fn no_counts() -> Counts {
    SIDES.iter().map(|s| vec![0; s.writers as usize]).collect()
}

/// What is wrong with `state`, a version that holds the keys of the writers of `sides` (of
/// [`SIDES`]) and no others (`None`: nothing), given the counts of the version read before.
fn problem_in(state: &State, sides: &[usize], last: &mut Counts) -> Option<String> {
    let mut keys: Vec<Vec<Vec<u64>>> = SIDES.iter().map(|s| vec![Vec::new(); s.writers as usize]).collect();
    let mut counts = no_counts();
    for (key, value) in state {
        let parts: Vec<&str> = key.split('/').collect();
        if let ["base", i] = parts[..] {
            match i.parse::<u64>() {
                Ok(i) if i < BASE && *value == chunk(102, i) => continue,
                _ => return Some(format!("{key} is not one of the parent's last values")),
            }
        }
        let [p, w, n] = parts[..] else { return Some(format!("a key no process writes: {key}")) };
        let side = sides.iter().copied().find(|&s| SIDES[s].prefix == p);
        let w = w.parse::<u64>().ok();
        let (Some(s), Some(w)) = (side, w.filter(|&w| side.is_some_and(|s| w < SIDES[s].writers))) else {
            // The other branch's writers' keys among them.
            return Some(format!("a key that does not belong in this version: {key}"));
        };
        if n == "count" {
            counts[s][w as usize] = decode_count(value, key);
        } else {
            let Ok(n) = n.parse::<u64>() else { return Some(format!("a key no writer writes: {key}")) };
            if *value != SIDES[s].value(w, n) {
                return Some(format!("{key} does not hold its value"));
            }
            keys[s][w as usize].push(n);
        }
    }
    for &s in sides {
        for w in 0..SIDES[s].writers as usize {
            let branch = SIDES[s].branch;
            keys[s][w].sort_unstable();
            if keys[s][w] != (0..counts[s][w]).collect::<Vec<_>>() {
                let (count, n, first) = (counts[s][w], keys[s][w].len(), keys[s][w].first());
                return Some(format!("{branch} writer {w}: count {count}, {n} keys ({first:?}…)"));
            }
            if counts[s][w] < last[s][w] {
                return Some(format!("{branch} writer {w}: count {} after {} earlier", counts[s][w], last[s][w]));
            }
        }
    }
    *last = counts;
    None
}

/// A reader's tallies for one branch's heads.
#[derive(Default)]
struct Tally {
    reads: u64,
    expired: u64,
    torn: u64,
}

/// Open the commit `side`'s branch points at now by id and read it whole, checking it against
/// `last` (the counts of the version of that branch read before).
fn read_head(db: &Database, r: u64, s: usize, last: &mut Counts, tally: &mut Tally) {
    let branch = SIDES[s].branch;
    let head = db.resolve(&VersionRef::Branch(branch.into()));
    let id = head.unwrap_or_else(|e| panic!("reader {r}: {branch}: {e}")).id;
    let what = format!("reader {r}, {branch} commit {id}");
    match db.open_version(&VersionRef::Commit(id)) {
        // The collector expired it between the resolve and the open.
        Err(Error::History(HistoryError::Expired { .. })) => tally.expired += 1,
        Err(e) => panic!("{what}: {e}"),
        Ok(version) => {
            let state = contents(version.store().as_ref(), &what);
            drop(version);
            tally.reads += 1;
            if let Some(problem) = problem_in(&state, &[s], last) {
                tally.torn += 1;
                println!("torn {what}: {problem}");
            }
        }
    }
}

/// A reader process: until `stop` exists, the tagged version and each branch's head, read whole.
fn reader(db: &Database, r: u64, stop: &Path, tagged: u64) {
    let (mut tagged_reads, mut wrong) = (0u64, 0u64);
    let mut tallies = [Tally::default(), Tally::default()];
    // Per branch: counts of the version of that branch read before (only its own side's are set).
    let mut last = [no_counts(), no_counts()];
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
        for s in 0..SIDES.len() {
            read_head(db, r, s, &mut last[s], &mut tallies[s]);
        }
    }
    let [m, d] = &tallies;
    println!(
        "READER {r}: {tagged_reads} tagged reads, {wrong} wrong, {} main reads, {} main expired, {} main torn, \
         {} dev reads, {} dev expired, {} dev torn. Last counts: main {:?}, dev {:?}",
        m.reads, m.expired, m.torn, d.reads, d.expired, d.torn, last[0][0], last[1][1]
    );
}

/// The collector process: expire all but `main`'s head (and what the tag and `dev` keep) and
/// collect, until `stop` exists.
fn collector(db: &Database, stop: &Path) {
    let (mut rounds, mut versions, mut values, mut bytes) = (0u64, 0u64, 0u64, 0u64);
    while !stop.exists() {
        db.expire(&VersionRef::Branch("main".into()))
            .unwrap_or_else(|e| panic!("collector, round {rounds}: expire: {e}"));
        let freed = db.collect().unwrap_or_else(|e| panic!("collector, round {rounds}: collect: {e}"));
        println!("collected {} {} {}", freed.versions, freed.values, freed.bytes);
        (rounds, versions, values, bytes) =
            (rounds + 1, versions + freed.versions, values + freed.values, bytes + freed.bytes);
        // A pause, so a reader's recent `main` version is sometimes still there when it opens it.
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
    let role = role.into_string().unwrap();
    let index: u64 = std::env::var(INDEX_ENV).unwrap().parse().unwrap();
    let kind = Kind::from_name(&std::env::var(KIND_ENV).unwrap());
    let stop = PathBuf::from(std::env::var_os(STOP_ENV).unwrap());
    let db = kind.builder(DURABILITY).open(PathBuf::from(path)).unwrap_or_else(|e| panic!("{role} {index}: open: {e}"));
    if let Some(side) = SIDES.iter().find(|s| s.role() == role) {
        // `main`'s writers commit through the database itself, `dev`'s through a handle on it.
        let on = match side.branch {
            "main" => db,
            branch => db.on_branch(branch).unwrap_or_else(|e| panic!("{role} {index}: on_branch: {e}")),
        };
        return writer(&on, side, index, &stop);
    }
    match role.as_str() {
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

/// Check that the head of `side`'s branch holds each of its writers' count as `acked` says, with
/// exactly their keys and the parent's `base/*` (and none of the other side's keys).
#[track_caller]
fn check_head(kind: Kind, head: &State, s: usize, acked: &[u64]) {
    let side = SIDES[s];
    for (w, &n) in acked.iter().enumerate() {
        let count = head.get(&side.count_key(w as u64)).map_or(0, |b| decode_count(b, "a head"));
        assert_eq!(
            count, n,
            "{kind:?}: {} writer {w} acknowledged {n} increments, its count is {count} (lost updates)",
            side.branch
        );
    }
    assert_eq!(problem_in(head, &[s], &mut no_counts()), None, "{kind:?}: the head of {}", side.branch);
}

fn run(kind: Kind) {
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let tagged = {
        let db = kind.builder(DURABILITY).create(&path).unwrap();
        let mut tagged = None;
        for round in 0..3 {
            let txn = db.begin_write().unwrap();
            for i in 0..BASE {
                txn.store().set(&format!("base/{i}"), &chunk(100 + round, i)).unwrap();
            }
            txn.commit_with(&format!("base {round}"), "parent").unwrap();
            if round == 1 {
                db.tag(TAG, &VersionRef::Branch("main".into())).unwrap();
                tagged = Some(hash(&contents(db.store().as_ref(), "the tagged head")));
            }
        }
        db.create_branch(DEV, &VersionRef::Branch("main".into())).unwrap();
        tagged.unwrap()
    };

    // Readers and the collector first, so they run while the writers commit.
    let mut procs = Procs(Vec::new());
    for r in 0..READERS {
        procs.0.push(spawn(kind, dir.path(), "reader", r, tagged));
    }
    procs.0.push(spawn(kind, dir.path(), "collector", 0, tagged));
    for side in SIDES {
        for w in 0..side.writers {
            procs.0.push(spawn(kind, dir.path(), &side.role(), w, tagged));
        }
    }
    let stop_at = Instant::now() + run_time();
    while Instant::now() < stop_at {
        procs.check();
        std::thread::sleep(Duration::from_millis(50));
    }
    File::create(dir.path().join("stop")).unwrap();
    // Generous, only there so nothing hangs.
    procs.wait("", Instant::now() + Duration::from_secs(120));

    let mut acked: Counts = no_counts();
    let (mut bad_lines, mut tagged_reads, mut wrong) = (Vec::new(), 0, 0);
    // Per branch: versions read whole, refused as expired, and torn.
    let (mut reads, mut expired, mut torn) = ([0; 2], [0; 2], [0; 2]);
    let mut freed = 0;
    for proc in &procs.0 {
        let out = proc.stdout();
        let (role, index) = proc.name.split_once(' ').unwrap();
        if let Some(s) = SIDES.iter().position(|side| side.role() == role) {
            let last = out.lines().filter_map(|l| l.strip_prefix("acked ")).next_back();
            acked[s][index.parse::<usize>().unwrap()] = last.map_or(0, |n| n.parse().unwrap());
            eprintln!("{kind:?}: {}", proc.summary("WRITER "));
        } else if role == "reader" {
            let summary = proc.summary("READER ");
            let n = numbers(&summary);
            tagged_reads += n[1];
            wrong += n[2];
            for s in 0..2 {
                reads[s] += n[3 + 3 * s];
                expired[s] += n[4 + 3 * s];
                torn[s] += n[5 + 3 * s];
            }
            bad_lines
                .extend(out.lines().filter(|l| l.starts_with("torn ") || l.starts_with("wrong ")).map(String::from));
            eprintln!("{kind:?}: {summary}");
        } else {
            let summary = proc.summary("COLLECTOR: ");
            freed = numbers(&summary)[2];
            eprintln!("{kind:?}: {summary}");
        }
    }

    let db = kind.builder(DURABILITY).open(&path).unwrap();
    let dev = db.on_branch(DEV).unwrap();
    let main_head = contents(db.store().as_ref(), "the head of main");
    let dev_head = contents(dev.store().as_ref(), "the head of dev");
    check_head(kind, &main_head, 0, &acked[0]);
    check_head(kind, &dev_head, 1, &acked[1]);
    assert!(
        bad_lines.is_empty() && torn == [0, 0] && wrong == 0,
        "{kind:?}: readers saw {torn:?} torn versions (main, dev), {wrong} wrong tagged ones:\n{}",
        bad_lines.join("\n")
    );
    // `dev`'s commits are all reachable from the branch: `main`'s horizon never expires them.
    assert_eq!(expired[1], 0, "{kind:?}: readers found {} heads of dev expired", expired[1]);
    let problems = db.check_history().unwrap();
    assert!(problems.is_empty(), "{kind:?}: {problems:?}");
    let version = db.open_version(&VersionRef::Tag(TAG.into())).unwrap();
    assert_eq!(hash(&contents(version.store().as_ref(), "the tagged version")), tagged, "{kind:?}: the tagged version");
    drop(version);
    assert!(acked.iter().flatten().all(|&n| n > 0), "{kind:?}: a writer committed nothing: {acked:?}");
    assert!(
        tagged_reads > 0 && reads.iter().all(|&n| n > 0),
        "{kind:?}: the readers read {tagged_reads} tagged versions and {reads:?} heads (main, dev)"
    );
    assert!(freed > 0, "{kind:?}: the collector freed nothing");

    // Both sides changed disjoint keys since `dev` was made: a merge commit, with no conflict.
    let merged = db.merge(&VersionRef::Branch(DEV.into()), "main", "merge dev").unwrap();
    assert!(matches!(merged, MergeOutcome::Merged(_)), "{kind:?}: merging dev: {merged:?}");
    let mut both = main_head.clone();
    both.extend(dev_head.clone());
    let after = contents(db.store().as_ref(), "main after the merge");
    assert_eq!(problem_in(&after, &[0, 1], &mut no_counts()), None, "{kind:?}: main after the merge");
    assert!(after == both, "{kind:?}: main after the merge does not hold exactly both heads' keys");
    assert!(contents(dev.store().as_ref(), "dev after the merge") == dev_head, "{kind:?}: dev changed in the merge");
    let problems = db.check_history().unwrap();
    assert!(problems.is_empty(), "{kind:?}: after the merge: {problems:?}");

    // Collecting everything `main`'s new head and the refs do not keep leaves both heads whole.
    db.expire(&VersionRef::Branch("main".into())).unwrap();
    db.collect().unwrap();
    let problems = db.check_history().unwrap();
    assert!(problems.is_empty(), "{kind:?}: after the last collection: {problems:?}");
    assert!(contents(db.store().as_ref(), "main, collected") == both, "{kind:?}: main after the last collection");
    assert!(contents(dev.store().as_ref(), "dev, collected") == dev_head, "{kind:?}: dev after the last collection");
    let version = db.open_version(&VersionRef::Tag(TAG.into())).unwrap();
    assert_eq!(hash(&contents(version.store().as_ref(), "the tag, collected")), tagged, "{kind:?}: the tag at last");
    drop(version);

    let sums: Vec<u64> = acked.iter().map(|a| a.iter().sum()).collect();
    eprintln!(
        "{kind:?}: {} increments acknowledged on main, {} on dev ({acked:?}); {} main and {} dev heads read \
         ({} more main ones expired before they opened), {tagged_reads} tagged ones; {freed} values freed; in {:.1?}",
        sums[0],
        sums[1],
        reads[0],
        reads[1],
        expired[0],
        started.elapsed()
    );
}

#[test]
fn lmdb_two_branches_commit_while_processes_read_and_collect() {
    run(Kind::Lmdb);
}

#[test]
fn redb_multi_writer_two_branches_commit_while_processes_read_and_collect() {
    run(Kind::RedbMultiWriter);
}
