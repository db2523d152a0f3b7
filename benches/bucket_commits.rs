//! Bucket databases (`zarrdb+s3://`) on an S3 server: commit latency, commits per second with
//! several writers, a commit touching thousands of arrays, small-chunk and whole-array transfer,
//! and collection after expiring versions, beside the server's own PUT and GET rates measured in
//! the same run (issue 43, acceptance 5, zarrdb's side; `benches/peers/bucket_icechunk.py` runs
//! it beside icechunk on one server).
//!
//! Needs a server and the `AWS_*` variables pointing at it (README.md, "Object storage", starts
//! SeaweedFS on 127.0.0.1:8333), and a bucket: `cargo bench --bench bucket_commits -- s3://BUCKET`.
//! Every workload uses a fresh prefix under the bucket. Prints one line per figure (median of the
//! runs where there are several); under `cargo test` (no bucket given) it does nothing.
//!
//! Options (after `--`):
//! - `--json`: the lines go to stderr, one JSON document with every figure to stdout.
//! - `--workload NAME` (repeatable; default all): `server`, `latency`, `writers`, `arrays`,
//!   `small_chunks`, `whole_array`, `gc`.
//! - sizes: `--latency-commits 50`, `--writers 1,4,16`, `--seconds 10`, `--arrays 5760`,
//!   `--small-chunks 16384`, `--whole-mib 256`, `--gc-chunks 1000`, `--versions 100`,
//!   `--server-objects 2000`.
//! - `--count s3://BUCKET/PREFIX`: only list the objects under the prefix and print their number
//!   and bytes as JSON (the peer harness counts icechunk's objects with it too).
//!
//! The data, the same in the icechunk harness: every array is `uint8` (`uint32` for the
//! writers), 1-D, codec `bytes` only (no compression), fill value 0; values from `pattern` below.

use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use zarrdb::db::VersionRef;
use zarrdb::store::ObjectStore;
use zarrdb::store::{ReadableStore, WritableStore};
use zarrdb::{Array, ArrayMetadata, DataType, Database, Group, Store};

struct Options {
    bucket: String,
    json: bool,
    workloads: Vec<String>,
    latency_commits: usize,
    writers: Vec<usize>,
    seconds: f64,
    arrays: usize,
    small_chunks: u64,
    whole_mib: u64,
    gc_chunks: u64,
    versions: u64,
    server_objects: usize,
}

const ALL: [&str; 7] = ["server", "latency", "writers", "arrays", "small_chunks", "whole_array", "gc"];

