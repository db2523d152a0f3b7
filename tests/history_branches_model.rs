//! Branches against a model: random commits to several branches (through handles on them),
//! restores of a node or the whole hierarchy to any kept version (which write values of bytes
//! an older commit wrote, so merges meet sides that agree without sharing a value), branches
//! made at any kept commit and deleted, merges of any branch or commit into any branch
//! (up to date, fast-forward, merge commit or conflict, as a model of every commit's parents
//! predicts from the values' identities (their bytes where both sides changed a key) and the nodes they change, exactly, collections or
//! not), resets, tags, expiries, collections and reopenings, on redb, LMDB and sled. After each
//! step the head of `main` (and, now and then, of every branch) holds exactly its model state;
//! checks read a kept commit by id, diff two kept commits on any branches, and refuse an expired
//! one; after each collection `check_history` is clean and `main`'s log holds exactly its kept
//! commits. The model keeps, per commit, the parent the engine's record names (a collection
//! links a kept commit of `main` past the expired ones before it), so it knows which commits the
//! refs keep as the engine does.
//!
//! `ZARRDB_BRANCH_STEPS` sets the steps per backend (default 3,400, so CI runs over 10,000), and
//! `ZARRDB_BRANCH_SEED` varies the seed, so a campaign can run many databases one after another.

#[path = "common/history.rs"]
#[expect(dead_code, reason = "the test uses only part of the shared helpers")]
mod history;
#[path = "common/splitmix.rs"]
#[allow(dead_code)]
mod splitmix;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use history::{contents, env_or, State};
use splitmix::SplitMix;
use zarrdb::db::{CommitId, MergeOutcome, VersionRef};
use zarrdb::error::HistoryError;
use zarrdb::{Backend, Database, Durability, Error};

const KEYS: [&str; 7] = ["a/zarr.json", "a/c/0", "a/c/1", "b/zarr.json", "b/c/0", "b/c/1", "z"];
const MAIN: &str = "main";

/// Which write made each key's value: merges compare values by identity, as the engine does.
type Ids = BTreeMap<String, u64>;

#[derive(Clone)]
struct Commit {
    parent: Option<CommitId>,
    /// The parent the engine's record names: a collection that folds the expired commits
    /// before a kept one of `main` into it links it to the kept commit before them (none when
    /// none is left).
    link: Option<CommitId>,
    merged: Option<CommitId>,
    state: State,
    ids: Ids,
}

struct Model {
    commits: BTreeMap<CommitId, Commit>,
    branches: BTreeMap<String, CommitId>,
    tags: BTreeMap<String, CommitId>,
    horizon: Option<CommitId>,
    /// Commits a collection removed (their records are gone: no walk reaches them).
    gone: BTreeSet<CommitId>,
    writes: u64,
}

