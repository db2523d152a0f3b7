//! SIGKILL during commits, tags, restores, expiries and collections in a database that keeps
//! history, on redb, LMDB and sled: after every kill the database opens, `check_history` finds
//! nothing wrong (no value a kept version reads is missing, none that no version reads is left),
//! every version the child acknowledged and did not expire reads exactly what the child's model
//! says, every version it acknowledged expiring is refused as expired, every tag it acknowledged
//! names its commit, and `main` is where the last acknowledgement left it, or, when a commit or a
//! restore was in flight, at a new commit on it holding what that commit was to hold. The
//! operation in flight at a kill may or may not have taken effect; no third outcome is accepted.
//!
//! The child (`child_entry`, this test binary run again with `ZARRDB_HISTORY_CRASH_DB` set)
//! starts from the database's latest state and loops: a durable transaction writing a few keys
//! (small and large values, removals), a tag of the newest commit, a restore of the whole
//! hierarchy to a version it made earlier, an expiry of its older versions, or a collection; each
//! of the last four a tenth of the time, so the parent never waits long for one (a collection
//! with nothing expired since the last one comes after an expiry of all but the newest version:
//! one with nothing to free returns before a kill can follow its announcement). Before each
//! operation it prints `begin OP ARG` (`begin commit HASH` and `begin restore HASH`, the hash of
//! the whole state its model says the new commit will hold; `begin tag NAME`; `begin expire ID`,
//! the commit to keep; `begin collect`), and after it an acknowledgement: `commit ID HASH`, `tag
//! NAME ID`, `expired ID` (the horizon), `collected N`.
//!
//! Each round aims at one operation, in turn: the parent reads the child's lines as they come and
//! kills it a random moment after its first to third `begin` of that operation, within a share of
//! the time the last such operation took as the parent saw it (announcement to acknowledgement),
//! so most kills land inside the call. A kill counts as during an operation when the last line
//! the child printed is its `begin`. Each round checks the versions acknowledged in it and a
//! sample of the older ones (the last checks them all), and that every tag is one the child
//! acknowledged or the one in flight, naming the head. The parent prints, per backend, the kills
//! aimed at and landed during each operation, and asserts that at least a third of those aimed at
//! each landed during it, so the test fails if the aiming stops working.
//! `ZARRDB_HISTORY_KILLS` sets the rounds per backend (default 150: 30 aimed at each operation,
//! so over 50 kills during each across the three backends in CI); `ZARRDB_KILLS_RUN` numbers the
//! runs of a campaign of several, each with its own workload and kill moments.

#[path = "common/history.rs"]
#[expect(dead_code, reason = "the test uses only part of the shared helpers")]
mod history;
#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the workload uses only part of the shared generator")]
mod splitmix;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use history::{
    backend, campaign_run, child_lines, contents, env_or, hash, open, open_after_kill, tallies, tip, Aim, Kills, State,
    Watched,
};
use splitmix::SplitMix;
use zarrdb::db::{CommitId, VersionRef};
use zarrdb::{Backend, Database};

const DB_ENV: &str = "ZARRDB_HISTORY_CRASH_DB";
const BACKEND_ENV: &str = "ZARRDB_HISTORY_CRASH_BACKEND";
const SEED_ENV: &str = "ZARRDB_HISTORY_CRASH_SEED";
/// The operations the rounds aim at, in turn.
const OPS: [&str; 5] = ["commit", "tag", "restore", "expire", "collect"];

fn kills() -> u64 {
    env_or("ZARRDB_HISTORY_KILLS", 150)
}

/// The child: commits, tags, restores, expires and collects until killed, announcing each
/// operation and acknowledging it on stdout.
#[test]
fn child_entry() {
    let Ok(path) = std::env::var(DB_ENV) else { return };
    let db = open(Path::new(&path), backend(&std::env::var(BACKEND_ENV).unwrap()));
    let seed: u64 = std::env::var(SEED_ENV).unwrap().parse().unwrap();
    let mut rng = SplitMix::new(seed, 0);
    let mut state = contents(db.begin_read().unwrap().store().as_ref(), "the head");
    let mut made: Vec<(CommitId, State)> = vec![(tip(&db), state.clone())];
    let mut say = child_lines();
    // The horizon of this run's last expiry, and what it was at its last collection.
    let (mut horizon, mut collected) = (None, None);
    for i in 0.. {
        match rng.range(0, 9) {
            0 => {
                let name = format!("s{seed}-{i}");
                say(format!("begin tag {name}"));
                let id = db.tag(&name, &VersionRef::Branch("main".into())).unwrap();
                say(format!("tag {name} {id}"));
            }
            1 => {
                let (id, then) = made[rng.range(0, made.len() as u64 - 1) as usize].clone();
                say(format!("begin restore {}", hash(&then)));
                db.restore("/", &VersionRef::Commit(id)).unwrap();
                state = then;
                let id = tip(&db);
                made.push((id, state.clone()));
                say(format!("commit {id} {}", hash(&state)));
            }
            2 => {
                // Expire part of this run's versions (the earlier rounds' are older still).
                let keep = made[rng.range(0, made.len() as u64 - 1) as usize].0;
                horizon = Some(expire(&db, keep, &mut made, &mut say));
            }
            3 => {
                // A collection with nothing to free returns sooner than a kill can follow its
                // announcement: expire this run's versions first if nothing expired since the
                // last one.
                if horizon == collected {
                    let newest = made.last().unwrap().0;
                    horizon = Some(expire(&db, newest, &mut made, &mut say));
                }
                say("begin collect".into());
                let freed = db.collect().unwrap();
                say(format!("collected {}", freed.values));
                collected = horizon;
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
                // Announced just before the commit itself: a kill while the transaction is
                // being written is no kill during a commit.
                say(format!("begin commit {}", hash(&state)));
                txn.commit_with(&format!("step {i}"), "crash").unwrap();
                let id = tip(&db);
                made.push((id, state.clone()));
                say(format!("commit {id} {}", hash(&state)));
            }
        }
        // A few dozen operations a round, so the history stays small enough to read back.
        std::thread::sleep(Duration::from_millis(3));
    }
}

