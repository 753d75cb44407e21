//! The v2 checks, one function each (`async fn(&mut V2Cx) -> Judged`),
//! judged over the lines the log recorded.

use super::cx::{V2Cx, V2Turn, needs};
use crate::agent::StepError;
use crate::agent::run::describe;
use crate::report::Outcome;
use crate::strict::Envelope;
use crate::wire::{Dir, Event};
use acp_schema::method::MethodEnum;
use acp_schema::v2::{AgentNotification, AgentRequest, AgentResponse};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;

/// A check's outcome, or the outcome a step it needed decided early.
pub(super) type Judged = Result<Outcome, Outcome>;

/// The message kinds that carry a `messageId`.
const MESSAGE_KINDS: &[&str] = &[
    "user_message",
    "user_message_chunk",
    "agent_message",
    "agent_message_chunk",
    "agent_thought",
    "agent_thought_chunk",
];

/// The `session/update` params of the events of `turn`.
fn updates(cx: &V2Cx, turn: &V2Turn) -> Vec<(Event, Value)> {
    cx.log
        .since(turn.sent)
        .into_iter()
        .filter(|e| e.wire == turn.wire && e.seq < turn.until && e.dir == Dir::In)
        .filter(|e| e.method() == Some("session/update"))
        .filter_map(|e| {
            let params = e.params()?.clone();
            Some((e, params))
        })
        .collect()
}

fn kind(params: &Value) -> &str {
    params["update"]["sessionUpdate"].as_str().unwrap_or("")
}

async fn ordinary(cx: &mut V2Cx) -> Result<V2Turn, Outcome> {
    cx.ordinary().await.map_err(|e| needs("a turn", &e))
}

/// `v2.init.version`.
pub(super) async fn init_version(cx: &mut V2Cx) -> Judged {
    match cx.init().await {
        Ok(result) => {
            if let Err(e) = decode_result("initialize", &result) {
                return Ok(Outcome::fail(format!(
                    "the result is not a v2 InitializeResponse: {e}"
                )));
            }
            Ok(Outcome::pass())
        }
        Err(e @ StepError::NotV2(_)) => Ok(Outcome::fail(format!(
            "{e}; every other v2 check is not tested"
        ))),
        Err(e) => Ok(Outcome::fail(e.to_string())),
    }
}

/// `v2.init.v1`.
pub(super) async fn init_v1(cx: &mut V2Cx) -> Judged {
    cx.init().await.map_err(|e| needs("a v2 initialize", &e))?;
    let (mut peer, call) = cx
        .fresh(1)
        .await
        .map_err(|e| Outcome::fail(e.to_string()))?;
    peer.kill().await;
    if let Some(result) = call.result() {
        return Ok(match result.get("protocolVersion") {
            Some(v) if *v == json!(1) => Outcome::pass(),
            _ => Outcome::fail("asked for version 1, the agent answered another version")
                .with_message(&describe(&call)),
        });
    }
    Ok(match call.error().and_then(|e| e.get("code")) {
        Some(c) if *c == json!(-32022) => Outcome::pass(),
        _ => Outcome::fail(format!(
            "asked for version 1, the agent neither answered 1 nor refused with -32022: {}",
            describe(&call)
        )),
    })
}

/// `v2.session.new`.
pub(super) async fn session_new(cx: &mut V2Cx) -> Judged {
    cx.init().await.map_err(|e| needs("a v2 initialize", &e))?;
    Ok(match cx.session().await {
        Ok((_, result)) => match decode_result("session/new", &result) {
            Ok(()) => Outcome::pass(),
            Err(e) => Outcome::fail(format!("not a v2 NewSessionResponse: {e}")),
        },
        Err(e) if e.unanswered() => Outcome::not_tested(e.to_string()),
        Err(e) => Outcome::fail(e.to_string()),
    })
}

