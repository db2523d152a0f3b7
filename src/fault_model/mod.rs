//! Model-based fault injection (hardening issue, acceptance 4). Random sequences of transactions
//! — create, write, resize, erase and rename arrays, commit or abort, close and reopen — run on a
//! redb database, its commit log on (durable mode), over a simulated disk (`disk.rs`) that fails
//! at a random call. Then the disk
//! "crashes" (what was synced, plus any part of what was not, some writes torn) and the database
//! is reopened from that image. It must open, and hold exactly what a plain model says:
//!
//! - durable mode: the state after the last acknowledged commit, or after the commit that was in
//!   flight when the disk failed (it may have reached the disk before the error did);
//! - fast mode: one of the states the sequence went through (fast commits may be lost, a few at
//!   a time, never torn).
//!
//! CI runs `CI_SEQUENCES` sequences per mode; `ZARRDB_FAULT_SEQUENCES=100000` (and
//! `ZARRDB_FAULT_SEED`) gives the recorded run: `cargo test --release --lib fault_model --
//! --nocapture`.

mod disk;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use disk::Disk;

use crate::error::NodeError;
use crate::store::{RedbEngine, RedbOptions};
use crate::{Array, ArrayMetadata, DataType, Database, Durability, Error, Node};

/// Sequences per mode in a CI run.
const CI_SEQUENCES: u64 = 300;
/// The arrays a sequence works on (two under a group that comes and goes with them).
const ARRAYS: [&str; 4] = ["/a0", "/a1", "/g/a2", "/g/a3"];
/// Transactions per sequence, at most.
const TRANSACTIONS: u64 = 10;

/// Array path to content (uint8, fill 0).
type Model = BTreeMap<String, Vec<u8>>;

/// SplitMix64: the same seed gives the same sequence, so a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next().checked_rem(n).unwrap_or(0)
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len() as u64) as usize]
    }
}