/// Bytes `first..first + len` of a value stream numbered `seed` (a multiplicative hash: the
/// icechunk harness computes the same bytes with numpy).
fn pattern(seed: u64, first: u64, len: u64) -> Vec<u8> {
    (first..first + len)
        .map(|i| ((i.wrapping_add(seed.wrapping_mul(7919))).wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn fresh(bucket: &str, name: &str) -> String {
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("{}/zarrdb-{name}-{stamp}", bucket.trim_end_matches('/'))
}

/// Objects under `locator` (`s3://bucket/prefix`) and their bytes.
fn count(locator: &str) -> (usize, u64) {
    let listed = ObjectStore::open(locator).unwrap().list_prefix_sized("").unwrap();
    (listed.len(), listed.iter().map(|(_, size)| size).sum())
}

/// The commit number `head` names (docs/format.md: `ZDBHEAD1`, id, number `u64`, CRC).
fn head_number(locator: &str) -> u64 {
    let head = ObjectStore::open(locator).unwrap().get("__zarrdb/head").unwrap().expect("a head");
    u64::from_le_bytes(head[24..32].try_into().unwrap())
}

fn say(options: &Options, line: String) {
    if options.json {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
}

/// The server alone: one 4 KiB PUT after another, then `n` PUTs and `n` GETs of 4 KiB, 32 at once
/// (object_store's client, the one the engine uses).
fn server_limits(o: &Options) -> Value {
    let store = ObjectStore::open(&fresh(&o.bucket, "server")).unwrap();
    let value = vec![7u8; 4096];
    let mut one = Vec::new();
    for i in 0..50 {
        let began = Instant::now();
        store.set(&format!("one/{i}"), &value).unwrap();
        one.push(began.elapsed().as_secs_f64() * 1e3);
    }
    let mut one_get = Vec::new();
    for i in 0..50 {
        let began = Instant::now();
        store.get(&format!("one/{i}")).unwrap().unwrap();
        one_get.push(began.elapsed().as_secs_f64() * 1e3);
    }
    let n = o.server_objects;
    let values: Vec<(String, Vec<u8>)> = (0..n).map(|i| (format!("many/{i}"), value.clone())).collect();
    let began = Instant::now();
    store.set_many(values).unwrap();
    let puts = n as f64 / began.elapsed().as_secs_f64();
    let keys: Vec<String> = (0..n).map(|i| format!("many/{i}")).collect();
    let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
    let began = Instant::now();
    let got = store.get_many(&refs).unwrap();
    let gets = n as f64 / began.elapsed().as_secs_f64();
    assert!(got.iter().all(|v| v.as_deref() == Some(&value[..])));
    let (put_ms, get_ms) = (median(one), median(one_get));
    say(o, format!(
        "server: one 4 KiB PUT {put_ms:.2} ms, one GET {get_ms:.2} ms (medians of 50); 4 KiB, 32 in flight: {puts:.0} PUT/s, {gets:.0} GET/s"
    ));
    json!({"put_ms": put_ms, "get_ms": get_ms, "puts_per_s": puts, "gets_per_s": gets, "objects": n})
}

/// One small change per commit (a 4 KiB chunk by a region write), one after another.
fn commit_latency(o: &Options) -> Value {
    let db = Database::create(format!("zarrdb+{}", fresh(&o.bucket, "latency"))).unwrap();
    let a = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![4096 * 64], vec![4096])).unwrap();
    let mut times = Vec::new();
    for i in 0..o.latency_commits as u64 {
        let began = Instant::now();
        a.write_region(&[(i % 64) * 4096], &[4096], &vec![i as u8; 4096]).unwrap();
        times.push(began.elapsed().as_secs_f64() * 1e3);
    }
    let ms = median(times.clone());
    say(o, format!("one small-change commit: {ms:.2} ms (median of {})", times.len()));
    json!({"ms": ms, "samples": times})
}

/// `writers` handles (an engine each, as processes have) committing transactions that each
/// write their own 4 KiB chunk (1,024 `uint32`, all set to the writer's count of commits so far)
/// for `seconds`. Checked afterwards: the head's commit number moved by exactly the commits
/// reported, and each writer's chunk holds its last count.
fn concurrent(o: &Options, writers: usize) -> Value {
    let locator = fresh(&o.bucket, &format!("writers{writers}"));
    let at = format!("zarrdb+{locator}");
    let first = Database::create(&at).unwrap();
    let meta = ArrayMetadata::new(DataType::UInt32, vec![1024 * writers as u64], vec![1024]);
    Array::create(first.store(), "/a", meta).unwrap();
    let number_before = head_number(&locator);
    let deadline = Instant::now() + Duration::from_secs_f64(o.seconds);
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
                        a.write_region(&[w as u64 * 1024], &[1024], &vec![n as u32 + 1; 1024]).unwrap();
                        txn.commit().unwrap();
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let wall = began.elapsed().as_secs_f64();
    let total: u64 = counts.iter().sum();
    let in_head = head_number(&locator) - number_before;
    let snapshot = first.begin_read().unwrap();
    let cells: Vec<u32> =
        Array::open(snapshot.store(), "/a").unwrap().read_region(&[0], &[1024 * writers as u64]).unwrap();
    let chunks_ok =
        (0..writers).filter(|&w| cells[w * 1024..(w + 1) * 1024].iter().all(|&v| v as u64 == counts[w])).count();
    let rate = total as f64 / wall;
    say(o, format!(
        "{writers} writers: {rate:.1} commits/s ({total} commits in {wall:.1} s; per writer {counts:?}); head moved by {in_head}, chunks right {chunks_ok}/{writers}"
    ));
    assert_eq!(in_head, total, "commits reported but not in the head's count");
    assert_eq!(chunks_ok, writers, "a writer's last commit is not what its chunk holds");
    json!({"writers": writers, "commits_per_s": rate, "commits": total, "seconds": wall, "per_writer": counts,
           "head_moved": in_head, "lost_commits": total as i64 - in_head as i64, "chunks_right": chunks_ok})
}

/// The path of array `i` of `n` in a plate-shaped hierarchy (as an HCS OME-Zarr plate: rows,
/// wells, fields, resolution levels): `/r{row}/c{col}/f{field}/{level}`, 5 levels per field,
/// 12 fields per well, 12 wells per row. 5,760 arrays make 8 rows of 12 wells.
fn plate_path(i: usize) -> (String, String, String, String) {
    let (level, field, col, row) = (i % 5, (i / 5) % 12, (i / 60) % 12, i / 720);
    let r = format!("/r{row}");
    let c = format!("{r}/c{col}");
    let f = format!("{c}/f{field}");
    let a = format!("{f}/{level}");
    (r, c, f, a)
}

/// One commit creating `arrays` arrays (and their groups) and writing the one 4 KiB chunk of
/// each: the shape of icechunk#2348, a plate of 5,760 arrays committed at once.
fn many_arrays(o: &Options) -> Value {
    let locator = fresh(&o.bucket, "arrays");
    let db = Database::create(format!("zarrdb+{locator}")).unwrap();
    let before = count(&locator);
    let began = Instant::now();
    let txn = db.begin_write().unwrap();
    let store = txn.store();
    let mut groups = std::collections::BTreeSet::new();
    Group::create(store.clone(), "/", Map::new()).unwrap();
    for i in 0..o.arrays {
        let (r, c, f, a) = plate_path(i);
        for g in [r, c, f] {
            if groups.insert(g.clone()) {
                Group::create(store.clone(), &g, Map::new()).unwrap();
            }
        }
        let array =
            Array::create(store.clone(), &a, ArrayMetadata::new(DataType::UInt8, vec![4096], vec![4096])).unwrap();
        array.write_region_bytes(&[0], &[4096], &pattern(i as u64, 0, 4096)).unwrap();
    }
    let staged = began.elapsed().as_secs_f64();
    let committing = Instant::now();
    txn.commit().unwrap();
    let commit_s = committing.elapsed().as_secs_f64();
    let total_s = began.elapsed().as_secs_f64();
    let after = count(&locator);
    // Checked after the clock: a few arrays read back.
    let snapshot = db.begin_read().unwrap();
    for i in [0, o.arrays / 2, o.arrays - 1] {
        let got = Array::open(snapshot.store(), &plate_path(i).3).unwrap().read_region_bytes(&[0], &[4096]).unwrap();
        assert!(got == pattern(i as u64, 0, 4096), "array {i} reads back wrong");
    }
    say(o, format!(
        "{} arrays ({} groups) in one commit: {total_s:.2} s in all (staging {staged:.2} s, commit {commit_s:.2} s); objects +{}",
        o.arrays,
        groups.len() + 1,
        after.0 - before.0
    ));
    json!({"arrays": o.arrays, "groups": groups.len() + 1, "total_s": total_s, "stage_s": staged, "commit_s": commit_s,
           "objects_written": after.0 - before.0, "bytes_written": after.1 - before.1})
}

/// `chunks` chunks of `chunk` bytes in one transaction, then read back whole through a snapshot
/// of a fresh handle.
fn transfer(o: &Options, name: &str, len: u64, chunk: u64) -> Value {
    let locator = fresh(&o.bucket, name);
    let db = Database::create(format!("zarrdb+{locator}")).unwrap();
    let bytes = pattern(1, 0, len);
    let began = Instant::now();
    let txn = db.begin_write().unwrap();
    let a = Array::create(txn.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![len], vec![chunk])).unwrap();
    a.write_region_bytes(&[0], &[len], &bytes).unwrap();
    txn.commit().unwrap();
    let write = began.elapsed().as_secs_f64();
    drop(db);
    // A fresh handle, so nothing the write cached serves the read.
    let db = Database::open(format!("zarrdb+{locator}")).unwrap();
    let began = Instant::now();
    let snapshot = db.begin_read().unwrap();
    let read = Array::open(snapshot.store(), "/a").unwrap().read_region_bytes(&[0], &[len]).unwrap();
    let read_s = began.elapsed().as_secs_f64();
    assert!(read == bytes, "{name}: read back differs");
    let objects = count(&locator);
    let mb = len as f64 / 1e6;
    say(
        o,
        format!(
        "{name}: {} chunks of {chunk} B: write {:.1} MB/s ({write:.2} s), read {:.1} MB/s ({read_s:.2} s); {} objects",
        len / chunk,
        mb / write,
        mb / read_s,
        objects.0
    ),
    );
    json!({"chunks": len / chunk, "chunk_bytes": chunk, "bytes": len, "write_s": write, "read_s": read_s,
           "write_MBps": mb / write, "read_MBps": mb / read_s, "objects": objects.0, "stored_bytes": objects.1})
}

/// History on: the array filled (`gc_chunks` chunks of 4 KiB), then `versions` commits each
/// rewriting a tenth of the chunks (a rotating block); then every version but the head expired
/// (`expire`), what only they read freed (`collect`), and the bucket's unreachable objects
/// deleted whatever their age (`compact_older_than(0)`, as icechunk's bench passes `now`), each
/// timed, with the objects under the prefix counted between them.
fn gc(o: &Options) -> Value {
    let locator = fresh(&o.bucket, "gc");
    let at = format!("zarrdb+{locator}");
    let chunks = o.gc_chunks;
    let len = chunks * 4096;
    let db = Database::builder().history(true).create(&at).unwrap();
    let a = Array::create(db.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![len], vec![4096])).unwrap();
    let mut expected = pattern(0, 0, len);
    a.write_region_bytes(&[0], &[len], &expected).unwrap();
    let block = (chunks / 10).max(1) * 4096;
    let began = Instant::now();
    for j in 1..=o.versions {
        let first = ((j - 1) % 10) * block;
        let first = first.min(len - block);
        let data = pattern(j, first, block);
        a.write_region_bytes(&[first], &[block], &data).unwrap();
        expected[first as usize..(first + block) as usize].copy_from_slice(&data);
    }
    let commits_s = began.elapsed().as_secs_f64();
    let versions_before = db.log().unwrap().len();
    drop(a);
    drop(db);
    let db = Database::open(&at).unwrap();
    let before = count(&locator);
    // As on icechunk's side: Last-Modified has whole seconds, so the newest objects are a
    // second old before a cut-off of "now" can tell them from the garbage.
    std::thread::sleep(Duration::from_millis(1100));
    let began = Instant::now();
    db.expire(&VersionRef::Branch("main".into())).unwrap();
    let expire_s = began.elapsed().as_secs_f64();
    let began = Instant::now();
    let collected = db.collect().unwrap();
    let collect_s = began.elapsed().as_secs_f64();
    let after_collect = count(&locator);
    let began = Instant::now();
    db.compact_older_than(Duration::ZERO).unwrap();
    let compact_s = began.elapsed().as_secs_f64();
    let after = count(&locator);
    let versions_after = db.log().unwrap().len();
    let snapshot = db.begin_read().unwrap();
    let read = Array::open(snapshot.store(), "/a").unwrap().read_region_bytes(&[0], &[len]).unwrap();
    assert!(read == expected, "gc: the head does not read as written");
    say(o, format!(
        "gc: {} versions ({commits_s:.1} s to commit); expire {:.1} ms, collect {:.1} ms ({} versions, {} values, {} B freed in the manifest), compact {:.1} ms; objects {} -> {} -> {}, bytes {} -> {} -> {}; versions left {versions_after}",
        versions_before,
        expire_s * 1e3,
        collect_s * 1e3,
        collected.versions,
        collected.values,
        collected.bytes,
        compact_s * 1e3,
        before.0,
        after_collect.0,
        after.0,
        before.1,
        after_collect.1,
        after.1
    ));
    json!({"chunks": chunks, "versions": o.versions, "commits_s": commits_s, "versions_before": versions_before,
           "versions_after": versions_after, "expire_ms": expire_s * 1e3, "collect_ms": collect_s * 1e3,
           "compact_ms": compact_s * 1e3, "collected": {"versions": collected.versions, "values": collected.values, "bytes": collected.bytes},
           "objects_before": before.0, "bytes_before": before.1, "objects_after_collect": after_collect.0,
           "bytes_after_collect": after_collect.1, "objects_after": after.0, "bytes_after": after.1})
}

