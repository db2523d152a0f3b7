//! Helpers shared by the tests of history that run this test binary again as child processes
//! (`history_crash`, `history_merge_crash`, `history_collect_crash`, `history_processes`,
//! `history_gc_processes`, `history_branch_processes`) and by the model tests (`history_model`,
//! `history_branches_model`): the settings read from the environment, opening a database that
//! keeps history, what a version holds (read whole, and hashed to one number), the checks of a
//! version after a kill, and the children themselves: those that run side by side until told to
//! stop ([`Proc`], [`Procs`]), and those a crash test watches line by line and kills at a moment
//! it picks ([`child_lines`], [`Watched`], [`Aim`]).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::str::FromStr;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use zarrdb::db::{CommitId, VersionRef};
use zarrdb::error::HistoryError;
use zarrdb::{Backend, Database, DatabaseBuilder, Durability, Error, Snapshot, Store};

/// What a version holds: its keys and their values.
pub type State = BTreeMap<String, Vec<u8>>;

/// The value of the environment variable `name`, or `default` when it is unset or does not parse.
pub fn env_or<T: FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Which run of a campaign of several this is (`ZARRDB_KILLS_RUN`, default 0, the run CI makes): a
/// crash test seeds its workload and its kill moments with it, so that a campaign made of several
/// runs (each checking its rounds against a history that grows with them) covers more than one
/// run repeated.
pub fn campaign_run() -> u64 {
    env_or("ZARRDB_KILLS_RUN", 0)
}

/// The backend called `name` ([`Backend::name`]).
pub fn backend(name: &str) -> Backend {
    [Backend::Redb, Backend::Lmdb, Backend::Sled].into_iter().find(|b| b.name() == name).unwrap()
}

/// The database at `path` on `backend`, keeping history; created when nothing is there.
pub fn open(path: &Path, backend: Backend) -> Database {
    let mut builder = Database::builder();
    builder.backend(backend).history(true);
    builder.create(path).unwrap()
}

/// The commit `main` names.
pub fn tip(db: &Database) -> CommitId {
    db.resolve(&VersionRef::Branch("main".into())).unwrap().id
}

/// FNV-1a's starting value.
pub const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a: `hash` (`FNV_START` to begin with) after `bytes`.
pub fn fnv(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// FNV-1a over the keys and values in order: what a version must hold, in one number.
pub fn hash(state: &State) -> u64 {
    state.iter().fold(FNV_START, |h, (key, value)| {
        let h = fnv(fnv(h, key.as_bytes()), &[0xff]);
        fnv(fnv(h, value), &[0xfe])
    })
}

/// Everything `store` holds, read whole.
pub fn contents(store: &dyn Store, what: &str) -> State {
    let keys = store.list_prefix("").unwrap_or_else(|e| panic!("{what}: listing: {e}"));
    let read = |k: &String| store.get(k).unwrap_or_else(|e| panic!("{what}: reading {k}: {e}"));
    keys.into_iter().map(|k| (k.clone(), read(&k).unwrap_or_else(|| panic!("{what}: listed {k} is gone")))).collect()
}

/// Commit `id` opened after a kill, as the acknowledgements say it must be: `None` when it was
/// refused as expired and may have expired (no tag names it, `tagged` false, and it is older
/// than `maybe`, the newest horizon an expiry was under way to, or than `horizon`, the newest
/// acknowledged one). Panics (`what` names the commit) when it is older than `horizon`, untagged
/// and not refused as expired, or when it is not opened for any other reason.
pub fn open_after_kill(
    db: &Database,
    id: CommitId,
    horizon: CommitId,
    maybe: CommitId,
    tagged: bool,
    what: &str,
) -> Option<Snapshot> {
    match db.open_version(&VersionRef::Commit(id)) {
        Err(Error::History(HistoryError::Expired { .. })) if id < maybe.max(horizon) && !tagged => None,
        _ if id < horizon && !tagged => {
            panic!("{what}, under the acknowledged horizon {horizon}, was not refused as expired")
        }
        version => Some(version.unwrap_or_else(|e| panic!("{what}: {e}"))),
    }
}

/// A command that runs this test binary's `child_entry` alone, its output not captured; the
/// caller's environment variables tell the child what to do.
pub fn child_command() -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(["--exact", "child_entry", "--nocapture", "--test-threads=1"]);
    command
}

