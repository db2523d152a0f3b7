//! Eight writer processes, four of them in network namespaces of their own where root allows
//! (each through its own S3 gateway), run read-modify-write transactions on shared and disjoint
//! chunks of one bucket database on a SeaweedFS cluster (one master, three volume servers, a
//! filer) for a while: no update is lost, every acknowledged commit is in the history, a
//! `Conflict` only where the transaction's reads met another's writes, and `zarrdb check` passes
//! (`common/writer_campaign.rs` says how each is checked). CI runs 12 seconds; the campaign of
//! issue 43 runs 2 minutes: `cargo test --test bucket_writer_campaign -- --ignored`
//! (`ZARRDB_CAMPAIGN_SECONDS` for another length).

#[path = "common/netns.rs"]
mod netns;
#[path = "common/seaweed.rs"]
#[allow(dead_code, reason = "the campaign uses only the cluster")]
mod seaweed;
#[path = "common/writer_campaign.rs"]
mod writer_campaign;

use writer_campaign::{long_seconds, run, Plan};

/// The child process; does nothing in a normal test run.
#[test]
fn child_entry() {
    writer_campaign::child_entry();
}

fn plan(seconds: u64) -> Plan {
    Plan { seconds, kill_writers: None, kill_volume: false, min_kills: 0 }
}

#[test]
fn writers_lose_no_update() {
    run("campaign", plan(12));
}

#[test]
#[ignore = "2 minutes: `cargo test --test bucket_writer_campaign -- --ignored`"]
fn writers_lose_no_update_for_minutes() {
    run("campaign-long", plan(long_seconds()));
}
