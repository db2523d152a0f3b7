//! A database whose home is a bucket prefix (`zarrdb+s3://bucket/prefix`): the engine behind
//! [`crate::Backend::Bucket`].
//!
//! Nothing is overwritten but one small object, `head`, and that only conditionally:
//!
//! ```text
//! prefix/__zarrdb/format        marker: format number, database id (created once)
//! prefix/__zarrdb/head          the latest commit's id and number (replaced with If-Match)
//! prefix/__zarrdb/commits/<id>  parent, number, time, the manifest's pages
//! prefix/__zarrdb/pages/<id>    keys in order -> value inline, or (pack, offset, length, CRC)
//! prefix/__zarrdb/packs/<id>    the values of one commit, concatenated
//! ```
//!
//! A commit uploads its packs, then its changed pages and its record, and only when all are
//! acknowledged replaces `head` on the condition that it still names the commit the writer read.
//! That request is the commit point: a crash before it leaves unreachable objects only, and of
//! two writers the server lets one win. The loser gets [`StoreError::HeadMoved`], which the
//! transaction layer (`db/`) answers by checking what the commit read against the new head and
//! committing again, or failing with a conflict (docs/architecture.md, "Bucket databases").

mod collect;
#[cfg(test)]
mod collect_tests;
mod format;
mod manifest;
mod objects;
mod reuse;
mod snapshot;

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::thread::ThreadId;

use parking_lot::Mutex;

use format::{Commit, Fence, Head, Id, Value};
use manifest::Changes;
pub(crate) use objects::is_bucket_locator;
use objects::{Objects, Upload, Version};
use reuse::Kept;
use snapshot::{accept_page, load_page, page_name, BucketSnapshot, PageCache, WindowCache};

use crate::error::StoreError;
use crate::store::kv::{refuse_if_read_only, KvBulk, KvEngine, KvSnapshot, KvWriter, WriteBatch};

/// Values up to this long live in their manifest page; longer ones in packs.
const INLINE_MAX: usize = 2 << 10;
/// A pack is uploaded once it holds this much (a longer value is a pack of its own).
const PACK_BYTES: usize = 32 << 20;

/// Commits (of as many threads) whose packs are kept for their next try after losing the race
/// for the head: each holds its values in memory until then.
const KEPT_TRIES: usize = 8;

/// Packs uploaded at once by one commit.
const UPLOADS: usize = 4;
/// Parsed manifest pages kept in memory per open database.
const CACHE_BYTES: usize = 64 << 20;
/// Windows of packs kept in memory per open database (small values read together).
const WINDOW_CACHE_BYTES: usize = 64 << 20;

/// A commit as read: the head that named it (with the version of the `head` object, for the
/// conditional write over it), or none yet.
struct State {
    head: Option<(Head, Version)>,
    commit: Arc<Commit>,
}

impl State {
    fn empty() -> State {
        State { head: None, commit: Arc::new(Commit { parent: None, sequence: 0, time_us: 0, pages: Vec::new() }) }
    }
}

/// The engine of a bucket database.
pub(crate) struct BucketEngine {
    objects: Arc<Objects>,
    cache: Arc<PageCache>,
    windows: Arc<WindowCache>,
    read_only: bool,
    /// The state a writer of this process based its commit on, and its thread: that thread's
    /// snapshots read it, so what the transaction reads is what its commit is conditioned on.
    pinned: Mutex<Option<(ThreadId, Arc<State>)>>,
    /// The last state read, so an unchanged head costs no read of its commit record.
    latest: Mutex<Option<Arc<State>>>,
    /// The packs of commits that lost the race for the head, for their next tries (`reuse.rs`):
    /// one per writing thread, the newest [`KEPT_TRIES`].
    kept: Mutex<VecDeque<Kept>>,
}

