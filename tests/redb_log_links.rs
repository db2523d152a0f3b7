//! One redb database under several names (a symbolic link, a hard link, a relative path and the
//! absolute path) is one database with one commit log: a child process commits through one name
//! (through the log), is killed with SIGKILL after a number of acknowledged commits, and the
//! database opened through another name holds every acknowledged commit, and no record of an
//! earlier history applied on top of a later one: each round writes new values over the same
//! keys, so a stale log replayed over them would bring back an older round's values.
//!
//! Rounds alternate between a read-only check (the next child then opens a database whose log
//! was left by the kill) and a check that writes through the other name and closes cleanly.
//! `ZARRDB_KILLS` sets the number of kills (10 by default).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use zarrdb::Database;

const CHILD_ENV: &str = "ZARRDB_LINKS_CHILD";
const KEYS: u64 = 30;

/// The value round `round` writes under key `j`.
fn value(round: u64, j: u64) -> Vec<u8> {
    let mut v = format!("round {round} key {j} ").into_bytes();
    v.resize(64 + (j as usize * 13) % 200, round as u8);
    v
}

/// The child: open the database at the path given (relative to its working folder), write
/// `k/0 ..` with round `ZARRDB_LINKS_ROUND`'s values, one durable commit each, acknowledging
/// each; then wait to be killed.
#[test]
fn child_entry() {
    let Some(path) = std::env::var_os(CHILD_ENV) else { return };
    let round: u64 = std::env::var("ZARRDB_LINKS_ROUND").unwrap().parse().unwrap();
    let db = Database::open(&path).unwrap();
    for j in 0..KEYS {
        db.store().set(&format!("k/{j}"), &value(round, j)).unwrap();
        println!("ACK {j}");
    }
    println!("DONE");
    std::thread::sleep(std::time::Duration::from_secs(60));
}

/// Run the child of `round` on `path` (from the working folder `cwd`) and kill it once it has
/// acknowledged `kill_after` commits; how many it acknowledged.
fn commit_and_kill(cwd: &Path, path: &Path, round: u64, kill_after: u64) -> u64 {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
        .current_dir(cwd)
        .env(CHILD_ENV, path)
        .env("ZARRDB_LINKS_ROUND", round.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut acknowledged = 0;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        acknowledged += u64::from(line.contains("ACK "));
        if acknowledged >= kill_after || line.ends_with("DONE") {
            break;
        }
    }
    // SIGKILL, while the child may be in the middle of its next commit.
    child.kill().unwrap();
    child.wait().unwrap();
    acknowledged
}

/// Every `k/j` of the database.
fn contents(db: &Database) -> BTreeMap<u64, Vec<u8>> {
    (0..KEYS).filter_map(|j| db.store().get(&format!("k/{j}")).unwrap().map(|v| (j, v))).collect()
}

#[test]
fn every_name_of_one_database_finds_its_log_and_histories_never_mix() {
    let kills: u64 = std::env::var("ZARRDB_KILLS").ok().and_then(|v| v.parse().ok()).unwrap_or(10);
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.zarrdb");
    Database::create(&real).unwrap().store().set("base", b"0").unwrap();
    std::os::unix::fs::symlink("real.zarrdb", dir.path().join("link.zarrdb")).unwrap();
    std::fs::hard_link(&real, dir.path().join("hard.zarrdb")).unwrap();
    // The names, all used from the folder as working directory: the link, the absolute path, the
    // hard link, a relative path.
    let names: [PathBuf; 4] =
        [PathBuf::from("link.zarrdb"), real.clone(), dir.path().join("hard.zarrdb"), PathBuf::from("./real.zarrdb")];
    let in_dir = |name: &Path| if name.is_absolute() { name.to_owned() } else { dir.path().join(name) };

    let mut model: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    let mut lost = 0;
    for round in 1..=kills {
        let writer = &names[round as usize % 4];
        let checker = &names[(round as usize + 1 + round as usize / 4) % 4];
        let checker = if checker == writer { &names[(round as usize + 2) % 4] } else { checker };
        // Between 1 and KEYS - 1 acknowledged commits, varied by round.
        let kill_after = 1 + (round * 7) % (KEYS - 1);
        let acknowledged = commit_and_kill(dir.path(), writer, round, kill_after);
        assert!(acknowledged >= kill_after.min(KEYS), "round {round}: the child stopped early");

        let check = |db: &Database| {
            let now = contents(db);
            let mut wrong = Vec::new();
            for j in 0..KEYS {
                let got = now.get(&j);
                let ok = if j < acknowledged {
                    got == Some(&value(round, j))
                } else {
                    // Not acknowledged: this round's value if it became durable, else the one before.
                    got == Some(&value(round, j)) || got == model.get(&j)
                };
                if !ok {
                    wrong.push(j);
                }
            }
            (now, wrong)
        };
        let (now, wrong) = if round % 2 == 0 {
            // Read-only through the other name: nothing changes, and the log stays for the next
            // child, which writes through yet another name.
            let db = Database::builder().read_only(true).open(in_dir(checker)).unwrap();
            check(&db)
        } else {
            // Through the other name, then one more commit there and a clean close.
            let db = Database::open(in_dir(checker)).unwrap();
            let (mut now, wrong) = check(&db);
            db.store().set("k/0", &value(1000 + round, 0)).unwrap();
            now.insert(0, value(1000 + round, 0));
            (now, wrong)
        };
        lost += wrong.len();
        assert!(
            wrong.is_empty(),
            "round {round}: written through {writer:?} ({acknowledged} acknowledged), read through {checker:?}: keys \
             {wrong:?} hold neither the acknowledged value nor the one before"
        );
        model = now;
    }
    // Through every name, the same contents.
    for name in &names {
        let db = Database::builder().read_only(true).open(in_dir(name)).unwrap();
        assert_eq!(contents(&db), model, "through {name:?}");
    }
    println!("{kills} kills, {lost} acknowledged commits lost or histories mixed");
}
