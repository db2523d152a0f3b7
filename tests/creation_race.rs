//! The creation race of the spec's implementation notes (DESIGN.md §7): one side creates an array
//! at P while the other creates P/child — an array or a group, with `Parents::Explicit` (P becomes
//! an explicit group) or `Parents::Implicit` (P stays an implicit group). Each creation checks the
//! hierarchy and writes in one transaction, so every round has exactly one winner:
//! - the array at P wins, and P/child fails with `NodeError::ParentIsArray`, or
//! - P/child wins, and the array fails with `NodeError::AlreadyExists` (P is a group, explicit or
//!   implicit as asked, holding the child);
//!
//! and P is never an array with a child. After all rounds the whole hierarchy is walked
//! (`common/hierarchy_walk.rs`): no node under an array, no stray key.
//!
//! Each round uses a fresh P; the four variants take turns. Two threads of one process race on
//! redb, LMDB and sled databases (the database's writer lock serializes the transactions), and two
//! processes race on one LMDB folder (LMDB's own writer lock, held from begin to commit): the test
//! re-runs its own binary twice as `child_entry`, sends both children each round's command on stdin
//! and reads their outcomes on stdout; each process plays each side in turn.
//!
//! A MemoryStore is not raced: it has no transactions (`begin_scope` gives `None`), so a creation's
//! check and write are separate steps and both sides can win, leaving an array with a child — the
//! race the spec warns about, which only a transactional store rules out.

#[path = "common/hierarchy_walk.rs"]
mod hierarchy_walk;

use std::io::{BufRead, BufReader, Lines, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Barrier};

use zarrdb::error::NodeError;
use zarrdb::hierarchy::Parents;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Durability, Error, Group, Node, Store};

const ROUNDS: usize = 200;
const DB_ENV: &str = "ZARRDB_RACE_DB";
/// Marks the lines of the child's protocol (libtest may print in front of them).
const TAG: &str = "RACE ";

/// What the other side creates under P.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Array,
    Group,
}

const VARIANTS: [(Kind, Parents); 4] = [
    (Kind::Array, Parents::Explicit),
    (Kind::Group, Parents::Explicit),
    (Kind::Array, Parents::Implicit),
    (Kind::Group, Parents::Implicit),
];

/// One side's result, as both a thread and a child process can report it.
#[derive(Debug, PartialEq, Eq)]
enum Got {
    Ok,
    AlreadyExists(String),
    ParentIsArray(String, String),
    Other(String),
}

impl Got {
    fn of(result: Result<(), Error>) -> Got {
        match result {
            Ok(()) => Got::Ok,
            Err(Error::Node(NodeError::AlreadyExists { path })) => Got::AlreadyExists(path),
            Err(Error::Node(NodeError::ParentIsArray { path, array })) => Got::ParentIsArray(path, array),
            Err(e) => Got::Other(e.to_string().replace('\n', " ")),
        }
    }

    fn to_line(&self) -> String {
        match self {
            Got::Ok => "ok".into(),
            Got::AlreadyExists(p) => format!("exists {p}"),
            Got::ParentIsArray(p, a) => format!("parent-is-array {p} {a}"),
            Got::Other(e) => format!("other {e}"),
        }
    }

    fn from_line(line: &str) -> Got {
        let words: Vec<&str> = line.split(' ').collect();
        match words[..] {
            ["ok"] => Got::Ok,
            ["exists", p] => Got::AlreadyExists(p.into()),
            ["parent-is-array", p, a] => Got::ParentIsArray(p.into(), a.into()),
            _ => Got::Other(line.into()),
        }
    }
}

fn array_meta() -> ArrayMetadata {
    ArrayMetadata::new(DataType::Int32, vec![4], vec![2])
}

/// The array side: an array at `p`.
fn create_array(store: &Arc<dyn Store>, p: &str) -> Got {
    Got::of(Array::create(store.clone(), p, array_meta()).map(drop))
}

