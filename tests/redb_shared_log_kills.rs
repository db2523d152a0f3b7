//! Two writer processes share one redb database in the multi-writer mode, whose durable commits
//! are records of the commit log they share (docs/format.md, "The shared commit log"). One of
//! them is killed (SIGKILL) again and again at random moments, in the middle of appends and
//! checkpoints too, and started again; the other writes on throughout, and is killed last. Every
//! commit either acknowledged (its `commit` returned and it printed `ACK n`) must be in the
//! database after each kill, in order, with nothing after a gap; and the survivor must never
//! fail: a torn record a killed writer left ends the log until the next appender writes over it.

#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the kill timings use only part of the shared generator")]
mod splitmix;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use splitmix::SplitMix;
use zarrdb::{Database, Durability};

const DB_ENV: &str = "ZARRDB_SHARED_KILLS_DB";
const WRITER_ENV: &str = "ZARRDB_SHARED_KILLS_WRITER";
const FROM_ENV: &str = "ZARRDB_SHARED_KILLS_FROM";
/// How many times the victim is killed.
const KILLS: u32 = 30;

fn open(path: &Path) -> Database {
    Database::builder().redb_multi_writer(true).durability(Durability::Durable).open(path).unwrap()
}

/// Keys each writer cycles through: the database stays small however long a writer runs.
const SLOTS: u64 = 32;

/// Commit `n` of writer `w`: its number, then bytes whose count sends some commits past a record's
/// largest size (checkpoints), some large enough to fill the log within a few commits (so that a
/// commit that does not fit checkpoints too), and most through the log.
fn value(w: u64, n: u64) -> Vec<u8> {
    let len = match n % 17 {
        5 => 1_100_000,
        11 => 600_000,
        _ => 3000 + (n % 7) as usize * 1000,
    };
    let mut value = n.to_le_bytes().to_vec();
    value.extend((0..len).map(|i| (i as u64 ^ (w * 131 + n)) as u8));
    value
}

/// The child process; does nothing in a normal test run. Commits its keys from `FROM` on until
/// killed, printing `ACK n` once each commit returns.
#[test]
fn child_entry() {
    let (Some(path), Some(w)) = (std::env::var_os(DB_ENV), std::env::var_os(WRITER_ENV)) else { return };
    let w: u64 = w.to_str().unwrap().parse().unwrap();
    let from: u64 = std::env::var(FROM_ENV).unwrap().parse().unwrap();
    let db = open(Path::new(&path));
    let store = db.store();
    let mut out = std::io::stdout().lock();
    writeln!(out, "READY").and_then(|()| out.flush()).unwrap();
    for n in from.. {
        store.set(&format!("w{w}/{}", n % SLOTS), &value(w, n)).unwrap();
        writeln!(out, "ACK {n}").and_then(|()| out.flush()).unwrap();
    }
}

/// Start writer `w` at commit `from`, and the commits it acknowledges, read from its output
/// until it ends.
fn start(path: &Path, w: u64, from: u64) -> (Child, mpsc::Receiver<u64>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
        .env(DB_ENV, path)
        .env(WRITER_ENV, w.to_string())
        .env(FROM_ENV, from.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(n) = acknowledged(&line) {
                if tx.send(n).is_err() {
                    break;
                }
            }
        }
    });
    (child, rx)
}

/// The last `ACK n` among `line`s; libtest may print `test child_entry ... ` in front.
fn acknowledged(line: &str) -> Option<u64> {
    line.find("ACK ").map(|at| line[at + 4..].trim().parse().unwrap())
}

/// How many of writer `w`'s commits `db` holds: its slots hold the last `SLOTS` of them (or all,
/// when fewer), each whole, with none missing in between.
fn held(db: &Database, w: u64) -> u64 {
    // One snapshot: the writers go on committing while the slots are read.
    let store = db.begin_read().unwrap().store();
    let numbers: Vec<Option<u64>> = (0..SLOTS)
        .map(|slot| {
            let value = store.get(&format!("w{w}/{slot}")).unwrap()?;
            let n = u64::from_le_bytes(value[..8].try_into().unwrap());
            assert_eq!(n % SLOTS, slot, "writer {w}: commit {n} in slot {slot}");
            assert!(value == self::value(w, n), "writer {w}: commit {n} is not whole");
            Some(n)
        })
        .collect();
    let Some(last) = numbers.iter().flatten().max().copied() else { return 0 };
    for back in 0..SLOTS.min(last + 1) {
        let n = last - back;
        assert_eq!(numbers[(n % SLOTS) as usize], Some(n), "writer {w}: commit {n} missing before {last}");
    }
    last + 1
}

#[test]
fn a_writer_killed_beside_another_loses_no_acknowledged_commit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.zarrdb");
    drop(Database::builder().redb_multi_writer(true).create(&path).unwrap());
    let (mut survivor, survivor_acks) = start(&path, 0, 0);
    let mut rng = SplitMix::new(std::env::var("ZARRDB_CRASH_SEED").map_or(0x5ad, |s| s.parse().unwrap()), 7);
    let mut acked = [None::<u64>; 2];
    let mut victim_from = 0;
    for kill in 1..=KILLS {
        let (mut victim, victim_acks) = start(&path, 1, victim_from);
        std::thread::sleep(Duration::from_micros(rng.range(2_000, 120_000)));
        victim.kill().unwrap();
        victim.wait().unwrap();
        assert!(survivor.try_wait().unwrap().is_none(), "kill {kill}: the surviving writer ended");
        // Every line the victim wrote before the kill: its reader ends at the end of its output.
        acked[1] = victim_acks.iter().last().or(acked[1]);
        acked[0] = survivor_acks.try_iter().last().or(acked[0]);
        let db = open(&path);
        victim_from = held(&db, 1);
        let survivor_held = held(&db, 0);
        drop(db);
        if let Some(n) = acked[1] {
            assert!(victim_from > n, "kill {kill}: writer 1 acknowledged commit {n}, the database holds {victim_from}");
        }
        if let Some(n) = acked[0] {
            assert!(
                survivor_held > n,
                "kill {kill}: writer 0 acknowledged commit {n}, the database holds {survivor_held}"
            );
        }
    }
    // The survivor is killed last: what it acknowledged must be there too.
    survivor.kill().unwrap();
    survivor.wait().unwrap();
    acked[0] = survivor_acks.iter().last().or(acked[0]);
    let db = open(&path);
    for (w, acked) in acked.iter().enumerate() {
        let n = acked.unwrap_or_else(|| panic!("writer {w} acknowledged no commit"));
        let held = held(&db, w as u64);
        assert!(held > n, "writer {w} acknowledged commit {n}, the database holds {held}");
    }
}
