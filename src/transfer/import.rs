//! Import: a folder or zip archive into a database, in one bulk transaction; and copy between
//! any two stores. The source is listed, the plan (`plan/`) turns its layout into v3 keys and
//! documents, the destination is checked, then every value is copied (`run.rs`).

use std::path::Path;
use std::sync::Arc;

use super::error::TransferError;
use super::options::{ImportOptions, ImportReport};
use super::plan::{self, PlanError};
use super::run::{listed_bytes, run, Item};
use super::sink::{DbSink, Sink, StoreSink};
use super::source::{self, Source, StoreSource};
use crate::db::Database;
use crate::error::Error;
use crate::hierarchy::{NodePath, RawAccess};
use crate::metadata::{GroupMetadata, METADATA_KEY};
use crate::store::Store;

impl Database {
    /// Import the Zarr hierarchy in a folder or zip archive (v3, v2, a v1 array or the 2020 v3
    /// draft layout) in one transaction: on any error, or if the process dies, nothing of it is
    /// in the database. Chunk bytes are copied as they are; v2, v1 and draft metadata becomes v3.
    ///
    /// ```
    /// use zarrdb::{Array, ArrayMetadata, DataType, Database, DirectoryStore, ImportOptions};
    /// let dir = tempfile::tempdir().unwrap();
    /// let folder = dir.path().join("data.zarr");
    /// let store = std::sync::Arc::new(DirectoryStore::create(&folder)?);
    /// let a = Array::create(store, "/t", ArrayMetadata::new(DataType::UInt8, vec![3], vec![2]))?;
    /// a.write_region(&[0], &[3], &[1u8, 2, 3])?;
    ///
    /// let db = Database::create(dir.path().join("one.zarrdb"))?;
    /// let report = db.import(&folder, &ImportOptions::default().at("/run1"))?;
    /// assert_eq!(report.chunks, 2);
    /// assert_eq!(Array::open(db.store(), "/run1/t")?.read_all::<u8>()?, vec![1, 2, 3]);
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn import(&self, source: impl AsRef<Path>, options: &ImportOptions) -> Result<ImportReport, Error> {
        let source = source::open_path(source.as_ref())?;
        self.take_in(source.as_ref(), options)
    }

    /// Plan the copy of `source` to `options.at`, then run it in one bulk transaction.
    fn take_in(&self, source: &dyn Source, options: &ImportOptions) -> Result<ImportReport, Error> {
        let at = NodePath::parse(&options.at)?;
        let prepared = prepare(source, &at, options)?;
        let bytes = listed_bytes(&prepared.items, &prepared.documents);
        let bulk = self.begin_bulk(bytes)?;
        let parents = claim(bulk.before().as_ref(), &at)?;
        finish(source, prepared, parents, Box::new(DbSink(bulk)), options)
    }
}

/// Copy the hierarchy at the root of `source` into `destination` at `options.at`, converting v2,
/// v1 and draft metadata as [`Database::import`] does. A plain store has no transaction: if the
/// copy fails midway, what was written stays (chunks first, metadata documents last). To import
/// into a database atomically, use [`Database::import`].
///
/// ```
/// use std::sync::Arc;
/// use zarrdb::{Array, ArrayMetadata, DataType, ImportOptions, MemoryStore, Store};
/// let from: Arc<dyn Store> = Arc::new(MemoryStore::new());
/// Array::create(from.clone(), "/a", ArrayMetadata::new(DataType::Int16, vec![4], vec![4]))?
///     .write_region(&[0], &[4], &[1i16, 2, 3, 4])?;
/// let to: Arc<dyn Store> = Arc::new(MemoryStore::new());
/// zarrdb::copy(from, to.clone(), &ImportOptions::default())?;
/// assert_eq!(Array::open(to, "/a")?.read_all::<i16>()?, vec![1, 2, 3, 4]);
/// # Ok::<(), zarrdb::Error>(())
/// ```
pub fn copy(
    source: Arc<dyn Store>,
    destination: Arc<dyn Store>,
    options: &ImportOptions,
) -> Result<ImportReport, Error> {
    copy_node(source, "/", destination, options)
}

