//! Opening a database: recognising what is at the path, opening the engine, and checking the
//! zarrdb format marker.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use super::format::{check_format, check_redb_file_format};
use super::{Backend, DatabaseBuilder, Durability};
use crate::error::{Error, OpenError};
use crate::store::history::HistoryEngine;
use crate::store::kv::KvEngine;
use crate::store::special;
use crate::store::{LmdbEngine, RedbEngine, RedbOptions, SledEngine};

/// The files LMDB, sled and zarrdb keep in a database folder and open by name.
const ENGINE_FILES: [&str; 5] = ["data.mdb", "lock.mdb", "conf", "db", "zarrdb-commits"];

/// What a path holds, as far as its first bytes and file names tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    Nothing,
    Database(Backend),
    Other(&'static str),
}

/// Recognise the database kind at `path` without opening it.
pub(crate) fn sniff(path: &Path) -> Result<Found, OpenError> {
    let io = |source| OpenError::Io { path: path.display().to_string(), source };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Nothing),
        Err(e) => return Err(io(e)),
    };
    if let Some(found) = special::what(meta.file_type()) {
        return Err(OpenError::NotFileOrFolder { path: path.display().to_string(), found });
    }
    if meta.is_dir() {
        let has = |name: &str| path.join(name).is_file();
        // A Zarr folder may hold nodes named like engine files; its root zarr.json, which no
        // engine writes, decides.
        if has("zarr.json") {
            return Ok(Found::Other("a directory"));
        }
        // An engine's own file that is a FIFO would hang the engine's open of it.
        for name in ENGINE_FILES {
            let file = path.join(name);
            if let Some(found) = std::fs::symlink_metadata(&file).ok().and_then(|m| special::what(m.file_type())) {
                return Err(OpenError::NotFileOrFolder { path: file.display().to_string(), found });
            }
        }
        return Ok(if has("data.mdb") {
            Found::Database(Backend::Lmdb)
        } else if has("conf") && has("db") {
            Found::Database(Backend::Sled)
        } else if std::fs::read_dir(path).map_err(io)?.next().is_none() {
            Found::Nothing
        } else {
            Found::Other("a directory")
        });
    }
    let mut head = [0u8; 16];
    // Non-blocking and checked: a FIFO put in the file's place since the look above is refused,
    // not waited on.
    let mut file = special::open_regular_to_read(path).map_err(io)?;
    let n = read_up_to(&mut file, &mut head).map_err(io)?;
    Ok(match &head[..n] {
        [] => Found::Nothing,
        head if head.starts_with(crate::store::REDB_MAGIC) => Found::Database(Backend::Redb),
        head => Found::Other(foreign(head)),
    })
}

/// What a file that is no redb database holds, by its magic bytes, for the error message: users
/// reach for zarrdb with the single-file formats it replaces (zarr-sqlite's `.zarrdb` files are
/// SQLite, HDF5 and netCDF files hold the same kind of data).
fn foreign(head: &[u8]) -> &'static str {
    const KNOWN: [(&[u8], &str); 9] = [
        (b"SQLite format 3\0", "an SQLite database (zarr-sqlite's files are SQLite)"),
        (b"\x89HDF\r\n\x1a\n", "an HDF5 file (netCDF-4 files are HDF5)"),
        (b"CDF\x01", "a netCDF classic file"),
        (b"CDF\x02", "a netCDF 64-bit offset file"),
        (b"CDF\x05", "a netCDF 64-bit data file"),
        (b"PK", "a zip archive"),
        (b"\x1f\x8b", "a gzip file"),
        (b"\x28\xb5\x2f\xfd", "a zstd file"),
        (b"PAR1", "a Parquet file"),
    ];
    KNOWN.iter().find(|(magic, _)| head.starts_with(magic)).map_or("an unknown file", |(_, what)| what)
}

