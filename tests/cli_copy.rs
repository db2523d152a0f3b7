//! `zarrdb cp` between stores: database to database (another file, the same file, LMDB), to a
//! folder, to a new zip archive, and from a folder or an archive back into a database; a node
//! with its subtree or a single array, chunk bytes as they are. Refusals (a missing source node,
//! an occupied destination) change nothing.

#[path = "common/cli.rs"]
mod cli;

use cli::{ok_text as ok, zarrdb};
use zarrdb::metadata::Codec;
use zarrdb::{Array, ArrayMetadata, DataType, Database, Node};

/// /runs/a (int32, zstd) and /runs/b (float64, sharded), written.
fn source(path: &std::path::Path) {
    let db = Database::create(path).unwrap();
    let a = Array::create(
        db.store(),
        "/runs/a",
        ArrayMetadata::new(DataType::Int32, vec![10, 10], vec![4, 4]).with_codecs([Codec::bytes(), Codec::zstd(3)]),
    )
    .unwrap();
    a.write_region(&[0, 0], &[10, 10], &(0..100).collect::<Vec<i32>>()).unwrap();
    let sharded = ArrayMetadata::new(DataType::Float64, vec![8], vec![8])
        .with_codecs([Codec::Sharding(zarrdb::metadata::ShardingConfig::new(vec![2]))]);
    let b = Array::create(db.store(), "/runs/b", sharded).unwrap();
    b.write_region(&[0], &[8], &[0.5f64, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5]).unwrap();
}

/// The values of /…/a and /…/b under `prefix` of the store at `locator`, as JSON text.
fn values(locator: &str, prefix: &str) -> (String, String) {
    (ok(&["cat", locator, &format!("{prefix}/a"), "--json"]), ok(&["cat", locator, &format!("{prefix}/b"), "--json"]))
}

#[test]
fn nodes_copy_between_every_kind_of_store() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.zarrdb");
    source(&src);
    let src = src.to_str().unwrap();
    let expected = values(src, "/runs");
    let other = dir.path().join("other.zarrdb").display().to_string();
    let lmdb = format!("lmdb:{}", dir.path().join("env").display());
    let folder = format!("dir:{}", dir.path().join("out.zarr").display());
    let zip = dir.path().join("out.zip").display().to_string();

    ok(&["cp", &format!("{src}:/runs"), &format!("{other}:/copied")]);
    assert_eq!(values(&other, "/copied"), expected);
    ok(&["cp", &format!("{src}:/runs"), &format!("{src}:/again/runs")]);
    assert_eq!(values(src, "/again/runs"), expected);
    ok(&["cp", &format!("{other}:/copied"), &format!("{lmdb}:/x")]);
    assert_eq!(values(&lmdb, "/x"), expected);
    ok(&["cp", &format!("{lmdb}:/x"), &folder]);
    assert_eq!(values(&folder, ""), expected);
    ok(&["cp", &format!("{src}:/runs"), &zip]);
    assert_eq!(values(&zip, ""), expected);
    ok(&["cp", &zip, &format!("{other}:/from_zip")]);
    assert_eq!(values(&other, "/from_zip"), expected);
    ok(&["cp", &folder, &format!("{other}:/from_folder")]);
    assert_eq!(values(&other, "/from_folder"), expected);
    // One array alone.
    ok(&["cp", &format!("{src}:/runs/b"), &format!("{other}:/only_b")]);
    assert_eq!(ok(&["cat", &other, "/only_b", "--json"]), expected.1);

    // Chunk bytes as they were: the sharded array's stored values are identical.
    let stored = |path: &str, node: &str| {
        let db = Database::builder().read_only(true).open(path).unwrap();
        let Node::Array(a) = Node::open(db.begin_read().unwrap().store(), node).unwrap() else { panic!() };
        let key = a.chunk_key(&[0]);
        a.store().get(&key).unwrap().unwrap()
    };
    assert_eq!(stored(src, "/runs/b"), stored(&other, "/only_b"));

    // Refusals change nothing.
    let tree = ok(&["tree", &other]);
    for (args, expected) in [
        (vec!["cp", &format!("{src}:/missing") as &str, &format!("{other}:/m")], "no node at \"/missing\""),
        (vec!["cp", &format!("{src}:/runs"), &format!("{other}:/copied")], "cannot import or copy to /copied"),
        (vec!["cp", &format!("{src}:/runs"), &format!("{other}:/copied/a/inside")], "/copied/a"),
        (vec!["cp", &folder, &format!("{zip}:/n")], "only from a database"),
    ] {
        let out = zarrdb(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert_eq!(ok(&["tree", &other]), tree, "{args:?} changed the destination");
    }
}

#[test]
fn refused_copies_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.zarrdb");
    source(&src);
    let src = src.to_str().unwrap();
    let new_db = dir.path().join("new.zarrdb").display().to_string();
    let new_env = format!("lmdb:{}", dir.path().join("new_env").display());
    for (args, expected) in [
        (vec!["cp".to_owned(), format!("{src}:/missing"), new_db.clone()], "/missing"),
        (vec!["cp".to_owned(), format!("{src}:/missing"), new_env], "/missing"),
        // A node without its slash would otherwise name a new file "new.zarrdb:runs".
        (vec!["cp".to_owned(), format!("{src}:/runs"), format!("{new_db}:runs")], "STORE:/NODE"),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = zarrdb(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(expected), "{args:?}: {out:?}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["src.zarrdb"], "a refused cp created something");
}
