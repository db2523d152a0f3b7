//! The writer campaign of `bucket_writer_campaign.rs` (eight processes, four in network
//! namespaces where root allows, read-modify-writes on shared and disjoint chunks of one bucket
//! database) with one of the SeaweedFS cluster's three volume servers SIGKILLed a third of the
//! way in and started again at two thirds: writers meet errors while the master moves writes to
//! the other two (replication `001`, `common/seaweed.rs` says why), their commits then in doubt,
//! and still no acknowledged commit is lost, no update is lost, and `zarrdb check` passes. CI
//! runs 15 seconds; the campaign runs 2 minutes:
//! `cargo test --test bucket_writer_campaign_volume_killed -- --ignored`.

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
    Plan { seconds, kill_writers: None, kill_volume: true, min_kills: 0 }
}

#[test]
fn writers_lose_no_update_across_a_volume_server_kill() {
    run("campaign-volume", plan(15));
}

#[test]
#[ignore = "2 minutes: `cargo test --test bucket_writer_campaign_volume_killed -- --ignored`"]
fn writers_lose_no_update_across_a_volume_server_kill_for_minutes() {
    run("campaign-volume-long", plan(long_seconds()));
}
