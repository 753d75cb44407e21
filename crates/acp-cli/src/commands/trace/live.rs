//! The timeline of a recording still being made, shown as it happens (`acp
//! watch`): each record as `acp trace` shows it ([`super::text`]), except
//! that a request is shown when it is sent (`→ session/new #1 …`) and its
//! outcome when the answer comes (`← #1 session/new: ok in 5.0 ms, …`),
//! since neither is known before. A run of message chunks is one line, shown
//! once the run ends (or, for a long one, each second: [`RUN_FOR`]), or when
//! the caller [`flush`](LiveText::flush)es it because nothing came for a
//! while.

use super::build::Growing;
use super::model::{Event, What, chunk_kind, chunk_text};
use super::text::{arrow, chunks_line, describe, outcome, request_head, timed};
use crate::recording::Record;
use std::time::{Duration, Instant};

/// The longest a run of chunks is held before it is shown.
pub const RUN_FOR: Duration = Duration::from_secs(1);

/// The most text of a run kept (its line shows the first 200 characters).
const RUN_TEXT: usize = 4096;

/// The timeline as text lines, record by record.
#[derive(Default)]
pub struct LiveText {
    growing: Growing,
    run: Option<Run>,
}

/// Chunks held to be shown as one line.
struct Run {
    first: Event,
    kind: String,
    count: usize,
    text: String,
    since: Instant,
}

impl Run {
    fn takes(&self, event: &Event, kind: &str) -> bool {
        self.kind == kind
            && self.first.session == event.session
            && self.first.turn == event.turn
            && self.first.from == event.from
            && self.since.elapsed() < RUN_FOR
    }
}

impl LiveText {
    /// Takes record `number`; the lines to show now.
    pub fn push(&mut self, number: usize, record: &Record) -> Vec<String> {
        let (event, answered) = self.growing.push(number, record);
        let mut lines = Vec::new();
        if let Some(kind) = chunk_kind(&event) {
            if let Some(run) = &mut self.run
                && run.takes(&event, kind)
            {
                run.count += 1;
                if run.text.len() < RUN_TEXT {
                    run.text.push_str(chunk_text(&event));
                }
                return lines;
            }
            lines.extend(self.flush());
            self.run = Some(Run {
                kind: kind.to_owned(),
                count: 1,
                text: chunk_text(&event).to_owned(),
                first: event,
                since: Instant::now(),
            });
            return lines;
        }
        lines.extend(self.flush());
        lines.extend(line_of(&event, answered.as_ref()));
        lines
    }

    /// The run of chunks held, as its line.
    pub fn flush(&mut self) -> Option<String> {
        let run = self.run.take()?;
        Some(chunks_line(&run.first, &run.kind, run.count, &run.text))
    }
}

/// The line of `event` (for a response, `answered` is its request).
fn line_of(event: &Event, answered: Option<&Event>) -> Option<String> {
    let prompt = |method: &str| method == "session/prompt";
    match (&event.what, answered) {
        (What::Request { method, .. }, _) if !prompt(method) => {
            Some(timed(event, &request_head(event)))
        }
        (
            What::Response {
                method: Some(method),
                ..
            },
            Some(
                request @ Event {
                    what: What::Request { id, .. },
                    ..
                },
            ),
        ) if !prompt(method) => Some(timed(
            event,
            &format!("{} #{id} {method}{}", arrow(event.from), outcome(request)),
        )),
        _ => describe(event).map(|line| timed(event, &line)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::{Entry, parse_line};

    fn lines(records: &[&str]) -> Vec<String> {
        let mut live = LiveText::default();
        let mut out = Vec::new();
        for (n, raw) in records.iter().enumerate() {
            match parse_line(raw.as_bytes()).unwrap() {
                Entry::Record(record) => out.extend(live.push(n + 1, &record)),
                Entry::Header(_) => {}
            }
        }
        out.extend(live.flush());
        out
    }

    #[test]
    fn requests_then_their_outcomes_turns_and_runs_of_chunks() {
        let out = lines(&[
            r#"{"t":0.001,"from":"client","line":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{\"cwd\":\"/w\",\"mcpServers\":[]}}"}"#,
            r#"{"t":0.006,"from":"agent","line":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"sessionId\":\"s-1\"}}"}"#,
            r#"{"t":0.010,"from":"client","line":"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s-1\",\"prompt\":[{\"type\":\"text\",\"text\":\"hi\"}]}}"}"#,
            r#"{"t":0.020,"from":"agent","line":"{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s-1\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"Hel\"}}}}"}"#,
            r#"{"t":0.021,"from":"agent","line":"{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s-1\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"lo\"}}}}"}"#,
            r#"{"t":0.030,"from":"agent","line":"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"stopReason\":\"end_turn\"}}"}"#,
            r#"{"t":0.040,"from":"client","eof":true}"#,
        ]);
        assert_eq!(
            out,
            [
                "    0.001  → session/new #1",
                "    0.006  ← #1 session/new: ok in 5.0 ms, session s-1",
                "    0.010  ┌ s-1 turn 1 \"hi\"",
                "    0.020  │ ← agent_message_chunk ×2 \"Hello\"",
                "    0.030  └ s-1 turn 1: end_turn in 20.0 ms",
                "    0.040  client closed its end",
            ]
        );
    }
}
