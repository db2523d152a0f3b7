//! Damaged objects of a bucket database (on a real S3 server, SeaweedFS on 127.0.0.1), each
//! rewritten behind the engine's back through the plain `s3://` store: the marker, the head, a
//! commit record, a manifest page and a pack, each cut short, with a byte flipped, and removed.
//! Every read or open that meets one fails with a typed error naming the object or key, never a
//! panic, a hang or wrong bytes.

#[path = "common/seaweed.rs"]
mod seaweed;

use zarrdb::error::StoreError;
use zarrdb::store::ObjectStore;
use zarrdb::store::{ListableStore, ReadableStore, WritableStore};
use zarrdb::{Database, Error};

/// A database holding an inline value (`small`) and a packed one (`big`); its plain store.
fn made(name: &str) -> (String, ObjectStore) {
    let plain = seaweed::bucket(name);
    let db = Database::create(format!("zarrdb+{plain}")).unwrap();
    db.store().set("small", b"inline").unwrap();
    db.store().set("big", &vec![9u8; 100_000]).unwrap();
    (format!("zarrdb+{plain}"), ObjectStore::open(&plain).unwrap())
}

/// Every object of `kind` (`format`, `head`, `commits/`, `pages/`, `packs/`) under `__zarrdb/`
/// (so the ones the head reaches are among them).
fn objects(store: &ObjectStore, kind: &str) -> Vec<String> {
    let all = store.list_prefix(&format!("__zarrdb/{kind}")).unwrap();
    assert!(!all.is_empty(), "no {kind} object");
    all
}

/// The two values, as read.
type Both = (Option<Vec<u8>>, Option<Vec<u8>>);

/// What reading both values (after opening) answers.
fn read_both(locator: &str) -> Result<Both, Error> {
    let db = Database::builder().read_only(true).open(locator)?;
    let snapshot = db.begin_read()?;
    let store = snapshot.store();
    Ok((store.get("small")?, store.get("big")?))
}

fn refused(result: Result<Both, Error>, what: &str) {
    match result {
        Err(Error::Store(StoreError::Damaged { key, .. })) => assert!(!key.is_empty(), "{what}"),
        Err(Error::Store(StoreError::Open { reason, .. })) => assert!(!reason.is_empty(), "{what}"),
        Err(other) => panic!("{what}: an error of another kind: {other:?}"),
        Ok((small, big)) => {
            // Only a damaged pack may leave the inline value readable; the packed one never reads wrong.
            assert!(what.starts_with("packs/"), "{what}: read without an error: {small:?}");
            assert_eq!(small.as_deref(), Some(&b"inline"[..]), "{what}");
            panic!("{what}: the packed value read without an error: {} bytes", big.map_or(0, |b| b.len()));
        }
    }
}

#[test]
fn every_damaged_object_is_a_typed_error() {
    for kind in ["format", "head", "commits/", "pages/", "packs/"] {
        for damage in ["cut", "flip", "remove"] {
            let what = format!("{kind} {damage}");
            let (locator, store) = made(&format!("damaged-{}-{damage}", kind.trim_end_matches('/')));
            assert!(read_both(&locator).is_ok(), "{what}: sound before");
            for key in objects(&store, kind) {
                let bytes = store.get(&key).unwrap().unwrap();
                match damage {
                    "cut" => store.set(&key, &bytes[..bytes.len() / 2]).unwrap(),
                    "flip" => {
                        let mut bad = bytes.clone();
                        let at = bad.len() / 2;
                        bad[at] ^= 0x10;
                        store.set(&key, &bad).unwrap();
                    }
                    _ => store.erase(&key).unwrap(),
                }
            }
            let got = read_both(&locator);
            if kind == "head" && damage == "remove" {
                // No head is the state of a database before its first commit: empty, not damaged.
                assert_eq!(got.unwrap(), (None, None), "{what}");
                continue;
            }
            refused(got, &what);
        }
    }
}