/// Expire the versions older than `keep` (dropping them from `made`), announced and acknowledged
/// with `say`; the horizon.
fn expire(db: &Database, keep: CommitId, made: &mut Vec<(CommitId, State)>, say: &mut impl FnMut(String)) -> CommitId {
    say(format!("begin expire {keep}"));
    let horizon = db.expire(&VersionRef::Commit(keep)).unwrap().expect("a horizon");
    made.retain(|(id, _)| *id >= horizon);
    say(format!("expired {horizon}"));
    horizon
}

fn kill_rounds(backend: Backend) {
    let started = Instant::now();
    let name = backend.name();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("h.{name}"));
    let zero: CommitId = "0000000000000000".parse().unwrap();
    // Where `main` is: its head when the database was made, then as acknowledgements and checks
    // after kills leave it.
    let mut head = tip(&open(&path, backend));
    let mut commits: BTreeMap<CommitId, u64> = BTreeMap::new();
    let mut tags: BTreeMap<String, CommitId> = BTreeMap::new();
    // Versions older than `horizon` that no tag names were expired for sure; those older than
    // `maybe` may have been (an expiry was under way at a kill).
    let (mut horizon, mut maybe) = (zero, zero);
    let mut rng = SplitMix::new(0xdead ^ campaign_run() << 32, backend as u64);
    // Within the time the operation took, and at most a second, so a round stays short.
    let mut aim = Aim::new(Duration::from_secs(1));
    let mut tally: BTreeMap<&str, Kills> = OPS.iter().map(|op| (*op, Kills::default())).collect();
    // Kills whose last line was no announcement: between operations.
    let mut between = 0u64;
    // Kills in flight that took effect (a new head, a new tag).
    let mut landed_unacked = 0u64;
    for round in 0..kills() {
        // A campaign's progress (more rounds than a run in CI makes), should it be cut short.
        if round > 0 && round % 250 == 0 {
            eprintln!("{name}: {round} kills in {:.1?}; during a {}", started.elapsed(), tallies(&tally));
        }
        let target = OPS[(round % OPS.len() as u64) as usize];
        let nth = rng.range(1, 3);
        let env = [
            (DB_ENV, path.clone().into_os_string()),
            (BACKEND_ENV, name.into()),
            (SEED_ENV, (campaign_run() * 1_000_000_000 + round * 1_000 + backend as u64).to_string().into()),
        ];
        let child = Watched::spawn(format!("{name} round {round}"), &dir.path().join("child.err"), env);
        let mut count = 0;
        let announcement = format!("begin {target}");
        let waiting_for = format!("{nth} announcements of a {target}");
        let lines = child.kill_when(Duration::from_secs(60), &waiting_for, |at, line| {
            if line.split(' ').take(2).eq(announcement.split(' ')) {
                count += 1;
                if count == nth {
                    return Some(at + aim.delay(target, rng.next_u64()));
                }
            }
            None
        });

        // Replay the acknowledgements; what is left in flight is the operation the kill cut.
        let mut flight: Option<(Instant, String, String)> = None;
        let mut fresh = Vec::new();
        for (at, line) in &lines {
            let words: Vec<&str> = line.split(' ').collect();
            if let ["begin", op, rest @ ..] = &words[..] {
                if *op == "expire" {
                    maybe = maybe.max(rest[0].parse().unwrap());
                }
                flight = Some((*at, (*op).to_owned(), rest.join(" ")));
                continue;
            }
            let acked = match words[..] {
                ["commit", id, h] => {
                    let id: CommitId = id.parse().unwrap();
                    commits.insert(id, h.parse().unwrap());
                    fresh.push(id);
                    head = id;
                    true
                }
                ["tag", tag, id] => {
                    tags.insert(tag.to_owned(), id.parse().unwrap());
                    true
                }
                ["expired", id] => {
                    horizon = horizon.max(id.parse().unwrap());
                    true
                }
                ["collected", _] => true,
                // The test harness's own line and the empty one ending it.
                _ => false,
            };
            if acked {
                let (began, op, _) =
                    flight.take().unwrap_or_else(|| panic!("{name} round {round}: {line} unannounced"));
                aim.took(&op, at.duration_since(began));
            }
        }
        let during = flight.as_ref().map(|(_, op, _)| op.as_str());
        aim.landed(target, during == Some(target));
        let aimed = tally.get_mut(target).unwrap();
        aimed.aimed += 1;
        aimed.landed += u64::from(during == Some(target));
        match during {
            Some(op) => tally.get_mut(op).unwrap_or_else(|| panic!("{name} round {round}: begin {op}?")).during += 1,
            None => between += 1,
        }

        let db = open(&path, backend);
        let problems = db.check_history().unwrap();
        assert!(problems.is_empty(), "{name} round {round}: {problems:?}");
        // `main` moved only if a commit or a restore was in flight, and then to a new commit on
        // the acknowledged head holding what the child's model said.
        let now = tip(&db);
        if now != head {
            let what = format!("{name} round {round}: main at {now}, acknowledged at {head}, {flight:?} in flight");
            let Some((_, "commit" | "restore", want)) = flight.as_ref().map(|(at, op, arg)| (at, op.as_str(), arg))
            else {
                panic!("{what}");
            };
            let info = &db.log().unwrap()[0];
            assert_eq!((info.id, info.parent), (now, Some(head)), "{what}: not a commit on the acknowledged head");
            let version = db.open_version(&VersionRef::Commit(now)).unwrap_or_else(|e| panic!("{what}: {e}"));
            let held = hash(&contents(version.store().as_ref(), &what));
            assert_eq!(held.to_string(), *want, "{what}: the new commit's contents");
            commits.insert(now, held);
            head = now;
            landed_unacked += 1;
        }
        // Every tag is one the child acknowledged, naming its commit, or the one in flight,
        // naming the head (a tag made just before the kill protects its commit though it was
        // never acknowledged).
        let made_tags = db.tags().unwrap();
        for (tag, id) in &made_tags {
            let what = format!("{name} round {round}: tag {tag} at {id}");
            match tags.get(tag) {
                Some(acked) => assert_eq!(id, acked, "{what}: acknowledged at {acked}"),
                None => {
                    assert!(
                        matches!(&flight, Some((_, op, arg)) if op == "tag" && arg == tag),
                        "{what}: never made ({flight:?} in flight)"
                    );
                    assert_eq!(*id, head, "{what}: made at the head");
                    tags.insert(tag.clone(), *id);
                    landed_unacked += 1;
                }
            }
        }
        for (tag, id) in &tags {
            assert_eq!(db.resolve(&VersionRef::Tag(tag.clone())).unwrap().id, *id, "{name} round {round}: tag {tag}");
        }
        // The versions acknowledged this round, and a sample of the older ones.
        let tagged = |id: &CommitId| made_tags.iter().any(|(_, t)| t == id);
        let older: Vec<CommitId> = commits.keys().copied().collect();
        let sample =
            (0..if older.is_empty() { 0 } else { 16 }).map(|_| older[rng.range(0, older.len() as u64 - 1) as usize]);
        for id in fresh.into_iter().chain(sample) {
            let what = format!("{name} round {round}: commit {id}");
            let Some(version) = open_after_kill(&db, id, horizon, maybe, tagged(&id), &what) else { continue };
            assert_eq!(hash(&contents(version.store().as_ref(), &what)), commits[&id], "{what}");
        }
    }

    // Every version ever acknowledged, once more, after the last kill.
    let db = open(&path, backend);
    let made_tags = db.tags().unwrap();
    let tagged = |id: &CommitId| made_tags.iter().any(|(_, t)| t == id);
    for (id, want) in &commits {
        let what = format!("{name} at the end: commit {id}");
        let Some(version) = open_after_kill(&db, *id, horizon, maybe, tagged(id), &what) else { continue };
        assert_eq!(hash(&contents(version.store().as_ref(), &what)), *want, "{what}");
    }
    assert!(commits.len() as u64 > kills(), "{name}: the children acknowledged {} commits", commits.len());
    assert!(horizon > zero, "{name}: the children expired nothing");
    eprintln!(
        "{name}: {} kills in {:.1?}; during a {}; {between} between operations; {landed_unacked} in flight took \
         effect; {} commits, {} tags acknowledged",
        kills(),
        started.elapsed(),
        tallies(&tally),
        commits.len(),
        tags.len()
    );
    for (op, t) in &tally {
        assert!(
            t.landed * 3 >= t.aimed,
            "{name}: only {} of {} kills aimed at a {op} landed during one",
            t.landed,
            t.aimed
        );
    }
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
