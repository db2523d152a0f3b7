//! A server that ignores conditional writes would let two writers both believe they moved a
//! bucket database's head, and one commit would be lost without a word. Behind a proxy that
//! strips `If-Match` and `If-None-Match` from every request to a real S3 server (SeaweedFS on
//! 127.0.0.1), a read-write open, and a creation, are refused with a typed error that says why;
//! a read-only open still reads the database. Through the same server without the proxy, both
//! succeed.

#[path = "common/seaweed.rs"]
#[allow(dead_code)]
mod seaweed;

use zarrdb::error::StoreError;
use zarrdb::{Database, Error};

#[path = "common/s3_proxy.rs"]
#[allow(dead_code)]
mod s3_proxy;

fn refused_for_conditional_writes(result: Result<Database, Error>) {
    match result {
        Err(Error::Store(StoreError::Open { reason, .. })) if reason.contains("conditional writes") => {}
        Err(other) => panic!("refused, but not for conditional writes: {other:?}"),
        Ok(_) => panic!("a server that ignores conditional writes was accepted for writing"),
    }
}

#[test]
fn a_server_ignoring_conditional_writes_is_refused_for_writing() {
    let honest = format!("zarrdb+{}", seaweed::bucket("honest"));
    let db = Database::create(&honest).unwrap();
    db.store().set("k", b"written through the honest server").unwrap();
    drop(db);
    let direct = std::env::var("AWS_ENDPOINT").unwrap();
    let upstream: u16 = direct.rsplit(':').next().unwrap().parse().unwrap();

    let proxy = s3_proxy::Proxy::start(upstream, true);
    std::env::set_var("AWS_ENDPOINT", proxy.endpoint());
    refused_for_conditional_writes(Database::open(&honest));
    refused_for_conditional_writes(Database::create(format!("zarrdb+{}", seaweed::place("through-proxy"))));
    let reader = Database::builder().read_only(true).open(&honest).unwrap();
    assert_eq!(reader.store().get("k").unwrap().as_deref(), Some(&b"written through the honest server"[..]));
    drop(reader);

    std::env::set_var("AWS_ENDPOINT", direct);
    let db = Database::open(&honest).unwrap();
    db.store().set("k", b"again").unwrap();
}
