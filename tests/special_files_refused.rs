//! A FIFO, a socket or a device where a database, an archive or a database's own file is expected
//! is refused at once with an error naming the path and what it is. Opening a FIFO for reading
//! waits for a writer: every command that opened one as a database (`tree`, `info`, `check`,
//! `create`, `import`, `compact`, `export`, `diff`, `du`, `attrs`, ...) hung for ever.
//!
//! Each command runs with a deadline; one still running then is killed and reported as hung.

use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "common/cli.rs"]
#[expect(dead_code, reason = "this test runs `ok` only")]
mod cli;

/// Far beyond what a refusal takes, even on a loaded machine; a hang never ends.
const DEADLINE: Duration = Duration::from_secs(30);

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo {}", path.display());
}

/// Run `zarrdb args`; it must end within [`DEADLINE`] with `status` and a message on stderr
/// holding every one of `says`.
fn refused(args: &[&str], status: i32, says: &[&str]) {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_zarrdb"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("zarrdb {args:?} hung (killed after {DEADLINE:?})");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(status), "zarrdb {args:?}: {stderr}");
    for said in says {
        assert!(stderr.contains(said), "zarrdb {args:?}: {said:?} missing from {stderr:?}");
    }
}

/// Every command given `special` (a FIFO or a socket, `what` it is called in messages) where
/// it opens a database, a source or an archive.
fn every_command_refuses(special: &Path, what: &str, dir: &Path) {
    let good = dir.join("good.zarrdb");
    let good = good.to_str().unwrap();
    cli::ok(&["create", good, "/a", "--dtype", "uint8", "--shape", "4"]);
    let npy = dir.join("values.npy");
    std::fs::write(&npy, cli::ok(&["cat", good, "/a", "--npy"])).unwrap();
    let folder = dir.join("exported");
    cli::ok(&["export", good, folder.to_str().unwrap()]);
    let (npy, folder) = (npy.to_str().unwrap(), folder.to_str().unwrap());
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    let s = special.to_str().unwrap();
    let says = [s, what];
    for locator in [s.to_owned(), format!("redb:{s}"), format!("lmdb:{s}"), format!("sled:{s}")] {
        let p = locator.as_str();
        refused(&["tree", p], 3, &says);
        refused(&["info", p], 3, &says);
        // `check` reports every failure with status 1.
        refused(&["check", p], 1, &says);
        refused(&["cat", p, "/a"], 3, &says);
        refused(&["create", p, "/b", "--dtype", "uint8", "--shape", "4"], 3, &says);
        refused(&["mkgroup", p, "/g"], 3, &says);
        refused(&["attrs", p], 3, &says);
        refused(&["du", p], 3, &says);
        refused(&["compact", p], 3, &says);
        refused(&["export", p, out], 3, &says);
        refused(&["import", folder, p], 3, &says);
        // An import source is a folder, a zip archive or a database: a bare path that is none
        // is refused by name before anything is opened.
        refused(&["import", p, out], 3, &[s]);
        refused(&["diff", p, good], 3, &says);
        refused(&["diff", good, p], 3, &says);
        refused(&["cp", p, out], 3, &says);
        refused(&["write", p, "/a", npy], 3, &says);
        refused(&["append", p, "/a", npy], 3, &says);
    }
    for locator in [format!("zip:{s}"), format!("dir:{s}")] {
        refused(&["tree", &locator], 3, &[s]);
        refused(&["import", &locator, out], 3, &[s]);
    }
}

#[test]
fn a_fifo_is_refused_at_once_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo);
    every_command_refuses(&fifo, "a FIFO", dir.path());
    // Named as an archive, it is opened as one.
    let zip = dir.path().join("pipe.zip");
    mkfifo(&zip);
    let z = zip.to_str().unwrap();
    refused(&["tree", z], 3, &[z, "a FIFO"]);
    refused(&["import", z, dir.path().join("in.zarrdb").to_str().unwrap()], 3, &[z]);
}

#[test]
fn a_socket_is_refused_at_once_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("socket");
    let _listener = UnixListener::bind(&socket).unwrap();
    every_command_refuses(&socket, "a socket", dir.path());
}

#[test]
fn a_character_device_is_refused_as_a_database() {
    // `/dev/null` reads as an empty file: without the check it was taken for no database at
    // all, and `create` tried to make one there.
    refused(&["tree", "/dev/null"], 3, &["/dev/null", "a character device"]);
    refused(&["create", "/dev/null", "/a", "--dtype", "uint8", "--shape", "4"], 3, &["a character device"]);
}

/// A FIFO in place of an engine's own file inside its folder: LMDB's `data.mdb`, sled's `db`
/// and zarrdb's `zarrdb-commits` beside sled's files.
#[test]
fn a_fifo_inside_a_database_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let lmdb = dir.path().join("l");
    std::fs::create_dir(&lmdb).unwrap();
    mkfifo(&lmdb.join("data.mdb"));
    let data = lmdb.join("data.mdb");
    for command in ["tree", "info", "compact"] {
        refused(&[command, &format!("lmdb:{}", lmdb.display())], 3, &[data.to_str().unwrap(), "a FIFO"]);
    }

    let sled = dir.path().join("s");
    cli::ok(&["create", &format!("sled:{}", sled.display()), "/a", "--dtype", "uint8", "--shape", "4"]);
    let commits = sled.join("zarrdb-commits");
    std::fs::remove_file(&commits).unwrap();
    mkfifo(&commits);
    let locator = format!("sled:{}", sled.display());
    refused(&["tree", &locator], 3, &[commits.to_str().unwrap(), "a FIFO"]);
    refused(&["create", &locator, "/b", "--dtype", "uint8", "--shape", "4"], 3, &[commits.to_str().unwrap(), "a FIFO"]);
    std::fs::remove_file(&commits).unwrap();
    std::fs::remove_file(sled.join("db")).unwrap();
    mkfifo(&sled.join("db"));
    refused(&["tree", &locator], 3, &[sled.join("db").to_str().unwrap(), "a FIFO"]);
}
