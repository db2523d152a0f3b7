//! A bucket database on a second S3 implementation: moto's server (PyPI `moto`, its
//! `moto_server` from `.venv-moto`, or `ZARRDB_MOTO_SERVER`), on a free port of 127.0.0.1.
//!
//! moto 5.x honours conditional writes on PUT: a second `If-None-Match: *` create of a key, and
//! an `If-Match` on a version that is not the key's, are refused with 412 `PreconditionFailed`,
//! as is an `If-Match` on a missing key. So the probe of a
//! read-write open lets the database be created and opened (a refusal here means the probe or
//! the server changed), and each way a commit can lose the race is met in turn, one writer
//! overtaken by another handle's commit while its transaction is open: on a chunk it did not read
//! (412, then committed again over the winner's head), on the chunk it read (a `Conflict` naming
//! it, nothing written), and over a head removed behind its back (refused, then committed over
//! an empty database); the counters hold every acknowledged increment.
//!
//! Not concurrent writers: moto checks `If-Match` and stores the object in two steps under no
//! lock, on a thread per connection, so two PUTs conditioned on one version can both be answered
//! 200 (seen with 16 racing PUTs in about 1 round of 170). A race of writers on moto can then lose
//! an update that the server acknowledged; the concurrent campaigns run on SeaweedFS
//! (`bucket_writer_campaign*.rs`).
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
use zarrdb::store::{ObjectStore, WritableStore};
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Error};

const BUCKET: &str = "zarrdb-moto";
const ROUNDS: i64 = 10;
const SHARED: u64 = 0;
const OWN: u64 = 8;

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

/// The counter at `at`, read in `txn`'s store.
fn read(store: &std::sync::Arc<dyn zarrdb::Store>, at: u64) -> i64 {
    Array::open(store.clone(), "/counters").unwrap().read_region::<i64>(&[at], &[1]).unwrap()[0]
}

fn write(store: &std::sync::Arc<dyn zarrdb::Store>, at: u64, value: i64) {
    Array::open(store.clone(), "/counters").unwrap().write_region(&[at], &[1], &[value]).unwrap();
}

/// An increment of the counter at `at` committed by `db` on another thread (its own writer,
/// as another process's would be), while the caller's transaction is open.
fn overtake(db: &Database, at: u64) {
    let db = db.clone();
    std::thread::spawn(move || {
        let txn = db.begin_write().unwrap();
        let value = read(&txn.store(), at);
        write(&txn.store(), at, value + 1);
        txn.commit().unwrap();
    })
    .join()
    .unwrap();
}

#[test]
fn moto_takes_a_bucket_database_and_its_lost_races() {
    let _moto = Moto::start();
    let plain = format!("s3://{BUCKET}/races-{}", std::process::id());
    let locator = format!("zarrdb+{plain}");
    // The probe: moto refuses the second create and the wrong version, so the open is let through.
    let db = Database::create(&locator).unwrap_or_else(|e| panic!("moto refused as a bucket database's server: {e:?}"));
    assert_eq!(db.backend(), Backend::Bucket);
    Array::create(db.store(), "/counters", ArrayMetadata::new(DataType::Int64, vec![64], vec![8])).unwrap();
    drop(db);
    let ours = Database::open(&locator).unwrap_or_else(|e| panic!("moto refused at a read-write open: {e:?}"));
    let theirs = Database::open(&locator).unwrap();

    for round in 0..ROUNDS {
        // Overtaken on a chunk it did not read: 412 on the head, then committed over the winner's.
        let txn = ours.begin_write().unwrap();
        let mine = read(&txn.store(), OWN);
        write(&txn.store(), OWN, mine + 1);
        overtake(&theirs, SHARED);
        txn.commit().unwrap_or_else(|e| panic!("round {round}: a rebase over moto: {e:?}"));

        // Overtaken on the chunk it read: a conflict naming it, nothing written.
        let txn = ours.begin_write().unwrap();
        let shared = read(&txn.store(), SHARED);
        write(&txn.store(), SHARED, shared + 1);
        overtake(&theirs, SHARED);
        match txn.commit() {
            Err(Error::Transaction(TransactionError::Conflict { key })) => {
                assert!(key.contains("counters/c/0"), "{key}")
            }
            other => panic!("round {round}: a commit over a changed read: {other:?}"),
        }
    }
    let counters = Array::open(ours.store(), "/counters").unwrap().read_all::<i64>().unwrap();
    assert_eq!((counters[OWN as usize], counters[SHARED as usize]), (ROUNDS, 2 * ROUNDS));

    // The head removed under an open transaction: its If-Match is refused, a lost race.
    let txn = ours.begin_write().unwrap();
    txn.store().set("after", b"over no head").unwrap();
    ObjectStore::open(&plain).unwrap().erase("__zarrdb/head").unwrap();
    txn.commit().unwrap_or_else(|e| panic!("a commit over a removed head on moto: {e:?}"));
    let fresh = Database::builder().read_only(true).open(&locator).unwrap();
    assert_eq!(fresh.store().get("after").unwrap().as_deref(), Some(&b"over no head"[..]));
    // Committed over an empty database: what the removed head named is not there.
    assert_eq!(fresh.store().get("counters/zarr.json").unwrap(), None);
}
