//! `prompt.*` and `cancel.*`: the ordinary turns and the cancelled one.

use super::shared::{stop_reason_outcome, strictly};
use crate::agent::cx::Turn;
use crate::agent::cx::{AgentCx, needs};
use crate::agent::rules;
use crate::report::Outcome;
use crate::wire::{Dir, Event};
use serde_json::json;
use std::time::Duration;

/// The stop reasons of the schema (v1).
const STOP_REASONS: &[&str] = &[
    "end_turn",
    "max_tokens",
    "max_turn_requests",
    "refusal",
    "cancelled",
];

pub(super) async fn prompt_text(cx: &mut AgentCx) -> Outcome {
    match cx.ordinary().await {
        Err(e) => needs("session/new", &e),
        Ok(turn) => match stop_reason_outcome(&turn.call) {
            o if o.status == crate::report::Status::Pass => strictly(cx, turn.answered),
            o => o,
        },
    }
}

pub(super) async fn prompt_resource_link(cx: &mut AgentCx) -> Outcome {
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
        Err(e) => Outcome::fail(e.to_string()),
        Ok(turn) => stop_reason_outcome(&turn.call),
    }
}

pub(super) async fn prompt_session_id(cx: &mut AgentCx) -> Outcome {
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

pub(super) async fn no_update_after_response(cx: &mut AgentCx) -> Outcome {
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

/// How soon after `session/cancel` a turn's end may come and still be a
/// race the cancel lost (when it is the first line the agent wrote after it).
pub(super) const RACE_WINDOW: Duration = Duration::from_secs(1);

/// Whether the cancelled turn's end with another stop reason may have
/// outrun the cancel: its response was the first line the agent wrote after
/// `session/cancel` (nothing shows the agent went on working), and it came
/// within [`RACE_WINDOW`]. Returns how long after the cancel it came.
fn outran_the_cancel(events: &[Event], turn: &Turn) -> Option<Duration> {
    let cancel = events.get(turn.cancelled_at?)?;
    let answered = turn.answered?;
    let first = events
        .iter()
        .skip(cancel.seq + 1)
        .find(|e| e.wire == turn.wire && e.dir == Dir::In)?;
    let after = first.at.saturating_sub(cancel.at);
    (first.seq == answered && after < RACE_WINDOW).then_some(after)
}

pub(super) async fn cancel_stop_reason(cx: &mut AgentCx) -> Outcome {
    match cx.cancel_turn().await {
        Err(o) => o,
        Ok(turn) => match turn.call.result().and_then(|r| r.get("stopReason")) {
            Some(r) if r == "cancelled" => Outcome::pass(),
            Some(r)
                if r.as_str().is_some_and(|r| STOP_REASONS.contains(&r))
                    && let Some(after) = outran_the_cancel(&cx.log.all(), &turn) =>
            {
                Outcome::skip(format!(
                    "not exercised: the turn ended with stop reason {r} in the first line the \
                     agent wrote after session/cancel, {} ms after it; it may have ended before \
                     it read the cancel (choose a --cancel-prompt that runs longer)",
                    after.as_millis()
                ))
            }
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

pub(super) async fn cancel_session_usable(cx: &mut AgentCx) -> Outcome {
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
        Err(e) => Outcome::fail(e.to_string()),
        Ok(turn) => stop_reason_outcome(&turn.call),
    }
}
