//! A compaction killed midway leaves a database that opens, passes `zarrdb check` and holds all
//! its data (the performance issue, acceptance 3).
//!
//! A redb database holds six arrays; three are erased, leaving free pages all through the file.
//! Its file, as a crash right after the erase leaves it, is the starting point of every run.
//! `zarrdb compact` is killed with SIGKILL at random moments within the time a whole compaction
//! takes on this machine (measured first), each time on a fresh copy of the file. After each
//! kill every key and value must be what it was before, and `check` must pass. At least one
//! kill must land before the compaction ended (the file left longer than a whole compaction
//! leaves it). The second test holds a snapshot open in the killed process, so the compaction
//! copies the latest commit into a new file and renames it over the old one instead. The third
//! does the same on LMDB, whose compaction always copies (into the folder, renamed over
//! `data.mdb`).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Node};

#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the test uses only part of the shared generator")]
mod splitmix;

const BIN: &str = env!("CARGO_BIN_EXE_zarrdb");
/// Kills per run; `ZARRDB_COMPACT_KILLS` sets more for a campaign outside CI.
const KILLS: u32 = 12;
const ARRAYS: usize = 6;

/// What is compacted, and how.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// redb's compaction in place, by `zarrdb compact`.
    Redb,
    /// A redb compaction with a snapshot open: a copy renamed over the file.
    RedbCopy,
    /// LMDB's: a compacted copy renamed over `data.mdb`, by `zarrdb compact`.
    Lmdb,
}

impl Kind {
    fn backend(self) -> Backend {
        if self == Kind::Lmdb {
            Backend::Lmdb
        } else {
            Backend::Redb
        }
    }

    fn locator(self, path: &Path) -> String {
        format!("{}:{}", self.backend().name(), path.display())
    }

    /// The file the compaction shortens.
    fn file(self, path: &Path) -> std::path::PathBuf {
        match self {
            Kind::Lmdb => path.join("data.mdb"),
            _ => path.to_owned(),
        }
    }

    /// Where an interrupted copy is left.
    fn stray(self, path: &Path) -> std::path::PathBuf {
        match self {
            Kind::Lmdb => path.join(".data.mdb.compacting"),
            _ => path.with_file_name(".db.zarrdb.compacting"),
        }
    }

    /// Put a fresh copy of the database at `original` in place at `path`.
    fn restore(self, original: &Path, path: &Path) {
        if self == Kind::Lmdb {
            let _ = std::fs::remove_dir_all(path);
            std::fs::create_dir(path).unwrap();
        }
        std::fs::copy(self.file(original), self.file(path)).unwrap();
    }
}

/// Six arrays of 1,024 x 1,024 uint32 (4 MiB each, 4 chunks of 1 MiB), every other one erased,
/// copied to `image` while the database is still open: closing a redb file would compact it
/// already (the close compacts a file that grew). The copy is what a crash right after the
/// erase leaves.
fn make_image(dir: &Path, image: &Path, kind: Kind) {
    let path = dir.join("made.zarrdb");
    // Without the commit log every commit is in the file itself, which is copied while open:
    // closing would compact it already (it grew).
    let db = Database::builder().backend(kind.backend()).redb_commit_log(false).create(&path).unwrap();
    let mut rng = splitmix::SplitMix::new(11, 0);
    for i in 0..ARRAYS {
        let meta = ArrayMetadata::new(DataType::UInt32, vec![1024, 1024], vec![512, 512]);
        let a = Array::create(db.store(), &format!("/runs/a{i}"), meta).unwrap();
        let values: Vec<u32> = (0..1024 * 1024).map(|_| rng.next_u64() as u32).collect();
        a.write_region(&[0, 0], &[1024, 1024], &values).unwrap();
    }
    for i in (0..ARRAYS).step_by(2) {
        Node::erase(db.store(), &format!("/runs/a{i}")).unwrap();
    }
    if kind == Kind::Lmdb {
        std::fs::create_dir(image).unwrap();
    }
    std::fs::copy(kind.file(&path), kind.file(image)).unwrap();
}

/// Every key and value of the database, through one snapshot.
fn content(path: &Path, kind: Kind) -> BTreeMap<String, Vec<u8>> {
    let db = Database::builder().backend(kind.backend()).open(path).expect("the database opens after a kill");
    let store = db.begin_read().unwrap().store();
    let mut out = BTreeMap::new();
    for key in store.list_prefix("").unwrap() {
        out.insert(key.clone(), store.get(&key).unwrap().unwrap());
    }
    out
}

