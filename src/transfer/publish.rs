//! Publishing: a node of a database, read from one snapshot, to object storage, where nothing
//! makes several keys change at once. The order of the writes stands in for a commit: every
//! chunk, then every metadata document below the root, then the root's `zarr.json` last, written
//! only if absent (an implicit group gets an empty group document for it). Readers find a
//! hierarchy through its root document, so until that one request succeeds they find none, and
//! after it a complete one.
//!
//! Two exports to one place must not interleave, so an export first claims the place: it creates
//! `__zarrdb/export` there with a conditional request (`If-None-Match: *`) that the server lets
//! exactly one of two racing writers win. The claim names its process, host and start; the export
//! removes it at its end, whether it succeeded or failed. An export that died leaves it behind,
//! and the next export is refused until told to overwrite.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::error::TransferError;
use super::export::is_document;
use super::options::{ExportOptions, ExportReport};
use super::run::{run, Item};
use super::sink::StoreSink;
use super::source::Source;
use crate::db::Database;
use crate::error::Error;
use crate::metadata::{GroupMetadata, METADATA_KEY};
use crate::store::{ListableStore, ObjectStore, ReadableStore, WritableStore};

/// The key of an export's claim, under the destination's prefix (in the engine's reserved
/// namespace, which imports leave out and Zarr readers find no node in).
const CLAIM_KEY: &str = "__zarrdb/export";

/// The most of a claim found at the destination that an error message repeats: it is whatever
/// the bucket holds.
const CLAIM_SHOWN: usize = 200;

/// The largest claim read; ours are about 100 bytes.
const CLAIM_MAX: u64 = 4096;

impl Database {
    /// Export the node `options.node` (default the root) with everything below it to object
    /// storage, from one snapshot, as [`Database::export`] does to a folder: the node becomes the
    /// root there, consolidated metadata included unless turned off. The destination must hold
    /// nothing unless [`ExportOptions::overwrite`] is given; two exports racing for one
    /// destination: one wins, the other fails with [`TransferError::DestinationBusy`].
    ///
    /// Object storage has no transactions: what a reader sees while this runs, and what a failure
    /// leaves, is in docs/format.md ("Object storage"). In short, no root `zarr.json` until the
    /// end, so an interrupted export leaves no hierarchy a reader would open.
    ///
    /// ```no_run
    /// // AWS_ENDPOINT, AWS_ALLOW_HTTP, AWS_ACCESS_KEY_ID, ... in the environment
    /// use zarrdb::store::ObjectStore;
    /// use zarrdb::{Database, ExportOptions};
    /// let db = Database::open("run1.zarrdb")?;
    /// let bucket = ObjectStore::open("s3://datasets/run1")?;
    /// let report = db.publish(&bucket, &ExportOptions::default())?;
    /// println!("{} values, {} bytes", report.values, report.bytes);
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn publish(&self, destination: &ObjectStore, options: &ExportOptions) -> Result<ExportReport, Error> {
        let planned = self.plan_export(options)?;
        let claim = Claim::take(destination, options.overwrite)?;
        let published = (|| {
            clear(destination, options.overwrite)?;
            // Stored documents are read now (they are small) and written after every chunk.
            let (documents, chunks): (Vec<Item>, Vec<Item>) =
                planned.items.into_iter().partition(|item| is_document(&item.to));
            let keys: Vec<&str> = documents.iter().map(|item| item.from.as_str()).collect();
            let stored = planned.source.read_many(&keys)?;
            let mut documents: Vec<(String, Vec<u8>)> =
                documents.into_iter().map(|item| item.to).zip(stored).chain(planned.documents).collect();
            // The root document is the commit point. An implicit group (no document of its own)
            // gets an empty group document: readers (zarr-python) find a hierarchy only through one.
            let root = match documents.iter().position(|(key, _)| key == METADATA_KEY) {
                Some(at) => documents.remove(at).1,
                None => GroupMetadata::default().to_json_bytes(),
            };
            let sink = Box::new(StoreSink(destination));
            let (values, bytes) = run(&planned.source, &chunks, documents, sink, options.progress.as_deref())?;
            claim.check()?;
            if !destination.create(METADATA_KEY, &root)? {
                return Err(Error::from(TransferError::DestinationTaken {
                    destination: destination.locator().to_owned(),
                    reason: "a root zarr.json appeared there while this export ran",
                }));
            }
            Ok(ExportReport {
                values: values + 1,
                bytes: bytes + root.len() as u64,
                consolidated: planned.consolidated,
            })
        })();
        let released = claim.release();
        let report = published?;
        // Published, yet the claim is still there: the next export would be refused.
        released.map_err(|source| TransferError::ClaimLeft {
            destination: destination.locator().to_owned(),
            source: Box::new(source),
        })?;
        Ok(report)
    }
}

