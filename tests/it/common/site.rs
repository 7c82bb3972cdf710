//! A static HTTP/1.1 server on loopback over a directory, and the
//! archives tests serve from it.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A static HTTP/1.1 server on 127.0.0.1 over a directory, logging each
/// requested path. Enough of HTTP for the clients under test: GET and
/// HEAD, `Connection: close`, 404 for anything missing.
pub struct Site {
    pub url: String,
    pub root: PathBuf,
    log: Arc<Mutex<Vec<String>>>,
}

impl Site {
    pub fn start(root: &Path) -> Site {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (dir, l) = (root.to_path_buf(), log.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (dir, l) = (dir.clone(), l.clone());
                std::thread::spawn(move || serve_one(conn, &dir, &l));
            }
        });
        Site {
            url,
            root: root.to_path_buf(),
            log,
        }
    }

    pub fn requests(&self) -> Vec<String> {
        self.log.lock().expect("log").clone()
    }

    pub fn clear_log(&self) {
        self.log.lock().expect("log").clear();
    }

    pub fn put(&self, rel: &str, bytes: &[u8]) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, bytes).expect("write");
    }
}

fn serve_one(mut conn: TcpStream, root: &Path, log: &Mutex<Vec<String>>) {
    let mut req = Vec::new();
    let mut buf = [0u8; 1024];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < 16 * 1024 {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => req.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&req);
    let mut first = text.lines().next().unwrap_or("").split(' ');
    let (method, target) = (first.next().unwrap_or(""), first.next().unwrap_or("/"));
    let path = target.split('?').next().unwrap_or("/").to_string();
    log.lock().expect("log").push(path.clone());
    let file = root.join(path.trim_start_matches('/'));
    let body = if path.split('/').any(|s| s == "..") || !file.is_file() {
        None
    } else {
        std::fs::read(&file).ok()
    };
    let (status, body) = match body {
        Some(b) => ("200 OK", b),
        None => ("404 Not Found", b"not found".to_vec()),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = conn.write_all(head.as_bytes());
    if method != "HEAD" {
        let _ = conn.write_all(&body);
    }
}

/// A `.tar.gz` of `files` (path → contents) at the archive root.
pub fn tar_gz(files: &[(&str, &[u8])]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut t = tar::Builder::new(gz);
    for (path, data) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(if path.ends_with(".sh") { 0o755 } else { 0o644 });
        h.set_cksum();
        t.append_data(&mut h, path, *data).expect("tar");
    }
    t.into_inner().expect("tar").finish().expect("gz")
}