impl BucketEngine {
    /// Open the database at `locator` (creating its marker when `create`). A read-write open
    /// first checks that the server honours conditional writes, without which two writers could
    /// both believe they committed.
    pub fn open(locator: &str, create: bool, read_only: bool) -> Result<BucketEngine, StoreError> {
        let objects = Arc::new(Objects::connect(locator)?);
        let engine = BucketEngine {
            objects,
            cache: Arc::new(PageCache::new(CACHE_BYTES)),
            windows: Arc::new(WindowCache::new(WINDOW_CACHE_BYTES)),
            read_only,
            pinned: Mutex::new(None),
            latest: Mutex::new(None),
            kept: Mutex::new(VecDeque::new()),
        };
        let o = &engine.objects;
        let refuse = |reason: String| StoreError::Open { location: locator.to_owned(), reason, source: None };
        let marker = match o.block(o.get("format"))? {
            Some(marker) => marker,
            None if create && !read_only => {
                engine.probe()?;
                let marker = format::marker(Id::fresh());
                // Of two creators, one writes the marker; the other reads it.
                o.block(o.put_if("format", marker.clone(), None))?;
                o.block(o.get("format"))?.ok_or_else(|| refuse("its marker vanished after it was written".into()))?
            }
            None => return Err(refuse("no zarrdb database there (no __zarrdb/format)".into())),
        };
        let found = format::parse_marker(&marker).map_err(|why| refuse(format!("its marker is damaged: {why}")))?;
        if found != format::FORMAT {
            return Err(refuse(format!(
                "its format is {found}; this zarrdb reads and writes format {}",
                format::FORMAT
            )));
        }
        if !read_only && !create {
            engine.probe()?;
        }
        Ok(engine)
    }

    /// Check that the server refuses a create over an existing object and a write conditioned on
    /// a version that is not there; refuse to write otherwise.
    fn probe(&self) -> Result<(), StoreError> {
        let o = &self.objects;
        let name = format!("probe/{}", Id::fresh().hex());
        let honoured = o.block(async {
            let Some(first) = o.put_if(&name, b"1".to_vec(), None).await? else { return Ok(false) };
            let second = o.put_if(&name, b"2".to_vec(), None).await?;
            let stale = Version { e_tag: Some("\"zarrdb-probe-no-such-version\"".into()), version: None };
            let wrong = o.put_if(&name, b"3".to_vec(), Some(stale)).await?;
            let right = o.put_if(&name, b"4".to_vec(), Some(first)).await?;
            let kept = o.get(&name).await?;
            o.delete_all(std::slice::from_ref(&name)).await?;
            Ok::<_, StoreError>(second.is_none() && wrong.is_none() && right.is_some() && kept.as_deref() == Some(b"4"))
        })?;
        match honoured {
            true => Ok(()),
            false => Err(StoreError::Open {
                location: o.locator().to_owned(),
                reason: "the server does not honour conditional writes (If-None-Match, If-Match), so two writers \
                         could both commit and one would be lost; open it read-only"
                    .into(),
                source: None,
            }),
        }
    }

    /// The latest commit, read from the bucket.
    fn fetch_latest(&self) -> Result<Arc<State>, StoreError> {
        let o = &self.objects;
        let Some((bytes, version)) = o.block(o.get_versioned("head"))? else {
            return Ok(Arc::new(State::empty()));
        };
        let head = Head::parse(&bytes).map_err(|what| self.damaged("head", what))?;
        let latest = self.latest.lock().clone();
        if let Some(latest) = latest {
            if latest.head.as_ref().map(|(h, _)| *h) == Some(head) {
                let state = Arc::new(State { head: Some((head, version)), commit: latest.commit.clone() });
                *self.latest.lock() = Some(state.clone());
                return Ok(state);
            }
        }
        let commit = Arc::new(self.read_commit(head.commit)?);
        if commit.sequence != head.sequence {
            return Err(self.damaged("head", "a head whose number differs from its commit's"));
        }
        let state = Arc::new(State { head: Some((head, version)), commit });
        *self.latest.lock() = Some(state.clone());
        Ok(state)
    }

    fn read_commit(&self, id: Id) -> Result<Commit, StoreError> {
        let o = &self.objects;
        let name = format!("commits/{}", id.hex());
        let bytes = o.block(o.get(&name))?.ok_or_else(|| self.damaged(&name, "a commit the head names is missing"))?;
        Commit::parse(&bytes).map_err(|what| self.damaged(&name, what))
    }

    fn damaged(&self, name: &str, what: &'static str) -> StoreError {
        StoreError::Damaged {
            backend: self.objects.backend(),
            operation: "read",
            key: format!("{}/{name}", self.objects.locator()),
            what,
        }
    }

    fn snapshot_of(&self, state: &State) -> BucketSnapshot {
        BucketSnapshot {
            objects: self.objects.clone(),
            cache: self.cache.clone(),
            windows: self.windows.clone(),
            commit: state.commit.clone(),
        }
    }

