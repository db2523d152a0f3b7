//! A database on a full disk: the commit that does not fit fails with `StoreError::DiskFull`
//! (LMDB turns the operating system's "no space" into "I/O error", redb does not), and after
//! reopening the database holds every commit acknowledged before it, each value whole.
//!
//! An import that does not fit ends the same way: `zarrdb import` exits 1 saying the disk is
//! full, and the database it imported into is as it was.
//!
//! The disk is a 4 MiB tmpfs mounted for the test, so the test needs the right to mount (root, as
//! in CI here); without it the test says so on stderr and passes without checking anything.

use std::path::{Path, PathBuf};
use std::process::Command;

use std::sync::Arc;

use zarrdb::error::StoreError;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, DirectoryStore, Durability, Store};

#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "shared by several tests; this one uses only `new` and `next_u64`")]
mod splitmix;
use splitmix::SplitMix;

/// A tmpfs of `MIB` MiB, unmounted on drop.
struct SmallDisk {
    dir: tempfile::TempDir,
    mount: PathBuf,
}

const MIB: u32 = 4;

impl SmallDisk {
    fn mount() -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let mount = dir.path().join("disk");
        std::fs::create_dir(&mount).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={MIB}m"), "tmpfs"])
            .arg(&mount)
            .stderr(std::process::Stdio::null())
            .status();
        if !status.is_ok_and(|s| s.success()) {
            eprintln!("disk_full: cannot mount a tmpfs here (not root?): nothing checked");
            return None;
        }
        Some(SmallDisk { dir, mount })
    }

    /// Take every byte left with a ballast file, written until the disk refuses more; its path.
    fn fill_up(&self) -> PathBuf {
        use std::io::Write;
        let ballast = self.mount.join("ballast");
        let mut file = std::fs::File::create(&ballast).unwrap();
        while file.write_all(&[1u8; 4096]).is_ok() {}
        ballast
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        // Lazily: a sled database whose close was abandoned on a full disk keeps files open.
        let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
    }
}

fn value(i: usize) -> Vec<u8> {
    // Incompressible and different per key, so a value read back from the wrong place shows.
    let mut rng = SplitMix::new(16, i as u64);
    (0..8 * 1024).flat_map(|_| rng.next_u64().to_le_bytes()).collect()
}

fn open(path: &Path, backend: Backend, durability: Durability) -> Database {
    open_logged(path, backend, durability, false)
}

/// `open`, with LMDB behind its commit log when `log`.
fn open_logged(path: &Path, backend: Backend, durability: Durability, log: bool) -> Database {
    let mut builder = Database::builder();
    builder.backend(backend).durability(durability).lmdb_commit_log(log);
    builder.open(path).unwrap()
}

/// Write 64 KiB values, four times what the disk holds, until a commit fails; it must be for a
/// full disk. Returns how many were acknowledged, or None when all were (fast mode keeps its
/// commits in memory until the next sync).
fn fill(db: &Database, prefix: &str) -> Option<usize> {
    let store = db.store();
    for i in 0..(MIB as usize * 64) {
        match store.set(&format!("{prefix}/{i}"), &value(i)) {
            Ok(()) => {}
            Err(e) => {
                expect_disk_full(e);
                return Some(i);
            }
        }
    }
    None
}

fn expect_disk_full(error: StoreError) {
    match error {
        StoreError::DiskFull { available, .. } => {
            assert!(available < 2 << 20, "{available} bytes free is not a full disk")
        }
        other => panic!("expected a full disk, got: {other}"),
    }
}

/// Every value under `prefix` that the database holds is whole, and the first `at_least` are there.
fn check(db: &Database, prefix: &str, at_least: usize) {
    let store = db.store();
    let keys = store.list_prefix(&format!("{prefix}/")).unwrap();
    assert!(keys.len() >= at_least, "{prefix}: {} values, {at_least} acknowledged durably", keys.len());
    for key in keys {
        let i: usize = key.rsplit('/').next().unwrap().parse().unwrap();
        assert_eq!(store.get(&key).unwrap().as_deref(), Some(value(i).as_slice()), "{key}");
    }
}

