//! The writer campaign of a bucket database (issue 43), shared by `tests/bucket_writer_campaign*.rs`:
//! eight writer processes (children of the test binary, `child_entry`), four of them in network
//! namespaces of their own where the test can make them (`common/netns.rs`), each reaching
//! SeaweedFS through an S3 gateway of its own, the other four through the filer's gateway on
//! 127.0.0.1 (`seaweed::cluster`: one master, three volume servers, a filer), run read-modify-write
//! transactions on one bucket database for a while, and the parent then checks the database
//! against what they were told.
//!
//! The database keeps history, and each transaction commits with a message naming it (writer,
//! life, operation, attempt) and the values it read: `/counters` (Int64, chunks of 8) holds a
//! counter of each writer's own, in a chunk only it writes, and three shared counters, in chunks
//! every writer writes; an operation increments its own counter and, three times in four, one of
//! the shared ones. A `Conflict` runs the operation again (a new attempt); any other error too,
//! after a pause, the failed attempt's commit in doubt (its answer may have been lost, as when a
//! volume server dies). A writer SIGKILLed in a commit leaves that attempt in doubt too, and is
//! started again (its next life) at once.
//!
//! The checks, from the writers' lines and the history (`Database::log`) of a fresh open:
//! - every acknowledged commit is in the history, exactly once; every commit in the history was
//!   acknowledged or in doubt, none was refused with a `Conflict`;
//! - replayed in the history's order, each commit read, of its own counter and of the shared
//!   one, the number of commits before it that incremented them (a lost update or a
//!   non-serializable interleaving breaks this), and the counters hold those numbers;
//! - a `Conflict` names a chunk the transaction read; on the writer's own chunk (which no other
//!   writer writes) only when a commit of its own was in doubt before (it landed after all);
//! - the head is a commit that was acknowledged or in flight;
//! - `zarrdb check` of the database passes.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use zarrdb::error::TransactionError;
use zarrdb::{Array, ArrayMetadata, DataType, Database, Error};

use crate::netns::Hosts;
use crate::seaweed::cluster::Cluster;
use crate::seaweed::BUCKET;

pub const WRITERS: u64 = 8;
/// Writers `HOSTED..WRITERS` run in namespaces, where there are some.
const HOSTED: u64 = 4;
const LEN: u64 = 96;
const CHUNK: u64 = 8;
/// The shared counters, in chunks 0, 1 and 2 of `/counters`.
const SHARED: [u64; 3] = [0, 9, 18];
const DB_ENV: &str = "ZARRDB_CAMPAIGN_DB";
const WRITER_ENV: &str = "ZARRDB_CAMPAIGN_WRITER";
const LIFE_ENV: &str = "ZARRDB_CAMPAIGN_LIFE";
const UNTIL_ENV: &str = "ZARRDB_CAMPAIGN_UNTIL";
/// The long campaign's length in seconds (default 120).
pub const SECONDS_ENV: &str = "ZARRDB_CAMPAIGN_SECONDS";
/// How long writers may go on after the end of the run (an operation under way finishes).
const GRACE: Duration = Duration::from_secs(150);

