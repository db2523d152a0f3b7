//! SIGKILL in the middle of a collection (and of an expiry) in a database that keeps history, on
//! redb, LMDB and sled: after every kill the database opens, `check_history` finds nothing wrong,
//! every version at or above the expiry horizon (or tagged) reads exactly what its commit wrote,
//! and every version below an acknowledged horizon that no tag names is refused as expired.
//!
//! Each round the parent, in-process, writes 40–80 durable commits, each setting 2–6 of 40 keys
//! (`k/00`…`k/39`) to values of 1–40 KiB whose length and bytes follow from (round, commit, key),
//! and records what each commit's whole state must hash to: FNV-1a over the keys in order, each
//! followed by the FNV-1a of its value (the parent keeps only those digests, not the values). It
//! tags one to four of the round's commits at random (a commit picked twice is tagged once; some
//! are older than the horizon to come, so they split the expired commits into several runs and a
//! collection into several steps), picks a commit `K` in the second half of the round, and closes
//! the database.
//!
//! The child (`child_entry`, this test binary run again with `ZARRDB_COLLECT_CRASH_DB` set)
//! expires everything older than `K` (`expiring K`, `expired H`) and collects (`collecting`,
//! `collected VERSIONS VALUES`), then loops until killed: one commit setting a key
//! (`commit ID HASH`), an expiry of everything older than the head and a collection, announced
//! and acknowledged the same way. The parent reads the child's lines as they come and kills it
//! at a random moment after a line it chose for the round: most rounds within about the expected
//! duration after `collecting` (the duration of the last such collection it saw end, growing
//! while kills keep landing inside one), some within the last expiry's duration after `expiring`
//! (an expiry is one small commit), some within 100 ms after the first `collected` (the loop). The kill lands during whatever the last line the child
//! printed announced; for a kill during the round's collection the parent also counts the expired
//! commits left in the log, which says whether it came before the first step was committed,
//! between steps, or after the last (before `collected` was printed).
//!
//! After each kill the parent reopens the database and checks every version it knows of (its own
//! commits and those the child acknowledged): tagged or at or above the acknowledged horizon it
//! opens and hashes exactly; below it and untagged it is refused as `Expired`; below a horizon
//! whose expiry was under way it may be either. The next round starts from the head, whatever
//! the child committed, and its child's collection carries on what a cut one left. At the end
//! the parent collects what is left and checks again that the history is whole, every commit
//! left in the log opens, and every tag names its commit; it prints how many kills landed during
//! an expiry and during a collection, and asserts at least a third landed during the round's
//! collection. `ZARRDB_COLLECT_KILLS` sets the rounds per backend (default 17, so over 50 kills
//! in CI across the three).

#[path = "common/history.rs"]
#[expect(dead_code, reason = "the test uses only part of the shared helpers")]
mod history;
#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the workload uses only part of the shared generator")]
mod splitmix;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use history::{backend, child_lines, env_or, fnv, open, open_after_kill, tip, Watched, FNV_START};
use splitmix::SplitMix;
use zarrdb::db::{CommitId, VersionRef};
use zarrdb::{Backend, Database, Store};

const DB_ENV: &str = "ZARRDB_COLLECT_CRASH_DB";
const BACKEND_ENV: &str = "ZARRDB_COLLECT_CRASH_BACKEND";
const KEEP_ENV: &str = "ZARRDB_COLLECT_CRASH_KEEP";
const ROUND_ENV: &str = "ZARRDB_COLLECT_CRASH_ROUND";
/// The keys commits write: `k/00` to `k/39`.
const KEYS: u64 = 40;
/// The child's loop numbers its commits from here, so their values differ from the parent's.
const LOOP: u64 = 1 << 20;

/// A state as its keys and the digests of their values.
type Digests = BTreeMap<String, u64>;

fn kills() -> u64 {
    env_or("ZARRDB_COLLECT_KILLS", 17)
}

/// FNV-1a of one value.
fn digest(value: &[u8]) -> u64 {
    fnv(FNV_START, value)
}

