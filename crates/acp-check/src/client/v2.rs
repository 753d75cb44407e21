//! `acp check client --protocol 2`: the judge answers a client that asks
//! for protocol version 2 as a v2 agent, through the same relay and life
//! as v1 (`life.rs` starts the client and ends it), and judges what the
//! client sends against the v2 types (`acp_schema::v2`).
//!
//! One prompt turn, as v2 runs it: the prompt acknowledged at once with the
//! user message's id, that message reported (`user_message`), `running`, a
//! message chunk, a tool call upserted as pending, a permission question
//! (title, description, the tool call as its subject), the tool call
//! completed, and idle with `end_turn`. A client that asks for version 1
//! fails `v2.client.initialize` and the other checks are NOT TESTED. The
//! checks are in [`V2_CLIENT_CHECKS`].

use super::cx::ClientCx;
use super::life;
use crate::catalog::Check;
use crate::report::{CheckResult, Outcome, Report, Tier};
use crate::strict::Envelope;
use crate::wire::Dir;
use acp_schema::method::MethodEnum;
use acp_schema::v2::{ClientNotification, ClientRequest, ClientResponse};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;

const SESSION: &str = "acp-check-v2-session-1";
const USER_MESSAGE: &str = "acp-check-user-1";
const AGENT_MESSAGE: &str = "acp-check-agent-1";
const TOOL_CALL: &str = "acp-check-call-1";

/// Why the checks after the version are not tested for a v1 client.
const ASKED_V1: &str = "the client asked for protocol version";

macro_rules! check {
    ($name:literal, $tier:ident, $rule:literal) => {
        Check {
            name: $name,
            area: "v2",
            doc: "v2/overview",
            feature: None,
            tier: Tier::$tier,
            kit: None,
            rule: $rule,
            run: |cx| Box::pin(async move { cx.judged($name) }),
        }
    };
}

/// Every check of `acp check client --protocol 2`.
pub static V2_CLIENT_CHECKS: &[Check<ClientCx>] = &[
    check!(
        "v2.client.initialize",
        Mandatory,
        "the client asks for version 2 with a well-formed v2 `initialize` (`info`, `capabilities`)"
    ),
    check!(
        "v2.client.session-new",
        Mandatory,
        "`session/new` is a well-formed v2 request with an absolute cwd"
    ),
    check!(
        "v2.client.prompt",
        Mandatory,
        "`session/prompt` is a well-formed v2 request for the session"
    ),
    check!(
        "v2.client.permission",
        Mandatory,
        "a v2 permission question (with a subject) is answered with a well-formed outcome naming an offered option"
    ),
    check!(
        "v2.client.wire-types",
        Mandatory,
        "everything the client sends decodes as its v2 type (no v1 methods; unknown `_` methods allowed)"
    ),
];

/// Runs `acp check client --protocol 2`, handing each result to `decided`
/// as soon as it is decided (after the client's life).
pub async fn run_with(
    opts: super::ClientOptions,
    decided: &mut (dyn FnMut(&CheckResult) + Send),
) -> std::io::Result<Report> {
    let command = opts.command.join(" ");
    let filters = opts.filters.clone();
    let mut cx = ClientCx::new(opts)?;
    cx.lived = true;
    match life::start(&mut cx).await {
        Ok(()) => serve(&mut cx).await,
        Err(why) => cx.stop(why),
    }
    life::finish(&mut cx).await;
    if cx.wire.is_some() && !cx.results.contains_key("v2.client.initialize") {
        let why = cx.stopped.clone().unwrap_or_default();
        cx.record("v2.client.initialize", Outcome::fail(why));
    } else if cx.results.contains_key("v2.client.prompt") {
        judge_wire(&mut cx);
    }
    let log = cx.log.clone();
    let results = crate::catalog::run_all(V2_CLIENT_CHECKS, &mut cx, &log, &filters, decided).await;
    Ok(Report {
        side: "client".into(),
        command,
        results,
    })
}

fn params_of(value: Option<&Value>) -> Option<Box<serde_json::value::RawValue>> {
    value
        .and_then(|v| v.get("params"))
        .and_then(|p| serde_json::value::to_raw_value(p).ok())
}

