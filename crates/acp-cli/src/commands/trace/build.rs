//! Building the [`Timeline`] from a recording, line by line.
//!
//! Requests are paired with responses by the side that asked and the id
//! (compared as JSON, so `1` and `"1"` stay apart). A line is attached to
//! a session by its `sessionId` (a response by its request's), and to a
//! turn when it comes while a `session/prompt` of that session is waiting
//! for its answer. A request the recording never saw answered ends up
//! with the outcome `no answer`, as an error.
//!
//! Protocol v2 (the agent answered `initialize` with version 2): the
//! answer to `session/prompt` only acknowledges it (a `messageId`), so a
//! turn stays open until the session's idle `state_update`, whose stop
//! reason ends it; a permission question names its tool call in its
//! `subject`.

use super::model::{
    Counts, Event, Permission, Session, StatusChange, Timeline, ToolCall, Turn, What, WireError,
    message_text, preview,
};
use crate::recording::{Line, Record, Recording, Source};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// Where a pending request is.
struct Pending {
    event: usize,
    method: String,
    session: Option<String>,
    turn: Option<u32>,
    /// For `session/new`: the cwd, to give the session its answer names.
    cwd: Option<String>,
}

#[derive(Default)]
struct Builder {
    /// The events from number `base` on (all of them, but in a
    /// [`Growing`] timeline).
    events: Vec<Event>,
    base: usize,
    /// The request the last record answered, if it was a response.
    answered: Option<usize>,
    sessions: Vec<Session>,
    /// By (side that asked, id as JSON).
    pending: HashMap<(Source, String), Pending>,
    /// The open turn of each session: its number.
    open_turns: HashMap<String, u32>,
    /// Whether the agent answered `initialize` with protocol version 2.
    v2: bool,
}

impl Timeline {
    /// Builds the timeline of `recording`.
    pub fn of(recording: &Recording) -> Timeline {
        let mut b = Builder::default();
        for (number, record) in &recording.records {
            b.record(*number, record);
        }
        // Requests the recording never saw answered.
        let mut unanswered: Vec<usize> = b.pending.drain().map(|(_, p)| p.event).collect();
        unanswered.sort_unstable();
        for index in unanswered {
            let event = &mut b.events[index];
            if let What::Request { outcome, .. } = &mut event.what {
                *outcome = "no answer".to_owned();
            }
            event.error = true;
        }
        let mut timeline = Timeline {
            started: recording.header.started.clone(),
            agent: recording.header.agent.clone(),
            redacted: recording.header.redacted,
            events: b.events,
            sessions: b.sessions,
            exit: recording.exit().map(|(_, exit)| exit),
            counts: Counts::default(),
            warnings: recording.warnings.clone(),
        };
        timeline.count();
        timeline
    }
}

fn text_of(value: Option<&Value>) -> Option<String> {
    value.and_then(Value::as_str).map(str::to_owned)
}

fn wire_error(value: &Value) -> WireError {
    WireError {
        code: value.get("code").and_then(Value::as_i64).unwrap_or(0),
        message: text_of(value.get("message")).unwrap_or_default(),
    }
}

/// The most events a [`Growing`] timeline holds for requests not answered
/// yet; past it the oldest are forgotten (a late answer to one of them then
/// reads as an answer to no request).
const MAX_HELD: usize = 65_536;

/// A timeline built as its records come, for a recording still being made
/// (`acp watch`). Each record makes one event, final when made but for a
/// request's outcome, which its response fills in; only the events of
/// requests still waiting for an answer are kept.
#[derive(Default)]
pub struct Growing {
    b: Builder,
}

impl Growing {
    /// Takes record `number`: its event, and for a response the request it
    /// answered, with its outcome.
    pub fn push(&mut self, number: usize, record: &Record) -> (Event, Option<Event>) {
        let b = &mut self.b;
        b.answered = None;
        b.record(number, record);
        let kept = b.events.last_mut().expect("each record makes an event");
        let event = kept.clone();
        // What a later answer needs of it is its time and outcome.
        kept.message = None;
        kept.text = None;
        let answered = b.answered.map(|index| b.events[index - b.base].clone());
        b.prune();
        (event, answered)
    }
}

impl Builder {
    fn record(&mut self, number: usize, record: &Record) {
        match record {
            Record::Line(line) => self.line(number, line),
            Record::Eof { t, from } => self.push(Event::bare(*t, number, *from, What::Eof)),
            Record::Exit { t, exit } => self.push(Event::bare(
                *t,
                number,
                Source::Agent,
                What::Exit { exit: *exit },
            )),
        }
    }

