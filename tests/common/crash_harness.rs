//! The parent and child sides of the crash tests (`tests/crash_transactions.rs`,
//! `tests/crash_resize_append.rs`), shared so that every workload gets the same kill timings and
//! checks. A test binary using it declares its tests with [`crash_tests!`]: `#[test] fn
//! child_entry()` calls [`child_main`] with the binary's [`Workload`], and each test runs
//! [`crash_loop`], which runs that binary again as the child (`--exact child_entry`, with
//! `ZARRDB_CRASH_DB` set), kills it at random moments or lets it close the database, and checks
//! the database after each child: it opens, `zarrdb check` passes, and it holds exactly the state
//! after a prefix of the workload's transactions that [`Promise`] allows. Half the kills are timed
//! from the start of the child (they may land while it opens and recovers the database), half from
//! the moment it reports being ready. `ZARRDB_CRASH_SEED` changes the kill timings.

#[path = "crash_checks.rs"]
pub mod checks;
#[path = "splitmix.rs"]
pub mod splitmix;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use zarrdb::{Backend, Database, Durability};

use splitmix::SplitMix;

/// What a crash test runs: transactions generated from their number (and the state before them)
/// alone, so that the child that runs them and the parent that checks the database after a crash
/// agree on what every prefix of them leaves behind. The implementing type is the model: the
/// content of the database after transactions `1..=txn`.
pub trait Workload {
    /// Create the nodes (state 0) in one transaction.
    fn setup(db: &Database) -> Result<(), zarrdb::Error>;
    /// Run transaction `k` on a database holding the state after `k - 1`, and commit it.
    fn run_transaction(db: &Database, k: u64) -> Result<(), zarrdb::Error>;
    /// The transaction the database says it holds the state after: the `txn` attribute of the
    /// group `/g`, which every transaction sets.
    fn committed_txn(db: &Database) -> Result<u64, zarrdb::Error> {
        let attrs = zarrdb::Group::open(db.begin_read()?.store(), "/g")?.attributes();
        Ok(attrs.get("txn").and_then(serde_json::Value::as_u64).expect("/g has a txn attribute"))
    }
    /// The model of state 0.
    fn initial() -> Self;
    /// The last transaction the model has replayed.
    fn txn(&self) -> u64;
    /// Replay transaction `txn() + 1`.
    fn replay_next(&mut self);
    /// Replay transactions up to `txn`.
    fn advance_to(&mut self, txn: u64) {
        assert!(txn >= self.txn(), "the model cannot go back from {} to {txn}", self.txn());
        while self.txn() < txn {
            self.replay_next();
        }
    }
    /// Check that the latest commit of `db` holds exactly the model's state.
    fn verify(&self, db: &Database) -> Result<(), String>;
    /// How many groups and arrays the database holds in the model's state.
    fn node_counts(&self) -> (usize, usize);
}

/// The tests of a crash test binary: `child_entry` running the workload `$model`, and for each
/// configuration (durable on redb, LMDB, LMDB behind its commit log and sled; fast on redb, LMDB
/// and LMDB behind the log) a test of `$ci` kills
/// (`redb_durable_survives_kills`...) and an ignored one of `$full` kills
/// (`redb_durable_survives_200_kills`...; `$how` says how to run them).
macro_rules! crash_tests {
    ($model:ty, kills $ci:expr, $full:expr, $how:literal) => {
        /// The child process; does nothing in a normal test run.
        #[test]
        fn child_entry() {
            $crate::crash_harness::child_main::<$model>();
        }

        $crate::crash_harness::crash_tests!(@config $model, $ci, $full, $how;
            redb_durable_survives_kills, redb_durable_survives_200_kills: Redb, Durable, KeepsAcknowledged;
            lmdb_durable_survives_kills, lmdb_durable_survives_200_kills: Lmdb, Durable, KeepsAcknowledged;
            lmdb_log_durable_survives_kills, lmdb_log_durable_survives_200_kills: LmdbLog, Durable, KeepsAcknowledged;
            sled_durable_survives_kills, sled_durable_survives_200_kills: Sled, Durable, KeepsAcknowledged;
            redb_fast_survives_kills, redb_fast_survives_200_kills: Redb, Fast, SomePrefix;
            redb_multi_durable_survives_kills, redb_multi_durable_survives_200_kills: RedbMulti, Durable, KeepsAcknowledged;
            redb_multi_fast_survives_kills, redb_multi_fast_survives_200_kills: RedbMulti, Fast, SomePrefix;
            lmdb_fast_survives_kills, lmdb_fast_survives_200_kills: Lmdb, Fast, KeepsAcknowledged;
            lmdb_log_fast_survives_kills, lmdb_log_fast_survives_200_kills: LmdbLog, Fast, KeepsAcknowledged;
        );
    };
    (@config $model:ty, $ci:expr, $full:expr, $how:literal;
     $($ci_test:ident, $full_test:ident: $engine:ident, $durability:ident, $promise:ident;)*) => {$(
        #[test]
        fn $ci_test() {
            use $crate::crash_harness::{crash_loop, Engine, Promise};
            use zarrdb::Durability;
            crash_loop::<$model>(Engine::$engine, Durability::$durability, Promise::$promise, $ci);
        }

        #[test]
        #[ignore = $how]
        fn $full_test() {
            use $crate::crash_harness::{crash_loop, Engine, Promise};
            use zarrdb::Durability;
            crash_loop::<$model>(Engine::$engine, Durability::$durability, Promise::$promise, $full);
        }
    )*};
}
pub(crate) use crash_tests;

