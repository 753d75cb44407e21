//! Slash commands: offered to the client in `available_commands_update`, and
//! recognised at the start of a prompt. `/compact` replaces the conversation
//! with a summary written by the model; `/init` has the agent write
//! `AGENTS.md`.
//!
//! A new session's commands must reach the client after the `session/new`
//! response (before it, the client does not know the session): they are sent
//! by work registered with [`acp::AgentSideConnection::after_response`], which
//! the runtime runs once that response is queued.

use super::{CodingAgent, Session};
use crate::llm::{Message, ModelEvent};
use acp::schema::*;
use acp::{CancellationToken, RequestContext};

/// A slash command typed at the start of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SlashCommand {
    /// `/compact [instructions]`.
    Compact(String),
    /// `/init [instructions]`.
    Init(String),
}

impl SlashCommand {
    pub(super) fn parse(text: &str) -> Option<SlashCommand> {
        let rest = text.trim_start().strip_prefix('/')?;
        let (name, arg) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let arg = arg.trim().to_string();
        match name {
            "compact" => Some(SlashCommand::Compact(arg)),
            "init" => Some(SlashCommand::Init(arg)),
            _ => None,
        }
    }
}

/// The commands this agent offers.
fn available_commands() -> AvailableCommandsUpdate {
    AvailableCommandsUpdate::new(vec![
        AvailableCommand::new(
            "compact",
            "Summarise the conversation so far and continue from the summary, freeing context",
        )
        .input(UnstructuredCommandInput::new(
            "what the summary should keep (optional)",
        )),
        AvailableCommand::new(
            "init",
            "Explore the project and write an AGENTS.md describing it for coding agents",
        )
        .input(UnstructuredCommandInput::new(
            "extra instructions (optional)",
        )),
    ])
}

pub(super) fn init_prompt(extra: &str) -> String {
    let mut p = String::from(
        "Explore this project (list files, read the README, build files and main sources) and write a file \
         AGENTS.md at the root of the working directory for coding agents. Cover: what the project is, how to \
         build, test and lint it (exact commands), the layout of the code, and the conventions to follow. \
         Keep it short and factual; if AGENTS.md exists, update it instead of starting over.",
    );
    if !extra.is_empty() {
        p.push_str("\n\nAlso: ");
        p.push_str(extra);
    }
    p
}

impl CodingAgent {
    /// Tells the client which commands the session offers.
    pub(super) async fn announce_commands(&self, session_id: &SessionId) {
        self.send(session_id, available_commands()).await;
    }

    /// Announces the commands of the new session `session_id` right after
    /// the response of the request being handled (`session/new`), if that
    /// request succeeds.
    pub(super) fn announce_commands_after_response(
        &self,
        session_id: &SessionId,
        cx: &RequestContext<AgentSide>,
    ) {
        let conn = cx.peer().clone();
        let notification = SessionNotification::new(session_id.clone(), available_commands());
        cx.after_response(async move {
            // A failure means the client went away.
            let _ = conn.session_notification(notification).await;
        });
    }

    /// `/compact`: replaces the conversation with a summary written by the model.
    pub(super) async fn compact(
        &self,
        session_id: &SessionId,
        session: &Session,
        history: &mut Vec<Message>,
        cancel: &CancellationToken,
        extra: &str,
    ) -> StopReason {
        if history.is_empty() {
            self.notify(
                session_id,
                SessionUpdate::agent_message("There is nothing to compact yet."),
            )
            .await;
            return StopReason::EndTurn;
        }
        let also = if extra.is_empty() {
            String::new()
        } else {
            format!(" Also: {extra}")
        };
        let request = Message::user(format!(
            "Do not call any tools now. Summarise our conversation so far so that the work can \
             continue from the summary alone: the user's goals and requests, decisions made, files \
             read or changed and their current state, commands run and their results, and what \
             remains to do. Be complete but concise.{also}"
        ));
        let mut stream = match self
            .start_call(
                session_id,
                session,
                history,
                Some(request),
                cancel,
                "could not compact: ",
            )
            .await
        {
            Ok(s) => s,
            Err(stop) => return stop,
        };
        let mut summary = String::new();
        loop {
            let events = tokio::select! {
                e = stream.next_events() => e,
                _ = cancel.cancelled() => return StopReason::Cancelled,
            };
            match events {
                Ok(events) if events.is_empty() => break,
                Ok(events) => {
                    for ev in events {
                        if let ModelEvent::Text(t) = ev {
                            summary.push_str(&t);
                            self.notify(session_id, SessionUpdate::agent_message(t))
                                .await;
                        }
                    }
                }
                Err(e) => {
                    self.report_error(session_id, &format!("could not compact: {e}"))
                        .await;
                    return StopReason::EndTurn;
                }
            }
        }
        if summary.trim().is_empty() {
            self.report_error(
                session_id,
                "the model returned an empty summary; the conversation was kept",
            )
            .await;
            return StopReason::EndTurn;
        }
        *history = vec![
            Message::user(format!("Summary of our earlier conversation:\n\n{summary}")),
            Message::assistant("Understood. I will continue from this summary."),
        ];
        StopReason::EndTurn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_commands() {
        assert_eq!(
            SlashCommand::parse("/compact"),
            Some(SlashCommand::Compact(String::new()))
        );
        assert_eq!(
            SlashCommand::parse("  /init keep it short\n"),
            Some(SlashCommand::Init("keep it short".into()))
        );
        assert_eq!(SlashCommand::parse("/unknown"), None);
        assert_eq!(SlashCommand::parse("please /compact"), None);
    }
}
