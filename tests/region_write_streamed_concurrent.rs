//! A streamed region write (`src/array/stream.rs`) and small writers sharing its edge chunks lose
//! no update. The streamed write covers all but the last columns of the array, so each of its
//! edge chunks is read, patched and rewritten; other threads meanwhile keep writing small regions
//! into those last columns, inside the same chunks. Every write of the streamed one and every
//! small write must survive: a patch made from a stale read of an edge chunk would undo a small
//! write, and a small write made from a stale read would undo part of a streamed one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database};

const SIDE: u64 = 2200;
const CHUNK: u64 = 256;
/// Columns `OWNED..SIDE` belong to the small writers, one row band each.
const OWNED: u64 = 2180;
const SMALL_WRITERS: u64 = 2;
const LARGE_WRITES: u32 = 4;
/// Rows per small write.
const ROWS: u64 = 8;

fn run(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::builder().backend(backend).create(dir.path().join("db")).unwrap();
    let meta = ArrayMetadata::new(DataType::UInt32, vec![SIDE, SIDE], vec![CHUNK, CHUNK]);
    let array = Array::create(db.store(), "/a", meta).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let band = SIDE / SMALL_WRITERS;
    let small: Vec<_> = (0..SMALL_WRITERS)
        .map(|w| {
            let (array, done) = (array.clone(), done.clone());
            std::thread::spawn(move || {
                // Each write stores its sequence number in a few rows of the writer's band,
                // moving down the band; `mine` is what the band must hold at the end.
                let width = SIDE - OWNED;
                let mut mine = vec![0u32; (band * width) as usize];
                let mut n = 0u32;
                while !done.load(Ordering::SeqCst) || n < 20 {
                    n += 1;
                    let row = u64::from(n) * ROWS % (band - ROWS);
                    array
                        .write_region(&[w * band + row, OWNED], &[ROWS, width], &vec![n; (ROWS * width) as usize])
                        .unwrap();
                    mine[(row * width) as usize..][..(ROWS * width) as usize].fill(n);
                }
                (n, mine)
            })
        })
        .collect();
    let mut last = Vec::new();
    for k in 1..=LARGE_WRITES {
        last = (0..SIDE * OWNED).map(|i| (k << 24) | (i as u32 & 0xff_ffff) | 1).collect();
        array.write_region(&[0, 0], &[SIDE, OWNED], &last).unwrap();
    }
    done.store(true, Ordering::SeqCst);
    let bands: Vec<(u32, Vec<u32>)> = small.into_iter().map(|t| t.join().unwrap()).collect();
    let writes: Vec<u32> = bands.iter().map(|b| b.0).collect();
    eprintln!("{backend:?}: {LARGE_WRITES} streamed writes, small writes {writes:?}");
    let all = array.read_all::<u32>().unwrap();
    for row in 0..SIDE {
        for col in 0..SIDE {
            let got = all[(row * SIDE + col) as usize];
            let want = if col < OWNED {
                last[(row * OWNED + col) as usize]
            } else {
                bands[(row / band) as usize].1[((row % band) * (SIDE - OWNED) + col - OWNED) as usize]
            };
            assert_eq!(got, want, "{backend:?}: element [{row}, {col}] lost an update");
        }
    }
}

#[test]
fn redb_loses_no_update() {
    run(Backend::Redb);
}

#[test]
fn lmdb_loses_no_update() {
    run(Backend::Lmdb);
}

#[test]
fn sled_loses_no_update() {
    run(Backend::Sled);
}
