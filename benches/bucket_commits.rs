//! Bucket databases (`zarrdb+s3://`) on an S3 server: commit latency, commits per second with
//! several writers, and small-chunk and whole-array transfer, beside the server's own PUT and
//! GET rates measured in the same run (issue 43, acceptance 5, zarrdb's side).
//!
//! Needs a server and the `AWS_*` variables pointing at it (README.md, "Object storage", starts
//! SeaweedFS on 127.0.0.1:8333), and a bucket: `cargo bench --bench bucket_commits -- s3://BUCKET`.
//! Every run uses a fresh prefix under the bucket. Prints one line per figure (median of the runs
//! where there are several); under `cargo test` (no bucket given) it does nothing.

use std::time::{Duration, Instant};

use zarrdb::store::ObjectStore;
use zarrdb::store::{ReadableStore, WritableStore};
use zarrdb::{Array, ArrayMetadata, DataType, Database};

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn fresh(bucket: &str, name: &str) -> String {
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("{}/bench-{name}-{stamp}", bucket.trim_end_matches('/'))
}

/// The server alone: one 4 KiB PUT after another, 32 at once, and GETs of them.
fn server_limits(bucket: &str) {
    let store = ObjectStore::open(&fresh(bucket, "server")).unwrap();
    let value = vec![7u8; 4096];
    let mut one = Vec::new();
    for i in 0..50 {
        let began = Instant::now();
        store.set(&format!("one/{i}"), &value).unwrap();
        one.push(began.elapsed().as_secs_f64() * 1e3);
    }
    let n = 2000;
    let values: Vec<(String, Vec<u8>)> = (0..n).map(|i| (format!("many/{i}"), value.clone())).collect();
    let began = Instant::now();
    store.set_many(values).unwrap();
    let puts = n as f64 / began.elapsed().as_secs_f64();
    let keys: Vec<String> = (0..n).map(|i| format!("many/{i}")).collect();
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    let began = Instant::now();
    store.get_many(&refs).unwrap();
    let gets = n as f64 / began.elapsed().as_secs_f64();
    println!(
        "server: one 4 KiB PUT {:.2} ms (median of 50); 4 KiB PUTs, 32 in flight: {puts:.0}/s; GETs: {gets:.0}/s",
        median(one)
    );
}

/// One small change per commit (a 4 KiB chunk by a region write), one after another.
fn commit_latency(bucket: &str) {
    let db = Database::create(format!("zarrdb+{}", fresh(bucket, "latency"))).unwrap();
    let a = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![4096 * 64], vec![4096])).unwrap();
    let mut times = Vec::new();
    for i in 0..50u64 {
        let began = Instant::now();
        a.write_region(&[(i % 64) * 4096], &[4096], &vec![i as u8; 4096]).unwrap();
        times.push(began.elapsed().as_secs_f64() * 1e3);
    }
    println!("one small-change commit: {:.2} ms (median of 50)", median(times));
}

/// `writers` handles (an engine each, as processes have) committing transactions that each
/// write a chunk of their own, for `seconds`.
fn concurrent(bucket: &str, writers: usize, seconds: f64) {
    let at = format!("zarrdb+{}", fresh(bucket, &format!("writers{writers}")));
    let first = Database::create(&at).unwrap();
    let meta = ArrayMetadata::new(DataType::UInt8, vec![4096 * writers as u64], vec![4096]);
    Array::create(first.store(), "/a", meta).unwrap();
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let began = Instant::now();
    let counts: Vec<u64> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                let at = at.clone();
                scope.spawn(move || {
                    let db = Database::open(&at).unwrap();
                    let mut n = 0u64;
                    while Instant::now() < deadline {
                        let txn = db.begin_write().unwrap();
                        let a = Array::open(txn.store(), "/a").unwrap();
                        a.write_region(&[w as u64 * 4096], &[4096], &vec![n as u8; 4096]).unwrap();
                        txn.commit().unwrap();
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let total: u64 = counts.iter().sum();
    println!(
        "{writers} writers: {:.1} commits/s ({total} commits in {:.1} s; per writer {counts:?})",
        total as f64 / began.elapsed().as_secs_f64(),
        began.elapsed().as_secs_f64()
    );
}

/// 16,384 chunks of 4 KiB in one transaction, then read back whole; and a 256 MiB array of
/// 8 MiB chunks written and read whole.
fn transfer(bucket: &str) {
    for (name, len, chunk) in [("small_chunks", 16_384u64 * 4096, 4096u64), ("whole_array", 256 << 20, 8 << 20)] {
        let db = Database::create(format!("zarrdb+{}", fresh(bucket, name))).unwrap();
        let bytes: Vec<u8> = (0..len).map(|i| ((i * 2_654_435_761) >> 13) as u8).collect();
        let began = Instant::now();
        let txn = db.begin_write().unwrap();
        let a = Array::create(txn.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![len], vec![chunk])).unwrap();
        a.write_region_bytes(&[0], &[len], &bytes).unwrap();
        txn.commit().unwrap();
        let write = began.elapsed().as_secs_f64();
        let began = Instant::now();
        let snapshot = db.begin_read().unwrap();
        let read = Array::open(snapshot.store(), "/a").unwrap().read_region_bytes(&[0], &[len]).unwrap();
        let read_s = began.elapsed().as_secs_f64();
        assert!(read == bytes, "{name}: read back differs");
        let mb = len as f64 / 1e6;
        println!("{name}: write {:.1} MB/s ({write:.2} s), read {:.1} MB/s ({read_s:.2} s)", mb / write, mb / read_s);
    }
}

fn main() {
    let Some(bucket) = std::env::args().skip(1).find(|a| a.starts_with("s3://")) else {
        eprintln!("bucket_commits: no s3://BUCKET given; nothing measured");
        return;
    };
    server_limits(&bucket);
    commit_latency(&bucket);
    for writers in [1, 4, 16] {
        concurrent(&bucket, writers, 10.0);
    }
    transfer(&bucket);
}
