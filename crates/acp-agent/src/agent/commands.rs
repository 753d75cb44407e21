//! Slash commands: offered to the client in `available_commands_update`, and
//! recognised at the start of a prompt. `/compact` replaces the conversation
//! with a summary written by the model (see `compaction`); `/init` has the
//! agent write `AGENTS.md`.
//!
//! A new session's commands must reach the client after the `session/new`
//! response (before it, the client does not know the session): they are sent
//! by work registered with [`acp::AgentSideConnection::after_response`], which
//! the runtime runs once that response is queued.

use super::CodingAgent;
use acp::RequestContext;
use acp::schema::*;

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
pub(super) fn available_commands() -> AvailableCommandsUpdate {
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
