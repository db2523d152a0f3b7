//! History against a model: random transactions, auto-commit writes, erased prefixes, imports,
//! tags, deleted tags, restores of a node to an older version, expiries, collections and
//! reopenings on redb, LMDB and sled, mirrored into a map of every version's contents. After each
//! step, some versions are read back (by tag, by commit id and as of their time) and must hold
//! exactly their model state, and their diff with another version must list every key that
//! differs; the head must hold the model's latest; tags never move and a deleted tag's name is
//! refused for good; an expired version is refused (by id and by time) with a typed error, and
//! after each collection `check_history` finds every kept version's values and no value that no
//! version reads.
//!
//! `ZARRDB_HISTORY_STEPS` sets the steps per backend (default 3,400, so CI runs over 10,000; the recorded campaign ran
//! more, docs/benchmarks.md).

#[path = "common/history.rs"]
#[expect(dead_code, reason = "the test uses only part of the shared helpers")]
mod history;
#[path = "common/splitmix.rs"]
#[allow(dead_code)]
mod splitmix;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use history::{contents, env_or, State};
use splitmix::SplitMix;
use zarrdb::db::{CommitId, VersionRef};
use zarrdb::error::HistoryError;
use zarrdb::{Backend, Database, DirectoryStore, Durability, Error, ImportOptions, Store};

const KEYS: [&str; 9] = ["a/zarr.json", "a/c/0", "a/c/1", "a/b/c/0", "b/zarr.json", "b/c/0", "ab", "z.json", "_x"];

fn steps() -> u64 {
    env_or("ZARRDB_HISTORY_STEPS", 3_400)
}

fn value(rng: &mut SplitMix) -> Vec<u8> {
    let len = match rng.range(0, 9) {
        0 => 0,
        1 => rng.range(65 << 10, 70 << 10) as usize,
        _ => rng.range(1, 5_000) as usize,
    };
    let seed = rng.next_u64();
    (0..len).map(|i| (seed >> (i % 8 * 8)) as u8 ^ i as u8).collect()
}

fn open(path: &Path, backend: Backend) -> Database {
    let mut b = Database::builder();
    b.backend(backend).durability(Durability::Fast).history(true);
    b.create(path).unwrap()
}

/// Where two states differ, in a line (values are too long to print).
fn differ(got: &State, want: &State) -> Option<String> {
    let keys: BTreeSet<&String> = got.keys().chain(want.keys()).collect();
    let wrong: Vec<String> = keys
        .into_iter()
        .filter(|k| got.get(*k) != want.get(*k))
        .map(|k| format!("{k} ({:?} bytes, want {:?})", got.get(k).map(Vec::len), want.get(k).map(Vec::len)))
        .collect();
    (!wrong.is_empty()).then(|| wrong.join(", "))
}

#[track_caller]
fn same(got: &State, want: &State, what: String) {
    if let Some(wrong) = differ(got, want) {
        panic!("{what}: {wrong}");
    }
}

struct Model {
    head: State,
    /// Every commit's state, by id, with its time.
    commits: BTreeMap<CommitId, (std::time::SystemTime, State)>,
    tags: BTreeMap<String, CommitId>,
    deleted: BTreeSet<String>,
    /// Commits older than this one that no tag names have expired.
    horizon: Option<CommitId>,
}

impl Model {
    fn live(&self, id: CommitId) -> bool {
        self.horizon.is_none_or(|h| id >= h) || self.tags.values().any(|t| *t == id)
    }

    /// The commits whose versions are kept.
    fn kept(&self) -> Vec<CommitId> {
        self.commits.keys().copied().filter(|id| self.live(*id)).collect()
    }

    fn expired(&self) -> Vec<CommitId> {
        self.commits.keys().copied().filter(|id| !self.live(*id)).collect()
    }
}

#[track_caller]
fn refused_as_expired(result: Result<impl Sized, Error>, what: String) {
    match result {
        Err(Error::History(HistoryError::Expired { .. })) => {}
        Err(e) => panic!("{what}: refused with {e}, not as expired"),
        Ok(_) => panic!("{what}: an expired version was opened"),
    }
}

