//! The import plan: which layout a source holds (Zarr v3, v2, v1, 2020 draft), the v3 metadata of
//! each node, and which source key each chunk is copied from.
#![cfg_attr(not(test), expect(dead_code, reason = "used by import, which is being built"))]

mod compressor;
mod dtype;
mod error;
mod fill;

pub use error::PlanError;