    /// Commit `puts` and `erased` over `base`: upload the new pages and the record, then move the
    /// head if it still names `base`.
    fn commit_over(
        &self,
        base: &State,
        erased: &[String],
        puts: &BTreeMap<String, Option<Value>>,
    ) -> Result<(), StoreError> {
        let o = &self.objects;
        let changes = Changes { erased, puts };
        let pages = &base.commit.pages;
        // Every page the commit rewrites, read at once.
        let wanted: Vec<&format::PageRef> = manifest::touched(pages, &changes)
            .into_iter()
            .map(|i| &pages[i])
            .filter(|page| !self.cache.contains(&page.id))
            .collect();
        let fetched = o.block(futures::future::try_join_all(wanted.iter().map(|page| o.get_named(page_name(page)))))?;
        for (page, bytes) in wanted.into_iter().zip(fetched) {
            accept_page(o, &self.cache, page, bytes)?;
        }
        let (new_pages, written) = manifest::apply(pages, &changes, &mut |page| load_page(o, &self.cache, page))?;
        let id = Id::fresh();
        let parent = base.head.as_ref().map(|(head, _)| head.commit);
        let commit = Commit { parent, sequence: base.commit.sequence + 1, time_us: now_us(), pages: new_pages };
        let mut uploads: Vec<(String, Vec<u8>)> =
            written.into_iter().map(|(id, bytes)| (format!("pages/{}", id.hex()), bytes)).collect();
        uploads.push((format!("commits/{}", id.hex()), commit.to_bytes()));
        o.block(o.put_all(uploads))?;
        let head = Head { commit: id, sequence: commit.sequence };
        let over = base.head.as_ref().map(|(_, version)| version.clone());
        match o.block(o.put_if("head", head.to_bytes(), over)) {
            Ok(Some(version)) => {
                *self.latest.lock() = Some(Arc::new(State { head: Some((head, version)), commit: Arc::new(commit) }));
                Ok(())
            }
            Ok(None) => Err(StoreError::HeadMoved { database: o.locator().to_owned() }),
            // The answer was lost: the head says whether the write applied.
            Err(failed) => match self.holds(head, base) {
                Ok(true) => Ok(()),
                _ => Err(failed),
            },
        }
    }

    /// Whether `head` is the latest commit or an ancestor of it newer than `base`.
    fn holds(&self, head: Head, base: &State) -> Result<bool, StoreError> {
        let latest = self.fetch_latest()?;
        let Some((mut at, _)) = latest.head else { return Ok(false) };
        let floor = base.commit.sequence;
        while at.sequence > floor {
            if at == head {
                return Ok(true);
            }
            let commit = self.read_commit(at.commit)?;
            let Some(parent) = commit.parent else { return Ok(false) };
            at = Head { commit: parent, sequence: commit.sequence - 1 };
        }
        Ok(false)
    }

    /// Put each value of `values` inline or into `packs`, uploading a pack once it is full.
    fn place(&self, packer: &mut Packer, key: String, value: Vec<u8>) -> Result<(), StoreError> {
        if value.len() <= INLINE_MAX {
            packer.puts.insert(key, Some(Value::Inline(value.into())));
            return Ok(());
        }
        let crc = crc32c::crc32c(&value);
        if let Some(entry) = packer.reused.as_ref().and_then(|kept| kept.find(&value, crc)) {
            packer.puts.insert(key, Some(entry));
            return Ok(());
        }
        let (offset, len) = (packer.bytes.len() as u64, value.len() as u64);
        packer.values.push((offset, len, crc));
        let entry = Value::Packed { pack: packer.id, offset, len, crc };
        packer.bytes.extend_from_slice(&value);
        packer.puts.insert(key, Some(entry));
        if packer.bytes.len() >= PACK_BYTES {
            self.flush(packer)?;
        }
        Ok(())
    }

    /// Start the upload of the pack being gathered, waiting first for the oldest upload when
    /// [`UPLOADS`] are in flight (so memory holds at most that many packs).
    fn flush(&self, packer: &mut Packer) -> Result<(), StoreError> {
        if packer.bytes.is_empty() {
            return Ok(());
        }
        while packer.uploads.len() >= UPLOADS {
            let oldest = packer.uploads.pop_front().expect("uploads are in flight");
            self.objects.join(oldest)?;
        }
        let first = *packer.first_upload.get_or_insert_with(std::time::Instant::now);
        let bytes = bytes::Bytes::from(std::mem::take(&mut packer.bytes));
        let values = std::mem::take(&mut packer.values);
        if packer.keep {
            let kept = packer.kept.get_or_insert_with(|| Kept::new(std::thread::current().id(), first));
            kept.add_pack(packer.id, bytes.clone(), values);
        }
        let name = format!("packs/{}", packer.id.hex());
        packer.id = Id::fresh();
        packer.uploads.push_back(self.objects.upload(name, bytes));
        Ok(())
    }

