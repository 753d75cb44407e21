//! The notes every screen writes alike: what the agent says about its own
//! progress, read from an update, its notices, and what happens to the link
//! to a remote agent.

use acp::remote::LinkEvent;
use acp::schema::*;

/// What the agent says about its own progress in an update, if anything:
/// a `status` (or `statusMessage`, `progress`) in the `_meta` of the
/// notification or of the update (a text, or an object with a `message` or
/// `text`), or the `message`, `status` or `title` text of an update of a
/// kind acp does not know.
pub fn agent_status(notification: &SessionNotification) -> Option<String> {
    let update_meta = match &notification.update {
        SessionUpdate::AgentMessageChunk(c)
        | SessionUpdate::AgentThoughtChunk(c)
        | SessionUpdate::UserMessageChunk(c) => c.meta.as_ref(),
        SessionUpdate::ToolCall(c) => c.meta.as_ref(),
        SessionUpdate::ToolCallUpdate(u) => u.meta.as_ref(),
        SessionUpdate::SessionInfoUpdate(u) => u.meta.as_ref(),
        SessionUpdate::UsageUpdate(u) => u.meta.as_ref(),
        SessionUpdate::Plan(p) => p.meta.as_ref(),
        SessionUpdate::Other(raw) => {
            let other = serde_json::to_value(raw).unwrap_or_default();
            let kind = other
                .get("sessionUpdate")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("update");
            if let Some(text) = ["message", "status", "title"]
                .iter()
                .find_map(|k| other.get(*k).and_then(serde_json::Value::as_str))
            {
                return Some(format!("{kind}: {}", clip(text)));
            }
            let inner = other
                .get("_meta")
                .and_then(serde_json::Value::as_object)
                .and_then(meta_status);
            return notification
                .meta
                .as_ref()
                .and_then(|m| meta_status(&m.to_map()))
                .or(inner);
        }
        _ => None,
    };
    [
        notification.meta.as_ref().map(Meta::to_map),
        update_meta.map(Meta::to_map),
    ]
    .iter()
    .flatten()
    .find_map(meta_status)
}

fn meta_status(meta: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    ["status", "statusMessage", "progress"]
        .iter()
        .find_map(|key| {
            let value = meta.get(*key)?;
            let text = value.as_str().or_else(|| {
                ["message", "text"]
                    .iter()
                    .find_map(|k| value.get(*k).and_then(serde_json::Value::as_str))
            })?;
            (!text.trim().is_empty()).then(|| clip(text))
        })
}

/// A status on one line, at most 200 characters.
fn clip(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default().trim();
    match line.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

/// A notice of the agent, as a note: `[warning] Title: description`.
pub fn notice(notice: &Notice) -> String {
    let mut line = format!("[{}] {}", notice.severity, notice.title);
    if let Some(d) = &notice.description {
        line.push_str(": ");
        line.push_str(d);
    }
    line
}

/// What happens to the link to a remote agent, as a note: the connection
/// broke and is being resumed, or was resumed.
pub fn link(event: &LinkEvent) -> Option<String> {
    match event {
        LinkEvent::Reconnecting {
            attempt: 1,
            delay,
            why,
        } => Some(format!(
            "[reconnecting…] the connection to the agent broke ({}); resuming it (attempt 1 in {:.1} s)",
            clip(why),
            delay.as_secs_f64()
        )),
        LinkEvent::Reconnecting {
            attempt,
            delay,
            why,
        } => Some(format!(
            "[reconnecting…] attempt {attempt} in {:.1} s ({})",
            delay.as_secs_f64(),
            clip(why)
        )),
        LinkEvent::Resumed { attempts, down_for } => Some(format!(
            "[reconnected] after {:.1} s ({attempts} {}): nothing was lost",
            down_for.as_secs_f64(),
            if *attempts == 1 {
                "attempt"
            } else {
                "attempts"
            }
        )),
        _ => None,
    }
}

/// The status line while the link to a remote agent is being resumed.
pub fn reconnecting_status(attempt: u32) -> String {
    format!("[reconnecting…] attempt {attempt}")
}
