//! Moving branches: making one, merging a version into one (fast-forward, or a merge commit
//! when no key changed on both sides), and resetting one to any commit.
//!
//! A merge or reset writes no value: the entries it records name values earlier commits wrote.
//! When the branch is `main`, the Zarr keys it changes are written to hold their new entries (with
//! the value when it is small, read from where the version keeps it) and the small values they
//! held are kept under their object keys, as a commit does.

use std::collections::BTreeMap;

use super::graph;
use super::record::{self, Change, CommitRecord, Entry};
use super::{head_of, newest, now_us, settle_main, supersede, upgrade_into, Tip, MAIN};
use crate::error::StoreError;
use crate::store::kv::{CommitNote, KvSnapshot, WriteBatch};

/// What a merge did, and the commit the branch points at afterwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Merged {
    /// The branch held the version already (it descends from it).
    UpToDate(u64),
    /// The branch descended to the version, which now is its head.
    FastForward(u64),
    /// A merge commit joined the two.
    Commit(u64),
}

/// Make the Zarr keys hold `changes`' new entries (`main`'s head moves to them).
fn rewrite_head(
    snap: &dyn KvSnapshot,
    changes: &BTreeMap<String, Change>,
    batch: &mut WriteBatch,
) -> Result<(), StoreError> {
    for (key, change) in changes {
        supersede(snap, key, &mut |k, v| {
            batch.puts.insert(k, Some(v));
            Ok(())
        })?;
        let head = match change.new {
            // A small value that is not at the head is kept under its object key.
            Some(entry) if entry.inline => {
                Some([&entry.encode()[..], &super::view::read_entry(snap, key, &entry)?].concat())
            }
            Some(entry) => Some(entry.encode().to_vec()),
            None => None,
        };
        batch.puts.insert(key.clone(), head);
    }
    Ok(())
}

/// Point branch `name` (at `head`, `None` when it does not exist yet) at `to`, the version whose
/// entries differ from the head's by `changes`.
fn move_branch(
    snap: &dyn KvSnapshot,
    name: &str,
    changes: &BTreeMap<String, Change>,
    to: u64,
) -> Result<WriteBatch, StoreError> {
    let mut batch = WriteBatch::default();
    if name == MAIN {
        rewrite_head(snap, changes, &mut batch)?;
        // `main`'s head may be the newest commit, which `last` need not name (layout 3): it
        // names it before `main` moves off it.
        let newest =
            newest(snap)?.ok_or_else(|| record::damaged(&record::last_key(), "the history has no newest commit"))?;
        batch.puts.insert(record::last_key(), Some(record::encode_ref(newest)));
    }
    batch.puts.insert(record::branch_key(name), Some(record::encode_ref(to)));
    Ok(batch)
}

/// Make branch `name` at commit `at`: the batch, or `None` when the name is taken.
pub(crate) fn create(snap: &dyn KvSnapshot, name: &str, at: u64) -> Result<Option<WriteBatch>, StoreError> {
    if head_of(snap, name)?.is_some() {
        return Ok(None);
    }
    let mut batch = WriteBatch::default();
    upgrade_into(snap, &mut batch)?;
    batch.puts.insert(record::branch_key(name), Some(record::encode_ref(at)));
    Ok(Some(batch))
}

/// Delete branch `name` (never `main`): the batch, or `None` when there is no such branch. Its
/// commits stay (a tag or another branch may reach them; readable by id until they expire).
pub(crate) fn delete(snap: &dyn KvSnapshot, name: &str) -> Result<Option<WriteBatch>, StoreError> {
    if name == MAIN || head_of(snap, name)?.is_none() {
        return Ok(None);
    }
    let mut batch = WriteBatch::default();
    batch.puts.insert(record::branch_key(name), None);
    Ok(Some(batch))
}

