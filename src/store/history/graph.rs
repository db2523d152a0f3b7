//! The shape of history once there are branches: the newest common ancestor of two commits, what
//! differs between any two versions (not only along one ancestry), and the commits that branches
//! and tags keep from expiring.
//!
//! Each walk goes from the newer commits to the older ones and stops where the answer is known, so
//! its cost follows the commits since the two sides parted (or the commits off `main`), never the
//! whole history or the size of the database.

use std::collections::{BTreeMap, BTreeSet};

use super::record::{Change, CommitRecord, Entry};
use super::{changes_of, read, read_commit};
use crate::error::StoreError;
use crate::store::kv::KvSnapshot;

/// The parents of `commit`: the one it was made on and, for a merge commit, the one it merged.
/// One a collection has removed is left out: a commit reached through a merge may be one a
/// deleted branch left, whose own parent expired; what it shares with the rest of history is
/// reached through first parents from the refs (which `check_history` walks strictly).
fn parents(snap: &dyn KvSnapshot, commit: &CommitRecord) -> Result<Vec<CommitRecord>, StoreError> {
    let mut found = Vec::new();
    for parent in [commit.parent, commit.merged] {
        // Parents are older than their children, so every walk ends.
        if parent != 0 && parent < commit.seq {
            found.extend(read_commit(snap, parent)?);
        }
    }
    Ok(found)
}

/// Whether `ancestor` is on `commit`'s first-parent ancestry (or is it).
pub(crate) fn on_first_parents(
    snap: &dyn KvSnapshot,
    ancestor: &CommitRecord,
    commit: &CommitRecord,
) -> Result<bool, StoreError> {
    let mut at = commit.clone();
    while at.seq > ancestor.seq {
        match read::parent_of(snap, &at)? {
            Some(parent) => at = parent,
            None => return Ok(false),
        }
    }
    Ok(at.seq == ancestor.seq)
}

/// The newest commit that both `a` and `b` descend from, through parents and merged commits;
/// `None` when they share none. Commits are visited newest first (every parent is older than its
/// child), so the first one reached from both sides is the newest they share.
pub(crate) fn merge_base(
    snap: &dyn KvSnapshot,
    a: &CommitRecord,
    b: &CommitRecord,
) -> Result<Option<CommitRecord>, StoreError> {
    const A: u8 = 1;
    const B: u8 = 2;
    let mut frontier: BTreeMap<u64, (u8, CommitRecord)> = BTreeMap::new();
    frontier.insert(a.seq, (A, a.clone()));
    frontier.entry(b.seq).or_insert((0, b.clone())).0 |= B;
    while let Some((_, (sides, commit))) = frontier.pop_last() {
        if sides == A | B {
            return Ok(Some(commit));
        }
        for parent in parents(snap, &commit)? {
            frontier.entry(parent.seq).or_insert((0, parent)).0 |= sides;
        }
    }
    Ok(None)
}

/// The seqs of the commits from `to` back to its first-parent ancestor `from`, oldest first
/// (`from` left out); `None` when `from` is not on `to`'s first-parent ancestry.
fn first_parent_run(
    snap: &dyn KvSnapshot,
    from: u64,
    to: &CommitRecord,
    limit: usize,
) -> Result<Option<Vec<u64>>, StoreError> {
    let mut run = Vec::new();
    let mut at = to.clone();
    while at.seq != from {
        if at.seq < from || run.len() >= limit {
            return Ok(None);
        }
        run.push(at.seq);
        match read::parent_of(snap, &at)? {
            Some(parent) => at = parent,
            None => return Ok(None),
        }
    }
    run.reverse();
    Ok(Some(run))
}

/// What changed from commit `from` to commit `to`, which descends from it along first parents:
/// per key, its entry at `from` (`old`) and at `to` (`new`), from the changes recorded by the
/// commits in between, so the cost follows what changed, not the size of the database. `None`
/// when `from` is not on `to`'s first-parent ancestry.
pub(crate) fn changes_between(
    snap: &dyn KvSnapshot,
    from: &CommitRecord,
    to: &CommitRecord,
) -> Result<Option<BTreeMap<String, Change>>, StoreError> {
    changes_within(snap, from, to, usize::MAX)
}

