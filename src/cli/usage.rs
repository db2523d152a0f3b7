//! Space per node, for `zarrdb du STORE [NODE] [--json]` and `zarrdb tree -l`: logical bytes (the
//! elements' size, uncompressed), stored bytes (chunks and metadata documents, as listed; nothing
//! is read or decoded) and their ratio, a group counting everything below it.

use serde_json::{json, Value};
use zarrdb::{Array, Group, Node};

use super::CliError;

/// Sizes of one node and, for a group, of its subtree.
#[derive(Clone, Copy, Default)]
pub(crate) struct Usage {
    /// Uncompressed element bytes; `None` once a variable-length array is counted (its size is
    /// not known without reading every chunk), or past 2^128 - 1 bytes.
    pub logical: Option<u128>,
    /// Stored bytes of chunks and documents.
    pub stored: u128,
}

impl Usage {
    fn add(&mut self, other: Usage) {
        self.logical = self.logical.zip(other.logical).and_then(|(a, b)| a.checked_add(b));
        self.stored = self.stored.saturating_add(other.stored);
    }

    /// `logical / stored`, or `None` when either is unknown or nothing is stored.
    pub(crate) fn ratio(&self) -> Option<f64> {
        let logical = self.logical?;
        (self.stored > 0).then(|| logical as f64 / self.stored as f64)
    }

    /// "2.1 MB stored of 8.4 MB (4.00x)".
    pub(crate) fn describe(&self) -> String {
        let logical = self.logical.map_or_else(|| "?".to_owned(), human);
        let ratio = self.ratio().map_or_else(String::new, |r| format!(" ({r:.2}x)"));
        format!("{} stored of {logical}{ratio}", human(self.stored))
    }

    pub(crate) fn to_json(self, path: &str, node_type: &str) -> Value {
        json!({
            "path": path,
            "node_type": node_type,
            "logical_bytes": self.logical.map(exact),
            "stored_bytes": exact(self.stored),
            "ratio": self.ratio().map(|r| (r * 1000.0).round() / 1000.0),
        })
    }
}

/// A byte count as JSON: a number up to 2^64 - 1, beyond that its decimal digits as a string
/// (as `info` writes `nbytes`), since JSON readers lose precision past 64 bits.
fn exact(bytes: u128) -> Value {
    u64::try_from(bytes).map_or_else(|_| Value::String(bytes.to_string()), Value::from)
}

/// The usage of an array.
pub(crate) fn array(a: &Array) -> Result<Usage, CliError> {
    let stored: u128 = a.stored_chunks()?.iter().map(|(_, size)| u128::from(*size)).sum();
    let document = a.store().size(&a.path().metadata_key())?.unwrap_or(0);
    let logical = if a.data_type().is_variable_length() {
        None
    } else {
        a.shape().iter().try_fold(a.data_type().size() as u128, |n, &d| n.checked_mul(u128::from(d)))
    };
    Ok(Usage { logical, stored: stored + u128::from(document) })
}

/// The usage of every node at and below `node`, in tree order (a group before its children):
/// (path, node type, usage), a group's usage counting its subtree.
pub(crate) fn walk(node: &Node) -> Result<Vec<(String, &'static str, Usage)>, CliError> {
    let mut out = Vec::new();
    visit(node, &mut out)?;
    Ok(out)
}

fn visit(node: &Node, out: &mut Vec<(String, &'static str, Usage)>) -> Result<Usage, CliError> {
    match node {
        Node::Array(a) => {
            let usage = array(a)?;
            out.push((a.path().to_string(), "array", usage));
            Ok(usage)
        }
        Node::Group(g) => {
            let at = out.len();
            out.push((g.path().to_string(), "group", Usage::default()));
            let mut total = group_document(g)?;
            for child in g.children()? {
                total.add(visit(&child, out)?);
            }
            out[at].2 = total;
            Ok(total)
        }
    }
}

fn group_document(g: &Group) -> Result<Usage, CliError> {
    let size = g.store().size(&g.path().metadata_key())?.unwrap_or(0);
    Ok(Usage { logical: Some(0), stored: u128::from(size) })
}

/// Bytes in decimal units, as `du -h --si` prints them: 950 B, 12.3 kB, 4.1 MB, 1.2 GB.
pub(crate) fn human(bytes: u128) -> String {
    const UNITS: [&str; 6] = ["kB", "MB", "GB", "TB", "PB", "EB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64;
    let mut unit = "B";
    for u in UNITS {
        if value < 1000.0 {
            break;
        }
        value /= 1000.0;
        unit = u;
    }
    format!("{value:.1} {unit}")
}

#[cfg(test)]
mod tests {
    use super::{human, Usage};

    #[test]
    fn sizes_read_as_du_prints_them() {
        assert_eq!(human(950), "950 B");
        assert_eq!(human(12_345), "12.3 kB");
        assert_eq!(human(4_100_000_000), "4.1 GB");
        let u = Usage { logical: Some(8_400_000), stored: 2_100_000 };
        assert_eq!(u.describe(), "2.1 MB stored of 8.4 MB (4.00x)");
        assert_eq!(Usage { logical: None, stored: 5 }.describe(), "5 B stored of ?");
    }
}
