//! Checks of the commits a killed or crashed writer acknowledged: `k/0 ..` in order.

use zarrdb::Database;

/// How many of `k/0 .. k/{commits}` `db` holds, each with `value(i)`, and that none of them
/// follows a missing one.
pub fn held(db: &Database, commits: u64, value: impl Fn(u64) -> Vec<u8>) -> u64 {
    let store = db.store();
    let mut n = 0;
    while let Some(v) = store.get(&format!("k/{n}")).unwrap() {
        assert_eq!(v, value(n), "k/{n}");
        n += 1;
    }
    for later in n..commits {
        assert!(store.get(&format!("k/{later}")).unwrap().is_none(), "k/{later} after a gap at k/{n}");
    }
    n
}
