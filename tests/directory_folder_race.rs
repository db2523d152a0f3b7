//! Writes into a folder that another thread's erase is removing: erasing the last key of a
//! folder removes the folder (a prefix disappears, as in a key/value store), and a set that
//! opened the folder a moment before found it gone ("No such file or directory"). Seen as a
//! rare failure of `tests/region_model.rs` on the directory store (a region write that stores
//! some chunks and erases all-fill ones of the same folder, in parallel). Every set must succeed
//! and every value must be there afterwards.

use std::sync::Arc;

use zarrdb::{DirectoryStore, Store};

const ROUNDS: usize = 3000;

#[test]
fn sets_into_a_folder_being_removed_by_erases_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(DirectoryStore::create(dir.path().join("s")).unwrap());
    std::thread::scope(|s| {
        for t in 0..4 {
            let store = store.clone();
            s.spawn(move || {
                for round in 0..ROUNDS {
                    // Deep keys, so the set creates folders that the erases remove again.
                    let key = format!("a/{}/c/{t}", round % 3);
                    store.set(&key, &[t as u8; 16]).unwrap_or_else(|e| panic!("round {round}: set {key}: {e}"));
                    if round % 2 == 0 {
                        store.erase(&key).unwrap_or_else(|e| panic!("round {round}: erase {key}: {e}"));
                    }
                }
            });
        }
    });
    for t in 0..4u8 {
        // The last round (ROUNDS - 1, odd) kept its value.
        let key = format!("a/{}/c/{t}", (ROUNDS - 1) % 3);
        assert_eq!(store.get(&key).unwrap().as_deref(), Some(&[t; 16][..]), "{key}");
    }
}