/// Which states a kill may leave, given the last transaction acknowledged (its commit returned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Promise {
    /// Nothing acknowledged is lost: the state after the acknowledged transaction, or after the
    /// next one (the kill landed between its commit and the acknowledgement).
    KeepsAcknowledged,
    /// Some prefix from the state the child started from up to the one after the acknowledged
    /// transaction (fast mode in DESIGN.md §5: the last commits may be lost).
    SomePrefix,
}

/// The engine under test: a backend, and for LMDB whether it runs behind its commit log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Redb,
    /// redb in its multi-writer mode (`DatabaseBuilder::redb_multi_writer(true)`), whose durable
    /// commits go to the commit log its processes share.
    RedbMulti,
    Lmdb,
    /// LMDB with `DatabaseBuilder::lmdb_commit_log(true)`.
    LmdbLog,
    Sled,
    /// A bucket database (`zarrdb+s3://`) at the locator `ZARRDB_CRASH_BUCKET` names (set by the
    /// test, with the `AWS_*` variables the child inherits).
    Bucket,
}

/// The variable naming a bucket database's locator for [`Engine::Bucket`].
pub const BUCKET_ENV: &str = "ZARRDB_CRASH_BUCKET";

impl Engine {
    fn backend(self) -> Backend {
        match self {
            Engine::Redb | Engine::RedbMulti => Backend::Redb,
            Engine::Lmdb | Engine::LmdbLog => Backend::Lmdb,
            Engine::Sled => Backend::Sled,
            Engine::Bucket => Backend::Bucket,
        }
    }

    /// The name the child is told (`ZARRDB_CRASH_ENGINE`).
    fn name(self) -> &'static str {
        match self {
            Engine::LmdbLog => "lmdb-log",
            Engine::RedbMulti => "redb-multi",
            other => other.backend().name(),
        }
    }

    /// LMDB behind its commit log, or redb in its multi-writer mode.
    fn logged(self) -> bool {
        matches!(self, Engine::LmdbLog | Engine::RedbMulti)
    }

    fn from_name(name: &str) -> Engine {
        [Engine::Redb, Engine::RedbMulti, Engine::Lmdb, Engine::LmdbLog, Engine::Sled, Engine::Bucket]
            .into_iter()
            .find(|engine| engine.name() == name)
            .unwrap_or_else(|| panic!("unknown engine {name}"))
    }
}

const DB_ENV: &str = "ZARRDB_CRASH_DB";
const ENGINE_ENV: &str = "ZARRDB_CRASH_ENGINE";
const FAST_ENV: &str = "ZARRDB_CRASH_FAST";
const START_ENV: &str = "ZARRDB_CRASH_START";
const STOP_ENV: &str = "ZARRDB_CRASH_STOP";

/// Open the database at `path`; `log` chooses whether LMDB runs behind its commit log, or redb in
/// its multi-writer mode with the shared log (a database left by a process that had it is
/// recovered either way).
fn open(backend: Backend, log: bool, durability: Durability, path: &Path) -> Result<Database, zarrdb::Error> {
    let mut builder = Database::builder();
    builder.backend(backend).durability(durability);
    match backend {
        Backend::Redb => builder.redb_multi_writer(log),
        _ => builder.lmdb_commit_log(log),
    };
    builder.open(path)
}

