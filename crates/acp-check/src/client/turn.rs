//! The checking agent's one prompt turn: every client method, in order,
//! each answer judged and recorded under its check's name.
//!
//! Order: bursts of updates (each followed by a request the client must
//! still answer), JSON-RPC probes, file reads, permission requests of each
//! option kind, a file write, terminals, elicitation, garbage, and last a
//! permission request left pending while the client is interrupted (its
//! cancel ends the turn). A part runs only when a selected check needs it
//! and the client advertises what it needs; otherwise its checks are
//! skipped with the reason.

use super::checks::CHECKS;
use super::cx::ClientCx;
use super::judge::{
    PING, allowed, ask, failed, fresh_path, permission_outcome, session_id, still_answers, strictly,
};
use crate::report::Outcome;
use crate::strict::Envelope;
use crate::wire::Call;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the text read back must be.
const READ_TEXT: &str = "one\ntwo\nthree\nfour\nfive: ünïcödé ✓ 日本語 🦀\n";
/// What the client is asked to write.
const WRITE_TEXT: &str = "written by acp check\nünïcödé ✓ 日本語 🦀\n";

/// Runs the turn; returns its stop reason.
pub async fn run(cx: &mut ClientCx) -> &'static str {
    judge_requests(cx);
    if wanted(cx, "updates.") {
        updates(cx).await;
    }
    if wanted(cx, "rpc.") {
        probes(cx).await;
    }
    if wanted(cx, "fs.read") {
        reads(cx).await;
    }
    if wanted(cx, "permission.") {
        permissions(cx).await;
    }
    if wanted(cx, "fs.write") {
        write(cx).await;
    }
    if wanted(cx, "terminal.") {
        super::terminal::run(cx).await;
    }
    if wanted(cx, "elicitation.") {
        super::elicitation::run(cx).await;
    }
    if wanted(cx, "rpc.parse-error") || wanted(cx, "rpc.garbage-survived") {
        garbage(cx).await;
    }
    let text = format!(
        "acp check: the checks are done; the report is where acp check client runs (log: {} lines).",
        cx.log.len()
    );
    cx.update(
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}),
    );
    if (wanted(cx, "cancel.") || wanted(cx, "permission.cancelled")) && cancel(cx).await {
        return "cancelled";
    }
    "end_turn"
}

