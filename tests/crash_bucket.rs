//! Crash safety of a bucket database (`zarrdb+s3://` on SeaweedFS, 127.0.0.1): the transactions
//! of `common/crash_workload.rs` (three arrays written, arrays created, attributes set, per
//! transaction) run in a child process killed with SIGKILL at random moments, in the packs'
//! uploads, between the record and the head, in the head's conditional write. After each child
//! the database opens, `zarrdb check` passes, and it holds the state after the last acknowledged
//! transaction or the one in flight (`common/crash_harness.rs`). CI runs 20 kills; the ignored
//! test runs 200: `cargo test --release --test crash_bucket -- --ignored`.

#[allow(dead_code, unused_macros, unused_imports)] // the other crash tests use the rest of the harness
#[path = "common/crash_harness.rs"]
mod crash_harness;
#[path = "common/crash_workload.rs"]
mod crash_workload;
#[path = "common/seaweed.rs"]
mod seaweed;

use crash_harness::{crash_loop, Engine, Promise, BUCKET_ENV};
use zarrdb::Durability;

/// The child process; does nothing in a normal test run.
#[test]
fn child_entry() {
    crash_harness::child_main::<crash_workload::Model>();
}

fn kills(n: u32) {
    std::env::set_var(BUCKET_ENV, format!("zarrdb+{}", seaweed::bucket("crash")));
    crash_loop::<crash_workload::Model>(Engine::Bucket, Durability::Durable, Promise::KeepsAcknowledged, n);
}

#[test]
fn bucket_survives_kills() {
    kills(20);
}

#[test]
#[ignore = "200 kills: run with `cargo test --release --test crash_bucket -- --ignored`"]
fn bucket_survives_200_kills() {
    kills(200);
}
