//! `axon mcp`'s stdio transport, with a guard in front of rmcp.
//!
//! rmcp drops a line it cannot read — not JSON, nested past serde's 128
//! levels, longer than 16 MiB — without a word, as the other official SDKs
//! do; answers JSON that is no MCP message (params of the wrong type, a
//! `jsonrpc` other than "2.0") "Invalid request" without the request's id;
//! and answers a `tools/call` whose params do not fit as an unknown method.
//! A client then waits forever on a request that was never answered. The
//! guard reads each line first and answers those itself, with the request's
//! id when the line's top level shows one (JSON-RPC 2.0: `-32700` parse
//! error, `-32600` invalid request, `-32602` invalid params); every other
//! line goes to rmcp unchanged. Both write whole lines to stdout under one
//! lock, so an answer never lands inside another.

use std::borrow::Cow;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use crate::server::AxonMcp;

/// The longest line read (rmcp's own limit).
pub(crate) const MAX_LINE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// Serve over stdin/stdout until the client closes the connection.
///
/// When both are pipes (an MCP client spawned us), they are driven by the
/// reactor directly: tokio's `Stdin`/`Stdout` hand every read and write to a
/// blocking thread, which cost about 150 µs per round trip here
/// (`crates/axon-cli/benches/mcp_proxy.rs`). Anything else (a terminal, a file) uses those.
pub async fn serve_stdio(
    runner: axon_plan::PlanRunner,
    caller: &axon_core::Caller,
) -> Result<(), crate::ServeError> {
    let handler = AxonMcp::for_caller(runner, caller);
    #[cfg(unix)]
    if let Some((input, output)) = stdio_pipes() {
        return serve_guarded(handler, input, output).await;
    }
    serve_guarded(handler, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serve `handler` on `input`/`output` behind the guard.
async fn serve_guarded<R, W>(handler: AxonMcp, input: R, output: W) -> Result<(), crate::ServeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let output = Arc::new(Mutex::new(output));
    let (to_rmcp, rmcp_in) = tokio::io::duplex(64 * 1024);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(64 * 1024);
    let guard = tokio::spawn(guard(input, to_rmcp, output.clone()));
    let relay = tokio::spawn(relay(from_rmcp, output));
    let served = crate::server::serve_on(handler, (rmcp_in, rmcp_out)).await;
    guard.abort();
    // What rmcp wrote last still goes out.
    let _ = relay.await;
    served
}

/// Read the client's lines: answer the ones rmcp would drop, pass on the rest.
async fn guard<R, W>(input: R, mut to_rmcp: tokio::io::DuplexStream, output: Arc<Mutex<W>>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut input)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .await;
        match read {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let answer = if line.len() > MAX_LINE && !line.ends_with(b"\n") {
            let id = top_level_id(&line);
            if skip_line(&mut input).await.is_err() {
                return;
            }
            Some(error(
                id,
                -32600,
                format!("message over {} MiB: not read", MAX_LINE >> 20),
            ))
        } else {
            check(&line)
        };
        let written = match answer {
            Some(answer) => write_line(&output, &answer).await,
            None => to_rmcp.write_all(&line).await,
        };
        if written.is_err() {
            return;
        }
    }
}

/// Discard the rest of an oversized line.
async fn skip_line<R: AsyncRead + Unpin>(input: &mut BufReader<R>) -> std::io::Result<()> {
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|b| *b == b'\n') {
            Some(at) => {
                input.consume(at + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}

/// Copy rmcp's lines to the client, each whole under the lock.
async fn relay<W: AsyncWrite + Unpin>(from_rmcp: tokio::io::DuplexStream, output: Arc<Mutex<W>>) {
    let mut from_rmcp = BufReader::with_capacity(64 * 1024, from_rmcp);
    let mut line = Vec::new();
    loop {
        line.clear();
        match from_rmcp.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if write_line(&output, &line).await.is_err() {
                    return;
                }
            }
        }
    }
}

async fn write_line<W: AsyncWrite + Unpin>(output: &Mutex<W>, line: &[u8]) -> std::io::Result<()> {
    let mut output = output.lock().await;
    output.write_all(line).await?;
    output.flush().await
}

/// What a line rmcp cannot read is read as here: enough to answer it.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default)]
    id: Option<Value>,
}

/// The methods Axon serves whose params rmcp reads into a type: a request
/// whose params do not fit lands in rmcp's catch-all and is answered
/// "method not found", which misleads a client; it is `-32602` here.
const TYPED: [&str; 4] = ["initialize", "ping", "tools/list", "tools/call"];