/// Whether a request of the client decodes as its v2 type.
fn decodes(method: &str, value: Option<&Value>) -> Result<(), String> {
    ClientRequest::decode(method, params_of(value).as_deref())
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn line_of(cx: &ClientCx, seq: usize) -> String {
    cx.log
        .since(seq)
        .first()
        .map(|e| e.line.clone())
        .unwrap_or_default()
}

fn update(cx: &mut ClientCx, update: Value) {
    cx.wire().notify(
        "session/update",
        json!({"sessionId": SESSION, "update": update}),
    );
}

/// Serves the client up to the end of its first turn.
async fn serve(cx: &mut ClientCx) {
    let wait = cx.opts.timeout;
    loop {
        let Some(got) = cx.next(wait).await else {
            let step = if !cx.results.contains_key("v2.client.initialize") {
                "initialize"
            } else if !cx.results.contains_key("v2.client.session-new") {
                "session/new"
            } else {
                "session/prompt"
            };
            let why = format!(
                "the client sent nothing more for {} s before its {step}{}",
                wait.as_secs(),
                cx.client_said()
            );
            cx.stop(why);
            return;
        };
        let Some(Envelope::Request { id, method }) = got.envelope.clone() else {
            continue;
        };
        let judged = decodes(&method, got.value.as_ref());
        match method.as_str() {
            "initialize" if !cx.results.contains_key("v2.client.initialize") => {
                let asked = got
                    .value
                    .as_ref()
                    .map(|v| v["params"]["protocolVersion"].clone())
                    .unwrap_or(Value::Null);
                if asked.as_u64().is_none_or(|v| v < 2) {
                    let why = format!("{ASKED_V1} {asked}, not 2");
                    cx.record(
                        "v2.client.initialize",
                        Outcome::fail(why.clone()).with_message(&got.line),
                    );
                    cx.wire().respond(
                        &id,
                        Err(
                            json!({"code": -32022, "message": "Unsupported protocol version",
                            "data": {"requested": asked, "supported": [2]}}),
                        ),
                    );
                    cx.stop(format!("{why}: the v2 checks are not tested"));
                    for name in [
                        "v2.client.session-new",
                        "v2.client.prompt",
                        "v2.client.permission",
                        "v2.client.wire-types",
                    ] {
                        cx.record(name, Outcome::not_tested(format!("not tested: {why}")));
                    }
                    return;
                }
                let outcome = match judged {
                    Ok(()) => Outcome::pass(),
                    Err(e) => {
                        Outcome::fail(format!("not a v2 initialize: {e}")).with_message(&got.line)
                    }
                };
                cx.record("v2.client.initialize", outcome);
                let result = json!({
                    "protocolVersion": 2,
                    "info": {"name": "acp-check", "version": env!("CARGO_PKG_VERSION")},
                    "capabilities": {"session": {}},
                });
                cx.wire().respond(&id, Ok(result));
            }
            "session/new" if !cx.results.contains_key("v2.client.session-new") => {
                let outcome = match judged {
                    Ok(()) => Outcome::pass(),
                    Err(e) => {
                        Outcome::fail(format!("not a v2 session/new: {e}")).with_message(&got.line)
                    }
                };
                cx.record("v2.client.session-new", outcome);
                cx.wire().respond(&id, Ok(json!({"sessionId": SESSION})));
            }
            "session/prompt" if cx.results.contains_key("v2.client.session-new") => {
                let for_session = got
                    .value
                    .as_ref()
                    .is_some_and(|v| v["params"]["sessionId"] == SESSION);
                let outcome = match judged {
                    Ok(()) if for_session => Outcome::pass(),
                    Ok(()) => {
                        Outcome::fail("the prompt names another session").with_message(&got.line)
                    }
                    Err(e) => Outcome::fail(format!("not a v2 session/prompt: {e}"))
                        .with_message(&got.line),
                };
                cx.record("v2.client.prompt", outcome);
                let content = got
                    .value
                    .as_ref()
                    .map(|v| v["params"]["prompt"].clone())
                    .unwrap_or(json!([]));
                update(
                    cx,
                    json!({"sessionUpdate": "user_message", "messageId": USER_MESSAGE, "content": content}),
                );
                cx.wire()
                    .respond(&id, Ok(json!({"messageId": USER_MESSAGE})));
                turn(cx).await;
                return;
            }
            _ => cx.refuse(&id, &method),
        }
    }
}

/// The rest of the turn, after the prompt's acknowledgement.
async fn turn(cx: &mut ClientCx) {
    update(
        cx,
        json!({"sessionUpdate": "state_update", "state": "running"}),
    );
    update(
        cx,
        json!({"sessionUpdate": "agent_message_chunk", "messageId": AGENT_MESSAGE,
        "content": {"type": "text", "text": "Hello from acp check.\n"}}),
    );
    update(
        cx,
        json!({"sessionUpdate": "tool_call_update", "toolCallId": TOOL_CALL,
        "title": "Edit notes.txt", "kind": "edit", "status": "pending"}),
    );
    update(
        cx,
        json!({"sessionUpdate": "state_update", "state": "requires_action"}),
    );
    let options = json!([
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    ]);
    let params = json!({
        "sessionId": SESSION,
        "title": "Allow editing notes.txt?",
        "description": "acp check asks to edit notes.txt.",
        "subject": {"type": "tool_call", "toolCall": {"toolCallId": TOOL_CALL,
            "title": "Edit notes.txt", "kind": "edit", "status": "pending"}},
        "options": options,
    });
    let call = cx.call("session/request_permission", params).await;
    let outcome = match (call.result(), call.error()) {
        (Some(result), _) => {
            let raw = serde_json::value::to_raw_value(result).ok();
            match ClientResponse::decode("session/request_permission", raw.as_deref()) {
                Err(e) => Outcome::fail(format!("not a v2 permission answer: {e}")),
                Ok(_) => match result["outcome"]["outcome"].as_str() {
                    Some("cancelled") => Outcome::pass(),
                    Some("selected")
                        if ["allow", "reject"]
                            .contains(&result["outcome"]["optionId"].as_str().unwrap_or("")) =>
                    {
                        Outcome::pass()
                    }
                    _ => Outcome::fail("the answer names no option offered"),
                },
            }
        }
        (None, Some(_)) => Outcome::fail("the permission question was answered with an error")
            .with_message(&call.describe()),
        (None, None) => Outcome::fail(format!("the permission question: {}", call.describe())),
    };
    let outcome = match outcome.status {
        crate::report::Status::Fail if outcome.message.is_none() => {
            outcome.with_message(&call.describe())
        }
        _ => outcome,
    };
    cx.record("v2.client.permission", outcome);
    update(
        cx,
        json!({"sessionUpdate": "state_update", "state": "running"}),
    );
    update(
        cx,
        json!({"sessionUpdate": "tool_call_update", "toolCallId": TOOL_CALL, "status": "completed"}),
    );
    update(
        cx,
        json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}),
    );
    // A moment for what the client sends after the turn.
    let deadline = tokio::time::Instant::now() + Duration::from_millis(500);
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() {
            break;
        }
        let Some(got) = cx.next(left).await else {
            break;
        };
        if let Some(Envelope::Request { id, method }) = got.envelope.clone() {
            cx.refuse(&id, &method);
        }
    }
}