#[derive(Debug, Clone)]
enum Op {
    Create(&'static str, u64),
    Write(&'static str, u64, Vec<u8>),
    Resize(&'static str, u64),
    Erase(&'static str),
    Rename(&'static str, &'static str),
}

/// One to three operations valid on `model`, and the model after them.
fn plan(rng: &mut Rng, model: &Model) -> (Vec<Op>, Model) {
    let mut next = model.clone();
    let mut ops = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let present: Vec<&'static str> = ARRAYS.iter().copied().filter(|a| next.contains_key(*a)).collect();
        let absent: Vec<&'static str> = ARRAYS.iter().copied().filter(|a| !next.contains_key(*a)).collect();
        let op = match rng.below(5) {
            _ if present.is_empty() => {
                let path = rng.pick(&absent);
                Op::Create(path, rng.below(25))
            }
            0 if !absent.is_empty() => Op::Create(rng.pick(&absent), rng.below(25)),
            0 | 1 => {
                let path = rng.pick(&present);
                let len = next[path].len() as u64;
                let offset = rng.below(len + 1);
                let data: Vec<u8> = (0..rng.below(len - offset + 1)).map(|_| 1 + rng.below(255) as u8).collect();
                Op::Write(path, offset, data)
            }
            2 => Op::Resize(rng.pick(&present), rng.below(25)),
            3 if !absent.is_empty() => Op::Rename(rng.pick(&present), rng.pick(&absent)),
            _ => Op::Erase(rng.pick(&present)),
        };
        match &op {
            Op::Create(path, len) => {
                next.insert((*path).to_owned(), vec![0; *len as usize]);
            }
            Op::Write(path, offset, data) => {
                let at = *offset as usize;
                next.get_mut(*path).unwrap()[at..at + data.len()].copy_from_slice(data);
            }
            Op::Resize(path, len) => next.get_mut(*path).unwrap().resize(*len as usize, 0),
            Op::Erase(path) => {
                next.remove(*path);
            }
            Op::Rename(from, to) => {
                let content = next.remove(*from).unwrap();
                next.insert((*to).to_owned(), content);
            }
        }
        ops.push(op);
    }
    (ops, next)
}

/// Run `ops` in one transaction, committed unless `abort`.
fn apply(db: &Database, ops: &[Op], abort: bool) -> Result<(), Error> {
    let txn = db.begin_write()?;
    let store = txn.store();
    for op in ops {
        match op {
            Op::Create(path, len) => {
                Array::create(store.clone(), path, ArrayMetadata::new(DataType::UInt8, vec![*len], vec![4]))?;
            }
            Op::Write(path, offset, data) => {
                Array::open(store.clone(), path)?.write_region(&[*offset], &[data.len() as u64], data)?
            }
            Op::Resize(path, len) => Array::open(store.clone(), path)?.resize(&[*len])?,
            Op::Erase(path) => Node::erase(store.clone(), path)?,
            Op::Rename(from, to) => Node::rename(store.clone(), from, to)?,
        }
    }
    if abort {
        drop(txn);
        return Ok(());
    }
    txn.commit()
}

/// What the database holds, read as the model sees it.
fn read(db: &Database) -> Result<Model, Error> {
    let mut model = Model::new();
    for path in ARRAYS {
        match Array::open(db.store(), path) {
            Ok(array) => {
                model.insert(path.to_owned(), array.read_all::<u8>()?);
            }
            Err(Error::Node(NodeError::NotFound { .. })) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(model)
}

/// The database on `disk`, its commit log on `log`.
fn open(disk: &Disk, log: &Disk, durability: Durability) -> Result<Database, Error> {
    let engine = RedbEngine::with_backend(disk.clone(), RedbOptions::default(), Some(Arc::new(log.clone())))?;
    Database::builder().durability(durability).open_engine(Arc::new(engine), Path::new("(simulated disk)"))
}

/// What the sequences did, so a run shows it exercised something.
#[derive(Debug, Default)]
struct Tally {
    /// Commits acknowledged.
    commits: u64,
    /// Sequences whose disk failed before the crash.
    failed: u64,
    /// Sequences whose crashed image held something.
    nonempty: u64,
    /// Sequences where the in-flight commit was found after the crash.
    in_flight_kept: u64,
    /// Sequences that crashed while creating the database, leaving no database.
    creation_lost: u64,
    /// Transactions that failed although the disk had not, with their errors: each is a bug.
    spurious: Vec<String>,
}

/// One sequence; `Err` describes a broken promise.
fn sequence(seed: u64, durability: Durability, tally: &mut Tally) -> Result<(), String> {
    let mut rng = Rng(seed.wrapping_mul(0xA076_1D64_78BD_642F));
    let mut disk = Disk::default();
    let mut log = disk.sibling_with_image(Vec::new());
    // Most sequences fail somewhere between the first open and the last commit. A durable
    // commit through the commit log makes few calls, as a fast one does.
    let calls = 120;
    disk.fail_after(rng.below(calls));
    let mut acked = Model::new();
    let mut history = vec![Model::new()];
    let mut in_flight = None;
    let mut db = open(&disk, &log, durability).ok();
    // A database whose creation was never acknowledged may be left unreadable by the crash.
    let created = db.is_some();
    for _ in 0..TRANSACTIONS {
        let Some(live) = &db else { break };
        if rng.below(8) == 0 {
            // A close and reopen. Closing makes fast commits durable, unless the disk fails
            // first: then they may be lost, as in a crash. What the close wrote is on the disk.
            drop(db.take());
            disk = Disk::with_image(disk.image());
            log = disk.sibling_with_image(log.image());
            let reopened = open(&disk, &log, durability)
                .map_err(|e| format!("seed {seed}: the closed database does not open: {e}"))?;
            let state = read(&reopened).map_err(|e| format!("seed {seed}: the closed database cannot be read: {e}"))?;
            let fits = match durability {
                Durability::Durable => state == acked,
                _ => history.contains(&state),
            };
            if !fits {
                return Err(format!(
                    "seed {seed} ({durability:?}): after a close it holds {state:?}; acknowledged {acked:?}"
                ));
            }
            acked = state;
            history = vec![acked.clone()];
            disk.fail_after(rng.below(150));
            db = Some(reopened);
            continue;
        }
        let (ops, next) = plan(&mut rng, &acked);
        let abort = rng.below(6) == 0;
        match apply(live, &ops, abort) {
            Ok(()) if abort => {}
            Ok(()) => {
                acked = next;
                history.push(acked.clone());
                tally.commits += 1;
            }
            Err(e) => {
                if !disk.failed() {
                    tally.spurious.push(format!("seed {seed}: {e}"));
                }
                if !abort {
                    in_flight = Some(next);
                }
                break;
            }
        }
        if disk.failed() {
            break;
        }
    }
    tally.failed += u64::from(disk.failed());
    // The crash: the image is taken before the database is dropped, whose close would write.
    let image = disk.crash_image(|n| rng.below(n));
    let log_image = log.crash_image(|n| rng.below(n));
    drop(db);
    let after = Disk::with_image(image);
    let after_log = after.sibling_with_image(log_image);
    let db = match open(&after, &after_log, durability) {
        Ok(db) => db,
        Err(_) if !created => {
            tally.creation_lost += 1;
            return Ok(());
        }
        Err(e) => return Err(format!("seed {seed}: the crashed image does not open: {e}")),
    };
    let got = read(&db).map_err(|e| format!("seed {seed}: the crashed image cannot be read: {e}"))?;
    tally.nonempty += u64::from(!got.is_empty());
    tally.in_flight_kept += u64::from(in_flight.as_ref() == Some(&got) && got != acked);
    let fits = match durability {
        Durability::Durable => got == acked || in_flight.as_ref() == Some(&got),
        _ => history.contains(&got) || in_flight.as_ref() == Some(&got),
    };
    if fits {
        Ok(())
    } else {
        Err(format!(
            "seed {seed} ({durability:?}): after the crash the database holds {got:?}; last acknowledged {acked:?}, in flight {in_flight:?}"
        ))
    }
}

fn run(durability: Durability) {
    let sequences = std::env::var("ZARRDB_FAULT_SEQUENCES").ok().and_then(|v| v.parse().ok()).unwrap_or(CI_SEQUENCES);
    let first: u64 = std::env::var("ZARRDB_FAULT_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
    let start = std::time::Instant::now();
    let mut tally = Tally::default();
    let failures: Vec<String> =
        (first..first + sequences).filter_map(|seed| sequence(seed, durability, &mut tally).err()).take(10).collect();
    println!(
        "{durability:?}: {sequences} sequences in {:.1} s: {} commits, {} disk failures, {} crashed images holding data, {} with the in-flight commit, {} creations lost",
        start.elapsed().as_secs_f64(),
        tally.commits,
        tally.failed,
        tally.nonempty,
        tally.in_flight_kept,
        tally.creation_lost
    );
    assert!(tally.spurious.is_empty(), "transactions failed with no disk failure: {:?}", tally.spurious);
    assert!(tally.commits > sequences && tally.failed > sequences / 8, "the sequences did too little: {tally:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn durable_commits_survive_injected_failures_and_crashes() {
    run(Durability::Durable);
}

#[test]
fn fast_commits_are_lost_whole_or_kept_whole() {
    run(Durability::Fast);
}