impl Model {
    fn ancestors(&self, id: CommitId) -> BTreeSet<CommitId> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![id];
        while let Some(id) = todo.pop() {
            if seen.insert(id) {
                let c = &self.commits[&id];
                todo.extend(c.parent.into_iter().chain(c.merged));
            }
        }
        seen
    }

    fn merge_base(&self, a: CommitId, b: CommitId) -> CommitId {
        *self.ancestors(a).intersection(&self.ancestors(b)).last().expect("all share the first commit")
    }

    /// Whether the ancestry of `id` off `main`, through commits a collection left, reaches a
    /// kept commit off `main`.
    fn meets_kept(&self, id: CommitId, kept: &BTreeSet<CommitId>, on_main: &BTreeSet<CommitId>) -> bool {
        let mut seen = BTreeSet::new();
        let mut todo = vec![id];
        while let Some(id) = todo.pop() {
            if self.gone.contains(&id) || on_main.contains(&id) || !seen.insert(id) {
                continue;
            }
            if kept.contains(&id) {
                return true;
            }
            let c = &self.commits[&id];
            todo.extend(c.link.into_iter().chain(c.merged));
        }
        false
    }

    /// `main`'s first parents, newest first, as the engine's records link them (without the
    /// commits a collection removed).
    fn main_chain(&self) -> Vec<CommitId> {
        let mut chain = vec![self.branches[MAIN]];
        while let Some(parent) = self.commits[chain.last().unwrap()].link {
            chain.push(parent);
        }
        chain
    }

    /// What tags and other branches keep: down to where they meet `main`'s first parents, and
    /// the commits of `main` that merged a kept commit off it.
    fn protected(&self) -> BTreeSet<CommitId> {
        let chain = self.main_chain();
        let on_main: BTreeSet<CommitId> = chain.iter().copied().collect();
        let mut kept = BTreeSet::new();
        let mut todo: Vec<CommitId> = self.tags.values().copied().collect();
        todo.extend(self.branches.iter().filter(|(n, _)| *n != MAIN).map(|(_, id)| *id));
        let head = self.branches[MAIN];
        loop {
            while let Some(id) = todo.pop() {
                let c = &self.commits[&id];
                if !self.gone.contains(&id) && kept.insert(id) && !on_main.contains(&id) {
                    todo.extend(c.link.into_iter().chain(c.merged));
                }
            }
            // What a kept commit of `main` merged, and what any commit of `main` merged whose
            // ancestry off `main` meets a kept commit (the link from `main` to it).
            for id in &chain {
                let live = self.horizon.is_none_or(|h| *id >= h) || *id == head || kept.contains(id);
                if let Some(m) = self.commits[id].merged.filter(|m| live && !kept.contains(m)) {
                    todo.push(m);
                }
                let linking =
                    |m: &CommitId| !kept.contains(m) && !on_main.contains(m) && self.meets_kept(*m, &kept, &on_main);
                if let Some(m) = self.commits[id].merged.filter(linking) {
                    todo.push(m);
                }
            }
            if todo.is_empty() {
                break;
            }
        }
        let merges: Vec<CommitId> = chain
            .into_iter()
            .filter(|id| self.commits[id].merged.is_some_and(|m| kept.contains(&m) && !on_main.contains(&m)))
            .collect();
        kept.extend(merges);
        kept
    }

    /// Once a horizon is set: a commit no ref reaches lives while it is on `main`'s first
    /// parents and no older than the horizon; `main`'s head always does.
    fn live(&self, id: CommitId) -> bool {
        self.kept().binary_search(&id).is_ok()
    }

    fn kept(&self) -> Vec<CommitId> {
        let Some(horizon) = self.horizon else { return self.commits.keys().copied().collect() };
        let chain: BTreeSet<CommitId> = self.main_chain().into_iter().collect();
        let protected = self.protected();
        let live = |id: &CommitId| {
            *id == self.branches[MAIN]
                || (!self.gone.contains(id) && ((*id >= horizon && chain.contains(id)) || protected.contains(id)))
        };
        self.commits.keys().copied().filter(live).collect()
    }

    fn pick(&self, rng: &mut SplitMix, from: &[CommitId]) -> CommitId {
        from[rng.range(0, from.len() as u64 - 1) as usize]
    }

    fn branch(&self, rng: &mut SplitMix) -> String {
        let names: Vec<&String> = self.branches.keys().collect();
        names[rng.range(0, names.len() as u64 - 1) as usize].clone()
    }
}

fn open(path: &Path, backend: Backend) -> Database {
    let mut b = Database::builder();
    b.backend(backend).durability(Durability::Fast).history(true);
    b.create(path).unwrap()
}

fn handle(db: &Database, branch: &str) -> Database {
    if branch == MAIN {
        db.clone()
    } else {
        db.on_branch(branch).unwrap()
    }
}

#[track_caller]
fn same(got: &State, want: &State, what: &str) {
    let keys: BTreeSet<&String> = got.keys().chain(want.keys()).collect();
    let wrong: Vec<&String> = keys.into_iter().filter(|k| got.get(*k) != want.get(*k)).collect();
    assert!(wrong.is_empty(), "{what}: differs at {wrong:?}");
}

fn head_of(db: &Database, branch: &str) -> CommitId {
    db.resolve(&VersionRef::Branch(branch.into())).unwrap().id
}

/// The outcome a merge of `source` into `into` should have, and the branch's state after it.
enum Predicted {
    UpToDate,
    FastForward,
    Merged(State, Ids),
    Conflict(Vec<String>),
}

impl std::fmt::Debug for Predicted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Predicted::UpToDate => f.write_str("up to date"),
            Predicted::FastForward => f.write_str("a fast-forward"),
            Predicted::Merged(_, ids) => write!(f, "a merge commit holding {ids:?}"),
            Predicted::Conflict(keys) => write!(f, "a conflict at {keys:?}"),
        }
    }
}

