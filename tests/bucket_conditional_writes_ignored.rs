//! A server that ignores conditional writes would let two writers both believe they moved a
//! bucket database's head, and one commit would be lost without a word. Behind a proxy that
//! strips `If-Match` and `If-None-Match` from every request to a real S3 server (SeaweedFS on
//! 127.0.0.1), a read-write open, and a creation, are refused with a typed error that says why;
//! a read-only open still reads the database. Through the same server without the proxy, both
//! succeed.

#[path = "common/seaweed.rs"]
mod seaweed;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};

use zarrdb::error::StoreError;
use zarrdb::{Database, Error};

/// Forward every connection to `upstream`, request by request, without the conditional headers.
fn stripping_proxy(upstream: u16) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { continue };
            std::thread::spawn(move || {
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else { return };
                let (mut to_client, mut from_server) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || std::io::copy(&mut from_server, &mut to_client));
                let _ = forward_requests(BufReader::new(client), server);
            });
        }
    });
    port
}

/// Copy requests from `client` to `server`, dropping the conditional headers of each.
fn forward_requests(mut client: BufReader<TcpStream>, mut server: TcpStream) -> std::io::Result<()> {
    loop {
        let mut head = String::new();
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if client.read_line(&mut line)? == 0 {
                return Ok(());
            }
            let lower = line.to_ascii_lowercase();
            if lower.starts_with("if-match:") || lower.starts_with("if-none-match:") {
                continue;
            }
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value.trim().parse().unwrap_or(0);
            }
            let end = line == "\r\n";
            head.push_str(&line);
            if end {
                break;
            }
        }
        server.write_all(head.as_bytes())?;
        let mut body = vec![0u8; length];
        client.read_exact(&mut body)?;
        server.write_all(&body)?;
    }
}

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

    std::env::set_var("AWS_ENDPOINT", format!("http://127.0.0.1:{}", stripping_proxy(upstream)));
    refused_for_conditional_writes(Database::open(&honest));
    refused_for_conditional_writes(Database::create(format!("zarrdb+{}", seaweed::place("through-proxy"))));
    let reader = Database::builder().read_only(true).open(&honest).unwrap();
    assert_eq!(reader.store().get("k").unwrap().as_deref(), Some(&b"written through the honest server"[..]));
    drop(reader);

    std::env::set_var("AWS_ENDPOINT", direct);
    let db = Database::open(&honest).unwrap();
    db.store().set("k", b"again").unwrap();
}
