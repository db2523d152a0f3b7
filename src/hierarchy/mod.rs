//! The hierarchy: node paths, groups, opening any node, creating nodes.

mod create;
mod erase;
mod group;
mod node;
mod raw;

pub use crate::key::path::NodePath;
pub use create::Parents;
pub use group::Group;
pub use node::Node;
pub use raw::RawAccess;

pub(crate) use group::{has_descendants, read_metadata};
