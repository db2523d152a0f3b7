//! SIGKILL during the editing commands (`append`, `resize`, `rm --recursive`, `mv`, `cp`) on a redb
//! database: after each kill the database opens and holds exactly the state before the command
//! or the state after it, every array reading back whole. 20 kills per command (`ZARRDB_CRASH_KILLS`), timed at random
//! over the command's own run time (the shortest of three runs to completion); `ZARRDB_CRASH_SEED`
//! changes the timings.

#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the kill timings need only `range`")]
mod splitmix;

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use splitmix::SplitMix;
use zarrdb::metadata::Codec;
use zarrdb::transfer::NpyHeader;
use zarrdb::{Array, ArrayMetadata, DataType, Database, Group, Node};

/// Kills per command; `ZARRDB_CRASH_KILLS` runs a longer campaign outside CI.
fn kills() -> u64 {
    std::env::var("ZARRDB_CRASH_KILLS").ok().and_then(|s| s.parse().ok()).unwrap_or(20)
}

/// Every node: its path, and for arrays the shape and a digest of all values.
type State = BTreeMap<String, Option<(Vec<u64>, u64)>>;

fn state(path: &Path) -> State {
    let db = Database::open(path).expect("the database opens after a kill");
    let store = db.begin_read().unwrap().store();
    let mut out = State::new();
    let mut pending = vec!["/".to_owned()];
    while let Some(node_path) = pending.pop() {
        match Node::open(store.clone(), &node_path).unwrap() {
            Node::Group(g) => {
                out.insert(node_path.clone(), None);
                for child in g.child_names().unwrap() {
                    pending.push(format!("{}/{child}", node_path.trim_end_matches('/')));
                }
            }
            Node::Array(a) => {
                let bytes = a.read_region_bytes(&vec![0; a.shape().len()], a.shape()).expect("every chunk decodes");
                let mut h = DefaultHasher::new();
                bytes.hash(&mut h);
                out.insert(node_path, Some((a.shape().to_vec(), h.finish())));
            }
        }
    }
    out
}

/// The database every command starts from: /data/t (1,600 × 1,000 float64 in zstd chunks of
/// 100 rows) and /runs/r0..r7 (each 200 × 1,000).
fn baseline(path: &Path) {
    let db = Database::create(path).unwrap();
    let txn = db.begin_write().unwrap();
    let meta = |rows| {
        ArrayMetadata::new(DataType::Float64, vec![rows, 1000], vec![100, 1000])
            .with_codecs([Codec::bytes(), Codec::zstd(1)])
    };
    let values = |n: u64, salt: u64| -> Vec<f64> { (0..n * 1000).map(|i| ((i * 7 + salt) % 1009) as f64).collect() };
    Array::create(txn.store(), "/data/t", meta(1600))
        .unwrap()
        .write_region(&[0, 0], &[1600, 1000], &values(1600, 1))
        .unwrap();
    Group::create(txn.store(), "/runs", serde_json::Map::new()).unwrap();
    for r in 0..8u64 {
        let a = Array::create(txn.store(), &format!("/runs/r{r}"), meta(200)).unwrap();
        a.write_region(&[0, 0], &[200, 1000], &values(200, r + 2)).unwrap();
    }
    txn.commit().unwrap();
}

fn zarrdb(args: &[String]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_zarrdb"));
    cmd.args(args).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    cmd
}

/// Run the command to completion on a copy of `base` (its state after, and how long it took),
/// then `KILLS` times on fresh copies, killed after a random part of that time.
fn kill_during(dir: &Path, base: &Path, name: &str, args: impl Fn(&str) -> Vec<String>) {
    let before = state(base);
    let copy = dir.join(format!("{name}.zarrdb"));
    // The shortest of three runs: the first one starts cold.
    let mut took = Duration::MAX;
    for _ in 0..3 {
        std::fs::copy(base, &copy).unwrap();
        let started = Instant::now();
        let status = zarrdb(&args(copy.to_str().unwrap())).status().unwrap();
        took = took.min(started.elapsed());
        assert!(status.success(), "{name} failed when not killed");
    }
    let after = state(&copy);
    assert_ne!(before, after, "{name} changed nothing");
    let seed = std::env::var("ZARRDB_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(21);
    let mut rng = SplitMix::new(seed, name.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b))));
    let (mut saw_before, mut saw_after) = (0, 0);
    let kills = kills();
    // The window the kills are spread over: the command's run time, widened when every kill
    // landed before its commit (a loaded machine runs it slower than measured) and narrowed when
    // every one came after, for up to three more rounds: kills that all miss the run test nothing.
    let mut window = took.as_micros() as u64;
    for round in 0..4 {
        for kill in 0..kills {
            std::fs::copy(base, &copy).unwrap();
            let mut child = zarrdb(&args(copy.to_str().unwrap())).spawn().unwrap();
            let micros = rng.range(0, window + 1);
            std::thread::sleep(Duration::from_micros(micros));
            let _ = child.kill(); // SIGKILL
            let _ = child.wait();
            let now = state(&copy);
            if now == before {
                saw_before += 1;
            } else if now == after {
                saw_after += 1;
            } else {
                panic!("{name}, round {round}, kill {kill} after {micros} µs: neither before nor after:\n{now:?}");
            }
        }
        match (saw_before, saw_after) {
            (_, 0) => window *= 2,
            (0, _) => window /= 2,
            _ => break,
        }
    }
    eprintln!("{name}: ran {took:?}; {saw_before} kills left the state before, {saw_after} after");
    assert!(saw_before > 0 && saw_after > 0, "{name}: the kills missed the command's run");
}

#[test]
fn killed_edits_leave_the_state_before_or_after() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.zarrdb");
    baseline(&base);
    let rows = dir.path().join("rows.npy");
    let mut npy = NpyHeader::new(&DataType::Float64, &[400, 1000], "rows").unwrap().to_bytes();
    npy.extend((0..400_000u64).flat_map(|i| ((i % 977) as f64).to_le_bytes()));
    std::fs::write(&rows, npy).unwrap();
    let rows = rows.to_str().unwrap().to_owned();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    kill_during(dir.path(), &base, "append", |db| s(&["append", db, "/data/t", &rows, "--axis", "0"]));
    kill_during(dir.path(), &base, "resize", |db| s(&["resize", db, "/data/t", "--shape", "150,1000"]));
    kill_during(dir.path(), &base, "rm", |db| s(&["rm", db, "/runs", "--recursive"]));
    kill_during(dir.path(), &base, "mv", |db| s(&["mv", db, "/runs", "/archive/runs"]));
    kill_during(dir.path(), &base, "cp", |db| s(&["cp", &format!("{db}:/data"), &format!("{db}:/backup/data")]));
}
