//! Errors of operations on a whole store name the store: a folder named like a zip archive, a
//! listing of a bucket's root that fails, an LMDB compaction that cannot write its copy. Each
//! said `of ""` before (the store key of the whole store is empty).

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use zarrdb::{Backend, Database};

#[path = "common/cli.rs"]
#[expect(dead_code, reason = "this test runs `ok` only")]
mod cli;

/// `zarrdb args` fails (status 3) with a message that names `names` and no empty key.
fn fails_naming(command: &mut Command, names: &str) -> String {
    let out = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("\"{names}\"")), "{names} not named: {stderr}");
    assert!(!stderr.contains("\"\""), "an empty name: {stderr}");
    stderr
}

fn zarrdb(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_zarrdb"));
    command.args(args);
    command
}

#[test]
fn a_folder_named_like_a_zip_archive() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("d.zip");
    std::fs::create_dir(&folder).unwrap();
    let f = folder.to_str().unwrap();
    let said = fails_naming(&mut zarrdb(&["tree", f]), f);
    assert!(said.contains("a folder"), "{said}");
}

#[test]
fn a_bucket_listing_that_fails() {
    // A port nobody listens on: every request is refused at once.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let locator = "s3://no-such-bucket/some/prefix";
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("in.zarrdb");
    // `du` lists the bucket's root first: that failure named the empty key.
    for args in [vec!["du", locator], vec!["tree", locator], vec!["import", locator, db.to_str().unwrap()]] {
        let out = zarrdb(&args)
            .env("AWS_ENDPOINT", format!("http://127.0.0.1:{port}"))
            .env("AWS_ALLOW_HTTP", "true")
            .env("AWS_ACCESS_KEY_ID", "zarrdb")
            .env("AWS_SECRET_ACCESS_KEY", "zarrdb")
            .env("AWS_REGION", "us-east-1")
            .env("ZARRDB_S3_RETRY_SECONDS", "0")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(stderr.contains("no-such-bucket/some/prefix"), "{args:?}: the bucket is not named: {stderr}");
        assert!(!stderr.contains("\"\""), "{args:?}: an empty name: {stderr}");
    }
}

/// A small tmpfs, unmounted on drop; `None` without the right to mount.
struct SmallDisk(std::path::PathBuf);

impl SmallDisk {
    fn mount(at: &Path, size: &str) -> Option<SmallDisk> {
        std::fs::create_dir(at).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs", at.to_str().unwrap()])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        mounted.then(|| SmallDisk(at.to_path_buf()))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn an_lmdb_compaction_on_a_full_disk() {
    let dir = tempfile::tempdir().unwrap();
    let Some(disk) = SmallDisk::mount(&dir.path().join("disk"), "8m") else {
        eprintln!("error_messages_name_paths: cannot mount a tmpfs here (not root?): nothing checked");
        return;
    };
    let env = disk.0.join("env");
    {
        let db = Database::builder().backend(Backend::Lmdb).lmdb_initial_map_size(6 << 20).create(&env).unwrap();
        let store = db.store();
        let mut x: u64 = 7;
        for i in 0..12 {
            let value: Vec<u8> = (0..256 << 10)
                .map(|_| {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    (x >> 56) as u8
                })
                .collect();
            store.set(&format!("k/{i}"), &value).unwrap();
        }
    }
    // What is left of the disk, filled: the compacted copy cannot be written.
    let ballast = disk.0.join("ballast");
    let mut file = std::fs::File::create(&ballast).unwrap();
    let block = vec![1u8; 64 << 10];
    while std::io::Write::write_all(&mut file, &block).is_ok() {}
    // The copy it tried to write, in the database's folder, is named (`.data.mdb.compacting.PID.N`,
    // a name of this process's own).
    let copy = env.join(".data.mdb.compacting").display().to_string();
    let out = zarrdb(&["compact", &format!("lmdb:{}", env.display())]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("\"{copy}.")), "{copy} not named: {stderr}");
    assert!(!stderr.contains("\"\""), "an empty name: {stderr}");
    drop(file);
    std::fs::remove_file(&ballast).unwrap();
    cli::ok(&["check", &format!("lmdb:{}", env.display())]);
}
