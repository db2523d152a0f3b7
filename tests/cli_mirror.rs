//! `zarrdb cp --history`: a database that keeps history pushed into a new database of another
//! engine (created keeping history) and pulled back into a third, every version and tag there; a
//! second push after one commit reports that commit alone; a destination that went its own way is
//! refused with status 3 and the commit named; a node or a version in a locator is refused.

#[path = "common/cli.rs"]
mod cli;

use zarrdb::db::VersionRef;
use zarrdb::Database;

fn commit(db: &Database, value: u8, message: &str) {
    let txn = db.begin_write().unwrap();
    txn.store().set("k", &[value; 100]).unwrap();
    txn.commit_with(message, "cli").unwrap();
}

#[test]
fn push_and_pull_keep_every_version() {
    let dir = tempfile::tempdir().unwrap();
    let (local, remote, back) =
        (dir.path().join("local.zarrdb"), dir.path().join("remote.lmdb"), dir.path().join("back.zarrdb"));
    let (l, b) = (local.to_str().unwrap(), back.to_str().unwrap());
    let r = format!("lmdb:{}", remote.display());
    let db = Database::builder().history(true).create(&local).unwrap();
    for i in 0..5 {
        commit(&db, i, &format!("commit {i}"));
    }
    db.tag("v1", &VersionRef::Branch("main".into())).unwrap();
    drop(db);

    let pushed: serde_json::Value = serde_json::from_slice(&cli::ok(&["cp", "--history", l, &r, "--json"])).unwrap();
    assert_eq!(pushed["commits"], 6, "{pushed}");
    let text = cli::ok_text(&["cp", "--history", &r, b]);
    assert!(text.contains("6 new commits"), "{text}");

    let db = Database::open(&local).unwrap();
    commit(&db, 9, "one more");
    drop(db);
    let again: serde_json::Value = serde_json::from_slice(&cli::ok(&["cp", "--history", l, &r, "--json"])).unwrap();
    assert_eq!((again["commits"].as_u64(), again["keys_removed"].as_u64()), (Some(1), Some(0)), "{again}");
    cli::ok(&["cp", "--history", &r, b]);

    let (a, c) = (Database::open(&local).unwrap(), Database::open(&back).unwrap());
    assert_eq!(a.log().unwrap(), c.log().unwrap());
    assert_eq!(a.tags().unwrap(), c.tags().unwrap());
    let v1 = c.open_version(&VersionRef::Tag("v1".into())).unwrap();
    assert_eq!(v1.store().get("k").unwrap(), Some(vec![4; 100]));
    assert_eq!(c.store().get("k").unwrap(), Some(vec![9; 100]));

    // The pulled copy goes its own way: pushing into it is refused.
    commit(&c, 7, "only in back");
    let newest = c.log().unwrap()[0].id.to_string();
    drop((a, c, v1));
    let refused = cli::zarrdb(&["cp", "--history", l, b]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&newest) && stderr.contains("mirroring would lose it"), "{stderr}");

    for bad in [format!("{l}:/x"), format!("{l}@v1")] {
        let refused = cli::zarrdb(&["cp", "--history", &bad, &r]);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(!refused.status.success() && stderr.contains("no :/NODE or @VERSION"), "{bad}: {stderr}");
    }
}
