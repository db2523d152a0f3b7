//! Eight threads share one `string` array and write runs of their own rows (row `r` belongs to
//! writer `r % 8`), so every chunk's item list is rebuilt by all of them at once. No update may
//! be lost: each element must end with the last text its owner wrote there, on memory and
//! directory stores and on every database backend through the auto-commit store.

use std::sync::{Arc, Barrier};

use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, DirectoryStore, MemoryStore, Store};

const WRITERS: u64 = 8;
const STEPS: u64 = 60;
const ROWS: u64 = 32;
const COLS: u64 = 30;

/// Writer `w`'s text at `step` for column `col`: distinct per write, of varying length, never
/// the fill value "".
fn text(w: u64, step: u64, col: u64) -> String {
    format!("w{w}s{step}c{col}{}", "\u{e9}".repeat((step + col) as usize % 5))
}

/// Writer `w` writes `STEPS` runs into its own rows; returns what it last wrote to each element.
fn write(array: &Array, w: u64) -> Vec<Option<String>> {
    let mut last = vec![None; (ROWS * COLS) as usize];
    for step in 0..STEPS {
        let row = (step * 7 + w) % (ROWS / WRITERS) * WRITERS + w;
        let start = (step * 13 + w * 5) % COLS;
        let len = 1 + (step * 11 + w) % (COLS - start);
        let values: Vec<String> = (start..start + len).map(|c| text(w, step, c)).collect();
        array.write_items(&[row, start], &[1, len], &values).unwrap();
        for (c, v) in (start..start + len).zip(values) {
            last[(row * COLS + c) as usize] = Some(v);
        }
    }
    last
}

fn check(store: Arc<dyn Store>, label: &str) {
    // Chunks of 8 x 7 items: unaligned with the runs and with the array's edge.
    let array =
        Array::create(store, "/names", ArrayMetadata::new(DataType::String, vec![ROWS, COLS], vec![8, 7])).unwrap();
    let start = Barrier::new(WRITERS as usize);
    let records: Vec<Vec<Option<String>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (array, start) = (&array, &start);
                s.spawn(move || {
                    start.wait();
                    write(array, w)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let stored = array.read_all_items::<String>().unwrap();
    let mut lost = Vec::new();
    for (i, got) in stored.iter().enumerate() {
        let owner = (i as u64 / COLS) % WRITERS;
        let want = records[owner as usize][i].clone().unwrap_or_default();
        if *got != want {
            lost.push((i, got.clone(), want));
        }
    }
    assert!(lost.is_empty(), "{label}: {} lost updates, e.g. {:?}", lost.len(), &lost[..lost.len().min(3)]);
}

#[test]
fn memory_and_directory() {
    check(Arc::new(MemoryStore::new()), "memory");
    let dir = tempfile::tempdir().unwrap();
    check(Arc::new(DirectoryStore::create(dir.path().join("d")).unwrap()), "directory");
}

#[test]
fn databases() {
    for backend in [Backend::Redb, Backend::Lmdb, Backend::Sled] {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::builder().backend(backend).create(dir.path().join("db")).unwrap();
        check(db.store(), &format!("{backend:?}"));
    }
}
