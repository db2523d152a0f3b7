//! SIGKILL while a process commits, tags, restores, expires and collects in a database that keeps
//! history, on redb, LMDB and sled: after every kill the database opens, `check_history` finds
//! nothing wrong (no value a kept version reads is missing, none that no version reads is left),
//! every version the child acknowledged and did not expire reads exactly what the child's model
//! says, every version it acknowledged expiring is refused as expired, and every tag it
//! acknowledged names its commit.
//!
//! The child (`child_entry`, this test binary run again with `ZARRDB_HISTORY_CRASH_DB` set)
//! starts from the database's latest state and loops: a durable transaction writing a few keys
//! (small and large values, removals), sometimes a tag of the newest commit, sometimes a restore of
//! the whole hierarchy to a version it made earlier, sometimes an expiry of its older versions or a
//! collection. After each it prints an acknowledgement line: `commit ID HASH` (the hash of the
//! whole state it expects that commit to hold), `tag NAME ID`, `expired ID`, `collected N`; before
//! an expiry or a collection it prints `expiring ID` or `collecting`, so the parent knows one was
//! under way at the kill.
//! The parent kills it at a random moment, reads the lines it printed, and checks the last
//! versions acknowledged and a sample of all since the first round, and every tag. `ZARRDB_HISTORY_KILLS` sets the rounds per backend (default 17, so
//! over 50 kills in CI across the three).

#[path = "common/history.rs"]
#[expect(dead_code, reason = "the test uses only part of the shared helpers")]
mod history;
#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the workload uses only part of the shared generator")]
mod splitmix;

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use history::{backend, child_command, contents, env_or, hash, open, open_after_kill, tip, State};
use splitmix::SplitMix;
use zarrdb::db::{CommitId, VersionRef};
use zarrdb::Backend;

const DB_ENV: &str = "ZARRDB_HISTORY_CRASH_DB";
const BACKEND_ENV: &str = "ZARRDB_HISTORY_CRASH_BACKEND";
const SEED_ENV: &str = "ZARRDB_HISTORY_CRASH_SEED";

fn kills() -> u64 {
    env_or("ZARRDB_HISTORY_KILLS", 17)
}

/// The child: commits, tags and restores until killed, acknowledging each on stdout.
#[test]
fn child_entry() {
    let Ok(path) = std::env::var(DB_ENV) else { return };
    let db = open(Path::new(&path), backend(&std::env::var(BACKEND_ENV).unwrap()));
    let seed: u64 = std::env::var(SEED_ENV).unwrap().parse().unwrap();
    let mut rng = SplitMix::new(seed, 0);
    let mut state = contents(db.begin_read().unwrap().store().as_ref(), "the head");
    let mut made: Vec<(CommitId, State)> = vec![(tip(&db), state.clone())];
    let mut out = std::io::stdout().lock();
    // The test harness has printed the start of a line ("test child_entry ... "): end it, so the
    // first acknowledgement has a line of its own.
    writeln!(out).unwrap();
    for i in 0.. {
        match rng.range(0, 10) {
            2 if rng.range(0, 1) == 0 => {
                // Expire part of this run's versions (the earlier rounds' are older still).
                let keep = made[rng.range(0, made.len() as u64 - 1) as usize].0;
                writeln!(out, "expiring {keep}").unwrap();
                out.flush().unwrap();
                let horizon = db.expire(&VersionRef::Commit(keep)).unwrap().expect("a horizon");
                made.retain(|(id, _)| *id >= horizon);
                writeln!(out, "expired {horizon}").unwrap();
            }
            2 => {
                writeln!(out, "collecting").unwrap();
                out.flush().unwrap();
                let freed = db.collect().unwrap();
                writeln!(out, "collected {}", freed.values).unwrap();
            }
            0 => {
                let name = format!("s{seed}-{i}");
                let id = db.tag(&name, &VersionRef::Branch("main".into())).unwrap();
                writeln!(out, "tag {name} {id}").unwrap();
            }
            1 => {
                let (id, then) = made[rng.range(0, made.len() as u64 - 1) as usize].clone();
                db.restore("/", &VersionRef::Commit(id)).unwrap();
                state = then;
                writeln!(out, "commit {} {}", tip(&db), hash(&state)).unwrap();
            }
            _ => {
                let txn = db.begin_write().unwrap();
                for _ in 0..rng.range(1, 4) {
                    let key = format!("k/{}", rng.range(0, 9));
                    if rng.range(0, 4) == 0 {
                        txn.store().erase(&key).unwrap();
                        state.remove(&key);
                    } else {
                        let len = if rng.range(0, 3) == 0 { 6_000 + rng.range(0, 30_000) } else { rng.range(1, 3_000) };
                        let value: Vec<u8> = (0..len).map(|j| (j as u8).wrapping_mul(31) ^ (i as u8)).collect();
                        txn.store().set(&key, &value).unwrap();
                        state.insert(key, value);
                    }
                }
                txn.commit_with(&format!("step {i}"), "crash").unwrap();
                let id = tip(&db);
                made.push((id, state.clone()));
                writeln!(out, "commit {id} {}", hash(&state)).unwrap();
            }
        }
        out.flush().unwrap();
        // A few dozen commits a round, so the history stays small enough to read back whole.
        std::thread::sleep(Duration::from_millis(3));
    }
}