/// The answer to a line rmcp would not answer well; `None` to pass it on.
/// rmcp answers a message it cannot read "Invalid request" *without an id*
/// (the client's request then waits forever), so every such line is
/// answered here, with its id.
fn check(line: &[u8]) -> Option<Vec<u8>> {
    let text = line.strip_suffix(b"\n").unwrap_or(line);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    if text.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    match serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(text) {
        Ok(rmcp::model::JsonRpcMessage::Request(request)) => match &request.request {
            rmcp::model::ClientRequest::CustomRequest(custom)
                if TYPED.contains(&custom.method.as_str()) =>
            {
                let id = serde_json::to_value(&request.id).unwrap_or(Value::Null);
                Some(error(id, -32602, invalid_params(&custom.method)))
            }
            _ => None,
        },
        Ok(_) => None,
        Err(e) if e.is_data() => Some(unfit(text)),
        Err(e) => {
            let id = top_level_id(text);
            let message = if e.to_string().contains("recursion limit") {
                "message nested deeper than 128 levels: not read".to_string()
            } else {
                format!("parse error: {e}")
            };
            Some(error(id, -32700, message))
        }
    }
}

/// The answer to well-formed JSON that is no MCP message.
fn unfit(text: &[u8]) -> Vec<u8> {
    let Ok(probe) = serde_json::from_slice::<Probe>(text) else {
        return error(
            Value::Null,
            -32600,
            "invalid request: not a JSON-RPC message object".into(),
        );
    };
    let id = match probe.id {
        Some(id @ Value::String(_)) => id,
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Value::Number(n),
        Some(Value::Null) | None => Value::Null,
        Some(other) => {
            return error(
                Value::Null,
                -32600,
                format!("invalid request: id {other} is not a string or an integer"),
            );
        }
    };
    let (code, message) = match (&probe.jsonrpc, &probe.method) {
        (Some(version), _) if version != "2.0" => (
            -32600,
            format!("invalid request: jsonrpc is {version:?}, not \"2.0\""),
        ),
        (None, _) => (-32600, "invalid request: jsonrpc \"2.0\" is missing".into()),
        (_, Some(method)) if probe.params.is_some() => (-32602, invalid_params(method)),
        (_, Some(method)) => (-32600, format!("invalid request: {method} cannot be read")),
        (_, None) => (-32600, "invalid request: no method".into()),
    };
    error(id, code, message)
}

fn invalid_params(method: &str) -> String {
    let what = match method {
        "tools/call" => " (name: the tool's name, a string; arguments: an object)",
        _ => " (an object)",
    };
    format!("invalid params: not what {method} takes{what}")
}

/// The JSON-RPC error answering a `/mcp` request body that rmcp would refuse
/// with a bare `415 Unsupported Media Type` (it answers every body it cannot
/// read so, whatever was wrong with it): `-32700` for one that is not JSON,
/// `-32600` for JSON that is no MCP message, `-32602` for params that do
/// not fit their method; each with the request's id when it has one. `None`:
/// rmcp reads the body.
pub fn unreadable(body: &[u8]) -> Option<Value> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Some(error_value(
            Value::Null,
            -32700,
            "parse error: the body is empty".into(),
        ));
    }
    check(body).and_then(|answer| serde_json::from_slice(&answer).ok())
}

fn error_value(id: Value, code: i64, message: String) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    })
}

fn error(id: Value, code: i64, message: String) -> Vec<u8> {
    let mut line = serde_json::to_vec(&error_value(id, code, message)).unwrap_or_default();
    line.push(b'\n');
    line
}

