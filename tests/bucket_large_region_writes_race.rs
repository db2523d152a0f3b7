//! Region writes large enough to stream on a local database (16 MiB and more) on a bucket
//! database, from two handles at once (each races the other for the head, as two processes do):
//! every write lands, none fails because the other committed first, and the array holds each
//! writer's last values. A stream reads the chunks it covers in part once and cannot recheck them
//! over a moved head, so a bucket database takes such writes through the data scope, whose commit
//! rebases (`db/autocommit.rs`, `begin_stream`).

use zarrdb::{Array, ArrayMetadata, DataType, Database};

const HALF: u64 = 20 << 20;

#[test]
fn large_region_writes_from_two_handles_all_land() {
    let locator = format!("zarrdb+memory://large-writes-{}", std::process::id());
    let db = Database::create(&locator).unwrap();
    // Chunks of 3 MiB: each writer's half ends inside a chunk the other half shares.
    Array::create(db.store(), "/a", ArrayMetadata::new(DataType::UInt8, vec![2 * HALF], vec![3 << 20])).unwrap();
    let writers: Vec<_> = (0..2u64)
        .map(|w| {
            let db = Database::open(&locator).unwrap();
            std::thread::spawn(move || {
                let a = Array::open(db.store(), "/a").unwrap();
                for round in 1..=3u8 {
                    a.write_region(&[w * HALF], &[HALF], &vec![round * 10 + w as u8; HALF as usize]).unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    let all = Array::open(db.store(), "/a").unwrap().read_all::<u8>().unwrap();
    assert!(all[..HALF as usize].iter().all(|&v| v == 30), "the first writer's last values");
    assert!(all[HALF as usize..].iter().all(|&v| v == 31), "the second writer's last values");
}
