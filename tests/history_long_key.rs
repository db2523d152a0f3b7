//! On LMDB, a database with history keeps each key's entry in the oldest kept version under a
//! key of its own 13 bytes longer (`__zarrdb/h/b/` + the Zarr key), which LMDB's key limit must
//! hold: a Zarr key too long for it is refused when written (by a set and by an import), not
//! later by a collection that could then never finish; the longest key allowed goes through
//! expiry and collection.

use zarrdb::db::VersionRef;
use zarrdb::{Backend, Database};

/// LMDB's key limit with 4 KiB pages, less history's prefix for the base.
const LONGEST: usize = 1_982 - "__zarrdb/h/b/".len();

#[test]
fn a_key_too_long_for_the_base_is_refused_when_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::builder().backend(Backend::Lmdb).history(true).create(dir.path().join("h.lmdb")).unwrap();
    let long = format!("a/{}", "k".repeat(LONGEST - 2));
    let too_long = format!("{long}k");
    // The commit refuses it, naming the key and why (the error comes wrapped in the commit's).
    let refused = format!("{:?}", db.store().set(&too_long, b"v").unwrap_err());
    assert!(refused.contains(&format!("InvalidKey {{ key: {too_long:?}")), "{refused}");
    assert!(refused.contains("in a database with history"), "{refused}");
    assert_eq!(db.store().get(&too_long).unwrap(), None);
    for round in 0..3u8 {
        db.store().set(&long, &[round; 5_000]).unwrap();
    }
    db.expire(&VersionRef::Branch("main".into())).unwrap();
    let freed = db.collect().unwrap();
    assert_eq!(freed.values, 2, "the two overwritten values");
    assert_eq!(db.store().get(&long).unwrap(), Some(vec![2; 5_000]));
    assert!(db.check_history().unwrap().is_empty());

    // An import takes the same check.
    let source = dir.path().join("source");
    std::fs::create_dir_all(source.join("g")).unwrap();
    std::fs::write(source.join("g/zarr.json"), br#"{"zarr_format":3,"node_type":"group"}"#).unwrap();
    std::fs::write(source.join("zarr.json"), br#"{"zarr_format":3,"node_type":"group"}"#).unwrap();
    let at = format!("/{}", "i".repeat(LONGEST));
    let refused = db.import(&source, &zarrdb::ImportOptions::default().at(at)).unwrap_err();
    assert!(refused.to_string().contains("too long"), "{refused}");
}
