//! `zarrdb info STORE [NODE] [--json]`; field names are documented in docs/cli.md.

use serde_json::{json, Map, Value};
use zarrdb::{Array, Node};

use super::{locator, render, CliResult};

pub(crate) fn run(store: &str, node: &str, as_json: bool) -> CliResult {
    let opened = locator::open(store)?;
    let store = opened.store.clone();
    let node = Node::open(store, node)?;
    let doc = describe(&node)?;
    if as_json {
        outln!("{}", serde_json::to_string_pretty(&doc)?)?;
    } else {
        print_text(&doc)?;
    }
    Ok(())
}

fn describe(node: &Node) -> Result<Value, super::CliError> {
    let mut doc = Map::new();
    doc.insert("path".into(), node.path().to_string().into());
    match node {
        Node::Group(g) => {
            doc.insert("node_type".into(), "group".into());
            doc.insert("implicit".into(), g.is_implicit().into());
            doc.insert("attributes".into(), Value::Object(g.attributes()));
            doc.insert("children".into(), g.child_names()?.into());
        }
        Node::Array(a) => {
            doc.insert("node_type".into(), "array".into());
            doc.insert("implicit".into(), false.into());
            doc.insert("attributes".into(), Value::Object(a.attributes().clone()));
            array_fields(a, &mut doc)?;
        }
    }
    Ok(Value::Object(doc))
}

fn array_fields(a: &Array, doc: &mut Map<String, Value>) -> Result<(), super::CliError> {
    let meta = a.metadata().to_json();
    let stored = a.stored_chunks()?;
    let metadata_bytes = a.store().size(&a.path().metadata_key())?.unwrap_or(0);
    let element_size = a.data_type().size() as u64;
    // Exact at any size (a number, or a decimal string past u64); the ratio needs only a float.
    let nbytes = render::product(a.shape().iter().copied().chain([element_size]));
    let nbytes_f64 = a.shape().iter().map(|&s| s as f64).product::<f64>() * element_size as f64;
    let nbytes_stored: u64 = stored.iter().map(|(_, size)| size).sum::<u64>() + metadata_bytes;
    let chunks_total = render::product(a.metadata().grid_shape());
    doc.insert("shape".into(), a.shape().into());
    doc.insert("data_type".into(), meta["data_type"].clone());
    let (name, chunks) = render::chunks(a);
    doc.insert(name.into(), chunks);
    doc.insert("chunk_key_encoding".into(), meta["chunk_key_encoding"].clone());
    doc.insert("fill_value".into(), meta["fill_value"].clone());
    doc.insert("codecs".into(), meta["codecs"].clone());
    doc.insert("dimension_names".into(), meta.get("dimension_names").cloned().unwrap_or(Value::Null));
    // Variable-length items have no size without reading every chunk: not guessed.
    let vlen = a.data_type().is_variable_length();
    doc.insert("nbytes".into(), if vlen { Value::Null } else { nbytes });
    doc.insert("nbytes_stored".into(), nbytes_stored.into());
    let ratio = if nbytes_stored == 0 { 0.0 } else { nbytes_f64 / nbytes_stored as f64 };
    doc.insert("ratio".into(), if vlen { Value::Null } else { json!((ratio * 1000.0).round() / 1000.0) });
    doc.insert("chunks_initialized".into(), stored.len().into());
    doc.insert("chunks_total".into(), chunks_total);
    Ok(())
}

fn print_text(doc: &Value) -> CliResult {
    let Some(obj) = doc.as_object() else { return Ok(()) };
    for (name, value) in obj {
        let text = match value {
            Value::String(s) if name == "path" || name == "node_type" => s.clone(),
            Value::Array(items) if name == "shape" || name == "chunk_shape" => {
                render::shape(&items.iter().filter_map(Value::as_u64).collect::<Vec<_>>())
            }
            other => other.to_string(),
        };
        outln!("{name:<19}: {text}")?;
    }
    Ok(())
}
