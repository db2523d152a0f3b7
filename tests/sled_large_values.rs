//! sled keeps values over 64 KiB in pieces (`store/sled/pieces.rs`). Stored whole, each value over
//! about 128 KiB became a file of its own that sled deleted only some 26,000 commits after it was
//! superseded: 2,048 overwrites of 16 values of 256 KiB left 1.3 GB for 4 MiB of data.

#[path = "common/splitmix.rs"]
#[expect(dead_code, reason = "the test uses only part of the shared generator")]
mod splitmix;

use std::path::Path;

use splitmix::SplitMix;
use zarrdb::{Backend, Database};

const KEYS: usize = 16;
const VALUE: usize = 256 << 10;
const COMMITS: usize = 2_048;

fn folder_size(path: &Path) -> u64 {
    std::fs::read_dir(path)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                folder_size(&entry.path())
            } else {
                meta.len()
            }
        })
        .sum()
}

/// A random value stamped with the commit that wrote it.
fn value(pool: &[Vec<u8>], commit: usize) -> Vec<u8> {
    let mut value = pool[commit % pool.len()].clone();
    value[..8].copy_from_slice(&(commit as u64).to_le_bytes());
    value
}

#[test]
fn overwriting_large_values_keeps_the_folder_near_the_live_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.sled");
    let mut rng = SplitMix::new(7, 0);
    let pool: Vec<Vec<u8>> =
        (0..KEYS + 1).map(|_| (0..VALUE / 8).flat_map(|_| rng.next_u64().to_le_bytes()).collect()).collect();
    {
        let db = Database::builder().backend(Backend::Sled).create(&path).unwrap();
        let store = db.store();
        for commit in 0..COMMITS {
            store.set(&format!("a/c/{}", commit % KEYS), &value(&pool, commit)).unwrap();
        }
    }
    let live = (KEYS * VALUE) as u64;
    let size = folder_size(&path);
    println!("{size} bytes on disk for {live} bytes of values after {COMMITS} commits");
    assert!(size <= 16 * live, "{size} bytes on disk for {live} bytes of values");

    let db = Database::builder().backend(Backend::Sled).open(&path).unwrap();
    let store = db.store();
    for commit in COMMITS - KEYS..COMMITS {
        let key = format!("a/c/{}", commit % KEYS);
        assert_eq!(store.get(&key).unwrap(), Some(value(&pool, commit)), "{key}");
    }
    assert_eq!(store.list_prefix("a/").unwrap().len(), KEYS);
}

#[test]
fn a_reader_never_sees_two_versions_of_a_large_value() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::builder().backend(Backend::Sled).create(dir.path().join("data.sled")).unwrap();
    let store = db.store();
    // Each version is one byte repeated, in a length that changes too.
    let version = |v: u8| vec![v; 300_000 + usize::from(v) * 1_000];
    store.set("a/c/0", &version(0)).unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            for v in 1..=200u8 {
                store.set("a/c/0", &version(v)).unwrap();
            }
            done.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        let mut reads = 0;
        while !done.load(std::sync::atomic::Ordering::Relaxed) || reads == 0 {
            let got = store.get("a/c/0").unwrap().expect("the value is always there");
            assert_eq!(got, version(got[0]), "a read mixed two versions");
            let tail = store.get_partial_values(&[("a/c/0", zarrdb::store::ByteRange::Suffix(70_000))]).unwrap();
            let tail = tail[0].as_ref().expect("the value is always there");
            assert!(tail.iter().all(|&b| b == tail[0]), "a ranged read mixed two versions");
            reads += 1;
        }
    });
}
