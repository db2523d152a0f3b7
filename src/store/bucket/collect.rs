//! Collection: deleting the objects no commit a reader may still hold reaches (packs, pages and
//! records of lost races, aborted and killed commits, and of commits superseded long ago).
//!
//! Every age is by the server's clock: an object's `Last-Modified` against the time of an object
//! the collector writes first. Kept: the head's commit, and each older commit while the commit
//! after it (its child) was written less than `grace` ago, so a reader that pinned a commit
//! within `grace` reads it whole; and everything those commits name. Deleted: every other record,
//! page and pack older than `grace`, so an upload of a commit still in flight (younger than
//! `grace`) is never taken; a writer whose first upload is `grace / 2` old refuses to commit
//! ([`super::GRACE`]).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use super::format::{Head, Value};
use super::snapshot::load_page;
use super::BucketEngine;
use crate::error::StoreError;

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
    pub(crate) fn collect(&self, grace: Duration) -> Result<Collected, StoreError> {
        let o = &self.objects;
        let now = o.block(o.server_now())?;
        let cutoff = now - i64::try_from(grace.as_millis()).unwrap_or(i64::MAX);
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
                // The parent stays while this commit, which superseded it, is younger than grace.
                let superseded_at = written.get(name.as_str()).copied().unwrap_or(now);
                at = match commit.parent {
                    Some(parent) if superseded_at >= cutoff => {
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
}
