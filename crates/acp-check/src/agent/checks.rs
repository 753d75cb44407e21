//! The checks of `acp check agent`, in the order they run.

use super::{AgentCx, GRACE, needs, probes, rules};
use crate::catalog::Check;
use crate::report::{Outcome, shorten};
use crate::wire::{Call, Dir};
use serde_json::{Value, json};
use std::collections::HashSet;

macro_rules! check {
    ($name:literal, $area:literal, $doc:literal, $feature:expr, $rule:literal, $f:path) => {
        Check {
            name: $name,
            area: $area,
            doc: $doc,
            feature: $feature,
            rule: $rule,
            run: |cx| Box::pin($f(cx)),
        }
    };
}

/// Every check of `acp check agent`.
pub static CHECKS: &[Check<AgentCx>] = &[
    check!(
        "initialize.response",
        "initialize",
        "initialization",
        None,
        "`initialize` is answered with a well-formed result",
        initialize_response
    ),
    check!(
        "initialize.version",
        "initialize",
        "initialization#protocol-version",
        None,
        "asked for version 1, the agent answers 1",
        initialize_version
    ),
    check!(
        "initialize.unsupported-version",
        "initialize",
        "initialization#protocol-version",
        None,
        "asked for a version it cannot support, the agent answers with one it supports (not an error)",
        unsupported_version
    ),
    check!(
        "initialize.auth-methods",
        "initialize",
        "initialization",
        None,
        "auth methods have distinct ids and names",
        auth_methods
    ),
    check!(
        "auth.authenticate",
        "auth",
        "initialization",
        Some("auth"),
        "`authenticate` with `--auth METHOD` (an advertised method) succeeds",
        authenticate
    ),
    check!(
        "session.new",
        "session",
        "session-setup#creating-a-session",
        None,
        "`session/new` with an absolute cwd answers a session id",
        session_new
    ),
    check!(
        "session.modes",
        "session",
        "session-modes",
        Some("modes"),
        "the current mode is one of the available modes, whose ids are distinct",
        session_modes
    ),
    check!(
        "session.config-options",
        "session",
        "session-config-options",
        Some("config-options"),
        "config option ids are distinct; a select's current value is one of its options",
        config_options
    ),
    check!(
        "session.unknown-rejected",
        "session",
        "session-setup",
        None,
        "a prompt to a session that does not exist is answered with an error",
        unknown_session
    ),
    check!(
        "prompt.text",
        "prompt",
        "prompt-turn",
        None,
        "a text prompt (`--prompt`) is answered with a stop reason",
        prompt_text
    ),
    check!(
        "prompt.resource-link",
        "prompt",
        "content#resource-link",
        None,
        "a prompt with a resource link is answered with a stop reason (every agent must accept it)",
        prompt_resource_link
    ),
    check!(
        "prompt.session-id",
        "prompt",
        "prompt-turn#3-agent-reports-output",
        None,
        "every update of a turn carries the turn's session id",
        prompt_session_id
    ),
    check!(
        "prompt.no-update-after-response",
        "prompt",
        "prompt-turn#4-check-for-completion",
        None,
        "no turn content arrives after the prompt's response",
        no_update_after_response
    ),
    check!(
        "session.set-mode",
        "session",
        "session-modes#setting-the-current-mode",
        Some("modes"),
        "`session/set_mode` to another available mode succeeds",
        set_mode
    ),
    check!(
        "session.set-config-option",
        "session",
        "session-config-options",
        Some("config-options"),
        "`session/set_config_option` succeeds and answers the option with its new value",
        set_config_option
    ),
    check!(
        "cancel.stop-reason",
        "cancel",
        "prompt-turn#cancellation",
        None,
        "after `session/cancel` the turn ends with stop reason `cancelled` within `--cancel-within`",
        cancel_stop_reason
    ),
    check!(
        "cancel.session-usable",
        "cancel",
        "prompt-turn#cancellation",
        None,
        "after a cancelled turn the session answers another prompt",
        cancel_session_usable
    ),
    check!(
        "tools.update-follows-call",
        "tools",
        "tool-calls#updating",
        Some("tools"),
        "every `tool_call_update` follows the `tool_call` it updates",
        tools_follow
    ),
    check!(
        "tools.status-forward",
        "tools",
        "tool-calls#status",
        Some("tools"),
        "tool call statuses move forward (pending, in_progress, completed or failed) and stay finished",
        tools_forward
    ),
    check!(
        "tools.permission-known-call",
        "tools",
        "tool-calls#requesting-permission",
        Some("permission"),
        "a permission request names a tool call announced before it",
        permission_known
    ),
    check!(
        "terminals.released",
        "terminals",
        "terminals#releasing-terminals",
        Some("terminal"),
        "every terminal created is released",
        terminals_released
    ),
    check!(
        "fs.absolute-paths",
        "fs",
        "file-system",
        Some("fs"),
        "fs paths and terminal cwds are absolute",
        fs_absolute
    ),
    check!(
        "session.load",
        "session",
        "session-setup#loading-sessions",
        Some("load"),
        "`session/load` replays the history before its response",
        session_load
    ),
    check!(
        "session.load-fresh-process",
        "session",
        "session-setup#loading-sessions",
        Some("load"),
        "`session/load` in a new process of the agent replays the history before its response",
        session_load_fresh
    ),
    check!(
        "session.list",
        "session",
        "session-list",
        Some("list"),
        "`session/list` answers well-formed pages, following `nextCursor` to the end",
        session_list
    ),
    check!(
        "session.resume",
        "session",
        "session-setup",
        Some("resume"),
        "`session/resume` of the open session succeeds",
        session_resume
    ),
    check!(
        "session.close",
        "session",
        "session-setup",
        Some("close"),
        "`session/close` succeeds and a prompt to the closed session is refused",
        session_close
    ),
    check!(
        "session.delete",
        "session",
        "session-list",
        Some("delete"),
        "`session/delete` succeeds and the session leaves `session/list`",
        session_delete
    ),
    check!(
        "rpc.parse-error",
        "rpc",
        "overview",
        None,
        "a line that is not JSON is answered -32700 with id null",
        probes::parse_error
    ),
    check!(
        "rpc.invalid-request",
        "rpc",
        "overview",
        None,
        "a request whose method is not a string is answered -32600",
        probes::invalid_request
    ),
    check!(
        "rpc.method-not-found",
        "rpc",
        "overview",
        None,
        "an unknown method is answered -32601",
        probes::method_not_found
    ),
    check!(
        "rpc.ext-method-not-found",
        "rpc",
        "extensibility#extension-methods",
        None,
        "an unknown `_` method is answered -32601",
        probes::ext_method_not_found
    ),
    check!(
        "rpc.invalid-params",
        "rpc",
        "overview",
        None,
        "`session/new` with params of the wrong types is answered -32602",
        probes::invalid_params
    ),
    check!(
        "rpc.string-id",
        "rpc",
        "overview",
        None,
        "a string id (`\"7\"`) is echoed as that string",
        probes::string_id
    ),
    check!(
        "rpc.large-id",
        "rpc",
        "overview",
        None,
        "a large numeric id (2^53 - 1) is echoed exactly",
        probes::large_id
    ),
    check!(
        "rpc.notification-unanswered",
        "rpc",
        "extensibility#extension-notifications",
        None,
        "notifications, known or not, get no response",
        probes::notification_unanswered
    ),
    check!(
        "rpc.garbage-survived",
        "rpc",
        "transports#stdio",
        None,
        "after garbage the agent still answers requests",
        probes::garbage_survived
    ),
    check!(
        "rpc.exit-on-eof",
        "rpc",
        "transports#stdio",
        None,
        "the agent exits within 5 s once its stdin ends",
        probes::exit_on_eof
    ),
    check!(
        "wire.json-lines",
        "wire",
        "transports#stdio",
        None,
        "everything the agent writes to stdout is JSON-RPC messages, one per line",
        wire_json_lines
    ),
    check!(
        "wire.strict-types",
        "wire",
        "schema",
        None,
        "every message matches the schema's types strictly (unknown fields are notes)",
        wire_strict
    ),
    check!(
        "wire.responses-match",
        "wire",
        "overview",
        None,
        "every response answers a request the checker sent, once",
        wire_responses
    ),
];