fn predict(model: &Model, into: &str, source: CommitId) -> (CommitId, Predicted) {
    let head = model.branches[into];
    let base = model.merge_base(head, source);
    if base == source {
        return (base, Predicted::UpToDate);
    }
    // `main` fast-forwards only along first parents; through a merge link, a merge commit.
    let mut at = Some(source);
    while let Some(id) = at.filter(|id| *id > head) {
        at = model.commits[&id].link;
    }
    if base == head && (into != MAIN || at == Some(head)) {
        return (base, Predicted::FastForward);
    }
    let (b, ours, theirs) = (&model.commits[&base], &model.commits[&head], &model.commits[&source]);
    let keys: BTreeSet<&String> = b.ids.keys().chain(ours.ids.keys()).chain(theirs.ids.keys()).collect();
    let (mut state, mut ids, mut conflicts) = (ours.state.clone(), ours.ids.clone(), Vec::new());
    for key in keys {
        let (at_base, at_ours, at_theirs) = (b.ids.get(key), ours.ids.get(key), theirs.ids.get(key));
        if at_theirs == at_base || at_theirs == at_ours {
            continue;
        }
        if at_ours != at_base {
            // Both sides changed it: two writes of the same bytes (a restore's) agree.
            if theirs.state.get(key) != ours.state.get(key) {
                conflicts.push(key.clone());
            }
            continue;
        }
        match at_theirs {
            Some(id) => {
                ids.insert(key.clone(), *id);
                state.insert(key.clone(), theirs.state[key].clone());
            }
            None => {
                ids.remove(key);
                state.remove(key);
            }
        }
    }
    // A node one side changed the document of (the model's documents are no JSON, so every
    // change restructures it) conflicts with every key under it the other side changed, unless
    // both sides changed the document alike.
    let changed = |side: &Commit, key: &String| side.ids.get(key) != b.ids.get(key);
    for (side, other) in [(ours, theirs), (theirs, ours)] {
        for document in KEYS.iter().filter(|k| k.ends_with("/zarr.json")) {
            let document = document.to_string();
            let alike = changed(other, &document) && other.state.get(&document) == side.state.get(&document);
            if !changed(side, &document) || alike {
                continue;
            }
            let prefix = document.trim_end_matches("zarr.json");
            let below: Vec<&&str> = KEYS
                .iter()
                .filter(|k| k.starts_with(prefix) && **k != document && changed(other, &k.to_string()))
                .collect();
            if !below.is_empty() {
                conflicts.push(document.clone());
                conflicts.extend(below.into_iter().map(|k| k.to_string()));
            }
        }
    }
    conflicts.sort();
    conflicts.dedup();
    match conflicts.is_empty() {
        true => (base, Predicted::Merged(state, ids)),
        false => (base, Predicted::Conflict(conflicts)),
    }
}

fn commit_step(db: &Database, model: &mut Model, rng: &mut SplitMix, step: u64) {
    let branch = model.branch(rng);
    let on = handle(db, &branch);
    let head = model.branches[&branch];
    let mut next = model.commits[&head].clone();
    let txn = on.begin_write().unwrap();
    let store = txn.store();
    // Half the commits keep to one node per side (`main` writes `a`, the others `b`), so that
    // branches often change disjoint keys and merges make merge commits, not only conflicts.
    let keys: &[&str] = match (rng.range(0, 1), branch == MAIN) {
        (0, _) => &KEYS,
        (_, true) => &KEYS[..3],
        (_, false) => &KEYS[3..6],
    };
    for _ in 0..rng.range(1, 3) {
        let key = keys[rng.range(0, keys.len() as u64 - 1) as usize];
        if rng.range(0, 3) == 0 {
            store.erase(key).unwrap();
            next.state.remove(key);
            next.ids.remove(key);
        } else {
            model.writes += 1;
            let len = if rng.range(0, 7) == 0 { 6_000 } else { rng.range(0, 40) as usize };
            let value: Vec<u8> = format!("{}:", model.writes).bytes().chain((0..len).map(|i| i as u8)).collect();
            store.set(key, &value).unwrap();
            next.state.insert(key.to_owned(), value);
            next.ids.insert(key.to_owned(), model.writes);
        }
    }
    txn.commit_with(&format!("step {step}"), "model").unwrap();
    let id = head_of(db, &branch);
    if id == head {
        assert_eq!(next.ids, model.commits[&head].ids, "step {step}: a commit that changed nothing made no version");
        return;
    }
    next.parent = Some(head);
    next.link = Some(head);
    next.merged = None;
    model.commits.insert(id, next);
    model.branches.insert(branch, id);
}