/// `v2.prompt.ack`.
pub(super) async fn prompt_ack(cx: &mut V2Cx) -> Judged {
    let turn = ordinary(cx).await?;
    let Some(response) = &turn.call.response else {
        return Ok(Outcome::fail(format!(
            "the prompt was not answered: {}",
            describe(&turn.call)
        )));
    };
    if turn.message_id().is_none() {
        return Ok(Outcome::fail("the prompt's answer carries no `messageId`")
            .with_message(&response.line));
    }
    if let Some(idle) = turn.idle
        && idle < response.seq
    {
        return Ok(Outcome::fail(
            "the prompt was answered only after the turn ended (v2 answers it once accepted)",
        )
        .with_message(&response.line));
    }
    Ok(Outcome::pass())
}

/// `v2.prompt.user-message`.
pub(super) async fn prompt_user_message(cx: &mut V2Cx) -> Judged {
    let turn = ordinary(cx).await?;
    let Some(id) = turn.message_id() else {
        return Err(Outcome::skip(
            "the prompt was not acknowledged with a messageId",
        ));
    };
    let echoed = updates(cx, &turn).iter().any(|(_, p)| {
        matches!(kind(p), "user_message" | "user_message_chunk")
            && p["update"]["messageId"] == json!(id)
    });
    Ok(if echoed {
        Outcome::pass()
    } else {
        Outcome::fail(format!(
            "no user_message (or user_message_chunk) update with messageId {id:?} in the turn"
        ))
    })
}

/// `v2.prompt.running-idle`.
pub(super) async fn prompt_running_idle(cx: &mut V2Cx) -> Judged {
    let turn = ordinary(cx).await?;
    let Some(idle) = turn.idle else {
        return Ok(Outcome::fail(format!(
            "no idle state_update ended the turn within --timeout ({} s)",
            cx.opts.timeout.as_secs_f32()
        )));
    };
    let running = updates(cx, &turn).iter().any(|(e, p)| {
        e.seq < idle && kind(p) == "state_update" && p["update"]["state"] == "running"
    });
    Ok(if running {
        Outcome::pass()
    } else {
        Outcome::fail("the turn ended idle without a running state_update before it")
    })
}

/// `v2.prompt.stop-reason`.
pub(super) async fn prompt_stop_reason(cx: &mut V2Cx) -> Judged {
    let turn = ordinary(cx).await?;
    let Some(idle) = turn.idle else {
        return Err(Outcome::skip(
            "the turn did not end with an idle state_update",
        ));
    };
    let line = cx
        .log
        .since(idle)
        .into_iter()
        .next()
        .map(|e| (e.line.clone(), e.params().cloned()));
    Ok(match line {
        Some((_, Some(p))) if p["update"]["stopReason"].is_string() => Outcome::pass(),
        Some((line, _)) => {
            Outcome::fail("the idle update carries no stopReason").with_message(&line)
        }
        None => Outcome::fail("the idle update is not in the log"),
    })
}

/// `v2.prompt.message-ids`.
pub(super) async fn prompt_message_ids(cx: &mut V2Cx) -> Judged {
    let turn = ordinary(cx).await?;
    for (e, p) in updates(cx, &turn) {
        if MESSAGE_KINDS.contains(&kind(&p)) && !p["update"]["messageId"].is_string() {
            return Ok(
                Outcome::fail(format!("a {} carries no messageId", kind(&p))).with_message(&e.line),
            );
        }
    }
    Ok(Outcome::pass())
}

/// `v2.prompt.session-id`.
pub(super) async fn prompt_session_id(cx: &mut V2Cx) -> Judged {
    let turn = ordinary(cx).await?;
    for (e, p) in updates(cx, &turn) {
        if p["sessionId"] != json!(turn.session) {
            return Ok(Outcome::fail(format!(
                "an update of the turn carries another session id than {:?}",
                turn.session
            ))
            .with_message(&e.line));
        }
    }
    Ok(Outcome::pass())
}