/// FNV-1a over the keys in order, each followed by its value's digest: what a version must hold,
/// in one number.
fn hash(state: &Digests) -> u64 {
    state.iter().fold(FNV_START, |h, (key, d)| {
        let h = fnv(fnv(h, key.as_bytes()), &[0xff]);
        fnv(fnv(h, &d.to_le_bytes()), &[0xfe])
    })
}

/// The digests of everything `store` holds (read whole).
fn digests(store: &dyn Store) -> Digests {
    let keys = store.list_prefix("").unwrap();
    keys.into_iter().map(|k| (k.clone(), digest(&store.get(&k).unwrap().expect("listed keys read")))).collect()
}

/// The value commit `commit` of round `round` writes to `key`: 1–40 KiB, length and bytes
/// following from the three.
fn value(round: u64, commit: u64, key: &str) -> Vec<u8> {
    let mut rng = SplitMix::new(round << 32 | commit, digest(key.as_bytes()));
    let len = rng.range(1024, 40 * 1024) as usize;
    let mut bytes = Vec::with_capacity(len + 8);
    while bytes.len() < len {
        bytes.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    bytes.truncate(len);
    bytes
}

/// The child: expires and collects, then commits, expires and collects until killed,
/// announcing each step and acknowledging it on stdout.
#[test]
fn child_entry() {
    let Ok(path) = std::env::var(DB_ENV) else { return };
    let backend = backend(&std::env::var(BACKEND_ENV).unwrap());
    let keep: CommitId = std::env::var(KEEP_ENV).unwrap().parse().unwrap();
    let round: u64 = std::env::var(ROUND_ENV).unwrap().parse().unwrap();
    let db = open(Path::new(&path), backend);
    let mut state = digests(db.store().as_ref());
    let mut say = child_lines();
    say(format!("expiring {keep}"));
    let horizon = db.expire(&VersionRef::Commit(keep)).unwrap().expect("a horizon");
    say(format!("expired {horizon}"));
    say("collecting".into());
    let freed = db.collect().unwrap();
    say(format!("collected {} {}", freed.versions, freed.values));
    let mut rng = SplitMix::new(round, 0x100);
    for i in LOOP.. {
        let key = format!("k/{:02}", rng.range(0, KEYS - 1));
        let value = value(round, i, &key);
        let txn = db.begin_write().unwrap();
        txn.store().set(&key, &value).unwrap();
        txn.commit_with(&format!("loop {round} {i}"), "child").unwrap();
        state.insert(key, digest(&value));
        let id = tip(&db);
        say(format!("commit {id} {}", hash(&state)));
        // Nothing else commits: the head of main is the commit just made.
        say(format!("expiring {id}"));
        let horizon = db.expire(&VersionRef::Branch("main".into())).unwrap().expect("a horizon");
        say(format!("expired {horizon}"));
        say("collecting".into());
        let freed = db.collect().unwrap();
        say(format!("collected {} {}", freed.versions, freed.values));
    }
}

/// Which line of the child's a round kills it after.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    Expire,
    Collect,
    Loop,
}

/// What the child was doing when killed, by the last line it printed.
#[derive(Default, Debug)]
struct Tally {
    expire: u64,
    /// During the round's collection: before its first step was committed, between steps, after
    /// its last.
    collect: [u64; 3],
    loop_collect: u64,
    elsewhere: u64,
    /// Values the acknowledged collections freed.
    freed: u64,
}

/// A uniformly random duration up to `bound`.
fn up_to(rng: &mut SplitMix, bound: Duration) -> Duration {
    Duration::from_micros(rng.range(0, bound.as_micros() as u64))
}