/// `zarrdb compact` on `path`; for `RedbCopy`, this test binary instead, as a child that holds
/// a snapshot open while it compacts (so the latest commit is copied into a new file).
fn compact(path: &Path, kind: Kind) -> std::process::Child {
    let mut command = if kind == Kind::RedbCopy {
        let mut c = Command::new(std::env::current_exe().unwrap());
        c.args(["--exact", "child_compacts_holding_a_snapshot", "--nocapture"]).env(CHILD_ENV, path);
        c
    } else {
        let mut c = Command::new(BIN);
        c.args(["compact", &kind.locator(path)]);
        c
    };
    command.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap()
}

/// Set for the child of the snapshot variant: the database to compact.
const CHILD_ENV: &str = "ZARRDB_COMPACT_CHILD";

#[test]
fn child_compacts_holding_a_snapshot() {
    let Some(path) = std::env::var_os(CHILD_ENV) else { return };
    let db = Database::open(&path).unwrap();
    let snapshot = db.begin_read().unwrap();
    db.compact().unwrap();
    drop(snapshot);
}

fn length(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

#[test]
fn killed_compactions_keep_every_value() {
    killed_compactions_keep_every_value_with(Kind::Redb);
}

#[test]
fn killed_compactions_by_copy_keep_every_value() {
    killed_compactions_keep_every_value_with(Kind::RedbCopy);
}

#[test]
fn killed_lmdb_compactions_keep_every_value() {
    killed_compactions_keep_every_value_with(Kind::Lmdb);
}

/// The kill campaign of this file, for one kind of compaction.
fn killed_compactions_keep_every_value_with(kind: Kind) {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("original.zarrdb");
    make_image(dir.path(), &original, kind);
    let before = content(&original, kind);
    let long = length(&kind.file(&original));
    assert!(before.len() > 3 * 4, "the fixture holds too little");

    // Whole compactions, to learn how long one takes (the shorter of two: the first also pays
    // for a cold binary) and how short the file gets.
    let probe = dir.path().join("probe.zarrdb");
    let mut whole = Duration::MAX;
    for _ in 0..2 {
        kind.restore(&original, &probe);
        let start = Instant::now();
        let out = compact(&probe, kind).wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        whole = whole.min(start.elapsed());
    }
    let short = length(&kind.file(&probe));
    eprintln!("whole compaction: {long} -> {short} bytes in {whole:?}");
    assert!(short < long * 3 / 4, "a whole compaction left {short} of {long} bytes");
    assert_eq!(content(&probe, kind), before, "a whole compaction changed the data");

    let db = dir.path().join("db.zarrdb");
    let mut rng = splitmix::SplitMix::new(0xc0c, 0);
    let kills = std::env::var("ZARRDB_COMPACT_KILLS").ok().and_then(|v| v.parse().ok()).unwrap_or(KILLS);
    let mut unfinished = 0;
    for kill in 0..kills {
        kind.restore(&original, &db);
        let fraction = 0.1 + 0.85 * rng.range(0, 1000) as f64 / 1000.0;
        let mut child = compact(&db, kind);
        std::thread::sleep(whole.mul_f64(fraction));
        let _ = child.kill();
        let status = child.wait().unwrap();
        let cut = length(&kind.file(&db));
        assert_eq!(content(&db, kind), before, "kill {kill} at {fraction:.2} of a compaction changed the data");

        let check = Command::new(BIN).args(["check", &kind.locator(&db)]).output().unwrap();
        assert!(check.status.success(), "kill {kill}: zarrdb check failed: {}", String::from_utf8_lossy(&check.stdout));
        if !status.success() && cut > short {
            unfinished += 1;
        }
    }
    eprintln!("{unfinished} of {kills} kills landed before the compaction ended");
    // A copy a kill interrupted is removed by the next compaction.
    let out = compact(&db, kind).wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!kind.stray(&db).exists(), "a stray copy was left behind");
    assert_eq!(content(&db, kind), before);
    assert!(unfinished > 0, "no kill landed before the compaction ended (a whole one takes {whole:?})");
}
