//! Collection: deleting the objects no commit a reader may still hold reaches (packs, pages and
//! records of lost races, aborted and killed commits, and of commits superseded long ago).
//!
//! Every age is by the server's clock: an object's `Last-Modified` against the time of an object
//! the collector writes first. Kept: the head's commit, and each older commit while the commit
//! after it (its child) was written less than `older_than` ago, so a reader that pinned a commit
//! within that time reads it whole; and everything those commits name. Deleted: every other
//! record, page and pack older than `older_than`.
//!
//! Commits in flight are safe whatever `older_than` is (zero included): before it lists anything,
//! the collection raises the `fence` object to the number of a commit of its own and moves the
//! head to it (the same pages as the head it replaces). Objects uploaded after that are younger
//! than the cut-off; a commit that uploaded before it was based on an older head, so its
//! conditional write of the head fails and it is tried again, and the try does not name what
//! was uploaded before the fence (`fenced_since`): it uploads those values again.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use super::format::{Fence, Head, Value};
use super::snapshot::load_page;
use super::BucketEngine;
use crate::error::StoreError;

/// How often a collection tries to move the head to its fence while other writers move it.
const FENCE_TRIES: u64 = 64;

/// What one collection did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Collected {
    /// Commits kept (the head and those a reader may still hold).
    pub commits_kept: usize,
    /// Objects deleted, and their bytes.
    pub deleted: usize,
    pub bytes: u64,
}

impl BucketEngine {
    pub(crate) fn collect(&self, older_than: Duration) -> Result<Collected, StoreError> {
        let o = &self.objects;
        let now = o.block(o.server_now())?;
        let cutoff = now.saturating_sub(i64::try_from(older_than.as_millis()).unwrap_or(i64::MAX));
        self.fence()?;
        let mut listed: Vec<(String, u64, i64)> = Vec::new();
        for folder in ["commits/", "pages/", "packs/"] {
            listed.extend(o.block(o.list(folder))?);
        }
        let written: HashMap<&str, i64> = listed.iter().map(|(name, _, at)| (name.as_str(), *at)).collect();
        let mut keep: HashSet<String> = HashSet::new();
        let latest = self.fetch_latest()?;
        let mut commits_kept = 0;
        if let Some((head, _)) = &latest.head {
            let mut at: Option<Head> = Some(*head);
            while let Some(commit_at) = at {
                let name = format!("commits/{}", commit_at.commit.hex());
                let commit = self.read_commit(commit_at.commit)?;
                commits_kept += 1;
                keep.insert(name.clone());
                for page in &commit.pages {
                    keep.insert(format!("pages/{}", page.id.hex()));
                    for (_, value) in &load_page(o, &self.cache, page)?.entries {
                        if let Value::Packed { pack, .. } = value {
                            keep.insert(format!("packs/{}", pack.hex()));
                        }
                    }
                }
                // The parent stays while this commit, which superseded it, is younger than the
                // cut-off; strictly, so that with an age of zero a commit superseded within the
                // second of the cut-off (Last-Modified has whole seconds) is not kept.
                let superseded_at = written.get(name.as_str()).copied().unwrap_or(now);
                at = match commit.parent {
                    Some(parent) if superseded_at > cutoff => {
                        Some(Head { commit: parent, sequence: commit.sequence.saturating_sub(1) })
                    }
                    _ => None,
                };
                if at.is_some_and(|p| !written.contains_key(format!("commits/{}", p.commit.hex()).as_str())) {
                    // Collected before: nothing older is kept.
                    at = None;
                }
            }
        }
        let doomed: Vec<(String, u64)> = listed
            .into_iter()
            .filter(|(name, _, at)| *at < cutoff && !keep.contains(name))
            .map(|(name, size, _)| (name, size))
            .collect();
        let names: Vec<String> = doomed.iter().map(|(name, _)| name.clone()).collect();
        for batch in names.chunks(1000) {
            o.block(o.delete_all(batch))?;
        }
        Ok(Collected { commits_kept, deleted: doomed.len(), bytes: doomed.iter().map(|(_, size)| size).sum() })
    }

    /// Raise the fence to a commit of this collection's and move the head to it, so every
    /// commit based on an older head fails its conditional write.
    fn fence(&self) -> Result<(), StoreError> {
        let mut tries = 0;
        loop {
            let base = self.fetch_latest()?;
            self.raise_fence(base.commit.sequence + 1)?;
            match self.commit_over(&base, &[], &Default::default()) {
                Err(StoreError::HeadMoved { .. }) if tries < FENCE_TRIES => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(tries));
                }
                other => return other,
            }
        }
    }

    /// Make the `fence` object name at least `sequence`; it never goes down, so of two
    /// collections the later fence stands.
    fn raise_fence(&self, sequence: u64) -> Result<(), StoreError> {
        let o = &self.objects;
        for _ in 0..FENCE_TRIES {
            let (stored, version) = match o.block(o.get_versioned("fence"))? {
                Some((bytes, version)) => {
                    (Fence::parse(&bytes).map_err(|what| self.damaged("fence", what))?.sequence, Some(version))
                }
                None => (0, None),
            };
            if stored >= sequence {
                return Ok(());
            }
            if o.block(o.put_if("fence", Fence { sequence }.to_bytes(), version))?.is_some() {
                return Ok(());
            }
        }
        Err(StoreError::HeadMoved { database: o.locator().to_owned() })
    }
}
