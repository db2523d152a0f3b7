//! `zarrdb diff A[:NODE] B[:NODE] [--json]`: the differences between two hierarchies (or
//! nodes), in any two stores: nodes present on one side only, node kinds, array metadata,
//! attributes, and values. Values are compared only where shape and data type agree. With the
//! same metadata on both sides, only chunks stored on either side are looked at, and only those
//! whose stored bytes differ are decoded; otherwise every element is read, region by region in
//! bounded memory.
//! Exit status 0 when equal, 1 when anything differs.

use std::sync::Arc;

use serde_json::{json, Map, Value};
use zarrdb::{Array, DataType, Node, Store};

use super::copy::split;
use super::locator;
use super::region::for_each_slab;
use super::{progress, render, CliError, CliResult};

/// Values are compared in regions of at most this many bytes per side.
const SLAB_BYTES: u64 = 32 << 20;

/// One difference: the node's path relative to the compared nodes, what differs, details.
struct Difference {
    path: String,
    kind: &'static str,
    detail: Value,
    text: String,
}

pub(crate) fn run(a: &str, b: &str, as_json: bool) -> CliResult {
    let ((store_a, node_a), (store_b, node_b)) = (split(a)?, split(b)?);
    let opened_a = locator::open(store_a)?;
    // The same database on both sides is read through one handle (a second open of the file
    // would be refused), from one snapshot.
    let same = locator::same_database(store_a, store_b)?;
    let opened_b = if same { None } else { Some(locator::open(store_b)?) };
    let side_b = match &opened_b {
        Some(opened) => opened.store.clone(),
        // Two versions of one database (`DB@v1 DB@v2`) read through its one handle.
        None => opened_a.same_database(store_b)?,
    };
    let root_a = Node::open(opened_a.store.clone(), node_a)?;
    let root_b = Node::open(side_b, node_b)?;
    let mut found = Vec::new();
    let spinner = progress::spinner("diff");
    let compared = compare(&root_a, &root_b, "/", &mut found);
    progress::finish(spinner);
    compared?;
    let printed = if as_json {
        let list: Vec<Value> =
            found.iter().map(|d| json!({"path": d.path, "kind": d.kind, "detail": d.detail})).collect();
        outln!("{}", serde_json::to_string_pretty(&json!({"equal": found.is_empty(), "differences": list}))?)
    } else {
        found.iter().try_for_each(|d| outln!("{}: {}", d.path, d.text))
    };
    // A reader that went away (`| head -1`) still gets the answer in the exit status.
    if let Err(e) = printed {
        return Err(if e.is_quiet() && !found.is_empty() { CliError::differs() } else { e });
    }
    if found.is_empty() {
        Ok(())
    } else {
        Err(CliError::differs())
    }
}

fn compare(a: &Node, b: &Node, path: &str, found: &mut Vec<Difference>) -> CliResult {
    let mut differ =
        |kind, detail: Value, text: String| found.push(Difference { path: path.to_owned(), kind, detail, text });
    match (a, b) {
        (Node::Group(ga), Node::Group(gb)) => {
            attributes(&ga.attributes(), &gb.attributes(), &mut differ);
            let (names_a, names_b) = (ga.child_names()?, gb.child_names()?);
            let mut names: Vec<&String> = names_a.iter().chain(&names_b).collect();
            names.sort();
            names.dedup();
            for name in names {
                let child = format!("{}/{name}", path.trim_end_matches('/'));
                let (in_a, in_b) = (names_a.contains(name), names_b.contains(name));
                if in_a && in_b {
                    let open = |side: &Arc<dyn Store>, parent: &zarrdb::NodePath| -> Result<Node, CliError> {
                        Ok(Node::open(side.clone(), parent.child(name)?.as_str())?)
                    };
                    compare(&open(ga.store(), ga.path())?, &open(gb.store(), gb.path())?, &child, found)?;
                } else {
                    let (kind, text) = if in_a { ("only_in_a", "only in A") } else { ("only_in_b", "only in B") };
                    found.push(Difference { path: child, kind, detail: Value::Null, text: text.into() });
                }
            }
        }
        (Node::Array(xa), Node::Array(xb)) => {
            attributes(xa.attributes(), xb.attributes(), &mut differ);
            let (ma, mb) = (metadata(xa), metadata(xb));
            let mut fields: Vec<&String> = ma.keys().chain(mb.keys()).collect();
            fields.sort();
            fields.dedup();
            for field in fields {
                let (va, vb) = (ma.get(field).unwrap_or(&Value::Null), mb.get(field).unwrap_or(&Value::Null));
                if va != vb {
                    differ("metadata", json!({"field": field, "a": va, "b": vb}), format!("{field} {va} != {vb}"));
                }
            }
            if xa.shape() == xb.shape() && xa.data_type() == xb.data_type() {
                values(xa, xb, &mut differ)?;
            }
        }
        _ => {
            let kind = |n: &Node| if matches!(n, Node::Array(_)) { "array" } else { "group" };
            differ("node_type", json!({"a": kind(a), "b": kind(b)}), format!("{} in A, {} in B", kind(a), kind(b)));
        }
    }
    Ok(())
}