/// `v2.tools.upsert`.
pub(super) async fn tools_upsert(cx: &mut V2Cx) -> Judged {
    let turn = ordinary(cx).await?;
    let mut seen = 0;
    for (e, p) in updates(cx, &turn) {
        match kind(&p) {
            "tool_call" => {
                return Ok(Outcome::fail(
                    "a v1 `tool_call` update on a v2 connection (v2 upserts with tool_call_update)",
                )
                .with_message(&e.line));
            }
            "tool_call_update" | "tool_call_content_chunk" => {
                seen += 1;
                if !p["update"]["toolCallId"].is_string() {
                    return Ok(
                        Outcome::fail(format!("a {} carries no toolCallId", kind(&p)))
                            .with_message(&e.line),
                    );
                }
            }
            _ => {}
        }
    }
    Ok(if seen == 0 {
        Outcome::skip(
            "no tool call in the ordinary turn (a --prompt that makes the agent use a tool exercises it)",
        )
    } else {
        Outcome::pass()
    })
}

/// `v2.cancel.idle-cancelled`.
pub(super) async fn cancel_idle(cx: &mut V2Cx) -> Judged {
    let turn = cx.cancel_turn().await?;
    let Some(cancelled) = turn.cancelled else {
        return Ok(Outcome::skip(
            "not exercised: the turn ended before the cancel could be sent; choose a --cancel-prompt that runs longer",
        ));
    };
    let Some(idle) = turn.idle else {
        return Ok(Outcome::fail(format!(
            "no idle state_update within --cancel-within ({} s) of session/cancel",
            cx.opts.cancel_within.as_secs_f32()
        )));
    };
    if idle < cancelled {
        return Ok(Outcome::skip(
            "not exercised: the turn ended before the cancel was sent",
        ));
    }
    let event = cx.log.since(idle).into_iter().next();
    let reason = event
        .as_ref()
        .and_then(|e| e.params())
        .map(|p| p["update"]["stopReason"].clone())
        .unwrap_or(Value::Null);
    Ok(if reason == "cancelled" {
        Outcome::pass()
    } else {
        Outcome::fail(format!(
            "the cancelled turn ended idle with stop reason {reason}, not \"cancelled\""
        ))
        .with_message(&event.map(|e| e.line).unwrap_or_default())
    })
}

/// `v2.cancel.session-usable`.
pub(super) async fn cancel_usable(cx: &mut V2Cx) -> Judged {
    let turn = cx.cancel_turn().await?;
    if turn.idle.is_none() {
        return Err(Outcome::skip("the cancelled turn did not end idle"));
    }
    let text = cx.opts.prompts.first().cloned().unwrap_or_default();
    let text = text.replace("{workspace}", &cx.workspace());
    let next = cx
        .turn(&turn.session, &text, false)
        .await
        .map_err(|e| needs("the main process", &e))?;
    Ok(if next.idle.is_some() && next.message_id().is_some() {
        Outcome::pass()
    } else {
        Outcome::fail(format!(
            "after the cancelled turn, a prompt was not acknowledged and ended idle: {}",
            describe(&next.call)
        ))
    })
}

/// The session capabilities the agent advertised, or a skip.
async fn session_caps(cx: &mut V2Cx, marker: Option<&str>) -> Result<Value, Outcome> {
    let init = cx.init().await.map_err(|e| needs("a v2 initialize", &e))?;
    let caps = init["capabilities"]["session"].clone();
    if !caps.is_object() {
        return Err(Outcome::skip(
            "the agent does not advertise capabilities.session",
        ));
    }
    if let Some(m) = marker
        && caps.get(m).is_none()
    {
        return Err(Outcome::skip(format!(
            "the agent does not advertise capabilities.session.{m}"
        )));
    }
    Ok(caps)
}

async fn call_main(
    cx: &mut V2Cx,
    method: &str,
    params: Value,
) -> Result<crate::wire::Call, Outcome> {
    let timeout = cx.opts.timeout;
    let peer = cx.main().await.map_err(|e| needs("a v2 initialize", &e))?;
    Ok(peer.wire.call(method, params, timeout).await)
}

