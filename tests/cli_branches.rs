//! `zarrdb branch`, `merge`, `reset`, `restore` and `log --branch` end to end: a branch made from
//! a tag takes commits `main` does not see, is read as `DB@BRANCH` by the read commands, merges
//! into `main` (a merge commit, then a fast-forward the other way), a conflicting merge is refused
//! with the key named and nothing written, a reset and a restore move back, `check` finds nothing
//! wrong, and bad names fail with a message.

#[path = "common/cli.rs"]
mod cli;

use zarrdb::{Array, ArrayMetadata, DataType, Database};

/// Set element `at` of array `/a` (one element per chunk: chunk key `a/c/<at>`) on `db`'s branch.
fn set(db: &Database, at: u64, value: u8) {
    Array::open(db.store(), "/a").unwrap().write_region(&[at], &[1], &[value]).unwrap();
}

fn text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn branches_merge_reset_and_restore_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.zarrdb");
    let p = path.to_str().unwrap();
    let db = Database::builder().history(true).create(&path).unwrap();
    let a = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![4], vec![1])).unwrap();
    a.write_region(&[0], &[4], &[1u8, 2, 3, 4]).unwrap();
    drop((a, db));
    cli::ok(&["tag", p, "start"]);

    assert!(cli::ok_text(&["branch", p, "trial", "--at", "start"]).contains("branch trial starts at"));
    let listed = cli::ok_text(&["branch", p, "--json"]);
    let names: Vec<String> = listed
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["main", "trial"]);
    let taken = cli::zarrdb(&["branch", p, "start"]);
    assert_eq!(taken.status.code(), Some(3));
    assert!(text(&taken).contains("has a tag \"start\" already"), "{taken:?}");

    let db = Database::open(&path).unwrap();
    set(&db.on_branch("trial").unwrap(), 0, 90);
    Array::create(db.store(), "/b", ArrayMetadata::new(DataType::UInt8, vec![1], vec![1])).unwrap();
    drop(db);
    assert_eq!(cli::ok(&["cat", &format!("{p}@trial"), "/a", "--raw"]), [90, 2, 3, 4]);
    assert_eq!(cli::ok(&["cat", p, "/a", "--raw"]), [1, 2, 3, 4]);
    let log = cli::ok_text(&["log", p, "--branch", "trial"]);
    // trial's commit, then main's up to start: the array's values, its creation, history's first.
    assert_eq!(log.lines().count(), 4, "{log}");
    assert!(log.lines().nth(1).unwrap().contains("(start)"), "{log}");

    assert!(cli::ok_text(&["merge", p, "trial", "-m", "take the trial"]).contains("merged into main as"));
    assert_eq!(cli::ok(&["cat", p, "/a", "--raw"]), [90, 2, 3, 4]);
    let merged: serde_json::Value =
        serde_json::from_str(cli::ok_text(&["log", p, "--json"]).lines().next().unwrap()).unwrap();
    assert_eq!(merged["message"], "take the trial");
    assert!(merged["merged"].is_string(), "{merged}");
    assert!(cli::ok_text(&["merge", p, "main", "--into", "trial"]).contains("fast-forwarded trial"));
    cli::ok(&["cat", &format!("{p}@trial"), "/b"]);

    // Both sides change a/c/1: refused, and neither moves.
    let db = Database::open(&path).unwrap();
    set(&db.on_branch("trial").unwrap(), 1, 91);
    set(&db, 1, 21);
    drop(db);
    let heads = cli::ok_text(&["branch", p]);
    let conflict = cli::zarrdb(&["merge", p, "trial"]);
    assert_eq!(conflict.status.code(), Some(3), "{conflict:?}");
    assert!(text(&conflict).contains("conflicts at 1 key(s): a/c/1"), "{conflict:?}");
    assert_eq!(cli::ok_text(&["branch", p]), heads, "a refused merge writes nothing");

    assert!(cli::ok_text(&["reset", p, "trial", "--to", "start"]).contains("trial is at"));
    assert_eq!(cli::ok(&["cat", &format!("{p}@trial"), "/a", "--raw"]), [1, 2, 3, 4]);
    assert!(cli::ok_text(&["restore", p, "/", "--to", "start"]).contains("holds start again"));
    assert_eq!(cli::ok(&["cat", p, "/a", "--raw"]), [1, 2, 3, 4]);
    assert_eq!(cli::zarrdb(&["cat", p, "/b"]).status.code(), Some(3), "/b was made after start");
    cli::ok(&["check", p]);

    assert!(cli::ok_text(&["branch", p, "trial", "--delete"]).contains("deleted branch trial"));
    let gone = cli::zarrdb(&["tree", &format!("{p}@trial")]);
    assert_eq!(gone.status.code(), Some(3), "{gone:?}");
    let main = cli::zarrdb(&["branch", p, "main", "--delete"]);
    assert_eq!(main.status.code(), Some(3));
    assert!(text(&main).contains("cannot be deleted"), "{main:?}");
    let bad = cli::zarrdb(&["branch", p, "a@b"]);
    assert_eq!(bad.status.code(), Some(3));
    assert!(text(&bad).contains("cannot name a tag or branch"), "{bad:?}");
    cli::ok(&["check", p]);
}
