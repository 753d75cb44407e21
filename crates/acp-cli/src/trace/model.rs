//! The timeline of a recording: every line as an [`Event`], requests paired
//! with their responses, sessions and their prompt turns, tool calls with
//! their status changes, permission questions with their answers, and
//! counts. `acp trace` prints it as text, JSON or HTML.
//!
//! Requests are paired with responses by the side that asked and the id
//! (compared as JSON, so `1` and `"1"` stay apart). A line is attached to
//! a session by its `sessionId` (a response by its request's), and to a
//! turn when it comes while a `session/prompt` of that session is waiting
//! for its answer.

use crate::recording::{Exit, Line, Record, Recording, Source};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// A JSON-RPC error as the wire carried it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WireError {
    /// The error code.
    pub code: i64,
    /// The message.
    pub message: String,
}

/// What one event is.
#[derive(Debug, Clone, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum What {
    /// A request; `latency_ms` and `outcome` come from its response.
    Request {
        /// The id, as JSON.
        id: String,
        /// The method.
        method: String,
        /// Milliseconds until the response.
        #[serde(skip_serializing_if = "Option::is_none")]
        latency_ms: Option<f64>,
        /// `ok`, `error`, or `no answer` when the recording ended first.
        outcome: String,
        /// The error the response carried.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<WireError>,
        /// What the response said, in a few words.
        #[serde(skip_serializing_if = "String::is_empty")]
        result: String,
    },
    /// A response.
    Response {
        /// The id, as JSON.
        id: String,
        /// The method of its request (`None`: no request had this id).
        #[serde(skip_serializing_if = "Option::is_none")]
        method: Option<String>,
        /// Milliseconds since its request.
        #[serde(skip_serializing_if = "Option::is_none")]
        latency_ms: Option<f64>,
        /// The error it carried.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<WireError>,
    },
    /// A notification.
    Notification {
        /// The method.
        method: String,
        /// For `session/update`, the update's kind.
        #[serde(skip_serializing_if = "Option::is_none")]
        update: Option<String>,
    },
    /// A line of the agent's standard error.
    Stderr,
    /// A line that is not a JSON-RPC message.
    Invalid {
        /// Why not.
        why: String,
    },
    /// That side closed its end.
    Eof,
    /// The agent ended.
    Exit {
        /// How.
        exit: Exit,
    },
}

/// One line of the recording (or an end of stream), in order.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// Seconds since the start of the recording.
    pub t: f64,
    /// The line number in the record file.
    pub record: usize,
    /// Which stream.
    pub from: Source,
    /// The session it belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The prompt turn (1, 2, … within its session) it came in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    /// What it is.
    #[serde(flatten)]
    pub what: What,
    /// A few words on what it says.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub summary: String,
    /// Whether it is, or answered with, an error.
    pub error: bool,
    /// The message (for a JSON line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<Value>,
    /// The line as text (lossy for bytes that are not UTF-8), when it is
    /// not a JSON message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The line's length on the wire, newline included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

/// A status a tool call went through.
#[derive(Debug, Clone, Serialize)]
pub struct StatusChange {
    /// When.
    pub t: f64,
    /// The status.
    pub status: String,
}

/// A tool call of a turn.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Its id.
    pub id: String,
    /// Its title (the last one given).
    pub title: String,
    /// Its kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Its statuses in order.
    pub statuses: Vec<StatusChange>,
}

/// A permission question and its answer.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Permission {
    /// When it was asked.
    pub t: f64,
    /// The tool call it is about.
    pub tool_call: String,
    /// The options offered, as `id (kind)`.
    pub options: Vec<String>,
    /// The answer: `selected ID`, `cancelled`, an error, or `no answer`.
    pub answer: String,
    /// Milliseconds until the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<f64>,
}

/// A prompt turn.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    /// 1, 2, … within its session.
    pub n: u32,
    /// When the prompt was sent.
    pub t: f64,
    /// The prompt's text.
    pub prompt: String,
    /// Milliseconds until the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// How it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// The error it ended with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<WireError>,
    /// Its tool calls.
    pub tool_calls: Vec<ToolCall>,
    /// Its permission questions.
    pub permissions: Vec<Permission>,
    /// Its `session/update`s by kind.
    pub updates: BTreeMap<String, u64>,
}