/// Fill the disk with durable commits (LMDB behind its commit log when `log`), then open the
/// database again and find every acknowledged one.
fn durable_commits_survive(backend: Backend, file: &str, log: bool) {
    let Some(disk) = SmallDisk::mount() else { return };
    let path = disk.mount.join(file);
    let mut builder = Database::builder();
    builder.backend(backend);
    drop(builder.create(&path).unwrap());
    let acknowledged = fill(&open_logged(&path, backend, Durability::Durable, log), "v")
        .unwrap_or_else(|| panic!("{backend:?}: {} MiB fitted on a {MIB} MiB disk", MIB * 4));
    assert!(acknowledged > 0, "{backend:?}: nothing fitted");
    if log {
        // The close after the failed commit synced and removed the log: nothing to recover.
        for file in ["zarrdb-checkpoint", "zarrdb-log"] {
            assert!(!path.join(file).exists(), "{file} left after a clean close on a full disk");
        }
    }
    check(&open_logged(&path, backend, Durability::Durable, log), "v", acknowledged);
}

#[test]
fn redb_reports_a_full_disk_and_keeps_every_durable_commit() {
    durable_commits_survive(Backend::Redb, "db.redb", false);
}

#[test]
fn lmdb_reports_a_full_disk_and_keeps_every_durable_commit() {
    durable_commits_survive(Backend::Lmdb, "db.lmdb", false);
}

#[test]
fn lmdb_with_the_commit_log_reports_a_full_disk_and_keeps_every_durable_commit() {
    durable_commits_survive(Backend::Lmdb, "logged.lmdb", true);
}

/// In fast mode the commits since the last periodic sync may be lost (that is the mode's
/// promise), but never those a durable session made before.
#[test]
fn redb_fast_mode_on_a_full_disk_keeps_the_durable_commits_before_it() {
    let Some(disk) = SmallDisk::mount() else { return };
    let path = disk.mount.join("fast.redb");
    {
        let db = Database::builder().create(&path).unwrap();
        for i in 0..5 {
            db.store().set(&format!("durable/{i}"), &value(i)).unwrap();
        }
    }
    {
        let db = open(&path, Backend::Redb, Durability::Fast);
        if fill(&db, "fast").is_none() {
            // Everything fitted in redb's cache: the first commit after the sync interval (1 s)
            // syncs, and that cannot fit.
            std::thread::sleep(std::time::Duration::from_millis(1100));
            expect_disk_full(db.store().set("fast/late", &value(0)).unwrap_err());
        }
    }
    let db = open(&path, Backend::Redb, Durability::Durable);
    check(&db, "durable", 5);
    check(&db, "fast", 0);
}

