//! Eight threads create one bucket database at once (`zarrdb+memory://`, an engine each, as
//! processes would have), in 20 rounds of a fresh database each: every creation succeeds,
//! whichever wrote the marker and the format record first, and all see one database.

use std::sync::{Arc, Barrier};

use zarrdb::Database;

#[test]
fn racing_creators_all_open_one_database() {
    for round in 0..20 {
        let locator = format!("zarrdb+memory://creators-race-{round}");
        let start = Arc::new(Barrier::new(8));
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let (locator, start) = (locator.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    let db = Database::create(&locator).unwrap_or_else(|e| panic!("round {round}, creator {i}: {e}"));
                    db.store().set(&format!("from/{i}"), b"x").unwrap();
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
        let db = Database::open(&locator).unwrap();
        assert_eq!(db.store().list_prefix("from/").unwrap().len(), 8, "round {round}");
    }
}