/// The checks of the client's own requests: initialize, session/new and
/// session/prompt.
fn judge_requests(cx: &mut ClientCx) {
    let strict = |r: &crate::wire::Received, cx: &ClientCx| -> Outcome {
        let events = cx.log.since(r.seq);
        match events.first() {
            Some(e) if !e.findings.errors.is_empty() => {
                Outcome::fail(e.findings.errors.join("; ")).with_message(&e.line)
            }
            Some(e) => Outcome::pass().with_notes(e.findings.notes.clone()),
            None => Outcome::pass(),
        }
    };
    if let Some(init) = cx.init.clone() {
        let first = cx
            .log
            .all()
            .into_iter()
            .find(|e| e.dir == crate::wire::Dir::In && e.envelope.is_some());
        let outcome = match first {
            Some(e) if e.seq != init.seq => {
                Outcome::fail("the client's first message is not initialize").with_message(&e.line)
            }
            _ => strict(&init, cx),
        };
        cx.record("initialize.request", outcome);
        let params = &init.value.as_ref().unwrap_or(&Value::Null)["params"];
        let version = &params["protocolVersion"];
        let outcome = match version.as_u64() {
            Some(v) if (1..=u16::MAX as u64).contains(&v) => Outcome::pass(),
            _ => Outcome::fail(format!(
                "protocolVersion must be the integer version the client speaks (1), got {version}"
            ))
            .with_message(&init.line),
        };
        cx.record("initialize.version", outcome);
        let caps = &params["clientCapabilities"];
        let outcome = if caps.is_object() {
            Outcome::pass()
        } else {
            Outcome::fail(
                "clientCapabilities is missing: the agent cannot know whether fs and terminals may be used",
            )
            .with_message(&init.line)
        };
        cx.record("initialize.capabilities", outcome);
    }
    if let Some(new) = cx.new_session.clone() {
        let cwd = cx
            .session
            .as_ref()
            .map(|s| s.cwd.clone())
            .unwrap_or_default();
        let outcome = if !cwd.is_absolute() {
            Outcome::fail(format!("cwd {} is not an absolute path", cwd.display()))
                .with_message(&new.line)
        } else {
            let o = strict(&new, cx);
            if o.status == crate::Status::Pass && !cwd.is_dir() {
                o.with_notes([format!("cwd {} is not a directory here", cwd.display())])
            } else {
                o
            }
        };
        cx.record("session.new", outcome);
    }
    if let Some(prompt) = cx.prompt.clone() {
        let params = &prompt.value.as_ref().unwrap_or(&Value::Null)["params"];
        let mut outcome = strict(&prompt, cx);
        let session = cx
            .session
            .as_ref()
            .map(|s| s.id.clone())
            .unwrap_or_default();
        if outcome.status == crate::Status::Pass {
            if params["sessionId"] != json!(session) {
                outcome = Outcome::fail(format!(
                    "the prompt names session {}, not {session:?} (the one session/new answered)",
                    params["sessionId"]
                ))
                .with_message(&prompt.line);
            } else if params["prompt"].as_array().is_none_or(Vec::is_empty) {
                outcome =
                    Outcome::fail("the prompt has no content blocks").with_message(&prompt.line);
            }
        }
        cx.record("session.prompt", outcome);
    }
}

async fn updates(cx: &mut ClientCx) {
    let chunk = |text: &str| json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}});
    for n in 0..1000 {
        let text = if n % 100 == 99 { ".\n" } else { "." };
        cx.update(chunk(text));
    }
    let o = still_answers(cx, "1,000 agent_message_chunk notifications").await;
    cx.record("updates.burst", o);
    let line: String = "0123456789abcdef".repeat(8) + "\n";
    let big = line.repeat(1024 * 1024 / line.len());
    cx.update(chunk(&big));
    let o = still_answers(cx, "a 1 MiB agent_message_chunk").await;
    cx.record("updates.large", o);
    cx.update(chunk(
        "\nünïcödé ✓ — 日本語 — 🦀 — e\u{301} — \u{202e}rtl\u{202c} — tab\tend\n",
    ));
    let o = still_answers(cx, "a chunk of unicode text").await;
    cx.record("updates.unicode", o);
    cx.update(json!({"sessionUpdate": "acp_check_unknown_kind", "detail": {"n": 1}}));
    let o = still_answers(cx, "a session update of an unknown kind").await;
    cx.record("updates.unknown-kind", o);
    cx.notify("_acp_check/notice", json!({"n": 1}));
    let o = still_answers(cx, "an unknown extension notification").await;
    cx.record("updates.ext-notification", o);
}

/// Judges the error answer to a request: its code, and the id it echoes.
fn expect_error(call: &Call, code: i64, id: &Value) -> Outcome {
    let Some(r) = &call.response else {
        return Outcome::fail(call.describe());
    };
    let v = r.value.as_ref().unwrap_or(&Value::Null);
    match v["error"]["code"].as_i64() {
        Some(c) if c == code => {}
        Some(c) => {
            return Outcome::fail(format!("answered code {c}, not {code}")).with_message(&r.line);
        }
        None => {
            return Outcome::fail(format!("answered without an error, not code {code}"))
                .with_message(&r.line);
        }
    }
    if v["id"] != *id {
        return Outcome::fail(format!("answered with id {}, not {id}", v["id"]))
            .with_message(&r.line);
    }
    Outcome::pass()
}

