//! A read-only command on a sled database reads a private copy of it in the temporary directory
//! (sled has no read-only mode: `src/store/sled/copy.rs`). A command ended by SIGINT (Ctrl-C),
//! SIGTERM or SIGKILL while it reads, or while it copies, leaves nothing behind once the next
//! read-only sled command has run; that command leaves alone the copy of a command still
//! running, and everything in the temporary directory that is not a copy (a folder of the same
//! name without the owner's mark, a link to a marked copy elsewhere).
//!
//! Before, every interrupted command left its whole copy behind for good.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database};

const PREFIX: &str = "zarrdb-sled-read-only-";

/// A sled database of `mib` MiB of incompressible chunks in the array `/a`.
fn build(path: &Path, mib: usize) {
    let db = Database::builder().backend(Backend::Sled).create(path).unwrap();
    let rows = mib * 16;
    let meta = ArrayMetadata::new(DataType::UInt8, vec![rows as u64, 65_536], vec![16, 65_536]);
    let a = Array::create(db.store(), "/a", meta).unwrap();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let values: Vec<u8> = (0..rows * 65_536)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    a.write_region(&[0, 0], &[rows as u64, 65_536], &values).unwrap();
}

fn zarrdb(temp: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_zarrdb"));
    command.args(args).env("TMPDIR", temp).stdin(Stdio::null()).stderr(Stdio::null());
    command
}

/// The copies (by name) in `temp`.
fn copies(temp: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(temp)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.starts_with(PREFIX)))
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// Wait until `child` has made a copy in `temp` beside the `before` ones; it.
fn wait_for_copy(child: &mut Child, temp: &Path, before: &[PathBuf]) -> PathBuf {
    let started = Instant::now();
    loop {
        if let Some(copy) = copies(temp).into_iter().find(|c| !before.contains(c)) {
            return copy;
        }
        assert!(child.try_wait().unwrap().is_none(), "the command ended before it made its copy");
        assert!(started.elapsed() < Duration::from_secs(60), "no copy appeared");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn signal(child: &mut Child, signal: libc::c_int) {
    // SAFETY: kill has no memory-safety preconditions; the pid is our own unreaped child.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
    let status = child.wait().unwrap();
    assert!(!status.success(), "the command ended normally: {status:?}");
}

/// Run a read-only command to the end (it removes what dead commands left).
fn next_run(temp: &Path, locator: &str) {
    let status = zarrdb(temp, &["tree", locator]).stdout(Stdio::null()).status().unwrap();
    assert!(status.success());
}

#[test]
fn interrupted_reads_leave_no_copy_behind() {
    let dir = tempfile::tempdir().unwrap();
    let temp = dir.path().join("tmp");
    std::fs::create_dir(&temp).unwrap();
    let db = dir.path().join("s");
    build(&db, 24);
    let locator = format!("sled:{}", db.display());
    let originals: Vec<_> = std::fs::read_dir(&db).unwrap().flatten().map(|e| e.file_name()).collect();

    // Not copies: a folder of a copy's name that nobody marked, and a link (of a copy's name)
    // to a folder marked as a copy, outside the temporary directory.
    let unmarked = temp.join(format!("{PREFIX}999999-0"));
    std::fs::create_dir(&unmarked).unwrap();
    std::fs::write(unmarked.join("db"), b"someone else's").unwrap();
    let elsewhere = dir.path().join(format!("{PREFIX}999999-1"));
    let link = temp.join(format!("{PREFIX}999999-1"));
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let decoys = copies(&temp);

    // `cat` blocks writing to a pipe nobody reads: interrupted mid-read.
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGKILL] {
        let mut cat =
            zarrdb(&temp, &["cat", &locator, "/a", "--region", "0:32,:"]).stdout(Stdio::piped()).spawn().unwrap();
        let copy = wait_for_copy(&mut cat, &temp, &decoys);
        // Reading: the first output has come.
        cat.stdout.as_mut().unwrap().read_exact(&mut [0u8; 1]).unwrap();

        // While it lives, another read leaves its copy alone.
        next_run(&temp, &locator);
        assert!(copy.is_dir(), "the copy of a running command was removed");
        if sig == libc::SIGINT {
            // The link's target gets the live copy's mark, under the name the link has.
            let extra: Vec<_> = std::fs::read_dir(&copy)
                .unwrap()
                .flatten()
                // sled may add a snapshot file of its own (`snap.*`) in the copy.
                .filter(|e| {
                    !originals.contains(&e.file_name())
                        && e.file_name().to_str().is_some_and(|n| n.starts_with("zarrdb"))
                })
                .map(|e| e.path())
                .collect();
            assert_eq!(extra.len(), 1, "one zarrdb file marks a copy: {extra:?}");
            std::fs::create_dir(&elsewhere).unwrap();
            let mark = std::fs::read(&extra[0]).unwrap();
            let name = copy.file_name().unwrap().to_str().unwrap();
            let forged = String::from_utf8_lossy(&mark).replace(name, &format!("{PREFIX}999999-1"));
            std::fs::write(elsewhere.join(extra[0].file_name().unwrap()), forged).unwrap();
        }

        signal(&mut cat, sig);
        next_run(&temp, &locator);
        assert_eq!(copies(&temp), decoys, "after {sig}: left behind");
    }

    // `check` killed as soon as its copy appears: mid-copy, most likely.
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGKILL] {
        let mut check = zarrdb(&temp, &["check", &locator]).stdout(Stdio::null()).spawn().unwrap();
        wait_for_copy(&mut check, &temp, &decoys);
        signal(&mut check, sig);
        next_run(&temp, &locator);
        assert_eq!(copies(&temp), decoys, "check, after {sig}: left behind");
    }

    assert_eq!(std::fs::read(unmarked.join("db")).unwrap(), b"someone else's");
    assert!(std::fs::read_dir(&elsewhere).unwrap().count() == 1, "the link's target was touched");
}