/// Where the processes commit.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Lmdb,
    RedbMultiWriter,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Lmdb => "lmdb",
            Kind::RedbMultiWriter => "redb",
        }
    }

    pub fn from_name(name: &str) -> Kind {
        [Kind::Lmdb, Kind::RedbMultiWriter].into_iter().find(|k| k.name() == name).unwrap()
    }

    /// How every process opens the database: history kept (the database keeps it once created
    /// so), LMDB's commits as durable as `durability` says (redb's multi-writer mode makes them
    /// durable whatever it says, so it is not set there).
    pub fn builder(self, durability: Durability) -> DatabaseBuilder {
        let mut builder = Database::builder();
        match self {
            Kind::Lmdb => builder.backend(Backend::Lmdb).durability(durability),
            Kind::RedbMultiWriter => builder.backend(Backend::Redb).redb_multi_writer(true),
        };
        builder.history(true);
        builder
    }
}

/// A child process, its output going to files beside the database.
pub struct Proc {
    /// `<role> <index>`.
    pub name: String,
    pub child: Child,
    pub out: PathBuf,
    pub err: PathBuf,
}

impl Proc {
    /// Start `child_entry` as `role` number `index`, with the environment variables `env`; its
    /// stdout and stderr go to `<role><index>.out` and `.err` in `dir`.
    pub fn spawn(dir: &Path, role: &str, index: u64, env: impl IntoIterator<Item = (&'static str, OsString)>) -> Proc {
        let name = format!("{role} {index}");
        let out = dir.join(format!("{role}{index}.out"));
        let err = dir.join(format!("{role}{index}.err"));
        let child = child_command()
            .envs(env)
            .stdin(Stdio::null())
            .stdout(File::create(&out).unwrap())
            .stderr(File::create(&err).unwrap())
            .spawn()
            .unwrap();
        Proc { name, child, out, err }
    }

    pub fn stdout(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    pub fn output(&self) -> String {
        let err = std::fs::read_to_string(&self.err).unwrap_or_default();
        format!("stdout:\n{}\nstderr:\n{err}", self.stdout())
    }

    /// Its summary line (from `tag` on, in the first line holding it).
    pub fn summary(&self, tag: &str) -> String {
        let out = self.stdout();
        let line = out.lines().find_map(|l| l.find(tag).map(|at| l[at..].to_owned()));
        line.unwrap_or_else(|| panic!("{} printed no summary; {}", self.name, self.output()))
    }
}

/// The children of a scenario; those still running when it ends (a failure) are killed.
pub struct Procs(pub Vec<Proc>);

impl Procs {
    /// Wait until every child whose name starts with `which` (`""`: every child) has exited,
    /// each successfully, by `deadline`.
    pub fn wait(&mut self, which: &str, deadline: Instant) {
        loop {
            let mut running = 0;
            for proc in self.0.iter_mut().filter(|p| p.name.starts_with(which)) {
                match proc.child.try_wait().unwrap() {
                    Some(status) => assert!(status.success(), "{} failed ({status}); {}", proc.name, proc.output()),
                    None => running += 1,
                }
            }
            if running == 0 {
                return;
            }
            if Instant::now() > deadline {
                let stuck: Vec<String> = self
                    .0
                    .iter_mut()
                    .filter_map(|p| (p.name.starts_with(which) && p.child.try_wait().unwrap().is_none()).then_some(&*p))
                    .map(|p| format!("{}: {}", p.name, p.output()))
                    .collect();
                panic!("{running} processes still running at the time limit:\n{}", stuck.join("\n"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Fail now if a child has exited unsuccessfully already.
    pub fn check(&mut self) {
        for proc in &mut self.0 {
            if let Some(status) = proc.child.try_wait().unwrap() {
                assert!(status.success(), "{} failed ({status}); {}", proc.name, proc.output());
            }
        }
    }
}

impl Drop for Procs {
    fn drop(&mut self) {
        for proc in &mut self.0 {
            if proc.child.try_wait().ok().flatten().is_none() {
                let _ = proc.child.kill();
                let _ = proc.child.wait();
            }
        }
    }
}

/// The numbers in `line`, in order (to read a child's summary line).
pub fn numbers(line: &str) -> Vec<u64> {
    line.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse().ok()).collect()
}

/// A child's printer of the lines its parent watches: each line is flushed at once, so a kill
/// finds in the pipe every line printed before it, and an announcement printed before a call is
/// there if the kill comes during the call. The test harness has printed the start of a line
/// ("test child_entry ... "): this ends it first, so the child's first line has a line of its own.
pub fn child_lines() -> impl FnMut(String) {
    let mut out = std::io::stdout().lock();
    writeln!(out).unwrap();
    move |line| {
        writeln!(out, "{line}").unwrap();
        out.flush().unwrap();
    }
}

/// A child (`child_entry`) whose stdout the parent reads line by line as it comes, to kill it at a
/// moment picked from what it printed; its stderr goes to a file. Killed when dropped (when the
/// parent fails before it kills it).
pub struct Watched {
    /// Who it is, for messages (e.g. `redb round 3`).
    what: String,
    child: Child,
    err: PathBuf,
    /// The lines the reader thread read, each with the moment it read it.
    lines: Receiver<(Instant, String)>,
    reader: Option<JoinHandle<()>>,
}

impl Watched {
    /// Start `child_entry` with the environment variables `env`; its stderr goes to `err`.
    pub fn spawn(what: String, err: &Path, env: impl IntoIterator<Item = (&'static str, OsString)>) -> Watched {
        let mut child = child_command()
            .envs(env)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(File::create(err).unwrap())
            .spawn()
            .unwrap();
        // A thread reads the child's lines as they come, with the time each arrived: the parent
        // waits on them with a time limit, and a blocking read has none.
        let (send, lines) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
        Watched { what, child, err: err.to_owned(), lines, reader: Some(reader) }
    }

    /// Read the child's lines as they come, handing each (with the moment it was read) to `aim`
    /// until `aim` returns the moment to kill the child; SIGKILL it then and return every line it
    /// printed, those still in the pipe at the kill included (the last of them is what it was doing
    /// when killed). Fails, naming the child, its last lines and its stderr, when it exits before,
    /// or when `aim` has picked no moment within `limit`: every wait is bounded, so a child that
    /// is stuck or never does what the parent waits for fails the test instead of hanging it.
    pub fn kill_when(
        mut self,
        limit: Duration,
        waiting_for: &str,
        mut aim: impl FnMut(Instant, &str) -> Option<Instant>,
    ) -> Vec<(Instant, String)> {
        let give_up = Instant::now() + limit;
        let mut seen: Vec<(Instant, String)> = Vec::new();
        let mut kill_at: Option<Instant> = None;
        loop {
            let until = kill_at.unwrap_or(give_up);
            let now = Instant::now();
            if now >= until {
                break;
            }
            match self.lines.recv_timeout(until - now) {
                Ok((at, line)) => {
                    if kill_at.is_none() {
                        kill_at = aim(at, &line);
                    }
                    seen.push((at, line));
                }
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait().unwrap();
                    panic!("{}: the child exited ({status}) before it was killed; {}", self.what, self.tail(&seen));
                }
            }
        }
        if kill_at.is_none() {
            panic!("{}: no {waiting_for} within {limit:?}; {}", self.what, self.tail(&seen));
        }
        // SIGKILL: no destructor, no flush of anything but what was already written.
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        self.reader.take().unwrap().join().unwrap();
        seen.extend(self.lines.try_iter());
        seen
    }

    /// The last lines of `seen` and the child's stderr, for a message.
    fn tail(&self, seen: &[(Instant, String)]) -> String {
        // The child's own lines, not the test harness's that end its output.
        let harness = |l: &str| {
            l.is_empty() || ["test ", "running ", "failures", "    ", "---- "].iter().any(|p| l.starts_with(p))
        };
        let mut last: Vec<&String> = seen.iter().rev().map(|(_, l)| l).filter(|l| !harness(l)).take(16).collect();
        last.reverse();
        let err = std::fs::read_to_string(&self.err).unwrap_or_default();
        format!("its last lines: {last:?}; its stderr:\n{err}")
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// How long after a child announces an operation to kill it, so that most kills land inside the
/// operation: a random moment within a share of the time the last such operation took as the
/// parent saw it (from its announcement to its acknowledgement), and never more than a cap, so a
/// round stays short whatever one call took. The share grows a little while kills land inside and
/// shrinks more when one comes after the operation finished: pipe and signal delays, and how fast
/// operations are, differ between backends, builds and machines, and a share that suits one
/// would miss on another.
pub struct Aim {
    cap: Duration,
    took: BTreeMap<String, Duration>,
    share: BTreeMap<String, f64>,
}

impl Aim {
    /// The share of the last call's time to start from, before any kill has landed or missed.
    const START: f64 = 0.6;

    pub fn new(cap: Duration) -> Aim {
        Aim { cap, took: BTreeMap::new(), share: BTreeMap::new() }
    }

    /// How long after an announcement of `op` to kill, for the random number `draw`.
    pub fn delay(&self, op: &str, draw: u64) -> Duration {
        let took = self.took.get(op).copied().unwrap_or(Duration::from_millis(1));
        let bound = took.mul_f64(self.share.get(op).copied().unwrap_or(Self::START)).min(self.cap);
        Duration::from_micros(draw % (bound.as_micros() as u64 + 1))
    }

    /// An `op` took `took` from its announcement to its acknowledgement, as the parent saw them.
    pub fn took(&mut self, op: &str, took: Duration) {
        self.took.insert(op.to_owned(), took.max(Duration::from_micros(100)));
    }

    /// A kill aimed at `op` landed inside it (the child's last line announced it), or not.
    pub fn landed(&mut self, op: &str, inside: bool) {
        let share = self.share.entry(op.to_owned()).or_insert(Self::START);
        *share = if inside { (*share * 1.05).min(1.2) } else { (*share * 0.7).max(0.02) };
    }
}

/// The kills of one operation in a crash test: aimed at it, landed during it of those, and landed
/// during it in all (those aimed at another operation that came first included).
#[derive(Default, Debug, Clone, Copy)]
pub struct Kills {
    pub aimed: u64,
    pub landed: u64,
    pub during: u64,
}

/// `tally` in words: per operation, the kills during it, and how many of those aimed at it landed.
pub fn tallies(tally: &BTreeMap<&str, Kills>) -> String {
    let each = tally.iter().map(|(op, t)| format!("{op} {} ({} of {} aimed at one)", t.during, t.landed, t.aimed));
    each.collect::<Vec<_>>().join(", ")
}

/// Panics (naming what differs) unless `a` and `b` hold the same history: the same branches and
/// tags naming the same commits, the same log on every branch, and every commit of every log
/// holding the same keys and values.
pub fn assert_same_history(a: &Database, b: &Database) {
    assert_eq!(a.branches().unwrap(), b.branches().unwrap(), "branches");
    assert_eq!(a.tags().unwrap(), b.tags().unwrap(), "tags");
    let mut seen = std::collections::BTreeSet::new();
    for (branch, _) in a.branches().unwrap() {
        let (ours, theirs) =
            (a.on_branch(&branch).unwrap().log().unwrap(), b.on_branch(&branch).unwrap().log().unwrap());
        assert_eq!(ours, theirs, "the log of branch {branch}");
        for commit in ours.into_iter().filter(|c| seen.insert(c.id)) {
            let at = VersionRef::Commit(commit.id);
            let what = format!("commit {}", commit.id);
            let (x, y) = (a.open_version(&at).unwrap(), b.open_version(&at).unwrap());
            assert_eq!(contents(x.store().as_ref(), &what), contents(y.store().as_ref(), &what), "{what}");
        }
    }
    assert_eq!(contents(a.store().as_ref(), "head"), contents(b.store().as_ref(), "head"), "main's head");
}

/// 20 versions of an array of 8 chunks (of 1,000 `u32`, so values land outside their entries),
/// some tagged, and a branch `dev` with two commits merged back.
pub fn twenty_versions(db: &Database) {
    let a = zarrdb::Array::create(
        db.store(),
        "/a",
        zarrdb::ArrayMetadata::new(zarrdb::DataType::UInt32, vec![8000], vec![1000]),
    )
    .unwrap();
    for round in 0u32..17 {
        let chunk = u64::from(round % 8);
        let values: Vec<u32> = (0..1000).map(|i| round * 10_000 + i).collect();
        a.write_region(&[chunk * 1000], &[1000], &values).unwrap();
        if round % 5 == 0 {
            db.tag(&format!("r{round}"), &VersionRef::Branch("main".into())).unwrap();
        }
    }
    db.create_branch("dev", &VersionRef::Branch("main".into())).unwrap();
    let dev = db.on_branch("dev").unwrap();
    let on_dev = zarrdb::Array::open(dev.store(), "/a").unwrap();
    on_dev.write_region(&[7000], &[2], &[7u32, 7]).unwrap();
    on_dev.write_region(&[7002], &[2], &[8u32, 8]).unwrap();
    db.merge(&VersionRef::Branch("dev".into()), "main", "merge dev").unwrap();
    // A key deleted by a later commit.
    db.store().set("gone/zarr.json", br#"{"zarr_format":3,"node_type":"group"}"#).unwrap();
    db.store().erase("gone/zarr.json").unwrap();
}