    /// Upload what is gathered and wait until every pack is acknowledged. However old the
    /// uploads, a collection cannot have deleted them under a commit that lands: it moves the
    /// head before it deletes anything, so a commit based on an older head fails its conditional
    /// write (`collect.rs`).
    fn finish_packs(&self, packer: &mut Packer) -> Result<(), StoreError> {
        self.flush(packer)?;
        while let Some(upload) = packer.uploads.pop_front() {
            self.objects.join(upload)?;
        }
        Ok(())
    }

    /// Whether a collection moved the head past `sequence` (and so may have deleted what a
    /// commit based on it uploaded): read after the head the caller's commit is based on, so a
    /// fence that head stands on is seen.
    fn fenced_since(&self, sequence: u64) -> Result<bool, StoreError> {
        let o = &self.objects;
        let Some(bytes) = o.block(o.get("fence"))? else { return Ok(false) };
        let fence = Fence::parse(&bytes).map_err(|what| self.damaged("fence", what))?;
        Ok(fence.sequence > sequence)
    }

    /// Commit `batch` over `base`, naming the packs this thread's last try uploaded where they
    /// hold its values; keep its own packs for the next try when it loses the race.
    fn commit_batch_over(&self, base: &State, batch: WriteBatch) -> Result<(), StoreError> {
        refuse_if_read_only(self.read_only, "commit")?;
        let mut packer = Packer::new();
        packer.keep = true;
        packer.reused = {
            let mut kept = self.kept.lock();
            let ours = kept.iter().position(|kept| kept.thread == std::thread::current().id());
            ours.and_then(|at| kept.remove(at))
        };
        // Packs uploaded before a collection's fence may be gone: upload the values again.
        if let Some(reused) = &packer.reused {
            if self.fenced_since(reused.based_on)? {
                packer.reused = None;
            }
        }
        for (key, value) in batch.puts {
            match value {
                Some(value) => self.place(&mut packer, key, value)?,
                None => drop(packer.puts.insert(key, None)),
            }
        }
        self.finish_packs(&mut packer)?;
        let committed = self.commit_over(base, &batch.erased_prefixes, &packer.puts);
        if matches!(committed, Err(StoreError::HeadMoved { .. })) {
            let kept = match (packer.kept, packer.reused) {
                (Some(mut ours), Some(earlier)) => Some({
                    ours.absorb(earlier);
                    ours
                }),
                (ours, earlier) => ours.or(earlier),
            };
            if let Some(mut ours) = kept {
                ours.based_on = ours.based_on.min(base.commit.sequence);
                let mut kept = self.kept.lock();
                if kept.len() >= KEPT_TRIES {
                    kept.pop_front();
                }
                kept.push_back(ours);
            }
        }
        committed
    }

    fn unpin(&self) {
        let mut pinned = self.pinned.lock();
        if pinned.as_ref().is_some_and(|(thread, _)| *thread == std::thread::current().id()) {
            *pinned = None;
        }
    }

    /// The latest state, pinned for this thread's snapshots until its commit.
    fn pin(&self) -> Result<Arc<State>, StoreError> {
        let state = self.fetch_latest()?;
        *self.pinned.lock() = Some((std::thread::current().id(), state.clone()));
        Ok(state)
    }
}

fn now_us() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    now.map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// Values being gathered into a pack, and where each went.
struct Packer {
    id: Id,
    bytes: Vec<u8>,
    puts: BTreeMap<String, Option<Value>>,
    /// When the first pack was handed to the uploads: a commit refuses once this is
    /// [`GRACE`]`/ 2` old, since a collection may delete what it uploaded after [`GRACE`].
    first_upload: Option<std::time::Instant>,
    /// Packs being uploaded, oldest first. Dropped unfinished (an aborted commit), they run to
    /// their end and leave objects no commit names.
    uploads: VecDeque<Upload>,
    /// The values of the pack being gathered: (offset, length, CRC-32C).
    values: Vec<(u64, u64, u32)>,
    /// Whether to keep the packs for another try (a commit; an import is not tried again).
    keep: bool,
    /// This commit's packs, kept when `keep`.
    kept: Option<Kept>,
    /// The packs of the try before, whose values this one names instead of uploading them.
    reused: Option<Kept>,
}

