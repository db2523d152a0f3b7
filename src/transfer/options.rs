//! Options and reports of import, export and copy.

use std::fmt;
use std::sync::Arc;

use super::plan::PlanError;

/// How far a transfer has got; passed to the progress callback after every window of values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Values written so far (chunks and metadata documents).
    pub values_done: u64,
    /// Values to write in all.
    pub values_total: u64,
    /// Bytes written so far.
    pub bytes_done: u64,
    /// Bytes to write in all.
    pub bytes_total: u64,
}

type Callback = Arc<dyn Fn(Progress) + Send + Sync>;

/// Options of [`crate::Database::import`] and [`crate::copy`].
///
/// ```
/// let seen = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
/// let counter = seen.clone();
/// let options = zarrdb::ImportOptions::default()
///     .at("/imported/run1")
///     .progress(move |p| counter.store(p.values_done, std::sync::atomic::Ordering::Relaxed));
/// # let _ = options;
/// ```
#[derive(Clone, Default)]
pub struct ImportOptions {
    pub(crate) at: String,
    pub(crate) progress: Option<Callback>,
    pub(crate) exclude: Vec<String>,
    pub(crate) skip_unreadable: bool,
}

impl ImportOptions {
    /// Where the source's root node lands (default `/`). Nothing may exist there yet, except an
    /// empty root group when importing at `/`; missing parent groups are created.
    pub fn at(mut self, node: impl Into<String>) -> Self {
        self.at = node.into();
        self
    }

    /// Call `f` after every window of values written.
    pub fn progress(mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// Leave out the nodes whose path matches `pattern`, with everything below them (may be
    /// given many times). A pattern is a node path of the source (`/grid/temp`, the leading `/`
    /// optional) in which `*` matches any run of characters and `?` one character within one
    /// segment; it excludes the nodes it matches and their subtrees, so `/grid` excludes `grid`
    /// and `/grid/*` only its children. Excluded nodes are not read at all. Zarr v3 and v2
    /// sources only ([`crate::error::PlanError::ExcludeUnsupported`] otherwise).
    pub fn exclude(mut self, pattern: impl Into<String>) -> Self {
        self.exclude.push(pattern.into());
        self
    }

    /// Skip a node whose metadata cannot be parsed or converted, or whose codec chain cannot be
    /// built (an unknown codec), with its subtree, instead of failing the import; the report's
    /// `skipped_nodes` names each with the error. Default: off, and such an import fails and
    /// writes nothing. A source that cannot be read still fails the import.
    pub fn skip_unreadable(mut self, skip: bool) -> Self {
        self.skip_unreadable = skip;
        self
    }
}

impl fmt::Debug for ImportOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ImportOptions")
            .field("at", &self.at)
            .field("progress", &self.progress.is_some())
            .field("exclude", &self.exclude)
            .field("skip_unreadable", &self.skip_unreadable)
            .finish()
    }
}

/// Options of [`crate::Database::export`].
///
/// ```
/// let options = zarrdb::ExportOptions::default().node("/run1");
/// # let _ = options;
/// ```
#[derive(Clone, Default)]
pub struct ExportOptions {
    pub(crate) node: String,
    pub(crate) progress: Option<Callback>,
    /// Inverted so that `Default` leaves consolidation on.
    pub(crate) no_consolidated: bool,
    /// `None`: decided by the destination's name.
    pub(crate) zip: Option<bool>,
    pub(crate) overwrite: bool,
    /// `None`: the latest commit.
    pub(crate) version: Option<crate::db::VersionRef>,
}

impl ExportOptions {
    /// Export this version of a database that keeps history (default: the latest commit).
    pub fn version(mut self, version: crate::db::VersionRef) -> Self {
        self.version = Some(version);
        self
    }

    /// The node to export (default `/`): it becomes the root of the folder or archive.
    pub fn node(mut self, node: impl Into<String>) -> Self {
        self.node = node.into();
        self
    }

