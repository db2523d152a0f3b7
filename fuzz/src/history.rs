//! Target `history`: the records of a database that keeps history, as damage leaves them. The
//! record decoders of `store::history` take the input's bytes (`zarrdb::fuzzing::history_records`:
//! a decode that succeeds must come back the same from its encoding); then one record of a real
//! database (redb, LMDB or sled, in `/dev/shm` where there is one) is overwritten or removed, and
//! the database reopened and read, walked, diffed, checked, merged into, committed to, expired
//! and collected. Any of those may fail; none may panic or hang.
//!
//! Input: a configuration byte (bits 0-1: backend, redb, LMDB or sled; bit 2: the history
//! after an expiry and a collection, which folded the oldest commits into base records), a key
//! byte (below 128: one of the database's keys under `__zarrdb/h/` or at a Zarr key, by index;
//! from 128: a history key the database does not have, see [`made_key`]), a damage byte (see
//! [`Damage`]), then the bytes the damage writes. The databases are made once per process (the
//! commits of [`build`]) and copied for each input, so that an input costs a copy, one damage and
//! the reads.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::database::folder;
use zarrdb::db::{CommitId, VersionRef};
use zarrdb::fuzzing::{history_records, seal, RawEngine};
use zarrdb::{Array, ArrayMetadata, Backend, DataType, Database, Durability, Error, Group, Store};

/// Where history keeps its records.
const HISTORY: &str = "__zarrdb/h/";
/// The branches and tags [`build`] makes (`gone` is a deleted tag), and a name no one has.
const NAMES: [&str; 6] = ["main", "dev", "v1", "v2", "gone", "none"];
/// The array of [`build`]'s commit whose changes are kept beside its record (24 chunks).
pub const MANY: &str = "a_group_of_chunks_with_a_long_name_each";
/// Commit numbers looked up by id: every commit [`build`] makes, and a few past them.
const MAX_SEQ: u64 = 14;

/// What the damage byte does to the chosen key (its value modulo 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Damage {
    /// Remove the key.
    Remove,
    /// Store the bytes as they are.
    Replace,
    /// Store the bytes followed by their CRC-32C: with the right 4-byte kind at their start,
    /// they pass the checksum every record but an entry ends with.
    Sealed,
    /// XOR the bytes after the first into the value at the offset the first gives (the value
    /// grows with zeros to reach it).
    Patch,
    /// [`Damage::Patch`], then the last 4 bytes made the CRC-32C of those before them again:
    /// a record whose fields changed and whose checksum still holds.
    PatchSealed,
    /// Store the value of another key (the first byte picks it, as the key byte does).
    Copy,
}

impl Damage {
    pub fn of(byte: u8) -> Damage {
        match byte % 6 {
            0 => Damage::Remove,
            1 => Damage::Replace,
            2 => Damage::Sealed,
            3 => Damage::Patch,
            4 => Damage::PatchSealed,
            _ => Damage::Copy,
        }
    }

    /// The damage byte of `self` (the inverse of [`Damage::of`]), to write seeds.
    pub fn byte(self) -> u8 {
        self as u8
    }
}

pub fn backend(config: u8) -> Backend {
    match config & 3 {
        1 => Backend::Lmdb,
        2 => Backend::Sled,
        _ => Backend::Redb,
    }
}

fn builder(backend: Backend) -> zarrdb::DatabaseBuilder {
    let mut builder = Database::builder();
    builder.backend(backend).durability(Durability::Fast).history(true);
    builder
}

fn main_ref() -> VersionRef {
    VersionRef::Branch("main".into())
}

fn commit(db: &Database, message: &str, write: impl FnOnce(Arc<dyn Store>) -> Result<(), Error>) -> Result<(), Error> {
    let txn = db.begin_write()?;
    write(txn.store())?;
    txn.commit_with(message, "fuzz")
}