/// The `id` of a JSON object's top level, found by scanning (the line may be
/// too large, too deep or broken past it); `null` when there is none.
fn top_level_id(line: &[u8]) -> Value {
    let mut depth = 0usize;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'"' => {
                let end = string_end(line, i);
                let key = &line[i + 1..end.saturating_sub(1).max(i + 1)];
                i = end;
                if depth == 1 && key == b"id" {
                    let rest = &line[i..];
                    let rest = rest.trim_ascii_start();
                    if let Some(value) = rest.strip_prefix(b":") {
                        return scalar(value.trim_ascii_start());
                    }
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Value::Null
}

/// The index just past the string that opens at `start`.
fn string_end(line: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < line.len() {
        match line[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    line.len()
}

/// A number or a string at the start of `value` (an id is one or the other).
fn scalar(value: &[u8]) -> Value {
    let end = match value.first() {
        Some(b'"') => string_end(value, 0),
        _ => value
            .iter()
            .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())
            .unwrap_or(value.len()),
    };
    serde_json::from_slice(&value[..end]).unwrap_or(Value::Null)
}

/// stdin and stdout as non-blocking pipes, when both are pipes.
#[cfg(unix)]
fn stdio_pipes() -> Option<(
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
)> {
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;
    use tokio::net::unix::pipe;
    let is_pipe = |fd: &OwnedFd| {
        fd.try_clone()
            .map(std::fs::File::from)
            .and_then(|f| f.metadata())
            .is_ok_and(|m| m.file_type().is_fifo())
    };
    let input = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let output = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    // Check both before either is switched to non-blocking mode (which the
    // duplicates share with fds 0 and 1): a fallback to tokio's blocking
    // Stdin/Stdout must find them as they were.
    if !(is_pipe(&input) && is_pipe(&output)) {
        return None;
    }
    let input = pipe::Receiver::from_owned_fd(input).ok()?;
    let output = pipe::Sender::from_owned_fd(output).ok()?;
    Some((input, output))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Option<Value> {
        check(line.as_bytes()).map(|a| serde_json::from_slice(&a).unwrap())
    }

    #[test]
    fn good_lines_pass_and_bad_ones_are_answered_with_their_id() {
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
            None
        );
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#),
            None
        );
        let a = answer("[1, 2]").unwrap();
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (Value::Null, json!(-32600))
        );
        for (line, id, code) in [
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":5}"#,
                json!(9),
                -32602,
            ),
            (
                r#"{"jsonrpc":"1.0","id":11,"method":"ping"}"#,
                json!(11),
                -32600,
            ),
            (r#"{"id":"q","method":"ping"}"#, json!("q"), -32600),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
                Value::Null,
                -32600,
            ),
            (
                r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":5}}"#,
                json!(8),
                -32602,
            ),
        ] {
            let a = answer(line).unwrap_or_else(|| panic!("{line} passed on"));
            assert_eq!(
                (a["id"].clone(), a["error"]["code"].clone()),
                (id, json!(code)),
                "{line}"
            );
        }
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":2,"method":"nonexistent"}"#),
            None
        );
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            None
        );
        let a = answer(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}"#)
            .unwrap();
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!(7), json!(-32602))
        );
        let a = answer(r#"{"jsonrpc":"2.0","id":"x-1","method":"tools/ca"#).unwrap();
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!("x-1"), json!(-32700))
        );
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"echo","arguments":{}1{}}}}}"#,
            "[".repeat(300),
            "]".repeat(300)
        );
        let a = answer(&deep).unwrap();
        assert_eq!(a["id"], json!(9));
        assert!(
            a["error"]["message"].as_str().unwrap().contains("deeper"),
            "{a}"
        );
        let a = answer("not json").unwrap();
        assert_eq!(a["id"], Value::Null);
    }

    #[test]
    fn a_body_rmcp_cannot_read_gets_a_json_rpc_error() {
        let code = |body: &str| {
            unreadable(body.as_bytes()).map(|a| (a["id"].clone(), a["error"]["code"].clone()))
        };
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), None);
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":3,"method":"tools/li"#),
            Some((json!(3), json!(-32700)))
        );
        assert_eq!(code(""), Some((Value::Null, json!(-32700))));
        assert_eq!(
            code(r#"{"id":4,"hello":true}"#),
            Some((json!(4), json!(-32600)))
        );
        assert_eq!(code("[1]"), Some((Value::Null, json!(-32600))));
    }

    #[test]
    fn the_id_is_read_from_the_top_level_only() {
        assert_eq!(top_level_id(br#"{"params":{"id":3},"id":4}"#), json!(4));
        assert_eq!(
            top_level_id(br#"{"a":"\"id\"","id" : "q\"r"}"#),
            json!("q\"r")
        );
        assert_eq!(top_level_id(br#"{"method":"x"}"#), Value::Null);
        assert_eq!(top_level_id(br#"{"id":12"#), json!(12));
    }

    #[tokio::test]
    async fn an_oversized_line_is_answered_and_the_next_one_served() {
        let mut big = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"x":""#.to_vec();
        big.resize(MAX_LINE + 10, b'a');
        big.extend_from_slice(b"\"}}}\n{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}\n");
        let output = Arc::new(Mutex::new(Vec::new()));
        let (to_rmcp, mut rmcp_in) = tokio::io::duplex(1024);
        guard(&big[..], to_rmcp, output.clone()).await;
        let answered: Value = serde_json::from_slice(&output.lock().await).unwrap();
        assert_eq!(
            (answered["id"].clone(), answered["error"]["code"].clone()),
            (json!(5), json!(-32600))
        );
        let mut passed = String::new();
        rmcp_in.read_to_string(&mut passed).await.unwrap();
        assert_eq!(
            passed,
            "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}\n"
        );
    }
}