/// The child: run transactions from the state the parent checked until killed (or, with
/// `ZARRDB_CRASH_STOP`, until that transaction, then close the database). Does nothing unless
/// started by [`run_child`].
pub fn child_main<W: Workload>() {
    let Some(path) = std::env::var_os(DB_ENV) else { return };
    let engine = Engine::from_name(&std::env::var(ENGINE_ENV).unwrap());
    let durability = if std::env::var(FAST_ENV).unwrap() == "1" { Durability::Fast } else { Durability::Durable };
    let start: u64 = std::env::var(START_ENV).unwrap().parse().unwrap();
    let stop: u64 = std::env::var(STOP_ENV).map_or(u64::MAX, |s| s.parse().unwrap());
    let db =
        open(engine.backend(), engine.logged(), durability, Path::new(&path)).expect("the child opens the database");
    let found = W::committed_txn(&db).unwrap();
    assert_eq!(found, start, "the child found the state after {found}; the parent checked {start}");
    let mut out = std::io::stdout().lock();
    writeln!(out, "READY {start}").and_then(|()| out.flush()).unwrap();
    for k in start + 1..=stop {
        W::run_transaction(&db, k).unwrap();
        writeln!(out, "ACK {k}").and_then(|()| out.flush()).unwrap();
    }
}

/// How a child ended.
struct Ended {
    killed: bool,
    ready: bool,
    /// The last acknowledged transaction (`start` when none).
    acknowledged: u64,
}

/// The child's `READY` line; libtest may print `test child_entry ... ` in front of it.
fn is_ready(line: &str) -> bool {
    line.contains("READY ")
}

/// Start a child on the database at `path` (in the state after `start`). Without `stop`, kill it
/// at a random moment; with it, let it run transactions up to `stop` and close the database.
fn run_child(
    (engine, durability): (Engine, Durability),
    path: &Path,
    start: u64,
    stop: Option<u64>,
    rng: &mut SplitMix,
) -> Ended {
    let err_path = match engine {
        Engine::Bucket => std::env::temp_dir().join(format!("zarrdb-crash-bucket-{}.child-stderr", std::process::id())),
        _ => path.with_extension("child-stderr"),
    };
    let stderr = || std::fs::read_to_string(&err_path).unwrap_or_default();
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
        .env(DB_ENV, path)
        .env(ENGINE_ENV, engine.name())
        .env(FAST_ENV, if durability == Durability::Fast { "1" } else { "0" })
        .env(START_ENV, start.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&err_path).unwrap());
    if let Some(stop) = stop {
        command.env(STOP_ENV, stop.to_string());
    }
    let mut child: Child = command.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    if stop.is_some() {
        let status = child.wait().unwrap();
        assert!(status.success(), "the child failed: {status}; stderr:\n{}", stderr());
    } else {
        if rng.next_u64() & 1 == 0 {
            // From the moment the child is ready: the kill lands in the transactions.
            let deadline = Instant::now() + Duration::from_secs(120);
            while !lines.last().is_some_and(|l: &String| is_ready(l)) {
                match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                    Ok(line) => lines.push(line),
                    Err(e) => {
                        let _ = child.kill();
                        panic!("the child ended or hung before it was ready ({e}); stderr:\n{}", stderr())
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(rng.range(0, 40)));
        } else {
            // From the start: the kill may land while the child opens (and recovers) the database.
            std::thread::sleep(Duration::from_millis(rng.range(0, 20)));
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the child exited by itself ({status}); stderr:\n{}", stderr());
        }
        child.kill().unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL), "the child was not killed: {status}; stderr:\n{}", stderr());
    }
    reader.join().unwrap();
    lines.extend(rx.try_iter());
    let acks: Vec<u64> = lines.iter().filter_map(|l| l.strip_prefix("ACK ")).map(|k| k.parse().unwrap()).collect();
    let consecutive: Vec<u64> = (start + 1..).take(acks.len()).collect();
    assert_eq!(acks, consecutive, "the child acknowledged transactions out of order");
    let acknowledged = acks.last().copied().unwrap_or(start);
    Ended { killed: stop.is_none(), ready: lines.iter().any(|l| is_ready(l)), acknowledged }
}

/// Tallies of one crash loop.
#[derive(Default)]
struct Figures {
    kills: u32,
    closes: u32,
    reached: BTreeSet<u64>,
    before_ready: u32,
    unacknowledged: u32,
    lost: u32,
}

