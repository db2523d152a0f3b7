//! Sets that return at once and are completed later, without the committing thread ever taking
//! the GIL.
//!
//! zarr-python stores every chunk with its own awaited `set`, many at once. Running each on a
//! worker thread costs a thread hop per set (about 110 µs: a wake-up there and the GIL back),
//! which for 4 KiB chunks is as much as the commit's share. Here the event loop only queues the
//! write with a token; one committer thread per database takes everything queued, commits it as
//! one group (`Store::begin_data_scope`, which also joins region writes of other threads), posts
//! each token's outcome to its loop's [`Completions`] and wakes the loop through a socket the loop
//! watches. The loop never waits for a lock or a disk, the writes queued while a commit runs share
//! the next one, and the committer never waits for the GIL: a first version that called back into
//! Python spent 40 % of its time waiting for it, while its next commit could not start.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use pyo3::prelude::*;

use crate::errors::{to_py, to_py_ref};
use crate::registry::Handle;

/// A token's outcome: `None` committed, or the error (shared by every set of a failed group).
type Outcome = (u64, Option<Arc<zarrdb::Error>>);

/// Where the outcomes of one event loop's submitted sets arrive. The loop watches `fileno()` and
/// calls `drain()` when it is readable.
#[pyclass(frozen, module = "zarrdb._native")]
pub(crate) struct Completions {
    queue: Arc<CompletionQueue>,
    reader: UnixStream,
}

struct CompletionQueue {
    done: Mutex<Vec<Outcome>>,
    /// One byte is written when `done` goes from empty to not empty.
    writer: UnixStream,
}

impl CompletionQueue {
    fn post(&self, outcomes: impl IntoIterator<Item = Outcome>) {
        let mut done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        let was_empty = done.is_empty();
        done.extend(outcomes);
        drop(done);
        if was_empty {
            // Non-blocking: a full socket already holds a wake-up the loop has not read, and
            // the loop takes every outcome on each wake-up.
            let _ = (&self.writer).write(&[1]);
        }
    }
}

#[pymethods]
impl Completions {
    #[new]
    fn new() -> PyResult<Completions> {
        let io = |e: std::io::Error| {
            to_py(zarrdb::error::StoreError::Io {
                operation: "create completion socket",
                key: String::new(),
                source: e,
            })
        };
        let (reader, writer) = UnixStream::pair().map_err(io)?;
        reader.set_nonblocking(true).map_err(io)?;
        writer.set_nonblocking(true).map_err(io)?;
        Ok(Completions { queue: Arc::new(CompletionQueue { done: Mutex::new(Vec::new()), writer }), reader })
    }

    /// The descriptor that becomes readable when outcomes are waiting.
    fn fileno(&self) -> i32 {
        self.reader.as_raw_fd()
    }

    /// The outcomes posted since the last call: `(token, None)` for a committed set,
    /// `(token, exception)` for a failed one.
    fn drain(&self, py: Python<'_>) -> Vec<(u64, Option<Py<PyAny>>)> {
        // Read the wake-ups first: an outcome posted after this is either taken below or
        // announced by a fresh byte.
        let mut bytes = [0u8; 256];
        while matches!((&self.reader).read(&mut bytes), Ok(n) if n > 0) {}
        let outcomes = std::mem::take(&mut *self.queue.done.lock().unwrap_or_else(PoisonError::into_inner));
        outcomes
            .into_iter()
            .map(|(token, error)| (token, error.map(|e| to_py_ref(&e).into_value(py).into_any())))
            .collect()
    }
}

/// One queued set: its database (kept open until the set completes), the write, and where its
/// outcome goes.
struct Item {
    entry: Handle,
    key: String,
    value: Vec<u8>,
    completions: Arc<CompletionQueue>,
    token: u64,
}

#[derive(Default)]
struct Queue {
    items: Vec<Item>,
    /// The process whose committer thread is running, if one is: a forked child inherits the
    /// flag but not the thread.
    thread: Option<u32>,
    /// Set when the database handle goes: the thread ends once the queue is empty.
    closed: bool,
}

