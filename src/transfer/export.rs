//! Export: a node of a database, read from one snapshot, into a new folder or zip archive.
//! Values are copied byte for byte; the node becomes the root of the result.

use std::path::Path;

use super::consolidate::documents;
use super::error::TransferError;
use super::options::{ExportOptions, ExportReport};
use super::run::{run, Item};
use super::sink::{check_absent, DirSink, Sink, ZipSink};
use super::source::{Source, StoreSource};
use crate::db::Database;
use crate::error::Error;
use crate::hierarchy::NodePath;
use crate::metadata::METADATA_KEY;

impl Database {
    /// Export the node `options.node` (default the root) with everything below it to a new
    /// folder, or to a new zip archive (stored entries, Zip64 when needed) when `destination`
    /// ends in `.zip`. Writers may go on meanwhile: the export reads one snapshot. The
    /// destination must not exist; it appears complete or not at all.
    ///
    /// ```
    /// use zarrdb::{Array, ArrayMetadata, DataType, Database, ExportOptions};
    /// let dir = tempfile::tempdir().unwrap();
    /// let db = Database::create(dir.path().join("one.zarrdb"))?;
    /// Array::create(db.store(), "/run1/t", ArrayMetadata::new(DataType::UInt8, vec![3], vec![2]))?
    ///     .write_region(&[0], &[3], &[1u8, 2, 3])?;
    /// db.export(dir.path().join("run1.zarr"), &ExportOptions::default().node("/run1"))?;
    /// assert!(dir.path().join("run1.zarr/t/c/1").is_file());
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn export(&self, destination: impl AsRef<Path>, options: &ExportOptions) -> Result<ExportReport, Error> {
        let destination = destination.as_ref();
        let node = NodePath::parse(&options.node)?;
        check_absent(destination)?;
        // sled's reads see the live tree; holding the writer lock keeps it still instead.
        let (store, _writer) = if self.stable_snapshots() {
            (self.begin_read()?.store(), None)
        } else {
            let txn = self.begin_write()?;
            (txn.store(), Some(txn))
        };
        let source = StoreSource { store, prefix: node.key_prefix() };
        let items: Vec<Item> =
            source.list()?.into_iter().map(|l| Item { from: l.key.clone(), to: l.key, size: l.size }).collect();
        // A node has a zarr.json, or is an implicit group with nodes below it; a bare key prefix
        // (`/array/c`) is not one.
        if !items.iter().any(|i| i.to == METADATA_KEY || i.to.ends_with("/zarr.json")) {
            return Err(TransferError::NodeNotFound { node: node.to_string() }.into());
        }
        let sink: Box<dyn Sink> = if options.zip.unwrap_or_else(|| is_zip(destination)) {
            Box::new(ZipSink::create(destination)?)
        } else {
            Box::new(DirSink::create(destination)?)
        };
        // Documents written fresh (the consolidated root, groups stored with a consolidation
        // request) replace the stored ones, last like every document.
        let documents = documents(&source, &items, !options.no_consolidated)?;
        let consolidated = documents.consolidated;
        let replaced: std::collections::HashSet<&str> =
            documents.replaced.iter().map(|(key, _)| key.as_str()).collect();
        let items: Vec<Item> = items.into_iter().filter(|i| !replaced.contains(i.to.as_str())).collect();
        let documents = documents.replaced;
        let (values, bytes) = run(&source, &items, documents, sink, options.progress.as_deref())?;
        Ok(ExportReport { values, bytes, consolidated })
    }
}

/// Whether a destination path names a zip archive.
pub(crate) fn is_zip(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip"))
}