fn parse() -> Option<Options> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let number = |name: &str, default: u64| value(name).map(|v| v.parse().expect(name)).unwrap_or(default);
    if let Some(locator) = value("--count") {
        let (objects, bytes) = count(&locator);
        println!("{}", json!({"objects": objects, "bytes": bytes}));
        return None;
    }
    let Some(bucket) = args.iter().find(|a| a.starts_with("s3://")).cloned() else {
        eprintln!("bucket_commits: no s3://BUCKET given; nothing measured");
        return None;
    };
    let mut workloads: Vec<String> = args.windows(2).filter(|w| w[0] == "--workload").map(|w| w[1].clone()).collect();
    if workloads.is_empty() {
        workloads = ALL.iter().map(|s| s.to_string()).collect();
    }
    for w in &workloads {
        assert!(ALL.contains(&w.as_str()), "unknown workload {w}; known: {ALL:?}");
    }
    Some(Options {
        bucket,
        json: args.iter().any(|a| a == "--json"),
        workloads,
        latency_commits: number("--latency-commits", 50) as usize,
        writers: value("--writers")
            .map(|v| v.split(',').map(|n| n.parse().expect("--writers")).collect())
            .unwrap_or(vec![1, 4, 16]),
        seconds: value("--seconds").map(|v| v.parse().expect("--seconds")).unwrap_or(10.0),
        arrays: number("--arrays", 5760) as usize,
        small_chunks: number("--small-chunks", 16_384),
        whole_mib: number("--whole-mib", 256),
        gc_chunks: number("--gc-chunks", 1000),
        versions: number("--versions", 100),
        server_objects: number("--server-objects", 2000) as usize,
    })
}

fn main() {
    let Some(o) = parse() else { return };
    let mut out = Map::new();
    for w in o.workloads.clone() {
        let figure = match w.as_str() {
            "server" => server_limits(&o),
            "latency" => commit_latency(&o),
            "writers" => Value::Array(o.writers.iter().map(|&n| concurrent(&o, n)).collect()),
            "arrays" => many_arrays(&o),
            "small_chunks" => transfer(&o, "small_chunks", o.small_chunks * 4096, 4096),
            "whole_array" => transfer(&o, "whole_array", o.whole_mib << 20, 8 << 20),
            "gc" => gc(&o),
            _ => unreachable!(),
        };
        out.insert(w, figure);
    }
    if o.json {
        println!("{}", Value::Object(out));
    }
}