/// A restore of a node (or the whole hierarchy) on a random branch to a random kept version:
/// the keys under it that differ from then are written again (new values of the same bytes) or
/// removed, the others keep their values; no commit when nothing differs.
fn restore_step(db: &Database, model: &mut Model, rng: &mut SplitMix, step: u64) {
    let branch = model.branch(rng);
    let (node, prefix) = [("/", ""), ("/a", "a/"), ("/b", "b/")][rng.range(0, 2) as usize];
    // Half the time another branch's head: the two branches then agree on the node's bytes
    // without sharing its values, which merges must take as no conflict.
    let id = match rng.range(0, 1) {
        0 => model.branches[&model.branch(rng)],
        _ => model.pick(rng, &model.kept()),
    };
    let head = model.branches[&branch];
    let mut next = model.commits[&head].clone();
    for key in KEYS.iter().filter(|k| k.starts_with(prefix)) {
        match model.commits[&id].state.get(*key).cloned() {
            None => {
                next.state.remove(*key);
                next.ids.remove(*key);
            }
            Some(value) if next.state.get(*key) != Some(&value) => {
                model.writes += 1;
                next.state.insert(key.to_string(), value);
                next.ids.insert(key.to_string(), model.writes);
            }
            Some(_) => {}
        }
    }
    let what = format!("step {step}: restore {node} on {branch} to {id}");
    let got = handle(db, &branch).restore(node, &VersionRef::Commit(id)).unwrap_or_else(|e| panic!("{what}: {e}"));
    let now = head_of(db, &branch);
    assert_eq!(got.id, now, "{what}");
    if now == head {
        assert_eq!(next.ids, model.commits[&head].ids, "{what}: nothing differed, no commit");
        return;
    }
    next.parent = Some(head);
    next.link = Some(head);
    next.merged = None;
    model.commits.insert(now, next);
    model.branches.insert(branch, now);
}

/// A merge of a random version into a random branch, checked against the model; what it did.
fn merge_step(db: &Database, model: &mut Model, rng: &mut SplitMix, step: u64) -> &'static str {
    let into = model.branch(rng);
    let (source_ref, source) = match rng.range(0, 3) {
        0 => {
            let id = model.pick(rng, &model.kept());
            (VersionRef::Commit(id), id)
        }
        _ => {
            let name = model.branch(rng);
            (VersionRef::Branch(name.clone()), model.branches[&name])
        }
    };
    let (base, predicted) = predict(model, &into, source);
    let head = model.branches[&into];
    let what = format!("step {step}: merge {source_ref} into {into} (base {base})");
    let got = db.merge(&source_ref, &into, &format!("step {step}"));
    let (state, ids) = match (got, predicted) {
        (Ok(MergeOutcome::UpToDate(id)), Predicted::UpToDate) => {
            assert_eq!(id, head, "{what}");
            return "up to date";
        }
        (Ok(MergeOutcome::FastForward(id)), Predicted::FastForward) => {
            assert_eq!(id, source, "{what}");
            model.branches.insert(into, source);
            return "fast-forward";
        }
        (Ok(MergeOutcome::Merged(_)), Predicted::Merged(state, ids)) => (state, ids),
        (Err(Error::History(HistoryError::MergeConflict { keys, .. })), Predicted::Conflict(want)) => {
            assert_eq!(keys, want, "{what}");
            return "conflict";
        }
        (got, predicted) => panic!("{what}: got {got:?}, the model predicted {predicted:?}"),
    };
    let id = head_of(db, &into);
    assert!(id > head && !model.commits.contains_key(&id), "{what}: a new commit");
    model.commits.insert(id, Commit { parent: Some(head), link: Some(head), merged: Some(source), state, ids });
    model.branches.insert(into, id);
    "merge commit"
}

