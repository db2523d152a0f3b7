//! Collection: freeing what only expired versions reach (docs/architecture.md, "Expiry and
//! collection").
//!
//! A commit older than the expiry horizon that no tag names has expired. A collection step folds
//! a run of expired commits on `main`'s ancestry into the first commit after it: that commit's
//! list of changes becomes the changes of the whole run and its own (so every kept version folds
//! to exactly what it held), its parent becomes the run's parent, and the records of the run go.
//! A value one commit of the run wrote and a later one (in the run, or the commit it is folded
//! into) superseded was readable only in the expired versions between the two, unless a merge
//! named it again, so that a version kept reads it (`held`): then it stays; otherwise it is
//! deleted. Nothing else is, so collection costs what it frees, what the run recorded and what
//! the merges left recorded, not the size of the database.
//!
//! Once `main` has no expired commit left, the commits that no ref reaches and that are not on
//! `main`'s ancestry (a deleted or reset branch left them) go too, with the values only they
//! read (`orphans_step`).
//!
//! Each step is one engine transaction of bounded size (a run too long for one step is folded
//! into one of its own commits, which stays expired for the next step), so a crash leaves every
//! kept version as it was and the next collection carries on.

use std::collections::{BTreeMap, BTreeSet};

use super::record::{self, Change, CommitRecord, Entry};
use super::{changes_of, graph, read_ref, HistoryEngine, Tip};
use crate::error::StoreError;
use crate::store::kv::{KvSnapshot, WriteBatch};

/// What collection freed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Collected {
    /// Commit records removed (their versions had expired).
    pub commits: u64,
    /// Values deleted.
    pub values: u64,
    /// Their bytes.
    pub bytes: u64,
}

impl Collected {
    pub fn add(&mut self, other: Collected) {
        self.commits += other.commits;
        self.values += other.values;
        self.bytes = self.bytes.saturating_add(other.bytes);
    }
}

/// Changes a step folds before it stops at the next commit boundary (more when one commit
/// recorded more); bounds the engine transaction a step makes.
pub(crate) const STEP_CHANGES: u64 = 100_000;

/// `main`'s ancestry, oldest first.
fn ancestry(snap: &dyn KvSnapshot, tip: &Tip) -> Result<Vec<CommitRecord>, StoreError> {
    let mut chain = super::ancestry_of(snap, &tip.parent)?;
    chain.reverse();
    Ok(chain)
}

/// Fold the changes of `later` into `run` (the changes of the commits before it): per key, the
/// entry before the run and the entry after `later`. An entry `later` supersedes that a commit
/// of the run wrote goes to `freed`.
fn fold(
    run: &mut BTreeMap<String, Change>,
    later: Vec<(String, Change)>,
    at: &str,
    freed: &mut Vec<(String, Entry)>,
) -> Result<(), StoreError> {
    for (key, change) in later {
        match run.get_mut(&key) {
            Some(seen) => {
                if seen.new != change.old {
                    return Err(record::superseded_mismatch(at));
                }
                if let Some(entry) = seen.new {
                    freed.push((key, entry));
                }
                seen.new = change.new;
            }
            None => {
                run.insert(key, change);
            }
        }
    }
    Ok(())
}

