//! `zarrdb expire` and `zarrdb gc`: versions older than the one kept are refused by every read
//! command (exit 3) unless tagged, the collection frees exactly the one value only an expired
//! version read, `zarrdb check` finds nothing wrong after it, `--older-than` keeps what is
//! younger, and bad arguments or a database without history fail with a message.

#[path = "common/cli.rs"]
mod cli;

use zarrdb::db::VersionRef;
use zarrdb::Database;

#[test]
fn expire_then_gc_frees_what_only_expired_versions_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.zarrdb");
    let p = path.to_str().unwrap();
    let db = Database::builder().history(true).create(&path).unwrap();
    for round in 0..3u8 {
        db.store().set("k", &[round; 10_000]).unwrap();
    }
    let log = db.log().unwrap();
    let (newest, middle, first) = (log[0].id, log[1].id, log[2].id);
    db.tag("first", &VersionRef::Commit(first)).unwrap();
    drop(db);

    let said = cli::ok_text(&["expire", p, "--keep", "main"]);
    assert!(said.contains(&newest.to_string()), "{said}");
    let expired = cli::zarrdb(&["tree", &format!("{p}@{middle}")]);
    assert_eq!(expired.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&expired.stderr).contains("has expired"), "{expired:?}");
    cli::ok(&["tree", &format!("{p}@first")]);

    let freed: serde_json::Value = serde_json::from_str(&cli::ok_text(&["gc", p, "--json"])).unwrap();
    // The first version is tagged; the middle one's value was read by it alone.
    assert_eq!((freed["values"].as_u64(), freed["freed_bytes"].as_u64()), (Some(1), Some(10_000)), "{freed}");
    assert!(freed["versions"].as_u64().unwrap() >= 1, "{freed}");
    assert!(cli::ok_text(&["gc", p]).starts_with("freed 0 values"));
    cli::ok(&["check", p]);

    // Nothing is a day old: the horizon stays at the newest commit.
    assert!(cli::ok_text(&["expire", p, "--older-than", "1d"]).contains(&newest.to_string()));
    for bad in [&["expire", p, "--older-than", "1.5d"][..], &["expire", p, "--older-than", "30"]] {
        let refused = cli::zarrdb(bad);
        assert_eq!(refused.status.code(), Some(3), "{bad:?}");
        assert!(String::from_utf8_lossy(&refused.stderr).contains("--older-than"), "{refused:?}");
    }
    assert_eq!(cli::zarrdb(&["expire", p]).status.code(), Some(2), "neither --keep nor --older-than");
    let young = dir.path().join("young.zarrdb");
    drop(Database::builder().history(true).create(&young).unwrap());
    let none = cli::ok_text(&["expire", young.to_str().unwrap(), "--older-than", "1d"]);
    assert!(none.contains("none expires"), "{none}");

    let plain = dir.path().join("plain.zarrdb");
    drop(Database::create(&plain).unwrap());
    let off = cli::zarrdb(&["gc", plain.to_str().unwrap()]);
    assert_eq!(off.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&off.stderr).contains("keeps no history"), "{off:?}");
}
