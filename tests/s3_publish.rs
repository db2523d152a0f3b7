//! `zarrdb export` to object storage and `zarrdb import` from it, against a real S3 server
//! (SeaweedFS on 127.0.0.1, `tests/common/seaweed.rs`): a round trip equal to the database; a
//! destination holding anything is refused unless `--overwrite`, which replaces it; a claim left by
//! an export that died refuses the next one, naming it, until `--overwrite`; of two exports racing
//! for one place exactly one wins, complete, and the other fails with a clear error.

#[path = "common/cli.rs"]
mod cli;
#[path = "common/seaweed.rs"]
mod seaweed;

use std::sync::{Arc, Barrier};

use cli::{ok_text, zarrdb};
use zarrdb::error::TransferError;
use zarrdb::store::{ListableStore, ObjectStore, ReadableStore, WritableStore};
use zarrdb::{Array, ArrayMetadata, DataType, Database, Error, ExportOptions};

/// A database at `path` with a sharded array, a zstd array and an implicit group; `seed` varies
/// the values.
fn database(path: &std::path::Path, seed: u16) -> Database {
    let db = Database::create(path).unwrap();
    let mut meta = ArrayMetadata::new(DataType::UInt16, vec![64, 64], vec![8, 8]);
    meta.attributes.insert("seed".into(), seed.into());
    let values: Vec<u16> = (0..64 * 64).map(|i| (i as u16).wrapping_mul(seed)).collect();
    Array::create(db.store(), "/grid/t", meta).unwrap().write_region(&[0, 0], &[64, 64], &values).unwrap();
    let sharded = ArrayMetadata::from_json(
        serde_json::json!({
            "zarr_format": 3, "node_type": "array", "shape": [40], "data_type": "int32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [20]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0,
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [10], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]
        })
        .to_string()
        .as_bytes(),
    )
    .unwrap();
    let data: Vec<i32> = (0..40).map(|i| i * i32::from(seed)).collect();
    Array::create(db.store(), "/implicit/s", sharded).unwrap().write_region(&[0], &[40], &data).unwrap();
    db
}

fn keys(locator: &str) -> Vec<String> {
    ObjectStore::open(locator).unwrap().list().unwrap()
}

#[test]
fn export_and_import_round_trip_and_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.zarrdb");
    drop(database(&path, 3));
    let db = path.to_str().unwrap();
    let remote = seaweed::bucket("publish");
    let said = ok_text(&["export", db, &remote]);
    assert!(said.starts_with(&format!("exported / of {db} to {remote}: ")), "{said}");
    assert_eq!(ok_text(&["diff", db, &remote]), "", "the bucket holds what the database holds");
    let stored = keys(&remote);
    assert!(stored.contains(&"zarr.json".to_owned()) && !stored.iter().any(|k| k.starts_with("__zarrdb")));

    let back = dir.path().join("back.zarrdb");
    let said = ok_text(&["import", &remote, back.to_str().unwrap()]);
    assert!(said.starts_with(&format!("imported Zarr v3 hierarchy {remote} into ")), "{said}");
    assert_eq!(ok_text(&["diff", db, back.to_str().unwrap()]), "");

    // Once there, a hierarchy is replaced only when asked.
    ok_text(&["attrs", db, "/grid", "--set", "run=2"]);
    let refused = zarrdb(&["export", db, &remote]);
    assert_eq!(refused.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains(&format!("export destination \"{remote}\" exists already")), "{stderr}");
    assert_eq!(zarrdb(&["diff", db, &remote]).status.code(), Some(1), "the bucket still holds the first export");
    ok_text(&["export", db, &remote, "--overwrite"]);
    assert_eq!(ok_text(&["diff", db, &remote]), "", "overwritten with the database's new state");

    // --overwrite is for object storage only.
    let folder = dir.path().join("f.zarr");
    let refused = zarrdb(&["export", db, folder.to_str().unwrap(), "--overwrite"]);
    assert_eq!(refused.status.code(), Some(3));
    assert!(!folder.exists());
}

