//! Compaction: the older turns of the conversation replaced by a summary the
//! model writes, on `/compact` or automatically.
//!
//! Automatic compaction happens before a model call when the conversation
//! took at least `compact_at_percent` of `context_window` tokens at the last
//! call (the provider's count), at most once per turn: the turns before the
//! running one are summarised, and the running turn goes on after the
//! summary. It is announced in the agent's message, the summary is shown as a
//! thought, and the summarising call's token use is not reported as the
//! conversation's (the next answer reports the new size). The summarised
//! turns stay in the store and in the replay.

use super::model_call::{CallFailure, Show};
use super::turn::{TurnError, TurnState};
use super::{CodingAgent, Conversation, Session};
use crate::llm::Message;
use acp::CancellationToken;
use acp::schema::*;

/// What the model is asked for.
fn summary_request(extra: &str) -> Message {
    let also = if extra.is_empty() {
        String::new()
    } else {
        format!(" Also: {extra}")
    };
    Message::user(format!(
        "Do not call any tools now. Summarise our conversation so far so that the work can \
         continue from the summary alone: the user's goals and requests, decisions made, files \
         read or changed and their current state, commands run and their results, and what \
         remains to do. Be complete but concise.{also}"
    ))
}

/// `n` with thousands separated: 128,000.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl CodingAgent {
    /// Has the model summarise `older` (the turns to replace).
    async fn summarise(
        &self,
        session_id: &SessionId,
        session: &Session,
        older: &[Message],
        cancel: &CancellationToken,
        extra: &str,
        show: Show,
    ) -> Result<String, CallFailure> {
        let messages = self
            .messages_for_model(session, older, Some(summary_request(extra)))
            .await;
        let reply = self
            .call_model(session_id, session, &messages, cancel, show)
            .await?;
        Ok(reply.text)
    }

    /// `/compact [what to keep]`: the whole conversation so far becomes a
    /// summary.
    pub(super) async fn compact(
        &self,
        session_id: &SessionId,
        session: &Session,
        conv: &mut Conversation,
        turn: &mut TurnState,
        cancel: &CancellationToken,
        extra: &str,
    ) -> Result<StopReason, TurnError> {
        let older = conv.messages[..turn.start].to_vec();
        if older.is_empty() {
            self.notify(
                session_id,
                SessionUpdate::agent_message("There is nothing to compact yet."),
            )
            .await;
            return Ok(StopReason::EndTurn);
        }
        let show = Show::Summary { as_thought: false };
        match self
            .summarise(session_id, session, &older, cancel, extra, show)
            .await
        {
            Ok(summary) if summary.trim().is_empty() => {
                self.report_error(
                    session_id,
                    "the model returned an empty summary; the conversation was kept",
                )
                .await;
                Ok(StopReason::EndTurn)
            }
            Ok(summary) => {
                self.record_compaction(session_id, session, conv, turn, &summary)
                    .await?;
                Ok(StopReason::EndTurn)
            }
            Err(CallFailure::Cancelled { .. }) => Ok(StopReason::Cancelled),
            Err(CallFailure::Failed(f)) => {
                self.report_error(session_id, &format!("could not compact: {}", f.message()))
                    .await;
                Err(TurnError::Model(f))
            }
        }
    }

    /// Before a model call: summarises the turns before the running one when
    /// the conversation has reached `compact_at_percent` of the context
    /// window. `Some` is how the turn ends instead (cancelled).
    pub(super) async fn maybe_compact(
        &self,
        session_id: &SessionId,
        session: &Session,
        conv: &mut Conversation,
        turn: &mut TurnState,
        cancel: &CancellationToken,
    ) -> Result<Option<StopReason>, TurnError> {
        let percent = self.config.compact_at_percent;
        let window = self.config.context_window;
        let Some(used) = conv.context_tokens else {
            return Ok(None);
        };
        if percent == 0 || turn.compacted || turn.start == 0 || used * 100 < window * percent {
            return Ok(None);
        }
        turn.compacted = true;
        self.notify(
            session_id,
            SessionUpdate::agent_message(format!(
                "_The conversation has reached {} of {} tokens ({}%; compaction starts at {percent}%): \
                 summarising the earlier turns to make room…_\n\n",
                thousands(used),
                thousands(window),
                used * 100 / window.max(1)
            )),
        )
        .await;
        let older = conv.messages[..turn.start].to_vec();
        let show = Show::Summary { as_thought: true };
        let note = match self
            .summarise(session_id, session, &older, cancel, "", show)
            .await
        {
            Ok(summary) if !summary.trim().is_empty() => {
                self.record_compaction(session_id, session, conv, turn, &summary)
                    .await?;
                "_The earlier turns are summarised; continuing._\n\n".to_string()
            }
            Ok(_) => "_Could not compact (the model returned an empty summary); continuing with \
                      the whole conversation._\n\n"
                .to_string(),
            Err(CallFailure::Cancelled { .. }) => return Ok(Some(StopReason::Cancelled)),
            Err(CallFailure::Failed(f)) => format!(
                "_Could not compact ({}); continuing with the whole conversation._\n\n",
                f.message()
            ),
        };
        self.notify(session_id, SessionUpdate::agent_message(note))
            .await;
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(128_000), "128,000");
        assert_eq!(super::thousands(1_234_567), "1,234,567");
    }
}
