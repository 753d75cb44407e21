//! What the checks share: judging a call that failed and a line's strict
//! findings, and what a check of an advertised method asks first.

use crate::agent::cx::{AgentCx, needs};
use crate::report::Outcome;
use crate::wire::Call;
use serde_json::json;

pub(super) fn call_failure(what: &str, call: &Call) -> Outcome {
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
pub(super) fn strictly(cx: &AgentCx, seq: Option<usize>) -> Outcome {
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

pub(super) fn stop_reason_outcome(call: &Call) -> Outcome {
    match call.result().and_then(|r| r.get("stopReason")) {
        Some(_) => Outcome::pass(),
        None => call_failure("session/prompt", call),
    }
}

/// The agent's session capabilities (after initialize).
pub(super) async fn capability(cx: &mut AgentCx, name: &str) -> Result<bool, Outcome> {
    let init = cx.init().await.map_err(|e| needs("initialize", &e))?;
    let caps = &init.result["agentCapabilities"];
    Ok(match name {
        "load" => caps["loadSession"] == json!(true),
        other => caps["sessionCapabilities"]
            .get(other)
            .is_some_and(|v| !v.is_null()),
    })
}