/// `v2.client.wire-types`: every line the client sent, as its v2 type.
fn judge_wire(cx: &mut ClientCx) {
    let mut asked: HashMap<String, String> = HashMap::new();
    let mut outcome = Outcome::pass();
    for e in cx.log.all() {
        let Some(value) = &e.value else {
            if e.dir == Dir::In {
                outcome = Outcome::fail("a line that is not JSON").with_message(&e.line);
                break;
            }
            continue;
        };
        if e.dir == Dir::Out {
            if let (Some(id), Some(m)) =
                (value.get("id"), value.get("method").and_then(Value::as_str))
            {
                asked.insert(id.to_string(), m.to_string());
            }
            continue;
        }
        let params = params_of(Some(value));
        let judged = match &e.envelope {
            Some(Envelope::Request { method, .. }) => {
                ClientRequest::decode(method, params.as_deref()).map(|_| ())
            }
            Some(Envelope::Notification { method }) => {
                ClientNotification::decode(method, params.as_deref()).map(|_| ())
            }
            Some(Envelope::Response {
                id,
                is_error: false,
            }) => match asked.get(&id.to_string()) {
                Some(m) => {
                    let raw = serde_json::value::to_raw_value(&value["result"]).ok();
                    ClientResponse::decode(m, raw.as_deref()).map(|_| ())
                }
                None => Ok(()),
            },
            _ => Ok(()),
        };
        if let Err(why) = judged {
            outcome =
                Outcome::fail(format!("not a v2 message: {why}")).with_message(&line_of(cx, e.seq));
            break;
        }
    }
    cx.record("v2.client.wire-types", outcome);
}

#[cfg(test)]
mod tests {
    use super::V2_CLIENT_CHECKS;

    #[test]
    fn the_readme_lists_every_v2_client_requirement() {
        let table = crate::catalog::markdown(V2_CLIENT_CHECKS);
        assert!(
            crate::catalog::readme_has("### The v2 client checks", &table),
            "the v2 client requirement table in README.md is stale (run the test with BLESS=1):\n{table}"
        );
    }
}
