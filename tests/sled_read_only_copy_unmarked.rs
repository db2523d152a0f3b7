//! A read-only sled command killed between making its copy's folder and marking it left a folder
//! that no later command recognised as a copy (seen in CI: `sled_read_only_copy_interrupted`,
//! `check` killed as soon as its copy appeared). The next read-only command now removes such a
//! folder when its process has ended and it holds nothing, or only the start of its mark; a
//! folder of a live process, or one holding anything else, stays.

use std::path::Path;
use std::process::{Command, Stdio};

use zarrdb::{Backend, Database};

const PREFIX: &str = "zarrdb-sled-read-only-";
const OWNER: &str = "zarrdb-read-only-copy";
const MARK: &str = "zarrdb: private copy of a sled database for a read-only open: ";

/// The id of a process that has ended.
fn ended_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn folders_of_copies_never_marked_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let temp = dir.path().join("tmp");
    std::fs::create_dir(&temp).unwrap();
    let db = dir.path().join("s");
    Database::builder().backend(Backend::Sled).create(&db).unwrap().store().set("k", b"v").unwrap();

    let dead = ended_pid();
    let folder = |pid: u32, n: u32| temp.join(format!("{PREFIX}{pid}-{n}"));
    // Killed right after the folder was made, after the owner file was made, and mid-mark.
    let empty = folder(dead, 0);
    std::fs::create_dir(&empty).unwrap();
    let unwritten = folder(dead, 1);
    std::fs::create_dir(&unwritten).unwrap();
    std::fs::write(unwritten.join(OWNER), b"").unwrap();
    let half = folder(dead, 2);
    std::fs::create_dir(&half).unwrap();
    std::fs::write(half.join(OWNER), &MARK.as_bytes()[..20]).unwrap();
    // Left alone: a live process's folder, one holding something else, an owner file that is
    // not the start of a mark, a name that is not a copy's.
    let live = folder(std::process::id(), 0);
    std::fs::create_dir(&live).unwrap();
    let busy = folder(dead, 3);
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("data"), b"someone's").unwrap();
    let foreign = folder(dead, 4);
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join(OWNER), b"not a mark").unwrap();
    let odd = temp.join(format!("{PREFIX}{dead}"));
    std::fs::create_dir(&odd).unwrap();

    let status = Command::new(env!("CARGO_BIN_EXE_zarrdb"))
        .args(["tree", &format!("sled:{}", db.display())])
        .env("TMPDIR", &temp)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());

    let exists = |p: &Path| p.exists();
    assert!(!exists(&empty) && !exists(&unwritten) && !exists(&half), "unmarked copies of ended processes stay");
    assert!(exists(&live) && exists(&odd), "a live process's folder, or another name, was removed");
    assert_eq!(std::fs::read(busy.join("data")).unwrap(), b"someone's");
    assert_eq!(std::fs::read(foreign.join(OWNER)).unwrap(), b"not a mark");
}