/// The history every input starts from: a value outside its entry (the chunk of `/a`) and inline
/// ones (the chunks of `/s`, the documents), a commit whose changes are kept beside its record,
/// overwritten and removed values, a branch with commits of its own merged into `main` (a merge
/// commit), a tag on each side of the merge, a deleted tag; with `collected`, an expiry and a
/// collection of what only the expired commits read, then one more commit.
pub fn build(backend: Backend, path: &Path, collected: bool) -> Result<(), Error> {
    let db = builder(backend).create(path)?;
    let big: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
    commit(&db, "first", |store| {
        let a = Array::create(store.clone(), "/a", ArrayMetadata::new(DataType::UInt8, vec![5000], vec![5000]))?;
        a.write_region(&[0], &[5000], &big)?;
        let s = Array::create(store, "/s", ArrayMetadata::new(DataType::UInt8, vec![8], vec![4]))?;
        s.write_region(&[0], &[8], &[1u8, 2, 3, 4, 5, 6, 7, 8])
    })?;
    // Changes too many to fit in the commit's record: kept beside it, under `d/`.
    commit(&db, "many", |store| {
        let meta = ArrayMetadata::new(DataType::UInt8, vec![24], vec![1]);
        let many = Array::create(store, &format!("/{MANY}"), meta)?;
        many.write_region(&[0], &[24], &[3u8; 24])
    })?;
    db.tag("v1", &main_ref())?;
    db.create_branch("dev", &main_ref())?;
    let dev = db.on_branch("dev")?;
    commit(&dev, "dev", |store| {
        Array::open(store.clone(), "/s")?.write_region(&[4], &[2], &[9u8, 9])?;
        Group::create(store, "/b", serde_json::Map::new()).map(drop)
    })?;
    commit(&db, "main", |store| {
        Array::open(store.clone(), "/a")?.write_region(&[10], &[3], &[1u8, 2, 3])?;
        Ok(store.set("notes/n", b"short-lived")?)
    })?;
    db.store().erase("notes/n")?;
    db.merge(&VersionRef::Branch("dev".into()), "main", "merge dev")?;
    db.tag("v2", &main_ref())?;
    db.tag("gone", &VersionRef::Tag("v1".into()))?;
    db.delete_tag("gone")?;
    commit(&dev, "dev again", |store| Array::open(store, "/s")?.write_region(&[0], &[1], &[5u8]))?;
    if collected {
        db.expire(&VersionRef::Tag("v2".into()))?;
        db.collect()?;
        commit(&db, "after", |store| Array::open(store, "/a")?.write_region(&[0], &[2], &[7u8, 7]))?;
    }
    Ok(())
}

/// Copy the folder `from` to `to`, which does not exist.
fn copy_folder(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_folder(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// The closed database [`build`] made for one configuration: its folder (holding it as `db`,
/// with whatever files the engine keeps beside it), and the keys damage picks from with their
/// values.
struct Template {
    dir: PathBuf,
    records: Vec<(String, Vec<u8>)>,
}

fn template(config: u8) -> &'static Template {
    static TEMPLATES: [OnceLock<Template>; 8] = [const { OnceLock::new() }; 8];
    TEMPLATES[usize::from(config & 7)].get_or_init(|| {
        let dir = folder().join(format!("template{}", config & 7));
        std::fs::create_dir_all(&dir).expect("a template folder");
        let path = dir.join("db");
        let backend = backend(config);
        build(backend, &path, config & 4 != 0).unwrap_or_else(|e| panic!("{backend:?}: the history is made: {e}"));
        let raw = RawEngine::open(backend, &path).expect("the engine opens");
        let keys = raw.keys("").expect("the engine lists its keys");
        let records = keys
            .into_iter()
            .filter(|k| k.starts_with(HISTORY) || !k.starts_with("__zarrdb/"))
            .map(|k| {
                let value = raw.get(&k).expect("the engine reads").expect("a listed key has a value");
                (k, value)
            })
            .collect();
        Template { dir, records }
    })
}

/// The keys damage picks from for `config` (the key byte's index) and their values, to write
/// seeds.
pub fn records(config: u8) -> &'static [(String, Vec<u8>)] {
    &template(config).records
}

/// A history key a database may lack, for a key byte from 128: a commit's record or changes, an
/// object, a branch, a tag, a deleted tag's marker, a base entry, by the byte's bits.
pub fn made_key(byte: u8) -> String {
    let n = u64::from(byte >> 3 & 15);
    match byte & 7 {
        0 => format!("{HISTORY}c/{n:016x}"),
        1 => format!("{HISTORY}d/{n:016x}"),
        2 => format!("{HISTORY}o/{n:016x}{:08x}", n % 3),
        3 => format!("{HISTORY}r/b/b{n}"),
        4 => format!("{HISTORY}r/t/t{n}"),
        5 => format!("{HISTORY}r/x/t{n}"),
        6 => format!("{HISTORY}b/a/c/{n}"),
        _ => format!("{HISTORY}e"),
    }
}

fn pick(records: &[(String, Vec<u8>)], byte: u8) -> String {
    match byte {
        0..=127 if !records.is_empty() => records[usize::from(byte) % records.len()].0.clone(),
        _ => made_key(byte),
    }
}

