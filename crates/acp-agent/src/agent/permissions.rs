//! Permission: what the session's mode allows, the user's remembered
//! "always" answers, and `session/request_permission` in `ask` mode.

use super::settings::Mode;
use super::{CodingAgent, Session, lock};
use crate::llm::ToolCallRequest;
use crate::tools::{ToolEnv, ToolOutcome};
use acp::schema::*;

impl CodingAgent {
    /// Applies the mode and the user's remembered answers to a call that needs
    /// permission (`needs`), asking the user in `ask` mode. `Err` holds the
    /// outcome to report instead of running the tool.
    pub(super) async fn permit(
        &self,
        env: &ToolEnv,
        session: &Session,
        call: &ToolCallRequest,
        call_id: &ToolCallId,
        diff: Option<ToolCallContent>,
        needs: bool,
    ) -> Result<(), ToolOutcome> {
        if !needs {
            return Ok(());
        }
        let (mode, allowed, rejected) = {
            let s = lock(&session.settings);
            (
                s.mode,
                s.always_allow.contains(&call.name),
                s.always_reject.contains(&call.name),
            )
        };
        if mode == Mode::ReadOnly {
            return Err(ToolOutcome::fail(
                "the session is in read-only mode: edits and commands are not allowed. Ask the user to switch modes if needed.",
            ));
        }
        if rejected {
            return Err(ToolOutcome::fail(format!(
                "the user rejected {} for this session",
                call.name
            )));
        }
        if mode == Mode::Ask && !allowed {
            let mut tool_call = ToolCallUpdate::new(call_id.clone());
            if let Some(d) = diff {
                tool_call = tool_call.content(vec![d]);
            }
            let options = vec![
                PermissionOption::new("allow_once", "Allow", PermissionOptionKind::AllowOnce),
                PermissionOption::new(
                    "allow_always",
                    "Always allow",
                    PermissionOptionKind::AllowAlways,
                ),
                PermissionOption::new("reject_once", "Reject", PermissionOptionKind::RejectOnce),
                PermissionOption::new(
                    "reject_always",
                    "Always reject",
                    PermissionOptionKind::RejectAlways,
                ),
            ];
            let req = RequestPermissionRequest::new(env.session_id.clone(), tool_call, options);
            let answer = tokio::select! {
                a = self.conn.request_permission(req) => a,
                _ = env.cancel.cancelled() => return Err(ToolOutcome::cancelled("Cancelled.")),
            };
            let chosen = match answer {
                Ok(r) => match r.outcome.selected_option() {
                    Some(id) => id.as_str().to_string(),
                    None => {
                        return Err(ToolOutcome::cancelled(
                            "The permission request was cancelled.",
                        ));
                    }
                },
                Err(e) => {
                    return Err(ToolOutcome::fail(format!(
                        "could not ask the user for permission: {e}"
                    )));
                }
            };
            match chosen.as_str() {
                "allow_once" => {}
                "allow_always" => {
                    lock(&session.settings)
                        .always_allow
                        .insert(call.name.clone());
                }
                "reject_always" => {
                    lock(&session.settings)
                        .always_reject
                        .insert(call.name.clone());
                    return Err(ToolOutcome::fail(format!(
                        "the user rejected this and all further {} calls",
                        call.name
                    )));
                }
                _ => return Err(ToolOutcome::fail("the user rejected this tool call")),
            }
        }
        Ok(())
    }
}
