//! `zarrdb demo [PATH]`: a short real run of the main job: a hierarchy with attributes, arrays
//! written in unaligned regions, read back and checked, then shown as a tree.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use zarrdb::{Array, ArrayMetadata, DataType, DirectoryStore, FillValue, Group, Store};

use super::{CliError, CliResult};

pub(crate) fn run(path: Option<PathBuf>) -> CliResult {
    let (root, _keep) = match path {
        Some(p) => {
            if p.exists() && std::fs::read_dir(&p)?.next().is_some() {
                return Err(CliError(format!("demo: \"{}\" exists and is not empty", p.display())));
            }
            (p, None)
        }
        None => {
            let dir = std::env::temp_dir().join(format!("zarrdb-demo-{}", std::process::id()));
            (dir.clone(), Some(dir))
        }
    };
    let store: Arc<dyn Store> = Arc::new(DirectoryStore::create(&root)?);
    let attrs = |v: serde_json::Value| v.as_object().cloned().unwrap_or_default();
    Group::create(store.clone(), "/", attrs(json!({"title": "zarrdb demo", "created_by": "zarrdb demo"})))?;
    Group::create(store.clone(), "/simulation", attrs(json!({"steps": 24, "grid": "64x128"})))?;

    // A 3-d field written one time step at a time, each step split in two unaligned halves.
    let mut meta = ArrayMetadata::new(DataType::Float32, vec![24, 64, 128], vec![6, 32, 32]);
    meta.fill_value = FillValue::from_json(&json!("NaN"), DataType::Float32)?;
    meta.dimension_names = Some(vec![Some("time".into()), Some("y".into()), Some("x".into())]);
    let temperature = Array::create(store.clone(), "/simulation/temperature", meta)?;
    let value = |t: u64, y: u64, x: u64| 15.0 + 10.0 * ((t as f32) / 4.0 + (y as f32) / 9.0).sin() + (x as f32) / 128.0;
    for t in 0..24 {
        for (y0, rows) in [(0u64, 37u64), (37, 27)] {
            let data: Vec<f32> = (y0..y0 + rows).flat_map(|y| (0..128).map(move |x| value(t, y, x))).collect();
            temperature.write_region(&[t, y0, 0], &[1, rows, 128], &data)?;
        }
    }
    // A counter array written only in part: the rest reads as the fill value.
    let counts =
        Array::create(store.clone(), "/simulation/counts", ArrayMetadata::new(DataType::Int64, vec![1000], vec![100]))?;
    counts.write_region(&[250], &[3], &[7i64, 8, 9])?;

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
        return Err(CliError(format!("demo: read-back check failed ({mismatches} mismatching elements)")));
    }
    let stored = temperature.stored_chunks()?.len();
    println!("built a demo hierarchy in {}", root.display());
    println!(
        "temperature: {} elements written in 48 region writes, {stored} chunks stored, read back exactly",
        all.len()
    );
    println!("counts: 3 of 1000 elements written, 1 of 10 chunks stored\n");
    super::tree::run(&root.display().to_string())?;
    if _keep.is_some() {
        std::fs::remove_dir_all(&root)?;
        println!("\n(removed {}; pass a PATH to keep the dataset)", root.display());
    }
    Ok(())
}
