//! Push and pull between local databases (`Database::mirror_into`): a database with 20 versions,
//! tags, a branch and a merge is mirrored into a blank database of another engine and back into a
//! third, and each holds the same history (every branch's log, every version's keys and values,
//! every tag); a second mirror after one commit carries that commit alone; a target that went its
//! own way, or whose newest commit the source collected, is refused with nothing written; the
//! source and target must keep history and differ.

#[path = "common/history.rs"]
#[allow(dead_code)]
mod history;

use zarrdb::db::VersionRef;
use zarrdb::error::HistoryError;
use zarrdb::{Array, Backend, Database, Error};

fn main_ref() -> VersionRef {
    VersionRef::Branch("main".into())
}

fn open(dir: &tempfile::TempDir, name: &str, backend: Backend) -> Database {
    history::open(&dir.path().join(name), backend)
}

#[test]
fn a_mirror_holds_every_version_and_the_next_carries_one_commit() {
    let dir = tempfile::tempdir().unwrap();
    let local = open(&dir, "local.zarrdb", Backend::Redb);
    history::twenty_versions(&local);
    assert!(local.log().unwrap().len() >= 20);

    let remote = open(&dir, "remote.lmdb", Backend::Lmdb);
    let first = local.mirror_into(&remote).unwrap();
    // Every commit, the blank target's first (the empty version) replaced by the source's.
    let every: std::collections::BTreeSet<_> = ["main", "dev"]
        .into_iter()
        .flat_map(|b| local.on_branch(b).unwrap().log().unwrap().into_iter().map(|c| c.id))
        .collect();
    assert_eq!(first.commits as usize, every.len(), "{first:?}");
    history::assert_same_history(&local, &remote);

    // Pulled back into a new file of a third engine.
    let pulled = open(&dir, "pulled.sled", Backend::Sled);
    remote.mirror_into(&pulled).unwrap();
    history::assert_same_history(&local, &pulled);

    // Nothing new: nothing written.
    assert_eq!(local.mirror_into(&remote).unwrap(), Default::default());

    // One small commit: its record, its key, and main's refs at most.
    let a = Array::open(local.store(), "/a").unwrap();
    a.write_region(&[5], &[1], &[99u32]).unwrap();
    let second = local.mirror_into(&remote).unwrap();
    assert_eq!(second.commits, 1, "{second:?}");
    assert!(second.keys_written <= 4 && second.keys_removed == 0, "{second:?}");
    assert!(second.bytes_written < 16_000, "one chunk's worth, not the database's: {second:?}");
    history::assert_same_history(&local, &remote);

    // Pull the new commit back.
    let pulled_again = remote.mirror_into(&pulled).unwrap();
    assert_eq!(pulled_again.commits, 1, "{pulled_again:?}");
    history::assert_same_history(&local, &pulled);
}

#[test]
fn a_target_that_went_its_own_way_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let local = open(&dir, "local.zarrdb", Backend::Redb);
    history::twenty_versions(&local);
    let remote = open(&dir, "remote.zarrdb", Backend::Redb);
    local.mirror_into(&remote).unwrap();

    // Both commit: the same number, different commits.
    local.store().set("l/zarr.json", br#"{"zarr_format":3,"node_type":"group"}"#).unwrap();
    remote.store().set("r/zarr.json", br#"{"zarr_format":3,"node_type":"group"}"#).unwrap();
    let before = history::contents(remote.store().as_ref(), "remote");
    let log = remote.log().unwrap();
    match local.mirror_into(&remote) {
        Err(Error::History(HistoryError::Diverged { commit, why, .. })) => {
            assert_eq!(commit, log[0].id.sequence());
            assert!(why.contains("another commit"), "{why}");
        }
        other => panic!("a diverged target was mirrored into: {other:?}"),
    }
    assert_eq!(history::contents(remote.store().as_ref(), "remote"), before);
    assert_eq!(remote.log().unwrap(), log);

    // The target ahead of the source: the other way round works, and then both agree.
    let ahead = open(&dir, "ahead.zarrdb", Backend::Redb);
    remote.mirror_into(&ahead).unwrap();
    ahead.store().set("more/zarr.json", br#"{"zarr_format":3,"node_type":"group"}"#).unwrap();
    match remote.mirror_into(&ahead) {
        Err(Error::History(HistoryError::Diverged { why, .. })) => assert!(why.contains("does not hold"), "{why}"),
        other => panic!("a target ahead of its source was mirrored into: {other:?}"),
    }
    ahead.mirror_into(&remote).unwrap();
    history::assert_same_history(&ahead, &remote);
}

#[test]
fn a_target_whose_newest_commit_the_source_collected_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let local = open(&dir, "local.zarrdb", Backend::Redb);
    history::twenty_versions(&local);
    let remote = open(&dir, "remote.zarrdb", Backend::Redb);
    local.mirror_into(&remote).unwrap();
    // Expire and collect on the source everything before its new head: the target's newest commit goes.
    let newest = remote.log().unwrap()[0].id;
    local.store().set("x/zarr.json", br#"{"zarr_format":3,"node_type":"group"}"#).unwrap();
    local.store().set("y/zarr.json", br#"{"zarr_format":3,"node_type":"group"}"#).unwrap();
    for (tag, _) in local.tags().unwrap() {
        local.delete_tag(&tag).unwrap();
    }
    local.delete_branch("dev").unwrap();
    local.expire(&main_ref()).unwrap();
    local.collect().unwrap();
    assert!(local.open_version(&VersionRef::Commit(newest)).is_err(), "the commit was collected");
    match local.mirror_into(&remote) {
        Err(Error::History(HistoryError::Diverged { why, .. })) => assert!(why.contains("does not hold"), "{why}"),
        other => panic!("a target holding a collected commit was mirrored into: {other:?}"),
    }
    // Into a new database it goes.
    let fresh = open(&dir, "fresh.zarrdb", Backend::Redb);
    local.mirror_into(&fresh).unwrap();
    history::assert_same_history(&local, &fresh);
}

#[test]
fn both_keep_history_and_differ() {
    let dir = tempfile::tempdir().unwrap();
    let kept = open(&dir, "kept.zarrdb", Backend::Redb);
    let plain = Database::create(dir.path().join("plain.zarrdb")).unwrap();
    for result in [kept.mirror_into(&plain), plain.mirror_into(&kept)] {
        assert!(matches!(result, Err(Error::History(HistoryError::Off { .. }))), "{result:?}");
    }
    let same = kept.clone();
    let result = kept.mirror_into(&same);
    assert!(matches!(result, Err(Error::History(HistoryError::MirrorIntoItself { .. }))), "{result:?}");
}