/// Sends `method` with the id `id` and waits for an answer echoing it
/// (exactly, or as the number the mutant makes of it).
async fn with_id(cx: &mut ClientCx, id: Value, method: &str) -> (Call, Outcome) {
    let sent = cx.wire().send_request(id.clone(), method, json!({}));
    // A client that stopped answering gets 1 s, as in `ClientCx::wait_response`.
    let silent = cx.silent.is_some();
    let wait = if silent {
        Duration::from_secs(1)
    } else {
        cx.opts.timeout
    };
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let Some(got) = cx.next(left).await else {
            cx.cut_short |= silent;
            let closed = cx.wire().is_closed();
            let call = Call {
                sent,
                response: None,
                closed,
                stray: None,
                stalled: None,
            };
            let o = Outcome::fail(call.describe());
            return (call, o);
        };
        match &got.envelope {
            Some(Envelope::Response { id: got_id, .. })
                if *got_id == id
                    || got_id.to_string().trim_matches('"') == id.to_string().trim_matches('"') =>
            {
                let o = if *got_id == id {
                    Outcome::pass()
                } else {
                    Outcome::fail(format!("the request's id {id} came back as {got_id}"))
                        .with_message(&got.line)
                };
                let call = Call {
                    sent,
                    response: Some(got),
                    closed: false,
                    stray: None,
                    stalled: None,
                };
                return (call, o);
            }
            Some(Envelope::Response { .. }) if got.unknown_id => {
                let call = Call {
                    sent,
                    response: None,
                    closed: false,
                    stray: Some(got),
                    stalled: None,
                };
                let o = Outcome::fail(call.describe());
                return (call, o);
            }
            Some(Envelope::Request { id, method }) => {
                let (id, method) = (id.clone(), method.clone());
                cx.refuse(&id, &method);
            }
            _ => {}
        }
    }
}

async fn probes(cx: &mut ClientCx) {
    let id = cx.wire().fresh_id();
    let call = cx
        .call_with_id(id.clone(), "acp_check/no_such_method", json!({}))
        .await;
    cx.record("rpc.method-not-found", expect_error(&call, -32601, &id));
    let id = cx.wire().fresh_id();
    let call = cx
        .call_with_id(id.clone(), PING, json!({"probe": true}))
        .await;
    cx.record("rpc.ext-method-not-found", expect_error(&call, -32601, &id));
    let (_, o) = with_id(cx, json!("7"), PING).await;
    cx.record("rpc.string-id", o);
    let (_, o) = with_id(cx, json!(9_007_199_254_740_991_i64), PING).await;
    cx.record("rpc.large-id", o);
    let session = cx
        .session
        .as_ref()
        .map(|s| s.id.clone())
        .unwrap_or_default();
    let id = cx.wire().fresh_id();
    let params = json!({"sessionId": session, "toolCall": {"toolCallId": "acp-check-bad"}, "options": "none"});
    let call = cx
        .call_with_id(id.clone(), "session/request_permission", params)
        .await;
    cx.record("rpc.invalid-params", expect_error(&call, -32602, &id));
}

/// Creates the fixture (a new file) in the session's cwd; why not, if it
/// cannot.
fn fixture(cx: &ClientCx, what: &str, text: &str) -> Result<PathBuf, String> {
    use std::io::Write as _;
    let cwd = cx
        .session
        .as_ref()
        .map(|s| s.cwd.clone())
        .unwrap_or_default();
    let path = fresh_path(&cwd, what);
    std::fs::File::create_new(&path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| {
            format!(
                "cannot put a file into the session's cwd {} for the client to read: {e}",
                cwd.display()
            )
        })?;
    Ok(path)
}

