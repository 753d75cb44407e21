//! Raw JSON-RPC probes, written byte for byte to a process of their own.

use crate::agent::cx::AgentCx;
use crate::report::Outcome;
use crate::strict::Envelope;
use crate::wire::{Received, Wire};
use serde_json::{Value, json};
use std::time::Duration;

/// How long a probe waits for its answer.
const WAIT: Duration = Duration::from_secs(5);

/// The next response from the wire, within `WAIT`.
async fn next_response(wire: &mut Wire) -> Option<Received> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let got = wire.next(left).await?;
        if matches!(got.envelope, Some(Envelope::Response { .. })) {
            return Some(got);
        }
    }
}

fn silence(wire: &Wire, what: &str) -> Outcome {
    if wire.is_closed() {
        Outcome::fail(format!("the agent exited instead of answering {what}"))
    } else {
        Outcome::fail(format!("no answer to {what} within {} s", WAIT.as_secs()))
    }
}

/// Judges the error answer to a probe: its code and its id.
fn expect_error(got: &Received, code: i64, ids: &[Value]) -> Outcome {
    let v = got.value.as_ref().unwrap_or(&Value::Null);
    let got_code = v["error"]["code"].as_i64();
    if got_code != Some(code) {
        let what = match got_code {
            Some(c) => format!("answered code {c}, not {code}"),
            None => format!("answered without an error, not code {code}"),
        };
        return Outcome::fail(what).with_message(&got.line);
    }
    if !ids.contains(&v["id"]) {
        let want: Vec<String> = ids.iter().map(Value::to_string).collect();
        return Outcome::fail(format!(
            "answered with id {}, not {}",
            v["id"],
            want.join(" or ")
        ))
        .with_message(&got.line);
    }
    Outcome::pass()
}

/// Sends `line`, and judges the first response.
async fn probe_line(cx: &mut AgentCx, line: &str, what: &str, code: i64, ids: &[Value]) -> Outcome {
    let peer = match cx.probe().await {
        Ok(p) => p,
        Err(o) => return o,
    };
    peer.wire.send_line(line);
    match next_response(&mut peer.wire).await {
        Some(got) => expect_error(&got, code, ids),
        None => silence(&peer.wire, what),
    }
}

/// Sends a request with `id` and `params`, and judges the response to it.
async fn probe_request(
    cx: &mut AgentCx,
    id: Value,
    method: &str,
    params: Value,
    code: i64,
) -> Outcome {
    let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    probe_line(cx, &line.to_string(), method, code, &[id]).await
}

pub async fn parse_error(cx: &mut AgentCx) -> Outcome {
    probe_line(
        cx,
        "this is not json {",
        "a line that is not JSON",
        -32700,
        &[Value::Null],
    )
    .await
}

pub async fn invalid_request(cx: &mut AgentCx) -> Outcome {
    let line = r#"{"jsonrpc":"2.0","id":"acp-check-bad","method":42}"#;
    probe_line(
        cx,
        line,
        "a request whose method is 42",
        -32600,
        &[json!("acp-check-bad"), Value::Null],
    )
    .await
}

pub async fn method_not_found(cx: &mut AgentCx) -> Outcome {
    probe_request(
        cx,
        json!(101),
        "acp_check/no_such_method",
        json!({}),
        -32601,
    )
    .await
}

pub async fn ext_method_not_found(cx: &mut AgentCx) -> Outcome {
    probe_request(
        cx,
        json!(102),
        "_acp_check/no_such_method",
        json!({}),
        -32601,
    )
    .await
}

pub async fn invalid_params(cx: &mut AgentCx) -> Outcome {
    probe_request(
        cx,
        json!(103),
        "session/new",
        json!({"cwd": 42, "mcpServers": "none"}),
        -32602,
    )
    .await
}

/// Sends a request with `id` (to an unknown method) and checks the id comes
/// back exactly, byte for byte.
async fn echoed(cx: &mut AgentCx, id: &str) -> Outcome {
    let peer = match cx.probe().await {
        Ok(p) => p,
        Err(o) => return o,
    };
    let line =
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"acp_check/echo_id","params":{{}}}}"#);
    peer.wire.send_line(&line);
    let Some(got) = next_response(&mut peer.wire).await else {
        return silence(&peer.wire, &format!("a request with id {id}"));
    };
    let want: Value = serde_json::from_str(id).unwrap();
    let back = got
        .value
        .as_ref()
        .map(|v| v["id"].clone())
        .unwrap_or(Value::Null);
    let text = got.line.replace(' ', "");
    if back != want || !text.contains(&format!("\"id\":{id}")) {
        return Outcome::fail(format!("sent id {id}, the answer has id {back}"))
            .with_message(&got.line);
    }
    Outcome::pass()
}

pub async fn string_id(cx: &mut AgentCx) -> Outcome {
    echoed(cx, "\"7\"").await
}

pub async fn large_id(cx: &mut AgentCx) -> Outcome {
    echoed(cx, "9007199254740991").await
}

pub async fn notification_unanswered(cx: &mut AgentCx) -> Outcome {
    let peer = match cx.probe().await {
        Ok(p) => p,
        Err(o) => return o,
    };
    peer.wire.notify("_acp_check/notice", json!({"n": 1}));
    peer.wire.notify("acp_check/notice", json!({"n": 2}));
    peer.wire.notify(
        "session/cancel",
        json!({"sessionId": "acp-check-no-such-session"}),
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    peer.wire
        .send_line(r#"{"jsonrpc":"2.0","id":104,"method":"acp_check/after","params":{}}"#);
    let Some(got) = next_response(&mut peer.wire).await else {
        return silence(&peer.wire, "the request sent after the notifications");
    };
    let id = got
        .value
        .as_ref()
        .map(|v| v["id"].clone())
        .unwrap_or(Value::Null);
    if id == json!(104) {
        Outcome::pass()
    } else {
        Outcome::fail("a notification was answered").with_message(&got.line)
    }
}

pub async fn garbage_survived(cx: &mut AgentCx) -> Outcome {
    let peer = match cx.probe().await {
        Ok(p) => p,
        Err(o) => return o,
    };
    for junk in [
        "}{",
        "[1, 2",
        "\u{1}\u{2}binary",
        "null",
        "{\"jsonrpc\":\"2.0\"",
    ] {
        peer.wire.send_line(junk);
    }
    peer.wire.send_bytes(b"\xff\xfe not utf-8\n");
    peer.wire
        .send_line(r#"{"jsonrpc":"2.0","id":105,"method":"acp_check/after","params":{}}"#);
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let Some(got) = peer.wire.next(left).await else {
            return silence(&peer.wire, "a request after garbage");
        };
        if got.value.as_ref().is_some_and(|v| v["id"] == json!(105)) {
            return Outcome::pass();
        }
    }
}

pub async fn exit_on_eof(cx: &mut AgentCx) -> Outcome {
    let peer = match cx.probe().await {
        Ok(p) => p,
        Err(o) => return o,
    };
    peer.wire.close_input();
    match peer.exits_within(Duration::from_secs(5)).await {
        Some(_) => Outcome::pass(),
        None => Outcome::fail("still running 5 s after its stdin ended"),
    }
}