/// `v2.session.list`.
pub(super) async fn session_list(cx: &mut V2Cx) -> Judged {
    session_caps(cx, None).await?;
    let (session, _) = cx.session().await.map_err(|e| needs("session/new", &e))?;
    let mut cursor: Option<Value> = None;
    let mut found = false;
    for _ in 0..20 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let call = call_main(cx, "session/list", params).await?;
        let Some(result) = call.result() else {
            return Ok(Outcome::fail(format!("session/list: {}", describe(&call))));
        };
        if let Err(e) = decode_result("session/list", result) {
            return Ok(Outcome::fail(format!("not a v2 ListSessionsResponse: {e}"))
                .with_message(&describe(&call)));
        }
        found |= result["sessions"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s["sessionId"] == json!(session)));
        match result.get("nextCursor") {
            Some(c) if !c.is_null() => cursor = Some(c.clone()),
            _ => break,
        }
    }
    let mut outcome = Outcome::pass();
    if !found {
        outcome = outcome.with_notes([format!("the open session {session} is not in the list")]);
    }
    Ok(outcome)
}

/// `v2.session.resume`.
pub(super) async fn session_resume(cx: &mut V2Cx) -> Judged {
    session_caps(cx, None).await?;
    let (session, _) = cx.session().await.map_err(|e| needs("session/new", &e))?;
    let cwd = cx.workspace();
    let call = call_main(
        cx,
        "session/resume",
        json!({"sessionId": session, "cwd": cwd}),
    )
    .await?;
    Ok(match call.result() {
        Some(result) => match decode_result("session/resume", result) {
            Ok(()) => Outcome::pass(),
            Err(e) => Outcome::fail(format!("not a v2 ResumeSessionResponse: {e}")),
        },
        None => Outcome::fail(format!("session/resume: {}", describe(&call))),
    })
}

/// `v2.session.close`.
pub(super) async fn session_close(cx: &mut V2Cx) -> Judged {
    session_caps(cx, None).await?;
    let (session, _) = cx
        .new_session()
        .await
        .map_err(|e| needs("session/new", &e))?;
    let call = call_main(cx, "session/close", json!({"sessionId": session})).await?;
    Ok(match call.result() {
        Some(_) => {
            cx.closed = Some(session);
            Outcome::pass()
        }
        None => Outcome::fail(format!("session/close: {}", describe(&call))),
    })
}

/// `v2.session.closed-refused`.
pub(super) async fn session_closed_refused(cx: &mut V2Cx) -> Judged {
    session_caps(cx, None).await?;
    let Some(session) = cx.closed.clone() else {
        return Err(Outcome::skip("needs a session closed by v2.session.close"));
    };
    let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]});
    let call = call_main(cx, "session/prompt", prompt).await?;
    Ok(if call.error().is_some() {
        Outcome::pass()
    } else {
        Outcome::fail(format!(
            "a prompt to the closed session was not refused: {}",
            describe(&call)
        ))
    })
}

/// `v2.session.delete`.
pub(super) async fn session_delete(cx: &mut V2Cx) -> Judged {
    session_caps(cx, Some("delete")).await?;
    let (session, _) = cx
        .new_session()
        .await
        .map_err(|e| needs("session/new", &e))?;
    let call = call_main(cx, "session/delete", json!({"sessionId": session})).await?;
    Ok(match call.result() {
        Some(_) => Outcome::pass(),
        None => Outcome::fail(format!("session/delete: {}", describe(&call))),
    })
}

/// `v2.rpc.v1-methods-refused`.
pub(super) async fn v1_methods_refused(cx: &mut V2Cx) -> Judged {
    let cwd = cx.workspace();
    let timeout = cx.opts.timeout;
    let peer = cx.probe().await?;
    for (method, params) in [
        (
            "session/load",
            json!({"sessionId": "acp-check-none", "cwd": cwd, "mcpServers": []}),
        ),
        (
            "session/set_mode",
            json!({"sessionId": "acp-check-none", "modeId": "default"}),
        ),
        ("authenticate", json!({"methodId": "acp-check-none"})),
    ] {
        let call = peer.wire.call(method, params, timeout).await;
        if call.error().and_then(|e| e.get("code")) != Some(&json!(-32601)) {
            return Ok(Outcome::fail(format!(
                "the v1 method {method} was not answered -32601: {}",
                describe(&call)
            )));
        }
    }
    Ok(Outcome::pass())
}

