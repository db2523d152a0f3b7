//! Values of a bucket database between the inline limit (2 KiB) and a quarter of a pack window
//! (256 KiB) are read through 1 MiB windows of their pack, cached: values written together, some
//! straddling a window's end, read back exactly, whole and by range, through a snapshot and the
//! auto-commit store, in memory and on a real S3 server (SeaweedFS, 127.0.0.1), where a window
//! at a pack's end is shorter than asked.

#[path = "common/seaweed.rs"]
mod seaweed;

use zarrdb::store::ByteRange;
use zarrdb::Database;

fn value(i: usize) -> Vec<u8> {
    let len = 2049 + (i * 7919) % 60_000;
    (0..len).map(|j| (i * 31 + j * 7) as u8).collect()
}

fn round_trip(locator: &str) {
    let db = Database::create(locator).unwrap();
    let txn = db.begin_write().unwrap();
    // About 9 MiB in one pack: many values cross a window's end.
    for i in 0..300 {
        txn.store().set(&format!("v/{i}"), &value(i)).unwrap();
    }
    txn.commit().unwrap();
    let snapshot = db.begin_read().unwrap();
    for store in [snapshot.store(), db.store()] {
        for i in (0..300).rev() {
            let want = value(i);
            let key = format!("v/{i}");
            assert_eq!(store.get(&key).unwrap().as_deref(), Some(&want[..]), "{key}");
            let range = ByteRange::FromStart { offset: 100, length: Some(1000) };
            let part = store.get_partial_values(&[(&key, range)]).unwrap();
            assert_eq!(part[0].as_deref(), Some(&want[100..1100]), "{key} from 100");
            let tail = store.get_partial_values(&[(&key, ByteRange::Suffix(5))]).unwrap();
            assert_eq!(tail[0].as_deref(), Some(&want[want.len() - 5..]), "{key}'s last bytes");
        }
    }
}

#[test]
fn values_read_through_windows_in_memory() {
    round_trip("zarrdb+memory://pack-windows");
}

#[test]
fn values_read_through_windows_on_s3() {
    round_trip(&format!("zarrdb+{}", seaweed::bucket("pack-windows")));
}
