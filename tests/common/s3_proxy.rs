//! A proxy in front of a real S3 server on 127.0.0.1, for the tests of bucket databases: it
//! forwards each request as it comes, and notes its request line (`PUT /bucket/key HTTP/1.1`)
//! so a test counts what a client asked of the server and the bytes it sent; with `strip_conditions` it drops the
//! `If-Match` and `If-None-Match` headers, as a server that ignores conditional writes would.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// A running proxy: its port, and the request lines it forwarded.
pub struct Proxy {
    pub port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    /// Forward every connection to `upstream`'s port, request by request.
    pub fn start(upstream: u16, strip_conditions: bool) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let noted = requests.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let noted = noted.clone();
                std::thread::spawn(move || {
                    let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else { return };
                    let (mut to_client, mut from_server) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                    std::thread::spawn(move || std::io::copy(&mut from_server, &mut to_client));
                    let _ = forward(BufReader::new(client), server, strip_conditions, &noted);
                });
            }
        });
        Proxy { port, requests }
    }

    /// The endpoint to point `AWS_ENDPOINT` at.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The requests forwarded since the last call: each request line, then the length of its
    /// body (`PUT /bucket/key HTTP/1.1 1024`).
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.requests.lock().unwrap())
    }
}

/// Copy requests from `client` to `server`, noting each request line.
fn forward(
    mut client: BufReader<TcpStream>,
    mut server: TcpStream,
    strip_conditions: bool,
    noted: &Mutex<Vec<String>>,
) -> std::io::Result<()> {
    loop {
        let mut head = String::new();
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if client.read_line(&mut line)? == 0 {
                return Ok(());
            }
            let lower = line.to_ascii_lowercase();
            if strip_conditions && (lower.starts_with("if-match:") || lower.starts_with("if-none-match:")) {
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
        // The request line, and the length of the body it sends.
        let line = head.lines().next().unwrap_or_default().trim_end().to_owned();
        noted.lock().unwrap().push(format!("{line} {length}"));
        server.write_all(head.as_bytes())?;
        let mut body = vec![0u8; length];
        client.read_exact(&mut body)?;
        server.write_all(&body)?;
    }
}