async fn reads(cx: &mut ClientCx) {
    if !cx.capability("/fs/readTextFile") {
        let why = "the client does not advertise fs.readTextFile";
        for name in ["fs.read", "fs.read-lines", "fs.read-missing"] {
            cx.record(name, Outcome::skip(why));
        }
        return;
    }
    let path = match fixture(cx, "read.txt", READ_TEXT) {
        Ok(p) => p,
        Err(why) => {
            for name in ["fs.read", "fs.read-lines", "fs.read-missing"] {
                cx.record(name, Outcome::skip(why.clone()));
            }
            return;
        }
    };
    let session = session_id(cx);
    let p = path.display().to_string();
    let call = cx
        .call(
            "fs/read_text_file",
            json!({"sessionId": session, "path": p}),
        )
        .await;
    let o = match call.result() {
        None => failed("fs/read_text_file of a file in the session's cwd", &call),
        Some(r) => match strictly(cx, &call) {
            Some(bad) => bad,
            None if r["content"] == json!(READ_TEXT) => Outcome::pass(),
            None => Outcome::fail(format!(
                "the content read is not the file's: {}",
                crate::report::shorten(&r["content"].to_string(), 80)
            ))
            .with_message(&call.describe()),
        },
    };
    cx.record("fs.read", o);
    let call = cx
        .call(
            "fs/read_text_file",
            json!({"sessionId": session, "path": p, "line": 2, "limit": 2}),
        )
        .await;
    let o = match call.result() {
        None => failed("fs/read_text_file with line 2 and limit 2", &call),
        Some(r) => match strictly(cx, &call) {
            Some(bad) => bad,
            None if r["content"] == json!("two\nthree\n")
                || r["content"] == json!("two\nthree") =>
            {
                Outcome::pass()
            }
            None => Outcome::fail(format!(
                "line 2, limit 2 should read \"two\\nthree\\n\", got {}",
                crate::report::shorten(&r["content"].to_string(), 80)
            ))
            .with_message(&call.describe()),
        },
    };
    cx.record("fs.read-lines", o);
    let missing = fresh_path(path.parent().unwrap_or(Path::new("/")), "missing.txt");
    let call = cx
        .call(
            "fs/read_text_file",
            json!({"sessionId": session, "path": missing.display().to_string()}),
        )
        .await;
    let o = match (&call.response, call.error()) {
        (None, _) => Outcome::fail(call.describe()),
        (Some(r), None) => {
            Outcome::fail("a file that does not exist was answered with a result, not an error")
                .with_message(&r.line)
        }
        (Some(r), Some(e)) => match e["code"].as_i64() {
            Some(-32002) => Outcome::pass(),
            _ => Outcome::pass().with_notes([format!(
                "answered code {}; -32002 (resource not found) says what happened: {}",
                e["code"],
                crate::report::shorten(&r.line, 120)
            )]),
        },
    };
    cx.record("fs.read-missing", o);
    let _ = std::fs::remove_file(&path);
}

const KINDS: [&str; 4] = ["allow_once", "allow_always", "reject_once", "reject_always"];

async fn permissions(cx: &mut ClientCx) {
    let all: Vec<Value> = KINDS
        .iter()
        .map(|k| json!({"optionId": format!("acp-check-all-{k}"), "name": k.replace('_', " "), "kind": k}))
        .collect();
    let offered: Vec<String> = KINDS.iter().map(|k| format!("acp-check-all-{k}")).collect();
    let offered: Vec<&str> = offered.iter().map(String::as_str).collect();
    let (tool, call) = ask(
        cx,
        "acp check: choose any option",
        "other",
        json!([]),
        json!(all),
    )
    .await;
    let o = match permission_outcome(cx, &call, &offered) {
        Ok(_) => Outcome::pass(),
        Err(o) => o,
    };
    cx.tool_done(&tool, "completed");
    cx.record("permission.all-kinds", o);
    let mut single = Outcome::pass();
    let mut seen = Vec::new();
    for kind in KINDS {
        let id = format!("acp-check-only-{kind}");
        let options = json!([{"optionId": id, "name": kind.replace('_', " "), "kind": kind}]);
        let (tool, call) = ask(
            cx,
            &format!("acp check: only {kind}"),
            "other",
            json!([]),
            options,
        )
        .await;
        cx.tool_done(&tool, "completed");
        match permission_outcome(cx, &call, &[id.as_str()]) {
            Ok(Some(_)) => seen.push(format!("{kind}: selected")),
            Ok(None) => seen.push(format!("{kind}: cancelled")),
            Err(o) => {
                if single.status == crate::Status::Pass {
                    single = Outcome::fail(format!("offered only {kind}: {}", o.reason));
                    if let Some(m) = o.message {
                        single.message = Some(m);
                    }
                }
            }
        }
    }
    if single.status == crate::Status::Pass {
        single = single.with_notes([seen.join(", ")]);
    }
    cx.record("permission.single-kind", single);
}

