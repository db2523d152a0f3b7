//! Crash safety of large region writes, which stream their chunks into one engine write
//! transaction as they are encoded (`src/array/stream.rs`) instead of committing a finished batch.
//! A child process runs the streamed writes of `common/stream_workload.rs` (each about 17 MiB, with
//! patched edge chunks and erased chunks) and is killed with SIGKILL at random moments, most of
//! them in the middle of a write; one child in four closes the database instead. After each child
//! the database opens, `zarrdb check` passes and the array holds exactly the content after one
//! whole write: never part of one.
//!
//! CI runs 8 kills per configuration (durable on redb, LMDB, LMDB behind its commit log and sled;
//! fast on redb, LMDB and LMDB behind the log); the ignored tests run 200 each:
//! `cargo test --release --test crash_streamed_writes -- --ignored`.

#[path = "common/crash_harness.rs"]
#[expect(dead_code, reason = "this workload uses neither attributes nor random deltas")]
mod crash_harness;
#[path = "common/stream_workload.rs"]
mod stream_workload;

crash_harness::crash_tests!(
    stream_workload::Model,
    kills 8, 200,
    "200 kills: run with `cargo test --release --test crash_streamed_writes -- --ignored`"
);
