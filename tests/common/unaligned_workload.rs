//! The concurrent unaligned-writes workload (DESIGN §6): writers share an array whose rows are
//! owned in turn (row `r` belongs to writer `r % writers`), so every chunk and shard is shared by
//! all of them, and each writer writes random unaligned runs of its own rows. Afterwards every
//! element must hold the last value its owner wrote there; a lost read-modify-write shows up as an
//! element still holding an older value (or the fill value).

use super::splitmix::SplitMix;
use zarrdb::metadata::NamedConfig;
use zarrdb::{Array, ArrayMetadata, DataType};

pub const ROWS: u64 = 64;
pub const COLS: u64 = 200;

/// Array metadata: plain chunks 16 x 24 (unaligned with the runs and with the array's edge), or
/// shards of 32 x 48 holding 8 x 12 inner chunks.
pub fn metadata(sharded: bool) -> ArrayMetadata {
    let chunk = if sharded { vec![32, 48] } else { vec![16, 24] };
    let mut meta = ArrayMetadata::new(DataType::UInt32, vec![ROWS, COLS], chunk);
    if sharded {
        let codecs = serde_json::json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [8, 12],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]);
        meta.codecs = NamedConfig::parse_list(&codecs).expect("a valid chain");
    }
    meta
}

/// The value writer `writer` writes at step `step`: distinct for every write, never the fill value.
fn value(writer: u64, step: u64, col: u64) -> u32 {
    ((writer << 24) | (step << 8) | (col % 256)) as u32 + 1
}

/// Writer `writer` of `writers` does `steps` writes of one run each into `array`, and returns
/// what it last wrote to each element it owns (`None` where it never wrote), C order.
pub fn write(array: &Array, writer: u64, writers: u64, steps: u64, seed: u64) -> Vec<Option<u32>> {
    let mut rng = SplitMix::new(seed, writer);
    let mut last = vec![None; (ROWS * COLS) as usize];
    let own_rows = ROWS / writers;
    for step in 0..steps {
        let row = rng.range(0, own_rows - 1) * writers + writer;
        let start = rng.range(0, COLS - 1);
        let len = rng.range(1, (COLS - start).min(60));
        let values: Vec<u32> = (start..start + len).map(|c| value(writer, step, c)).collect();
        array.write_region(&[row, start], &[1, len], &values).unwrap_or_else(|e| panic!("writer {writer}: {e}"));
        for (c, v) in (start..start + len).zip(&values) {
            last[(row * COLS + c) as usize] = Some(*v);
        }
    }
    last
}

/// `writers` threads, started together, each run [`write`] on the shared `array`; their records,
/// in writer order.
pub fn write_concurrently(array: &Array, writers: u64, steps: u64, seed: u64) -> Vec<Vec<Option<u32>>> {
    let start = std::sync::Barrier::new(writers as usize);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                let start = &start;
                s.spawn(move || {
                    start.wait();
                    write(array, w, writers, steps, seed)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Compare the array with the writers' records: the elements that differ, as
/// `(row, col, expected, found)`; empty when no update was lost.
pub fn lost_updates(array: &Array, records: &[Vec<Option<u32>>]) -> Vec<(u64, u64, u32, u32)> {
    let found = array.read_all::<u32>().expect("the array reads back");
    let mut lost = Vec::new();
    for (i, &got) in found.iter().enumerate() {
        let expected = records.iter().find_map(|r| r[i]).unwrap_or(0);
        if got != expected {
            lost.push((i as u64 / COLS, i as u64 % COLS, expected, got));
        }
    }
    lost
}