/// [`copy`] of the node at `node` of `source` with everything below it, which lands at
/// `options.at` in `destination` (an array may be copied alone).
///
/// ```
/// use std::sync::Arc;
/// use zarrdb::{Array, ArrayMetadata, DataType, ImportOptions, MemoryStore, Store};
/// let from: Arc<dyn Store> = Arc::new(MemoryStore::new());
/// Array::create(from.clone(), "/runs/a", ArrayMetadata::new(DataType::Int16, vec![2], vec![2]))?
///     .write_region(&[0], &[2], &[7i16, 8])?;
/// let to: Arc<dyn Store> = Arc::new(MemoryStore::new());
/// zarrdb::transfer::copy_node(from, "/runs/a", to.clone(), &ImportOptions::default().at("/b"))?;
/// assert_eq!(Array::open(to, "/b")?.read_all::<i16>()?, vec![7, 8]);
/// # Ok::<(), zarrdb::Error>(())
/// ```
pub fn copy_node(
    source: Arc<dyn Store>,
    node: &str,
    destination: Arc<dyn Store>,
    options: &ImportOptions,
) -> Result<ImportReport, Error> {
    let at = NodePath::parse(&options.at)?;
    let source = node_source(source, node)?;
    let prepared = prepare(&source, &at, options)?;
    let parents = claim(destination.as_ref(), &at)?;
    let documents: Vec<(String, Vec<u8>)> = prepared.documents.clone();
    let report = finish(&source, prepared, parents, Box::new(StoreSink(destination.as_ref())), options)?;
    // A group that had consolidated metadata is written with an empty request for it, which a
    // database fills on every read (and must never store filled). A plain store (no multi-key
    // transactions: a folder, memory) serves documents as stored, and zarr-python would take the
    // empty member for an empty hierarchy: fill it now, from what was copied.
    if destination.capabilities().atomic_multi_key {
        return Ok(report);
    }
    let raw = RawAccess::new(destination.as_ref());
    for (key, written) in documents {
        match raw.get(&key)? {
            Some(fresh) if fresh != written => destination.set(&key, &fresh)?,
            _ => {}
        }
    }
    Ok(report)
}

impl Database {
    /// Copy the node at `node` of `source` (any store: another database's snapshot, a folder, a
    /// zip archive) with everything below it into this database at `options.at`, in one
    /// transaction as [`Database::import`] does, chunk bytes as they are.
    ///
    /// ```
    /// use zarrdb::{Array, ArrayMetadata, DataType, Database, ImportOptions};
    /// let dir = tempfile::tempdir().unwrap();
    /// let one = Database::create(dir.path().join("one.zarrdb"))?;
    /// Array::create(one.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![2], vec![2]))?
    ///     .write_region(&[0], &[2], &[4u8, 2])?;
    /// let two = Database::create(dir.path().join("two.zarrdb"))?;
    /// two.copy_from(one.begin_read()?.store(), "/a", &ImportOptions::default().at("/copy"))?;
    /// assert_eq!(Array::open(two.store(), "/copy")?.read_all::<u8>()?, vec![4, 2]);
    /// # Ok::<(), zarrdb::Error>(())
    /// ```
    pub fn copy_from(
        &self,
        source: Arc<dyn Store>,
        node: &str,
        options: &ImportOptions,
    ) -> Result<ImportReport, Error> {
        self.take_in(&node_source(source, node)?, options)
    }
}

/// The keys below `node` of `store`, read as a hierarchy of their own; an error when nothing is
/// there.
fn node_source(store: Arc<dyn Store>, node: &str) -> Result<StoreSource, Error> {
    let node = NodePath::parse(node)?;
    let source = StoreSource { store, prefix: node.key_prefix() };
    if !node.is_root() && source.store.list_prefix(&source.prefix)?.is_empty() {
        return Err(TransferError::NodeNotFound { node: node.to_string() }.into());
    }
    Ok(source)
}

/// What to copy, worked out before the destination is touched.
pub(super) struct Prepared {
    pub items: Vec<Item>,
    pub documents: Vec<(String, Vec<u8>)>,
    pub report: ImportReport,
}