fn check_step(db: &Database, model: &Model, rng: &mut SplitMix, step: u64) {
    let kept = model.kept();
    let id = model.pick(rng, &kept);
    let what = format!("step {step}: commit {id}");
    let version = db.open_version(&VersionRef::Commit(id)).unwrap();
    same(&contents(version.store().as_ref(), &what), &model.commits[&id].state, &what);
    let other = model.pick(rng, &kept);
    let listed = db.diff(&VersionRef::Commit(id), &VersionRef::Commit(other)).unwrap_or_else(|e| {
        let info = |c: CommitId| {
            let m = &model.commits[&c];
            let mut chain = vec![c];
            while let Some(p) = model.commits[chain.last().unwrap()].parent {
                chain.push(p);
            }
            format!(
                "{c}: parent {:?} merged {:?} chain {:?}",
                m.parent,
                m.merged,
                chain.iter().map(|c| (c.sequence(), model.gone.contains(c), model.live(*c))).collect::<Vec<_>>()
            )
        };
        panic!(
            "step {step}: diff {id} {other}: {e}\n{}\n{}\nbranches {:?} tags {:?} main {:?} horizon {:?}",
            info(id),
            info(other),
            model.branches,
            model.tags,
            model.main_chain(),
            model.horizon
        )
    });
    let (a, b) = (&model.commits[&id], &model.commits[&other]);
    let keys: BTreeSet<&String> = a.ids.keys().chain(b.ids.keys()).collect();
    let want: Vec<(String, Option<u64>, Option<u64>)> = keys
        .into_iter()
        .filter(|k| a.ids.get(*k) != b.ids.get(*k))
        .map(|k| (k.clone(), a.state.get(k).map(|v| v.len() as u64), b.state.get(k).map(|v| v.len() as u64)))
        .collect();
    let got: Vec<(String, Option<u64>, Option<u64>)> = listed.into_iter().map(|c| (c.key, c.before, c.after)).collect();
    assert_eq!(got, want, "step {step}: diff {id} -> {other}");
    let kept_set: BTreeSet<CommitId> = kept.iter().copied().collect();
    let expired: Vec<CommitId> = model.commits.keys().copied().filter(|id| !kept_set.contains(id)).collect();
    if !expired.is_empty() {
        let id = model.pick(rng, &expired);
        match db.open_version(&VersionRef::Commit(id)) {
            Err(Error::History(HistoryError::Expired { .. })) => {}
            other => panic!("step {step}: expired commit {id}: {:?}", other.map(|_| ())),
        }
    }
    for (name, id) in &model.branches {
        let what = format!("step {step}: branch {name}");
        same(&contents(handle(db, name).store().as_ref(), &what), &model.commits[id].state, &what);
    }
}