/// The queue of one database's submitted sets and its committer thread.
#[derive(Default)]
pub(crate) struct Submitter {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    /// Signalled when an item is queued or the submitter closes.
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Submitter {
    /// Queue `value` for `key` in `entry`'s database; `token`'s outcome is posted to
    /// `completions` once the write is committed or has failed. Starts the committer thread when
    /// none runs in this process.
    pub(crate) fn submit(
        &self,
        entry: Handle,
        key: String,
        value: Vec<u8>,
        completions: &Completions,
        token: u64,
    ) -> Result<(), zarrdb::Error> {
        let mut queue = self.shared.lock();
        let pid = std::process::id();
        if queue.thread != Some(pid) {
            // In a forked child the parent's queued sets belong to the parent's thread and loop.
            queue.items.clear();
            let shared = self.shared.clone();
            std::thread::Builder::new().name("zarrdb-commit".into()).spawn(move || run(&shared)).map_err(|e| {
                zarrdb::error::StoreError::Io { operation: "start the committer thread", key: key.clone(), source: e }
            })?;
            queue.thread = Some(pid);
        }
        queue.items.push(Item { entry, key, value, completions: completions.queue.clone(), token });
        self.shared.wake.notify_one();
        Ok(())
    }
}

impl Drop for Submitter {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.wake.notify_all();
    }
}

/// The committer thread: commit whatever is queued, post the outcomes, repeat until closed.
fn run(shared: &Shared) {
    loop {
        let mut batch = {
            let mut queue = shared.lock();
            while queue.items.is_empty() {
                if queue.closed {
                    return;
                }
                queue = shared.wake.wait(queue).unwrap_or_else(PoisonError::into_inner);
            }
            std::mem::take(&mut queue.items)
        };
        // The sets of one branch commit together; those of another branch (stores of the same
        // database on branches, `Database.on_branch`) in a commit of their own, in the order
        // their first set was queued.
        while !batch.is_empty() {
            let (mut group, rest): (Vec<Item>, Vec<Item>) = {
                let first = batch[0].entry.clone();
                batch.into_iter().partition(|item| item.entry.same_target(&first))
            };
            batch = rest;
            let outcomes = commit(&mut group);
            // The items let go of their database before any outcome is posted: a caller that
            // resumes on its outcome and closes the database must find it closed, not held here.
            let targets = group.into_iter().map(|item| (item.completions, item.token)).collect();
            post(targets, outcomes);
        }
    }
}

/// Commit `batch` (sets of one branch) as one group; an item refused on its own (a bad key)
/// leaves the others in, and a failed commit fails every item without an error of its own.
fn commit(batch: &mut [Item]) -> Vec<Option<Arc<zarrdb::Error>>> {
    let Some(first) = batch.first() else { return Vec::new() };
    let store = match first.entry.store() {
        Ok(store) => store,
        Err(e) => return vec![Some(Arc::new(e)); batch.len()],
    };
    let own_error = |result: Result<(), zarrdb::error::StoreError>| result.err().map(|e| Arc::new(e.into()));
    // Each item's own refusal is kept beside the others; only a failed commit fails the lot.
    let mut outcomes: Vec<Option<Arc<zarrdb::Error>>> = vec![None; batch.len()];
    let failed = zarrdb::store::write_atomically(store.as_ref(), |target| {
        for (item, outcome) in batch.iter_mut().zip(outcomes.iter_mut()) {
            *outcome = own_error(target.set_owned(&item.key, std::mem::take(&mut item.value)));
        }
        Ok(())
    })
    .err();
    if let Some(failed) = failed.map(Arc::new) {
        for outcome in outcomes.iter_mut().filter(|o| o.is_none()) {
            *outcome = Some(failed.clone());
        }
    }
    outcomes
}

/// Post each item's outcome to its loop's completions (`targets`: each item's completions and
/// token), one post per run of items bound for the same loop (usually the whole batch).
fn post(targets: Vec<(Arc<CompletionQueue>, u64)>, outcomes: Vec<Option<Arc<zarrdb::Error>>>) {
    let mut pending: Option<(Arc<CompletionQueue>, Vec<Outcome>)> = None;
    for ((completions, token), outcome) in targets.into_iter().zip(outcomes) {
        match &mut pending {
            Some((queue, run)) if Arc::ptr_eq(queue, &completions) => run.push((token, outcome)),
            _ => {
                if let Some((queue, run)) = pending.replace((completions, vec![(token, outcome)])) {
                    queue.post(run);
                }
            }
        }
    }
    if let Some((queue, run)) = pending {
        queue.post(run);
    }
}
