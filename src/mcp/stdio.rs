//! stdio around the SDK's line transport, so that a line that is not JSON
//! is answered instead of dropped.
//!
//! JSON-RPC 2.0 answers a message that does not parse with -32700 and
//! `"id": null`. The SDK (rmcp 3.11, `AsyncRwTransport::receive`) drops
//! such a line without a word, on purpose (rust-sdk#938: an answer to
//! garbage could start an error storm with a peer that echoes it back as
//! more garbage; our answer is valid JSON, so an echo of it is a response
//! to no request here, and nothing more is sent). The SDK has no hook for
//! this, and its error messages cannot carry a null id (it leaves `id`
//! out), so two tasks stand between the SDK's transport and the standard
//! streams: one reads the client's lines first, passes every line that is
//! JSON on unchanged (the SDK keeps its framing, its size cap and its
//! answers to JSON of the wrong shape) and reports the others; the other
//! copies the SDK's output to stdout and writes the parse error answers
//! between its lines, so answers never interleave.

use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The answer to a line that is not JSON.
const PARSE_ERROR: &[u8] =
    b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}\n";

/// Starts the two tasks on `read`/`write`; the SDK's transport reads the
/// first pipe returned and writes the second. The handle finishes once the
/// SDK has closed its end and all it wrote has reached `write`.
pub fn pipes<R, W>(
    read: R,
    write: W,
    max_line: usize,
) -> (DuplexStream, DuplexStream, JoinHandle<()>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (to_sdk, sdk_in) = tokio::io::duplex(64 * 1024);
    let (sdk_out, from_sdk) = tokio::io::duplex(64 * 1024);
    let (tx, rx) = mpsc::channel::<Vec<u8>>(16);
    tokio::spawn(screen(read, to_sdk, tx, max_line));
    let relay = tokio::spawn(relay(from_sdk, write, rx));
    (sdk_in, sdk_out, relay)
}

/// Reads `read` line by line, reports each line that is not JSON on `tx`
/// and passes every other byte to `out`. At most `max_line + 1` bytes are
/// held: the rest of a longer line passes on unchecked, and the SDK drops
/// the whole line by the same cap. Ends at EOF, which closes `out`, so the
/// SDK sees EOF too.
async fn screen(
    read: impl AsyncRead + Unpin,
    mut out: DuplexStream,
    tx: mpsc::Sender<Vec<u8>>,
    max_line: usize,
) {
    let mut read = BufReader::new(read);
    let mut line = Vec::new();
    let mut in_long_line = false;
    loop {
        line.clear();
        let limit = max_line as u64 + 1;
        match (&mut read).take(limit).read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let ends = line.ends_with(b"\n");
        let whole = !in_long_line && ends && line.len() <= max_line;
        in_long_line = !ends;
        // A line that is not JSON, or a request the SDK would misread,
        // is answered here and never reaches the SDK.
        let answer = match whole {
            true if not_json(&line) => Some(PARSE_ERROR.to_vec()),
            true => super::early::refusal(&line),
            false => None,
        };
        if let Some(answer) = answer {
            if tx.send(answer).await.is_err() {
                return;
            }
            continue;
        }
        if out.write_all(&line).await.is_err() {
            return;
        }
    }
}

/// Copies the SDK's output to `out`, with a [`PARSE_ERROR`] line for each
/// report on `rx`, written only where a line of the SDK's has ended.
/// Reports come first: one made before the next line reached the SDK is
/// answered before anything the SDK answers to that line.
async fn relay(
    mut from_sdk: DuplexStream,
    mut out: impl AsyncWrite + Unpin,
    mut rx: mpsc::Receiver<Vec<u8>>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut at_line_start = true;
    loop {
        let wrote = tokio::select! {
            biased;
            Some(answer) = rx.recv(), if at_line_start => out.write_all(&answer).await,
            n = from_sdk.read(&mut buf) => match n {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    at_line_start = buf[n - 1] == b'\n';
                    out.write_all(&buf[..n]).await
                }
            },
        };
        if wrote.is_err() || out.flush().await.is_err() {
            return;
        }
    }
}

/// Whether `line` fails to parse as JSON at all (as opposed to JSON that
/// is not a JSON-RPC message, which the SDK answers). A leading BOM and a
/// blank line are skipped by the SDK, so they are not errors here either.
fn not_json(line: &[u8]) -> bool {
    use serde_json::error::Category;
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.trim_ascii().is_empty() {
        return false;
    }
    serde_json::from_slice::<serde::de::IgnoredAny>(line)
        .is_err_and(|e| matches!(e.classify(), Category::Syntax | Category::Eof))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_text_that_is_not_json_is_a_parse_error() {
        for bad in [
            &b"garbage\n"[..],
            b"{\"jsonrpc\":\n",
            b"\xff\xfe\n",
            b"{} {\n",
        ] {
            assert!(not_json(bad), "{bad:?}");
        }
        // JSON of the wrong shape is the SDK's to answer (-32600); blank
        // lines and a BOM are skipped as the SDK skips them.
        for ok in [
            &b"{}\n"[..],
            b"[1,2]\r\n",
            b"\n",
            b"  \r\n",
            b"\xEF\xBB\xBF{\"a\":1}\n",
        ] {
            assert!(!not_json(ok), "{ok:?}");
        }
        let answer: serde_json::Value = serde_json::from_slice(PARSE_ERROR).expect("json");
        assert_eq!(answer["error"]["code"], -32700);
        assert!(answer["id"].is_null() && answer.get("id").is_some());
    }

    /// A report waits for the end of the line the SDK is writing, and
    /// comes before what the SDK writes next.
    #[tokio::test]
    async fn parse_errors_are_written_between_lines() {
        let (mut sdk_out, from_sdk) = tokio::io::duplex(1024);
        let (out, mut stdout) = tokio::io::duplex(1024);
        let (tx, rx) = mpsc::channel(4);
        let relay = tokio::spawn(relay(from_sdk, out, rx));
        sdk_out.write_all(b"{\"id\":1,").await.expect("write");
        let mut got = vec![0u8; 8];
        // Once the relay has copied the start of the line, a report comes.
        stdout.read_exact(&mut got).await.expect("read");
        tx.send(PARSE_ERROR.to_vec()).await.expect("send");
        sdk_out.write_all(b"\"result\":{}}\n").await.expect("write");
        drop(sdk_out);
        relay.await.expect("relay");
        stdout.read_to_end(&mut got).await.expect("read");
        let mut want = b"{\"id\":1,\"result\":{}}\n".to_vec();
        want.extend_from_slice(PARSE_ERROR);
        assert_eq!(got, want);
    }
}
