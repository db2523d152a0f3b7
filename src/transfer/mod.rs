//! Import and export: copying a whole Zarr hierarchy between a database and the standard
//! directory and zip layouts (or between any two stores), converting Zarr v2, v1 and 2020-draft
//! metadata to v3 on the way in. `docs/architecture.md` ("Import and export") describes the flow:
//! a source lists its keys, a plan maps them to v3 keys and documents, and a sink takes the
//! values one window at a time.

mod consolidate;
mod converted;
mod error;
mod export;
mod import;
mod npy;
mod options;
mod plan;
#[cfg(feature = "object-store")]
mod publish;
mod run;
mod sink;
mod source;

pub use converted::ConvertedStore;

pub use import::{copy, copy_node};

pub use npy::NpyHeader;

pub use options::{ExportOptions, ExportReport, ImportOptions, ImportReport, Progress};