fn record_head(db: &Database, model: &mut Model) {
    let tip = db.resolve(&VersionRef::Branch("main".into())).unwrap();
    match model.commits.get(&tip.id) {
        Some((_, state)) => same(state, &model.head, "a commit that changed nothing made no version".into()),
        None => {
            model.commits.insert(tip.id, (tip.time, model.head.clone()));
        }
    }
}

fn check_version(db: &Database, model: &Model, rng: &mut SplitMix, step: u64) {
    let expired = model.expired();
    if !expired.is_empty() {
        let id = expired[rng.range(0, expired.len() as u64 - 1) as usize];
        refused_as_expired(db.open_version(&VersionRef::Commit(id)), format!("step {step}: commit {id}"));
        let time = model.commits[&id].0;
        refused_as_expired(db.open_version(&VersionRef::AsOf(time)), format!("step {step}: as of commit {id}'s time"));
    }
    let kept = model.kept();
    let ids: Vec<&CommitId> = kept.iter().collect();
    let id = *ids[rng.range(0, ids.len() as u64 - 1) as usize];
    let (time, want) = &model.commits[&id];
    let by_id = db.open_version(&VersionRef::Commit(id)).unwrap();
    let what = format!("step {step}: commit {id}");
    same(&contents(by_id.store().as_ref(), &what), want, what);
    let as_of = db.open_version(&VersionRef::AsOf(*time)).unwrap();
    let what = format!("step {step}: as of commit {id}'s time");
    same(&contents(as_of.store().as_ref(), &what), want, what);
    // Diff against another commit, in either order: every key whose value differs is listed
    // with both lengths; a listed key whose bytes are equal was written again in between.
    let other = *ids[rng.range(0, ids.len() as u64 - 1) as usize];
    let theirs = &model.commits[&other].1;
    let listed = db.diff(&VersionRef::Commit(id), &VersionRef::Commit(other)).unwrap();
    let keys: BTreeSet<&String> = want.keys().chain(theirs.keys()).collect();
    for key in keys {
        let (before, after) = (want.get(key), theirs.get(key));
        match listed.iter().find(|c| &c.key == key) {
            Some(change) => assert_eq!(
                (change.before, change.after),
                (before.map(|v| v.len() as u64), after.map(|v| v.len() as u64)),
                "step {step}: diff {id} -> {other}: {key}"
            ),
            None => assert!(before == after, "step {step}: diff {id} -> {other} misses {key}"),
        }
    }
    if let Some((name, id)) = model.tags.iter().nth(rng.range(0, model.tags.len() as u64) as usize) {
        let tagged = db.open_version(&VersionRef::Tag(name.clone())).unwrap();
        let what = format!("step {step}: tag {name}");
        same(&contents(tagged.store().as_ref(), &what), &model.commits[id].1, what);
    }
}

fn import_source(dir: &Path, rng: &mut SplitMix, n: u64) -> (std::path::PathBuf, State) {
    let source = dir.join(format!("source{n}"));
    std::fs::create_dir(&source).unwrap();
    let store: Arc<dyn Store> = Arc::new(DirectoryStore::open(&source).unwrap());
    let meta = zarrdb::ArrayMetadata::new(zarrdb::DataType::UInt8, vec![8], vec![4]);
    let array = zarrdb::Array::create(store.clone(), "/", meta).unwrap();
    let values: Vec<u8> = (0..8).map(|_| rng.range(1, 255) as u8).collect();
    array.write_region(&[0], &[8], &values).unwrap();
    let prefix = format!("imp{n}/");
    let state = contents(store.as_ref(), "the import's source");
    (source, state.into_iter().map(|(k, v)| (format!("{prefix}{k}"), v)).collect())
}

