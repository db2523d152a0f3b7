//! The copy loop shared by import, export and copy: values are read in windows, in parallel, and
//! each window is handed to the sink while the next is read, so memory holds two windows (each
//! at most [`WINDOW_BYTES`] or one value larger than that), never the dataset.

use super::error::TransferError;
use super::options::Progress;
use super::sink::Sink;
use super::source::Source;
use crate::error::Error;

/// A window closes when its values reach this many bytes...
const WINDOW_BYTES: u64 = 32 << 20;
/// ...or this many values (small chunks: enough to keep every core busy per window).
const WINDOW_VALUES: usize = 1024;

/// One value to copy.
pub(crate) struct Item {
    /// Key in the source.
    pub from: String,
    /// Key in the destination.
    pub to: String,
    /// Size when the source was listed.
    pub size: u64,
}

/// Copy `items` from `source` into `sink`, then write `documents` (metadata, last, so a plain
/// store that fails midway never shows metadata without its chunks), then finish the sink.
/// Returns (values, bytes) written.
pub(crate) fn run(
    source: &dyn Source,
    items: &[Item],
    documents: Vec<(String, Vec<u8>)>,
    mut sink: Box<dyn Sink + '_>,
    progress: Option<&(dyn Fn(Progress) + Send + Sync)>,
) -> Result<(u64, u64), Error> {
    let mut state = Progress {
        values_done: 0,
        values_total: (items.len() + documents.len()) as u64,
        bytes_done: 0,
        bytes_total: listed_bytes(items, &documents),
    };
    // While the sink writes one window, the next is read: network sources (object storage) and
    // sinks that write files overlap, at the cost of holding two windows.
    std::thread::scope(|scope| -> Result<(), Error> {
        let mut pending = (!items.is_empty()).then(|| {
            let end = window_end(items, 0);
            (end, read_window(source, &items[..end]))
        });
        while let Some((end, values)) = pending.take() {
            let values = values?;
            let next = (end < items.len()).then(|| {
                let next_end = window_end(items, end);
                (next_end, scope.spawn(move || read_window(source, &items[end..next_end])))
            });
            state.values_done += values.len() as u64;
            state.bytes_done += values.iter().map(|v| v.1.len() as u64).sum::<u64>();
            sink.put(values)?;
            if let Some(report) = progress {
                report(state);
            }
            pending = next.map(|(next_end, reading)| {
                (next_end, reading.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            });
        }
        Ok(())
    })?;
    state.values_done += documents.len() as u64;
    state.bytes_done += documents.iter().map(|d| d.1.len() as u64).sum::<u64>();
    if !documents.is_empty() {
        sink.put(documents)?;
    }
    sink.finish()?;
    if let Some(report) = progress {
        report(state);
    }
    Ok((state.values_done, state.bytes_done))
}

/// The bytes of `items` as listed and of `documents`: sizes listed by a remote store are what it
/// says, so the sum saturates rather than overflows.
pub(crate) fn listed_bytes(items: &[Item], documents: &[(String, Vec<u8>)]) -> u64 {
    let sizes = items.iter().map(|i| i.size).chain(documents.iter().map(|d| d.1.len() as u64));
    sizes.fold(0u64, u64::saturating_add)
}

/// How many of `n` values each thread takes when a batch is split evenly over rayon's threads
/// (one `get_many` or `set_many` each).
pub(crate) fn share(n: usize) -> usize {
    n.div_ceil(rayon::current_num_threads()).max(1)
}

/// The values of a window's items, under their destination keys, each checked against the size
/// it was listed with.
fn read_window(source: &dyn Source, window: &[Item]) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let keys: Vec<&str> = window.iter().map(|item| item.from.as_str()).collect();
    source
        .read_many(&keys)?
        .into_iter()
        .zip(window)
        .map(|(value, item)| {
            if value.len() as u64 != item.size {
                return Err(TransferError::SourceChanged {
                    source_path: source.describe(),
                    key: item.from.clone(),
                    expected: item.size,
                    found: value.len() as u64,
                }
                .into());
            }
            Ok((item.to.clone(), value))
        })
        .collect()
}

/// The end of the window that starts at `start`: at least one value, then up to the limits.
fn window_end(items: &[Item], start: usize) -> usize {
    let mut bytes = 0u64;
    let mut end = start;
    while end < items.len()
        && end - start < WINDOW_VALUES
        && (end == start || bytes.saturating_add(items[end].size) <= WINDOW_BYTES)
    {
        bytes = bytes.saturating_add(items[end].size);
        end += 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::{window_end, Item, WINDOW_BYTES, WINDOW_VALUES};

    fn items(sizes: &[u64]) -> Vec<Item> {
        sizes.iter().map(|&size| Item { from: String::new(), to: String::new(), size }).collect()
    }

    #[test]
    fn windows_respect_both_limits_and_always_advance() {
        assert_eq!(window_end(&items(&[WINDOW_BYTES * 3, 1]), 0), 1, "a huge value is a window of its own");
        assert_eq!(window_end(&items(&[WINDOW_BYTES / 2, WINDOW_BYTES / 2, 1]), 0), 2);
        assert_eq!(window_end(&items(&vec![1; WINDOW_VALUES + 5]), 0), WINDOW_VALUES);
        assert_eq!(window_end(&items(&[1, 2, 3]), 1), 3);
    }
}