fn call_failure(what: &str, call: &Call) -> Outcome {
    let why = if call.response.is_none() {
        call.describe()
    } else {
        "answered with an error".to_string()
    };
    let o = Outcome::fail(format!("{what}: {why}"));
    match &call.response {
        Some(r) => o.with_message(&r.line),
        None => o,
    }
}

/// The strict findings of the line at `seq`, as an outcome.
fn strictly(cx: &AgentCx, seq: Option<usize>) -> Outcome {
    let Some(seq) = seq else {
        return Outcome::pass();
    };
    let events = cx.log.since(seq);
    let Some(e) = events.first() else {
        return Outcome::pass();
    };
    if e.findings.errors.is_empty() {
        Outcome::pass().with_notes(e.findings.notes.clone())
    } else {
        Outcome::fail(e.findings.errors.join("; ")).with_message(&e.line)
    }
}

async fn initialize_response(cx: &mut AgentCx) -> Outcome {
    match cx.init().await {
        Err(e) => Outcome::fail(e),
        Ok(_) => {
            let seq = cx
                .log
                .all()
                .iter()
                .find(|e| {
                    e.wire == 0
                        && e.dir == Dir::In
                        && e.value.as_ref().is_some_and(|v| v.get("result").is_some())
                })
                .map(|e| e.seq);
            strictly(cx, seq)
        }
    }
}

