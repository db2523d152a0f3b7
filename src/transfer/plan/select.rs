//! Partial imports: which nodes of a source are left out. Exclusion patterns drop nodes (with
//! their subtrees) before any document is read, so an excluded node may hold anything; nodes
//! whose metadata cannot be imported are dropped (with their subtrees) after planning, when the
//! caller asked for that instead of failing.
//!
//! A pattern names node paths as `zarrdb` prints them (`/grid/temp`; the leading `/` may be left
//! out), segment by segment: `*` matches any run of characters and `?` one character, never across
//! a `/`. A node is excluded when the pattern matches its path or the path of one of its
//! ancestors, so `/grid` excludes the group `grid` and everything below it, and `/grid/*` every
//! child of `grid` but not `grid` itself.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;

use super::{last_segment, parent_path, Layout, Plan, PlanError};

/// What to leave out of an import.
#[derive(Clone, Debug, Default)]
pub(crate) struct Select {
    /// Exclusion patterns, as given.
    pub exclude: Vec<String>,
    /// Skip nodes whose metadata cannot be converted or parsed, or whose codec chain cannot be
    /// built, instead of failing the import.
    pub skip_unreadable: bool,
}

impl Select {
    /// The first pattern that matches the node path (relative, `""` for the root), or one of its
    /// ancestors.
    fn excluding(&self, path: &str) -> Option<&str> {
        let segments: Vec<&str> = if path.is_empty() { Vec::new() } else { path.split('/').collect() };
        self.exclude.iter().map(String::as_str).find(|pattern| {
            let parts: Vec<&str> = pattern.trim_start_matches('/').split('/').filter(|p| !p.is_empty()).collect();
            parts.len() <= segments.len() && parts.iter().zip(&segments).all(|(p, s)| glob(p, s))
        })
    }
}

/// `*` any run of characters, `?` one character, everything else itself.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    // Classic two-pointer match with backtracking to the last `*`: linear space, no recursion.
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || p[i] == t[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// A source's keys split by the exclusion patterns.
pub(super) struct Excluded<'a> {
    /// The keys left (borrowed when nothing is excluded: a source may hold millions).
    pub kept: Cow<'a, [String]>,
    /// The keys taken out, with the reason (the node and the pattern).
    pub skipped: Vec<(String, String)>,
    /// The excluded nodes, the topmost of each subtree (relative paths).
    pub nodes: Vec<String>,
}

/// Split the source's keys by the exclusion patterns. Node paths are the folders of metadata
/// keys and their ancestors, so a chunk folder inside an array is never taken for a node.
pub(super) fn exclude<'a>(keys: &'a [String], select: &Select, layout: Layout) -> Result<Excluded<'a>, PlanError> {
    if select.exclude.is_empty() {
        return Ok(Excluded { kept: Cow::Borrowed(keys), skipped: Vec::new(), nodes: Vec::new() });
    }
    if !matches!(layout, Layout::V3 | Layout::V2) {
        return Err(PlanError::ExcludeUnsupported { layout: layout.name() });
    }
    let mut nodes = BTreeSet::new();
    for key in keys.iter().filter(|k| matches!(last_segment(k), "zarr.json" | ".zarray" | ".zgroup" | ".zattrs")) {
        let mut path = parent_path(key);
        loop {
            nodes.insert(path.to_owned());
            if path.is_empty() {
                break;
            }
            path = parent_path(path);
        }
    }
    let excluded: Vec<(String, &str)> =
        nodes.iter().filter_map(|n| select.excluding(n).map(|p| (n.clone(), p))).collect();
    let topmost: Vec<String> = excluded
        .iter()
        .filter(|(n, _)| !excluded.iter().any(|(other, _)| other != n && is_under(n, other)))
        .map(|(n, _)| n.clone())
        .collect();
    let (mut kept, mut skipped) = (Vec::new(), Vec::new());
    for key in keys {
        match topmost.iter().find(|n| is_under(key, n)) {
            Some(node) => {
                let pattern = select.excluding(node).unwrap_or_default();
                skipped.push((key.clone(), format!("node /{node} excluded by pattern \"{pattern}\"")));
            }
            None => kept.push(key.clone()),
        }
    }
    Ok(Excluded { kept: Cow::Owned(kept), skipped, nodes: topmost })
}

/// Whether a key or node path lies at or below the node path `node` (`""`: the root).
fn is_under(path: &str, node: &str) -> bool {
    node.is_empty() || path == node || path.strip_prefix(node).is_some_and(|rest| rest.starts_with('/'))
}

