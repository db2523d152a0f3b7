//! Directory store edge cases: what a crash leaves, trees deeper than any key, names that are no
//! keys, and a prefix erased over a key of the same name.

use std::fs;
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{Mode, OFlags};
use zarrdb::store::{ListableStore, ReadableStore, WritableStore};
use zarrdb::DirectoryStore;

#[test]
fn temporary_files_left_by_a_crashed_process_with_the_same_id_do_not_block_writes() {
    let dir = tempfile::tempdir().unwrap();
    let store = DirectoryStore::create(dir.path()).unwrap();
    fs::create_dir(dir.path().join("a")).unwrap();
    // What an earlier process with this process id left when it was killed mid-write.
    for n in 0..32 {
        fs::write(dir.path().join(format!("a/.zarrdb-tmp-{}-{n}", std::process::id())), b"torn").unwrap();
    }
    for i in 0..8 {
        store.set(&format!("a/{i}"), b"value").unwrap();
    }
    assert_eq!(store.list_prefix("a/").unwrap().len(), 8);
}

#[test]
fn erasing_a_prefix_keeps_the_key_of_the_same_name() {
    let dir = tempfile::tempdir().unwrap();
    let store = DirectoryStore::create(dir.path()).unwrap();
    store.set("a", b"kept").unwrap();
    store.erase_prefix("a/").unwrap();
    assert_eq!(store.get("a").unwrap().as_deref(), Some(&b"kept"[..]));
}

#[test]
fn folders_whose_names_are_not_utf8_are_erased_with_their_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let store = DirectoryStore::create(dir.path()).unwrap();
    store.set("a/k", b"x").unwrap();
    let odd = dir.path().join("a").join(std::ffi::OsStr::from_bytes(b"\xff"));
    fs::create_dir(&odd).unwrap();
    fs::write(odd.join("f"), b"x").unwrap();
    store.erase_prefix("a/").unwrap();
    assert!(!dir.path().join("a").exists());
}

#[test]
fn a_tree_deeper_than_any_key_is_listed_and_erased_without_overflowing_the_stack() {
    let dir = tempfile::tempdir().unwrap();
    let store = DirectoryStore::create(dir.path()).unwrap();
    store.set("d/top", b"x").unwrap();
    // 10,000 nested folders, made a name at a time: the path is far beyond PATH_MAX.
    let mut fd = rustix::fs::open(dir.path().join("d"), OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).unwrap();
    for _ in 0..10_000 {
        rustix::fs::mkdirat(&fd, "n", Mode::from_bits_truncate(0o755)).unwrap();
        fd = rustix::fs::openat(&fd, "n", OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).unwrap();
    }
    let deepest = rustix::fs::openat(&fd, "f", OFlags::WRONLY | OFlags::CREATE, Mode::from_bits_truncate(0o644));
    drop(deepest.unwrap());
    assert_eq!(store.list_prefix("").unwrap(), ["d/top"], "keys deeper than 256 folders are not listed");
    assert_eq!(store.list_dir("").unwrap().prefixes, ["d"]);
    let deep_key = format!("d/{}f", "n/".repeat(300));
    assert!(store.get(&deep_key).is_err(), "a key deeper than 256 folders is refused");
    assert!(store.set(&deep_key, b"x").is_err());
    // Erasing stops where the keys stop: the folder beyond the depth cap stays, and says why.
    assert!(store.erase_prefix("d/").is_err());
}