/// The other side: `p/child`.
fn create_child(store: &Arc<dyn Store>, p: &str, (kind, parents): (Kind, Parents)) -> Got {
    let child = format!("{p}/child");
    Got::of(match kind {
        Kind::Array => Array::create_with(store.clone(), &child, array_meta(), parents).map(drop),
        Kind::Group => Group::create_with(store.clone(), &child, Default::default(), parents).map(drop),
    })
}

/// Which side won a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Winner {
    Array,
    Child,
}

/// Check a round: exactly one winner, the loser's typed error, and what the store holds at P.
fn judge(store: &Arc<dyn Store>, p: &str, variant: (Kind, Parents), array: Got, child: Got) -> Winner {
    let child_path = format!("{p}/child");
    let ctx = format!("P = {p}, child {variant:?}: array side {array:?}, child side {child:?}");
    let winner = match (&array, &child) {
        (Got::Ok, Got::ParentIsArray(path, a)) if *path == child_path && a == p => Winner::Array,
        (Got::AlreadyExists(path), Got::Ok) if path == p => Winner::Child,
        _ => panic!("{ctx}: not exactly one winner with the loser's typed error"),
    };
    let node = Node::open(store.clone(), p).unwrap_or_else(|e| panic!("{ctx}: P does not open: {e}"));
    let under = Node::open(store.clone(), &child_path);
    match (winner, node) {
        (Winner::Array, Node::Array(_)) => {
            assert!(matches!(under, Err(Error::Node(NodeError::NotFound { .. }))), "{ctx}: the child is {under:?}");
            let keys = store.list_prefix(&format!("{}/", &p[1..])).unwrap();
            assert_eq!(keys, [format!("{}/zarr.json", &p[1..])], "{ctx}: keys under the array");
        }
        (Winner::Child, Node::Group(g)) => {
            assert_eq!(g.is_implicit(), variant.1 == Parents::Implicit, "{ctx}: P is {g:?}");
            let kind = match under {
                Ok(Node::Array(_)) => Kind::Array,
                Ok(Node::Group(_)) => Kind::Group,
                Err(e) => panic!("{ctx}: the child does not open: {e}"),
            };
            assert_eq!(kind, variant.0, "{ctx}: the child's kind");
        }
        (_, node) => panic!("{ctx}: P is {node:?}"),
    }
    winner
}

/// After all rounds: the whole hierarchy is valid and holds one node per round at P (plus the
/// child when it won).
fn check_all(store: &Arc<dyn Store>, winners: &[Winner]) {
    let nodes = hierarchy_walk::walk(store).unwrap_or_else(|e| panic!("after the race: {e}"));
    let children = winners.iter().filter(|w| **w == Winner::Child).count();
    // "/", "/race", every P, and the children that won.
    assert_eq!(nodes.len(), 2 + winners.len() + children, "nodes after the race: {:?}", nodes.keys());
}

fn tally(what: &str, winners: &[Winner]) {
    let arrays = winners.iter().filter(|w| **w == Winner::Array).count();
    eprintln!("{what}: {} rounds, the array won {arrays}, the child won {}", winners.len(), winners.len() - arrays);
}

fn fresh(backend: Backend) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::builder().backend(backend).durability(Durability::Fast).create(dir.path().join("db")).unwrap();
    (dir, db)
}

fn race_threads(backend: Backend) {
    let (_dir, db) = fresh(backend);
    let store = db.store();
    Group::create(store.clone(), "/race", Default::default()).unwrap();
    let barrier = Barrier::new(2);
    let mut winners = Vec::new();
    for round in 0..ROUNDS {
        let p = format!("/race/p{round}");
        let variant = VARIANTS[round % VARIANTS.len()];
        let (array, child) = std::thread::scope(|s| {
            let a = s.spawn(|| {
                barrier.wait();
                create_array(&store, &p)
            });
            let c = s.spawn(|| {
                barrier.wait();
                create_child(&store, &p, variant)
            });
            (a.join().unwrap(), c.join().unwrap())
        });
        winners.push(judge(&store, &p, variant, array, child));
    }
    check_all(&store, &winners);
    tally(&format!("{backend:?}, two threads"), &winners);
}

