//! `acp mock --trace FILE`: plays the agent side of a recording to
//! whatever client starts it.
//!
//! The recording's lines are played in order:
//! - a line the agent sent is sent: a notification (or any line that is
//!   not a JSON request or response, even one that is not JSON) exactly as
//!   recorded; a request with an id of the mock's own; an answer with the
//!   id of the client's live request it answers;
//! - a line the client sent is waited for, and the client's live message
//!   compared with it loosely ([`super::compare`], without
//!   [`super::compare::IGNORED`] fields): a request or
//!   notification by its method and params, an answer to one of the mock's
//!   requests by its id and result;
//! - a line of the agent's standard error is written to standard error.
//!
//! The client may send what the recording has in a different order: a
//! message that matches a later recorded one is kept for it. A message
//! that matches nothing still to come is a difference (a request is
//! answered with an error). When the recorded agent ended the session
//! itself (it closed its output before the client closed its end), the
//! mock exits there too, with the recorded exit code; otherwise it waits
//! for the client to close.

use super::compare::{IGNORED, differences};
use super::{Stop, Wire, describe};
use crate::exit::Failure;
use crate::recording::{Exit, Record, Recording, Source};
use serde_json::Value;
use std::collections::HashMap;
use std::io::Write as _;
use std::path::Path;

enum Step {
    /// A line the agent sent: its bytes on the wire, and the message.
    Agent {
        bytes: Vec<u8>,
        message: Option<Value>,
    },
    /// A message the client sent, with its line number in the file.
    Client { record: usize, message: Value },
    /// A line of the agent's standard error.
    Stderr(Vec<u8>),
}

/// A recording, ready to play.
pub struct Replay {
    steps: Vec<Step>,
    /// The recorded agent's exit code, when it ended the session itself.
    agent_ended: Option<i32>,
}

/// What a message is, for matching.
#[derive(Debug, PartialEq)]
enum Kind<'a> {
    Request(&'a str),
    Notification(&'a str),
    Response,
    Other,
}

fn kind(message: &Value) -> Kind<'_> {
    let has_id = message.get("id").is_some_and(|id| !id.is_null());
    match (message.get("method").and_then(Value::as_str), has_id) {
        (Some(method), true) => Kind::Request(method),
        (Some(method), false) => Kind::Notification(method),
        (None, true) => Kind::Response,
        (None, false) => Kind::Other,
    }
}

#[derive(Default)]
struct Ids {
    /// The client's live request id for each recorded client request id.
    client: HashMap<String, Value>,
    /// The mock's id for each recorded agent request id.
    ours: HashMap<String, i64>,
}

impl Replay {
    /// Reads a recording.
    pub fn load(path: &Path) -> Result<Replay, Failure> {
        let recording = Recording::read(path)?;
        for warning in &recording.warnings {
            eprintln!("acp mock: {}: {warning}", path.display());
        }
        let mut steps = Vec::new();
        // Who closed first: the agent (its standard output) or the client.
        let mut agent_closed_first = None;
        for (record, item) in &recording.records {
            match item {
                Record::Line(line) if line.truncated.is_some() => eprintln!(
                    "acp mock: record line {record} was recorded in part; it is not played"
                ),
                Record::Line(line) => {
                    let message = serde_json::from_slice::<Value>(&line.bytes)
                        .ok()
                        .filter(Value::is_object);
                    match (line.from, message) {
                        (Source::Agent, message) => steps.push(Step::Agent {
                            bytes: line.wire_bytes(),
                            message,
                        }),
                        (Source::Client, Some(message)) => steps.push(Step::Client {
                            record: *record,
                            message,
                        }),
                        (Source::Client, None) => {}
                        (Source::Stderr, _) => steps.push(Step::Stderr(line.wire_bytes())),
                    }
                }
                Record::Eof { from, .. } => {
                    agent_closed_first.get_or_insert(*from == Source::Agent);
                }
                Record::Exit { .. } => {
                    // An exit with no end of its output recorded.
                    agent_closed_first.get_or_insert(true);
                }
            }
        }
        let agent_ended = (agent_closed_first == Some(true)).then(|| match recording.exit() {
            Some((_, Exit::Code(code))) => code,
            Some((_, Exit::Signal(signal))) => 128 + signal,
            None => 0,
        });
        Ok(Replay { steps, agent_ended })
    }

    /// Plays the recording; see the module docs.
    pub fn play(self, wire: &mut Wire) -> Result<(), Stop> {
        let mut ids = Ids::default();
        let mut held: Vec<Value> = Vec::new();
        for (index, step) in self.steps.iter().enumerate() {
            match step {
                Step::Agent { bytes, message } => send(wire, &mut ids, bytes, message.as_ref())?,
                Step::Stderr(bytes) => {
                    let _ = std::io::stderr().write_all(bytes);
                }
                Step::Client { record, message } => {
                    let answers_nothing = kind(message) == Kind::Response
                        && message
                            .get("id")
                            .is_none_or(|id| !ids.ours.contains_key(&id.to_string()));
                    if answers_nothing {
                        // An answer to no request of the agent's: nothing
                        // to wait for.
                        continue;
                    }
                    let live = self.wait_for(wire, &ids, &mut held, index, message)?;
                    compare(wire, &mut ids, *record, message, &live);
                }
            }
        }
        for message in held {
            wire.stash(message);
        }
        match self.agent_ended {
            Some(code) => Err(Stop::Exit(code)),
            None => Ok(()),
        }
    }

