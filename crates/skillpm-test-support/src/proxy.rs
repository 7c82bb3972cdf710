//! An HTTP proxy on loopback that tunnels `CONNECT` requests, as a
//! corporate proxy does for https, and records the targets it was asked
//! for.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// A running proxy; its thread lives as long as the test process.
pub struct ConnectProxy {
    addr: std::net::SocketAddr,
    seen: Arc<Mutex<Vec<String>>>,
}

impl ConnectProxy {
    pub fn start() -> ConnectProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let log = log.clone();
                std::thread::spawn(move || tunnel(conn, &log));
            }
        });
        ConnectProxy { addr, seen }
    }

    /// `http://127.0.0.1:PORT`, for `http.proxy` or `HTTPS_PROXY`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The `host:port` of every `CONNECT` so far.
    pub fn targets(&self) -> Vec<String> {
        self.seen.lock().expect("log").clone()
    }
}

/// Reads a `CONNECT host:port` request, connects there, says so, and
/// copies bytes both ways until either side closes.
fn tunnel(client: TcpStream, log: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(client.try_clone().expect("clone"));
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut header = String::new();
    while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
        header.clear();
    }
    let mut parts = line.split_whitespace();
    let (Some("CONNECT"), Some(target)) = (parts.next(), parts.next()) else {
        let _ = (&client).write_all(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n");
        return;
    };
    log.lock().expect("log").push(target.to_string());
    let Ok(upstream) = TcpStream::connect(target) else {
        let _ = (&client).write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n");
        return;
    };
    if (&client)
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .is_err()
    {
        return;
    }
    let (mut up_read, mut up_write) = (upstream.try_clone().expect("clone"), upstream);
    let mut client_write = client;
    let back = std::thread::spawn(move || {
        let _ = std::io::copy(&mut up_read, &mut client_write);
        let _ = client_write.shutdown(std::net::Shutdown::Write);
    });
    let _ = std::io::copy(&mut reader, &mut up_write);
    let _ = up_write.shutdown(std::net::Shutdown::Write);
    let _ = back.join();
}