#[test]
fn redb_two_threads_one_winner() {
    race_threads(Backend::Redb);
}

#[test]
fn lmdb_two_threads_one_winner() {
    race_threads(Backend::Lmdb);
}

#[test]
fn sled_two_threads_one_winner() {
    race_threads(Backend::Sled);
}

// ---------------------------------------------------------------------------------------------
// Two processes on one LMDB folder
// ---------------------------------------------------------------------------------------------

/// The child process; does nothing in a normal test run. Reads `array P` or
/// `child P array|group explicit|implicit` lines, runs each and answers with its outcome.
#[test]
fn child_entry() {
    let Some(path) = std::env::var_os(DB_ENV) else { return };
    let db = Database::builder().backend(Backend::Lmdb).durability(Durability::Fast).open(&path).unwrap();
    let store = db.store();
    let mut out = std::io::stdout().lock();
    writeln!(out, "{TAG}ready").and_then(|()| out.flush()).unwrap();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let got = match line.split(' ').collect::<Vec<_>>()[..] {
            ["array", p] => create_array(&store, p),
            ["child", p, kind, parents] => {
                let kind = if kind == "array" { Kind::Array } else { Kind::Group };
                let parents = if parents == "implicit" { Parents::Implicit } else { Parents::Explicit };
                create_child(&store, p, (kind, parents))
            }
            _ => panic!("unknown command {line:?}"),
        };
        writeln!(out, "{TAG}{}", got.to_line()).and_then(|()| out.flush()).unwrap();
    }
}

/// A running child with its command pipe and answer lines.
struct Racer {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    stderr: std::path::PathBuf,
}

impl Racer {
    fn start(db: &Path, n: usize) -> Racer {
        let stderr = db.with_extension(format!("child{n}-stderr"));
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
            .env(DB_ENV, db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut racer = Racer { child, stdin, lines, stderr };
        assert_eq!(racer.answer(), "ready");
        racer
    }

    fn send(&mut self, command: &str) {
        writeln!(self.stdin, "{command}").and_then(|()| self.stdin.flush()).unwrap();
    }

    /// The next protocol line, without its tag.
    fn answer(&mut self) -> String {
        for line in self.lines.by_ref() {
            let line = line.unwrap();
            if let Some(at) = line.find(TAG) {
                return line[at + TAG.len()..].to_owned();
            }
        }
        let status = self.child.wait().unwrap();
        panic!("a child ended ({status}); stderr:\n{}", std::fs::read_to_string(&self.stderr).unwrap_or_default());
    }

    fn finish(mut self) {
        drop(self.stdin);
        let status = self.child.wait().unwrap();
        let stderr = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        assert!(status.success(), "a child failed ({status}); stderr:\n{stderr}");
    }
}

#[test]
fn lmdb_two_processes_one_winner() {
    let (dir, db) = fresh(Backend::Lmdb);
    let store = db.store();
    Group::create(store.clone(), "/race", Default::default()).unwrap();
    let path = dir.path().join("db");
    let mut racers = [Racer::start(&path, 0), Racer::start(&path, 1)];
    let mut winners = Vec::new();
    for round in 0..ROUNDS {
        let p = format!("/race/p{round}");
        // Each process plays each side in each variant.
        let variant = VARIANTS[(round / 2) % VARIANTS.len()];
        let (kind, parents) = (format!("{:?}", variant.0), format!("{:?}", variant.1));
        let a = round % 2;
        racers[a].send(&format!("array {p}"));
        racers[1 - a].send(&format!("child {p} {} {}", kind.to_lowercase(), parents.to_lowercase()));
        let array = Got::from_line(&racers[a].answer());
        let child = Got::from_line(&racers[1 - a].answer());
        winners.push(judge(&store, &p, variant, array, child));
    }
    for racer in racers {
        racer.finish();
    }
    check_all(&store, &winners);
    tally("LMDB, two processes", &winners);
}
