//! Entry points for the fuzz targets in `fuzz/` to parsers that are not public. Not part of the
//! API: hidden from the documentation, and free to change with the targets.
//!
//! Everything else the targets feed (metadata documents, codec chains, shards, zip archives,
//! `.npy` files, databases) goes through the public API.

pub use crate::store::log_fuzzing::{commit_log, commit_log_record};