fn kill_rounds(backend: Backend) {
    let started = Instant::now();
    let name = backend.name();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("c.{name}"));
    drop(open(&path, backend));
    let zero: CommitId = "0000000000000000".parse().unwrap();
    // What each version the parent knows of must hash to.
    let mut known: BTreeMap<CommitId, u64> = BTreeMap::new();
    let mut made_tags: BTreeMap<String, CommitId> = BTreeMap::new();
    // Versions older than `horizon` that no tag names were expired for sure; those older than
    // `maybe` may have been (an expiry was under way at a kill).
    let (mut horizon, mut maybe) = (zero, zero);
    let mut rng = SplitMix::new(0x0c01_1ec7, backend as u64);
    let mut tally = Tally::default();
    // How long the last expiry and the last round's collection that the parent saw end took: the
    // kill comes up to about that long after the announcement.
    let (mut expire_took, mut collect_took) = (Duration::from_millis(5), Duration::from_millis(30));
    for round in 0..kills() {
        let db = open(&path, backend);
        // The head holds whatever the last child committed, acknowledged or not.
        let mut state = digests(db.store().as_ref());
        let commits = rng.range(40, 80);
        let mut ids = Vec::new();
        for c in 0..commits {
            let txn = db.begin_write().unwrap();
            for _ in 0..rng.range(2, 6) {
                let key = format!("k/{:02}", rng.range(0, KEYS - 1));
                let value = value(round, c, &key);
                txn.store().set(&key, &value).unwrap();
                state.insert(key, digest(&value));
            }
            txn.commit_with(&format!("round {round} commit {c}"), "parent").unwrap();
            let id = tip(&db);
            known.insert(id, hash(&state));
            ids.push(id);
        }
        for _ in 0..rng.range(1, 4) {
            let c = rng.range(0, commits - 1);
            let tag = format!("r{round}-c{c}");
            if !made_tags.contains_key(&tag) {
                made_tags.insert(tag.clone(), db.tag(&tag, &VersionRef::Commit(ids[c as usize])).unwrap());
            }
        }
        let keep = ids[rng.range(commits / 2, commits - 1) as usize];
        // The expired commits the child's collection folds away: those older than `keep` that no
        // tag names, this round's and any the last child left.
        let tagged: BTreeSet<CommitId> = db.tags().unwrap().into_iter().map(|(_, id)| id).collect();
        let expired_in_log =
            |db: &Database| db.log().unwrap().iter().filter(|c| c.id < keep && !tagged.contains(&c.id)).count();
        let pending = expired_in_log(&db);
        drop(db);

        let target = match rng.range(0, 9) {
            0 | 1 => Target::Expire,
            9 => Target::Loop,
            _ => Target::Collect,
        };
        let env = [
            (DB_ENV, path.clone().into_os_string()),
            (BACKEND_ENV, name.into()),
            (KEEP_ENV, keep.to_string().into()),
            (ROUND_ENV, round.to_string().into()),
        ];
        let child = Watched::spawn(format!("{name} round {round}"), &dir.path().join("child.err"), env);
        let waiting_for = format!("line to kill after ({target:?})");
        let seen = child.kill_when(Duration::from_secs(120), &waiting_for, |at, line| {
            let trigger = match target {
                Target::Expire => line.starts_with("expiring "),
                Target::Collect => line == "collecting",
                Target::Loop => line.starts_with("collected "),
            };
            let bound = match target {
                Target::Expire => expire_took,
                // A little past the expected end, so some kills land after the last step and the
                // parent sees how long collections take now.
                Target::Collect => collect_took.mul_f64(1.2),
                Target::Loop => Duration::from_millis(100),
            };
            trigger.then(|| at + up_to(&mut rng, bound))
        });

        let (mut expiring, mut collecting, mut first) = (None::<Instant>, None::<Instant>, true);
        for (at, line) in &seen {
            let words: Vec<&str> = line.split(' ').collect();
            match words[..] {
                ["commit", id, h] => {
                    known.insert(id.parse().unwrap(), h.parse().unwrap());
                }
                ["expiring", id] => {
                    maybe = maybe.max(id.parse().unwrap());
                    expiring = Some(*at);
                }
                ["expired", id] => {
                    horizon = horizon.max(id.parse().unwrap());
                    expire_took = at.duration_since(expiring.take().unwrap());
                }
                ["collecting"] => collecting = Some(*at),
                ["collected", _, values] => {
                    tally.freed += values.parse::<u64>().unwrap();
                    let took = at.duration_since(collecting.take().unwrap());
                    if first {
                        collect_took = took.max(Duration::from_millis(1));
                    }
                    first = false;
                }
                // The test harness's own line, the empty one ending it, and a line cut by the kill.
                _ => {}
            }
        }

        let db = open(&path, backend);
        let problems = db.check_history().unwrap();
        assert!(problems.is_empty(), "{name} round {round}: {problems:?}");
        if expiring.is_some() {
            tally.expire += 1;
        } else if collecting.is_some() && first {
            // How far the collection got: the expired commits it left in the log.
            let left = expired_in_log(&db);
            assert!(left <= pending, "{name} round {round}: {left} expired commits in the log, {pending} before");
            tally.collect[if left == pending {
                0
            } else if left > 0 {
                1
            } else {
                2
            }] += 1;
            // Grow the guess while kills land inside: collections grow with the history.
            collect_took = collect_took.mul_f64(1.1);
        } else if collecting.is_some() {
            tally.loop_collect += 1;
        } else {
            tally.elsewhere += 1;
        }
        let tags = db.tags().unwrap();
        let tagged = |id: &CommitId| tags.iter().any(|(_, t)| t == id);
        for (id, want) in &known {
            let what = format!("{name} round {round}: commit {id}");
            let Some(version) = open_after_kill(&db, *id, horizon, maybe, tagged(id), &what) else { continue };
            assert_eq!(hash(&digests(version.store().as_ref())), *want, "{what}");
        }
    }

    // Finish what the last kill left and look at the history once more.
    let db = open(&path, backend);
    let rest = db.collect().unwrap();
    let problems = db.check_history().unwrap();
    assert!(problems.is_empty(), "{name} after the last round: {problems:?}");
    let log = db.log().unwrap();
    for info in &log {
        let version = db.open_version(&VersionRef::Commit(info.id));
        let version = version.unwrap_or_else(|e| panic!("{name}: commit {} left in the log: {e}", info.id));
        if let Some(want) = known.get(&info.id) {
            assert_eq!(hash(&digests(version.store().as_ref())), *want, "{name}: commit {}", info.id);
        }
    }
    for (tag, id) in &made_tags {
        assert_eq!(db.resolve(&VersionRef::Tag(tag.clone())).unwrap().id, *id, "{name}: tag {tag}");
    }
    // Collection freed something: the log holds the tagged commits and the few after the horizon.
    assert!(
        log.len() <= made_tags.len() + known.len() / 4,
        "{name}: {} commits left in the log of {} made",
        log.len(),
        known.len()
    );
    assert!(horizon > zero, "{name}: the children acknowledged no expiry");
    let during_collect: u64 = tally.collect.iter().sum();
    eprintln!(
        "{name}: {} kills in {:.1?}: {} during an expiry, {during_collect} during the round's collection ({} before its \
         first step was committed, {} between steps, {} after its last), {} during a later collection, {} elsewhere; \
         {} values freed by acknowledged collections, {} by the last; {} commits left in the log of {}",
        kills(),
        started.elapsed(),
        tally.expire,
        tally.collect[0],
        tally.collect[1],
        tally.collect[2],
        tally.loop_collect,
        tally.elsewhere,
        tally.freed,
        rest.values,
        log.len(),
        known.len()
    );
    assert!(
        during_collect * 3 >= kills(),
        "{name}: only {during_collect} of {} kills landed during the round's collection",
        kills()
    );
}

#[test]
fn redb_collection_survives_kills() {
    kill_rounds(Backend::Redb);
}

#[test]
fn lmdb_collection_survives_kills() {
    kill_rounds(Backend::Lmdb);
}

#[test]
fn sled_collection_survives_kills() {
    kill_rounds(Backend::Sled);
}