async fn write(cx: &mut ClientCx) {
    if !cx.capability("/fs/writeTextFile") {
        cx.record(
            "fs.write",
            Outcome::skip("the client does not advertise fs.writeTextFile"),
        );
        return;
    }
    let cwd = cx
        .session
        .as_ref()
        .map(|s| s.cwd.clone())
        .unwrap_or_default();
    let path = fresh_path(&cwd, "written.txt");
    let p = path.display().to_string();
    let tool = match allowed(cx, "acp check: write a file", "edit", json!([{"path": p}])).await {
        Ok(t) => t,
        Err(o) => {
            cx.record("fs.write", o);
            return;
        }
    };
    let session = session_id(cx);
    let call = cx
        .call(
            "fs/write_text_file",
            json!({"sessionId": session, "path": p, "content": WRITE_TEXT}),
        )
        .await;
    cx.tool_done(&tool, "completed");
    let o = match call.result() {
        None => failed("fs/write_text_file in the session's cwd", &call),
        Some(_) => match strictly(cx, &call) {
            Some(bad) => bad,
            None => on_disk(&path, &call),
        },
    };
    cx.record("fs.write", o);
    let _ = std::fs::remove_file(&path);
}

fn on_disk(path: &Path, call: &Call) -> Outcome {
    match std::fs::read_to_string(path) {
        Ok(text) if text == WRITE_TEXT => Outcome::pass(),
        Ok(text) => Outcome::fail(format!(
            "the client answered success, but the file holds {}",
            crate::report::shorten(&format!("{text:?}"), 80)
        ))
        .with_message(&call.describe()),
        Err(e) => Outcome::fail(format!(
            "the client answered success, but {} cannot be read: {e}",
            path.display()
        ))
        .with_message(&call.describe()),
    }
}

async fn garbage(cx: &mut ClientCx) {
    let from = cx.log.len();
    cx.wire().send_line("this line is not JSON {");
    let call = cx.call(PING, json!({"after": "garbage"})).await;
    let survived = match &call.response {
        Some(_) => Outcome::pass(),
        None => Outcome::fail(format!(
            "after a line that is not JSON, a request was not answered: {}",
            call.describe()
        )),
    };
    let parse_error = cx.log.since(from).into_iter().find(|e| {
        e.dir == crate::wire::Dir::In
            && matches!(&e.envelope, Some(Envelope::Response { id, .. }) if id.is_null())
    });
    let o = match parse_error {
        Some(e)
            if e.value
                .as_ref()
                .is_some_and(|v| v["error"]["code"] == -32700) =>
        {
            Outcome::pass()
        }
        Some(e) => Outcome::fail("the line was answered with id null, but not code -32700")
            .with_message(&e.line),
        None if call.response.is_some() => {
            Outcome::fail("a line that is not JSON was not answered -32700 with id null")
        }
        None => Outcome::fail(call.describe()),
    };
    cx.record("rpc.parse-error", o);
    cx.record("rpc.garbage-survived", survived);
}