    fn push(&mut self, event: Event) {
        self.events.push(event);
    }

    /// Forgets the events no pending request needs (at most [`MAX_HELD`]
    /// are kept for them).
    fn prune(&mut self) {
        let end = self.base + self.events.len();
        let oldest_kept = end.saturating_sub(MAX_HELD);
        self.pending.retain(|_, p| p.event >= oldest_kept);
        let keep_from = self.pending.values().map(|p| p.event).min().unwrap_or(end);
        self.events.drain(..keep_from - self.base);
        self.base = keep_from;
    }

    fn session_mut(&mut self, id: &str, t: f64) -> &mut Session {
        let index = match self.sessions.iter().position(|s| s.id == id) {
            Some(index) => index,
            None => {
                self.sessions.push(Session {
                    id: id.to_owned(),
                    opened: None,
                    cwd: None,
                    t,
                    turns: Vec::new(),
                });
                self.sessions.len() - 1
            }
        };
        &mut self.sessions[index]
    }

    fn turn_mut(&mut self, session: &str, n: u32) -> Option<&mut Turn> {
        self.sessions
            .iter_mut()
            .find(|s| s.id == session)?
            .turns
            .iter_mut()
            .find(|t| t.n == n)
    }

    fn line(&mut self, record: usize, line: &Line) {
        let mut event = Event::bare(line.t, record, line.from, What::Stderr);
        event.bytes = Some(line.bytes.len() as u64 + u64::from(line.newline));
        if let Some(full) = line.truncated {
            event.bytes = Some(full + u64::from(line.newline));
        }
        if line.from == Source::Stderr {
            event.text = Some(String::from_utf8_lossy(&line.bytes).into_owned());
            return self.push(event);
        }
        let parsed = match serde_json::from_slice::<Value>(&line.bytes) {
            Ok(value) if value.is_object() => Ok(value),
            Ok(_) => Err("not a JSON object".to_owned()),
            Err(_) if line.truncated.is_some() => Err(format!(
                "a line of {} bytes, recorded in part",
                line.truncated.unwrap_or(0)
            )),
            Err(e) => Err(match line.text() {
                Some(_) => format!("not JSON: {e}"),
                None => "not UTF-8".to_owned(),
            }),
        };
        let value = match parsed {
            Ok(value) => value,
            Err(why) => {
                event.what = What::Invalid { why };
                event.error = true;
                event.text = Some(preview(&String::from_utf8_lossy(&line.bytes), 2000));
                return self.push(event);
            }
        };
        let method = text_of(value.get("method"));
        let id = value
            .get("id")
            .filter(|id| !id.is_null())
            .map(Value::to_string);
        let params = value.get("params");
        event.session = params.and_then(|p| text_of(p.get("sessionId")));
        match (method, id) {
            (Some(method), Some(id)) => self.request(&mut event, &value, method, id),
            (Some(method), None) => self.notification(&mut event, &value, method),
            (None, Some(id)) => self.response(&mut event, &value, id),
            (None, None) => {
                event.what = What::Invalid {
                    why: "neither a request, a response nor a notification".to_owned(),
                };
                event.error = true;
            }
        }
        event.message = Some(value);
        self.push(event);
    }

    fn open_turn(&self, session: Option<&str>) -> Option<u32> {
        session.and_then(|s| self.open_turns.get(s).copied())
    }