fn run(backend: Backend, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let mut db = open(&path, backend);
    let first = head_of(&db, MAIN);
    let root = Commit { parent: None, link: None, merged: None, state: State::new(), ids: Ids::new() };
    let mut model = Model {
        commits: BTreeMap::from([(first, root)]),
        branches: BTreeMap::from([(MAIN.to_owned(), first)]),
        tags: BTreeMap::new(),
        horizon: None,
        gone: BTreeSet::new(),
        writes: 0,
    };
    // A campaign runs many databases, each from a seed of its own.
    let seed = seed ^ env_or("ZARRDB_BRANCH_SEED", 0u64);
    let mut rng = SplitMix::new(seed, backend as u64);
    let mut tally = BTreeMap::<&str, u64>::new();
    for step in 0..env_or("ZARRDB_BRANCH_STEPS", 3_400u64) {
        match rng.range(0, 20) {
            0..=6 => commit_step(&db, &mut model, &mut rng, step),
            7..=8 => {
                let name = format!("b{}", rng.range(0, 5));
                let id = model.pick(&mut rng, &model.commits.keys().copied().collect::<Vec<_>>());
                match db.create_branch(&name, &VersionRef::Commit(id)) {
                    Ok(at) => {
                        assert!(model.live(id) && !model.branches.contains_key(&name), "step {step}: {name} at {id}");
                        assert_eq!(at, id);
                        model.branches.insert(name, id);
                    }
                    Err(Error::History(HistoryError::NameTaken { .. })) => assert!(model.branches.contains_key(&name)),
                    Err(Error::History(HistoryError::Expired { .. })) => assert!(!model.live(id), "step {step}"),
                    Err(e) => panic!("step {step}: branch {name} at {id}: {e}"),
                }
            }
            9 if rng.range(0, 2) == 0 => {
                let name = model.branch(&mut rng);
                match db.delete_branch(&name) {
                    Ok(()) => {
                        assert_ne!(name, MAIN);
                        model.branches.remove(&name);
                    }
                    Err(Error::History(HistoryError::InvalidName { .. })) => assert_eq!(name, MAIN),
                    Err(e) => panic!("step {step}: delete {name}: {e}"),
                }
            }
            9 => {
                restore_step(&db, &mut model, &mut rng, step);
                *tally.entry("restore").or_default() += 1;
            }
            10..=12 => *tally.entry(merge_step(&db, &mut model, &mut rng, step)).or_default() += 1,
            13 => {
                let name = model.branch(&mut rng);
                let id = model.pick(&mut rng, &model.kept());
                assert_eq!(db.reset(&name, &VersionRef::Commit(id)).unwrap(), id);
                model.branches.insert(name, id);
            }
            14 => {
                let name = format!("t{}", rng.range(0, 30));
                let id = model.pick(&mut rng, &model.kept());
                match db.tag(&name, &VersionRef::Commit(id)) {
                    Ok(_) => {
                        model.tags.insert(name, id);
                    }
                    Err(Error::History(HistoryError::TagExists { .. })) => assert!(model.tags.contains_key(&name)),
                    Err(e) => panic!("step {step}: tag {name}: {e}"),
                }
            }
            15 => {
                let kept: BTreeSet<CommitId> = model.kept().into_iter().collect();
                let chain: Vec<CommitId> = model.main_chain().into_iter().filter(|id| kept.contains(id)).collect();
                let id = model.pick(&mut rng, &chain);
                db.expire(&VersionRef::Commit(id)).unwrap();
                model.horizon = Some(model.horizon.map_or(id, |h| h.max(id)));
            }
            16 => {
                // Expired commits of `main`, and those off it no ref reaches (a deleted or reset
                // branch left them): every record goes.
                let kept: BTreeSet<CommitId> = model.kept().into_iter().collect();
                let expired: Vec<CommitId> =
                    model.commits.keys().copied().filter(|id| !kept.contains(id) && !model.gone.contains(id)).collect();
                let freed = db.collect().unwrap();
                assert_eq!(freed.versions, expired.len() as u64, "step {step}: versions collected: {expired:?}");
                // Each kept commit of `main` is linked to the kept one before it.
                let mut chain = model.main_chain();
                chain.reverse();
                let mut before = None;
                for id in chain.into_iter().filter(|id| kept.contains(id)) {
                    model.commits.get_mut(&id).unwrap().link = before;
                    before = Some(id);
                }
                model.gone.extend(expired);
                *tally.entry("collected versions").or_default() += freed.versions;
                *tally.entry("collected values").or_default() += freed.values;
                let problems = db.check_history().unwrap();
                assert!(problems.is_empty(), "step {step}: after collecting {freed:?}: {problems:?}");
                let log: Vec<CommitId> = db.log().unwrap().into_iter().map(|c| c.id).collect();
                let kept: BTreeSet<CommitId> = model.kept().into_iter().collect();
                let want: Vec<CommitId> = model.main_chain().into_iter().filter(|id| kept.contains(id)).collect();
                assert_eq!(log, want, "step {step}: main's log after a collection");
            }
            17 => {
                drop(db);
                db = open(&path, backend);
            }
            _ => check_step(&db, &model, &mut rng, step),
        }
        let what = format!("step {step}: the head of main");
        same(&contents(db.store().as_ref(), &what), &model.commits[&model.branches[MAIN]].state, &what);
    }
    check_step(&db, &model, &mut rng, u64::MAX);
    let problems = db.check_history().unwrap();
    assert!(problems.is_empty(), "at the end: {problems:?}");
    eprintln!("{}: {} commits, {} branches, {tally:?}", backend.name(), model.commits.len(), model.branches.len());
    for kind in ["fast-forward", "merge commit", "conflict", "collected versions"] {
        assert!(tally.get(kind).is_some_and(|n| *n > 0), "the run made no {kind}: {tally:?}");
    }
}

#[test]
fn redb_branches_match_the_model() {
    run(Backend::Redb, 0xb4a0_0001);
}

#[test]
fn lmdb_branches_match_the_model() {
    run(Backend::Lmdb, 0xb4a0_0002);
}

#[test]
fn sled_branches_match_the_model() {
    run(Backend::Sled, 0xb4a0_0003);
}
