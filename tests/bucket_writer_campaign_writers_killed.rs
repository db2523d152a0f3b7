//! The writer campaign of `bucket_writer_campaign.rs` (eight processes, four in network
//! namespaces where root allows, read-modify-writes on shared and disjoint chunks of one bucket
//! database on a SeaweedFS cluster) with a writer SIGKILLed at a random moment every half second
//! on average, and started again at once: each kill leaves the commit under way in doubt (in
//! the history or not, whole either way), and still every acknowledged commit is in the history,
//! no update is lost, the head is a commit that was acknowledged or in flight, and `zarrdb check`
//! passes. CI runs 12 seconds (at least 5 kills); the campaign runs 2 minutes with at least 100:
//! `cargo test --test bucket_writer_campaign_writers_killed -- --ignored`.

#[path = "common/netns.rs"]
mod netns;
#[path = "common/seaweed.rs"]
#[allow(dead_code, reason = "the campaign uses only the cluster")]
mod seaweed;
#[path = "common/writer_campaign.rs"]
mod writer_campaign;

use std::time::Duration;

use writer_campaign::{long_seconds, run, Plan};

/// The child process; does nothing in a normal test run.
#[test]
fn child_entry() {
    writer_campaign::child_entry();
}

fn plan(seconds: u64, min_kills: u64) -> Plan {
    Plan { seconds, kill_writers: Some(Duration::from_millis(500)), kill_volume: false, min_kills }
}

#[test]
fn writers_killed_lose_no_acknowledged_commit() {
    run("campaign-kills", plan(12, 5));
}

#[test]
#[ignore = "2 minutes, >= 100 kills: `cargo test --test bucket_writer_campaign_writers_killed -- --ignored`"]
fn writers_killed_lose_no_acknowledged_commit_for_minutes() {
    run("campaign-kills-long", plan(long_seconds(), 100));
}