/// Point branch `name` at commit `to`, whatever the two share: the commits after the branch's
/// old head's meeting point with `to` leave the branch (history is kept; readable by id until
/// they expire). `None` when there is no such branch.
pub(crate) fn reset(snap: &dyn KvSnapshot, name: &str, to: &CommitRecord) -> Result<Option<WriteBatch>, StoreError> {
    let Some(head) = head_of(snap, name)? else { return Ok(None) };
    let changes = graph::between(snap, &head, to)?;
    let mut batch = move_branch(snap, name, &changes, to.seq)?;
    upgrade_into(snap, &mut batch)?;
    Ok(Some(batch))
}

/// Merge the version `source` made into branch `into`: up to date when the branch descends from
/// it already; a fast-forward when it descends from the branch's head (and `fast_forward`
/// allows it: else a merge commit over the head, its changes all `source` made since); otherwise
/// a merge commit
/// (first parent the branch's head, merged `source`) whose changes are what `source` changed
/// since the two parted, when none of their changes conflict (`conflict::conflicts`: a key
/// changed on both sides to different values, or a node made, removed or restructured on one
/// side with keys under it changed on the other). `Err` lists the keys (nothing is written).
/// `None` when there is no such branch.
#[allow(clippy::type_complexity)]
pub(crate) fn merge(
    snap: &dyn KvSnapshot,
    into: &str,
    source: &CommitRecord,
    note: CommitNote,
    fast_forward: bool,
) -> Result<Option<Result<(WriteBatch, Merged), Vec<String>>>, StoreError> {
    let Some(head) = head_of(snap, into)? else { return Ok(None) };
    let Some(base) = graph::merge_base(snap, &head, source)? else {
        let what = "two commits of one history share no ancestor";
        return Err(record::damaged(&record::commit_key(source.seq), what));
    };
    if base.seq == source.seq {
        return Ok(Some(Ok((WriteBatch::default(), Merged::UpToDate(head.seq)))));
    }
    // `main` fast-forwards only along first parents: through a merge link, its commits since
    // the merged one would leave its ancestry (expired at once, and gone from its log).
    if fast_forward && base.seq == head.seq && (into != MAIN || graph::on_first_parents(snap, &head, source)?) {
        let changes = graph::between(snap, &head, source)?;
        let mut batch = move_branch(snap, into, &changes, source.seq)?;
        upgrade_into(snap, &mut batch)?;
        return Ok(Some(Ok((batch, Merged::FastForward(source.seq)))));
    }
    let ours = graph::between(snap, &base, &head)?;
    let theirs = graph::between(snap, &base, source)?;
    let conflicts = super::conflict::conflicts(snap, &ours, &theirs)?;
    if !conflicts.is_empty() {
        return Ok(Some(Err(conflicts)));
    }
    // What the source changed and the branch does not hold yet, from the branch's entry.
    let changes: BTreeMap<String, Change> = theirs
        .into_iter()
        .filter(|(key, _)| !ours.contains_key(key))
        .map(|(key, change)| (key, Change { old: change.old, new: change.new }))
        .collect();
    let tip = Tip::on(snap, head.clone(), super::Target::Head)?;
    let seq = tip.next_seq(snap)?;
    let time_us = now_us().max(head.time_us.saturating_add(1));
    let commit = CommitRecord {
        seq,
        parent: head.seq,
        merged: source.seq,
        time_us,
        oldest_us: time_us,
        changes: changes.len() as u64,
        bytes: changes.values().filter_map(|c| c.new).map(|e: Entry| e.len).fold(0, u64::saturating_add),
        message: note.message,
        author: note.author,
    };
    let mut batch = move_branch(snap, into, &changes, seq)?;
    if into != MAIN {
        // `last` hides `main`'s commits past its ref (layout 4).
        settle_main(snap, &mut batch.puts)?;
    }
    upgrade_into(snap, &mut batch)?;
    batch.puts.extend(record::commit_puts(&commit, &changes, false));
    batch.puts.insert(record::last_key(), Some(record::encode_ref(seq)));
    Ok(Some(Ok((batch, Merged::Commit(seq)))))
}