/// [`changes_between`], or `None` when `to` is more than `limit` commits past `from`.
pub(crate) fn changes_within(
    snap: &dyn KvSnapshot,
    from: &CommitRecord,
    to: &CommitRecord,
    limit: usize,
) -> Result<Option<BTreeMap<String, Change>>, StoreError> {
    let Some(run) = first_parent_run(snap, from.seq, to, limit)? else { return Ok(None) };
    let mut changes = fold_changes(snap, &run)?;
    changes.retain(|_, change| !same(&change.old, &change.new));
    Ok(Some(changes))
}

/// What the commits `seqs` (oldest first) changed, folded: per key the entry before the first
/// and after the last.
fn fold_changes(snap: &dyn KvSnapshot, seqs: &[u64]) -> Result<BTreeMap<String, Change>, StoreError> {
    let mut changes: BTreeMap<String, Change> = BTreeMap::new();
    for seq in seqs {
        for (key, change) in changes_of(snap, *seq)? {
            match changes.get_mut(&key) {
                Some(seen) => seen.new = change.new,
                None => {
                    changes.insert(key, change);
                }
            }
        }
    }
    Ok(changes)
}

/// Whether two entries name the same value (or both none).
pub(crate) fn same(a: &Option<Entry>, b: &Option<Entry>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.same_value(b),
        (a, b) => a.is_none() && b.is_none(),
    }
}

/// The keys whose entries differ between the versions `a` and `b` made, each with its entry in
/// `a` (`old`) and in `b` (`new`). It reads the changes recorded since the two first-parent
/// ancestries met, so its cost follows what changed on either side since then.
pub(crate) fn between(
    snap: &dyn KvSnapshot,
    a: &CommitRecord,
    b: &CommitRecord,
) -> Result<BTreeMap<String, Change>, StoreError> {
    // Where the two first-parent ancestries meet: step down whichever side is newer, keeping
    // the commits each side passes.
    let (mut x, mut y) = (a.clone(), b.clone());
    let (mut run_a, mut run_b) = (Vec::new(), Vec::new());
    while x.seq != y.seq {
        let (newer, run) = if x.seq > y.seq { (&mut x, &mut run_a) } else { (&mut y, &mut run_b) };
        run.push(newer.seq);
        let parted = || super::record::damaged(&super::record::commit_key(newer.seq), "two commits share no ancestor");
        *newer = read::parent_of(snap, newer)?.ok_or_else(parted)?;
    }
    run_a.reverse();
    run_b.reverse();
    let on_a = fold_changes(snap, &run_a)?;
    let on_b = fold_changes(snap, &run_b)?;
    let mut differ = BTreeMap::new();
    for key in on_a.keys().chain(on_b.keys()).collect::<BTreeSet<_>>() {
        // A key one side left alone holds there what it held where they met.
        let at_a = on_a.get(key).map_or_else(|| on_b[key].old, |c| c.new);
        let at_b = on_b.get(key).map_or_else(|| on_a[key].old, |c| c.new);
        if !same(&at_a, &at_b) {
            differ.insert(key.clone(), Change { old: at_a, new: at_b });
        }
    }
    Ok(differ)
}

