//! Crash safety of resizes and appends (issue 5): a resize or an append rewrites an array's
//! `zarr.json` and erases, trims or writes its chunks, all in the transaction of the caller. A
//! child process runs the transactions of `common/resize_workload.rs` (each resizes, appends to
//! and writes several arrays of different rank, codecs and fill value, and sets attributes) and is
//! killed with SIGKILL at random moments; one child in four closes the database instead. After
//! each child:
//! - the database opens and `zarrdb check` passes;
//! - the state is that after one prefix of the transactions, never a mix: every array's shape,
//!   content and attributes are the model's for the same prefix, so no append is half there
//!   (shape without data or data without shape). With durable commits (and LMDB fast ones) the
//!   prefix ends at the last acknowledged transaction or the next one (a kill between commit and
//!   acknowledgement); redb fast mode may lose the last commits (see `crash_transactions.rs`);
//! - every array's chunks agree with its shape: `Array::check` finds no key outside the grid, the
//!   stored chunks are exactly those holding data, no stored chunk holds data beyond the shape,
//!   and after growing every array to its maximum (in a transaction then aborted) the regrown
//!   regions read as fill value.
//!
//! Each next child continues on the same database. CI runs 30 kills per configuration (durable on
//! redb, LMDB, LMDB behind its commit log and sled; fast on redb, LMDB and LMDB behind the log);
//! the ignored tests run 200 each:
//! `cargo test --release --test crash_resize_append -- --ignored`.

#[path = "common/crash_harness.rs"]
mod crash_harness;
#[path = "common/resize_workload.rs"]
mod resize_workload;

crash_harness::crash_tests!(
    resize_workload::Model,
    kills 30, 200,
    "200 kills: run with `cargo test --release --test crash_resize_append -- --ignored`"
);
