//! `zarrdb attrs STORE NODE` prints a node's attributes as JSON; with `--set KEY=VALUE` and
//! `--delete KEY` it changes them, in one write of the node's `zarr.json` (one transaction on a database, read and write).

use serde_json::Value;
use zarrdb::Node;

use super::{args, locator, CliError, CliResult};

pub(crate) fn run(store: &str, path: &str, set: &[String], delete: &[String]) -> CliResult {
    if set.is_empty() && delete.is_empty() {
        let opened = locator::open(store)?;
        let attributes = match Node::open(opened.store.clone(), path)? {
            Node::Group(g) => g.attributes(),
            Node::Array(a) => a.attributes().clone(),
        };
        return outln!("{}", serde_json::to_string_pretty(&Value::Object(attributes))?);
    }
    // Every --set parsed before anything is opened: a typo changes nothing.
    let assignments: Vec<(&str, Value)> = set
        .iter()
        .map(|item| match item.split_once('=') {
            Some((key, value)) if !key.is_empty() => Ok((key, args::json_or_text(value))),
            _ => Err(CliError::new(format!("--set \"{item}\": expected KEY=VALUE (VALUE is JSON, or text)"))),
        })
        .collect::<Result<_, _>>()?;
    locator::edit(store, false, |store| {
        let node = Node::open(store, path)?;
        let mut attributes = match &node {
            Node::Group(g) => g.attributes(),
            Node::Array(a) => a.attributes().clone(),
        };
        for key in delete {
            if attributes.remove(key).is_none() {
                return Err(CliError::new(format!("{}: no attribute \"{key}\" to delete", node.path())));
            }
        }
        for (key, value) in assignments {
            attributes.insert(key.to_owned(), value);
        }
        match node {
            Node::Group(mut g) => g.set_attributes(attributes)?,
            Node::Array(mut a) => a.set_attributes(attributes)?,
        }
        Ok(())
    })
}