    fn request(&mut self, event: &mut Event, value: &Value, method: String, id: String) {
        let params = value.get("params").cloned().unwrap_or(Value::Null);
        let session = event.session.clone();
        event.turn = self.open_turn(session.as_deref());
        let mut cwd = None;
        match method.as_str() {
            "session/new" => cwd = text_of(params.get("cwd")),
            "session/load" | "session/resume" | "session/fork" => {
                if let Some(s) = &session {
                    let cwd = text_of(params.get("cwd"));
                    let entry = self.session_mut(s, event.t);
                    entry.opened.get_or_insert_with(|| method.clone());
                    if entry.cwd.is_none() {
                        entry.cwd = cwd;
                    }
                }
            }
            "session/prompt" => {
                let prompt = prompt_text(&params);
                event.summary = format!("\"{}\"", preview(&prompt, 60));
                if let Some(s) = &session {
                    let t = event.t;
                    let entry = self.session_mut(s, t);
                    let n = entry.turns.len() as u32 + 1;
                    entry.turns.push(Turn {
                        n,
                        t,
                        prompt,
                        duration_ms: None,
                        stop_reason: None,
                        error: None,
                        tool_calls: Vec::new(),
                        permissions: Vec::new(),
                        updates: BTreeMap::new(),
                    });
                    self.open_turns.insert(s.clone(), n);
                    event.turn = Some(n);
                }
            }
            "session/request_permission" => {
                // v1: `toolCall`; v2: the `subject`'s tool call, or a
                // command's `toolCallId`, and the question's own `title`.
                let subject = params.get("subject");
                let tool = params
                    .get("toolCall")
                    .or_else(|| subject.and_then(|s| s.get("toolCall")))
                    .cloned()
                    .unwrap_or(Value::Null);
                let tool_call = text_of(tool.get("toolCallId"))
                    .or_else(|| text_of(subject.and_then(|s| s.get("toolCallId"))))
                    .unwrap_or_default();
                let options: Vec<String> = params
                    .get("options")
                    .and_then(Value::as_array)
                    .map(|options| {
                        options
                            .iter()
                            .map(|o| {
                                format!(
                                    "{} ({})",
                                    text_of(o.get("optionId")).unwrap_or_default(),
                                    text_of(o.get("kind")).unwrap_or_default()
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let title = text_of(params.get("title"))
                    .or_else(|| text_of(tool.get("title")))
                    .or_else(|| self.tool_title(session.as_deref(), event.turn, &tool_call));
                event.summary = match title {
                    Some(title) => format!("{tool_call} \"{title}\": {}", options.join(", ")),
                    None => format!("{tool_call}: {}", options.join(", ")),
                };
                if let (Some(s), Some(n)) = (&session, event.turn) {
                    let t = event.t;
                    if let Some(turn) = self.turn_mut(s, n) {
                        turn.permissions.push(Permission {
                            t,
                            tool_call,
                            options,
                            answer: "no answer".to_owned(),
                            latency_ms: None,
                        });
                    }
                }
            }
            _ => event.summary = describe_params(&method, &params),
        }
        event.what = What::Request {
            id: id.clone(),
            method: method.clone(),
            latency_ms: None,
            outcome: String::new(),
            error: None,
            result: String::new(),
        };
        self.pending.insert(
            (event.from, id),
            Pending {
                event: self.base + self.events.len(),
                method,
                session,
                turn: event.turn,
                cwd,
            },
        );
    }

    fn tool_title(&self, session: Option<&str>, turn: Option<u32>, id: &str) -> Option<String> {
        let s = self
            .sessions
            .iter()
            .find(|s| Some(s.id.as_str()) == session)?;
        let t = s.turns.iter().find(|t| Some(t.n) == turn)?;
        t.tool_calls
            .iter()
            .find(|c| c.id == id)
            .map(|c| c.title.clone())
    }

    fn response(&mut self, event: &mut Event, value: &Value, id: String) {
        let asker = match event.from {
            Source::Client => Source::Agent,
            _ => Source::Client,
        };
        let error = value.get("error").map(wire_error);
        event.error = error.is_some();
        let result = value.get("result").cloned().unwrap_or(Value::Null);
        let Some(pending) = self.pending.remove(&(asker, id.clone())) else {
            event.what = What::Response {
                id,
                method: None,
                latency_ms: None,
                error,
            };
            event.summary = "an answer to no request".to_owned();
            event.error = true;
            return;
        };
        self.answered = Some(pending.event);
        let request_t = self.events[pending.event - self.base].t;
        // Microsecond precision, as recorded.
        let latency = ((event.t - request_t) * 1e6).round() / 1e3;
        event.session = pending.session.clone();
        event.turn = pending.turn;
        let summary = match &error {
            Some(e) => format!("error {}: {}", e.code, e.message),
            None => self.describe_result(&pending, &result, event.t, latency),
        };
        event.summary = summary.clone();
        if let What::Request {
            latency_ms,
            outcome,
            error: request_error,
            result: request_result,
            ..
        } = &mut self.events[pending.event - self.base].what
        {
            *latency_ms = Some(latency);
            *outcome = if error.is_some() { "error" } else { "ok" }.to_owned();
            *request_error = error.clone();
            *request_result = summary;
        }
        if error.is_some() {
            self.events[pending.event - self.base].error = true;
        }
        // v2: an acknowledgement; the turn ends at idle.
        let acknowledged = self.v2 && error.is_none() && result.get("stopReason").is_none();
        if pending.method == "session/prompt"
            && !acknowledged
            && let (Some(s), Some(n)) = (&pending.session, pending.turn)
        {
            if self.open_turns.get(s) == Some(&n) {
                self.open_turns.remove(s);
            }
            if let Some(turn) = self.turn_mut(s, n) {
                turn.duration_ms = Some(latency);
                turn.stop_reason = text_of(result.get("stopReason"));
                turn.error = error.clone();
            }
        }
        if pending.method == "session/request_permission"
            && let (Some(s), Some(n)) = (&pending.session, pending.turn)
        {
            let answer = match &error {
                Some(e) => format!("error {}: {}", e.code, e.message),
                None => permission_answer(&result),
            };
            if let Some(p) = self.turn_mut(s, n).and_then(|turn| {
                turn.permissions
                    .iter_mut()
                    .rev()
                    .find(|p| p.latency_ms.is_none())
            }) {
                p.answer = answer;
                p.latency_ms = Some(latency);
            }
        }
        event.what = What::Response {
            id,
            method: Some(pending.method),
            latency_ms: Some(latency),
            error,
        };
    }

    fn describe_result(&mut self, pending: &Pending, result: &Value, t: f64, _: f64) -> String {
        match pending.method.as_str() {
            "initialize" => {
                self.v2 = result.get("protocolVersion").and_then(Value::as_u64) == Some(2);
                let info = result.get("agentInfo").or_else(|| result.get("info"));
                let name = info.and_then(|i| text_of(i.get("name")));
                let version = info.and_then(|i| text_of(i.get("version")));
                let protocol = result.get("protocolVersion").map(Value::to_string);
                let mut out = format!("protocol {}", protocol.unwrap_or_else(|| "?".into()));
                if let Some(name) = name {
                    out.push_str(&format!(", {name} {}", version.unwrap_or_default()));
                }
                out.trim_end().to_owned()
            }
            "session/new" => match text_of(result.get("sessionId")) {
                Some(id) => {
                    let cwd = pending.cwd.clone();
                    let session = self.session_mut(&id, t);
                    session.opened = Some("session/new".to_owned());
                    session.cwd = cwd;
                    format!("session {id}")
                }
                None => String::new(),
            },
            "session/prompt" => match (text_of(result.get("stopReason")), self.v2) {
                (Some(stop), _) => stop,
                (None, true) => match text_of(result.get("messageId")) {
                    Some(id) => format!("acknowledged as {id}"),
                    None => "acknowledged".to_owned(),
                },
                (None, false) => String::new(),
            },
            "session/request_permission" => permission_answer(result),
            _ => String::new(),
        }
    }

    fn notification(&mut self, event: &mut Event, value: &Value, method: String) {
        let params = value.get("params").cloned().unwrap_or(Value::Null);
        event.turn = self.open_turn(event.session.as_deref());
        let mut update_kind = None;
        let mut ends_turn = false;
        if method == "session/update"
            && let Some(update) = params.get("update")
        {
            let kind = text_of(update.get("sessionUpdate")).unwrap_or_else(|| "?".to_owned());
            event.summary = self.describe_update(event, &kind, update);
            if let (Some(s), Some(n)) = (event.session.clone(), event.turn)
                && let Some(turn) = self.turn_mut(&s, n)
            {
                *turn.updates.entry(kind.clone()).or_default() += 1;
            }
            if kind == "state_update"
                && text_of(update.get("state")).as_deref() == Some("idle")
                && let (Some(s), Some(n)) = (event.session.clone(), event.turn)
            {
                event.summary = self.end_turn(event.t, &s, n, update);
                ends_turn = true;
            }
            update_kind = Some(kind);
        } else {
            event.summary = describe_params(&method, &params);
        }
        event.what = What::Notification {
            method,
            update: update_kind,
            ends_turn,
        };
    }

    /// A v2 turn's end: the idle `state_update` at `t` of session `s`,
    /// while its turn `n` is open. Returns what the event says: the stop
    /// reason (`idle` without one) and the turn's duration.
    fn end_turn(&mut self, t: f64, s: &str, n: u32, update: &Value) -> String {
        self.open_turns.remove(s);
        let stop = text_of(update.get("stopReason")).unwrap_or_else(|| "idle".to_owned());
        let Some(turn) = self.turn_mut(s, n) else {
            return stop;
        };
        // Microsecond precision, as recorded.
        let duration = ((t - turn.t) * 1e6).round() / 1e3;
        turn.duration_ms = Some(duration);
        turn.stop_reason = Some(stop.clone());
        format!("{stop} in {}", super::text::ms(Some(duration)))
    }

    fn describe_update(&mut self, event: &Event, kind: &str, update: &Value) -> String {
        let text = |v: &Value| text_of(v.get("content").and_then(|c| c.get("text")));
        match kind {
            "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk" => {
                text(update).map(|t| format!("{t:?}")).unwrap_or_default()
            }
            "agent_message" | "agent_thought" | "user_message" => {
                let id = text_of(update.get("messageId")).unwrap_or_default();
                format!("{id} {:?}", message_text(update)).trim().to_owned()
            }
            "state_update" => {
                let state = text_of(update.get("state")).unwrap_or_default();
                match text_of(update.get("stopReason")) {
                    Some(stop) => format!("{state}: {stop}"),
                    None => state,
                }
            }
            "tool_call" | "tool_call_update" => {
                let id = text_of(update.get("toolCallId")).unwrap_or_default();
                let title = text_of(update.get("title"));
                let tool_kind = text_of(update.get("kind"));
                let status = text_of(update.get("status"));
                if let (Some(s), Some(n)) = (event.session.clone(), event.turn)
                    && let Some(turn) = self.turn_mut(&s, n)
                {
                    let index = match turn.tool_calls.iter().position(|c| c.id == id) {
                        Some(index) => index,
                        None => {
                            turn.tool_calls.push(ToolCall {
                                id: id.clone(),
                                title: String::new(),
                                kind: None,
                                statuses: Vec::new(),
                            });
                            turn.tool_calls.len() - 1
                        }
                    };
                    let call = &mut turn.tool_calls[index];
                    if let Some(title) = &title {
                        call.title = title.clone();
                    }
                    if tool_kind.is_some() {
                        call.kind = tool_kind.clone();
                    }
                    if let Some(status) = &status {
                        call.statuses.push(StatusChange {
                            t: event.t,
                            status: status.clone(),
                        });
                    }
                }
                let mut out = id;
                if let Some(title) = title {
                    out.push_str(&format!(" {title:?}"));
                }
                if let Some(k) = tool_kind {
                    out.push_str(&format!(" ({k})"));
                }
                if let Some(status) = status {
                    out.push_str(&format!(": {status}"));
                }
                out
            }
            "plan" | "plan_update" => {
                // v1: the entries; v2: a plan of items, by its id.
                let plan = update.get("plan");
                let entries = update
                    .get("entries")
                    .or_else(|| plan.and_then(|p| p.get("entries")))
                    .and_then(Value::as_array);
                let total = entries.map_or(0, Vec::len);
                let done = entries.map_or(0, |e| {
                    e.iter()
                        .filter(|e| e.get("status").and_then(Value::as_str) == Some("completed"))
                        .count()
                });
                let id = plan
                    .and_then(|p| text_of(p.get("planId")))
                    .map(|id| format!("{id}: "))
                    .unwrap_or_default();
                format!("{id}{done} of {total} done")
            }
            "tool_call_content_chunk" => text_of(update.get("toolCallId")).unwrap_or_default(),
            "terminal_update" | "terminal_output_chunk" => {
                text_of(update.get("terminalId")).unwrap_or_default()
            }
            "current_mode_update" => text_of(update.get("currentModeId")).unwrap_or_default(),
            "available_commands_update" => {
                let n = update
                    .get("availableCommands")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                format!("{n} commands")
            }
            _ => String::new(),
        }
    }
}

fn prompt_text(params: &Value) -> String {
    params
        .get("prompt")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

fn permission_answer(result: &Value) -> String {
    let outcome = result.get("outcome").cloned().unwrap_or(Value::Null);
    match text_of(outcome.get("outcome")).as_deref() {
        Some("selected") => format!(
            "selected {}",
            text_of(outcome.get("optionId")).unwrap_or_default()
        ),
        Some(other) => other.to_owned(),
        None => String::new(),
    }
}

fn describe_params(method: &str, params: &Value) -> String {
    match method {
        "fs/read_text_file" | "fs/write_text_file" => {
            text_of(params.get("path")).unwrap_or_default()
        }
        "terminal/create" => {
            let command = text_of(params.get("command")).unwrap_or_default();
            let args: Vec<String> = params
                .get("args")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            preview(format!("{command} {}", args.join(" ")).trim_end(), 60)
        }
        "authenticate" => text_of(params.get("methodId")).unwrap_or_default(),
        "session/set_mode" => text_of(params.get("modeId")).unwrap_or_default(),
        _ => String::new(),
    }
}
