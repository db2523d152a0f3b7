//! A collection keeps a value that `main` superseded and later took back through a merge.
//!
//! Here `main` writes `k` (value E), overwrites it, and writes the same bytes again (a new value).
//! Branch `b1`, made before the overwrite, merges `main` in: both sides "changed" `k` to the
//! same bytes since the criss-cross merge base, which is no conflict, so `b1` keeps naming E.
//! `main` then merges `b1` and names E again. Once that merge and everything before it expire,
//! the collection folds the run where E was superseded into the base: E must stay, since the
//! versions kept after the run read it. Each case runs on redb, LMDB and sled, with E too large to live in its entry and
//! small enough to.

use zarrdb::db::{CommitId, MergeOutcome, VersionRef};
use zarrdb::{Backend, Database};

fn commit(db: &Database, sets: &[(&str, &[u8])]) {
    let txn = db.begin_write().unwrap();
    for (key, value) in sets {
        txn.store().set(key, value).unwrap();
    }
    txn.commit().unwrap();
}

fn branch(name: &str) -> VersionRef {
    VersionRef::Branch(name.into())
}

fn merged(outcome: MergeOutcome) -> bool {
    matches!(outcome, MergeOutcome::Merged(_))
}

/// Make the history above on `db`; `main`'s head then names E at `k`. Returns E's bytes and the
/// commit that wrote E.
fn take_back(db: &Database, len: usize) -> (Vec<u8>, CommitId) {
    let e: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    commit(db, &[("k", b"a"), ("j", b"0")]);
    db.create_branch("b0", &branch("main")).unwrap();
    commit(db, &[("k", &e)]);
    let wrote = db.resolve(&branch("main")).unwrap().id;
    // Newer than `main`'s commit of E, so merges that reach both start from here.
    commit(&db.on_branch("b0").unwrap(), &[("j", b"1")]);
    db.create_branch("b1", &branch("main")).unwrap();
    assert!(merged(db.merge(&branch("b0"), "main", "merge b0").unwrap()));
    assert!(merged(db.merge(&branch("b0"), "b1", "merge b0").unwrap()));
    commit(db, &[("k", b"y")]);
    commit(db, &[("k", &e)]);
    // The merge base is b0's commit, where `k` held "a": both sides changed it to E's bytes.
    assert!(merged(db.merge(&branch("main"), "b1", "merge main").unwrap()));
    assert!(merged(db.merge(&branch("b1"), "main", "merge b1").unwrap()));
    (e, wrote)
}

/// Commit twice more, expire everything before the first of the two, collect, and check the
/// history: the commit kept.
fn expire_and_collect(db: &Database, what: &str) -> CommitId {
    commit(db, &[("j", b"2")]);
    let kept = db.resolve(&branch("main")).unwrap().id;
    commit(db, &[("j", b"3")]);
    db.expire(&VersionRef::Commit(kept)).unwrap();
    db.collect().unwrap();
    assert!(db.check_history().unwrap().is_empty(), "{what}: {:?}", db.check_history());
    kept
}

fn create(backend: Backend, dir: &std::path::Path) -> Database {
    Database::builder().backend(backend).history(true).create(dir.join("r.db")).unwrap()
}

#[test]
fn a_value_main_takes_back_through_a_merge_survives_collection() {
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        for len in [100, 10_000] {
            let what = format!("{} with {len} bytes", backend.name());
            let dir = tempfile::tempdir().unwrap();
            let db = create(backend, dir.path());
            let (e, _) = take_back(&db, len);
            db.delete_branch("b0").unwrap();
            db.delete_branch("b1").unwrap();
            // The merge that took E back expires too: the version after it is the oldest kept.
            let kept = expire_and_collect(&db, &what);
            let then = db.open_version(&VersionRef::Commit(kept)).unwrap();
            assert_eq!(then.store().get("k").unwrap().as_deref(), Some(&e[..]), "{what}");
            assert_eq!(db.store().get("k").unwrap().as_deref(), Some(&e[..]), "{what}");
        }
    }
}

/// The same value, superseded once more after the merge took it back, while a tag keeps the
/// commit that first wrote it (not the oldest kept one): the run folded between that tag and
/// the next kept commit must leave E to the tagged version.
#[test]
fn a_tagged_writer_keeps_a_value_a_later_run_took_back_and_superseded() {
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let what = backend.name();
        let dir = tempfile::tempdir().unwrap();
        let db = create(backend, dir.path());
        let (e, wrote) = take_back(&db, 10_000);
        db.delete_branch("b0").unwrap();
        db.delete_branch("b1").unwrap();
        // Kept below the run: the commit before E's (so E's writer is not the oldest kept, nor
        // folded) and E's.
        let before = db.log().unwrap().into_iter().find(|c| c.id == wrote).unwrap().parent.unwrap();
        db.tag("before", &VersionRef::Commit(before)).unwrap();
        db.tag("e", &VersionRef::Commit(wrote)).unwrap();
        commit(&db, &[("k", b"z")]);
        expire_and_collect(&db, what);
        let tagged = db.open_version(&VersionRef::Tag("e".into())).unwrap();
        assert_eq!(tagged.store().get("k").unwrap().as_deref(), Some(&e[..]), "{what}");
        assert_eq!(db.store().get("k").unwrap().as_deref(), Some(&b"z"[..]), "{what}");
    }
}