/// The next step of collection in `snap` (the latest state, under the writer lock): the batch
/// that makes it and what it frees; `None` when no expired commit is left.
pub(crate) fn step(snap: &dyn KvSnapshot, budget: u64) -> Result<Option<(WriteBatch, Collected)>, StoreError> {
    let horizon = read_ref(snap, &record::horizon_key())?.unwrap_or(0);
    if horizon == 0 {
        return Ok(None);
    }
    let tip = Tip::read(snap)?;
    let chain = ancestry(snap, &tip)?;
    let on_main: BTreeSet<u64> = chain.iter().map(|c| c.seq).collect();
    // Tags and other branches keep the commits they reach (down to where they meet `main`).
    let kept = graph::protected(snap, &chain)?;
    let expired = |c: &CommitRecord| c.seq < horizon && !kept.contains(&c.seq) && c.seq != tip.parent.seq;
    // A value a commit off `main` wrote that a merge brought in is that commit's to keep.
    let owned = |e: &Entry| on_main.contains(&e.seq) || !kept.contains(&e.seq);
    let kept_off_main: Vec<u64> = kept.iter().copied().filter(|seq| !on_main.contains(seq)).collect();
    let Some(first) = chain.iter().position(expired) else {
        return orphans_step(snap, &chain, &on_main, &kept, &kept_off_main, budget);
    };
    // The run: expired commits from `first`, up to the budget; `into` is the commit after it.
    let mut end = first;
    let mut recorded = 0u64;
    while expired(&chain[end]) && (end == first || recorded < budget) {
        // The oldest kept commit's changes are in the base, not read here.
        if end > 0 {
            recorded = recorded.saturating_add(chain[end].changes);
        }
        end += 1;
    }
    let into = &chain[end];
    // What the commits kept after the run (and before it) read through merges.
    let readers = readers(&chain, first..end + 1, &kept_off_main);
    if first == 0 {
        return into_base(snap, &chain[..=end], &owned, &readers).map(Some);
    }
    let mut changes = BTreeMap::new();
    let mut freed = Vec::new();
    let mut batch = WriteBatch::default();
    for commit in &chain[first..=end] {
        let key = record::changes_key(commit.seq);
        fold(&mut changes, changes_of(snap, commit.seq)?, &key, &mut freed)?;
        if commit.seq != into.seq {
            batch.puts.insert(record::commit_key(commit.seq), None);
            batch.puts.insert(key, None);
        }
    }
    // A key made and removed within the run changes nothing any kept version sees.
    changes.retain(|_, change| change.old.is_some() || change.new.is_some());
    // A merge commit whose merged commit is kept is kept itself (`graph::protected`): those
    // folded here merged commits that are gone or expired, a link no walk needs.
    let folded = CommitRecord {
        parent: chain[first].parent,
        oldest_us: chain[first].oldest_us,
        changes: changes.len() as u64,
        bytes: changes.values().filter_map(|c| c.new).map(|e| e.len).fold(0, u64::saturating_add),
        ..into.clone()
    };
    batch.puts.extend(record::commit_puts(&folded, &changes, true));
    let mut collected = Collected { commits: (end - first) as u64, ..Collected::default() };
    freed.retain(|(_, e)| owned(e));
    // The base, and the folded commit when the run named the value again.
    let state = |key: &str, entry: &Entry| -> Result<bool, StoreError> {
        let folded = changes.get(key).and_then(|c| c.new).is_some_and(|e| e.same_value(entry));
        Ok(folded || at_base(snap, key, entry)?)
    };
    let removed: BTreeSet<u64> = chain[first..=end].iter().map(|c| c.seq).collect();
    let readers = with_writers(snap, &readers, &freed, &removed)?;
    let held = held(snap, &state, &readers, &freed)?;
    free(&mut batch, &mut collected, freed, &held);
    Ok(Some((batch, collected)))
}

/// The commits that are neither on `main`'s ancestry nor kept by a tag or branch (a deleted or
/// reset branch left them; they have expired), newest first.
fn orphans(snap: &dyn KvSnapshot, on_main: &BTreeSet<u64>, kept: &BTreeSet<u64>) -> Result<Vec<u64>, StoreError> {
    let mut found = Vec::new();
    for key in snap.keys(&record::commits_prefix())? {
        // A key that names no commit is damage that `verify` reports; it is left alone here.
        let Some(seq) = record::parse_commit_key(&key) else { continue };
        if !on_main.contains(&seq) && !kept.contains(&seq) {
            found.push(seq);
        }
    }
    // Fixed-width numbers list in order: the newest last.
    found.reverse();
    Ok(found)
}

/// The commits besides the base whose recorded changes can name a value of an older commit:
/// those of `main` (in `chain`, outside `run`, whose records a step removes or rewrites) that
/// merged or stand for a folded run (which may hold a merge), and the kept commits off `main`.
/// Only a merge names a value another commit wrote, so no other commit is read.
fn readers(chain: &[CommitRecord], run: std::ops::Range<usize>, kept_off_main: &[u64]) -> Vec<u64> {
    let mut seqs: Vec<u64> = (chain.iter().enumerate())
        .filter(|(i, c)| !run.contains(i) && c.parent != 0 && (c.merged != 0 || c.oldest_us != c.time_us))
        .map(|(_, c)| c.seq)
        .collect();
    seqs.extend_from_slice(kept_off_main);
    seqs
}

/// `readers` with the commits that wrote `candidates` and whose records the step leaves (not
/// in `removed`): a commit that is no merge names only values it wrote, and one older than a
/// run (a tagged one, say) reads a value that a merge in the run took back and a later commit
/// of the run superseded again.
fn with_writers(
    snap: &dyn KvSnapshot,
    readers: &[u64],
    candidates: &[(String, Entry)],
    removed: &BTreeSet<u64>,
) -> Result<Vec<u64>, StoreError> {
    let mut all: BTreeSet<u64> = readers.iter().copied().collect();
    let writers: BTreeSet<u64> = candidates.iter().map(|(_, e)| e.seq).filter(|seq| !removed.contains(seq)).collect();
    for seq in writers {
        if !all.contains(&seq) && snap.size(&record::commit_key(seq))?.is_some() {
            all.insert(seq);
        }
    }
    Ok(all.into_iter().collect())
}

