//! Where a transfer writes to: a database (one bulk transaction), a new folder, a new zip
//! archive, or any store. A sink takes a window of values at a time; `finish` makes the result
//! appear at once, and dropping an unfinished sink leaves nothing behind (a database transaction
//! aborts, a half-written folder or archive is removed). A plain store has no transaction: what
//! was written before a failure stays.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use super::error::{io_error, TransferError};
use super::key;
use super::zip::ZipWriter;
use crate::db::BulkWrite;
use crate::error::Error;
use crate::store::Store;

/// A destination for a transfer.
pub(crate) trait Sink {
    /// Write a window of (key, value) pairs; keys are final store keys.
    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), Error>;

    /// Make everything written visible; dropping instead leaves nothing (except for plain stores).
    fn finish(self: Box<Self>) -> Result<(), Error>;
}

/// A database: one bulk write, committed at `finish`.
pub(crate) struct DbSink(pub BulkWrite);

impl Sink for DbSink {
    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), Error> {
        self.0.put(&values)
    }

    fn finish(self: Box<Self>) -> Result<(), Error> {
        self.0.commit()
    }
}

/// A temporary name beside `destination`, renamed into place by `finish`.
fn staging_path(destination: &Path) -> PathBuf {
    let mut name = destination.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(format!(".zarrdb-partial-{}", std::process::id()));
    destination.with_file_name(name)
}

/// Refuse an existing destination: export never overwrites or merges.
pub(crate) fn check_absent(destination: &Path) -> Result<(), TransferError> {
    match fs::symlink_metadata(destination) {
        Ok(_) => Err(TransferError::DestinationExists { path: destination.display().to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_error("inspect", destination)(e)),
    }
}

/// A new folder in the File System Store layout, written under a staging name and renamed.
pub(crate) struct DirSink {
    staging: PathBuf,
    destination: PathBuf,
    finished: bool,
}

impl DirSink {
    pub(crate) fn create(destination: &Path) -> Result<DirSink, Error> {
        check_absent(destination)?;
        let staging = staging_path(destination);
        // A staging folder left by a killed export of this same process id is stale.
        let _ = fs::remove_dir_all(&staging);
        fs::create_dir_all(&staging).map_err(io_error("create", &staging))?;
        Ok(DirSink { staging, destination: destination.to_path_buf(), finished: false })
    }
}

impl Sink for DirSink {
    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), Error> {
        let described = format!("folder \"{}\"", self.destination.display());
        values.into_par_iter().try_for_each(|(k, v)| {
            // Keys come from a database that validated them; checked again because a file
            // outside the destination must be impossible, not merely unlikely.
            key::check(&described, &k)?;
            let path = self.staging.join(&k);
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(io_error("create", parent))?;
            }
            fs::write(&path, v).map_err(io_error("write", &path))?;
            Ok(())
        })
    }

    fn finish(mut self: Box<Self>) -> Result<(), Error> {
        check_absent(&self.destination)?;
        fs::rename(&self.staging, &self.destination).map_err(io_error("rename", &self.staging))?;
        self.finished = true;
        Ok(())
    }
}

impl Drop for DirSink {
    fn drop(&mut self) {
        if !self.finished {
            let _ = fs::remove_dir_all(&self.staging);
        }
    }
}

/// A new zip archive (stored entries), written under a staging name and renamed.
pub(crate) struct ZipSink {
    writer: Option<ZipWriter>,
    staging: PathBuf,
    destination: PathBuf,
}

impl ZipSink {
    pub(crate) fn create(destination: &Path) -> Result<ZipSink, Error> {
        check_absent(destination)?;
        let staging = staging_path(destination);
        let _ = fs::remove_file(&staging);
        let writer = ZipWriter::create(&staging).map_err(TransferError::from)?;
        Ok(ZipSink { writer: Some(writer), staging, destination: destination.to_path_buf() })
    }
}

impl Sink for ZipSink {
    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), Error> {
        let writer = self.writer.as_mut().expect("the writer lives until finish");
        for (k, v) in values {
            writer.add(&k, &v).map_err(TransferError::from)?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<(), Error> {
        let writer = self.writer.take().expect("the writer lives until finish");
        writer.finish().map_err(TransferError::from)?;
        check_absent(&self.destination)?;
        fs::rename(&self.staging, &self.destination).map_err(io_error("rename", &self.staging))?;
        Ok(())
    }
}

impl Drop for ZipSink {
    fn drop(&mut self) {
        // After a successful finish the staging name no longer exists.
        let _ = fs::remove_file(&self.staging);
    }
}

/// Any store, written key by key.
pub(crate) struct StoreSink(pub Arc<dyn Store>);

impl Sink for StoreSink {
    fn put(&mut self, values: Vec<(String, Vec<u8>)>) -> Result<(), Error> {
        values.into_par_iter().try_for_each(|(k, v)| Ok(self.0.set_owned(&k, v)?))
    }

    fn finish(self: Box<Self>) -> Result<(), Error> {
        Ok(())
    }
}
