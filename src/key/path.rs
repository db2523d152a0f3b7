//! Node paths (`/`, `/a/b`) and the store keys they map to (spec "Node names").

use std::fmt;

use crate::error::NodeError;

/// A validated path of a node in a hierarchy: `/` for the root, `/a/b` otherwise.
///
/// ```
/// use zarrdb::NodePath;
/// let p = NodePath::parse("/group/array").unwrap();
/// assert_eq!(p.key_prefix(), "group/array/");
/// assert_eq!(p.metadata_key(), "group/array/zarr.json");
/// assert_eq!(NodePath::parse("a/b").unwrap().as_str(), "/a/b");
/// assert!(NodePath::parse("/a/../b").is_err());
/// assert!(NodePath::parse("/__zarrdb").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodePath(String);

impl NodePath {
    /// The root node.
    pub fn root() -> NodePath {
        NodePath("/".into())
    }

    /// Parse a path; the leading `/` is optional, `""` and `"/"` are the root.
    pub fn parse(path: &str) -> Result<NodePath, NodeError> {
        let trimmed = path.strip_prefix('/').unwrap_or(path);
        if trimmed.is_empty() {
            return Ok(NodePath::root());
        }
        for name in trimmed.split('/') {
            check_name(name)
                .map_err(|reason| NodeError::InvalidPath { path: path.escape_debug().to_string(), reason })?;
        }
        Ok(NodePath(format!("/{trimmed}")))
    }

    /// The path as text, starting with `/`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the root.
    pub fn is_root(&self) -> bool {
        self.0 == "/"
    }

    /// The prefix of every key of this node: `""` for the root, `a/b/` otherwise.
    pub fn key_prefix(&self) -> String {
        if self.is_root() {
            String::new()
        } else {
            format!("{}/", &self.0[1..])
        }
    }

    /// The key of this node's `zarr.json`.
    pub fn metadata_key(&self) -> String {
        format!("{}{}", self.key_prefix(), super::METADATA_KEY)
    }

    /// The last name, `""` for the root.
    pub fn name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or("")
    }

    /// The parent path; `None` for the root.
    pub fn parent(&self) -> Option<NodePath> {
        if self.is_root() {
            return None;
        }
        let cut = self.0.rfind('/').unwrap_or(0);
        Some(if cut == 0 { NodePath::root() } else { NodePath(self.0[..cut].to_owned()) })
    }

    /// A child of this node.
    pub fn child(&self, name: &str) -> Result<NodePath, NodeError> {
        check_name(name).map_err(|reason| NodeError::InvalidPath {
            path: format!("{}/{name}", self.0.trim_end_matches('/')),
            reason,
        })?;
        Ok(NodePath(format!("{}/{name}", self.0.trim_end_matches('/'))))
    }

    /// Every proper ancestor, root first.
    pub fn ancestors(&self) -> Vec<NodePath> {
        let mut out = Vec::new();
        let mut cur = self.parent();
        while let Some(p) = cur {
            cur = p.parent();
            out.push(p);
        }
        out.reverse();
        out
    }
}

impl fmt::Display for NodePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The spec's rules for a node name.
pub(crate) fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        Err("empty node name")
    } else if name.contains('/') {
        Err("a node name cannot contain '/'")
    } else if name.bytes().all(|b| b == b'.') {
        Err("a node name cannot consist of periods only")
    } else if name.starts_with("__") {
        Err("names starting with \"__\" are reserved")
    } else if name == super::METADATA_KEY {
        // Its folder would be its parent's metadata key: `g/zarr.json` is both /g's document and
        // the prefix of /g/zarr.json, which no directory or zip store can hold at once.
        Err("a node cannot be named \"zarr.json\", its parent's metadata key")
    } else if name.contains('\\') || name.contains('\0') {
        // Not forbidden by the spec, but such names cannot be stored portably in directory and zip stores.
        Err("a node name cannot contain a backslash or NUL")
    } else {
        Ok(())
    }
}
