//! A merge after a collection starts from where the two sides really parted. Here `main` reaches
//! a commit that branch `b1` holds only through a merge of a branch since deleted: the merge
//! commit and what it merged have expired. Had the collection folded them away, the next merge
//! of `main` into `b1` would start from an older commit, where `main`'s removal of key `k` looks
//! like no change at all, and bring `b1`'s stale `k` back without a conflict. Each case runs on
//! redb, LMDB and sled.

use zarrdb::db::{MergeOutcome, VersionRef};
use zarrdb::{Backend, Database};

fn commit(db: &Database, sets: &[(&str, &[u8])], erases: &[&str]) {
    let txn = db.begin_write().unwrap();
    let store = txn.store();
    for (key, value) in sets {
        store.set(key, value).unwrap();
    }
    for key in erases {
        store.erase(key).unwrap();
    }
    txn.commit().unwrap();
}

fn branch(name: &str) -> VersionRef {
    VersionRef::Branch(name.into())
}

#[test]
fn a_merge_after_collection_keeps_the_other_sides_removal() {
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::builder().backend(backend).history(true).create(dir.path().join("m.db")).unwrap();
        commit(&db, &[("z", b"start")], &[]);
        // Branch `x` sets `k`; `b1` is made there; `x` goes on and `main` merges it.
        db.create_branch("x", &branch("main")).unwrap();
        let x = db.on_branch("x").unwrap();
        commit(&x, &[("k", b"from x")], &[]);
        db.create_branch("b1", &branch("x")).unwrap();
        commit(&x, &[("j", b"more of x")], &[]);
        commit(&db, &[("a", b"main's own")], &[]);
        assert!(matches!(db.merge(&branch("x"), "main", "merge x").unwrap(), MergeOutcome::Merged(_)));
        db.delete_branch("x").unwrap();
        // `main` removes `k`, then everything before its head expires and is collected.
        commit(&db, &[], &["k"]);
        commit(&db, &[("a", b"main again")], &[]);
        db.expire(&branch("main")).unwrap();
        db.collect().unwrap();
        assert!(db.check_history().unwrap().is_empty(), "{}", backend.name());
        // `b1` changes something of its own and takes in `main`.
        let b1 = db.on_branch("b1").unwrap();
        commit(&b1, &[("q", b"b1's own")], &[]);
        let outcome = db.merge(&branch("main"), "b1", "merge main").unwrap();
        assert!(matches!(outcome, MergeOutcome::Merged(_)), "{}: {outcome:?}", backend.name());
        let store = b1.store();
        assert_eq!(store.get("k").unwrap(), None, "{}: main removed k after b1 was made", backend.name());
        assert_eq!(store.get("q").unwrap().as_deref(), Some(&b"b1's own"[..]));
        assert_eq!(store.get("j").unwrap().as_deref(), Some(&b"more of x"[..]));
        assert_eq!(store.get("a").unwrap().as_deref(), Some(&b"main again"[..]));
        assert!(db.check_history().unwrap().is_empty(), "{}", backend.name());
    }
}
