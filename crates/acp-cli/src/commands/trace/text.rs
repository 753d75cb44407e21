//! `acp trace FILE`: the timeline as text, one line per event, then a
//! summary of the sessions and the counts.
//!
//! Each line starts with the time in seconds since the recording started;
//! `→` is the client speaking, `←` the agent. A request is shown where it
//! was sent, with its outcome and latency; its response is not shown again
//! (except a turn's end, and an answer to no request). A run of message or
//! thought chunks is one line with their text joined (a v2 message, its
//! chunks and upserts by `messageId`, is one line with its final text).
//! Lines inside a turn are marked `│`; errors say `ERROR`. A v2 turn ends
//! at its idle `state_update`, not at the prompt's acknowledgement.

use super::model::{Event, Row, Timeline, What, preview, rows};
use crate::recording::{Exit, Source};
use std::fmt::Write as _;

/// Renders the timeline; `name` is the file's name for the header.
pub fn render(timeline: &Timeline, name: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "recording {name}");
    if !timeline.agent.is_empty() {
        let _ = writeln!(out, "agent: {}", timeline.agent.join(" "));
    }
    if !timeline.started.is_empty() {
        let redacted = if timeline.redacted { " (redacted)" } else { "" };
        let _ = writeln!(out, "started: {}{redacted}", timeline.started);
    }
    for warning in &timeline.warnings {
        let _ = writeln!(out, "warning: {warning}");
    }
    out.push('\n');
    for row in rows(&timeline.events) {
        let line = match row {
            Row::Chunks {
                first,
                kind,
                count,
                text,
                ..
            } => Some(chunks_line(first, kind, count, &text)),
            Row::Event(event) => describe(event).map(|line| timed(event, &line)),
        };
        if let Some(line) = line {
            let _ = writeln!(out, "{line}");
        }
    }
    out.push('\n');
    summary(timeline, &mut out);
    out
}

/// The line of a run of `count` chunks of `kind`, `first` the first of
/// them, their text joined.
pub fn chunks_line(first: &Event, kind: &str, count: usize, text: &str) -> String {
    let bar = if first.turn.is_some() { "│ " } else { "" };
    let times = if count > 1 {
        format!(" ×{count}")
    } else {
        String::new()
    };
    format!(
        "{:>9.3}  {bar}{} {kind}{times} {:?}",
        first.t,
        arrow(first.from),
        preview(text, 200)
    )
}

/// `line`, said of `event`, with its time (and the bar of a turn).
pub fn timed(event: &Event, line: &str) -> String {
    let bar = if event.turn.is_some() && !is_turn_edge(event) {
        "│ "
    } else {
        ""
    };
    format!("{:>9.3}  {bar}{line}", event.t)
}

/// `→` for the client, `←` for the agent.
pub fn arrow(from: Source) -> &'static str {
    match from {
        Source::Client => "→",
        Source::Agent => "←",
        Source::Stderr => "stderr:",
    }
}

/// A latency in milliseconds, readable.
pub fn ms(latency: Option<f64>) -> String {
    match latency {
        Some(ms) if ms >= 1000.0 => format!("{:.2} s", ms / 1000.0),
        Some(ms) => format!("{ms:.1} ms"),
        None => "?".to_owned(),
    }
}

/// Whether the event starts or ends a turn (v2: the prompt's
/// acknowledgement does not, the idle `state_update` does).
pub fn is_turn_edge(event: &Event) -> bool {
    matches!(&event.what,
        What::Request { method, .. } if method == "session/prompt")
        || (matches!(&event.what,
        What::Response { method: Some(method), .. } if method == "session/prompt")
            && !is_acknowledgement(event))
        || matches!(
            &event.what,
            What::Notification {
                ends_turn: true,
                ..
            }
        )
}

/// Whether the event is a v2 answer to `session/prompt`: a `messageId`,
/// no stop reason.
pub fn is_acknowledgement(event: &Event) -> bool {
    let result = |key| {
        event
            .message
            .as_ref()
            .and_then(|m| m.pointer(&format!("/result/{key}")))
            .is_some()
    };
    matches!(&event.what, What::Response { method: Some(method), error: None, .. } if method == "session/prompt")
        && result("messageId")
        && !result("stopReason")
}

