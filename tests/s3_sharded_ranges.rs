//! `zarrdb cat` of a small region of a sharded array on object storage fetches only what it
//! needs: the shard's index and one inner chunk, each with a ranged GET (after a HEAD for the
//! shard's size), never the whole shard nor any other shard.
//! The requests are counted by a proxy between `zarrdb` and the S3 server (SeaweedFS on
//! 127.0.0.1): it records every request line with whether it asked for a byte range, and the
//! bytes the server sent back.

#[path = "common/cli.rs"]
mod cli;
#[path = "common/seaweed.rs"]
mod seaweed;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cli::ok_text;
use zarrdb::{Array, ArrayMetadata, Database};

/// What went through the proxy.
#[derive(Default)]
struct Seen {
    /// Each request line, and whether the request had a `Range` header.
    requests: Mutex<Vec<(String, bool)>>,
    /// Bytes the server sent back (headers included).
    downloaded: AtomicU64,
}

/// A proxy on a free port to `upstream`, for requests without bodies (reads); its port.
fn proxy(upstream: u16, seen: Arc<Seen>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let server = TcpStream::connect(("127.0.0.1", upstream)).unwrap();
            let (mut client_in, mut server_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let heads = seen.clone();
            std::thread::spawn(move || {
                let mut pending = Vec::new();
                let mut buf = [0u8; 16 << 10];
                while let Ok(n @ 1..) = client_in.read(&mut buf) {
                    pending.extend_from_slice(&buf[..n]);
                    while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&pending[..end]).to_ascii_lowercase();
                        let line = head.lines().next().unwrap_or_default().to_owned();
                        let ranged = head.lines().any(|l| l.starts_with("range:"));
                        heads.requests.lock().unwrap().push((line, ranged));
                        pending.drain(..end + 4);
                    }
                    if server_out.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            });
            let (mut server_in, mut client_out) = (server, client);
            let counted = seen.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 64 << 10];
                while let Ok(n @ 1..) = server_in.read(&mut buf) {
                    counted.downloaded.fetch_add(n as u64, Ordering::Relaxed);
                    if client_out.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            });
        }
    });
    port
}

#[test]
fn a_region_of_a_sharded_array_is_read_with_ranged_requests() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sharded.zarrdb");
    let db = Database::create(&path).unwrap();
    // Shards of 512x512 uint16 (512 KiB), inner chunks of 64x64 (8 KiB), no compression.
    let meta = ArrayMetadata::from_json(
        serde_json::json!({
            "zarr_format": 3, "node_type": "array", "shape": [1024, 1024], "data_type": "uint16",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [512, 512]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0,
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [64, 64], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]
        })
        .to_string()
        .as_bytes(),
    )
    .unwrap();
    let values: Vec<u16> = (0..1024 * 1024).map(|i: u32| (i % 65_521) as u16).collect();
    Array::create(db.store(), "/a", meta).unwrap().write_region(&[0, 0], &[1024, 1024], &values).unwrap();
    drop(db);
    let remote = seaweed::bucket("ranges");
    ok_text(&["export", path.to_str().unwrap(), &remote]);

    let endpoint = std::env::var("AWS_ENDPOINT").unwrap();
    let upstream: u16 = endpoint.rsplit(':').next().unwrap().parse().unwrap();
    let seen = Arc::new(Seen::default());
    let port = proxy(upstream, seen.clone());
    let out = Command::new(env!("CARGO_BIN_EXE_zarrdb"))
        .args(["cat", &remote, "/a", "--region", "600:610,700:704", "--raw"])
        .env("AWS_ENDPOINT", format!("http://127.0.0.1:{port}"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let values = &values;
    let expected: Vec<u8> =
        (600..610).flat_map(|r| (700..704).map(move |c| values[r * 1024 + c])).flat_map(u16::to_le_bytes).collect();
    assert_eq!(out.stdout, expected, "the region's values");

    let requests = seen.requests.lock().unwrap().clone();
    let shard: Vec<&(String, bool)> = requests.iter().filter(|(line, _)| line.contains("/a/c/1/1 ")).collect();
    let gets: Vec<bool> = shard.iter().filter(|(line, _)| line.starts_with("get ")).map(|r| r.1).collect();
    assert_eq!(gets, [true, true], "two ranged GETs of the shard (index, inner chunk): {requests:?}");
    // The rest asks only for the shard's size.
    assert!(shard.iter().all(|(line, _)| line.starts_with("get ") || line.starts_with("head ")), "{requests:?}");
    assert!(!requests.iter().any(|(line, _)| line.contains("/a/c/0/") || line.contains("/a/c/1/0")), "{requests:?}");
    let downloaded = seen.downloaded.load(Ordering::Relaxed);
    assert!(downloaded < 64 << 10, "{downloaded} bytes came back for an 8 KiB inner chunk of a 512 KiB shard");
}