impl Packer {
    fn new() -> Packer {
        Packer {
            id: Id::fresh(),
            bytes: Vec::new(),
            puts: BTreeMap::new(),
            first_upload: None,
            uploads: VecDeque::new(),
            values: Vec::new(),
            keep: false,
            kept: None,
            reused: None,
        }
    }
}

impl KvEngine for BucketEngine {
    fn snapshot(&self) -> Result<Arc<dyn KvSnapshot>, StoreError> {
        let pinned = self.pinned.lock().clone();
        let state = match pinned {
            Some((thread, state)) if thread == std::thread::current().id() => state,
            _ => self.fetch_latest()?,
        };
        Ok(Arc::new(self.snapshot_of(&state)))
    }

    /// A commit without a writer (the format record `db/` writes at open) read nothing, so a
    /// lost race only means committing it again over the winner's head (two processes creating
    /// one database write the same record).
    fn commit(&self, batch: WriteBatch, _durable: bool) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut tries = 0;
        loop {
            let base = self.fetch_latest()?;
            match self.commit_batch_over(&base, batch.clone()) {
                Err(StoreError::HeadMoved { .. }) if tries < 64 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(tries));
                }
                other => return other,
            }
        }
    }

    /// Every commit waits for the server: writers gain by sharing one.
    fn commit_syncs(&self, _durable: bool) -> bool {
        true
    }

    fn stable_snapshots(&self) -> bool {
        true
    }

    fn shared_between_processes(&self) -> bool {
        true
    }

    fn commits_race(&self) -> bool {
        true
    }

    fn inline_max(&self) -> Option<usize> {
        Some(INLINE_MAX)
    }

    fn lock_writer(self: Arc<Self>) -> Result<Option<Box<dyn KvWriter>>, StoreError> {
        refuse_if_read_only(self.read_only, "begin a write")?;
        let base = self.pin()?;
        Ok(Some(Box::new(BucketWriter { engine: self, base })))
    }

    /// Delete the objects no commit a reader may still hold reaches, older than `older_than`.
    fn compact(&self, database: &str, older_than: std::time::Duration) -> Result<(), crate::error::CompactError> {
        let failed = |source| crate::error::CompactError::Engine { database: database.to_owned(), source };
        refuse_if_read_only(self.read_only, "compact").map_err(failed)?;
        self.collect(older_than).map(drop).map_err(failed)
    }

    fn bulk(self: Arc<Self>, _expected_bytes: u64) -> Result<Box<dyn KvBulk>, StoreError> {
        refuse_if_read_only(self.read_only, "begin a write")?;
        let base = self.pin()?;
        Ok(Box::new(BucketBulk { engine: self, base, packer: Packer::new() }))
    }
}

/// A commit conditioned on the head its transaction read.
struct BucketWriter {
    engine: Arc<BucketEngine>,
    base: Arc<State>,
}

impl KvWriter for BucketWriter {
    fn commit(self: Box<Self>, batch: WriteBatch, _durable: bool) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        self.engine.commit_batch_over(&self.base, batch)
    }
}

impl Drop for BucketWriter {
    fn drop(&mut self) {
        self.engine.unpin();
    }
}

/// An import: values go into packs as they come (uploaded, unreachable until the head moves).
struct BucketBulk {
    engine: Arc<BucketEngine>,
    base: Arc<State>,
    packer: Packer,
}

impl KvBulk for BucketBulk {
    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), StoreError> {
        for (key, value) in values {
            self.engine.place(&mut self.packer, key, value)?;
        }
        Ok(())
    }

    fn erase(&mut self, key: &str) -> Result<(), StoreError> {
        self.packer.puts.insert(key.to_owned(), None);
        Ok(())
    }

    fn commit(mut self: Box<Self>, _durable: bool) -> Result<(), StoreError> {
        self.engine.finish_packs(&mut self.packer)?;
        let puts = std::mem::take(&mut self.packer.puts);
        self.engine.commit_over(&self.base, &[], &puts)
    }
}

impl Drop for BucketBulk {
    fn drop(&mut self) {
        self.engine.unpin();
    }
}