fn kill_rounds(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("h.{}", backend.name()));
    drop(open(&path, backend));
    let mut commits: BTreeMap<CommitId, u64> = BTreeMap::new();
    let mut tags: BTreeMap<String, CommitId> = BTreeMap::new();
    // Versions older than `horizon` that no tag names were expired for sure; those older than
    // `maybe` may have been (an expiry was under way at a kill).
    let (mut horizon, mut maybe) =
        ("0000000000000000".parse::<CommitId>().unwrap(), "0000000000000000".parse::<CommitId>().unwrap());
    let mut in_flight = (0, 0, 0);
    let mut rng = SplitMix::new(0xdead, backend as u64);
    for round in 0..kills() {
        let mut child = child_command()
            .env(DB_ENV, &path)
            .env(BACKEND_ENV, backend.name())
            .env(SEED_ENV, (round * 1_000 + backend as u64).to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(rng.range(60, 400)));
        // SIGKILL: no destructor, no flush of anything but what was already written.
        child.kill().unwrap();
        child.wait().unwrap();
        let lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let mut fresh = Vec::new();
        for line in lines.map_while(Result::ok) {
            let words: Vec<&str> = line.split(' ').collect();
            match words[..] {
                ["commit", id, h] => {
                    let id: CommitId = id.parse().unwrap();
                    commits.insert(id, h.parse().unwrap());
                    fresh.push(id);
                }
                ["tag", name, id] => {
                    tags.insert(name.to_owned(), id.parse().unwrap());
                }
                ["expiring", id] => {
                    maybe = maybe.max(id.parse().unwrap());
                    in_flight.0 += 1;
                }
                ["expired", id] => {
                    horizon = horizon.max(id.parse().unwrap());
                    in_flight.0 -= 1;
                }
                ["collecting"] => in_flight.1 += 1,
                ["collected", _] => in_flight.1 -= 1,
                // The test harness's own lines, and a line cut by the kill.
                _ => {}
            }
        }
        let db = open(&path, backend);
        let problems = db.check_history().unwrap();
        assert!(problems.is_empty(), "{} round {round}: {problems:?}", backend.name());
        // A tag made just before the kill protects its commit though it was never acknowledged.
        let made_tags = db.tags().unwrap();
        let tagged = |id: &CommitId| made_tags.iter().any(|(_, t)| t == id);
        for (id, want) in &commits {
            let what = format!("{} round {round}: commit {id}", backend.name());
            let Some(version) = open_after_kill(&db, *id, horizon, maybe, tagged(id), &what) else { continue };
            assert_eq!(hash(&contents(version.store().as_ref(), &what)), *want, "{what}");
        }
        for (name, id) in &tags {
            assert_eq!(
                db.resolve(&VersionRef::Tag(name.clone())).unwrap().id,
                *id,
                "{} round {round}: tag {name}",
                backend.name()
            );
        }
    }
    assert!(commits.len() as u64 > kills(), "{}: the children acknowledged {} commits", backend.name(), commits.len());
    assert!(
        horizon > "0000000000000000".parse::<CommitId>().unwrap(),
        "{}: the children expired nothing",
        backend.name()
    );
    // How many kills landed inside an expiry and inside a collection (the expiry is one small
    // commit, so kills seldom do).
    eprintln!(
        "{}: {} kills, {} during an expiry, {} during a collection",
        backend.name(),
        kills(),
        in_flight.0,
        in_flight.1
    );
}

#[test]
fn redb_keeps_every_acknowledged_version() {
    kill_rounds(Backend::Redb);
}

#[test]
fn lmdb_keeps_every_acknowledged_version() {
    kill_rounds(Backend::Lmdb);
}

#[test]
fn sled_keeps_every_acknowledged_version() {
    kill_rounds(Backend::Sled);
}