fn read_up_to(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// An open engine, and its history when the database keeps it (the engine is then the history
/// layer over the backend's).
pub(crate) type Opened = (Arc<dyn KvEngine>, Option<Arc<HistoryEngine>>);

/// `engine`, with the history layer over it when `history` says the database keeps history.
pub(super) fn with_history(engine: Arc<dyn KvEngine>, history: bool) -> Result<Opened, Error> {
    if !history {
        return Ok((engine, None));
    }
    let history = Arc::new(HistoryEngine::open(engine)?);
    Ok((history.clone(), Some(history)))
}

pub(super) fn open_engine(options: &DatabaseBuilder, path: &Path, create: bool) -> Result<Opened, Error> {
    let display = path.display().to_string();
    if options.backend == Backend::Bucket {
        return open_bucket(options, path, create);
    }
    let found = sniff(path)?;
    match found {
        Found::Nothing if !create || options.read_only => return Err(OpenError::NotFound { path: display }.into()),
        Found::Database(found) if found != options.backend => {
            return Err(OpenError::WrongBackend {
                path: display,
                requested: options.backend.name(),
                found: found.described(),
            }
            .into())
        }
        Found::Other(found) => {
            return Err(OpenError::WrongBackend { path: display, requested: options.backend.name(), found }.into())
        }
        _ => {}
    }
    let durable = options.durability == Durability::Durable;
    let redb_options = RedbOptions {
        cache_size: options.redb_cache_size.or(options.read_only.then_some(READ_ONLY_REDB_CACHE)),
        verify: options.verify_on_open,
        multi_writer: options.redb_multi_writer,
        commit_log: options.redb_commit_log,
        read_only: options.read_only,
        shared_log_capacity: crate::store::SHARED_LOG_CAPACITY,
    };
    let engine: Arc<dyn KvEngine> = match options.backend {
        // A new redb file appears at the path only once it is a whole database (`create.rs`).
        Backend::Redb if found == Found::Nothing => {
            return super::create::create_redb(path, redb_options, options.history, || {
                open_engine(options, path, false)
            });
        }
        Backend::Redb => {
            check_redb_file_format(path)?;
            Arc::new(RedbEngine::open(path, create, redb_options)?)
        }
        Backend::Lmdb => Arc::new(LmdbEngine::open(
            path,
            create,
            durable,
            options.lmdb_initial_map_size,
            options.read_only,
            options.verify_on_open || options.lmdb_check_pages,
            options.lmdb_commit_log,
        )?),
        Backend::Sled => Arc::new(SledEngine::open(path, options.read_only)?),
        Backend::Bucket => return open_bucket(options, path, create),
    };
    let history = check_format(engine.as_ref(), options.backend, &display, options.read_only, options.history)?;
    with_history(engine, history)
}

/// A bucket database: `path` is its locator (`zarrdb+s3://bucket/prefix`).
#[cfg(feature = "object-store")]
fn open_bucket(options: &DatabaseBuilder, path: &Path, create: bool) -> Result<Opened, Error> {
    let display = path.display().to_string();
    let locator = path.to_str().filter(|l| crate::store::bucket::is_bucket_locator(l)).ok_or_else(|| {
        OpenError::WrongBackend { path: display.clone(), requested: "bucket", found: "no zarrdb+s3:// locator" }
    })?;
    let engine: Arc<dyn KvEngine> =
        Arc::new(crate::store::bucket::BucketEngine::open(locator, create, options.read_only)?);
    let history = check_format(engine.as_ref(), Backend::Bucket, &display, options.read_only, options.history)?;
    with_history(engine, history)
}

#[cfg(not(feature = "object-store"))]
fn open_bucket(_options: &DatabaseBuilder, path: &Path, _create: bool) -> Result<Opened, Error> {
    Err(super::bucket_unavailable(path).into())
}

/// redb's cache for a read-only database when the caller sets none. redb keeps every page it
/// reads (up to its cache size, 1 GiB by default) in a buffer of its own: a read of a large array
/// then touches fresh memory for every page, and the process grows by what it read. A read-only
/// database has no write transaction whose dirty pages need the room; with a small cache the
/// page buffers are recycled. Fresh-process reads of the shared workloads (docs/benchmarks.md,
/// "redb's cache for read-only databases"): big_raw 0.24-0.37 s -> 0.16-0.18 s, peak RSS beyond
/// the array 387 -> 30 MB; big_zstd, sharded and small_chunks as fast or faster.
const READ_ONLY_REDB_CACHE: usize = 16 << 20;