/// The line for one event, or `None` when it is not shown.
pub fn describe(event: &Event) -> Option<String> {
    let session = event.session.as_deref().unwrap_or("?");
    let turn = event.turn.unwrap_or(0);
    Some(match &event.what {
        What::Request { method, .. } if method == "session/prompt" => {
            format!("┌ {session} turn {turn} {}", event.summary)
        }
        What::Request { .. } => {
            let mut line = request_head(event);
            line.push_str(&outcome(event));
            line
        }
        What::Response { latency_ms, .. } if is_acknowledgement(event) => {
            format!("← session/prompt {} in {}", event.summary, ms(*latency_ms))
        }
        What::Response {
            method: Some(method),
            latency_ms,
            error,
            ..
        } if method == "session/prompt" => match error {
            Some(e) => format!(
                "└ {session} turn {turn}: ERROR {} {} after {}",
                e.code,
                e.message,
                ms(*latency_ms)
            ),
            None => format!(
                "└ {session} turn {turn}: {} in {}",
                event.summary,
                ms(*latency_ms)
            ),
        },
        What::Response {
            method: Some(method),
            error: None,
            ..
        } if method == "session/new" && event.summary.starts_with("session ") => {
            format!("← {} opened", event.summary)
        }
        What::Response {
            method: None, id, ..
        } => {
            format!(
                "{} answer #{id}: ERROR an answer to no request",
                arrow(event.from)
            )
        }
        What::Response { .. } => return None,
        What::Notification {
            ends_turn: true, ..
        } => format!("└ {session} turn {turn}: {}", event.summary),
        What::Notification { method, update, .. } => {
            let name = update.as_deref().unwrap_or(method);
            format!("{} {name} {}", arrow(event.from), event.summary)
                .trim_end()
                .to_owned()
        }
        What::Stderr => format!("stderr: {}", event.text.as_deref().unwrap_or_default()),
        What::Invalid { why } => format!(
            "{} ERROR {why}: {}",
            arrow(event.from),
            preview(event.text.as_deref().unwrap_or_default(), 80)
        ),
        What::Eof => format!("{} closed its end", event.from.as_str()),
        What::Exit { exit } => match exit {
            Exit::Code(code) => format!("the agent exited with code {code}"),
            Exit::Signal(signal) => format!("the agent was killed by signal {signal}"),
        },
    })
}

/// A request, as sent: `→ method #id summary`.
pub fn request_head(event: &Event) -> String {
    let What::Request { id, method, .. } = &event.what else {
        return String::new();
    };
    let mut line = format!("{} {method} #{id}", arrow(event.from));
    if !event.summary.is_empty() {
        let _ = write!(line, " {}", event.summary);
    }
    line
}

/// How a request was answered: `: ok in 5.0 ms, session s-1`, `: ERROR …`.
pub fn outcome(event: &Event) -> String {
    let What::Request {
        latency_ms,
        outcome,
        error,
        result,
        ..
    } = &event.what
    else {
        return String::new();
    };
    match (outcome.as_str(), error) {
        (_, Some(e)) => format!(": ERROR {} {} after {}", e.code, e.message, ms(*latency_ms)),
        ("no answer", _) => ": ERROR no answer".to_owned(),
        _ if result.is_empty() => format!(": {outcome} in {}", ms(*latency_ms)),
        _ => format!(": {outcome} in {}, {result}", ms(*latency_ms)),
    }
}

fn summary(timeline: &Timeline, out: &mut String) {
    for session in &timeline.sessions {
        let mut about = Vec::new();
        if let Some(how) = &session.opened {
            about.push(how.clone());
        }
        if let Some(cwd) = &session.cwd {
            about.push(format!("cwd {cwd}"));
        }
        let about = if about.is_empty() {
            String::new()
        } else {
            format!(" ({})", about.join(", "))
        };
        let _ = writeln!(out, "session {}{about}", session.id);
        for turn in &session.turns {
            let end = match (&turn.error, &turn.stop_reason) {
                (Some(e), _) => format!("ERROR {} {}", e.code, e.message),
                (None, Some(stop)) => stop.clone(),
                (None, None) => "unfinished".to_owned(),
            };
            let _ = writeln!(
                out,
                "  turn {} \"{}\": {end}, {}",
                turn.n,
                preview(&turn.prompt, 60),
                ms(turn.duration_ms)
            );
            for call in &turn.tool_calls {
                let statuses: Vec<&str> = call.statuses.iter().map(|s| s.status.as_str()).collect();
                let kind = call
                    .kind
                    .as_deref()
                    .map(|k| format!(" ({k})"))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "    tool call {} {:?}{kind}: {}",
                    call.id,
                    call.title,
                    statuses.join(" → ")
                );
            }
            for p in &turn.permissions {
                let _ = writeln!(
                    out,
                    "    permission for {}: {} (offered {}), {}",
                    p.tool_call,
                    p.answer,
                    p.options.join(", "),
                    ms(p.latency_ms)
                );
            }
        }
    }
    let c = &timeline.counts;
    let _ = writeln!(
        out,
        "counts: {} sessions, {} turns, {} tool calls, {} permission questions",
        c.sessions, c.turns, c.tool_calls, c.permissions
    );
    let _ = writeln!(
        out,
        "  lines: client {} ({} bytes), agent {} ({} bytes), stderr {}",
        c.client.lines, c.client.bytes, c.agent.lines, c.agent.bytes, c.stderr.lines
    );
    let _ = writeln!(
        out,
        "  messages: {} requests, {} responses, {} notifications; {} errors, {} invalid lines",
        c.requests, c.responses, c.notifications, c.errors, c.invalid
    );
    if !c.updates.is_empty() {
        let updates: Vec<String> = c.updates.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = writeln!(out, "  updates: {}", updates.join(", "));
    }
}
