//! Listing an older version: the keys and child prefixes it held, on every backend, after later
//! commits removed some of them, added others and rewrote the rest. On redb and LMDB a version
//! on `main`'s line reads as the head but for the keys changed since (`view::Behind`), so its
//! listings merge the head's keys with the version's own; on sled it holds every entry. Both are
//! checked against what the version held, by `list_dir` (one seek per child, the way groups
//! list their members) and by `list_prefix`.

use zarrdb::db::VersionRef;
use zarrdb::store::DirListing;
use zarrdb::{Backend, Database};

fn set(db: &Database, puts: &[&str], erases: &[&str]) -> VersionRef {
    let txn = db.begin_write().unwrap();
    for key in puts {
        txn.store().set(key, format!("{key} at {}", puts.len()).as_bytes()).unwrap();
    }
    for key in erases {
        txn.store().erase(key).unwrap();
    }
    txn.commit().unwrap();
    VersionRef::Commit(db.resolve(&VersionRef::Branch("main".into())).unwrap().id)
}

fn dir(keys: &[&str], prefixes: &[&str]) -> DirListing {
    DirListing {
        keys: keys.iter().map(|k| k.to_string()).collect(),
        prefixes: prefixes.iter().map(|p| p.to_string()).collect(),
    }
}

#[test]
fn an_older_version_lists_what_it_held() {
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let tmp = tempfile::tempdir().unwrap();
        let db = Database::builder().backend(backend).history(true).create(tmp.path().join("l.zarrdb")).unwrap();
        let v1 = set(&db, &["g/a/x", "g/b/y", "g/c/z", "g/k1", "g/k3", "h"], &[]);
        let v2 = set(&db, &["g/d/w", "g/k2", "g/k1", "g/b0"], &["g/b/y", "g/k3"]);
        // Past v2 too: it is behind the head, with changes of its own since v1.
        let head = set(&db, &["g/e/v", "g/a/x"], &["g/c/z", "g/k2"]);

        let listed = |at: &VersionRef, prefix: &str| {
            let version = db.open_version(at).unwrap();
            (version.store().list_dir(prefix).unwrap(), version.store().list_prefix(prefix).unwrap())
        };
        let (d1, p1) = listed(&v1, "g/");
        assert_eq!(d1, dir(&["k1", "k3"], &["a", "b", "c"]), "{backend:?}: v1");
        assert_eq!(p1, ["g/a/x", "g/b/y", "g/c/z", "g/k1", "g/k3"], "{backend:?}: v1");
        let (d2, p2) = listed(&v2, "g/");
        assert_eq!(d2, dir(&["b0", "k1", "k2"], &["a", "c", "d"]), "{backend:?}: v2");
        assert_eq!(p2, ["g/a/x", "g/b0", "g/c/z", "g/d/w", "g/k1", "g/k2"], "{backend:?}: v2");
        let (dh, ph) = listed(&head, "g/");
        assert_eq!(dh, dir(&["b0", "k1"], &["a", "d", "e"]), "{backend:?}: head");
        assert_eq!(ph, ["g/a/x", "g/b0", "g/d/w", "g/e/v", "g/k1"], "{backend:?}: head");
        // The whole key space: the database's own keys are never listed.
        let (top, all) = listed(&v1, "");
        assert_eq!(top, dir(&["h"], &["g"]), "{backend:?}: v1 top");
        assert_eq!(all.len(), 6, "{backend:?}: {all:?}");
        // A prefix that only the version still holds, and one only the head holds.
        assert_eq!(listed(&v1, "g/b/").1, ["g/b/y"], "{backend:?}");
        assert!(listed(&v1, "g/e/").1.is_empty(), "{backend:?}");
        // And the values behind the listing.
        let version = db.open_version(&v1).unwrap();
        for key in &p1 {
            assert_eq!(
                version.store().get(key).unwrap(),
                Some(format!("{key} at 6").into_bytes()),
                "{backend:?}: {key}"
            );
        }
        assert_eq!(version.store().get("g/d/w").unwrap(), None, "{backend:?}");
        assert_eq!(db.check_history().unwrap(), [], "{backend:?}");
    }
}
