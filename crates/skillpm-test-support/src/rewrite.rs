//! A reverse proxy on loopback in front of a real registry, which can
//! rewrite what the registry answers: a man in the middle, or a mirror
//! that lies, for the tests of signed index entries.
//!
//! Plain HTTP/1.1, one request per connection (`Connection: close` both
//! ways). Requests are forwarded as they came, less `If-None-Match` (so
//! every answer is a whole body the rewrite can see); the registry's own
//! URL in a `config.json` becomes the proxy's, so a client pointed at the
//! proxy keeps to its origin. The rewrite gets the request path and the
//! response body and returns the body to send; a body it changes loses
//! its `ETag`.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

type Rewrite = dyn Fn(&str, Vec<u8>) -> Vec<u8> + Send + Sync;

/// A running proxy; its thread lives as long as the test process.
pub struct RewriteProxy {
    addr: std::net::SocketAddr,
    rewrite: Arc<Mutex<Option<Arc<Rewrite>>>>,
}

impl RewriteProxy {
    /// A proxy for the registry at `upstream` (`http://127.0.0.1:PORT`).
    pub fn start(upstream: &str) -> RewriteProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let rewrite: Arc<Mutex<Option<Arc<Rewrite>>>> = Arc::default();
        let target = upstream
            .trim_end_matches('/')
            .strip_prefix("http://")
            .expect("an http:// upstream")
            .to_string();
        let (shared, upstream) = (rewrite.clone(), upstream.trim_end_matches('/').to_string());
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (rewrite, target, upstream) =
                    (shared.clone(), target.clone(), upstream.clone());
                std::thread::spawn(move || {
                    let f = rewrite.lock().expect("rewrite").clone();
                    let mine = format!("http://{addr}");
                    let _ = serve(conn, &target, &upstream, &mine, f.as_deref());
                });
            }
        });
        RewriteProxy { addr, rewrite }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// From now on, every answer's body goes through `f(path, body)`.
    pub fn rewrite(&self, f: impl Fn(&str, Vec<u8>) -> Vec<u8> + Send + Sync + 'static) {
        *self.rewrite.lock().expect("rewrite") = Some(Arc::new(f));
    }

    /// From now on, answers pass unchanged.
    pub fn honest(&self) {
        *self.rewrite.lock().expect("rewrite") = None;
    }
}

/// The head of an HTTP message: its first line and its headers.
fn read_head(r: &mut impl BufRead) -> std::io::Result<(String, Vec<(String, String)>)> {
    let mut first = String::new();
    r.read_line(&mut first)?;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((k, v)) = line.trim_end().split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    Ok((first.trim_end().to_string(), headers))
}

fn header<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// The body after a head: `Content-Length` bytes, chunks, or up to EOF.
fn read_body(r: &mut impl BufRead, headers: &[(String, String)]) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    if header(headers, "transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            r.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| std::io::Error::other("bad chunk size"))?;
            if n == 0 {
                let mut rest = String::new();
                while r.read_line(&mut rest)? > 2 {
                    rest.clear();
                }
                return Ok(body);
            }
            let start = body.len();
            body.resize(start + n, 0);
            r.read_exact(&mut body[start..])?;
            let mut crlf = [0u8; 2];
            r.read_exact(&mut crlf)?;
        }
    }
    match header(headers, "content-length").and_then(|v| v.parse::<usize>().ok()) {
        Some(n) => {
            body.resize(n, 0);
            r.read_exact(&mut body)?;
        }
        None => {
            r.read_to_end(&mut body)?;
        }
    }
    Ok(body)
}

fn serve(
    client: TcpStream,
    target: &str,
    upstream: &str,
    mine: &str,
    rewrite: Option<&Rewrite>,
) -> std::io::Result<()> {
    let mut from_client = BufReader::new(client.try_clone()?);
    let (line, headers) = read_head(&mut from_client)?;
    let has_body = header(&headers, "content-length").is_some()
        || header(&headers, "transfer-encoding").is_some();
    let body = if has_body {
        read_body(&mut from_client, &headers)?
    } else {
        Vec::new()
    };
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();

    let mut up = TcpStream::connect(target)?;
    let mut req = format!("{line}\r\nHost: {target}\r\nConnection: close\r\n");
    for (k, v) in &headers {
        let skip = [
            "host",
            "connection",
            "if-none-match",
            "content-length",
            "transfer-encoding",
        ];
        if !skip.iter().any(|s| k.eq_ignore_ascii_case(s)) {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    if has_body {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    up.write_all(req.as_bytes())?;
    up.write_all(&body)?;

    let mut from_up = BufReader::new(up);
    let (status, headers) = read_head(&mut from_up)?;
    let mut answer = read_body(&mut from_up, &headers)?;
    if path == "/config.json" {
        answer = String::from_utf8_lossy(&answer)
            .replace(upstream, mine)
            .into_bytes();
    }
    let changed = match rewrite {
        Some(f) => {
            let new = f(&path, answer.clone());
            let changed = new != answer;
            answer = new;
            changed
        }
        None => false,
    };
    let mut resp = format!("{status}\r\n");
    for (k, v) in &headers {
        let mut skip = vec!["content-length", "transfer-encoding", "connection"];
        if changed {
            skip.push("etag");
        }
        if !skip.iter().any(|s| k.eq_ignore_ascii_case(s)) {
            resp.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    resp.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        answer.len()
    ));
    let mut client = client;
    client.write_all(resp.as_bytes())?;
    client.write_all(&answer)?;
    client.flush()?;
    let _ = client.shutdown(std::net::Shutdown::Write);
    Ok(())
}
