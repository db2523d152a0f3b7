//! Large region writes streamed into one commit.
//!
//! A region write on a database normally encodes every chunk first and commits them all at the
//! end (`db/data_scope.rs`), so the engine's work (copying each value into its pages, writing
//! them to the file, the fsync) starts only once the last chunk is encoded, and memory holds the
//! whole encoded write. A large write on a store that offers a stream ([`Store::begin_stream`])
//! instead runs encoders on threads of their own while the calling thread hands each encoded
//! chunk to the engine's write transaction as it arrives: encoding and the engine's work
//! overlap, and memory holds a few chunks.
//!
//! The encoders are plain threads, not rayon's pool: the stream holds the database's writer lock,
//! and a pool thread waiting for encoded chunks while holding it could be asked by rayon to run
//! another writer's work that waits for the same lock. For the same reason a write called from a
//! pool thread does not stream.
//!
//! [`Store::begin_stream`]: crate::store::Store::begin_stream

use crate::store::Sealed;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use super::io::Part;
use super::Array;
use crate::codec::region::{self, BoxIn};
use crate::error::Error;
use crate::store::StreamScope;

/// Writes of fewer bytes go through the data scope: streaming holds the writer lock while
/// encoding, which is worth it only when the engine's share of the work is large.
const MIN_STREAM_BYTES: usize = 16 << 20;

/// Encoders claim runs of neighbouring chunks of about this many decoded bytes (at least one
/// chunk) and hand each run to the engine as one batch, so small chunks cost one queue hop and
/// one engine call per run rather than per chunk.
const BATCH_BYTES: u64 = 1 << 20;

/// Batches waiting for the engine, at most this many bytes' worth (at their decoded size), and
/// never more than a few per encoder.
const QUEUE_BYTES: u64 = 64 << 20;
const QUEUE_BATCHES_PER_ENCODER: usize = 4;

/// One encoded chunk for the engine: its key and value, `None` to erase it (it holds only the
/// fill value).
type Encoded = (String, Option<Vec<u8>>);

impl Array {
    /// Write the region through a stream when it is large and the store offers one; `false`
    /// (nothing written) otherwise. The region and buffer have been checked.
    pub(super) fn write_streamed(&self, offset: &[u64], shape: &[u64], bytes: &[u8]) -> Result<bool, Error> {
        if bytes.len() < MIN_STREAM_BYTES || rayon::current_thread_index().is_some() {
            return Ok(false);
        }
        let parts = self.parts(offset, shape);
        // What the engine may have to hold: every chunk touched, whole, at its largest encoding
        // (LMDB sizes its map by it before the transaction; it cannot grow in the middle).
        let expected = (parts.len() as u64).saturating_mul(self.chain().max_encoded_size());
        let Some(mut stream) = self.store.begin_stream(expected, Sealed::new())? else { return Ok(false) };
        // Chunks the region covers in part are read here: the stream excludes other writers, so
        // this is the latest state (stores whose commits race, bucket databases, offer no stream).
        let before = Array { store: stream.before(), ..self.clone() };
        let chunk_bytes = self.chunk_spec().num_bytes().max(1);
        let run = (BATCH_BYTES / chunk_bytes).max(1) as usize;
        let runs = parts.len().div_ceil(run);
        let encoders = rayon::current_num_threads().clamp(1, runs.max(1));
        let queue = (QUEUE_BYTES / (run as u64 * chunk_bytes)).clamp(1, (QUEUE_BATCHES_PER_ENCODER * encoders) as u64);
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let (sender, receiver) = mpsc::sync_channel::<Result<Vec<Encoded>, Error>>(queue as usize);
        std::thread::scope(|scope| {
            for _ in 0..encoders {
                let sender = sender.clone();
                let (before, parts, next, stop) = (&before, &parts, &next, &stop);
                scope.spawn(move || {
                    let mut gathered = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let first = next.fetch_add(1, Ordering::Relaxed) * run;
                        let Some(claimed) = parts.get(first..(first + run).min(parts.len())) else { break };
                        let batch: Result<Vec<Encoded>, Error> = claimed
                            .iter()
                            .map(|part| before.encode_part(part, offset, shape, bytes, &mut gathered))
                            .collect();
                        let failed = batch.is_err();
                        if sender.send(batch).is_err() || failed {
                            break;
                        }
                    }
                });
            }
            drop(sender);
            let fed = feed(stream.as_mut(), &receiver);
            // On an error the encoders stop at their next run; the scope waits for them.
            stop.store(true, Ordering::Relaxed);
            drop(receiver);
            fed
        })?;
        stream.finish()?;
        Ok(true)
    }

    /// The chunk `part` of the region as it will be stored: the region's bytes where it covers
    /// the chunk, the stored chunk (or the fill value) elsewhere; encoded, or `None` when it
    /// holds only the fill value. `gathered` is scratch space reused from chunk to chunk.
    fn encode_part(
        &self,
        part: &Part,
        offset: &[u64],
        shape: &[u64],
        bytes: &[u8],
        gathered: &mut Vec<u8>,
    ) -> Result<Encoded, Error> {
        let chunk_shape = self.chunk_shape();
        let key = self.chunk_key(&part.coords);
        if part.size == chunk_shape {
            let in_region: Vec<u64> = part.lo.iter().zip(offset).map(|(l, o)| l - o).collect();
            let src = BoxIn { shape, start: &in_region };
            region::gather_box_into(bytes, &src, chunk_shape, self.data_type().size(), gathered);
        } else {
            let stored = if self.covers(part) { None } else { self.read_chunk(&part.coords)? };
            *gathered = match stored {
                Some(chunk) => chunk,
                None => self.fill_chunk()?,
            };
            self.patch_chunk(part, offset, shape, bytes, gathered);
        }
        let encoded = if self.chain().stores_as_decoded() {
            // The gathered chunk is the stored value: handed over, not copied (the next chunk
            // gathers into a new buffer, as the copy would have needed one).
            self.encode_unless_fill(&key, std::mem::take(gathered))?
        } else {
            self.encode_unless_fill(&key, &gathered[..])?
        };
        Ok((key, encoded))
    }
}

/// Hand every batch of encoded chunks to the stream as it arrives, until the encoders are done.
fn feed(stream: &mut dyn StreamScope, receiver: &mpsc::Receiver<Result<Vec<Encoded>, Error>>) -> Result<(), Error> {
    for batch in receiver {
        let mut batch = batch?;
        // In key order, as a commit of a buffered batch would insert them: engines append to
        // the last page of their tree instead of splitting pages in the middle.
        batch.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let (puts, erases): (Vec<Encoded>, Vec<Encoded>) = batch.into_iter().partition(|(_, value)| value.is_some());
        for (key, _) in erases {
            stream.erase(&key)?;
        }
        let puts: Vec<(String, Vec<u8>)> = puts.into_iter().filter_map(|(key, value)| Some((key, value?))).collect();
        if !puts.is_empty() {
            stream.put(puts)?;
        }
    }
    Ok(())
}