/// `v2.rpc.batch-refused`.
pub(super) async fn batch_refused(cx: &mut V2Cx) -> Judged {
    let timeout = cx.opts.timeout.min(Duration::from_secs(10));
    let peer = cx.probe().await?;
    let batch = json!([{"jsonrpc": "2.0", "id": "acp-check-batch", "method": "session/list", "params": {}}]);
    peer.wire.send_line(&batch.to_string());
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let Some(got) = peer.wire.next(left).await else {
            return Ok(Outcome::fail(format!(
                "a batch (a JSON array) got no answer within {} s",
                timeout.as_secs_f32()
            )));
        };
        let Some(value) = &got.value else { continue };
        if value.is_array() {
            return Ok(
                Outcome::fail("a batch was answered as a batch (v2 has none)")
                    .with_message(&got.line),
            );
        }
        if value.get("method").is_some() {
            continue;
        }
        return Ok(if value["error"]["code"] == json!(-32600) {
            Outcome::pass()
        } else {
            Outcome::fail("a batch was not answered -32600").with_message(&got.line)
        });
    }
}

/// `v2.wire.json-lines`.
pub(super) async fn wire_json_lines(cx: &mut V2Cx) -> Judged {
    cx.init().await.map_err(|e| needs("a v2 initialize", &e))?;
    for e in cx.log.all() {
        if e.dir != Dir::In || !cx.v2_wires.contains(&e.wire) {
            continue;
        }
        let ok = e
            .value
            .as_ref()
            .is_some_and(|v| v.is_object() && v["jsonrpc"] == "2.0");
        if !ok {
            return Ok(
                Outcome::fail("a line that is not a JSON-RPC 2.0 message").with_message(&e.line)
            );
        }
    }
    Ok(Outcome::pass())
}

/// Decodes `result` as the v2 result of `method`.
fn decode_result(method: &str, result: &Value) -> Result<(), String> {
    let raw = serde_json::value::to_raw_value(result).map_err(|e| e.to_string())?;
    AgentResponse::decode(method, Some(&raw))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Judges one line the agent sent on a v2 wire against the v2 types.
fn judge_line(
    value: &Value,
    envelope: &Envelope,
    asked: &HashMap<(usize, String), String>,
    wire: usize,
) -> Result<(), String> {
    let params = value
        .get("params")
        .map(serde_json::value::to_raw_value)
        .transpose()
        .map_err(|e| e.to_string())?;
    match envelope {
        Envelope::Request { method, .. } => AgentRequest::decode(method, params.as_deref())
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Envelope::Notification { method } => AgentNotification::decode(method, params.as_deref())
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Envelope::Response {
            id,
            is_error: false,
        } => match asked.get(&(wire, id.to_string())) {
            Some(method) => decode_result(method, &value["result"]),
            None => Ok(()),
        },
        Envelope::Response { is_error: true, .. } => {
            let error = &value["error"];
            if error["code"].is_i64() && error["message"].is_string() {
                Ok(())
            } else {
                Err("an error needs an integer code and a string message".into())
            }
        }
    }
}

/// `v2.wire.types`.
pub(super) async fn wire_types(cx: &mut V2Cx) -> Judged {
    cx.init().await.map_err(|e| needs("a v2 initialize", &e))?;
    let mut asked = HashMap::new();
    let mut notes = Vec::new();
    for e in cx.log.all() {
        if !cx.v2_wires.contains(&e.wire) {
            continue;
        }
        let Some(value) = &e.value else { continue };
        if e.dir == Dir::Out {
            if let (Some(id), Some(method)) =
                (value.get("id"), value.get("method").and_then(Value::as_str))
            {
                asked.insert((e.wire, id.to_string()), method.to_string());
            }
            continue;
        }
        let Some(envelope) = &e.envelope else {
            continue;
        };
        if let Err(why) = judge_line(value, envelope, &asked, e.wire) {
            if why.contains("unknown method") || why.contains("UnknownMethod") {
                notes.push(format!("{why}: {}", crate::report::shorten(&e.line, 200)));
                continue;
            }
            return Ok(Outcome::fail(format!("not a v2 message: {why}")).with_message(&e.line));
        }
    }
    Ok(Outcome::pass().with_notes(notes))
}