/// Take the subtrees of nodes that could not be imported out of a plan: their documents,
/// chunks and implicit groups, and give every key of theirs a reason naming the node.
pub(super) fn prune(plan: &mut Plan, failed: Vec<(String, PlanError)>) {
    if failed.is_empty() {
        return;
    }
    let failed: Vec<(String, Arc<PlanError>)> = failed.into_iter().map(|(p, e)| (p, Arc::new(e))).collect();
    let owner = |path: &str| failed.iter().map(|(n, _)| n).find(|n| is_under(path, n)).cloned();
    let reason = |node: &str| format!("inside node /{node}, which was skipped: its metadata cannot be imported");
    let metadata = std::mem::take(&mut plan.metadata);
    for (key, bytes) in metadata {
        match owner(parent_path(&key)) {
            // v3 documents are the source's own keys; converted ones are skipped already.
            Some(node) if plan.layout == Layout::V3 => plan.skipped.push((key, reason(&node))),
            Some(_) => {}
            None => plan.metadata.push((key, bytes)),
        }
    }
    let chunks = std::mem::take(&mut plan.chunks);
    for (src, dst) in chunks {
        match owner(&dst) {
            Some(node) => plan.skipped.push((src, reason(&node))),
            None => plan.chunks.push((src, dst)),
        }
    }
    for (key, why) in &mut plan.skipped {
        if let Some(node) = owner(key) {
            *why = reason(&node);
        }
    }
    plan.implicit_groups.retain(|g| owner(g).is_none());
    // A node inside another skipped node is named by the outer one only.
    plan.skipped_nodes =
        failed.iter().filter(|(n, _)| !failed.iter().any(|(o, _)| o != n && is_under(n, o))).cloned().collect();
}

#[cfg(test)]
mod tests {
    use super::super::{plan_selected, PlanError};
    use super::{glob, Select};

    #[test]
    fn a_v2_array_in_an_unknown_compressor_is_skipped_with_its_chunks() {
        let good = br#"{"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "|u1", "compressor": null,
            "fill_value": 0, "order": "C", "filters": null}"#;
        let bad = String::from_utf8_lossy(good).replace("\"compressor\": null", "\"compressor\": {\"id\": \"zfpy\"}");
        let files = [
            ("ok/.zarray", good.to_vec()),
            ("ok/0", vec![1, 2]),
            ("bad/.zarray", bad.into_bytes()),
            ("bad/0", vec![0]),
        ];
        let keys: Vec<String> = files.iter().map(|f| f.0.to_owned()).collect();
        let mut read = |key: &str| {
            let found = files.iter().find(|f| f.0 == key).map(|f| f.1.clone());
            found.ok_or_else(|| PlanError::Read { key: key.into(), source: "missing".into() })
        };
        assert!(plan_selected(&keys, &mut read, &Select::default()).is_err(), "all or nothing by default");
        let select = Select { skip_unreadable: true, ..Select::default() };
        let plan = plan_selected(&keys, &mut read, &select).unwrap();
        assert_eq!(plan.skipped_nodes.len(), 1);
        assert_eq!(plan.skipped_nodes[0].0, "bad");
        assert!(matches!(*plan.skipped_nodes[0].1, PlanError::Unsupported { .. }));
        assert_eq!(plan.chunks, vec![("ok/0".to_owned(), "ok/0".to_owned())]);
        let reason = |key: &str| plan.skipped.iter().find(|s| s.0 == key).map(|s| s.1.clone()).unwrap();
        assert!(reason("bad/0").contains("/bad") && reason("bad/.zarray").contains("/bad"));
        assert!(!plan.metadata.iter().any(|(k, _)| k.starts_with("bad/")));
    }

    #[test]
    fn patterns_match_nodes_and_their_subtrees() {
        let select = Select { exclude: vec!["/grid/*".into(), "tmp?".into()], skip_unreadable: false };
        assert_eq!(select.excluding("grid/a"), Some("/grid/*"));
        assert_eq!(select.excluding("grid/a/b"), Some("/grid/*"), "a subtree");
        assert_eq!(select.excluding("grid"), None, "the group itself stays");
        assert_eq!(select.excluding("tmp1/x"), Some("tmp?"));
        assert_eq!(select.excluding("tmp12"), None);
        assert_eq!(select.excluding(""), None);
        assert!(glob("a*b*c", "aXXbYc") && !glob("a*b", "ab/") && glob("*", "") && !glob("?", ""));
    }
}
