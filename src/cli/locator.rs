//! Store locators (DESIGN.md §11): `dir:PATH`, `zip:PATH`, `redb:PATH`, `lmdb:PATH`, `sled:PATH`,
//! or a bare path whose form decides: `*.zip` is a zip, a folder is a directory store (or an LMDB
//! or sled database when it holds one), any other path a redb file.

use std::path::Path;
use std::sync::Arc;

use zarrdb::db::VersionRef;
use zarrdb::error::{NodeError, PlanError, TransferError};
use zarrdb::hierarchy::RawAccess;
use zarrdb::metadata::METADATA_KEY;
use zarrdb::store::{ObjectStore, ReadableStore};
use zarrdb::transfer::ConvertedStore;
use zarrdb::{Backend, Database, DirectoryStore, Error, Node, Store, ZipStore};

use super::{CliError, CliResult};

/// What a locator names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Directory,
    Zip,
    Database(Backend),
    /// `s3://bucket/prefix` (or `gs://`, `az://`): object storage (the path is the whole locator).
    Object,
}

/// The backend and path of a locator that must name a database (`what` says which command
/// wants it, for the message).
pub(crate) fn database<'l>(locator: &'l str, what: &str) -> Result<(Backend, &'l str), CliError> {
    match parse(locator)? {
        (Kind::Database(backend), path) => Ok((backend, path)),
        _ => Err(CliError::new(format!(
            "{what} \"{locator}\": not a database locator (a redb file, or lmdb:, sled:, redb: + PATH)"
        ))),
    }
}

/// Whether two locators name the same database (same backend, same file after resolving
/// links): such a command reads and writes it through one handle, since a second open of the
/// file would be refused.
pub(crate) fn same_database(a: &str, b: &str) -> Result<bool, CliError> {
    let (a, b) = (split_version(a).0, split_version(b).0);
    Ok(match (parse(a)?, parse(b)?) {
        ((Kind::Database(x), p), (Kind::Database(y), q)) if x == y => {
            match (std::fs::canonicalize(p), std::fs::canonicalize(q)) {
                (Ok(p), Ok(q)) => p == q,
                _ => p == q,
            }
        }
        _ => false,
    })
}

/// A read locator's version: `DB@VERSION` reads that version of a database that keeps history
/// (a tag, a commit id or `main`: `VersionRef::named`). The suffix is taken only when the
/// locator as written names nothing and the part before its last `@` names a database, so a
/// file whose name holds `@` still opens as itself.
pub(crate) fn split_version(locator: &str) -> (&str, Option<&str>) {
    let Some((base, version)) = locator.rsplit_once('@') else { return (locator, None) };
    let names_database = |locator: &str| match parse(locator) {
        Ok((Kind::Database(_), path)) => Path::new(path).exists(),
        _ => false,
    };
    let exists = |locator: &str| match parse(locator) {
        Ok((Kind::Object, _)) => true,
        Ok((_, path)) => Path::new(path).exists(),
        Err(_) => false,
    };
    match !version.is_empty() && !exists(locator) && names_database(base) {
        true => (base, Some(version)),
        false => (locator, None),
    }
}

/// A read-only store of `database` at `version` (as `DB@VERSION` names it), or of its latest
/// commit.
pub(crate) fn read_at(database: &Database, version: Option<&str>) -> Result<Arc<dyn Store>, CliError> {
    Ok(match version {
        Some(version) => database.open_version(&VersionRef::named(version))?.store(),
        None => database.begin_read()?.store(),
    })
}

