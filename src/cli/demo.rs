//! `zarrdb demo [LOCATOR]`: a short real run of the main job: a hierarchy with attributes, arrays
//! written in unaligned regions one transaction per step, read back and checked, then shown as a tree.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use zarrdb::{Array, ArrayMetadata, DataType, Database, DirectoryStore, FillValue, Group, Store};

use super::locator::{self, Kind};
use super::{CliError, CliResult};

/// Where the demo writes: a database (each time step one transaction) or a directory store.
enum Target {
    Database(Database),
    Directory(Arc<dyn Store>),
}

impl Target {
    fn store(&self) -> Arc<dyn Store> {
        match self {
            Target::Database(db) => db.store(),
            Target::Directory(store) => store.clone(),
        }
    }

    /// Run `f` as one atomic step where the target has transactions.
    fn atomically(&self, f: impl FnOnce(Arc<dyn Store>) -> Result<(), zarrdb::Error>) -> Result<(), zarrdb::Error> {
        match self {
            Target::Database(db) => {
                let txn = db.begin_write()?;
                f(txn.store())?;
                txn.commit()
            }
            Target::Directory(store) => f(store.clone()),
        }
    }
}

pub(crate) fn run(locator: Option<String>) -> CliResult {
    let temporary = locator.is_none();
    let locator = locator.unwrap_or_else(|| {
        let file = std::env::temp_dir().join(format!("zarrdb-demo-{}.zarrdb", std::process::id()));
        format!("redb:{}", file.display())
    });
    let (kind, path) = locator::parse(&locator)?;
    let path = PathBuf::from(path);
    if path.exists() && (path.is_file() || std::fs::read_dir(&path)?.next().is_some()) {
        return Err(CliError::new(format!("demo: \"{}\" exists and is not empty", path.display())));
    }
    let target = match kind {
        Kind::Database(backend) => Target::Database(Database::builder().backend(backend).create(&path)?),
        Kind::Directory => Target::Directory(Arc::new(DirectoryStore::create(&path)?)),
        Kind::Zip => return Err(CliError::new("demo: zip stores are not available in this build yet")),
        Kind::Object => {
            return Err(CliError::new("demo: builds a local store; copy it to object storage with zarrdb cp"))
        }
    };
    let store = target.store();
    let attrs = |v: serde_json::Value| v.as_object().cloned().unwrap_or_default();
    target.atomically(|s| {
        Group::create(s.clone(), "/", attrs(json!({"title": "zarrdb demo", "created_by": "zarrdb demo"})))?;
        Group::create(s, "/simulation", attrs(json!({"steps": 24, "grid": "64x128", "steps_written": 0})))?;
        Ok(())
    })?;

    // A 3-d field written one time step at a time, each step split in two unaligned halves, and
    // the step counter in the group's attributes: one transaction per step, so a reader never
    // sees a step half-written or a counter ahead of the data.
    let mut meta = ArrayMetadata::new(DataType::Float32, vec![24, 64, 128], vec![6, 32, 32]);
    meta.fill_value = FillValue::from_json(&json!("NaN"), DataType::Float32)?;
    meta.dimension_names = Some(vec![Some("time".into()), Some("y".into()), Some("x".into())]);
    Array::create(store.clone(), "/simulation/temperature", meta)?;
    let value = |t: u64, y: u64, x: u64| 15.0 + 10.0 * ((t as f32) / 4.0 + (y as f32) / 9.0).sin() + (x as f32) / 128.0;
    for t in 0..24 {
        target.atomically(|s| {
            let temperature = Array::open(s.clone(), "/simulation/temperature")?;
            for (y0, rows) in [(0u64, 37u64), (37, 27)] {
                let data: Vec<f32> = (y0..y0 + rows).flat_map(|y| (0..128).map(move |x| value(t, y, x))).collect();
                temperature.write_region(&[t, y0, 0], &[1, rows, 128], &data)?;
            }
            let mut group = Group::open(s, "/simulation")?;
            let mut attributes = group.attributes();
            attributes.insert("steps_written".into(), json!(t + 1));
            group.set_attributes(attributes)
        })?;
    }
    // A counter array written only in part: the rest reads as the fill value.
    Array::create(store.clone(), "/simulation/counts", ArrayMetadata::new(DataType::Int64, vec![1000], vec![100]))?
        .write_region(&[250], &[3], &[7i64, 8, 9])?;

    // Read everything back through fresh handles and check it.
    let temperature = Array::open(store.clone(), "/simulation/temperature")?;
    let all: Vec<f32> = temperature.read_all()?;
    let mut mismatches = 0;
    for (i, v) in all.iter().enumerate() {
        let (t, y, x) = ((i / (64 * 128)) as u64, ((i / 128) % 64) as u64, (i % 128) as u64);
        if v.to_bits() != value(t, y, x).to_bits() {
            mismatches += 1;
        }
    }
    let counts: Vec<i64> = Array::open(store.clone(), "/simulation/counts")?.read_all()?;
    if mismatches != 0 || counts[250..253] != [7, 8, 9] || counts.iter().filter(|&&c| c != 0).count() != 3 {
        return Err(CliError::new(format!("demo: read-back check failed ({mismatches} mismatching elements)")));
    }
    let stored = temperature.stored_chunks()?.len();
    let steps = Group::open(store.clone(), "/simulation")?.attributes().get("steps_written").cloned();
    if steps != Some(json!(24)) {
        return Err(CliError::new(format!("demo: read-back check failed (steps_written is {steps:?})")));
    }
    let how = match &target {
        Target::Database(db) => format!("a {} database, one transaction per time step", db.backend().name()),
        Target::Directory(_) => "a directory store (no transactions)".to_owned(),
    };
    outln!("built a demo hierarchy in {} ({how})", path.display())?;
    outln!(
        "temperature: {} elements written in 48 region writes over 24 steps, {stored} chunks stored, read back exactly",
        all.len()
    )?;
    outln!("counts: 3 of 1000 elements written, 1 of 10 chunks stored\n")?;
    // The tree below opens the database afresh; this handle must be closed first.
    drop((temperature, store, target));
    super::tree::run(&locator, false, false)?;
    if temporary {
        std::fs::remove_file(&path)?;
        outln!("\n(removed {}; pass a LOCATOR to keep the dataset)", path.display())?;
    }
    Ok(())
}