/// The commits tags and branches other than `main` keep: each tagged commit, every commit on a
/// branch's ancestry (and on the ancestry of what it merged) down to where it meets `main`'s
/// ancestry (`chain`, in either order), and the commit where it meets it. A version one of them
/// reaches reads values only commits up to there wrote, so no collection may fold it away. A
/// commit of `main` that merged a kept commit off it is kept too, so the next merge of that
/// branch still starts from there; so is one that merged a commit whose ancestry meets a kept
/// commit off `main`, with what it merged (the link from `main` to that kept commit).
pub(crate) fn protected(snap: &dyn KvSnapshot, chain: &[CommitRecord]) -> Result<BTreeSet<u64>, StoreError> {
    let main_chain: BTreeSet<u64> = chain.iter().map(|c| c.seq).collect();
    let mut kept = BTreeSet::new();
    let mut todo: Vec<u64> = read::tags(snap)?.into_iter().map(|(_, seq)| seq).collect();
    todo.extend(read::branches(snap)?.into_iter().filter(|(name, _)| name != super::MAIN).map(|(_, seq)| seq));
    // What a kept commit of `main` merged stays readable with it (a later merge may start
    // there, a branch be made from it, or a reset leave that commit off `main` with a tag on
    // it): until no kept commit of `main` merges a commit not yet kept.
    let horizon = read::horizon(snap)?;
    // `main`'s head is the newest commit of its ancestry (`chain` comes in either order).
    let head = chain.iter().map(|c| c.seq).max().unwrap_or(0);
    // Merged commits whose records are gone: asked for once (asking again each round would
    // never end the loop).
    let mut missing = BTreeSet::new();
    loop {
        while let Some(seq) = todo.pop() {
            if kept.contains(&seq) || missing.contains(&seq) {
                continue;
            }
            if main_chain.contains(&seq) {
                kept.insert(seq);
                continue;
            }
            // A merged commit a collection removed keeps nothing (and is not kept).
            let Some(commit) = read_commit(snap, seq)? else {
                missing.insert(seq);
                continue;
            };
            kept.insert(seq);
            todo.extend(parents(snap, &commit)?.into_iter().map(|p| p.seq));
        }
        todo.extend(
            chain
                .iter()
                .filter(|c| c.merged != 0 && !kept.contains(&c.merged) && !missing.contains(&c.merged))
                .filter(|c| c.seq >= horizon || c.seq == head || kept.contains(&c.seq))
                .map(|c| c.merged),
        );
        // A commit of `main` that merged a commit whose ancestry off `main` meets a kept one is
        // the only link from `main`'s history to that kept commit: a merge of the two sides
        // finds where they parted through it. Folding it away would make that merge start from
        // an older commit, which can take a change back or miss a conflict. So what it merged
        // is kept (and the commit itself with it, below), expired or not.
        let mut meets = BTreeMap::new();
        let linking = |c: &&CommitRecord| {
            c.merged != 0
                && !kept.contains(&c.merged)
                && !missing.contains(&c.merged)
                && !main_chain.contains(&c.merged)
        };
        for c in chain.iter().filter(linking) {
            if meets_kept(snap, c.merged, &kept, &main_chain, &mut meets)? {
                todo.push(c.merged);
            }
        }
        if todo.is_empty() {
            break;
        }
    }
    let merges: Vec<u64> = chain
        .iter()
        .filter(|c| c.merged != 0 && kept.contains(&c.merged) && !main_chain.contains(&c.merged))
        .map(|c| c.seq)
        .collect();
    kept.extend(merges);
    Ok(kept)
}

/// Whether the ancestry of commit `start` (neither kept nor on `main`), through commits off
/// `main` whose records are there, reaches a kept commit off `main`. `memo` keeps the answer for
/// every commit walked, so commits several merges reach are walked once.
fn meets_kept(
    snap: &dyn KvSnapshot,
    start: u64,
    kept: &BTreeSet<u64>,
    main_chain: &BTreeSet<u64>,
    memo: &mut BTreeMap<u64, bool>,
) -> Result<bool, StoreError> {
    let mut walked: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    let mut todo = vec![start];
    while let Some(seq) = todo.pop() {
        if memo.contains_key(&seq) || walked.contains_key(&seq) || kept.contains(&seq) || main_chain.contains(&seq) {
            continue;
        }
        let Some(commit) = read_commit(snap, seq)? else {
            memo.insert(seq, false);
            continue;
        };
        // Parents are older than their children, so every walk ends.
        let parents: Vec<u64> = [commit.parent, commit.merged].into_iter().filter(|p| *p != 0 && *p < seq).collect();
        todo.extend(&parents);
        walked.insert(seq, parents);
    }
    // Oldest first: a commit's parents are answered before it.
    for (seq, parents) in walked {
        let meets = parents.iter().any(|p| (kept.contains(p) && !main_chain.contains(p)) || memo.get(p) == Some(&true));
        memo.insert(seq, meets);
    }
    Ok(memo.get(&start) == Some(&true))
}

/// The commits on `main`'s first-parent ancestry, by seq.
pub(crate) fn main_chain(snap: &dyn KvSnapshot) -> Result<Vec<CommitRecord>, StoreError> {
    super::ancestry_of(snap, &read::main(snap)?)
}
