//! `zarrdb log` and `zarrdb tag` on a database that keeps history: the commits newest first with
//! their messages and tags, tags made on `main` or on a commit id, a taken or deleted name refused
//! with status 3, and a database without history named as such.

#[path = "common/cli.rs"]
mod cli;

use zarrdb::Database;

#[test]
fn log_and_tags_on_a_database_with_history() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.zarrdb");
    let p = path.to_str().unwrap();
    let db = Database::builder().history(true).create(&path).unwrap();
    for (i, message) in ["first", "second"].iter().enumerate() {
        let txn = db.begin_write().unwrap();
        txn.store().set("k", &[i as u8; 10]).unwrap();
        txn.commit_with(message, "cli").unwrap();
    }
    let first = db.log().unwrap()[1].id.to_string();
    drop(db);

    cli::ok(&["tag", p, "v2"]);
    cli::ok(&["tag", p, "v1", "--at", &first]);
    let lines: Vec<serde_json::Value> =
        cli::ok_text(&["log", p, "--json"]).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let messages: Vec<&str> = lines.iter().map(|l| l["message"].as_str().unwrap()).collect();
    assert_eq!(messages, ["second", "first", "history begins"]);
    assert_eq!(lines[0]["tags"], serde_json::json!(["v2"]));
    assert_eq!(lines[1]["tags"], serde_json::json!(["v1"]));
    assert_eq!((lines[1]["id"].as_str(), lines[0]["parent"].as_str()), (Some(first.as_str()), Some(first.as_str())));
    assert_eq!(lines[0]["bytes_written"], 10);
    let text = cli::ok_text(&["log", p]);
    assert!(text.lines().count() == 3 && text.lines().next().unwrap().contains("(v2)  second"), "{text}");

    let taken = cli::zarrdb(&["tag", p, "v1"]);
    assert_eq!(taken.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&taken.stderr).contains("a tag never moves"));
    cli::ok(&["tag", p, "v1", "--delete"]);
    let retired = cli::zarrdb(&["tag", p, "v1"]);
    assert_eq!(retired.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&retired.stderr).contains("never given to another commit"));

    let plain = dir.path().join("plain.zarrdb");
    drop(Database::create(&plain).unwrap());
    let off = cli::zarrdb(&["log", plain.to_str().unwrap()]);
    assert_eq!(off.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&off.stderr).contains("keeps no history"), "{off:?}");
}

#[test]
fn read_commands_take_a_version_after_the_database() {
    use zarrdb::db::VersionRef;
    use zarrdb::{Array, ArrayMetadata, DataType};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.zarrdb");
    let p = path.to_str().unwrap();
    let db = Database::builder().history(true).create(&path).unwrap();
    let a = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![2], vec![1])).unwrap();
    a.write_region(&[0], &[2], &[1u8, 2]).unwrap();
    let v1 = db.tag("v1", &VersionRef::Branch("main".into())).unwrap().to_string();
    a.write_region(&[0], &[2], &[3u8, 4]).unwrap();
    drop((a, db));

    let cat = |locator: &str, node: &str| -> serde_json::Value {
        serde_json::from_str(&cli::ok_text(&["cat", locator, node, "--json"])).unwrap()
    };
    let old = cat(&format!("{p}@v1"), "/a");
    assert_eq!(old, cat(&format!("{p}@{v1}"), "/a"), "a tag and its commit id read the same");
    assert_ne!(old, cat(p, "/a"));
    assert_eq!(cat(&format!("{p}@main"), "/a"), cat(p, "/a"));
    assert!(old.to_string().contains("[1,2]"), "{old}");

    let differs = cli::zarrdb(&["diff", &format!("{p}@v1"), p]);
    assert_eq!(differs.status.code(), Some(1), "{differs:?}");
    assert!(String::from_utf8_lossy(&differs.stdout).contains("/a"));
    assert_eq!(cli::zarrdb(&["diff", &format!("{p}@v1:/a"), &format!("{p}@{v1}:/a")]).status.code(), Some(0));

    cli::ok(&["cp", &format!("{p}@v1:/a"), &format!("{p}:/a_v1")]);
    assert_eq!(cat(p, "/a_v1"), old, "cp from a version within the database");

    let exported = dir.path().join("v1.zarr");
    cli::ok(&["export", &format!("{p}@v1"), exported.to_str().unwrap()]);
    assert_eq!(cat(exported.to_str().unwrap(), "/a"), old, "export of a version");

    let missing = cli::zarrdb(&["tree", &format!("{p}@nope")]);
    assert_eq!(missing.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("has no tag or branch \"nope\""), "{missing:?}");

    // A file whose name holds '@' opens as itself.
    let odd = dir.path().join("x@y");
    drop(Database::create(&odd).unwrap());
    cli::ok(&["tree", odd.to_str().unwrap()]);
}