/// Of the values `written` (a key and its entry), those some kept version reads: those
/// `state` names (the base, or the state a step leaves where a run folds) and those the
/// changes of `readers` name. A value `main` superseded can be named again by a later merge
/// (of a line that still held it), so being superseded once does not free it.
fn held(
    snap: &dyn KvSnapshot,
    state: &dyn Fn(&str, &Entry) -> Result<bool, StoreError>,
    readers: &[u64],
    written: &[(String, Entry)],
) -> Result<BTreeSet<(String, u64, u32)>, StoreError> {
    let wanted: BTreeSet<(&str, u64, u32)> = written.iter().map(|(k, e)| (k.as_str(), e.seq, e.index)).collect();
    let mut held = BTreeSet::new();
    // A step that frees nothing reads no reader's changes.
    if wanted.is_empty() {
        return Ok(held);
    }
    for (key, entry) in written {
        if state(key, entry)? {
            held.insert((key.clone(), entry.seq, entry.index));
        }
    }
    for &seq in readers {
        for (key, change) in changes_of(snap, seq)? {
            if let Some(e) = change.new.filter(|e| wanted.contains(&(key.as_str(), e.seq, e.index))) {
                held.insert((key, e.seq, e.index));
            }
        }
    }
    Ok(held)
}

/// Whether the base names `entry` at `key`.
fn at_base(snap: &dyn KvSnapshot, key: &str, entry: &Entry) -> Result<bool, StoreError> {
    let base = record::base_key(key);
    match snap.get(&base)? {
        Some(bytes) => Ok(Entry::decode(&base, &bytes)?.same_value(entry)),
        None => Ok(false),
    }
}

/// Delete, in `batch`, the values of `candidates` that no kept version reads (`held`), each
/// once, and count them.
fn free(
    batch: &mut WriteBatch,
    collected: &mut Collected,
    candidates: Vec<(String, Entry)>,
    held: &BTreeSet<(String, u64, u32)>,
) {
    let mut done = BTreeSet::new();
    for (key, entry) in candidates {
        if held.contains(&(key, entry.seq, entry.index)) || !done.insert((entry.seq, entry.index)) {
            continue;
        }
        batch.puts.insert(record::object_key(&entry), None);
        collected.values += 1;
        collected.bytes = collected.bytes.saturating_add(entry.len);
    }
}

/// The next step of collecting the commits no ref reaches off `main` (`orphans`), once `main`
/// has nothing left to collect: their records go, newest first (so a commit left for a later
/// step never names one gone), with the values they read that nothing else owns or reads: those
/// they wrote, and those of collected commits that a folded record names (a reset can leave a
/// record `main`'s collection folded off `main`). A kept version that reads one got it through a
/// merge (`held`); the line that merged it frees it once its versions that read it expire.
/// `None` when there are none.
fn orphans_step(
    snap: &dyn KvSnapshot,
    chain: &[CommitRecord],
    on_main: &BTreeSet<u64>,
    kept: &BTreeSet<u64>,
    kept_off_main: &[u64],
    budget: u64,
) -> Result<Option<(WriteBatch, Collected)>, StoreError> {
    let mut batch = WriteBatch::default();
    let mut collected = Collected::default();
    let mut written = Vec::new();
    let mut recorded = 0u64;
    // Whether each commit a value names still has its record: many values name one commit.
    let mut exists: BTreeMap<u64, bool> = BTreeMap::new();
    for seq in orphans(snap, on_main, kept)? {
        if collected.commits > 0 && recorded >= budget {
            break;
        }
        let changes = changes_of(snap, seq)?;
        recorded = recorded.saturating_add(changes.len() as u64);
        for (key, entry) in changes.into_iter().filter_map(|(k, c)| c.new.map(|e| (k, e))) {
            // A value of a commit that is still there is that commit's to free.
            let theirs = match exists.get(&entry.seq) {
                _ if entry.seq == seq => true,
                Some(there) => !there,
                None => {
                    let there = snap.size(&record::commit_key(entry.seq))?.is_some();
                    exists.insert(entry.seq, there);
                    !there
                }
            };
            if theirs {
                written.push((key, entry));
            }
        }
        batch.puts.insert(record::commit_key(seq), None);
        batch.puts.insert(record::changes_key(seq), None);
        collected.commits += 1;
    }
    if collected.commits == 0 {
        return Ok(None);
    }
    let state = |key: &str, entry: &Entry| at_base(snap, key, entry);
    let held = held(snap, &state, &readers(chain, 0..0, kept_off_main), &written)?;
    for (key, entry) in written {
        if held.contains(&(key, entry.seq, entry.index)) {
            continue;
        }
        let object = record::object_key(&entry);
        // Freed already: by `main`'s collection (a value it merged and later superseded), or by
        // an earlier orphan naming it too.
        if snap.size(&object)?.is_none() {
            continue;
        }
        batch.puts.insert(object, None);
        collected.values += 1;
        collected.bytes = collected.bytes.saturating_add(entry.len);
    }
    Ok(Some((batch, collected)))
}

