//! `compact`: the space a database gives back. Four arrays of 4,096² float32 (`big_zstd`'s
//! chunks and codecs, 268 MB in all) are written, two are erased, and the database is compacted:
//! the file's length over the stored chunk bytes after the writes, after the erase and after the
//! compaction, and the compaction's time. The arrays that stay are read back and compared.

use std::time::Instant;

use serde_json::{json, Value};
use zarrdb::error::CompactError;
use zarrdb::{Array, Error, Node};

use super::target::Target;
use super::{data, median, whole_array};
use crate::cli::CliError;

const ARRAYS: usize = 4;
const SIDE: u64 = 4096;

/// The figures of `runs` runs on `target` (databases only; without the compaction's figures on
/// engines that do not compact).
pub(crate) fn run(target: &Target, runs: usize) -> Result<Vec<Value>, CliError> {
    if target.backend().is_none() {
        return Ok(Vec::new());
    }
    let mut meta = whole_array::metadata("big_zstd").expect("big_zstd is defined");
    meta.shape = vec![SIDE, SIDE];
    let cells = SIDE * SIDE;
    let all = data::bench_bytes(cells * ARRAYS as u64);
    let parts: Vec<&[u8]> = all.chunks(cells as usize * 4).collect();
    let ratio = |file: u64, stored: u64| (file as f64 / stored.max(1) as f64 * 100.0).round() / 100.0;
    let (mut written, mut erased, mut compacted, mut seconds) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        target.create()?;
        let db = target.builder().open(target.path())?;
        let mut stored = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            let array = Array::create(db.store(), &format!("/a{i}"), meta.clone())?;
            array.write_region_bytes(&[0, 0], &[SIDE, SIDE], part)?;
            stored.push(array.stored_chunks()?.iter().map(|(_, size)| size).sum::<u64>());
        }
        let total: u64 = stored.iter().sum();
        written.push(ratio(target.disk_bytes().0, total));
        for i in (0..ARRAYS).step_by(2) {
            Node::erase(db.store(), &format!("/a{i}"))?;
        }
        let rest: u64 = stored.iter().skip(1).step_by(2).sum();
        erased.push(ratio(target.disk_bytes().0, rest));
        let start = Instant::now();
        match db.compact() {
            Ok(done) => {
                seconds.push(start.elapsed().as_secs_f64());
                compacted.push(ratio(done.bytes_after, rest));
            }
            // LMDB and sled: the file figures still tell what they keep.
            Err(Error::Compact(CompactError::Unsupported { .. })) => {}
            Err(e) => return Err(e.into()),
        }
        for i in (1..ARRAYS).step_by(2) {
            let array = Array::open(db.store(), &format!("/a{i}"))?;
            if array.read_region_bytes(&[0, 0], &[SIDE, SIDE])? != parts[i] {
                return Err(CliError::new(format!("compact: array /a{i} differs after the compaction")));
            }
        }
        drop(db);
        target.remove();
    }
    Ok(vec![json!({
        "workload": "compact",
        "backend": target.name,
        "durability": target.durability_label(),
        "file_per_stored_written": median(written),
        "file_per_stored_erased": median(erased),
        "file_per_stored_compacted": (!compacted.is_empty()).then(|| median(compacted)),
        "compact_s": (!seconds.is_empty()).then(|| (median(seconds) * 1000.0).round() / 1000.0),
        "runs": runs,
    })])
}
