//! What the checks share: what a check of a session method starts from
//! ([`advertised`]: the capability, a session, the main process), and
//! judging what came back (a call that failed, a line's strict findings).

use crate::agent::cx::{AgentCx, Session, needs};
use crate::process::Peer;
use crate::report::Outcome;
use crate::wire::Call;
use serde_json::json;
use std::time::Duration;

/// What a check function returns when it uses `?`: its outcome, or the
/// outcome a step it needed decided early (a skip, a failure).
pub(super) type Judged = Result<Outcome, Outcome>;

/// A check function's result as the outcome the table wants.
pub(super) trait IntoOutcome {
    fn into_outcome(self) -> Outcome;
}

impl IntoOutcome for Outcome {
    fn into_outcome(self) -> Outcome {
        self
    }
}

impl IntoOutcome for Judged {
    fn into_outcome(self) -> Outcome {
        self.unwrap_or_else(|early| early)
    }
}

/// Which session a check calls its method on.
pub(super) enum On {
    /// The main session, opened once and shared by the checks.
    Main,
    /// A new session of its own, which the method may end.
    New,
}

/// What a check of a session method starts from.
pub(super) struct Ready<'a> {
    /// The session to call the method on.
    pub session: Session,
    /// The sessions' cwd (the temporary workspace).
    pub cwd: String,
    /// How long a request may take (`--timeout`).
    pub timeout: Duration,
    /// The agent's main process.
    pub peer: &'a mut Peer,
}

/// The preamble of a check of a session method the agent must advertise:
/// SKIP when it does not advertise `capability` ([`advertises`]), then the
/// session ([`On`]) and the main process ([`ready`]).
pub(super) async fn advertised<'a>(
    cx: &'a mut AgentCx,
    capability: &str,
    on: On,
) -> Result<Ready<'a>, Outcome> {
    advertises(cx, capability).await?;
    ready(cx, on).await
}

/// SKIP (as `Err`) when the agent does not advertise the session capability
/// `name` (see [`capability`]).
pub(super) async fn advertises(cx: &mut AgentCx, name: &str) -> Result<(), Outcome> {
    if capability(cx, name).await? {
        return Ok(());
    }
    Err(Outcome::skip(match name {
        "load" => "the agent does not advertise loadSession".to_string(),
        other => format!("the agent does not advertise sessionCapabilities.{other}"),
    }))
}

/// A session to call a method on, and the main process; what a check
/// reports when either cannot be had.
pub(super) async fn ready(cx: &mut AgentCx, on: On) -> Result<Ready<'_>, Outcome> {
    let session = match on {
        On::Main => cx.session().await,
        On::New => cx.new_session().await.map(|(session, _)| session),
    }
    .map_err(|e| needs("session/new", &e))?;
    let (cwd, timeout) = (cx.workspace(), cx.opts.timeout);
    let peer = cx.main().await.map_err(|e| Outcome::fail(e.to_string()))?;
    Ok(Ready {
        session,
        cwd,
        timeout,
        peer,
    })
}

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

/// Whether the agent advertises the session capability `name` (after
/// initialize): `load` is `agentCapabilities.loadSession`, the others are
/// in `agentCapabilities.sessionCapabilities`.
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