#[test]
fn an_import_that_does_not_fit_reports_a_full_disk() {
    let Some(disk) = SmallDisk::mount() else { return };
    // 8 MiB of incompressible chunks in a folder on the ordinary disk.
    let source = disk.dir.path().join("source.zarr");
    let store: Arc<dyn Store> = Arc::new(DirectoryStore::create(&source).unwrap());
    let array =
        Array::create(store, "/a", ArrayMetadata::new(DataType::UInt8, vec![128, 65536], vec![1, 65536])).unwrap();
    let bytes: Vec<u8> = (0..128).flat_map(value).collect();
    array.write_region(&[0, 0], &[128, 65536], &bytes).unwrap();
    for locator in
        [disk.mount.join("i.zarrdb").display().to_string(), format!("lmdb:{}", disk.mount.join("i.lmdb").display())]
    {
        let path = locator.trim_start_matches("lmdb:");
        let backend = if locator.starts_with("lmdb:") { Backend::Lmdb } else { Backend::Redb };
        {
            let mut builder = Database::builder();
            builder.backend(backend);
            builder.create(Path::new(path)).unwrap().store().set("kept", b"before the import").unwrap();
        }
        let out = Command::new(env!("CARGO_BIN_EXE_zarrdb"))
            .args(["import", &source.display().to_string(), &locator, "--at", "/imported"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{locator}: {stderr}");
        assert!(stderr.contains("is full") && !stderr.contains("panicked"), "{locator}: {stderr}");
        let db = open(Path::new(path), backend, Durability::Durable);
        assert_eq!(db.store().get("kept").unwrap().as_deref(), Some(&b"before the import"[..]), "{locator}");
        assert!(db.store().list_prefix("imported/").unwrap().is_empty(), "{locator}: part of the import is visible");
        drop(db);
        // Room for the next backend's database.
        std::fs::remove_dir_all(path).or_else(|_| std::fs::remove_file(path)).unwrap();
    }
}

/// A streamed region write (16 MiB and more, `src/array/stream.rs`) that does not fit fails as a
/// full disk, and the database keeps what it held before: the write is one transaction.
fn streamed_write_leaves_the_database_as_it_was(backend: Backend, file: &str) {
    use zarrdb::{Array, ArrayMetadata, DataType, Error};
    let Some(disk) = SmallDisk::mount() else { return };
    let path = disk.mount.join(file);
    let meta = ArrayMetadata::new(DataType::UInt64, vec![1536, 1536], vec![256, 256]);
    let before: Vec<u64> = (0..256 * 256).map(|i| i as u64 + 1).collect();
    {
        let db = Database::builder().backend(backend).create(&path).unwrap();
        let array = Array::create(db.store(), "/a", meta).unwrap();
        array.write_region(&[0, 0], &[256, 256], &before).unwrap();
        let mut rng = SplitMix::new(7, 0);
        let big: Vec<u64> = (0..1536 * 1536).map(|_| rng.next_u64() | 1).collect();
        match array.write_region(&[0, 0], &[1536, 1536], &big) {
            Err(Error::Store(e)) => expect_disk_full(e),
            Err(other) => panic!("{backend:?}: expected a full disk, got: {other}"),
            Ok(()) => panic!("{backend:?}: 18 MiB fitted on a {MIB} MiB disk"),
        }
    }
    let db = open(&path, backend, Durability::Durable);
    let array = Array::open(db.store(), "/a").unwrap();
    assert_eq!(array.read_region::<u64>(&[0, 0], &[256, 256]).unwrap(), before, "{backend:?}");
    assert_eq!(array.stored_chunks().unwrap().len(), 1, "{backend:?}: chunks of the failed write remain");
}

#[test]
fn redb_streamed_write_that_does_not_fit_leaves_the_database_as_it_was() {
    streamed_write_leaves_the_database_as_it_was(Backend::Redb, "stream.redb");
}

#[test]
fn lmdb_streamed_write_that_does_not_fit_leaves_the_database_as_it_was() {
    streamed_write_leaves_the_database_as_it_was(Backend::Lmdb, "stream.lmdb");
}

/// redb latches the failed write of a full disk: every later transaction on the handle, reads
/// too, failed with "previous I/O error" until the database was closed and opened again, so a
/// process that keeps its handle (a Python process, a server) stayed stuck after space was
/// freed. The handle now opens the file again by itself: once space is freed, the same
/// `Database` reads what was acknowledged and commits again.
#[test]
fn redb_handle_works_again_once_space_is_freed() {
    let Some(disk) = SmallDisk::mount() else { return };
    let ballast = disk.mount.join("ballast");
    std::fs::write(&ballast, vec![1u8; 1 << 20]).unwrap();
    let path = disk.mount.join("again.redb");
    // The handle `create` returns: it opens the file again under its final name, not the
    // temporary one it was created under (`src/db/create.rs`).
    let db = Database::builder().create(&path).unwrap();
    let acknowledged = fill(&db, "v").expect("the disk filled up");
    std::fs::remove_file(&ballast).unwrap();
    let store = db.store();
    assert_eq!(store.get("v/0").unwrap().as_deref(), Some(value(0).as_slice()), "a read after freeing space");
    store.set("after/0", &value(1000)).unwrap();
    check(&db, "v", acknowledged);
    drop((store, db));
    let db = open(&path, Backend::Redb, Durability::Durable);
    check(&db, "v", acknowledged);
    assert_eq!(db.store().get("after/0").unwrap().as_deref(), Some(value(1000).as_slice()));
}

/// sled on a full disk: the commit that does not fit fails as a full disk; sled then waits for
/// ever in its next flush, so later commits are refused at once and closing returns after a
/// bounded wait instead of hanging the caller (sled's thread, and its lock on the folder, stay
/// behind until the process ends).
#[test]
fn sled_reports_a_full_disk_then_refuses_commits_and_closes() {
    let Some(disk) = SmallDisk::mount() else { return };
    let path = disk.mount.join("db.sled");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let db = Database::builder().backend(Backend::Sled).create(&path).unwrap();
        let filled = fill(&db, "v");
        let after = db.store().set("after", b"x");
        drop(db);
        tx.send((filled, after)).unwrap();
    });
    let (filled, after) =
        rx.recv_timeout(std::time::Duration::from_secs(60)).expect("sled hung on the full disk or on closing");
    assert!(filled.is_some_and(|n| n > 0), "sled: {filled:?} values before the disk was full");
    let err = after.expect_err("a commit after the failed one went through");
    assert!(err.to_string().contains("earlier write"), "{err}");
}

