//! Read-only commands (`tree`, `info`, `cat`, `check`, `export`) work on redb, LMDB and sled
//! databases on a read-only file system (a read-only bind mount, as a CD-ROM, a snapshot or a
//! container's read-only volume would be) and leave the files byte-identical (sled, which has no
//! read-only mode, is read through a private copy).
//!
//! Mounting needs root (as in CI here); without it the test says so on stderr and passes without
//! checking anything. `read_only_commands.rs` covers files without write permission.

use std::path::{Path, PathBuf};
use std::process::Command;

use zarrdb::Backend;

#[path = "common/read_only.rs"]
#[expect(dead_code, reason = "this test runs as whoever runs it: it needs no `is_root`")]
mod read_only;
use read_only::{build, contents, read_everything, settled};

/// `source` mounted again at `target`, read-only; unmounted on drop.
struct ReadOnlyMount {
    target: PathBuf,
}

impl ReadOnlyMount {
    fn new(source: &Path, target: &Path) -> Option<ReadOnlyMount> {
        std::fs::create_dir(target).unwrap();
        let mount = |args: &[&str]| {
            Command::new("mount").args(args).stderr(std::process::Stdio::null()).status().is_ok_and(|s| s.success())
        };
        let (source, target_str) = (source.to_str().unwrap(), target.to_str().unwrap());
        if !mount(&["--bind", source, target_str]) {
            eprintln!("read_only_mount: cannot bind-mount here (not root?): nothing checked");
            return None;
        }
        let guard = ReadOnlyMount { target: target.to_path_buf() };
        assert!(mount(&["-o", "remount,bind,ro", target_str]), "cannot make the bind mount read-only");
        assert!(std::fs::write(target.join("probe"), b"x").is_err(), "the mount accepts writes");
        Some(guard)
    }
}

impl Drop for ReadOnlyMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.target).status();
    }
}

#[test]
fn commands_work_on_a_read_only_mount() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let exports = dir.path().join("exports");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::create_dir(&exports).unwrap();
    let databases = [("r.zarrdb", Backend::Redb), ("l", Backend::Lmdb), ("s", Backend::Sled)];
    for (name, backend) in databases {
        build(&data.join(name), backend);
    }
    let before: Vec<_> = databases.iter().map(|(name, _)| settled(&data.join(name))).collect();

    let mounted = dir.path().join("ro");
    let Some(_mount) = ReadOnlyMount::new(&data, &mounted) else { return };
    read_everything(&mounted.join("r.zarrdb").display().to_string(), &exports, false);
    read_everything(&format!("lmdb:{}", mounted.join("l").display()), &exports, false);
    read_everything(&format!("sled:{}", mounted.join("s").display()), &exports, false);

    for ((name, _), before) in databases.iter().zip(before) {
        // Compared through the writable path: the same files.
        assert!(contents(&data.join(name)) == before, "{name}: changed");
    }
}
