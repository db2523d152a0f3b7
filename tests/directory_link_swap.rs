//! A directory store whose folder is swapped for a link to an outside folder, again and again,
//! while the store reads, writes and erases keys in it: no operation may ever reach the outside
//! folder. (Checking a path and then opening it leaves a window in which the swap lands; the store
//! resolves each name from the folder above it without following links, so there is none.)

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use zarrdb::store::{ListableStore, ReadableStore, WritableStore};
use zarrdb::DirectoryStore;

/// Rounds of store operations; the swapper turns the folder around thousands of times meanwhile.
const ROUNDS: usize = 20_000;

fn swap_until(stop: &AtomicBool, swaps: &AtomicU64, root: &Path) {
    // `a` and `a.link` trade places atomically, so `a` is always there: a real folder or a link.
    let cwd = rustix::fs::CWD;
    let (a, link) = (root.join("a"), root.join("a.link"));
    while !stop.load(Ordering::Relaxed) {
        rustix::fs::renameat_with(cwd, &a, cwd, &link, rustix::fs::RenameFlags::EXCHANGE).unwrap();
        swaps.fetch_add(1, Ordering::Relaxed);
    }
}

struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[test]
fn no_operation_reaches_a_folder_swapped_in_by_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let (root, outside) = (dir.path().join("store"), dir.path().join("outside"));
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("x"), b"OUTSIDE").unwrap();
    fs::write(outside.join("y"), b"OUTSIDE").unwrap();
    let store = DirectoryStore::create(&root).unwrap();
    store.set("a/x", b"inside").unwrap();
    symlink(&outside, root.join("a.link")).unwrap();

    let (stop, swaps) = (AtomicBool::new(false), AtomicU64::new(0));
    std::thread::scope(|s| {
        s.spawn(|| swap_until(&stop, &swaps, &root));
        // Stops the swapper however this thread leaves the scope, a failed assertion included.
        let _stop = StopOnDrop(&stop);
        for round in 0..ROUNDS {
            if let Ok(Some(value)) = store.get("a/x") {
                assert_eq!(value, b"inside", "round {round}: read the outside folder");
            }
            assert!(!matches!(store.size("a/y"), Ok(Some(_))), "round {round}: sized an outside file");
            let _ = store.set("a/new", b"written");
            let _ = store.erase("a/y");
            if let Ok(keys) = store.list_prefix("a/") {
                assert!(!keys.iter().any(|k| k == "a/y"), "round {round}: listed the outside folder");
            }
            if round % 64 == 0 {
                let _ = store.set_partial_values(&[("a/x", 0, b"inside")]);
            }
        }
    });

    assert!(swaps.load(Ordering::Relaxed) > 100, "the folder was swapped only {swaps:?} times");
    let mut names: Vec<_> = fs::read_dir(&outside).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["x", "y"], "a file was created in or removed from the outside folder");
    assert_eq!(fs::read(outside.join("x")).unwrap(), b"OUTSIDE");
    assert_eq!(fs::read(outside.join("y")).unwrap(), b"OUTSIDE");
}