    /// Whether the exported root group's `zarr.json` gets consolidated metadata (default: yes):
    /// every descendant's document as the export's snapshot holds it, inline, in the form
    /// zarr-python 3 writes (docs/format.md). Nothing is consolidated when the exported node is
    /// an array or an implicit group.
    pub fn consolidated(mut self, on: bool) -> Self {
        self.no_consolidated = !on;
        self
    }

    /// Call `f` after every window of values written.
    pub fn progress(mut self, f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// Write a zip archive (`true`) or a folder (`false`), whatever the destination is named.
    /// By default a destination whose name ends in `.zip` becomes an archive, any other a folder.
    pub fn zip(mut self, zip: bool) -> Self {
        self.zip = Some(zip);
        self
    }

    /// Publishing to object storage ([`crate::Database::publish`]) only: replace what the
    /// destination holds (default: refuse a destination that holds anything), and take over a
    /// claim an export that died left behind. Never while another export to the same place
    /// runs: the two would interleave (the one overtaken fails at its end, its root unwritten).
    /// Exports to folders and archives never overwrite.
    pub fn overwrite(mut self, overwrite: bool) -> Self {
        self.overwrite = overwrite;
        self
    }
}

impl fmt::Debug for ExportOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExportOptions")
            .field("node", &self.node)
            .field("progress", &self.progress.is_some())
            .field("consolidated", &!self.no_consolidated)
            .field("zip", &self.zip)
            .field("overwrite", &self.overwrite)
            .finish()
    }
}

/// What an import or copy did.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ImportReport {
    /// The source's layout: "Zarr v3", "Zarr v2", "Zarr v1" or "Zarr v3 2020 draft".
    pub layout: &'static str,
    /// Metadata documents written (one per node, converted for v2, v1 and the draft).
    pub nodes: u64,
    /// Chunk (or shard) values copied byte for byte.
    pub chunks: u64,
    /// Bytes written in all.
    pub bytes: u64,
    /// Source keys not copied, with the reason (stray files, keys outside any array's grid,
    /// legacy metadata that was converted).
    pub skipped: Vec<(String, String)>,
    /// Names a zip archive held more than once; the last entry of each was imported.
    pub duplicates: Vec<String>,
    /// v3 folders holding nodes but no zarr.json, kept as they are.
    pub implicit_groups: Vec<String>,
    /// The folder inside a zip archive the hierarchy was read from ("" for the archive's root):
    /// an archive made from the hierarchy's parent folder holds it one folder down.
    pub folder: String,
    /// Source keys imported with a change worth knowing, and what it was: an `_ARRAY_DIMENSIONS`
    /// attribute of a v2 array that is not one string per dimension is kept as an attribute and
    /// gives no `dimension_names`.
    pub warnings: Vec<(String, String)>,
    /// Source keys whose consolidated metadata was not copied: v3 group documents imported with
    /// an empty `consolidated_metadata` member (a request for it) in place of theirs, and a v2
    /// `.zmetadata` (the root group gets the request). A database never stores consolidated
    /// metadata (it would go stale); `RawAccess` readers and exports get it afresh.
    pub consolidated_metadata: Vec<String>,
    /// With [`ImportOptions::skip_unreadable`]: the nodes (paths relative to the source's root,
    /// `""` for the root) left out with their subtrees because their metadata cannot be
    /// imported, and why. Their keys are in `skipped` too.
    pub skipped_nodes: Vec<(String, Arc<PlanError>)>,
    /// The nodes left out by [`ImportOptions::exclude`] (the topmost of each excluded subtree,
    /// relative to the source's root). Their keys are in `skipped` too.
    pub excluded: Vec<String>,
}

/// What an export did.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ExportReport {
    /// Values written (chunks and metadata documents).
    pub values: u64,
    /// Bytes of values written.
    pub bytes: u64,
    /// Whether the root's `zarr.json` was written with fresh consolidated metadata.
    pub consolidated: bool,
}
