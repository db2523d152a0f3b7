//! Helpers shared by the tests of history that run this test binary again as child processes
//! (`history_crash`, `history_collect_crash`, `history_processes`, `history_gc_processes`) and by
//! the model test (`history_model`): the settings read from the environment, opening a database
//! that keeps history, what a version holds (read whole, and hashed to one number), the checks of
//! a version after a kill, and the children themselves.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::str::FromStr;
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
