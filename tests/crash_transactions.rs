//! Crash safety of multi-array transactions (DESIGN.md §5). A child process runs the transactions
//! of `common/crash_workload.rs` one after another (each writes three arrays, creates an array now
//! and then, and sets the attributes of an array and a group) and is killed with SIGKILL at random
//! moments; one child in four closes the database instead. After each child the database must
//! open, `zarrdb check` and `Array::check` must pass, every array must store exactly the chunks
//! that hold data (`common/crash_checks.rs`), and the content must be exactly the state after some
//! prefix of the transactions:
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

crash_harness::crash_tests!(
    crash_workload::Model,
    kills 40, 200,
    "200 kills: run with `cargo test --release --test crash_transactions -- --ignored`"
);
