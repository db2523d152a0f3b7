//! A bucket database on a second S3 implementation: moto's server (PyPI `moto`, its
//! `moto_server` from `.venv-moto`, or `ZARRDB_MOTO_SERVER`), on a free port of 127.0.0.1.
//!
//! moto 5.x honours conditional writes on PUT: a second `If-None-Match: *` create of a key, and
//! an `If-Match` on a version that is not the key's, are refused with 412 `PreconditionFailed`
//! (an `If-Match` on a missing key answers 404 `NoSuchKey`, as AWS does). So the probe of a
//! read-write open must let the database be created and opened (a refusal here means the probe
//! or the server changed), and four threads, each with a database handle of its own (so each
//! races the others on the `head` object as separate processes do), incrementing one shared
//! counter and one of their own in read-modify-write transactions, lose no update: every
//! acknowledged increment read a different value, from 0 up, and the counter holds their number.
//!
//! The server is killed by its PID when the test ends, by the kernel if the test process dies
//! (PR_SET_PDEATHSIG), and after 10 minutes whatever happens.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use zarrdb::error::TransactionError;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Error};

const BUCKET: &str = "zarrdb-moto";
const THREADS: u64 = 4;
const OPS: u64 = 15;
const SHARED: u64 = 0;

fn moto_server() -> PathBuf {
    if let Some(path) = std::env::var_os("ZARRDB_MOTO_SERVER") {
        return PathBuf::from(path);
    }
    // Where scripts/test.sh installs it (tests/interop/requirements-moto.txt).
    let server = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv-moto/bin/moto_server");
    assert!(
        server.exists(),
        "no {}: run scripts/test.sh (which installs tests/interop/requirements-moto.txt there), or set ZARRDB_MOTO_SERVER",
        server.display()
    );
    server
}

/// moto's server, killed by its PID when dropped.
struct Moto {
    child: Child,
    port: u16,
}

impl Moto {
    fn start() -> Moto {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let log = tempfile::NamedTempFile::new().unwrap().keep().unwrap().1;
        let mut command = Command::new(moto_server());
        command
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        // SAFETY: between fork and exec only the async-signal-safe `prctl` runs.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        eprintln!("moto_server log: {}", log.display());
        let child = command.spawn().unwrap_or_else(|e| panic!("cannot start {}: {e}", moto_server().display()));
        let pid = child.id() as i32;
        // A bounded lifetime whatever happens to the test.
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(600));
            // SAFETY: kill(2) of the server's PID; the test has long ended by now if it could.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        });
        let mut moto = Moto { child, port };
        let deadline = Instant::now() + Duration::from_secs(60);
        // The bucket (an unsigned creation is accepted), made once the server answers.
        while http_status(port, "PUT", &format!("/{BUCKET}")) != Some(200) {
            if let Ok(Some(status)) = moto.child.try_wait() {
                panic!("moto_server ended ({status}): {}", std::fs::read_to_string(&log).unwrap_or_default());
            }
            assert!(Instant::now() < deadline, "moto_server made no bucket within 60 s: {}", log.display());
            std::thread::sleep(Duration::from_millis(200));
        }
        std::env::set_var("AWS_ENDPOINT", format!("http://127.0.0.1:{}", moto.port));
        std::env::set_var("AWS_ALLOW_HTTP", "true");
        std::env::set_var("AWS_ACCESS_KEY_ID", "zarrdb");
        std::env::set_var("AWS_SECRET_ACCESS_KEY", "zarrdb");
        std::env::set_var("AWS_REGION", "us-east-1");
        moto
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_status(port: u16, method: &str, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let request =
        format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response.split_whitespace().nth(1)?.parse().ok()
}

/// Thread `t`'s own counter, in a chunk of its own.
fn own(t: u64) -> u64 {
    8 * (t + 1)
}

/// `OPS` transactions incrementing the shared counter and `t`'s own; the values of the shared
/// counter each acknowledged one read, and the conflicts met.
fn writer(locator: &str, t: u64) -> (Vec<i64>, u64) {
    let db = Database::open(locator).unwrap_or_else(|e| panic!("thread {t}: open: {e}"));
    let (mut reads, mut conflicts) = (Vec::new(), 0);
    for i in 0..OPS {
        loop {
            let txn = db.begin_write().unwrap();
            let counters = Array::open(txn.store(), "/counters").unwrap();
            let mine = counters.read_region::<i64>(&[own(t)], &[1]).unwrap()[0];
            assert_eq!(mine, i as i64, "thread {t}: its own counter is not the number of its commits");
            counters.write_region(&[own(t)], &[1], &[mine + 1]).unwrap();
            let value = counters.read_region::<i64>(&[SHARED], &[1]).unwrap()[0];
            counters.write_region(&[SHARED], &[1], &[value + 1]).unwrap();
            drop(counters);
            match txn.commit() {
                Ok(()) => {
                    reads.push(value);
                    break;
                }
                Err(Error::Transaction(TransactionError::Conflict { key })) => {
                    assert!(key.contains("counters/c/0"), "thread {t}: a conflict on {key}, which only it writes");
                    conflicts += 1;
                    assert!(conflicts < 2000, "thread {t}: {conflicts} conflicts");
                }
                Err(e) => panic!("thread {t}, op {i}: commit: {e} ({e:?})"),
            }
        }
    }
    (reads, conflicts)
}

#[test]
fn moto_takes_a_bucket_database_and_its_commit_races() {
    let _moto = Moto::start();
    let locator = format!("zarrdb+s3://{BUCKET}/race-{}", std::process::id());
    // The probe: moto refuses the second create and the wrong version, so the open is let through.
    let db = Database::create(&locator).unwrap_or_else(|e| panic!("moto refused as a bucket database's server: {e:?}"));
    assert_eq!(db.backend(), Backend::Bucket);
    Array::create(db.store(), "/counters", ArrayMetadata::new(DataType::Int64, vec![64], vec![8])).unwrap();
    drop(db);
    drop(Database::open(&locator).unwrap_or_else(|e| panic!("moto refused at a read-write open: {e:?}")));

    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let locator = locator.clone();
            std::thread::spawn(move || writer(&locator, t))
        })
        .collect();
    let mut reads = Vec::new();
    let mut conflicts = 0;
    for thread in threads {
        let (r, c) = thread.join().unwrap();
        reads.extend(r);
        conflicts += c;
    }
    let summary = format!("{} commits acknowledged, {conflicts} conflicts", reads.len());
    println!("moto: {THREADS} threads: {summary}");
    reads.sort_unstable();
    let expected: Vec<i64> = (0..(THREADS * OPS) as i64).collect();
    assert_eq!(reads, expected, "the shared counter's values read by the acknowledged increments; {summary}");

    let db = Database::open(&locator).unwrap();
    let counters = Array::open(db.store(), "/counters").unwrap().read_all::<i64>().unwrap();
    assert_eq!(counters[SHARED as usize], (THREADS * OPS) as i64, "the shared counter; {summary}");
    for t in 0..THREADS {
        assert_eq!(counters[own(t) as usize], OPS as i64, "thread {t}'s own counter; {summary}");
    }
}