async fn initialize_version(cx: &mut AgentCx) -> Outcome {
    let init = match cx.init().await {
        Ok(i) => i,
        Err(e) => return needs("initialize", &e),
    };
    match init.result.get("protocolVersion") {
        Some(v) if *v == json!(1) => Outcome::pass(),
        Some(v) => Outcome::fail(format!("asked for version 1, answered {v}")),
        None => Outcome::fail("no protocolVersion in the answer"),
    }
}

async fn unsupported_version(cx: &mut AgentCx) -> Outcome {
    let (peer, call) = match cx.fresh(65535).await {
        Ok(x) => x,
        Err(e) => return Outcome::fail(e),
    };
    cx.keep(peer);
    match call.result().map(|r| r.get("protocolVersion")) {
        None => call_failure("initialize with version 65535", &call),
        Some(Some(v)) if *v == json!(65535) => {
            Outcome::fail("answered version 65535: it cannot support a version that does not exist")
                .with_message(&call.describe())
        }
        Some(Some(v)) if v.is_u64() => Outcome::pass(),
        Some(_) => Outcome::fail("no protocolVersion in the answer").with_message(&call.describe()),
    }
}

async fn auth_methods(cx: &mut AgentCx) -> Outcome {
    let init = match cx.init().await {
        Ok(i) => i,
        Err(e) => return needs("initialize", &e),
    };
    let methods = init.result["authMethods"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut ids = HashSet::new();
    for m in &methods {
        let id = m["id"].as_str().unwrap_or("");
        if id.is_empty() || m["name"].as_str().is_none_or(str::is_empty) {
            return Outcome::fail("an auth method without an id or a name")
                .with_message(&m.to_string());
        }
        if !ids.insert(id.to_string()) {
            return Outcome::fail(format!("auth method id {id} appears twice"));
        }
    }
    Outcome::pass()
}

async fn authenticate(cx: &mut AgentCx) -> Outcome {
    let init = match cx.init().await {
        Ok(i) => i,
        Err(e) => return needs("initialize", &e),
    };
    let ids: Vec<String> = init.result["authMethods"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|m| m["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let Some(method) = cx.opts.auth.clone() else {
        return Outcome::skip(if ids.is_empty() {
            "the agent offers no auth methods".to_string()
        } else {
            format!(
                "the agent offers {}; pass --auth METHOD to check authentication",
                ids.join(", ")
            )
        });
    };
    if !ids.contains(&method) {
        return Outcome::fail(format!(
            "--auth {method} is not among the methods the agent offers ({})",
            ids.join(", ")
        ));
    }
    match cx.authed().await {
        Ok(()) => Outcome::pass(),
        Err(e) => Outcome::fail(e),
    }
}

async fn session_new(cx: &mut AgentCx) -> Outcome {
    if let Err(e) = cx.authed().await {
        return needs("initialize", &e);
    }
    match cx.session().await {
        Err(e) => Outcome::fail(e),
        Ok(s) if s.id.is_empty() => Outcome::fail("the session id is empty"),
        Ok(_) => {
            let seq = cx
                .log
                .all()
                .iter()
                .rev()
                .find(|e| {
                    e.wire == 0
                        && e.dir == Dir::In
                        && e.value
                            .as_ref()
                            .is_some_and(|v| v["result"].get("sessionId").is_some())
                })
                .map(|e| e.seq);
            strictly(cx, seq)
        }
    }
}

async fn session_modes(cx: &mut AgentCx) -> Outcome {
    let s = match cx.session().await {
        Ok(s) => s,
        Err(e) => return needs("session/new", &e),
    };
    let Some(modes) = s.result.get("modes").filter(|m| !m.is_null()) else {
        return Outcome::skip("session/new answered no modes");
    };
    let available: Vec<&str> = modes["availableModes"]
        .as_array()
        .map(|a| a.iter().filter_map(|m| m["id"].as_str()).collect())
        .unwrap_or_default();
    let distinct: HashSet<&&str> = available.iter().collect();
    if distinct.len() != available.len() {
        return Outcome::fail("two available modes share an id").with_message(&modes.to_string());
    }
    let current = modes["currentModeId"].as_str().unwrap_or("");
    if !available.contains(&current) {
        return Outcome::fail(format!(
            "the current mode {current:?} is not an available mode"
        ))
        .with_message(&modes.to_string());
    }
    Outcome::pass()
}

/// The values a select option offers (flat or grouped).
fn select_values(option: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for o in option["options"].as_array().into_iter().flatten() {
        if let Some(v) = o["value"].as_str() {
            out.push(v.to_string());
        }
        for g in o["options"].as_array().into_iter().flatten() {
            if let Some(v) = g["value"].as_str() {
                out.push(v.to_string());
            }
        }
    }
    out
}

async fn config_options(cx: &mut AgentCx) -> Outcome {
    let s = match cx.session().await {
        Ok(s) => s,
        Err(e) => return needs("session/new", &e),
    };
    let Some(options) = s.result["configOptions"]
        .as_array()
        .filter(|a| !a.is_empty())
    else {
        return Outcome::skip("session/new answered no config options");
    };
    let mut ids = HashSet::new();
    for o in options {
        let id = o["id"].as_str().unwrap_or("");
        if !ids.insert(id) {
            return Outcome::fail(format!("config option id {id} appears twice"));
        }
        if o["type"] == "select" {
            let current = o["currentValue"].as_str().unwrap_or("");
            if !select_values(o).iter().any(|v| v == current) {
                return Outcome::fail(format!(
                    "option {id}: the current value {current:?} is not one of its options"
                ))
                .with_message(&o.to_string());
            }
        }
    }
    Outcome::pass()
}

async fn unknown_session(cx: &mut AgentCx) -> Outcome {
    if let Err(e) = cx.authed().await {
        return needs("initialize", &e);
    }
    let timeout = cx.opts.timeout;
    let peer = match cx.main().await {
        Ok(p) => p,
        Err(e) => return Outcome::fail(e),
    };
    let params = json!({"sessionId": "acp-check-no-such-session", "prompt": [{"type": "text", "text": "hello"}]});
    let call = peer.wire.call("session/prompt", params, timeout).await;
    peer.wire.drain(GRACE).await;
    match (call.result(), call.error()) {
        (_, Some(_)) => Outcome::pass(),
        (Some(_), _) => Outcome::fail("a prompt to an unknown session was answered with success")
            .with_message(&call.describe()),
        _ => Outcome::fail(format!("no answer: {}", call.describe())),
    }
}

fn stop_reason_outcome(call: &Call) -> Outcome {
    match call.result().and_then(|r| r.get("stopReason")) {
        Some(_) => Outcome::pass(),
        None => call_failure("session/prompt", call),
    }
}

async fn prompt_text(cx: &mut AgentCx) -> Outcome {
    match cx.ordinary().await {
        Err(e) => needs("session/new", &e),
        Ok(turn) => match stop_reason_outcome(&turn.call) {
            o if o.status == crate::report::Status::Pass => strictly(cx, turn.answered),
            o => o,
        },
    }
}

async fn prompt_resource_link(cx: &mut AgentCx) -> Outcome {
    let s = match cx.session().await {
        Ok(s) => s,
        Err(e) => return needs("session/new", &e),
    };
    let uri = format!("file://{}/notes.txt", cx.workspace());
    let prompt = json!([
        {"type": "text", "text": "What is in the file this links to? One line, please."},
        {"type": "resource_link", "uri": uri, "name": "notes.txt", "mimeType": "text/plain"},
    ]);
    match cx.turn(&s.id, prompt).await {
        Err(e) => Outcome::fail(e),
        Ok(turn) => stop_reason_outcome(&turn.call),
    }
}

async fn prompt_session_id(cx: &mut AgentCx) -> Outcome {
    if let Err(e) = cx.ordinary().await {
        return needs("a turn", &e);
    }
    let events = cx.log.all();
    for turn in cx.turns() {
        if let Some(e) = rules::wrong_session(&events, turn) {
            return Outcome::fail(format!(
                "an update of the turn on {} names another session",
                turn.session
            ))
            .with_message(&e.line);
        }
    }
    Outcome::pass()
}

async fn no_update_after_response(cx: &mut AgentCx) -> Outcome {
    if let Err(e) = cx.ordinary().await {
        return needs("a turn", &e);
    }
    let events = cx.log.all();
    for turn in cx.turns() {
        if let Some(e) = rules::late_update(&events, turn) {
            return Outcome::fail("turn content arrived after the prompt's response")
                .with_message(&e.line);
        }
    }
    Outcome::pass()
}

async fn set_mode(cx: &mut AgentCx) -> Outcome {
    let s = match cx.session().await {
        Ok(s) => s,
        Err(e) => return needs("session/new", &e),
    };
    let Some(modes) = s.result.get("modes").filter(|m| !m.is_null()) else {
        return Outcome::skip("session/new answered no modes");
    };
    let current = modes["currentModeId"].as_str().unwrap_or("").to_string();
    let ids: Vec<String> = modes["availableModes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|m| m["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let target = ids.iter().find(|m| **m != current).or(ids.first()).cloned();
    let Some(target) = target else {
        return Outcome::skip("no available mode");
    };
    let timeout = cx.opts.timeout;
    let peer = match cx.main().await {
        Ok(p) => p,
        Err(e) => return Outcome::fail(e),
    };
    let call = peer
        .wire
        .call(
            "session/set_mode",
            json!({"sessionId": s.id, "modeId": target}),
            timeout,
        )
        .await;
    peer.wire.drain(GRACE).await;
    if call.result().is_none() {
        return call_failure(&format!("session/set_mode to {target}"), &call);
    }
    strictly(cx, call.seq())
}

async fn set_config_option(cx: &mut AgentCx) -> Outcome {
    let s = match cx.session().await {
        Ok(s) => s,
        Err(e) => return needs("session/new", &e),
    };
    let options = s.result["configOptions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut choice = None;
    for o in &options {
        let id = o["id"].as_str().unwrap_or("").to_string();
        if o["type"] == "select" {
            let current = o["currentValue"].as_str().unwrap_or("");
            if let Some(v) = select_values(o).into_iter().find(|v| v != current) {
                choice = Some((
                    id,
                    json!(v),
                    json!({"sessionId": s.id, "configId": o["id"], "value": v}),
                ));
                break;
            }
        } else if o["type"] == "boolean" {
            let v = !o["currentValue"].as_bool().unwrap_or(false);
            choice = Some((
                id,
                json!(v),
                json!({"sessionId": s.id, "configId": o["id"], "type": "boolean", "value": v}),
            ));
            break;
        }
    }
    let Some((id, value, params)) = choice else {
        return Outcome::skip("no config option with another value to set");
    };
    let timeout = cx.opts.timeout;
    let peer = match cx.main().await {
        Ok(p) => p,
        Err(e) => return Outcome::fail(e),
    };
    let call = peer
        .wire
        .call("session/set_config_option", params, timeout)
        .await;
    peer.wire.drain(GRACE).await;
    let Some(result) = call.result() else {
        return call_failure(&format!("session/set_config_option {id}"), &call);
    };
    let now = result["configOptions"]
        .as_array()
        .and_then(|a| a.iter().find(|o| o["id"] == json!(id)))
        .map(|o| o["currentValue"].clone());
    match now {
        Some(v) if v == value => strictly(cx, call.seq()),
        Some(v) => Outcome::fail(format!("set {id} to {value}, but the answer says {v}"))
            .with_message(&call.describe()),
        None => Outcome::fail(format!("the answer does not list option {id}"))
            .with_message(&call.describe()),
    }
}

async fn cancel_stop_reason(cx: &mut AgentCx) -> Outcome {
    match cx.cancel_turn().await {
        Err(o) => o,
        Ok(turn) => match turn.call.result().and_then(|r| r.get("stopReason")) {
            Some(r) if r == "cancelled" => Outcome::pass(),
            Some(r) => Outcome::fail(format!("the cancelled turn ended with stop reason {r}"))
                .with_message(&turn.call.describe()),
            None if turn.call.error().is_some() => Outcome::fail(
                "the cancelled turn was answered with an error, not stop reason cancelled",
            )
            .with_message(&turn.call.describe()),
            None => Outcome::fail(format!(
                "no answer within {} s of session/cancel",
                cx.opts.cancel_within.as_secs_f32()
            )),
        },
    }
}

async fn cancel_session_usable(cx: &mut AgentCx) -> Outcome {
    let cancelled = match cx.cancel_turn().await {
        Err(o) if o.status == crate::report::Status::Skip => return o,
        Err(o) => return Outcome::skip(format!("needs the cancelled turn: {}", o.reason)),
        Ok(t) => t,
    };
    if cancelled.call.response.is_none() {
        return Outcome::skip("the cancelled turn never ended");
    }
    let text = cx.prompt_text(&cx.opts.prompts.first().cloned().unwrap_or_default());
    match cx
        .turn(&cancelled.session, json!([{"type": "text", "text": text}]))
        .await
    {
        Err(e) => Outcome::fail(e),
        Ok(turn) => stop_reason_outcome(&turn.call),
    }
}

async fn tools_follow(cx: &mut AgentCx) -> Outcome {
    if let Err(e) = cx.ordinary().await {
        return needs("a turn", &e);
    }
    let t = rules::tool_calls(&cx.log.all());
    if let Some(e) = t.orphan {
        return Outcome::fail("a tool_call_update names a tool call never announced")
            .with_message(&e.line);
    }
    if t.announced == 0 {
        return Outcome::skip(
            "the agent made no tool calls (choose a --prompt that makes it use a tool)",
        );
    }
    Outcome::pass()
}

async fn tools_forward(cx: &mut AgentCx) -> Outcome {
    if let Err(e) = cx.ordinary().await {
        return needs("a turn", &e);
    }
    let t = rules::tool_calls(&cx.log.all());
    if let Some((e, why)) = t.backwards {
        return Outcome::fail(format!("a status went backwards: {why}")).with_message(&e.line);
    }
    if t.announced == 0 {
        return Outcome::skip(
            "the agent made no tool calls (choose a --prompt that makes it use a tool)",
        );
    }
    Outcome::pass()
}

async fn permission_known(cx: &mut AgentCx) -> Outcome {
    if let Err(e) = cx.ordinary().await {
        return needs("a turn", &e);
    }
    let t = rules::tool_calls(&cx.log.all());
    if let Some(e) = t.unknown_permission {
        return Outcome::fail("a permission request names a tool call not announced before it")
            .with_message(&e.line);
    }
    if t.permissions == 0 {
        return Outcome::skip("the agent asked for no permission");
    }
    Outcome::pass()
}

async fn terminals_released(cx: &mut AgentCx) -> Outcome {
    if let Err(e) = cx.ordinary().await {
        return needs("a turn", &e);
    }
    match rules::terminals(&cx.log.all()) {
        (0, _) => Outcome::skip("the agent created no terminal"),
        (_, Some((id, e))) => {
            Outcome::fail(format!("terminal {id} was never released")).with_message(&e.line)
        }
        (_, None) => Outcome::pass(),
    }
}

async fn fs_absolute(cx: &mut AgentCx) -> Outcome {
    if let Err(e) = cx.ordinary().await {
        return needs("a turn", &e);
    }
    match rules::paths(&cx.log.all()) {
        (0, _) => Outcome::skip("the agent made no fs or terminal call"),
        (_, Some((path, e))) => {
            Outcome::fail(format!("{path:?} is not absolute")).with_message(&e.line)
        }
        (_, None) => Outcome::pass(),
    }
}

/// The agent's session capabilities (after initialize).
async fn capability(cx: &mut AgentCx, name: &str) -> Result<bool, Outcome> {
    let init = cx.init().await.map_err(|e| needs("initialize", &e))?;
    let caps = &init.result["agentCapabilities"];
    Ok(match name {
        "load" => caps["loadSession"] == json!(true),
        other => caps["sessionCapabilities"]
            .get(other)
            .is_some_and(|v| !v.is_null()),
    })
}

async fn load_on(cx: &mut AgentCx, fresh: bool) -> Outcome {
    match capability(cx, "load").await {
        Err(o) => return o,
        Ok(false) => return Outcome::skip("the agent does not advertise loadSession"),
        Ok(true) => {}
    }
    let turn = match cx.ordinary().await {
        Ok(t) => t,
        Err(e) => return needs("a turn", &e),
    };
    // In the same process, a session of its own with one turn: the main
    // session may still be busy with a turn that ignored its cancel.
    let turn = if fresh {
        turn
    } else {
        let (s, _) = match cx.new_session().await {
            Ok(s) => s,
            Err(e) => return needs("session/new", &e),
        };
        let text = cx.prompt_text(&cx.opts.prompts.first().cloned().unwrap_or_default());
        match cx
            .turn(&s.id, json!([{"type": "text", "text": text}]))
            .await
        {
            Ok(t) => t,
            Err(e) => return needs("a turn", &e),
        }
    };
    let params = json!({"sessionId": turn.session, "cwd": cx.workspace(), "mcpServers": []});
    let timeout = cx.opts.timeout;
    let (call, wire) = if fresh {
        let (mut peer, init) = match cx.fresh(1).await {
            Ok(x) => x,
            Err(e) => return Outcome::fail(e),
        };
        if init.result().is_none() {
            cx.keep(peer);
            return call_failure("initialize of the new process", &init);
        }
        if let Some(method) = cx.opts.auth.clone() {
            peer.wire
                .call("authenticate", json!({"methodId": method}), timeout)
                .await;
        }
        let call = peer.wire.call("session/load", params, timeout).await;
        peer.wire.drain(GRACE).await;
        let id = peer.wire.id;
        cx.keep(peer);
        (call, id)
    } else {
        let peer = match cx.main().await {
            Ok(p) => p,
            Err(e) => return Outcome::fail(e),
        };
        let call = peer.wire.call("session/load", params, timeout).await;
        peer.wire.drain(GRACE).await;
        (call, peer.wire.id)
    };
    let Some(answered) = call.seq().filter(|_| call.result().is_some()) else {
        return call_failure("session/load", &call);
    };
    let events = cx.log.since(call.sent);
    let replayed = events
        .iter()
        .filter(|e| e.wire == wire && e.seq < answered)
        .filter(|e| rules::update(e).is_some_and(|(s, _, _)| s == turn.session))
        .count();
    if replayed == 0 {
        return Outcome::fail("no history was replayed before the session/load response")
            .with_message(&call.describe());
    }
    let late = events.iter().find(|e| {
        e.wire == wire
            && e.seq > answered
            && rules::update(e).is_some_and(|(s, k, _)| {
                s == turn.session && (k.ends_with("_chunk") || k.starts_with("tool_call"))
            })
    });
    if let Some(e) = late {
        return Outcome::fail("history arrived after the session/load response")
            .with_message(&e.line);
    }
    strictly(cx, Some(answered))
}

async fn session_load(cx: &mut AgentCx) -> Outcome {
    load_on(cx, false).await
}

async fn session_load_fresh(cx: &mut AgentCx) -> Outcome {
    load_on(cx, true).await
}

/// Every session id `session/list` answers (following `nextCursor`).
async fn list_all(cx: &mut AgentCx) -> Result<Vec<String>, Outcome> {
    let timeout = cx.opts.timeout;
    let peer = cx.main().await.map_err(Outcome::fail)?;
    let mut ids = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..50 {
        let mut params = json!({});
        if let Some(c) = &cursor {
            params["cursor"] = json!(c);
        }
        let call = peer.wire.call("session/list", params, timeout).await;
        let Some(result) = call.result() else {
            return Err(call_failure("session/list", &call));
        };
        for s in result["sessions"].as_array().into_iter().flatten() {
            if let Some(id) = s["sessionId"].as_str() {
                ids.push(id.to_string());
            }
        }
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(next) if Some(next) != cursor.as_deref() => cursor = Some(next.to_string()),
            _ => return Ok(ids),
        }
    }
    Err(Outcome::fail(
        "session/list kept answering a nextCursor (50 pages)",
    ))
}

async fn session_list(cx: &mut AgentCx) -> Outcome {
    match capability(cx, "list").await {
        Err(o) => return o,
        Ok(false) => return Outcome::skip("the agent does not advertise sessionCapabilities.list"),
        Ok(true) => {}
    }
    let s = match cx.session().await {
        Ok(s) => s,
        Err(e) => return needs("session/new", &e),
    };
    match list_all(cx).await {
        Err(o) => o,
        Ok(ids) if ids.contains(&s.id) => Outcome::pass(),
        // An agent may list only what it stored; worth knowing, not a failure.
        Ok(ids) => Outcome::pass().with_notes([format!(
            "the session {} opened here is not listed (listed: {})",
            s.id,
            shorten(&ids.join(", "), 200)
        )]),
    }
}

async fn session_resume(cx: &mut AgentCx) -> Outcome {
    match capability(cx, "resume").await {
        Err(o) => return o,
        Ok(false) => {
            return Outcome::skip("the agent does not advertise sessionCapabilities.resume");
        }
        Ok(true) => {}
    }
    let s = match cx.session().await {
        Ok(s) => s,
        Err(e) => return needs("session/new", &e),
    };
    let (timeout, params) = (
        cx.opts.timeout,
        json!({"sessionId": s.id, "cwd": cx.workspace(), "mcpServers": []}),
    );
    let peer = match cx.main().await {
        Ok(p) => p,
        Err(e) => return Outcome::fail(e),
    };
    let call = peer.wire.call("session/resume", params, timeout).await;
    peer.wire.drain(GRACE).await;
    if call.result().is_none() {
        return call_failure("session/resume", &call);
    }
    strictly(cx, call.seq())
}

async fn session_close(cx: &mut AgentCx) -> Outcome {
    match capability(cx, "close").await {
        Err(o) => return o,
        Ok(false) => {
            return Outcome::skip("the agent does not advertise sessionCapabilities.close");
        }
        Ok(true) => {}
    }
    let (s, _) = match cx.new_session().await {
        Ok(s) => s,
        Err(e) => return needs("session/new", &e),
    };
    let timeout = cx.opts.timeout;
    let peer = match cx.main().await {
        Ok(p) => p,
        Err(e) => return Outcome::fail(e),
    };
    let call = peer
        .wire
        .call("session/close", json!({"sessionId": s.id}), timeout)
        .await;
    if call.result().is_none() {
        return call_failure("session/close", &call);
    }
    let prompt = json!({"sessionId": s.id, "prompt": [{"type": "text", "text": "hello"}]});
    let after = peer.wire.call("session/prompt", prompt, timeout).await;
    peer.wire.drain(GRACE).await;
    if after.error().is_none() {
        return Outcome::fail("a prompt to the closed session was not refused")
            .with_message(&after.describe());
    }
    strictly(cx, call.seq())
}

async fn session_delete(cx: &mut AgentCx) -> Outcome {
    match capability(cx, "delete").await {
        Err(o) => return o,
        Ok(false) => {
            return Outcome::skip("the agent does not advertise sessionCapabilities.delete");
        }
        Ok(true) => {}
    }
    let (s, _) = match cx.new_session().await {
        Ok(s) => s,
        Err(e) => return needs("session/new", &e),
    };
    let timeout = cx.opts.timeout;
    let peer = match cx.main().await {
        Ok(p) => p,
        Err(e) => return Outcome::fail(e),
    };
    let call = peer
        .wire
        .call("session/delete", json!({"sessionId": s.id}), timeout)
        .await;
    if call.result().is_none() {
        return call_failure("session/delete", &call);
    }
    if capability(cx, "list").await == Ok(true) {
        match list_all(cx).await {
            Err(o) => return o,
            Ok(ids) if ids.contains(&s.id) => {
                return Outcome::fail(format!("the deleted session {} is still listed", s.id));
            }
            Ok(_) => {}
        }
    }
    strictly(cx, call.seq())
}

/// Every line from the agent processes (not the probe's answers to garbage).
async fn wire_json_lines(cx: &mut AgentCx) -> Outcome {
    let _ = cx.init().await;
    let events = cx.log.all();
    if !events.iter().any(|e| e.dir == Dir::In) {
        return Outcome::skip("the agent sent nothing");
    }
    let mut blank = 0;
    for e in events.iter().filter(|e| e.dir == Dir::In) {
        if e.line.is_empty() {
            blank += 1;
            continue;
        }
        if e.value.is_none() || e.envelope.is_none() {
            return Outcome::fail(
                "the agent wrote a line to stdout that is not a JSON-RPC message",
            )
            .with_message(&e.line);
        }
    }
    let notes = (blank > 0).then(|| format!("{blank} empty lines on stdout"));
    Outcome::pass().with_notes(notes)
}

async fn wire_strict(cx: &mut AgentCx) -> Outcome {
    let _ = cx.init().await;
    let events = cx.log.all();
    if !events.iter().any(|e| e.dir == Dir::In) {
        return Outcome::skip("the agent sent nothing");
    }
    let mut errors = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut first_bad = None;
    let mut messages = 0;
    for e in events
        .iter()
        .filter(|e| e.dir == Dir::In && e.envelope.is_some())
    {
        messages += 1;
        if !e.findings.errors.is_empty() {
            first_bad.get_or_insert_with(|| e.line.clone());
            errors.extend(e.findings.errors.iter().cloned());
        }
        for n in &e.findings.notes {
            if !notes.contains(n) && notes.len() < 10 {
                notes.push(n.clone());
            }
        }
    }
    if let Some(line) = first_bad {
        let shown: Vec<String> = errors.iter().take(3).cloned().collect();
        return Outcome::fail(format!(
            "{} violations in {messages} messages: {}",
            errors.len(),
            shown.join("; ")
        ))
        .with_message(&line)
        .with_notes(notes);
    }
    Outcome::pass().with_notes(notes)
}

async fn wire_responses(cx: &mut AgentCx) -> Outcome {
    let _ = cx.init().await;
    let events = cx.log.all();
    if !events.iter().any(|e| e.dir == Dir::In) {
        return Outcome::skip("the agent sent nothing");
    }
    // (wire, id) of every request the checker sent, and of those answered.
    let mut sent: HashSet<(usize, String)> = HashSet::new();
    let mut answered: HashSet<(usize, String)> = HashSet::new();
    for e in &events {
        match e.dir {
            Dir::Out => {
                if let Some(v) = &e.value
                    && v.get("method").is_some()
                    && let Some(id) = v.get("id")
                {
                    sent.insert((e.wire, id.to_string()));
                }
            }
            Dir::In => {
                if let Some(crate::strict::Envelope::Response { id, .. }) = &e.envelope {
                    if id.is_null() {
                        continue; // answers to lines without a usable id (the probes)
                    }
                    let key = (e.wire, id.to_string());
                    if !sent.contains(&key) {
                        return Outcome::fail(format!(
                            "a response to id {id}, which the checker never sent"
                        ))
                        .with_message(&e.line);
                    }
                    if !answered.insert(key) {
                        return Outcome::fail(format!("request {id} was answered twice"))
                            .with_message(&e.line);
                    }
                }
            }
        }
    }
    Outcome::pass()
}
