//! A new redb database appears at its path only once it is whole (`src/db/create.rs`): redb
//! sizes its file and writes a header of zeros before its magic bytes, so a crash or a kill in
//! between used to leave a file of zeros that every later `open` and `create` refused as "an
//! unknown file". Created under a temporary name and linked once its format marker is durable, the
//! path holds nothing or a database, at every moment; and the temporary files of creations whose
//! process died are cleared by the next creation of the same path.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use zarrdb::error::OpenError;
use zarrdb::{Backend, Database, Error};

const REDB_MAGIC: &[u8] = b"redb\x1a\x0a\xa9\x0d\x0a";
const DATABASES: usize = 60;

#[test]
fn the_path_never_holds_a_partial_database() {
    let dir = tempfile::tempdir().unwrap();
    let paths: Arc<Vec<_>> = Arc::new((0..DATABASES).map(|i| dir.path().join(format!("db{i}"))).collect());
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (paths, done) = (paths.clone(), done.clone());
        std::thread::spawn(move || {
            let (mut looks, mut seen) = (0u64, 0u64);
            while !done.load(Ordering::SeqCst) {
                for path in paths.iter() {
                    looks += 1;
                    let Ok(bytes) = std::fs::read(path) else { continue };
                    if !bytes.is_empty() {
                        seen += 1;
                        assert!(
                            bytes.starts_with(REDB_MAGIC),
                            "{} held {} bytes starting {:?}, not a redb header",
                            path.display(),
                            bytes.len(),
                            &bytes[..bytes.len().min(9)]
                        );
                    }
                }
            }
            (looks, seen)
        })
    };
    for path in paths.iter() {
        drop(Database::builder().backend(Backend::Redb).create(path).unwrap());
    }
    done.store(true, Ordering::SeqCst);
    let (looks, seen) = watcher.join().unwrap();
    assert!(seen > 0 && looks > seen, "the watcher looked {looks} times and saw {seen} files");
    for path in paths.iter() {
        Database::builder().backend(Backend::Redb).open(path).unwrap();
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), DATABASES, "temporary files left behind: {left:?}");
}

#[test]
fn abandoned_temporary_files_are_cleared() {
    let dir = tempfile::tempdir().unwrap();
    // What a killed creation leaves: a file redb began to lay out.
    let model = dir.path().join("model");
    drop(Database::builder().backend(Backend::Redb).create(&model).unwrap());
    let redb_file = std::fs::read(&model).unwrap();
    std::fs::remove_file(&model).unwrap();
    // A creation whose process is gone (no process has this number) and one of this process,
    // which may still be under way in another thread.
    let dead = dir.path().join(".db.zarrdb-creating.4294967294.0");
    let live = dir.path().join(format!(".db.zarrdb-creating.{}.999", std::process::id()));
    let other = dir.path().join(".other.zarrdb-creating.4294967294.0");
    for path in [&dead, &live, &other] {
        std::fs::write(path, &redb_file).unwrap();
    }
    // The name alone proves nothing: a file of the same kind of name that is not a redb file.
    let not_redb = dir.path().join(".db.zarrdb-creating.4294967294.1");
    std::fs::write(&not_redb, vec![0u8; 4096]).unwrap();
    Database::builder().backend(Backend::Redb).create(dir.path().join("db")).unwrap();
    assert!(!dead.exists(), "the dead creation's file is still there");
    assert!(live.exists() && other.exists(), "a file of a live creation or of another path was removed");
    assert_eq!(std::fs::read(&not_redb).unwrap(), vec![0u8; 4096], "a file that is not a redb file was removed");
}

#[test]
fn an_empty_file_is_replaced_and_a_folder_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("empty");
    std::fs::write(&file, b"").unwrap();
    drop(Database::builder().backend(Backend::Redb).create(&file).unwrap());
    Database::builder().backend(Backend::Redb).open(&file).unwrap();
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    let err = Database::builder().backend(Backend::Redb).create(&folder).unwrap_err();
    assert!(matches!(err, Error::Open(OpenError::WrongBackend { .. })), "{err}");
}