/// `value` with `patch[1..]` XORed in at offset `patch[0]`.
fn patched(mut value: Vec<u8>, patch: &[u8]) -> Vec<u8> {
    let Some((&at, bytes)) = patch.split_first() else { return value };
    let at = usize::from(at);
    if value.len() < at + bytes.len() {
        value.resize(at + bytes.len(), 0);
    }
    for (v, b) in value[at..].iter_mut().zip(bytes) {
        *v ^= b;
    }
    value
}

/// Every value of `store`, and the array when it opens.
fn read_store(store: Arc<dyn Store>) {
    if let Ok(keys) = store.list() {
        for key in keys {
            let _ = store.get(&key);
        }
    }
    if let Ok(array) = Array::open(store, "/a") {
        if crate::readable(&array, array.shape()) {
            let _ = array.read_all::<u8>();
        }
    }
}

fn read_version(db: &Database, at: &VersionRef) {
    let _ = db.resolve(at);
    if let Ok(snapshot) = db.open_version(at) {
        read_store(snapshot.store());
    }
}

/// Everything a reader or writer does with the history: none of it may panic or hang.
fn exercise(db: &Database, pair: u8) {
    let log = db.log();
    let _ = db.tags();
    let _ = db.branches();
    let _ = db.check_history();
    if let Ok(snapshot) = db.begin_read() {
        read_store(snapshot.store());
    }
    for name in NAMES {
        read_version(db, &VersionRef::named(name));
        read_version(db, &VersionRef::Tag(name.into()));
        if let Ok(branch) = db.on_branch(name) {
            let _ = branch.log();
            read_store(branch.store());
        }
    }
    let mut ids: Vec<CommitId> = (0..=MAX_SEQ).filter_map(|n| format!("{n:016x}").parse().ok()).collect();
    if let Ok(log) = &log {
        ids.extend(log.iter().map(|c| c.id));
        if let Some(oldest) = log.last() {
            read_version(db, &VersionRef::AsOf(oldest.time));
        }
    }
    for &id in &ids {
        read_version(db, &VersionRef::Commit(id));
    }
    let named = |i: u8| VersionRef::named(NAMES[usize::from(i) % NAMES.len()]);
    let _ = db.diff(&named(pair), &named(pair >> 4));
    let _ = db.diff(&VersionRef::Tag("v1".into()), &main_ref());
    if let [first, .., last] = ids.as_slice() {
        let _ = db.diff(&VersionRef::Commit(*first), &VersionRef::Commit(*last));
    }
    let _ = db.merge(&VersionRef::Branch("dev".into()), "main", "merge again");
    let _ = db.merge(&main_ref(), "dev", "back");
    let _ = db.store().set("notes/m", b"after the damage");
    let _ = db.expire(&main_ref());
    let _ = db.collect();
    let _ = db.check_history();
    let _ = db.log();
    read_version(db, &main_ref());
}

/// One input.
pub fn run(data: &[u8]) {
    let [config, key, damage, rest @ ..] = data else { return };
    history_records(rest);
    history_records(&seal(rest));
    let Template { dir, records } = template(*config);
    let backend = backend(*config);
    let work = folder().join("work");
    // Whatever an earlier input left (a crash is the end of the process, not of an input).
    let _ = std::fs::remove_dir_all(&work);
    copy_folder(dir, &work).expect("the template is copied");
    let path = work.join("db");

    let key = pick(records, *key);
    let raw = RawEngine::open(backend, &path).expect("the copied engine opens");
    let old = raw.get(&key).expect("the engine reads");
    let new = match Damage::of(*damage) {
        Damage::Remove => None,
        Damage::Replace => Some(rest.to_vec()),
        Damage::Sealed => Some(seal(rest)),
        Damage::Patch => Some(patched(old.clone().unwrap_or_default(), rest)),
        Damage::PatchSealed => {
            let value = patched(old.clone().unwrap_or_default(), rest);
            Some(seal(&value[..value.len().saturating_sub(4)]))
        }
        Damage::Copy => {
            let from = pick(records, rest.first().copied().unwrap_or(0));
            raw.get(&from).expect("the engine reads")
        }
    };
    if let Some(value) = &new {
        history_records(value);
    }
    raw.put(&key, new.as_deref()).expect("the engine writes");
    drop(raw);

    let Ok(db) = builder(backend).open(&path) else { return };
    if new == old {
        // No damage: the history must be whole.
        assert_eq!(db.check_history().map(|p| p.len()).ok(), Some(0), "a sound history has problems");
        assert!(db.log().is_ok(), "the log of a sound history fails");
    }
    exercise(&db, rest.first().copied().unwrap_or(0));
}