/// The long campaign's length.
pub fn long_seconds() -> u64 {
    std::env::var(SECONDS_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(120)
}

/// Writer `w`'s own counter, in chunk 4 + w of `/counters`, which no other writer touches.
fn own(w: u64) -> u64 {
    32 + CHUNK * w + w
}

/// The shared counter operation `i` of life `life` of writer `w` increments, if any.
fn shared(w: u64, life: u64, i: u64) -> Option<u64> {
    (i % 4 != 3).then(|| SHARED[((i + w + life) % 3) as usize])
}

fn millis_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

/// The child process (`child_entry` of the test files); does nothing in a normal test run.
pub fn child_entry() {
    let var = |name| std::env::var(name).ok();
    let (Some(locator), Some(w), Some(life), Some(until)) =
        (var(DB_ENV), var(WRITER_ENV), var(LIFE_ENV), var(UNTIL_ENV))
    else {
        return;
    };
    let (w, life, until): (u64, u64, u64) = (w.parse().unwrap(), life.parse().unwrap(), until.parse().unwrap());
    let mut out = std::io::stdout().lock();
    // The harness has printed "test child_entry ... " without ending the line.
    writeln!(out).unwrap();
    let mut say = |line: String| {
        writeln!(out, "{line}").unwrap();
        out.flush().unwrap();
    };
    // The open may fail while a volume server is down: tried again until the end.
    let db = loop {
        match Database::open(&locator) {
            Ok(db) => break db,
            Err(e) if millis_now() < until => {
                say(format!("openfail {w} {life} {}", one_line(&e)));
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("writer {w}: open {locator}: {e}"),
        }
    };
    assert!(db.keeps_history(), "writer {w}: the database keeps no history");
    let (mut i, mut t) = (0u64, 0u64);
    while millis_now() < until {
        let s = shared(w, life, i);
        let attempt = |say: &mut dyn FnMut(String)| -> Result<String, Error> {
            let txn = db.begin_write()?;
            let counters = Array::open(txn.store(), "/counters")?;
            let mine = counters.read_region::<i64>(&[own(w)], &[1])?[0];
            counters.write_region(&[own(w)], &[1], &[mine + 1])?;
            let read = match s {
                Some(s) => {
                    let value = counters.read_region::<i64>(&[s], &[1])?[0];
                    counters.write_region(&[s], &[1], &[value + 1])?;
                    format!("{s} {value}")
                }
                None => "- -".to_owned(),
            };
            drop(counters);
            let message = format!("cw {w} {life} {i} {t} own {mine} shared {read}");
            say(format!("try {message}"));
            txn.commit_with(&message, "")?;
            Ok(message)
        };
        match attempt(&mut say) {
            Ok(message) => {
                say(format!("ack {message}"));
                (i, t) = (i + 1, 0);
            }
            Err(Error::Transaction(TransactionError::Conflict { key })) => {
                let s = s.map_or("-".to_owned(), |s| s.to_string());
                say(format!("conflict {w} {life} {i} {t} {s} {key}"));
                t += 1;
            }
            Err(e) => {
                say(format!("error {w} {life} {i} {t} {}", one_line(&e)));
                t += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
    say(format!("done {w} {life}"));
}

fn one_line(e: &dyn std::fmt::Display) -> String {
    e.to_string().replace('\n', " ")
}

/// What a campaign does besides the writers' transactions.
#[derive(Clone, Copy)]
pub struct Plan {
    pub seconds: u64,
    /// SIGKILL a writer at random moments (on average every `kill_every`) and start it again.
    pub kill_writers: Option<Duration>,
    /// Kill volume server 0 a third of the way in and start it again at two thirds.
    pub kill_volume: bool,
    /// Kills the campaign must make at least (a campaign that made fewer checked less).
    pub min_kills: u64,
}

/// One life of a writer process.
struct Life {
    w: u64,
    life: u64,
    child: Child,
    out: PathBuf,
    err: PathBuf,
    killed: bool,
}

impl Life {
    fn output(&self) -> String {
        let out = std::fs::read_to_string(&self.out).unwrap_or_default();
        let err = std::fs::read_to_string(&self.err).unwrap_or_default();
        let tail: Vec<&str> = out.lines().rev().take(20).collect::<Vec<_>>().into_iter().rev().collect();
        format!("last lines:\n{}\nstderr:\n{err}", tail.join("\n"))
    }
}

/// Every life, killed when dropped (a failing test).
struct Lives(Vec<Life>);

impl Drop for Lives {
    fn drop(&mut self) {
        for l in &mut self.0 {
            if l.child.try_wait().ok().flatten().is_none() {
                let _ = l.child.kill();
                let _ = l.child.wait();
            }
        }
    }
}

/// The campaign `name` under `plan`; panics on any failed check, prints the figures.
pub fn run(name: &str, plan: Plan) {
    let started = Instant::now();
    let hosts = match Hosts::make(HOSTED as usize) {
        Ok(hosts) => Some(hosts),
        Err(why) => {
            println!("{name}: no network namespaces ({why}): all {WRITERS} writers run on this host");
            None
        }
    };
    let gateways: Vec<_> = hosts.iter().flat_map(|h| h.0.iter().map(|h| h.outside)).collect();
    let mut cluster = Cluster::start(&gateways).unwrap_or_else(|e| panic!("{name}: {e}"));
    cluster.set_env();
    let locator = format!("zarrdb+s3://{BUCKET}/{name}-{}", std::process::id());
    let mut builder = Database::builder();
    builder.history(true);
    let db = builder.create(&locator).unwrap_or_else(|e| panic!("{name}: create {locator}: {e}"));
    Array::create(db.store(), "/counters", ArrayMetadata::new(DataType::Int64, vec![LEN], vec![CHUNK])).unwrap();
    drop(db);

    let dir = tempfile::tempdir().unwrap();
    let endpoints: Vec<String> = (0..gateways.len()).map(|g| cluster.gateway(g)).collect();
    let until = millis_now() + plan.seconds * 1000;
    let end = Instant::now() + Duration::from_secs(plan.seconds);
    let spawn = |w: u64, life: u64| -> Life {
        let out = dir.path().join(format!("w{w}.l{life}.out"));
        let err = dir.path().join(format!("w{w}.l{life}.err"));
        let exe = std::env::current_exe().unwrap();
        let host = hosts.as_ref().filter(|_| w >= HOSTED).map(|_| (w - HOSTED) as usize);
        let mut command = match host {
            Some(h) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", &hosts.as_ref().unwrap().0[h].name]).arg(exe);
                c.env("AWS_ENDPOINT", &endpoints[h]);
                c
            }
            None => Command::new(exe),
        };
        command.args(["--exact", "child_entry", "--nocapture", "--test-threads=1"]);
        let child = command
            .env(DB_ENV, &locator)
            .env(WRITER_ENV, w.to_string())
            .env(LIFE_ENV, life.to_string())
            .env(UNTIL_ENV, until.to_string())
            .stdin(Stdio::null())
            .stdout(File::create(&out).unwrap())
            .stderr(File::create(&err).unwrap())
            .spawn()
            .unwrap();
        Life { w, life, child, out, err, killed: false }
    };
    let mut lives = Lives((0..WRITERS).map(|w| spawn(w, 0)).collect());
    let mut current: Vec<usize> = (0..WRITERS as usize).collect();
    let mut rng = (std::process::id() as u64) << 20 | 0x9e37;
    let mut random = move |bound: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % bound.max(1)
    };
    let draw = |random: &mut dyn FnMut(u64) -> u64, mean: Duration| {
        Duration::from_millis(random(2 * mean.as_millis() as u64 + 1))
    };
    let mut next_kill = plan.kill_writers.map(|mean| Instant::now() + draw(&mut random, mean));
    let (volume_down, volume_up) =
        (end - Duration::from_secs(plan.seconds * 2 / 3), end - Duration::from_secs(plan.seconds / 3));
    let mut volume = if plan.kill_volume { 0 } else { 2 };
    let (mut kills, mut kills_in_commit) = (0u64, 0u64);
    while Instant::now() < end {
        let now = Instant::now();
        if volume == 0 && now >= volume_down {
            cluster.kill_volume(0);
            println!("{name}: volume server 0 killed at {:.1?}", started.elapsed());
            volume = 1;
        } else if volume == 1 && now >= volume_up {
            cluster.restart_volume(0).unwrap_or_else(|e| panic!("{name}: {e}"));
            println!("{name}: volume server 0 started again at {:.1?}", started.elapsed());
            volume = 2;
        }
        if let (Some(at), Some(mean)) = (next_kill, plan.kill_writers) {
            if now >= at {
                let w = random(WRITERS) as usize;
                let life = &mut lives.0[current[w]];
                if life.child.try_wait().unwrap().is_none() {
                    life.child.kill().unwrap();
                    life.child.wait().unwrap();
                    life.killed = true;
                    kills += 1;
                    let out = std::fs::read_to_string(&life.out).unwrap_or_default();
                    kills_in_commit += u64::from(out.lines().last().is_some_and(|l| l.starts_with("try ")));
                    let next = spawn(w as u64, life.life + 1);
                    lives.0.push(next);
                    current[w] = lives.0.len() - 1;
                }
                next_kill = Some(Instant::now() + draw(&mut random, mean));
            }
        }
        for l in &mut lives.0 {
            if let Some(status) = l.child.try_wait().unwrap() {
                assert!(
                    l.killed || status.success(),
                    "{name}: writer {} life {} failed ({status}); {}",
                    l.w,
                    l.life,
                    l.output()
                );
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let limit = Instant::now() + GRACE;
    for l in &mut lives.0 {
        loop {
            match l.child.try_wait().unwrap() {
                Some(status) => {
                    assert!(
                        l.killed || status.success(),
                        "{name}: writer {} life {} failed ({status}); {}",
                        l.w,
                        l.life,
                        l.output()
                    );
                    break;
                }
                None if Instant::now() > limit => {
                    panic!(
                        "{name}: writer {} life {} still running {GRACE:?} after the end; {}",
                        l.w,
                        l.life,
                        l.output()
                    )
                }
                None => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
    let ran = started.elapsed();

    let mut told = Told::default();
    for l in &lives.0 {
        told.read(l);
    }
    let db = Database::open(&locator).unwrap_or_else(|e| panic!("{name}: open after the run: {e}"));
    let log = db.log().unwrap_or_else(|e| panic!("{name}: log: {e}"));
    let counters = Array::open(db.store(), "/counters").unwrap().read_all::<i64>().unwrap();
    drop(db);
    let figures = told.check(&log, &counters);
    let hosts_note = match &hosts {
        Some(h) => {
            let at: Vec<String> = h.0.iter().map(|h| format!("{} at {}", h.name, h.inside)).collect();
            format!("{} writers in network namespaces: {}", h.0.len(), at.join(", "))
        }
        None => "no network namespaces".to_owned(),
    };
    let summary = format!(
        "{name}: {WRITERS} writers ({hosts_note}) for {}s, {ran:.1?} in all: {figures}; {kills} writer kills \
         ({kills_in_commit} between a commit's start and its answer)",
        plan.seconds
    );
    println!("{summary}");
    assert!(kills >= plan.min_kills, "{name}: {kills} kills, fewer than {}; {summary}", plan.min_kills);

    let check = Command::new(env!("CARGO_BIN_EXE_zarrdb")).args(["check", &locator]).output().unwrap();
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(
        check.status.success() && stdout.contains(": 0 problems"),
        "{name}: zarrdb check {locator} ({}): {stdout}{}",
        check.status,
        String::from_utf8_lossy(&check.stderr)
    );
    drop(cluster);
    drop(hosts);
}

/// What the writers' lines say.
#[derive(Default)]
struct Told {
    acked: BTreeSet<String>,
    /// Commits whose answer never came (killed, or an error): maybe in the history.
    doubt: BTreeSet<String>,
    /// Commits refused with a conflict: not in the history.
    refused: BTreeSet<String>,
    conflicts: u64,
    conflicts_own: u64,
    errors: u64,
    open_failures: u64,
    /// Acknowledged operations that needed more than one attempt.
    retried: u64,
}

impl Told {
    fn read(&mut self, l: &Life) {
        let mut out = std::fs::read_to_string(&l.out).unwrap();
        if l.killed && !out.ends_with('\n') {
            // A line cut by the kill.
            out.truncate(out.rfind('\n').map_or(0, |at| at + 1));
        }
        let (w, life) = (l.w, l.life);
        let mut pending: Option<String> = None;
        // Commits of this writer in doubt so far (this life and those before: lives are read in
        // order of their start for each writer).
        let doubts_before = self.doubt.iter().filter(|m| m.starts_with(&format!("cw {w} "))).count();
        let mut doubts = doubts_before;
        for line in out.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let Some((&kind, rest)) = fields.split_first() else { continue };
            let message = rest.join(" ");
            match kind {
                "try" => {
                    assert!(pending.is_none(), "writer {w} life {life}: a try with another pending: {line:?}");
                    assert_eq!((rest[1], rest[2]), (&*w.to_string(), &*life.to_string()), "{line:?}");
                    pending = Some(message);
                }
                "ack" => {
                    assert_eq!(pending.take().as_ref(), Some(&message), "writer {w} life {life}: {line:?}");
                    self.retried += u64::from(rest[4] != "0");
                    self.acked.insert(message);
                }
                "conflict" => {
                    self.conflicts += 1;
                    let tried = pending.take();
                    // `conflict w life i t s key`: the chunk named must be one the transaction read.
                    let (s, key) = (rest[4], rest[5]);
                    let chunk =
                        key.trim_start_matches('/').strip_prefix("counters/c/").and_then(|c| c.parse::<u64>().ok());
                    let own_chunk = own(w) / CHUNK;
                    let shared_chunk = s.parse::<u64>().ok().map(|s| s / CHUNK);
                    match chunk {
                        Some(c) if c == own_chunk => {
                            self.conflicts_own += 1;
                            assert!(
                                doubts > 0,
                                "writer {w} life {life}: a conflict on its own chunk {key}, which only it writes, with \
                                 none of its commits in doubt before: {line:?}"
                            );
                        }
                        Some(c) if Some(c) == shared_chunk => {}
                        _ => panic!(
                            "writer {w} life {life}: a conflict on {key}, which the transaction did not read: {line:?}"
                        ),
                    }
                    if let Some(tried) = tried {
                        self.refused.insert(tried);
                    }
                }
                "error" => {
                    self.errors += 1;
                    if let Some(tried) = pending.take() {
                        self.doubt.insert(tried);
                        doubts += 1;
                    }
                }
                "openfail" => self.open_failures += 1,
                _ => {}
            }
        }
        if let Some(tried) = pending {
            assert!(l.killed, "writer {w} life {life} ended with a commit unanswered: {tried}");
            self.doubt.insert(tried);
        }
    }

    /// Check the history `log` (newest first) and the final `counters` against what was told;
    /// the figures, in words.
    fn check(&self, log: &[zarrdb::db::CommitInfo], counters: &[i64]) -> String {
        let ours: Vec<&str> = log.iter().rev().map(|c| c.message.as_str()).filter(|m| m.starts_with("cw ")).collect();
        let mut seen = BTreeSet::new();
        let mut in_doubt_landed = 0;
        for m in &ours {
            assert!(seen.insert(*m), "a commit twice in the history: {m}");
            assert!(!self.refused.contains(*m), "a commit refused with a Conflict is in the history: {m}");
            if self.doubt.contains(*m) {
                in_doubt_landed += 1;
            } else {
                assert!(self.acked.contains(*m), "a commit in the history that no writer made: {m}");
            }
        }
        let lost: Vec<&String> = self.acked.iter().filter(|m| !seen.contains(m.as_str())).collect();
        assert!(lost.is_empty(), "{} acknowledged commits are not in the history (lost): {:?}", lost.len(), lost);
        // Replay in the history's order.
        let mut count: BTreeMap<u64, i64> = BTreeMap::new();
        for m in &ours {
            let f: Vec<&str> = m.split_whitespace().collect();
            let w: u64 = f[1].parse().unwrap();
            let mine: i64 = f[6].parse().unwrap();
            let c = count.entry(own(w)).or_default();
            assert_eq!(mine, *c, "{m}: read its own counter as {mine}, {c} commits before it incremented it");
            *c += 1;
            if f[8] != "-" {
                let (s, value): (u64, i64) = (f[8].parse().unwrap(), f[9].parse().unwrap());
                let c = count.entry(s).or_default();
                assert_eq!(
                    value, *c,
                    "{m}: read shared counter {s} as {value}, {c} commits before it incremented it (a lost update)"
                );
                *c += 1;
            }
        }
        let want: Vec<i64> = (0..LEN).map(|k| count.get(&k).copied().unwrap_or(0)).collect();
        assert_eq!(counters, want, "/counters against the history's commits replayed");
        let head = log.first().map(|c| c.message.as_str()).unwrap_or("");
        let head_is = if self.acked.contains(head) {
            "acknowledged"
        } else if self.doubt.contains(head) {
            "in flight"
        } else {
            assert!(self.acked.is_empty() && self.doubt.is_empty(), "the head is no commit of a writer: {head:?}");
            "the creation"
        };
        let mut per_writer = [0u64; WRITERS as usize];
        for m in &self.acked {
            per_writer[m.split_whitespace().nth(1).unwrap().parse::<usize>().unwrap()] += 1;
        }
        format!(
            "{} commits acknowledged (per writer {per_writer:?}; {} retried), {} conflicts ({} on a writer's own chunk after one of its commits \
             was in doubt), {} errors, {} opens failed, {} commits in doubt ({} of them in the history), head {head_is}",
            self.acked.len(),
            self.retried,
            self.conflicts,
            self.conflicts_own,
            self.errors,
            self.open_failures,
            self.doubt.len(),
            in_doubt_landed
        )
    }
}
