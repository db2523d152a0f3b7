//! Export: a node of a database, read from one snapshot, into a new folder or zip archive.
//! Values are copied byte for byte; the node becomes the root of the result.

use std::path::Path;

use super::consolidate::documents;
use super::error::TransferError;
use super::options::{ExportOptions, ExportReport};
use super::run::{run, Item};
use super::sink::{check_absent, DirSink, Sink, ZipSink};
use super::source::{Source, StoreSource};
use crate::db::{Database, Transaction};
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
        NodePath::parse(&options.node)?;
        check_absent(destination)?;
        let planned = self.plan_export(options)?;
        let sink: Box<dyn Sink> = if options.zip.unwrap_or_else(|| is_zip(destination)) {
            Box::new(ZipSink::create(destination)?)
        } else {
            Box::new(DirSink::create(destination)?)
        };
        let (values, bytes) =
            run(&planned.source, &planned.items, planned.documents, sink, options.progress.as_deref())?;
        Ok(ExportReport { values, bytes, consolidated: planned.consolidated })
    }

    /// What exporting `options.node` copies, read from one snapshot of the database.
    pub(super) fn plan_export(&self, options: &ExportOptions) -> Result<PlannedExport, Error> {
        let node = NodePath::parse(&options.node)?;
        // sled's reads see the live tree; holding the writer lock keeps it still instead. A
        // version never changes, on any engine.
        let (store, writer) = if let Some(version) = &options.version {
            (self.open_version(version)?.store(), None)
        } else if self.stable_snapshots() {
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
        if !items.iter().any(|i| is_document(&i.to)) {
            return Err(TransferError::NodeNotFound { node: node.to_string() }.into());
        }
        // Documents written fresh (the consolidated root, groups stored with a consolidation
        // request) replace the stored ones, last like every document.
        let documents = documents(&source, &items, !options.no_consolidated)?;
        let replaced: std::collections::HashSet<&str> =
            documents.replaced.iter().map(|(key, _)| key.as_str()).collect();
        let items: Vec<Item> = items.into_iter().filter(|i| !replaced.contains(i.to.as_str())).collect();
        Ok(PlannedExport {
            source,
            items,
            documents: documents.replaced,
            consolidated: documents.consolidated,
            _writer: writer,
        })
    }
}

/// What an export copies: values as stored, and documents written fresh.
pub(super) struct PlannedExport {
    /// The database's snapshot, at the exported node.
    pub source: StoreSource,
    /// Values copied as stored (keys relative to the node): chunks and the documents not replaced.
    pub items: Vec<Item>,
    /// Documents written fresh instead of the stored ones (the consolidated root).
    pub documents: Vec<(String, Vec<u8>)>,
    /// Whether the root's document holds fresh consolidated metadata.
    pub consolidated: bool,
    /// sled: the writer lock, held while the export reads.
    _writer: Option<Transaction>,
}

/// Whether a key (relative to a hierarchy's root) is a node's metadata document.
pub(super) fn is_document(key: &str) -> bool {
    key == METADATA_KEY || key.ends_with("/zarr.json")
}

/// Whether a destination path names a zip archive.
pub(crate) fn is_zip(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("zip"))
}