fn run(backend: Backend, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = match backend {
        // A bucket database in this process's memory: the same engine as on S3.
        Backend::Bucket => std::path::PathBuf::from(format!("zarrdb+memory://history-model-{seed}")),
        _ => dir.path().join("db"),
    };
    let mut db = open(&path, backend);
    let mut model = Model {
        head: State::new(),
        commits: BTreeMap::new(),
        tags: BTreeMap::new(),
        deleted: BTreeSet::new(),
        horizon: None,
    };
    record_head(&db, &mut model);
    let mut rng = SplitMix::new(seed, backend as u64);
    let mut imports = 0;
    // Versions and values the collections freed, so the run shows it made some.
    let mut collected = (0, 0);
    for step in 0..steps() {
        match rng.range(0, 21) {
            0..=7 => {
                let txn = db.begin_write().unwrap();
                let store = txn.store();
                for _ in 0..rng.range(1, 4) {
                    let key = KEYS[rng.range(0, KEYS.len() as u64 - 1) as usize];
                    if rng.range(0, 3) == 0 {
                        store.erase(key).unwrap();
                        model.head.remove(key);
                    } else {
                        let v = value(&mut rng);
                        store.set(key, &v).unwrap();
                        model.head.insert(key.to_owned(), v);
                    }
                }
                match rng.range(0, 2) {
                    0 => txn.commit().unwrap(),
                    1 => txn.commit_with(&format!("step {step}"), "model").unwrap(),
                    _ => {
                        txn.abort();
                        let tip = db.resolve(&VersionRef::Branch("main".into())).unwrap();
                        model.head = model.commits[&tip.id].1.clone();
                    }
                }
                record_head(&db, &mut model);
            }
            8..=10 => {
                let key = KEYS[rng.range(0, KEYS.len() as u64 - 1) as usize];
                let v = value(&mut rng);
                db.store().set(key, &v).unwrap();
                model.head.insert(key.to_owned(), v);
                record_head(&db, &mut model);
            }
            11 => {
                let prefix = ["a/", "b/", "a/c/", "", "imp"][rng.range(0, 4) as usize];
                db.store().erase_prefix(prefix).unwrap();
                model.head.retain(|k, _| !k.starts_with(prefix));
                record_head(&db, &mut model);
            }
            12 => {
                imports += 1;
                let (source, added) = import_source(dir.path(), &mut rng, imports);
                db.import(&source, &ImportOptions::default().at(format!("/imp{imports}"))).unwrap();
                model.head.extend(added);
                // The import made the root group, which the model does not know the bytes of.
                if !model.head.contains_key("zarr.json") {
                    model.head.insert("zarr.json".into(), db.store().get("zarr.json").unwrap().expect("root group"));
                }
                record_head(&db, &mut model);
            }
            13..=14 => {
                let name = format!("t{}", rng.range(0, 40));
                let ids: Vec<CommitId> = model.commits.keys().copied().collect();
                let id = ids[rng.range(0, ids.len() as u64 - 1) as usize];
                match db.tag(&name, &VersionRef::Commit(id)) {
                    Ok(tagged) if !model.live(id) => panic!("step {step}: tagged expired commit {tagged}"),
                    Ok(tagged) => {
                        assert_eq!(tagged, id);
                        assert!(!model.tags.contains_key(&name) && !model.deleted.contains(&name), "{name} was free");
                        model.tags.insert(name, id);
                    }
                    Err(Error::History(HistoryError::TagExists { .. })) => assert!(model.tags.contains_key(&name)),
                    Err(Error::History(HistoryError::TagDeleted { .. })) => assert!(model.deleted.contains(&name)),
                    Err(Error::History(HistoryError::Expired { .. })) => assert!(!model.live(id)),
                    Err(e) => panic!("step {step}: tag {name}: {e}"),
                }
            }
            15 => {
                if let Some(name) =
                    model.tags.keys().nth(rng.range(0, 40) as usize % (model.tags.len().max(1))).cloned()
                {
                    db.delete_tag(&name).unwrap();
                    model.tags.remove(&name);
                    model.deleted.insert(name.clone());
                    let refused = db.open_version(&VersionRef::Tag(name)).unwrap_err();
                    assert!(matches!(refused, Error::History(HistoryError::TagDeleted { .. })), "{refused}");
                }
            }
            16 if rng.range(0, 1) == 0 => {
                let (node, prefix) = [("/", ""), ("/a", "a/"), ("/b", "b/")][rng.range(0, 2) as usize];
                let ids = model.kept();
                let id = ids[rng.range(0, ids.len() as u64 - 1) as usize];
                let then = &model.commits[&id].1;
                db.restore(node, &VersionRef::Commit(id)).unwrap();
                model.head.retain(|k, _| !k.starts_with(prefix));
                model
                    .head
                    .extend(then.iter().filter(|(k, _)| k.starts_with(prefix)).map(|(k, v)| (k.clone(), v.clone())));
                record_head(&db, &mut model);
            }
            16 => {
                drop(db);
                db = open(&path, backend);
                assert!(db.keeps_history());
            }
            17 if rng.range(0, 3) == 0 => {
                // Keep a kept version and every later one: by id, as of its time, or the head.
                let kept = model.kept();
                let id = kept[rng.range(0, kept.len() as u64 - 1) as usize];
                let keep = match rng.range(0, 2) {
                    0 => VersionRef::Commit(id),
                    1 => VersionRef::AsOf(model.commits[&id].0),
                    _ => VersionRef::Branch("main".into()),
                };
                let id = match keep {
                    VersionRef::Branch(_) => *model.commits.keys().last().expect("the head"),
                    _ => id,
                };
                let horizon = db.expire(&keep).unwrap();
                model.horizon = Some(model.horizon.map_or(id, |h| h.max(id)));
                assert_eq!(horizon, model.horizon, "step {step}: expire {keep}");
            }
            18 => {
                let freed = db.collect().unwrap();
                (collected.0, collected.1) = (collected.0 + freed.versions, collected.1 + freed.values);
                let problems = db.check_history().unwrap();
                assert!(problems.is_empty(), "step {step}: after collecting {freed:?}: {problems:?}");
                let log = db.log().unwrap();
                let ids: Vec<CommitId> = log.iter().rev().map(|c| c.id).collect();
                assert_eq!(ids, model.kept(), "step {step}: the log after a collection holds the kept versions");
            }
            _ => check_version(&db, &model, &mut rng, step),
        }
        let what = format!("step {step}: the head");
        same(&contents(db.store().as_ref(), &what), &model.head, what);
    }
    let tags: BTreeMap<String, CommitId> = db.tags().unwrap().into_iter().collect();
    assert_eq!(tags, model.tags);
    let freed = db.collect().unwrap();
    (collected.0, collected.1) = (collected.0 + freed.versions, collected.1 + freed.values);
    assert!(collected.0 > 0 && collected.1 > 0, "the collections freed {collected:?}");
    eprintln!(
        "{}: {} commits, {} kept; collected {} versions, {} values",
        backend.name(),
        model.commits.len(),
        model.kept().len(),
        collected.0,
        collected.1
    );
    let log = db.log().unwrap();
    assert_eq!(log.len(), model.kept().len(), "one commit per version kept");
    assert!(log.windows(2).all(|w| w[0].parent == Some(w[1].id) && w[0].time > w[1].time));
    let problems = db.check_history().unwrap();
    assert!(problems.is_empty(), "at the end: {problems:?}");
    for id in model.expired() {
        refused_as_expired(db.open_version(&VersionRef::Commit(id)), format!("commit {id} at the end"));
    }
    for (id, (_, want)) in model.commits.iter().filter(|(id, _)| model.live(**id)) {
        let what = format!("commit {id} at the end");
        same(&contents(db.open_version(&VersionRef::Commit(*id)).unwrap().store().as_ref(), &what), want, what);
    }
}

#[test]
fn redb_matches_the_model() {
    run(Backend::Redb, 0x5eed_0001);
}

#[test]
fn lmdb_matches_the_model() {
    run(Backend::Lmdb, 0x5eed_0002);
}

#[test]
fn sled_matches_the_model() {
    run(Backend::Sled, 0x5eed_0003);
}

#[test]
fn bucket_matches_the_model() {
    run(Backend::Bucket, 0x5eed_0004);
}
