//! Import and export: copying a whole Zarr hierarchy between a database and the standard
//! directory and zip layouts (or between any two stores), converting Zarr v2, v1 and 2020-draft
//! metadata to v3 on the way in. `docs/architecture.md` ("Import and export") describes the flow:
//! a source lists its keys, a plan maps them to v3 keys and metadata, a sink writes them one value
//! at a time.

mod plan;
mod zip;