/// Leaves a permission request pending, interrupts the client, and judges
/// its cancel. Whether the turn was cancelled.
async fn cancel(cx: &mut ClientCx) -> bool {
    let session = session_id(cx);
    let tool = cx.tool_call("acp check: waiting for a person", "other", json!([]));
    let options = json!([
        {"optionId": "acp-check-wait-allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "acp-check-wait-reject", "name": "Reject", "kind": "reject_once"},
    ]);
    let id = cx.wire().fresh_id();
    let params = json!({
        "sessionId": session,
        "toolCall": {"toolCallId": tool, "title": "acp check: waiting for a person", "kind": "other", "status": "pending"},
        "options": options,
    });
    let sent = cx
        .wire()
        .send_request(id.clone(), "session/request_permission", params);
    // A moment for a client that answers at once, then the interrupt.
    let early = cx
        .wait_response(&id, sent, Duration::from_millis(300))
        .await;
    if cx.opts.interrupt
        && let Some(client) = &cx.client
    {
        client.signal(nix::sys::signal::Signal::SIGINT);
    }
    let within = cx.opts.cancel_within;
    let deadline = tokio::time::Instant::now() + within;
    let mut answer = early.response.is_some().then_some(early.clone());
    while cx.cancelled.is_none() || answer.is_none() {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() {
            break;
        }
        if answer.is_none() {
            let call = cx.wait_response(&id, sent, left).await;
            if call.response.is_some() {
                answer = Some(call);
            } else if call.closed {
                break;
            }
        } else {
            let Some(got) = cx.next(left).await else {
                break;
            };
            if let Some(Envelope::Request { id, method }) = &got.envelope {
                let (id, method) = (id.clone(), method.clone());
                cx.refuse(&id, &method);
            }
        }
    }
    let how = if cx.opts.interrupt {
        "after SIGINT"
    } else {
        "while waiting"
    };
    let cancel_seq = cx.cancelled;
    let o = match cancel_seq {
        None => Outcome::skip(format!(
            "the client sent no session/cancel {how} within {} s",
            within.as_secs_f64()
        )),
        Some(seq) => {
            let e = cx.log.since(seq).into_iter().next();
            match e {
                Some(e)
                    if e.value
                        .as_ref()
                        .is_some_and(|v| v["params"]["sessionId"] == json!(session)) =>
                {
                    if e.findings.errors.is_empty() {
                        Outcome::pass()
                    } else {
                        Outcome::fail(e.findings.errors.join("; ")).with_message(&e.line)
                    }
                }
                Some(e) => Outcome::fail(format!(
                    "session/cancel does not name the session {session:?}"
                ))
                .with_message(&e.line),
                None => Outcome::pass(),
            }
        }
    };
    cx.record("cancel.notification", o);
    let o = match (&answer, cancel_seq) {
        (_, None) => Outcome::skip("needs the client's session/cancel, which did not come"),
        (None, Some(_)) => Outcome::fail(
            "the permission request pending at the cancel was never answered (it must be answered cancelled)",
        ),
        (Some(call), Some(seq)) if call.seq().is_some_and(|s| s < seq) => Outcome::skip(format!(
            "the client answered the permission request before it cancelled (at once, as a policy does); \
             nothing was pending: {}",
            crate::report::shorten(&call.describe(), 120)
        )),
        (Some(call), Some(_)) => {
            match permission_outcome(cx, call, &["acp-check-wait-allow", "acp-check-wait-reject"]) {
                Ok(None) => Outcome::pass(),
                Ok(Some(id)) => Outcome::fail(format!(
                    "the request pending at the cancel was answered {id:?}, not cancelled"
                ))
                .with_message(&call.describe()),
                Err(o) => o,
            }
        }
    };
    cx.record("permission.cancelled", o);
    cx.tool_done(&tool, "failed");
    cancel_seq.is_some()
}

/// Whether any selected check starts with `prefix` (a part of the turn
/// runs only when a check needs it).
fn wanted(cx: &ClientCx, prefix: &str) -> bool {
    CHECKS
        .iter()
        .any(|c| c.name.starts_with(prefix) && cx.opts.filters.selects(c.name))
}
