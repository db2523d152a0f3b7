//! Collection frees what a deleted or reset branch left: once a horizon is set, the commits no
//! tag or branch reaches and that are not on `main`'s ancestry go, with every value only they
//! read, while a value a merge brought into `main` stays for as long as a version of `main` reads
//! it. Their ids are then refused as expired, `check_history` finds nothing left behind, and
//! `compact` gives the space back. On redb, LMDB and sled.

use zarrdb::db::{CommitId, VersionRef};
use zarrdb::error::HistoryError;
use zarrdb::{Backend, Database, Error};

const BIG: usize = 64 << 10;

fn main_ref() -> VersionRef {
    VersionRef::Branch("main".into())
}

fn head(db: &Database, branch: &str) -> CommitId {
    db.resolve(&VersionRef::Branch(branch.into())).unwrap().id
}

fn refused_as_expired(db: &Database, id: CommitId) {
    match db.open_version(&VersionRef::Commit(id)) {
        Err(Error::History(HistoryError::Expired { .. })) => {}
        other => panic!("commit {id}: expected it expired, got {:?}", other.map(|_| ())),
    }
}

fn each_backend(case: impl Fn(&Database, Backend)) {
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::builder().backend(backend).history(true).create(dir.path().join("o.db")).unwrap();
        db.store().set("a/c/0", b"main").unwrap();
        case(&db, backend);
        assert!(db.check_history().unwrap().is_empty(), "{}", backend.name());
    }
}

#[test]
fn a_deleted_branch_is_collected_with_its_values() {
    each_backend(|db, backend| {
        db.create_branch("trial", &main_ref()).unwrap();
        let trial = db.on_branch("trial").unwrap();
        let mut ids = Vec::new();
        for i in 0..5u8 {
            trial.store().set(&format!("a/c/{}", i + 1), &vec![i; BIG]).unwrap();
            ids.push(head(db, "trial"));
        }
        // Nothing expires before a horizon is set: the branch's commits stay readable by id.
        db.delete_branch("trial").unwrap();
        assert_eq!(db.collect().unwrap().versions, 0);
        assert!(db.open_version(&VersionRef::Commit(ids[2])).is_ok());
        db.store().set("a/c/0", b"main again").unwrap();
        db.expire(&main_ref()).unwrap();
        let freed = db.collect().unwrap();
        // The branch's five commits and main's two before its head (the empty first one and
        // the first write); the branch's five chunks and main's superseded small value.
        assert_eq!((freed.versions, freed.values), (7, 6), "{}: {freed:?}", backend.name());
        assert!(freed.bytes >= 5 * BIG as u64);
        for id in ids {
            refused_as_expired(db, id);
        }
        assert_eq!(db.store().get("a/c/0").unwrap(), Some(b"main again".to_vec()));
        assert_eq!(db.store().get("a/c/1").unwrap(), None);
        // Nothing is left to collect.
        assert_eq!(db.collect().unwrap().versions, 0);
    });
}

#[test]
fn values_a_merge_brought_into_main_stay() {
    each_backend(|db, backend| {
        db.create_branch("feature", &main_ref()).unwrap();
        let feature = db.on_branch("feature").unwrap();
        feature.store().set("a/c/1", &vec![1; BIG]).unwrap();
        feature.store().set("a/c/2", &vec![2; BIG]).unwrap();
        // Written and superseded on the branch: read by its first commit alone.
        feature.store().set("a/c/2", &vec![3; BIG]).unwrap();
        db.store().set("a/c/0", b"main moved").unwrap();
        db.merge(&VersionRef::Branch("feature".into()), "main", "take the feature").unwrap();
        db.delete_branch("feature").unwrap();
        // While main's head is the merge, what it merged is kept (the next merge starts there).
        db.expire(&main_ref()).unwrap();
        db.collect().unwrap();
        assert!(db.open_version(&VersionRef::Branch("main".into())).is_ok());
        db.store().set("b/c/0", b"later").unwrap();
        db.expire(&main_ref()).unwrap();
        let freed = db.collect().unwrap();
        // The merge and main's commit before it, and the branch's three commits; of the
        // branch's values only the one it superseded itself, and main's superseded small one.
        assert_eq!((freed.versions, freed.values), (5, 2), "{}: {freed:?}", backend.name());
        assert_eq!(db.store().get("a/c/1").unwrap(), Some(vec![1; BIG]));
        assert_eq!(db.store().get("a/c/2").unwrap(), Some(vec![3; BIG]));
        // Once main rewrites them and that expires too, main's collection frees them.
        db.store().erase_prefix("a/").unwrap();
        db.expire(&main_ref()).unwrap();
        let freed = db.collect().unwrap();
        assert!(freed.bytes >= 2 * BIG as u64, "{}: {freed:?}", backend.name());
    });
}

#[test]
fn commits_a_reset_of_main_left_are_collected() {
    each_backend(|db, backend| {
        let good = head(db, "main");
        db.tag("good", &VersionRef::Commit(good)).unwrap();
        let mut bad = Vec::new();
        for i in 0..4u8 {
            db.store().set("a/c/0", &vec![i; BIG]).unwrap();
            bad.push(head(db, "main"));
        }
        // A collection folds part of the bad run first, so the reset leaves a folded record.
        db.expire(&VersionRef::Commit(bad[2])).unwrap();
        assert!(db.collect().unwrap().versions > 0);
        db.reset("main", &VersionRef::Tag("good".into())).unwrap();
        db.expire(&main_ref()).unwrap();
        db.collect().unwrap();
        for id in bad {
            refused_as_expired(db, id);
        }
        assert_eq!(db.store().get("a/c/0").unwrap(), Some(b"main".to_vec()));
        assert!(db.check_history().unwrap().is_empty(), "{}", backend.name());
        // sled has no compaction of its own.
        if backend != Backend::Sled {
            let done = db.compact().unwrap();
            assert!(done.bytes_after < done.bytes_before, "{}: {done:?}", backend.name());
        }
    });
}

/// `main` reset to a merge commit older than the horizon: its head never expires, and neither
/// does what it merged, though the branch that made it is gone (the collection once took the
/// oldest commit of `main` for its head and collected the merged commit).
#[test]
fn what_the_head_merged_stays_when_the_head_is_older_than_the_horizon() {
    each_backend(|db, backend| {
        db.create_branch("b", &main_ref()).unwrap();
        let b = db.on_branch("b").unwrap();
        b.store().set("b/c/0", b"from b").unwrap();
        let merged = head(db, "b");
        db.store().set("a/c/1", b"main's own").unwrap();
        let merge = db.merge(&VersionRef::Branch("b".into()), "main", "merge b").unwrap();
        let at = head(db, "main");
        assert!(matches!(merge, zarrdb::db::MergeOutcome::Merged(_)), "{merge:?}");
        db.delete_branch("b").unwrap();
        // A branch keeps the merge commit through the expiry, until `main` is back there.
        db.create_branch("keep", &VersionRef::Commit(at)).unwrap();
        db.store().set("a/c/2", b"later").unwrap();
        db.expire(&main_ref()).unwrap();
        db.reset("main", &VersionRef::Commit(at)).unwrap();
        db.delete_branch("keep").unwrap();
        db.collect().unwrap();
        let version =
            db.open_version(&VersionRef::Commit(merged)).unwrap_or_else(|e| panic!("{}: {e}", backend.name()));
        assert_eq!(version.store().get("b/c/0").unwrap().as_deref(), Some(&b"from b"[..]), "{}", backend.name());
        assert_eq!(db.store().get("b/c/0").unwrap().as_deref(), Some(&b"from b"[..]), "{}", backend.name());
    });
}