/// List the source and plan the copy to `at`, leaving out what `options` excludes.
pub(super) fn prepare(source: &dyn Source, at: &NodePath, options: &ImportOptions) -> Result<Prepared, Error> {
    let (all, all_sizes): (Vec<String>, Vec<u64>) = source.list()?.into_iter().map(|l| (l.key, l.size)).unzip();
    // An archive made from the hierarchy's parent folder holds it one folder down.
    let root = source.hierarchy_folder(&all);
    let mut skipped = Vec::new();
    let (keys, key_sizes) = if root.is_empty() {
        (all, all_sizes)
    } else {
        let mut inside = (Vec::with_capacity(all.len()), Vec::with_capacity(all.len()));
        for (key, size) in all.into_iter().zip(all_sizes) {
            match key.strip_prefix(&root) {
                Some(rest) => {
                    inside.0.push(rest.to_owned());
                    inside.1.push(size);
                }
                None => skipped.push((key, format!("outside the hierarchy's folder {root}"))),
            }
        }
        inside
    };
    let sizes: std::collections::HashMap<&str, u64> = keys.iter().map(String::as_str).zip(key_sizes).collect();
    // A read error is kept whole here and returned instead of the plan's wrapper of it.
    let mut read_error: Option<Error> = None;
    let select = plan::Select { exclude: options.exclude.clone(), skip_unreadable: options.skip_unreadable };
    let mut read = |key: &str| {
        source.read(&format!("{root}{key}")).map_err(|e| {
            let wrapped = PlanError::Read { key: key.to_owned(), source: e.to_string().into() };
            read_error.get_or_insert(e);
            wrapped
        })
    };
    let planned = plan::plan_selected(&keys, &mut read, &select);
    let planned = match (planned, read_error) {
        (Ok(p), _) => p,
        (Err(_), Some(e)) => return Err(e),
        (Err(e), None) => return Err(TransferError::from(e).into()),
    };
    let prefix = at.key_prefix();
    let items = planned
        .chunks
        .into_iter()
        .map(|(from, to)| {
            let size = sizes[from.as_str()];
            Item { from: format!("{root}{from}"), to: format!("{prefix}{to}"), size }
        })
        .collect();
    let documents = planned.metadata.into_iter().map(|(k, v)| (format!("{prefix}{k}"), v)).collect();
    skipped.extend(planned.skipped);
    let report = ImportReport {
        layout: planned.layout.name(),
        skipped,
        duplicates: source.duplicates(),
        implicit_groups: planned.implicit_groups,
        folder: root,
        warnings: planned.warnings,
        consolidated_metadata: planned.consolidated,
        skipped_nodes: planned.skipped_nodes,
        excluded: planned.excluded,
        ..ImportReport::default()
    };
    Ok(Prepared { items, documents, report })
}

/// Check that nothing is at `at` in `store` (an empty root group may be replaced) and that no
/// ancestor is an array; returns the group documents of missing ancestors, to be written too.
fn claim(store: &dyn Store, at: &NodePath) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let occupied = |reason: String| TransferError::NodeOccupied { node: at.to_string(), reason };
    let listing = store.list_dir(&at.key_prefix())?;
    if !listing.prefixes.is_empty() || listing.keys.iter().any(|k| k != METADATA_KEY) {
        return Err(occupied("it holds nodes or keys already".into()).into());
    }
    if let Some(doc) = store.get(&at.metadata_key())? {
        let empty_root_group = at.is_root() && GroupMetadata::from_json(&doc).is_ok_and(|g| g.attributes.is_empty());
        if !empty_root_group {
            return Err(occupied("a node exists there already".into()).into());
        }
    }
    let mut parents = Vec::new();
    for ancestor in at.ancestors() {
        match store.get(&ancestor.metadata_key())? {
            None => parents.push((ancestor.metadata_key(), GroupMetadata::default().to_json_bytes())),
            Some(doc) if GroupMetadata::from_json(&doc).is_ok() => {}
            Some(_) => return Err(occupied(format!("{ancestor} is not a group")).into()),
        }
    }
    Ok(parents)
}

fn finish(
    source: &dyn Source,
    prepared: Prepared,
    parents: Vec<(String, Vec<u8>)>,
    sink: Box<dyn Sink + '_>,
    options: &ImportOptions,
) -> Result<ImportReport, Error> {
    let Prepared { items, mut documents, mut report } = prepared;
    report.nodes = documents.len() as u64;
    report.chunks = items.len() as u64;
    documents.extend(parents);
    let (_, bytes) = run(source, &items, documents, sink, options.progress.as_deref())?;
    report.bytes = bytes;
    Ok(report)
}
