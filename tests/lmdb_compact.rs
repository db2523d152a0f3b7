//! `Database::compact` on LMDB: a compacted copy replaces `data.mdb`, and the database goes on in
//! it; refused while a snapshot of this process or another process has the environment open.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use zarrdb::error::CompactError;
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Durability, Error, Node};

#[path = "common/compact_fixture.rs"]
mod compact_fixture;
use compact_fixture::{fill, KEPT};

fn lmdb() -> zarrdb::DatabaseBuilder {
    let mut builder = Database::builder();
    builder.backend(Backend::Lmdb);
    builder
}

fn kept(db: &Database) -> Vec<u32> {
    Array::open(db.store(), "/kept").unwrap().read_all::<u32>().unwrap()
}

fn names(folder: &Path) -> Vec<String> {
    let mut names: Vec<_> =
        std::fs::read_dir(folder).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn the_compacted_file_replaces_data_mdb_and_the_database_goes_on() {
    for durability in [Durability::Durable, Durability::Fast] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let db = lmdb().durability(durability).create(&path).unwrap();
        let values = fill(&db);
        let done = db.compact().unwrap();
        assert!(done.bytes_after < done.bytes_before, "{durability:?}: {done:?}");
        let data = std::fs::metadata(path.join("data.mdb")).unwrap().len() as f64;
        assert!(data <= 1.15 * KEPT, "{durability:?}: data.mdb is {data} bytes after {done:?}");
        assert_eq!(kept(&db), values);
        assert!(Node::open(db.store(), "/gone").is_err());
        let meta = ArrayMetadata::new(DataType::UInt8, vec![4], vec![4]);
        Array::create(db.store(), "/after", meta).unwrap().write_region(&[0], &[4], &[1u8, 2, 3, 4]).unwrap();
        // Twice in a row: the second finds the lock file the first initialised anew.
        db.compact().unwrap();
        assert_eq!(kept(&db), values);
        drop(db);
        assert_eq!(names(&path), ["data.mdb", "lock.mdb"], "a copy was left behind");
        let db = lmdb().open(&path).unwrap();
        assert_eq!(kept(&db), values);
        assert_eq!(Array::open(db.store(), "/after").unwrap().read_all::<u8>().unwrap(), vec![1, 2, 3, 4]);
    }
}

#[test]
fn an_open_snapshot_makes_it_refuse_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    compact_fixture::refused_while_a_snapshot_is_open(&lmdb().create(dir.path().join("db")).unwrap());
}

/// Set for the child that holds the database open: its folder.
const HOLDER_ENV: &str = "ZARRDB_LMDB_HOLDER";

/// The child: opens the database, says so, and keeps it open until its stdin closes.
#[test]
fn child_holds_the_database_open() {
    let Some(path) = std::env::var_os(HOLDER_ENV) else { return };
    let db = lmdb().open(&path).unwrap();
    let _ = kept(&db);
    println!("open");
    std::io::stdout().flush().unwrap();
    let _ = std::io::stdin().lines().count();
}

#[test]
fn another_process_with_the_database_open_makes_it_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let values = fill(&lmdb().create(&path).unwrap());
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_holds_the_database_open", "--nocapture", "--quiet"])
        .env(HOLDER_ENV, &path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(lines.any(|l| l.unwrap().contains("open")), "the child did not open the database");
    let db = lmdb().open(&path).unwrap();
    let err = db.compact().unwrap_err();
    assert!(matches!(err, Error::Compact(CompactError::InUse { holder: "another process", .. })), "{err}");
    assert_eq!(kept(&db), values);
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    db.compact().unwrap();
    assert_eq!(kept(&db), values);
}

/// Set for the child that opens, reads, writes and closes the database over and over.
const CYCLER_ENV: &str = "ZARRDB_LMDB_CYCLER";
const CYCLES: usize = 40;

/// The child: each cycle opens the database, checks the kept array, writes a small array of its
/// own and closes it; an open may wait for a compaction of the parent.
#[test]
fn child_opens_and_closes_the_database() {
    let Some(path) = std::env::var_os(CYCLER_ENV) else { return };
    let values = compact_fixture::values();
    for cycle in 0..CYCLES {
        let db = lmdb().open(&path).unwrap();
        assert_eq!(kept(&db), values, "cycle {cycle} read the kept array wrong");
        let meta = ArrayMetadata::new(DataType::UInt64, vec![1], vec![1]);
        let a = Array::create(db.store(), &format!("/cycle{cycle}"), meta).unwrap();
        a.write_region(&[0], &[1], &[cycle as u64]).unwrap();
        drop(db);
        std::thread::sleep(std::time::Duration::from_millis(15));
    }
}

#[test]
fn compactions_between_the_opens_of_another_process_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = lmdb().create(&path).unwrap();
    let values = fill(&db);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_opens_and_closes_the_database", "--nocapture", "--quiet"])
        .env(CYCLER_ENV, &path)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let (mut compacted, mut refused) = (0, 0);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        match db.compact() {
            Ok(_) => compacted += 1,
            Err(Error::Compact(CompactError::InUse { .. })) => refused += 1,
            Err(e) => panic!("compaction failed: {e}"),
        }
        assert_eq!(kept(&db), values);
    };
    assert!(status.success(), "the child failed ({compacted} compactions, {refused} refused)");
    eprintln!("{compacted} compactions, {refused} refused while the child was open");
    assert!(compacted > 0, "no compaction ran between the child's opens");
    for cycle in 0..CYCLES {
        let a = Array::open(db.store(), &format!("/cycle{cycle}")).unwrap();
        assert_eq!(a.read_all::<u64>().unwrap(), vec![cycle as u64], "the child's write {cycle} is lost");
    }
}
