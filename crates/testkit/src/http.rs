//! A minimal HTTP/1.1 client for the server tests (`serve`'s and the binary's): one
//! request per connection (`Connection: close`), the whole answer read, chunked bodies
//! undone.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};

/// A server's answer.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The `Content-Type` header (empty when absent).
    pub content_type: String,
    /// Whether the body came chunked (`Transfer-Encoding: chunked`).
    pub chunked: bool,
    /// The body, unchunked.
    pub body: String,
}

/// Sends `METHOD target` to `addr`, with `body` as JSON when given, and reads the
/// whole answer; panics when the server does not give a complete one.
pub fn request(addr: impl ToSocketAddrs, method: &str, target: &str, body: Option<&str>) -> Answer {
    let mut s = TcpStream::connect(addr).expect("connect to the server");
    let mut head = format!("{method} {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    if let Some(b) = body {
        head.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n", b.len()));
    }
    write!(s, "{head}\r\n{}", body.unwrap_or_default()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").expect("a complete HTTP answer");
    let lower = head.to_ascii_lowercase();
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no status in {head:?}"));
    let content_type = lower.lines().find_map(|l| l.strip_prefix("content-type: ")).unwrap_or_default().to_string();
    let chunked = lower.contains("transfer-encoding: chunked");
    let body = if chunked { dechunk(body) } else { body.to_string() };
    Answer { status, content_type, chunked, body }
}

/// `GET target`.
pub fn get(addr: impl ToSocketAddrs, target: &str) -> Answer {
    request(addr, "GET", target, None)
}

/// `POST target` with a JSON body.
pub fn post_json(addr: impl ToSocketAddrs, target: &str, body: &str) -> Answer {
    request(addr, "POST", target, Some(body))
}

/// The payload of a chunked HTTP/1.1 body.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        body = &rest[n + 2..];
    }
    out
}
