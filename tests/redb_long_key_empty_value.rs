//! An empty value under a key longer than a redb page: its layout once divided by zero segments
//! (a panic inside the commit, reported as a damaged file). It is stored whole and reads back.

use zarrdb::Database;

#[test]
fn an_empty_value_under_a_key_longer_than_a_page() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::create(dir.path().join("db")).unwrap();
    let store = db.store();
    let key = format!("{}/c/0", "a".repeat(5000));
    store.set(&key, b"").unwrap();
    assert_eq!(store.get(&key).unwrap().as_deref(), Some(&b""[..]));
    assert_eq!(store.size(&key).unwrap(), Some(0));
    let long: Vec<u8> = (0..9000u32).map(|i| i as u8).collect();
    store.set(&key, &long).unwrap();
    assert_eq!(store.get(&key).unwrap(), Some(long));
}
