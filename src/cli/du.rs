//! `zarrdb du STORE [NODE] [--json]`: logical and stored bytes and their ratio for every node
//! at and below NODE, a group counting its subtree (`usage.rs`).

use serde_json::Value;
use zarrdb::Node;

use super::{locator, usage, CliResult};

pub(crate) fn run(store: &str, node: &str, as_json: bool) -> CliResult {
    let opened = locator::open(store)?;
    let node = Node::open(opened.store.clone(), node)?;
    let rows = usage::walk(&node)?;
    if as_json {
        let doc: Vec<Value> = rows.iter().map(|(path, kind, u)| u.to_json(path, kind)).collect();
        return outln!("{}", serde_json::to_string_pretty(&Value::Array(doc))?);
    }
    outln!("{:>10}  {:>10}  {:>8}  path", "stored", "logical", "ratio")?;
    for (path, kind, u) in rows {
        let logical = u.logical.map_or_else(|| "?".to_owned(), usage::human);
        let ratio = u.ratio().map_or_else(|| "-".to_owned(), |r| format!("{r:.2}x"));
        let path = if kind == "group" && path != "/" { format!("{path}/") } else { path };
        outln!("{:>10}  {logical:>10}  {ratio:>8}  {path}", usage::human(u.stored))?;
    }
    Ok(())
}