/// A session.
#[derive(Debug, Clone, Serialize)]
pub struct Session {
    /// Its id.
    pub id: String,
    /// How it was opened: `session/new`, `session/load`, … (`None`: it was
    /// only seen in messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opened: Option<String>,
    /// Its working directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// When it was first seen.
    pub t: f64,
    /// Its prompt turns.
    pub turns: Vec<Turn>,
}

/// Lines and bytes of one side.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Side {
    /// Lines.
    pub lines: u64,
    /// Bytes, newlines included.
    pub bytes: u64,
}

/// What the timeline holds, counted.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// What the client sent.
    pub client: Side,
    /// What the agent sent.
    pub agent: Side,
    /// The agent's standard error.
    pub stderr: Side,
    /// Requests, both ways.
    pub requests: u64,
    /// Responses, both ways.
    pub responses: u64,
    /// Notifications, both ways.
    pub notifications: u64,
    /// Events marked as errors.
    pub errors: u64,
    /// Lines that are not JSON-RPC messages.
    pub invalid: u64,
    /// Sessions.
    pub sessions: u64,
    /// Prompt turns.
    pub turns: u64,
    /// Tool calls.
    pub tool_calls: u64,
    /// Permission questions.
    pub permissions: u64,
    /// `session/update`s by kind.
    pub updates: BTreeMap<String, u64>,
}

/// A recording, read.
#[derive(Debug, Clone, Serialize)]
pub struct Timeline {
    /// When the recording started.
    pub started: String,
    /// The agent's command line.
    pub agent: Vec<String>,
    /// Whether it was recorded with `--redact`.
    pub redacted: bool,
    /// Every event, in order.
    pub events: Vec<Event>,
    /// The sessions.
    pub sessions: Vec<Session>,
    /// How the agent ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit: Option<Exit>,
    /// Counts over the events and sessions.
    pub counts: Counts,
    /// Lines of the file that were left out, and why.
    pub warnings: Vec<String>,
}

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
    events: Vec<Event>,
    sessions: Vec<Session>,
    /// By (side that asked, id as JSON).
    pending: HashMap<(Source, String), Pending>,
    /// The open turn of each session: its number.
    open_turns: HashMap<String, u32>,
}

