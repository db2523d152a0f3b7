//! Where a benchmark runs: a backend at a path, created empty for each run and reopened for the
//! read half, as a user's program would reopen its dataset.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use zarrdb::{Backend, Database, DatabaseBuilder, DirectoryStore, Durability, MemoryStore, Store};

use crate::cli::CliError;

/// The backends `zarrdb bench` knows.
/// `lmdb-log` is LMDB with the commit log (`DatabaseBuilder::lmdb_commit_log`); a `-history`
/// suffix makes a database that keeps history (`DatabaseBuilder::history`), to measure its cost.
pub(crate) const BACKENDS: [&str; 10] = [
    "redb",
    "lmdb",
    "lmdb-log",
    "sled",
    "directory",
    "memory",
    "redb-history",
    "lmdb-history",
    "lmdb-log-history",
    "sled-history",
];

pub(crate) struct Target {
    pub name: String,
    path: PathBuf,
    durability: Durability,
    /// The memory store outlives its handles, so "reopening" finds the data.
    memory: Mutex<Option<Arc<dyn Store>>>,
}

impl Target {
    pub fn new(name: &str, base: &Path, durability: Durability) -> Result<Target, CliError> {
        if !BACKENDS.contains(&name) {
            return Err(CliError::new(format!("unknown backend \"{name}\" (available: {})", BACKENDS.join(", "))));
        }
        let path = base.join(format!("bench-{name}"));
        Ok(Target { name: name.to_owned(), path, durability, memory: Mutex::new(None) })
    }

    pub fn backend(&self) -> Option<Backend> {
        match self.name.as_str() {
            "redb" | "redb-history" => Some(Backend::Redb),
            "lmdb" | "lmdb-log" | "lmdb-history" | "lmdb-log-history" => Some(Backend::Lmdb),
            "sled" | "sled-history" => Some(Backend::Sled),
            _ => None,
        }
    }

    /// How its databases are opened.
    pub fn builder(&self) -> DatabaseBuilder {
        let mut builder = Database::builder();
        builder.durability(self.durability).lmdb_commit_log(self.name.starts_with("lmdb-log"));
        builder.history(self.name.ends_with("-history"));
        if let Some(backend) = self.backend() {
            builder.backend(backend);
        }
        builder
    }

    /// Where the store lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The folder the backend writes in (for measurements of its file system).
    pub fn folder(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    /// Whether commits on this backend can be made durable (directory and memory never fsync).
    pub fn durability_label(&self) -> &'static str {
        match (self.backend(), self.durability) {
            (None, _) => "none",
            (Some(_), Durability::Durable) => "durable",
            (Some(_), _) => "fast",
        }
    }

    /// An empty store.
    pub fn create(&self) -> Result<Arc<dyn Store>, CliError> {
        self.remove();
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let store: Arc<dyn Store> = match self.backend() {
            Some(_) => self.builder().create(&self.path)?.store(),
            None if self.name == "memory" => Arc::new(MemoryStore::new()),
            None => Arc::new(DirectoryStore::create(&self.path)?),
        };
        *self.memory.lock() = (self.name == "memory").then(|| store.clone());
        Ok(store)
    }

    /// The store created last, opened afresh. Every handle on it must be dropped first.
    pub fn reopen(&self) -> Result<Arc<dyn Store>, CliError> {
        Ok(match self.backend() {
            Some(_) => self.builder().open(&self.path)?.store(),
            None if self.name == "memory" => self
                .memory
                .lock()
                .clone()
                .ok_or_else(|| CliError::new("bench: memory store reopened before creation"))?,
            None => Arc::new(DirectoryStore::open(&self.path)?),
        })
    }

    /// The bytes the store occupies on disk, apparent and allocated: the file's length (or the sum
    /// over the files of a folder) and the blocks the file system gave them.
    pub fn disk_bytes(&self) -> (u64, u64) {
        fn walk(path: &Path, sums: &mut (u64, u64)) {
            use std::os::unix::fs::MetadataExt;
            let Ok(meta) = std::fs::symlink_metadata(path) else { return };
            if meta.is_dir() {
                for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
                    walk(&entry.path(), sums);
                }
            } else {
                sums.0 += meta.len();
                sums.1 += meta.blocks() * 512;
            }
        }
        let mut sums = (0, 0);
        walk(&self.path, &mut sums);
        sums
    }

    /// Delete what the backend wrote.
    pub fn remove(&self) {
        *self.memory.lock() = None;
        remove_path(&self.path);
    }
}

/// Delete the database a bench made at `path` inside its own `--dir`: a folder (LMDB, sled)
/// or a file (redb), whichever is there.
pub fn remove_path(path: &std::path::Path) {
    let _ = std::fs::remove_dir_all(path);
    let _ = std::fs::remove_file(path);
}
