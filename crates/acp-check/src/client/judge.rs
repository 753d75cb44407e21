//! What the parts of the turn share: judging an answer (a failed call, a
//! response's strict findings, whether the client still answers), asking
//! for permission, and fresh file names in the session's cwd.

use super::cx::ClientCx;
use crate::report::Outcome;
use crate::wire::Call;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The ext method the turn uses to see that the client still answers.
pub(super) const PING: &str = "_acp_check/ping";

pub(super) fn failed(what: &str, call: &Call) -> Outcome {
    match &call.response {
        Some(r) => Outcome::fail(format!("{what}: answered with an error")).with_message(&r.line),
        None => Outcome::fail(format!("{what}: {}", call.describe())),
    }
}

/// The strict findings of a response, as an outcome (pass when clean).
pub(super) fn strictly(cx: &ClientCx, call: &Call) -> Option<Outcome> {
    let seq = call.seq()?;
    let events = cx.log.since(seq);
    let e = events.first()?;
    (!e.findings.errors.is_empty())
        .then(|| Outcome::fail(e.findings.errors.join("; ")).with_message(&e.line))
}

/// Whether the client still answers: a ping, answered at all.
pub(super) async fn still_answers(cx: &mut ClientCx, after: &str) -> Outcome {
    let call = cx.call(PING, json!({})).await;
    match &call.response {
        Some(_) => Outcome::pass(),
        None => Outcome::fail(format!(
            "after {after}, a request was not answered: {}",
            call.describe()
        )),
    }
}

/// A path in `dir` named `acp-check-<pid>-<n>-<what>` that does not exist
/// yet: the checks never touch a file of the user's, even when the client
/// runs in a real project.
pub(super) fn fresh_path(dir: &Path, what: &str) -> PathBuf {
    (0..)
        .map(|n| dir.join(format!("acp-check-{}-{n}-{what}", std::process::id())))
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .expect("a free name")
}

pub(super) fn session_id(cx: &ClientCx) -> String {
    cx.session
        .as_ref()
        .map(|s| s.id.clone())
        .unwrap_or_default()
}

/// Sends a permission request with `options` for a new tool call; the call
/// and the offered ids.
pub(super) async fn ask(
    cx: &mut ClientCx,
    title: &str,
    kind: &str,
    locations: Value,
    options: Value,
) -> (String, Call) {
    let tool = cx.tool_call(title, kind, locations.clone());
    let session = session_id(cx);
    let params = json!({
        "sessionId": session,
        "toolCall": {"toolCallId": tool, "title": title, "kind": kind, "status": "pending", "locations": locations},
        "options": options,
    });
    let call = cx.call("session/request_permission", params).await;
    (tool, call)
}

/// The outcome of a permission answer: `Ok(Some(id))` selected, `Ok(None)`
/// cancelled, `Err` a failure.
pub(super) fn permission_outcome(
    cx: &ClientCx,
    call: &Call,
    offered: &[&str],
) -> Result<Option<String>, Outcome> {
    let Some(result) = call.result() else {
        return Err(failed("session/request_permission", call));
    };
    if let Some(bad) = strictly(cx, call) {
        return Err(bad);
    }
    match result["outcome"]["outcome"].as_str() {
        Some("cancelled") => Ok(None),
        Some("selected") => {
            let id = result["outcome"]["optionId"].as_str().unwrap_or("");
            if offered.contains(&id) {
                Ok(Some(id.to_string()))
            } else {
                Err(Outcome::fail(format!(
                    "selected optionId {id:?}, which was not offered ({})",
                    offered.join(", ")
                ))
                .with_message(&call.describe()))
            }
        }
        _ => Err(
            Outcome::fail("an outcome that is neither selected nor cancelled")
                .with_message(&call.describe()),
        ),
    }
}

/// Asks for permission for an action; `Err(skip)` when it was refused.
pub(super) async fn allowed(
    cx: &mut ClientCx,
    title: &str,
    kind: &str,
    locations: Value,
) -> Result<String, Outcome> {
    let options = json!([
        {"optionId": "acp-check-allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "acp-check-reject", "name": "Reject", "kind": "reject_once"},
    ]);
    let (tool, call) = ask(cx, title, kind, locations, options).await;
    match permission_outcome(cx, &call, &["acp-check-allow", "acp-check-reject"]) {
        Ok(Some(id)) if id == "acp-check-allow" => Ok(tool),
        Ok(other) => {
            cx.tool_done(&tool, "failed");
            Err(Outcome::skip(format!(
                "the client did not allow the permission request for it ({})",
                other.as_deref().unwrap_or("cancelled")
            )))
        }
        Err(o) => {
            cx.tool_done(&tool, "failed");
            Err(Outcome::skip(format!(
                "its permission request failed: {}",
                o.reason
            )))
        }
    }
}