    /// The client's live message for the recorded one at `index`.
    fn wait_for(
        &self,
        wire: &mut Wire,
        ids: &Ids,
        held: &mut Vec<Value>,
        index: usize,
        expected: &Value,
    ) -> Result<Value, Stop> {
        if let Some(at) = held.iter().position(|m| matches(ids, expected, m)) {
            return Ok(held.remove(at));
        }
        let Step::Client { record, .. } = &self.steps[index] else {
            unreachable!("only client steps are waited for")
        };
        let waiting = format!("the {} of record line {record}", describe(expected));
        loop {
            let live = wire.next(&waiting)?;
            if matches(ids, expected, &live) {
                return Ok(live);
            }
            let later = self.steps[index + 1..].iter().any(|step| match step {
                Step::Client { message, .. } => matches(ids, message, &live),
                _ => false,
            });
            if later {
                held.push(live);
            } else {
                wire.differ(format!(
                    "the client sent a {} that the recording does not have here (waiting for the {} of record line {record})",
                    describe(&live),
                    describe(expected)
                ));
                wire.refuse(&live, "the recording has no such request here")?;
            }
        }
    }
}

/// Whether the live message stands for the recorded one.
fn matches(ids: &Ids, recorded: &Value, live: &Value) -> bool {
    match (kind(recorded), kind(live)) {
        (Kind::Request(a), Kind::Request(b)) | (Kind::Notification(a), Kind::Notification(b)) => {
            a == b
        }
        (Kind::Response, Kind::Response) => {
            let ours = recorded
                .get("id")
                .and_then(|id| ids.ours.get(&id.to_string()));
            ours.is_some_and(|ours| live.get("id").and_then(Value::as_i64) == Some(*ours))
        }
        _ => false,
    }
}

/// Reports how the live message differs from the recorded one, and
/// remembers the live id of a request.
fn compare(wire: &mut Wire, ids: &mut Ids, record: usize, recorded: &Value, live: &Value) {
    let what = describe(recorded);
    let mut found = Vec::new();
    match kind(recorded) {
        Kind::Request(_) | Kind::Notification(_) => {
            if let (Some(recorded_id), Some(live_id)) = (recorded.get("id"), live.get("id")) {
                ids.client.insert(recorded_id.to_string(), live_id.clone());
            }
            let none = Value::Null;
            let want = recorded.get("params").unwrap_or(&none);
            let got = live.get("params").unwrap_or(&none);
            found = differences(want, got, &IGNORED)
                .into_iter()
                .map(|d| format!("params.{d}"))
                .collect();
        }
        Kind::Response => match (recorded.get("result"), live.get("result")) {
            (Some(want), Some(got)) => {
                found = differences(want, got, &IGNORED)
                    .into_iter()
                    .map(|d| format!("result.{d}"))
                    .collect();
            }
            (Some(_), None) => found.push("an error answer, recorded was a result".to_owned()),
            (None, Some(_)) => found.push("a result, recorded was an error answer".to_owned()),
            (None, None) => {
                let code = |m: &Value| m.pointer("/error/code").cloned();
                if code(recorded) != code(live) {
                    found.push(format!(
                        "error code {}, recorded {}",
                        code(live).unwrap_or(Value::Null),
                        code(recorded).unwrap_or(Value::Null)
                    ));
                }
            }
        },
        Kind::Other => {}
    }
    for difference in found {
        wire.differ(format!("record line {record}, {what}: {difference}"));
    }
}

/// Sends one line the recorded agent sent.
fn send(wire: &mut Wire, ids: &mut Ids, bytes: &[u8], message: Option<&Value>) -> Result<(), Stop> {
    let Some(message) = message else {
        return wire.send_raw(bytes);
    };
    match kind(message) {
        Kind::Request(_) => {
            let ours = wire.new_id();
            if let Some(id) = message.get("id") {
                ids.ours.insert(id.to_string(), ours);
            }
            let mut message = message.clone();
            message["id"] = ours.into();
            wire.send(&message)
        }
        Kind::Response => {
            let recorded = message.get("id").map(Value::to_string).unwrap_or_default();
            match ids.client.get(&recorded) {
                Some(live) => {
                    let mut message = message.clone();
                    message["id"] = live.clone();
                    wire.send(&message)
                }
                // The client never sent the request this answers (that was
                // reported); an answer out of the blue is sent as recorded.
                None => wire.send_raw(bytes),
            }
        }
        Kind::Notification(_) | Kind::Other => wire.send_raw(bytes),
    }
}
