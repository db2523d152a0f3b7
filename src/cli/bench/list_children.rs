//! `list_children`: a group with 100 child arrays, one of them holding 1,000,000 chunk keys; the
//! time to list the group's children. Listing must seek past each child's keys, not scan them.

use std::time::Instant;

use serde_json::{json, Map, Value};
use zarrdb::{Array, ArrayMetadata, DataType, Group};

use super::median;
use super::target::Target;
use crate::cli::CliError;

const CHILDREN: usize = 100;
const CHUNK_KEYS: u64 = 1_000_000;
const LISTINGS: usize = 51;

pub(crate) fn run(target: &Target) -> Result<Value, CliError> {
    let store = target.create()?;
    Group::create(store.clone(), "/g", Map::new())?;
    for i in 1..CHILDREN {
        Array::create(store.clone(), &format!("/g/a{i:03}"), ArrayMetadata::new(DataType::Int32, vec![10], vec![10]))?;
    }
    // One element per chunk: a million chunk keys under /g/a000/c/, written in one commit.
    let big = Array::create(store.clone(), "/g/a000", ArrayMetadata::new(DataType::Int32, vec![CHUNK_KEYS], vec![1]))?;
    let values: Vec<i32> = (1..=CHUNK_KEYS as i32).collect();
    big.write_region(&[0], &[CHUNK_KEYS], &values)?;
    drop((big, store));

    let store = target.reopen()?;
    let group = Group::open(store.clone(), "/g")?;
    let mut times = Vec::with_capacity(LISTINGS);
    for _ in 0..LISTINGS {
        let start = Instant::now();
        let names = group.child_names()?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
        if names.len() != CHILDREN {
            return Err(CliError::new(format!("list_children: listed {} children, expected {CHILDREN}", names.len())));
        }
    }
    let chunk_keys = Array::open(store, "/g/a000")?.stored_chunks()?.len();
    if chunk_keys as u64 != CHUNK_KEYS {
        return Err(CliError::new(format!("list_children: {chunk_keys} chunk keys stored, expected {CHUNK_KEYS}")));
    }
    Ok(json!({
        "workload": "list_children",
        "backend": target.name,
        "ms": (median(times) * 1000.0).round() / 1000.0,
        "chunk_keys": chunk_keys,
        "children": CHILDREN,
    }))
}
