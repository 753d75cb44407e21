//! Permission: what the session's mode allows, the user's remembered
//! "always" answers (each covering a scope, see `scope`), and
//! `session/request_permission` in `ask` mode.

use super::scope::{self, Scope};
use super::settings::Mode;
use super::{CodingAgent, Session, lock};
use crate::llm::ToolCallRequest;
use crate::output::PermissionAsk;
use crate::tools::{AskError, ToolEnv, ToolOutcome};
use acp::schema::*;
use std::path::PathBuf;

impl CodingAgent {
    /// Applies the mode and the user's remembered answers to a call that
    /// needs permission for `scopes` (none: it needs no permission), asking
    /// the user in `ask` mode. `Err` holds the outcome to report instead of
    /// running the tool. `title`, `diff` and `command` describe the call
    /// to the user (see [`PermissionAsk`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn permit(
        &self,
        env: &ToolEnv,
        session: &Session,
        call: &ToolCallRequest,
        call_id: &ToolCallId,
        title: String,
        diff: Option<ToolCallContent>,
        command: Option<(String, PathBuf)>,
        scopes: Vec<Scope>,
    ) -> Result<(), ToolOutcome> {
        if scopes.is_empty() {
            return Ok(());
        }
        let (mode, allowed, rejected) = {
            let s = lock(&session.settings);
            (
                s.mode,
                scope::all_covered(&s.always_allow, &scopes),
                scope::any_covered(&s.always_reject, &scopes),
            )
        };
        if mode == Mode::ReadOnly {
            return Err(ToolOutcome::fail(
                "the session is in read-only mode: edits and commands are not allowed. Ask the user to switch modes if needed.",
            ));
        }
        let covers = scope::describe(&scopes, &session.cwd);
        if rejected {
            return Err(ToolOutcome::fail(format!(
                "the user rejected {covers} for this session"
            )));
        }
        if mode == Mode::Auto || allowed {
            return Ok(());
        }
        let options = vec![
            PermissionOption::new("allow_once", "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new(
                "allow_always",
                format!("Always allow {covers}"),
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new("reject_once", "Reject", PermissionOptionKind::RejectOnce),
            PermissionOption::new(
                "reject_always",
                format!("Always reject {covers}"),
                PermissionOptionKind::RejectAlways,
            ),
        ];
        let ask = PermissionAsk {
            session_id: env.session_id.clone(),
            tool_call_id: call_id.clone(),
            title,
            covers: covers.clone(),
            diff,
            command,
            options,
        };
        let chosen = match env.ask(self.out.request_permission(ask)).await {
            Err(AskError::Cancelled) => return Err(ToolOutcome::cancelled("Cancelled.")),
            Ok(Some(id)) => id.as_str().to_string(),
            Ok(None) => {
                return Err(ToolOutcome::cancelled(
                    "The permission request was cancelled.",
                ));
            }
            Err(e) => {
                return Err(ToolOutcome::fail(format!(
                    "could not ask the user for permission: {e}"
                )));
            }
        };
        match chosen.as_str() {
            "allow_once" => Ok(()),
            "allow_always" => {
                lock(&session.settings).always_allow.extend(scopes);
                Ok(())
            }
            "reject_always" => {
                lock(&session.settings).always_reject.extend(scopes);
                Err(ToolOutcome::fail(format!(
                    "the user rejected this call of {} and, for this session, {covers}",
                    call.name
                )))
            }
            _ => Err(ToolOutcome::fail("the user rejected this tool call")),
        }
    }
}
