//! The rules of a turn, judged over the recorded lines.

use super::cx::Turn;
use crate::strict::Envelope;
use crate::wire::{Dir, Event};
use serde_json::Value;
use std::collections::HashMap;

/// The updates that belong to a turn (not the ones an agent may send at any
/// time: commands, mode, config options, session info, usage).
const TURN_CONTENT: &[&str] = &[
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
];

/// A `session/update` from the agent: (session id, kind, update).
pub fn update(e: &Event) -> Option<(&str, &str, &Value)> {
    if e.dir != Dir::In || e.method() != Some("session/update") {
        return None;
    }
    let params = e.params()?;
    let update = params.get("update")?;
    Some((
        params.get("sessionId")?.as_str()?,
        update.get("sessionUpdate")?.as_str()?,
        update,
    ))
}

/// The first update of the turn that names another session.
pub fn wrong_session<'a>(events: &'a [Event], turn: &Turn) -> Option<&'a Event> {
    let end = turn.answered.unwrap_or(turn.until);
    events[turn.sent..end].iter().find(|e| {
        e.wire == turn.wire
            && e.dir == Dir::In
            && e.method() == Some("session/update")
            && e.params()
                .and_then(|p| p.get("sessionId"))
                .and_then(Value::as_str)
                != Some(turn.session.as_str())
    })
}

/// The first turn content of the turn's session after its response.
pub fn late_update<'a>(events: &'a [Event], turn: &Turn) -> Option<&'a Event> {
    let start = turn.answered? + 1;
    events[start..turn.until.min(events.len())]
        .iter()
        .find(|e| {
            e.wire == turn.wire
                && update(e)
                    .is_some_and(|(s, kind, _)| s == turn.session && TURN_CONTENT.contains(&kind))
        })
}

fn rank(status: &str) -> u8 {
    match status {
        "pending" => 0,
        "in_progress" => 1,
        _ => 2,
    }
}

/// What the tool calls of a run did.
#[derive(Debug, Default)]
pub struct ToolCalls {
    /// How many tool calls were announced.
    pub announced: usize,
    /// An update of a tool call not announced before it.
    pub orphan: Option<Event>,
    /// A status that went backwards (or changed after the call finished).
    pub backwards: Option<(Event, String)>,
    /// How many permission requests.
    pub permissions: usize,
    /// A permission request naming a tool call not announced before it.
    pub unknown_permission: Option<Event>,
}

/// Follows every tool call of every session, in order.
pub fn tool_calls(events: &[Event]) -> ToolCalls {
    let mut out = ToolCalls::default();
    // (wire, session, tool call id) → last status
    let mut known: HashMap<(usize, String, String), String> = HashMap::new();
    for e in events {
        if e.dir == Dir::In && e.method() == Some("session/request_permission") {
            out.permissions += 1;
            let p = e.params();
            let session = p.and_then(|p| p["sessionId"].as_str()).unwrap_or("");
            let id = p
                .and_then(|p| p["toolCall"]["toolCallId"].as_str())
                .unwrap_or("");
            if out.unknown_permission.is_none()
                && !known.contains_key(&(e.wire, session.to_string(), id.to_string()))
            {
                out.unknown_permission = Some(e.clone());
            }
            continue;
        }
        let Some((session, kind, update)) = update(e) else {
            continue;
        };
        let Some(id) = update.get("toolCallId").and_then(Value::as_str) else {
            continue;
        };
        let key = (e.wire, session.to_string(), id.to_string());
        let status = update.get("status").and_then(Value::as_str);
        match kind {
            "tool_call" => {
                out.announced += 1;
                known.insert(key, status.unwrap_or("pending").to_string());
            }
            "tool_call_update" => match known.get_mut(&key) {
                None => {
                    if out.orphan.is_none() {
                        out.orphan = Some(e.clone());
                    }
                }
                Some(last) => {
                    if let Some(status) = status {
                        let finished = rank(last) == 2;
                        if (rank(status) < rank(last) || (finished && status != last))
                            && out.backwards.is_none()
                        {
                            out.backwards =
                                Some((e.clone(), format!("{id} went from {last} to {status}")));
                        }
                        *last = status.to_string();
                    }
                }
            },
            _ => {}
        }
    }
    out
}

/// The terminals the checker created for the agent, and the first one never
/// released: (created, unreleased terminal id and its create request).
pub fn terminals(events: &[Event]) -> (usize, Option<(String, Event)>) {
    // The agent's terminal/create requests by (wire, id).
    let mut creates: HashMap<(usize, String), Event> = HashMap::new();
    let mut created: Vec<(usize, String, Event)> = Vec::new();
    let mut released: Vec<(usize, String)> = Vec::new();
    for e in events {
        match (&e.dir, &e.envelope) {
            (Dir::In, Some(Envelope::Request { id, method })) if method == "terminal/create" => {
                creates.insert((e.wire, id.to_string()), e.clone());
            }
            (Dir::In, Some(Envelope::Request { method, .. })) if method == "terminal/release" => {
                if let Some(t) = e.params().and_then(|p| p["terminalId"].as_str()) {
                    released.push((e.wire, t.to_string()));
                }
            }
            (Dir::Out, _) => {
                let Some(v) = &e.value else { continue };
                let Some(t) = v.get("result").and_then(|r| r.get("terminalId")) else {
                    continue;
                };
                let key = (e.wire, v["id"].to_string());
                if let (Some(t), Some(req)) = (t.as_str(), creates.get(&key)) {
                    created.push((e.wire, t.to_string(), req.clone()));
                }
            }
            _ => {}
        }
    }
    let unreleased = created
        .iter()
        .find(|(w, t, _)| !released.contains(&(*w, t.clone())))
        .map(|(_, t, e)| (t.clone(), e.clone()));
    (created.len(), unreleased)
}

/// The paths the agent named in fs and terminal calls, and the first
/// that is not absolute.
pub fn paths(events: &[Event]) -> (usize, Option<(String, Event)>) {
    let mut count = 0;
    for e in events {
        if e.dir != Dir::In {
            continue;
        }
        let field = match e.method() {
            Some("fs/read_text_file" | "fs/write_text_file") => "path",
            Some("terminal/create") => "cwd",
            _ => continue,
        };
        let Some(path) = e
            .params()
            .and_then(|p| p.get(field))
            .and_then(Value::as_str)
        else {
            continue;
        };
        count += 1;
        if !path.starts_with('/') {
            return (count, Some((path.to_string(), e.clone())));
        }
    }
    (count, None)
}