/// Split a locator into its kind and path, looking at the path when no scheme is given. A
/// locator starting with another scheme (`lmbd:data`, a typo) is refused rather than taken as a
/// file name, so no command creates a database under a misspelled name.
pub(crate) fn parse(locator: &str) -> Result<(Kind, &str), CliError> {
    if ["s3://", "gs://", "az://"].iter().any(|scheme| locator.starts_with(scheme)) {
        return Ok((Kind::Object, locator));
    }
    if let Some(backend) = Backend::named_by(locator) {
        return Ok((Kind::Database(backend), locator));
    }
    if let Some((scheme, path)) = locator.split_once(':') {
        match scheme {
            "dir" => return Ok((Kind::Directory, path)),
            "zip" => return Ok((Kind::Zip, path)),
            "redb" => return Ok((Kind::Database(Backend::Redb), path)),
            "lmdb" => return Ok((Kind::Database(Backend::Lmdb), path)),
            "sled" => return Ok((Kind::Database(Backend::Sled), path)),
            // One letter is a Windows drive (`C:`), not a scheme.
            _ if scheme.len() >= 2 && scheme.bytes().all(|b| b.is_ascii_alphanumeric()) => {
                return Err(CliError::new(format!(
                    "unknown locator scheme \"{scheme}:\" in \"{locator}\": expected dir:, zip:, redb:, lmdb:, \
                     sled:, s3://, gs:// or az:// (write ./{locator} for a file whose name holds a colon)"
                )))
            }
            _ => {}
        }
    }
    let path = Path::new(locator);
    let kind = if locator.ends_with(".zip") {
        Kind::Zip
    } else if path.join("zarr.json").is_file() {
        // A Zarr folder may hold nodes named like engine files; no engine writes a zarr.json.
        Kind::Directory
    } else if path.join("data.mdb").is_file() {
        Kind::Database(Backend::Lmdb)
    } else if path.join("conf").is_file() && path.join("db").is_file() {
        Kind::Database(Backend::Sled)
    } else if path.is_dir() {
        Kind::Directory
    } else {
        Kind::Database(Backend::Redb)
    };
    Ok((kind, locator))
}

/// The root node of `store`, or `None` when the store holds nothing: the root is missing only
/// then (without a `zarr.json`, any key makes it an implicit group), so an empty database is
/// told apart from a damaged one without another listing.
pub(crate) fn open_root(store: Arc<dyn Store>) -> Result<Option<Node>, Error> {
    match Node::open(store, "/") {
        Ok(root) => Ok(Some(root)),
        Err(Error::Node(NodeError::NotFound { .. })) => Ok(None),
        Err(e) => Err(e),
    }
}

/// An opened store, with the database it reads from kept open.
pub(crate) struct Opened {
    pub store: Arc<dyn Store>,
    _database: Option<Database>,
    /// The version read (`DB@VERSION`), if any.
    version: Option<String>,
}

impl Opened {
    /// The database it reads, when it reads one.
    pub(crate) fn database(&self) -> Option<&Database> {
        self._database.as_ref()
    }

    /// The store of the version `locator` names (`DB@VERSION`, or the latest commit) of the
    /// database this one reads, which `locator` names too: through this handle, since a second
    /// open of the file would be refused; this very store when the versions are the same.
    pub(crate) fn same_database(&self, locator: &str) -> Result<Arc<dyn Store>, CliError> {
        let version = split_version(locator).1;
        let Some(database) = self._database.as_ref().filter(|_| version != self.version.as_deref()) else {
            return Ok(self.store.clone());
        };
        read_at(database, version)
    }
}

/// Open the store a locator names, for reading: databases are read through one snapshot, so a
/// command sees one consistent state while writers go on.
pub(crate) fn open(locator: &str) -> Result<Opened, CliError> {
    open_with(locator, false)
}

/// [`open`], verifying every page of a redb file first when `verify` (for `zarrdb check`).
pub(crate) fn open_with(locator: &str, verify: bool) -> Result<Opened, CliError> {
    let (locator, version) = split_version(locator);
    match parse(locator)? {
        (Kind::Directory, path) => {
            let plain = Arc::new(DirectoryStore::open(path)?);
            let store = v3_or_converted(path, plain, || ConvertedStore::open(path))?;
            Ok(Opened { store, _database: None, version: None })
        }
        (Kind::Zip, path) => {
            let plain = Arc::new(ZipStore::open(path)?);
            let store = v3_or_converted(path, plain, || ConvertedStore::open(path))?;
            Ok(Opened { store, _database: None, version: None })
        }
        (Kind::Object, locator) => {
            let plain: Arc<dyn Store> = Arc::new(ObjectStore::open(locator)?);
            let store = v3_or_converted(locator, plain.clone(), || ConvertedStore::over(plain))?;
            Ok(Opened { store, _database: None, version: None })
        }
        (Kind::Database(backend), path) => {
            // Read-only: inspecting a database never changes its files (and works on read-only media).
            // A read-only redb database gets a small cache (`DatabaseBuilder::redb_cache_size`).
            let database = Database::builder().backend(backend).verify_on_open(verify).read_only(true).open(path)?;
            let store = read_at(&database, version)?;
            Ok(Opened { store, _database: Some(database), version: version.map(str::to_owned) })
        }
    }
}