impl Timeline {
    /// Builds the timeline of `recording`.
    pub fn of(recording: &Recording) -> Timeline {
        let mut b = Builder::default();
        for (number, record) in &recording.records {
            match record {
                Record::Line(line) => b.line(*number, line),
                Record::Eof { t, from } => b.push(Event::bare(*t, *number, *from, What::Eof)),
                Record::Exit { t, exit } => b.push(Event::bare(
                    *t,
                    *number,
                    Source::Agent,
                    What::Exit { exit: *exit },
                )),
            }
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

    /// Keeps only the events (and sessions and turns) of session `id`
    /// and/or turn `n`.
    pub fn filter(&mut self, session: Option<&str>, turn: Option<u32>) {
        if session.is_none() && turn.is_none() {
            return;
        }
        self.events.retain(|e| {
            session.is_none_or(|s| e.session.as_deref() == Some(s))
                && turn.is_none_or(|n| e.turn == Some(n))
        });
        self.sessions
            .retain(|s| session.is_none_or(|id| s.id == id));
        if let Some(n) = turn {
            for s in &mut self.sessions {
                s.turns.retain(|t| t.n == n);
            }
            self.sessions.retain(|s| !s.turns.is_empty());
        }
        self.count();
    }

    fn count(&mut self) {
        let mut c = Counts::default();
        for e in &self.events {
            let side = match e.from {
                Source::Client => &mut c.client,
                Source::Agent => &mut c.agent,
                Source::Stderr => &mut c.stderr,
            };
            if let Some(bytes) = e.bytes {
                side.lines += 1;
                side.bytes += bytes;
            }
            match &e.what {
                What::Request { .. } => c.requests += 1,
                What::Response { .. } => c.responses += 1,
                What::Notification { update, .. } => {
                    c.notifications += 1;
                    if let Some(kind) = update {
                        *c.updates.entry(kind.clone()).or_default() += 1;
                    }
                }
                What::Invalid { .. } => c.invalid += 1,
                _ => {}
            }
            if e.error {
                c.errors += 1;
            }
        }
        c.sessions = self.sessions.len() as u64;
        for turn in self.sessions.iter().flat_map(|s| &s.turns) {
            c.turns += 1;
            c.tool_calls += turn.tool_calls.len() as u64;
            c.permissions += turn.permissions.len() as u64;
        }
        self.counts = c;
    }
}

impl Event {
    fn bare(t: f64, record: usize, from: Source, what: What) -> Event {
        Event {
            t,
            record,
            from,
            session: None,
            turn: None,
            what,
            summary: String::new(),
            error: false,
            message: None,
            text: None,
            bytes: None,
        }
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

/// At most `max` characters of `text`, with `…` when cut.
pub fn preview(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if text.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

impl Builder {
    fn push(&mut self, event: Event) {
        self.events.push(event);
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
                let tool = params.get("toolCall").cloned().unwrap_or(Value::Null);
                let tool_call = text_of(tool.get("toolCallId")).unwrap_or_default();
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
                let title = text_of(tool.get("title"))
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
                event: self.events.len(),
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
        let request_t = self.events[pending.event].t;
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
        } = &mut self.events[pending.event].what
        {
            *latency_ms = Some(latency);
            *outcome = if error.is_some() { "error" } else { "ok" }.to_owned();
            *request_error = error.clone();
            *request_result = summary;
        }
        if error.is_some() {
            self.events[pending.event].error = true;
        }
        if pending.method == "session/prompt"
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
                let info = result.get("agentInfo");
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
            "session/prompt" => text_of(result.get("stopReason")).unwrap_or_default(),
            "session/request_permission" => permission_answer(result),
            _ => String::new(),
        }
    }

    fn notification(&mut self, event: &mut Event, value: &Value, method: String) {
        let params = value.get("params").cloned().unwrap_or(Value::Null);
        event.turn = self.open_turn(event.session.as_deref());
        let mut update_kind = None;
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
            update_kind = Some(kind);
        } else {
            event.summary = describe_params(&method, &params);
        }
        event.what = What::Notification {
            method,
            update: update_kind,
        };
    }

    fn describe_update(&mut self, event: &Event, kind: &str, update: &Value) -> String {
        let text = |v: &Value| text_of(v.get("content").and_then(|c| c.get("text")));
        match kind {
            "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk" => {
                text(update).map(|t| format!("{t:?}")).unwrap_or_default()
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
            "plan" => {
                let entries = update.get("entries").and_then(Value::as_array);
                let total = entries.map_or(0, Vec::len);
                let done = entries.map_or(0, |e| {
                    e.iter()
                        .filter(|e| e.get("status").and_then(Value::as_str) == Some("completed"))
                        .count()
                });
                format!("{done} of {total} done")
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

/// One row of a rendered timeline: an event, or a run of message or
/// thought chunks of one turn, shown as one.
#[derive(Debug)]
pub enum Row<'a> {
    /// One event.
    Event(&'a Event),
    /// Consecutive chunks of the same kind, session and turn.
    Chunks {
        /// The first of them.
        first: &'a Event,
        /// Their kind (`agent_message_chunk`, …).
        kind: &'a str,
        /// How many.
        count: usize,
        /// Their text, joined.
        text: String,
        /// The events, in order.
        events: Vec<&'a Event>,
    },
}

fn chunk_kind(event: &Event) -> Option<&str> {
    match &event.what {
        What::Notification {
            update: Some(kind), ..
        } if kind.ends_with("_chunk") => Some(kind),
        _ => None,
    }
}

/// The text of a chunk event.
pub fn chunk_text(event: &Event) -> &str {
    event
        .message
        .as_ref()
        .and_then(|m| m.pointer("/params/update/content/text"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The events as rows, runs of chunks joined.
pub fn rows(events: &[Event]) -> Vec<Row<'_>> {
    let mut rows = Vec::new();
    for event in events {
        if let Some(kind) = chunk_kind(event) {
            if let Some(Row::Chunks {
                first,
                kind: run_kind,
                count,
                text,
                events,
            }) = rows.last_mut()
                && *run_kind == kind
                && first.session == event.session
                && first.turn == event.turn
                && first.from == event.from
            {
                *count += 1;
                text.push_str(chunk_text(event));
                events.push(event);
                continue;
            }
            rows.push(Row::Chunks {
                first: event,
                kind,
                count: 1,
                text: chunk_text(event).to_owned(),
                events: vec![event],
            });
        } else {
            rows.push(Row::Event(event));
        }
    }
    rows
}