/// redb's commit log (`src/store/log/`) grows by 256 KiB of zeros at a time: on a full
/// disk the growth fails, the commit reports the full disk and nothing of it is applied, and
/// once space is freed the next commit goes through (a log that only failed to grow holds no
/// record to take back, so it stays usable).
#[test]
fn redb_commit_log_that_cannot_grow_reports_a_full_disk() {
    let Some(disk) = SmallDisk::mount() else { return };
    let path = disk.mount.join("log.redb");
    let db = Database::builder().create(&path).unwrap();
    let store = db.store();
    // Every byte left taken by ballast before the first record: the log cannot even begin.
    let ballast = disk.fill_up();
    let mut acknowledged = 0;
    let failed = loop {
        match store.set(&format!("logged/{acknowledged}"), &value(acknowledged)) {
            Ok(()) => acknowledged += 1,
            Err(e) => break e,
        }
        assert!(acknowledged < 64, "64 commits of 64 KiB fitted in the log without growing it");
    };
    expect_disk_full(failed);
    std::fs::remove_file(&ballast).unwrap();
    store.set("after", b"space again").unwrap();
    // The first commit with space may be the durable one that names the log (a log is written to
    // only once the database names it); the next goes through the log.
    store.set("after, logged", b"space again").unwrap();
    // The log is the file the database names: `log.redb-log`, or `log.redb-log.<id>` when that
    // name was taken.
    let logs = std::fs::read_dir(&disk.mount)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("log.redb-log"))
        .count();
    assert!(logs > 0, "the commits went through the log");
    drop((store, db));
    let db = open(&path, Backend::Redb, Durability::Durable);
    check(&db, "logged", acknowledged);
    assert_eq!(db.store().get(&format!("logged/{acknowledged}")).unwrap(), None, "the failed commit is there");
    assert_eq!(db.store().get("after").unwrap().as_deref(), Some(&b"space again"[..]));
}

/// A commit to redb's file that fails on a full disk spends the handle, which opens the file
/// again at its next use. Commits made durable only in the commit log since the last checkpoint
/// are not in the file yet: the reopen must replay them from the log (`Handle::reopen`, up to
/// the last one applied), or a process that keeps its handle would lose acknowledged commits.
#[test]
fn redb_reopen_after_a_full_disk_replays_the_commit_log() {
    let Some(disk) = SmallDisk::mount() else { return };
    let path = disk.mount.join("replay.redb");
    let db = Database::builder().create(&path).unwrap();
    let store = db.store();
    // The database's first commit goes to the file (it anchors the log); the next ones are logged.
    store.set("first", b"in the file").unwrap();
    for i in 0..5 {
        store.set(&format!("logged/{i}"), &value(i)).unwrap();
    }
    assert!(disk.mount.join("replay.redb-log").exists(), "the commits went through the log");
    // What is left of the disk taken by ballast: a batch over the log's 1 MiB limit commits to
    // the file, durably, and fails there.
    let ballast = disk.fill_up();
    let large: Vec<u8> = (0..32).flat_map(|i| value(100 + i)).collect();
    expect_disk_full(store.set("large", &large).expect_err("a 2 MiB commit fitted on a full disk"));
    // The next read opens the file again and replays the log.
    check(&db, "logged", 5);
    assert_eq!(store.get("large").unwrap(), None, "the failed commit is there");
    std::fs::remove_file(&ballast).unwrap();
    store.set("after", b"space again").unwrap();
    drop((store, db));
    let db = open(&path, Backend::Redb, Durability::Durable);
    check(&db, "logged", 5);
    assert_eq!(db.store().get("first").unwrap().as_deref(), Some(&b"in the file"[..]));
    assert_eq!(db.store().get("after").unwrap().as_deref(), Some(&b"space again"[..]));
}
