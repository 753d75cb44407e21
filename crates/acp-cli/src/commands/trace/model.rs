//! The timeline of a recording: every line as an [`Event`], requests paired
//! with their responses, sessions and their prompt turns, tool calls with
//! their status changes, permission questions with their answers, and
//! counts. `acp trace` prints it as text, JSON or HTML.
//!
//! [`Timeline::of`] (in [`super::build`]) builds it from a recording.

use crate::recording::{Exit, Source};
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
        /// Whether it ended a turn (protocol v2's idle `state_update`).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        ends_turn: bool,
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

impl Timeline {
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

    pub(crate) fn count(&mut self) {
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
    pub(crate) fn bare(t: f64, record: usize, from: Source, what: What) -> Event {
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

/// At most `max` characters of `text`, with `…` when cut.
pub fn preview(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if text.chars().nth(max).is_some() {
        out.push('…');
    }
    out
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

/// The kinds of message updates a row joins: v1's chunks, and v2's chunks
/// and whole messages.
const MESSAGE_KINDS: [&str; 6] = [
    "agent_message_chunk",
    "agent_thought_chunk",
    "user_message_chunk",
    "agent_message",
    "agent_thought",
    "user_message",
];

/// The kind of a message update (`agent_message_chunk`, v2's
/// `agent_message`, …), if the event is one.
pub fn chunk_kind(event: &Event) -> Option<&str> {
    match &event.what {
        What::Notification {
            update: Some(kind), ..
        } if MESSAGE_KINDS.contains(&kind.as_str()) => Some(kind),
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

/// The message id of a message update (protocol v2).
pub fn message_id(event: &Event) -> Option<&str> {
    event
        .message
        .as_ref()?
        .pointer("/params/update/messageId")?
        .as_str()
}

/// The text of a v2 whole message's content blocks, joined.
pub fn message_text(update: &Value) -> String {
    update
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<String>()
        })
        .unwrap_or_default()
}

/// The events as rows, runs of chunks joined. A v2 message (chunks and
/// whole-message upserts with one `messageId` in one session) is one row,
/// where its first update is, holding its final text: a chunk appends to
/// it, a whole message replaces it.
pub fn rows(events: &[Event]) -> Vec<Row<'_>> {
    let mut rows = Vec::new();
    let mut messages: HashMap<(Option<&str>, &str), usize> = HashMap::new();
    for event in events {
        let Some(kind) = chunk_kind(event) else {
            rows.push(Row::Event(event));
            continue;
        };
        let whole = !kind.ends_with("_chunk");
        let new_text = if whole {
            let update = event
                .message
                .as_ref()
                .and_then(|m| m.pointer("/params/update"));
            update.map(message_text).unwrap_or_default()
        } else {
            chunk_text(event).to_owned()
        };
        if let Some(id) = message_id(event) {
            let key = (event.session.as_deref(), id);
            if let Some(&index) = messages.get(&key)
                && let Some(Row::Chunks {
                    count,
                    text,
                    events,
                    ..
                }) = rows.get_mut(index)
            {
                *count += 1;
                if whole {
                    *text = new_text;
                } else {
                    text.push_str(&new_text);
                }
                events.push(event);
                continue;
            }
            messages.insert(key, rows.len());
        } else if let Some(Row::Chunks {
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
            && message_id(first).is_none()
        {
            *count += 1;
            text.push_str(&new_text);
            events.push(event);
            continue;
        }
        rows.push(Row::Chunks {
            first: event,
            kind,
            count: 1,
            text: new_text,
            events: vec![event],
        });
    }
    rows
}