/// An array's metadata as compared: its `zarr.json` members other than the attributes.
fn metadata(a: &Array) -> Map<String, Value> {
    let mut doc = match a.metadata().to_json() {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    doc.remove("attributes");
    doc
}

fn attributes(a: &Map<String, Value>, b: &Map<String, Value>, differ: &mut impl FnMut(&'static str, Value, String)) {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let (va, vb) = (a.get(key), b.get(key));
        if va != vb {
            let show = |v: Option<&Value>| v.map_or_else(|| "(absent)".to_owned(), Value::to_string);
            differ(
                "attributes",
                json!({"key": key, "a": va, "b": vb}),
                format!("attribute {key}: {} != {}", show(va), show(vb)),
            );
        }
    }
}

fn values(a: &Array, b: &Array, differ: &mut impl FnMut(&'static str, Value, String)) -> CliResult {
    let shape = a.shape().to_vec();
    let mut tally = Tally::default();
    if metadata(a) == metadata(b) {
        // The same grid and codecs: only chunks stored on either side can differ (a chunk absent
        // on both reads as the same fill value), and equal stored bytes mean equal values.
        let (ca, cb) = (a.stored_chunks()?, b.stored_chunks()?);
        let mut coords: Vec<Vec<u64>> = ca.into_iter().chain(cb).map(|(c, _)| c).collect();
        coords.sort();
        coords.dedup();
        for c in coords {
            let (ka, kb) = (a.chunk_key(&c), b.chunk_key(&c));
            if a.store().get(&ka)? == b.store().get(&kb)? {
                continue;
            }
            // The chunk's box, cut at the array's edge.
            let (offset, edges) = a.metadata().chunk(&c);
            let region: Vec<u64> = offset.iter().zip(&edges).zip(&shape).map(|((o, n), s)| (*n).min(s - o)).collect();
            // In slabs: a large shard is not decoded whole on both sides at once.
            let size = if a.data_type().is_variable_length() { 16 } else { a.data_type().size() as u64 };
            for_each_slab(&offset, &region, size, SLAB_BYTES, |o, r| compare_region(a, b, o, r, &mut tally))?;
        }
    } else {
        let data_type = a.data_type();
        let size = if data_type.is_variable_length() { 16 } else { data_type.size() as u64 };
        for_each_slab(&vec![0; shape.len()], &shape, size, SLAB_BYTES, |offset, region| {
            compare_region(a, b, offset, region, &mut tally)
        })?;
    }
    if let Some((at, x, y)) = tally.first {
        let total = render::product(shape.iter().copied());
        differ(
            "values",
            json!({"differing_elements": tally.count, "elements": total, "first": at, "a": x, "b": y}),
            format!("{} of {total} elements differ, first at {at:?}: {x} != {y}", tally.count),
        );
    }
    Ok(())
}

/// Differing elements counted so far, and the first one: its coordinates and both values.
#[derive(Default)]
struct Tally {
    count: u64,
    first: Option<(Vec<u64>, Value, Value)>,
}

/// Compare the region `offset`/`region` of both arrays (same shape and data type).
fn compare_region(a: &Array, b: &Array, offset: &[u64], region: &[u64], tally: &mut Tally) -> CliResult {
    let mut note = |index: usize, x: Value, y: Value| {
        tally.count += 1;
        if tally.first.is_none() {
            tally.first = Some((coordinates(offset, region, index as u64), x, y));
        }
    };
    let data_type = a.data_type();
    match data_type {
        DataType::String => {
            let (x, y) = (a.read_items::<String>(offset, region)?, b.read_items::<String>(offset, region)?);
            for (i, (p, q)) in x.into_iter().zip(y).enumerate().filter(|(_, (p, q))| p != q) {
                note(i, p.into(), q.into());
            }
        }
        DataType::Bytes => {
            let (x, y) = (a.read_items::<Vec<u8>>(offset, region)?, b.read_items::<Vec<u8>>(offset, region)?);
            for (i, (p, q)) in x.iter().zip(&y).enumerate().filter(|(_, (p, q))| p != q) {
                note(i, render::bytes_item(p), render::bytes_item(q));
            }
        }
        _ => {
            // Element bytes as stored: -0.0 and 0.0 differ, NaNs of the same bits do not.
            let (x, y) = (a.read_region_bytes(offset, region)?, b.read_region_bytes(offset, region)?);
            let pairs = x.chunks_exact(data_type.size()).zip(y.chunks_exact(data_type.size()));
            for (i, (p, q)) in pairs.enumerate().filter(|(_, (p, q))| p != q) {
                note(i, render::element(p, data_type.clone()), render::element(q, data_type.clone()));
            }
        }
    }
    Ok(())
}

/// The coordinates of element `index` (C order) of the region at `offset`.
fn coordinates(offset: &[u64], region: &[u64], mut index: u64) -> Vec<u64> {
    let mut at = vec![0; region.len()];
    for d in (0..region.len()).rev() {
        at[d] = offset[d] + index % region[d].max(1);
        index /= region[d].max(1);
    }
    at
}