/// Fold `run` (the oldest kept commit's state, the base, and the commits after it, all expired
/// but the last) into the base: the last commit becomes the oldest kept, with the base as its
/// state. Each change updates the base at its key; the entry it replaces there was read by no
/// kept version older than the last commit, so its value is deleted unless the new base or a
/// later commit names it again (`held`: a merge can take back a value `main` superseded). The
/// cost follows the changes the run recorded and the merges kept, not the size of the base.
fn into_base(
    snap: &dyn KvSnapshot,
    run: &[CommitRecord],
    owned: &dyn Fn(&Entry) -> bool,
    readers: &[u64],
) -> Result<(WriteBatch, Collected), StoreError> {
    let into = run.last().expect("a run ends at a commit");
    let mut batch = WriteBatch::default();
    let mut collected = Collected { commits: (run.len() - 1) as u64, ..Collected::default() };
    let mut base: BTreeMap<String, Option<Entry>> = BTreeMap::new();
    let mut replaced = Vec::new();
    for commit in &run[1..] {
        let at = record::changes_key(commit.seq);
        for (key, change) in changes_of(snap, commit.seq)? {
            let now = match base.get(&key) {
                Some(entry) => *entry,
                None => match snap.get(&record::base_key(&key))? {
                    Some(bytes) => Some(Entry::decode(&record::base_key(&key), &bytes)?),
                    None => None,
                },
            };
            if now != change.old {
                return Err(record::superseded_mismatch(&at));
            }
            if let Some(entry) = now.filter(|e| owned(e)) {
                replaced.push((key.clone(), entry));
            }
            base.insert(key, change.new);
        }
    }
    // Every key a value was replaced at is in `base`: it holds the new oldest version there.
    let state = |key: &str, entry: &Entry| Ok(base.get(key).copied().flatten().is_some_and(|e| e.same_value(entry)));
    let removed: BTreeSet<u64> = run.iter().map(|c| c.seq).collect();
    let readers = with_writers(snap, readers, &replaced, &removed)?;
    let held = held(snap, &state, &readers, &replaced)?;
    free(&mut batch, &mut collected, replaced, &held);
    for (key, entry) in base {
        batch.puts.insert(record::base_key(&key), entry.map(|e| e.encode().to_vec()));
    }
    for commit in run {
        if commit.seq != into.seq {
            batch.puts.insert(record::commit_key(commit.seq), None);
        }
        // The base holds the new oldest version's state: no commit in it keeps a list of changes.
        batch.puts.insert(record::changes_key(commit.seq), None);
    }
    let oldest = CommitRecord { parent: 0, oldest_us: run[0].oldest_us, ..into.clone() };
    batch.puts.insert(record::commit_key(into.seq), Some(oldest.encode()));
    Ok((batch, collected))
}

impl HistoryEngine {
    /// Make one step of collection, under the engine's writer lock (the caller holds the
    /// database's); `None` when nothing was left to collect.
    pub fn collect_step(&self, durable: bool, budget: u64) -> Result<Option<Collected>, StoreError> {
        let writer = self.inner.clone().lock_writer()?;
        let snap = self.inner.snapshot()?;
        let Some((mut batch, collected)) = step(snap.as_ref(), budget)? else { return Ok(None) };
        // A folded commit's record may hold its changes.
        super::upgrade_into(snap.as_ref(), &mut batch)?;
        drop(snap);
        // No branch's fold walks the records this step rewrites (`HistoryEngine::folds`).
        let _folds = (!self.inner.stable_snapshots()).then(|| self.folds.write());
        match writer {
            Some(writer) => writer.commit(batch, durable)?,
            None => self.inner.commit(batch, durable)?,
        }
        Ok(Some(collected))
    }
}
