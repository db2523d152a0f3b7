//! A version far behind `main`'s head: on redb and LMDB a version at most 4,096 commits behind
//! is read as the head but for the keys changed since, and one further back is folded from the
//! oldest version kept. Versions on both sides of that limit, and the first commit, read what
//! they held, by key and by listing, checked against a model of every version.

use std::collections::BTreeMap;

use zarrdb::db::{Durability, VersionRef};
use zarrdb::{Backend, Database};

const COMMITS: usize = 4_100;

#[test]
fn versions_on_both_sides_of_the_limit_read_what_they_held() {
    for backend in [Backend::Redb, Backend::Lmdb] {
        let tmp = tempfile::tempdir().unwrap();
        let db = Database::builder()
            .backend(backend)
            .history(true)
            .durability(Durability::Fast)
            .create(tmp.path().join("far.zarrdb"))
            .unwrap();
        let mut versions = Vec::with_capacity(COMMITS);
        for i in 0..COMMITS {
            let txn = db.begin_write().unwrap();
            let (puts, erased) = commit(i);
            for (key, value) in puts {
                txn.store().set(&key, &value).unwrap();
            }
            if let Some(key) = erased {
                txn.store().erase(&key).unwrap();
            }
            txn.commit().unwrap();
            versions.push(VersionRef::Commit(db.resolve(&VersionRef::Branch("main".into())).unwrap().id));
        }
        // The head and versions 1, 4,096 and 4,097 commits behind it (either side of the limit),
        // then the first commit.
        for behind in [0, 1, 4_096, 4_097, COMMITS - 1] {
            let held = model_after(COMMITS - 1 - behind);
            let version = db.open_version(&versions[COMMITS - 1 - behind]).unwrap();
            let store = version.store();
            let listed = store.list_prefix("").unwrap();
            assert_eq!(listed, held.keys().cloned().collect::<Vec<_>>(), "{backend:?}: {behind} behind");
            for (key, value) in &held {
                assert_eq!(store.get(key).unwrap().as_ref(), Some(value), "{backend:?}: {behind} behind, {key}");
            }
            // A key added after the version is not in it.
            let later = format!("n/{:05}", COMMITS - behind);
            assert_eq!(store.get(&later).unwrap(), None, "{backend:?}: {behind} behind, {later}");
            assert_eq!(store.list_dir("r/").unwrap().keys.len(), held.keys().filter(|k| k.starts_with("r/")).count());
        }
    }
}

/// What commit `i` writes: it rewrites one of eight keys, adds one and, every third commit,
/// erases one added before, so every version differs from the next.
fn commit(i: usize) -> (Vec<(String, Vec<u8>)>, Option<String>) {
    let puts = [format!("r/k{}", i % 8), format!("n/{i:05}")]
        .into_iter()
        .map(|key| {
            let value = format!("{key} in commit {i}").into_bytes();
            (key, value)
        })
        .collect();
    (puts, (i % 3 == 2).then(|| format!("n/{:05}", i / 2)))
}

/// Every key and value after commits `0..=last`.
fn model_after(last: usize) -> BTreeMap<String, Vec<u8>> {
    let mut model = BTreeMap::new();
    for i in 0..=last {
        let (puts, erased) = commit(i);
        model.extend(puts);
        if let Some(key) = erased {
            model.remove(&key);
        }
    }
    model
}
