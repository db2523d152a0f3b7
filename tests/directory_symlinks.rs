//! A directory store never reads, writes or deletes outside its folder through a symbolic link:
//! linked folders on a key's path are refused, a key's file may link only to a file inside the
//! folder, and erasing through a link removes the link, never its target.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use zarrdb::error::StoreError;
use zarrdb::store::{ListableStore, ReadableStore, WritableStore};
use zarrdb::DirectoryStore;

fn outside_tree(dir: &Path) -> fs::ReadDir {
    fs::read_dir(dir.join("outside")).unwrap()
}

#[test]
fn linked_folders_are_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("outside")).unwrap();
    fs::write(dir.path().join("outside/secret"), b"keep me").unwrap();
    let root = dir.path().join("store");
    fs::create_dir(&root).unwrap();
    symlink(dir.path().join("outside"), root.join("a")).unwrap();
    let store = DirectoryStore::open(&root).unwrap();

    let refused = |r: Result<_, StoreError>| matches!(r, Err(StoreError::Symlink { .. }));
    assert!(refused(store.get("a/secret").map(drop)));
    assert!(refused(store.size("a/secret").map(drop)));
    assert!(refused(store.set("a/new", b"x")));
    assert!(refused(store.erase("a/secret")));
    assert!(refused(store.set_partial_values(&[("a/secret", 0, b"X")])));
    assert!(store.list().unwrap().is_empty(), "the linked folder is not listed");
    assert!(store.list_dir("").unwrap().is_empty());

    // Erasing the prefix (what erasing an array or group whose folder is a link does) removes
    // the link only.
    store.erase_prefix("a/").unwrap();
    assert!(fs::symlink_metadata(root.join("a")).is_err(), "the link is gone");
    assert_eq!(fs::read(dir.path().join("outside/secret")).unwrap(), b"keep me");
    assert_eq!(outside_tree(dir.path()).count(), 1, "nothing created or deleted outside");
}

#[test]
fn linked_files_are_read_only_inside_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("outside")).unwrap();
    fs::write(dir.path().join("outside/secret"), b"keep me").unwrap();
    let root = dir.path().join("store");
    let store = DirectoryStore::create(&root).unwrap();
    store.set("y/c/0", b"inside").unwrap();
    fs::create_dir_all(root.join("x/c")).unwrap();
    symlink(root.join("y/c/0"), root.join("x/c/0")).unwrap();
    symlink(dir.path().join("outside/secret"), root.join("x/c/1")).unwrap();
    symlink(root.join("y"), root.join("x/c/2")).unwrap();

    assert_eq!(store.get("x/c/0").unwrap().as_deref(), Some(&b"inside"[..]));
    assert_eq!(store.size("x/c/0").unwrap(), Some(6));
    for key in ["x/c/1", "x/c/2"] {
        assert!(matches!(store.get(key), Err(StoreError::Symlink { .. })), "{key}");
    }
    assert_eq!(store.list_prefix("x/").unwrap(), ["x/c/0"]);
    assert_eq!(store.list_dir("x/c/").unwrap().keys, ["0"]);

    // Writing or erasing the key replaces or removes the link, never its target.
    store.set("x/c/1", b"new").unwrap();
    assert_eq!(store.get("x/c/1").unwrap().as_deref(), Some(&b"new"[..]));
    store.erase("x/c/0").unwrap();
    assert_eq!(store.get("y/c/0").unwrap().as_deref(), Some(&b"inside"[..]));
    assert_eq!(fs::read(dir.path().join("outside/secret")).unwrap(), b"keep me");
}

/// The reason a link is refused, without the key's path.
fn refusal(store: &DirectoryStore, key: &str) -> String {
    match store.get(key) {
        Err(e @ StoreError::Symlink { .. }) => {
            let text = e.to_string();
            text.rsplit_once("is a symbolic link").map(|(_, reason)| reason.to_owned()).unwrap_or(text)
        }
        other => panic!("{key}: expected a refused link, got {other:?}"),
    }
}

#[test]
fn a_link_out_of_the_folder_is_refused_alike_whether_its_target_exists() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("secret"), b"keep me").unwrap();
    let root = dir.path().join("store");
    let store = DirectoryStore::create(&root).unwrap();
    fs::create_dir_all(root.join("x/c")).unwrap();
    symlink(dir.path().join("secret"), root.join("x/c/0")).unwrap();
    symlink(dir.path().join("no such file"), root.join("x/c/1")).unwrap();
    symlink("../../../secret", root.join("x/c/2")).unwrap();
    symlink("../../../no such file", root.join("x/c/3")).unwrap();

    let reasons: Vec<String> = (0..4).map(|i| refusal(&store, &format!("x/c/{i}"))).collect();
    assert!(reasons.iter().all(|r| r == &reasons[0]), "{reasons:?}");
    assert!(reasons[0].contains("outside"), "{reasons:?}");
}

#[test]
fn links_inside_the_folder_resolve_by_name_relative_absolute_and_chained() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let store = DirectoryStore::create(&root).unwrap();
    store.set("y/c/0", b"inside").unwrap();
    fs::create_dir_all(root.join("x/c")).unwrap();
    symlink("../../y/c/0", root.join("x/c/0")).unwrap();
    symlink(root.join("x/./c/../../y/c/0"), root.join("x/c/1")).unwrap();
    symlink("0", root.join("x/c/2")).unwrap();
    for key in ["x/c/0", "x/c/1", "x/c/2"] {
        assert_eq!(store.get(key).unwrap().as_deref(), Some(&b"inside"[..]), "{key}");
    }

    // A loop, a link to a missing key and a link through a linked folder are refused, in bounded time.
    symlink("4", root.join("x/c/3")).unwrap();
    symlink("3", root.join("x/c/4")).unwrap();
    symlink("../../y/c/9", root.join("x/c/5")).unwrap();
    symlink(root.join("y"), root.join("z")).unwrap();
    symlink("../../z/c/0", root.join("x/c/6")).unwrap();
    for key in ["x/c/3", "x/c/4", "x/c/5", "x/c/6"] {
        assert!(matches!(store.get(key), Err(StoreError::Symlink { .. })), "{key}");
    }
    assert!(refusal(&store, "x/c/3").contains("chain"));
}