/// Run `edit` on the store a locator names, as one transaction on a database: `edit` reads and
/// writes through the transaction's store, and the transaction commits when `edit` succeeds (a
/// failure, or a kill, leaves the database as it was). A directory store is edited in place,
/// without that guarantee; it must hold Zarr v3 (or nothing yet), since the commands write v3
/// documents. With `create`, a missing database or folder is created first (as `create` and
/// `mkgroup` do); zip archives are read-only.
pub(crate) fn edit(locator: &str, create: bool, edit: impl FnOnce(Arc<dyn Store>) -> CliResult) -> CliResult {
    match parse(locator)? {
        (Kind::Directory, path) => {
            let store = if create { DirectoryStore::create(path)? } else { DirectoryStore::open(path)? };
            refuse_older_layouts(path, &store)?;
            let store: Arc<dyn Store> = Arc::new(store);
            edit(store.clone())?;
            refresh_consolidated(store.as_ref())
        }
        (Kind::Object, locator) => Err(CliError::new(format!(
            "{locator}: object storage is not edited in place; copy it into a database (`zarrdb cp`), edit that, \
             and copy it back"
        ))),
        (Kind::Zip, path) => Err(CliError::new(format!(
            "{path}: zip archives are read-only here; import it into a database (`zarrdb import`), change that, \
             and export it again"
        ))),
        (Kind::Database(backend), path) => {
            let mut builder = Database::builder();
            builder.backend(backend);
            let database = if create { builder.create(path)? } else { builder.open(path)? };
            let transaction = database.begin_write()?;
            edit(transaction.store())?;
            transaction.commit()?;
            Ok(())
        }
    }
}

/// A directory store's root document keeps consolidated metadata (zarr-python and xarray write
/// it) as it was stored: after an edit it is computed afresh from the documents there now, so a
/// reader that trusts it (`consolidated=True`) sees the change. (A database computes it on every
/// read and never stores it.)
pub(crate) fn refresh_consolidated(store: &dyn Store) -> CliResult {
    if let Some(fresh) = RawAccess::new(store).get(METADATA_KEY)? {
        if store.get(METADATA_KEY)?.as_deref() != Some(fresh.as_slice()) {
            store.set(METADATA_KEY, &fresh)?;
        }
    }
    Ok(())
}

/// A folder holding Zarr v2, a v1 array or the 2020 draft is refused for editing: the commands
/// write Zarr v3 documents, which would hide the older metadata beside them.
pub(crate) fn refuse_older_layouts(path: &str, store: &DirectoryStore) -> CliResult {
    if store.size("zarr.json")?.is_some() {
        return Ok(());
    }
    match ConvertedStore::open(path) {
        Ok(converted) if converted.layout() != "Zarr v3" => Err(CliError::new(format!(
            "{path} holds {}; the editing commands write Zarr v3: import it into a database (`zarrdb import`), \
             edit that, and export it",
            converted.layout()
        ))),
        // Zarr v3, or nothing yet.
        Ok(_) | Err(Error::Transfer(TransferError::Plan(PlanError::NoHierarchy { .. }))) => Ok(()),
        // Metadata the plan cannot read: nothing says which layout is there, so nothing is written.
        Err(e) => Err(CliError::new(format!("{path}: {e}"))),
    }
}

/// A folder, zip archive or bucket as it is when it holds Zarr v3; otherwise the v3 view of it
/// that an import would write (Zarr v2, a v1 array, the 2020 draft), with a note on stderr; and an error
/// when it holds no Zarr hierarchy at all, rather than an empty implicit group.
fn v3_or_converted(
    path: &str,
    plain: Arc<dyn Store>,
    converted: impl FnOnce() -> Result<ConvertedStore, Error>,
) -> Result<Arc<dyn Store>, CliError> {
    if plain.size("zarr.json")?.is_some() {
        return Ok(plain);
    }
    match converted() {
        // v3 without a root document: its root is an implicit group, read as it is.
        Ok(converted) if converted.layout() == "Zarr v3" => Ok(plain),
        Ok(converted) => {
            eprintln!(
                "zarrdb: note: {path} holds {}; shown as the Zarr v3 hierarchy `zarrdb import` would make of it",
                converted.layout()
            );
            Ok(Arc::new(converted))
        }
        Err(Error::Transfer(TransferError::Plan(PlanError::NoHierarchy { .. }))) => Err(CliError::new(format!(
            "{path} holds no Zarr hierarchy: no zarr.json, .zarray, .zgroup or Zarr v1 meta in it"
        ))),
        Err(e) => Err(CliError::new(format!("{path}: {e}"))),
    }
}
