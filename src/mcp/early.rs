//! Answers given before the SDK reads a message, for requests it would
//! misread rather than refuse. rmcp 3.11 reads a list request whose
//! `cursor` is not a string (`{"cursor": 5}`) as one without a cursor and
//! returns the first page; MCP's pagination says an invalid cursor is
//! -32602. Both transports (`stdio.rs`, the HTTP middleware in `mod.rs`)
//! ask [`refusal`] first.

use serde_json::{json, Value};

/// The JSON-RPC error line for `message` if it is a request whose params
/// the SDK would misread, else `None` (the SDK answers it). Only messages
/// that mention a cursor are parsed here.
pub fn refusal(message: &[u8]) -> Option<Vec<u8>> {
    if !message.windows(8).any(|w| w == b"\"cursor\"") {
        return None;
    }
    let v: Value = serde_json::from_slice(message).ok()?;
    // A notification (no id) gets no answer, as JSON-RPC says.
    let id = v.get("id")?;
    let cursor = v.get("params")?.get("cursor")?;
    if cursor.is_string() || cursor.is_null() {
        return None;
    }
    let answer = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32602, "message": "invalid cursor: a cursor is a string the server handed out"},
    });
    let mut line = serde_json::to_vec(&answer).ok()?;
    line.push(b'\n');
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_request_with_a_cursor_that_is_not_a_string_is_refused() {
        let refused =
            refusal(br#"{"jsonrpc":"2.0","id":7,"method":"resources/list","params":{"cursor":5}}"#)
                .expect("refused");
        let v: Value = serde_json::from_slice(&refused).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["error"]["code"], -32602);
        for passed in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"cursor":"skill://a/SKILL.md"}}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/x","params":{"cursor":5}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"cursor":5}}}"#,
            b"not json \"cursor\"",
        ] {
            assert_eq!(refusal(passed), None, "{}", String::from_utf8_lossy(passed));
        }
    }
}