/// Run children on one database until `kills` of them were killed (one in four is let to close the
/// database instead); check the database after each.
pub fn crash_loop<W: Workload>(engine: Engine, durability: Durability, promise: Promise, kills: u32) {
    let backend = engine.backend();
    let began = Instant::now();
    let seed = std::env::var("ZARRDB_CRASH_SEED").map_or(0x6b11, |s| s.parse().expect("ZARRDB_CRASH_SEED is a number"));
    let stream = engine.name().bytes().fold(u64::from(durability == Durability::Fast), |h, b| h * 31 + u64::from(b));
    let mut rng = SplitMix::new(seed, stream);
    let dir = tempfile::tempdir().unwrap();
    let path = match engine {
        Engine::Bucket => std::path::PathBuf::from(std::env::var(BUCKET_ENV).expect("the test names the bucket")),
        _ => dir.path().join(backend.name()),
    };
    let log = engine.logged();
    let mut builder = Database::builder();
    builder.backend(backend).durability(durability);
    match backend {
        Backend::Redb => builder.redb_multi_writer(log),
        _ => builder.lmdb_commit_log(log),
    };
    let db = builder.create(&path).unwrap();
    W::setup(&db).unwrap();
    drop(db);
    let mut model = W::initial();
    let mut fig = Figures::default();
    while fig.kills < kills {
        let start = model.txn();
        let stop = (rng.range(0, 3) == 0).then(|| start + rng.range(1, 20));
        let ended = run_child((engine, durability), &path, start, stop, &mut rng);
        let ack = ended.acknowledged;
        let ctx = format!(
            "{engine:?} {durability:?}, child {} (seed {seed}): started after {start}, acknowledged {ack}, {}",
            fig.kills + fig.closes + 1,
            if ended.killed { "killed" } else { "closed the database" }
        );
        // Behind the log, every other check opens without it: either opener recovers what a
        // killed child left (its checkpoint and records). For redb, the single-process mode
        // replays the shared log's records.
        let with_log = log && (fig.kills + fig.closes) % 2 == 0;
        let db = open(backend, with_log, durability, &path)
            .unwrap_or_else(|e| panic!("{ctx}: the database does not open: {e}"));
        let found = W::committed_txn(&db).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        let allowed = match (ended.killed, promise) {
            (false, _) => found == ack,
            (true, Promise::KeepsAcknowledged) => found == ack || found == ack + 1,
            (true, Promise::SomePrefix) => start <= found && found <= ack + 1,
        };
        assert!(allowed, "{ctx}: the database holds the state after {found}");
        model.advance_to(found);
        if let Err(problem) = model.verify(&db) {
            panic!("{ctx}: the state after {found} is not the model's: {problem}");
        }
        drop(db);
        if backend == Backend::Sled {
            wait_for_sled_unlock(&path);
        }
        if let Err(problem) = zarrdb_check(backend, &path, model.node_counts()) {
            panic!("{ctx}: zarrdb check: {problem}");
        }
        if ended.killed {
            fig.kills += 1;
            fig.reached.insert(found);
            fig.before_ready += u32::from(!ended.ready);
            fig.unacknowledged += u32::from(found == ack + 1);
            fig.lost += u32::from(found < ack);
        } else {
            fig.closes += 1;
        }
    }
    eprintln!(
        "{engine:?} {durability:?}: {} kills ({} before the child was ready) and {} clean closes; {} distinct \
         states after a kill, last {}; {} commits found that were never acknowledged, {} acknowledged \
         commits lost; {:.1} s",
        fig.kills,
        fig.before_ready,
        fig.closes,
        fig.reached.len(),
        model.txn(),
        fig.unacknowledged,
        fig.lost,
        began.elapsed().as_secs_f64()
    );
}

/// Wait until nothing holds the `flock` of sled's data file: dropping a sled `Database` returns
/// while sled's thread pool may still hold the file for a moment, and then `zarrdb check` or the
/// next child would find the database locked (the ignored `sled_reopens_at_once` of
/// `tests/database_close_releases_lock.rs`).
fn wait_for_sled_unlock(path: &Path) {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open(path.join("db")).expect("sled's data file");
    let deadline = Instant::now() + Duration::from_secs(60);
    // SAFETY: `flock` on a descriptor this function owns; the lock is released at once.
    while unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        assert!(
            Instant::now() < deadline,
            "sled's data file stayed locked for a minute after the database was dropped"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: as above.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
}

/// `zarrdb check BACKEND:PATH`: every node opens and every chunk decodes, and it finds every node.
fn zarrdb_check(backend: Backend, path: &Path, (groups, arrays): (usize, usize)) -> Result<(), String> {
    let locator = match backend {
        Backend::Bucket => path.display().to_string(),
        _ => format!("{}:{}", backend.name(), path.display()),
    };
    let out = Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(["check", &locator]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = format!("checked {groups} groups, {arrays} arrays, ");
    if !out.status.success() || !stdout.contains(&summary) || !stdout.contains(": 0 problems") {
        return Err(format!(
            "{}, expected \"{summary}... 0 problems\"; stdout:\n{stdout}stderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}
