//! `Database::merge_commit` (a merge that never fast-forwards): writes made by several commits on
//! a staging branch made at `main`'s head land on `main` as one merge commit, on redb, LMDB and
//! sled: `main`'s log gains that one commit (first parent the old head, merged the staging
//! branch's head), `main` then holds what the branch held, the previous version reads as before,
//! and once the branch is deleted, its commits expired and collected, the merge commit still
//! reads whole and the history checks clean. `merge` on the same state fast-forwards instead.

use zarrdb::db::{MergeOutcome, VersionRef};
use zarrdb::{Backend, Database};

fn main_ref() -> VersionRef {
    VersionRef::Branch("main".into())
}

fn staged(backend: Backend, dir: &std::path::Path) -> Database {
    let mut builder = Database::builder();
    builder.backend(backend).history(true);
    let db = builder.create(dir.join(format!("db.{}", backend.name()))).unwrap();
    db.store().set("kept", b"before").unwrap();
    db.create_branch("stage", &main_ref()).unwrap();
    let stage = db.on_branch("stage").unwrap();
    for i in 0..4 {
        stage.store().set(&format!("a/c/{i}"), &[i as u8; 5000]).unwrap();
    }
    db
}

#[test]
fn staged_writes_land_as_one_commit() {
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let dir = tempfile::tempdir().unwrap();
        let db = staged(backend, dir.path());
        let before = db.log().unwrap();
        let stage_head = db.resolve(&VersionRef::Branch("stage".into())).unwrap().id;
        let merged = db.merge_commit(&VersionRef::Branch("stage".into()), "main", "four writes").unwrap();
        let MergeOutcome::Merged(id) = merged else { panic!("{backend:?}: {merged:?}") };
        let log = db.log().unwrap();
        assert_eq!(log.len(), before.len() + 1, "{backend:?}");
        assert_eq!((log[0].id, log[0].parent, log[0].merged), (id, Some(before[0].id), Some(stage_head)));
        assert_eq!(&log[1..], &before[..], "{backend:?}: the history below is as it was");
        for i in 0..4 {
            assert_eq!(db.store().get(&format!("a/c/{i}")).unwrap(), Some(vec![i as u8; 5000]));
        }
        let previous = db.open_version(&VersionRef::Commit(before[0].id)).unwrap();
        assert_eq!(previous.store().get("a/c/0").unwrap(), None);
        assert_eq!(previous.store().get("kept").unwrap(), Some(b"before".to_vec()));
        drop(previous);

        db.delete_branch("stage").unwrap();
        db.expire(&main_ref()).unwrap();
        db.collect().unwrap();
        assert_eq!(db.check_history().unwrap(), vec![], "{backend:?}");
        let head = db.open_version(&VersionRef::Commit(id)).unwrap();
        assert_eq!(head.store().get("a/c/3").unwrap(), Some(vec![3; 5000]), "{backend:?}");
        assert_eq!(head.store().get("kept").unwrap(), Some(b"before".to_vec()));

        // The same state merged with `merge`: a fast-forward, the staging commits on main's log.
        let dir = tempfile::tempdir().unwrap();
        let db = staged(backend, dir.path());
        let merged = db.merge(&VersionRef::Branch("stage".into()), "main", "ff").unwrap();
        assert!(matches!(merged, MergeOutcome::FastForward(_)), "{backend:?}: {merged:?}");
    }
}