/// Refuse a destination that holds anything but claims, or with `overwrite` empty it: the root
/// document first, so that readers stop finding the old hierarchy before any of it goes.
fn clear(destination: &ObjectStore, overwrite: bool) -> Result<(), Error> {
    let found: Vec<String> = destination.list_prefix("")?.into_iter().filter(|key| key != CLAIM_KEY).collect();
    if found.is_empty() {
        return Ok(());
    }
    if !overwrite {
        return Err(TransferError::DestinationExists { path: destination.locator().to_owned() }.into());
    }
    destination.erase(METADATA_KEY)?;
    let rest: Vec<&str> = found.iter().map(String::as_str).filter(|key| *key != METADATA_KEY).collect();
    Ok(destination.erase_values(&rest)?)
}

/// This export's claim on its destination.
struct Claim<'a> {
    store: &'a ObjectStore,
    /// The claim's bytes as written: compared with what is there before the root is written and
    /// before the claim is removed, so an export never removes another's claim.
    written: Vec<u8>,
}

impl<'a> Claim<'a> {
    /// Create the claim (with `overwrite`, replace one found there).
    fn take(store: &'a ObjectStore, overwrite: bool) -> Result<Claim<'a>, Error> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let written = serde_json::to_vec(&json!({
            "process": std::process::id(),
            "host": host_name(),
            "started_unix_seconds": now.as_secs(),
            // Tells two claims of one process apart.
            "nonce": now.subsec_nanos() ^ nonce(),
        }))
        .expect("a JSON document of plain values");
        if !store.create(CLAIM_KEY, &written)? {
            if !overwrite {
                let holder = match read_claim(store)? {
                    Found::Absent => "whose claim is gone now".to_owned(),
                    Found::Claim(found) => describe(&found),
                    Found::TooLarge(size) => format!("an object of {size} bytes in the claim's place"),
                };
                return Err(TransferError::DestinationBusy { destination: store.locator().to_owned(), holder }.into());
            }
            store.set(CLAIM_KEY, &written)?;
        }
        Ok(Claim { store, written })
    }

    /// Fail if the claim is no longer this export's.
    fn check(&self) -> Result<(), Error> {
        if self.is_there()? {
            return Ok(());
        }
        Err(TransferError::DestinationTaken {
            destination: self.store.locator().to_owned(),
            reason: "its claim was replaced or removed (an export with overwrite ran meanwhile)",
        }
        .into())
    }

    /// Remove the claim if it is still this export's.
    fn release(self) -> Result<(), Error> {
        if self.is_there()? {
            self.store.erase(CLAIM_KEY)?;
        }
        Ok(())
    }

    /// Whether the claim at the destination is this one.
    fn is_there(&self) -> Result<bool, Error> {
        Ok(matches!(read_claim(self.store)?, Found::Claim(found) if found == self.written))
    }
}

/// What is in a claim's place.
enum Found {
    Absent,
    Claim(Vec<u8>),
    /// An object larger than any claim, left unread (its size).
    TooLarge(u64),
}

/// The claim at a destination, read only when it is small: the place holds whatever the bucket
/// holds.
fn read_claim(store: &ObjectStore) -> Result<Found, Error> {
    let Some(size) = store.size(CLAIM_KEY)? else { return Ok(Found::Absent) };
    if size > CLAIM_MAX {
        return Ok(Found::TooLarge(size));
    }
    Ok(store.get(CLAIM_KEY)?.map_or(Found::Absent, Found::Claim))
}

/// A claim found at a destination, in words: its fields when it is one of ours, else the start
/// of its bytes.
fn describe(found: &[u8]) -> String {
    if let Ok(Value::Object(claim)) = serde_json::from_slice::<Value>(found) {
        let field = |name: &str| claim.get(name).map(Value::to_string).unwrap_or_else(|| "?".into());
        let started = claim.get("started_unix_seconds").and_then(Value::as_u64);
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let age = started.map(|s| format!(", started {} s ago", now.saturating_sub(s))).unwrap_or_default();
        let text = format!("process {} on host {}{age}", field("process"), field("host"));
        return text.chars().take(CLAIM_SHOWN).collect();
    }
    let text = String::from_utf8_lossy(&found[..found.len().min(CLAIM_SHOWN)]).escape_debug().to_string();
    format!("a claim reading \"{text}\"")
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|name| name.trim().to_owned())
        .unwrap_or_else(|_| "unknown".to_owned())
}

/// A number that differs between claims taken in one process.
fn nonce() -> u32 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    NEXT.fetch_add(0x9e37_79b9, std::sync::atomic::Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn a_claim_is_described_briefly_whatever_it_holds() {
        let ours = br#"{"process": 7, "host": "lab", "started_unix_seconds": 0, "nonce": 1}"#;
        assert!(describe(ours).starts_with("process 7 on host \"lab\", started "));
        let hostile = vec![b'\n'; 10_000];
        let shown = describe(&hostile);
        assert!(shown.len() < 500 && !shown.contains('\n'), "{shown}");
        assert!(describe(br#"{"host": 5}"#).starts_with("process ? on host 5"));
    }
}