#[test]
fn a_claim_left_behind_refuses_exports_until_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.zarrdb");
    drop(database(&path, 5));
    let db = path.to_str().unwrap();
    let remote = seaweed::bucket("claimed");
    let store = ObjectStore::open(&remote).unwrap();
    let claim = br#"{"process": 4242, "host": "elsewhere", "started_unix_seconds": 1, "nonce": 9}"#;
    store.set("__zarrdb/export", claim).unwrap();
    store.set("grid/t/c/0/0", b"half an old export").unwrap();

    let refused = zarrdb(&["export", db, &remote]);
    assert_eq!(refused.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("being written by another export (process 4242 on host \"elsewhere\""), "{stderr}");
    assert_eq!(keys(&remote).len(), 2, "nothing written, the claim untouched");

    ok_text(&["export", db, &remote, "--overwrite"]);
    assert_eq!(ok_text(&["diff", db, &remote]), "");
    assert!(!keys(&remote).iter().any(|k| k.starts_with("__zarrdb")), "the claim is gone");
}

#[test]
fn two_exports_racing_for_one_place_one_wins() {
    let dir = tempfile::tempdir().unwrap();
    let dbs: Vec<Arc<Database>> = [dir.path().join("a.zarrdb"), dir.path().join("b.zarrdb")]
        .iter()
        .zip([7, 11])
        .map(|(p, seed)| Arc::new(database(p, seed)))
        .collect();
    // Losers that met the winner's claim (rather than its finished hierarchy).
    let mut busy = 0;
    for round in 0..4 {
        let remote = seaweed::bucket(&format!("race{round}"));
        let start = Arc::new(Barrier::new(2));
        let racers: Vec<_> = dbs
            .iter()
            .map(|db| {
                let (db, start, remote) = (db.clone(), start.clone(), remote.clone());
                std::thread::spawn(move || {
                    let store = ObjectStore::open(&remote).unwrap();
                    start.wait();
                    db.publish(&store, &ExportOptions::default())
                })
            })
            .collect();
        let outcomes: Vec<_> = racers.into_iter().map(|r| r.join().unwrap()).collect();
        let winners: Vec<usize> = (0..2).filter(|&i| outcomes[i].is_ok()).collect();
        assert_eq!(winners.len(), 1, "round {round}: exactly one export wins: {outcomes:?}");
        let loser = &outcomes[1 - winners[0]];
        assert!(
            matches!(
                loser,
                Err(Error::Transfer(TransferError::DestinationBusy { .. } | TransferError::DestinationExists { .. }))
            ),
            "round {round}: the other is told why: {loser:?}"
        );
        busy += usize::from(matches!(loser, Err(Error::Transfer(TransferError::DestinationBusy { .. }))));
        let seed = [7u16, 11][winners[0]];
        let bucket: Arc<dyn zarrdb::Store> = Arc::new(ObjectStore::open(&remote).unwrap());
        let t = Array::open(bucket.clone(), "/grid/t").unwrap();
        assert_eq!(t.metadata().attributes["seed"], seed, "round {round}: the winner's hierarchy");
        let expected: Vec<u16> = (0..64 * 64).map(|i| (i as u16).wrapping_mul(seed)).collect();
        assert_eq!(t.read_all::<u16>().unwrap(), expected, "round {round}: complete");
        let s = Array::open(bucket, "/implicit/s").unwrap().read_all::<i32>().unwrap();
        assert_eq!(s, (0..40).map(|i| i * i32::from(seed)).collect::<Vec<_>>());
    }
    assert!(busy > 0, "the exports started together, yet no loser ever met a claim");
}

/// An implicit group exported gets an empty group document as its root (the last write, through
/// which readers find the hierarchy); importing from a place that holds nothing is an error.
#[test]
fn an_implicit_group_gets_a_root_document_and_nothing_imports_as_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.zarrdb");
    drop(database(&path, 2));
    let remote = seaweed::bucket("implicit");
    ok_text(&["export", path.to_str().unwrap(), &remote, "--node", "/implicit"]);
    let root = ObjectStore::open(&remote).unwrap().get("zarr.json").unwrap().expect("a root document");
    assert!(zarrdb::GroupMetadata::from_json(&root).is_ok(), "{}", String::from_utf8_lossy(&root));
    let s: Arc<dyn zarrdb::Store> = Arc::new(ObjectStore::open(&remote).unwrap());
    assert_eq!(Array::open(s, "/s").unwrap().read_all::<i32>().unwrap(), (0..40).map(|i| i * 2).collect::<Vec<_>>());

    let nothing = seaweed::bucket("nothing");
    let target = dir.path().join("target.zarrdb");
    let refused = zarrdb(&["import", &nothing, target.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("no Zarr hierarchy") || stderr.contains("no zarr"), "{stderr}");
    assert!(!target.exists());
}
