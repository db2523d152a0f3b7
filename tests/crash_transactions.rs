//! Crash safety of multi-array transactions (DESIGN.md §5). A child process runs the transactions
//! of `common/crash_workload.rs` one after another (each writes three arrays, creates an array now
//! and then, and sets the attributes of an array and a group) and is killed with SIGKILL at random
//! moments; one child in four closes the database instead. After each child the database must
//! open, `zarrdb check` and `Array::check` must pass, and the content must be exactly the state
//! after some prefix of the transactions:
//! - after a kill, the last transaction whose commit returned in the child (it printed `ACK k`),
//!   or the next one (the kill landed between the commit and the acknowledgement): durable mode on
//!   every backend, and LMDB fast mode, whose commits are in the page cache when they return;
//! - redb fast mode after a kill: any prefix from the state the child started from (a fast commit
//!   is persisted by the next durable one, which zarrdb makes at least once a second);
//! - after a clean close, every transaction the child acknowledged.
//!
//! Each next child continues on the same database, so one database takes every kill of a test.
//! CI runs 40 kills per configuration; the ignored tests run 200 each:
//! `cargo test --release --test crash_transactions -- --ignored`.

#[path = "common/crash_harness.rs"]
mod crash_harness;
#[path = "common/crash_workload.rs"]
mod crash_workload;
#[path = "common/splitmix.rs"]
mod splitmix;

use crash_harness::{crash_loop, Promise};
use zarrdb::{Backend, Durability};

const CI_KILLS: u32 = 40;
const FULL_KILLS: u32 = 200;

/// The child process; does nothing in a normal test run.
#[test]
fn child_entry() {
    crash_harness::child_main();
}

#[test]
fn redb_durable_survives_kills() {
    crash_loop(Backend::Redb, Durability::Durable, Promise::KeepsAcknowledged, CI_KILLS);
}

#[test]
fn lmdb_durable_survives_kills() {
    crash_loop(Backend::Lmdb, Durability::Durable, Promise::KeepsAcknowledged, CI_KILLS);
}

#[test]
fn sled_durable_survives_kills() {
    crash_loop(Backend::Sled, Durability::Durable, Promise::KeepsAcknowledged, CI_KILLS);
}

#[test]
fn redb_fast_survives_kills() {
    crash_loop(Backend::Redb, Durability::Fast, Promise::SomePrefix, CI_KILLS);
}

#[test]
fn lmdb_fast_survives_kills() {
    crash_loop(Backend::Lmdb, Durability::Fast, Promise::KeepsAcknowledged, CI_KILLS);
}

#[test]
#[ignore = "200 kills: run with `cargo test --release --test crash_transactions -- --ignored`"]
fn redb_durable_survives_200_kills() {
    crash_loop(Backend::Redb, Durability::Durable, Promise::KeepsAcknowledged, FULL_KILLS);
}

#[test]
#[ignore = "200 kills: run with `cargo test --release --test crash_transactions -- --ignored`"]
fn lmdb_durable_survives_200_kills() {
    crash_loop(Backend::Lmdb, Durability::Durable, Promise::KeepsAcknowledged, FULL_KILLS);
}

#[test]
#[ignore = "200 kills: run with `cargo test --release --test crash_transactions -- --ignored`"]
fn sled_durable_survives_200_kills() {
    crash_loop(Backend::Sled, Durability::Durable, Promise::KeepsAcknowledged, FULL_KILLS);
}

#[test]
#[ignore = "200 kills: run with `cargo test --release --test crash_transactions -- --ignored`"]
fn redb_fast_survives_200_kills() {
    crash_loop(Backend::Redb, Durability::Fast, Promise::SomePrefix, FULL_KILLS);
}

#[test]
#[ignore = "200 kills: run with `cargo test --release --test crash_transactions -- --ignored`"]
fn lmdb_fast_survives_200_kills() {
    crash_loop(Backend::Lmdb, Durability::Fast, Promise::KeepsAcknowledged, FULL_KILLS);
}
