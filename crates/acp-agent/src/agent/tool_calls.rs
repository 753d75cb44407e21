//! One tool call, from the model's request to the result it is given: the
//! `tool_call` shown to the client, the permission check, the run, and the
//! final `tool_call_update`. MCP tools and built-in tools take the same path.

use super::scope::{self, Scope};
use super::{CodingAgent, Session};
use crate::llm::{ToolCallRequest, truncate};
use crate::mcp::McpToolInfo;
use crate::tools::{self, ToolEnv, ToolInput, ToolOutcome};
use acp::schema::*;
use serde_json::{Value, json};

/// The update that marks a call as running.
fn in_progress(call_id: &ToolCallId) -> ToolCallUpdate {
    ToolCallUpdate::new(call_id.clone()).status(ToolCallStatus::InProgress)
}

/// The update that ends a call: its status and what the client shows.
fn final_update(call_id: ToolCallId, outcome: &ToolOutcome) -> ToolCallUpdate {
    let status = if outcome.ok {
        ToolCallStatus::Completed
    } else {
        ToolCallStatus::Failed
    };
    let update = ToolCallUpdate::new(call_id).status(status);
    if outcome.content.is_empty() {
        update
    } else {
        update.content(outcome.content.clone())
    }
}

impl CodingAgent {
    /// Runs one tool call with its reporting and permission handling.
    pub(super) async fn handle_tool_call(
        &self,
        env: &ToolEnv,
        session: &Session,
        call: &ToolCallRequest,
    ) -> ToolOutcome {
        let call_id = ToolCallId::new(format!("{}-{}", call.id, self.next_number()));
        let raw_input = serde_json::from_str::<Value>(&call.arguments)
            .unwrap_or_else(|_| Value::String(call.arguments.clone()));
        if let Some(info) = session.mcp.find(&call.name) {
            return self
                .handle_mcp_call(env, session, call, call_id, raw_input, info)
                .await;
        }
        let input = match ToolInput::parse(&call.name, &call.arguments, &env.cwd) {
            Ok(i) => i,
            Err(e) => {
                let outcome = ToolOutcome::fail(e);
                let tc = ToolCall::new(call_id, format!("{} (invalid call)", call.name))
                    .status(ToolCallStatus::Failed)
                    .raw_input(raw_input)
                    .content(outcome.content.clone());
                self.notify(&env.session_id, tc).await;
                return outcome;
            }
        };
        if let ToolInput::UpdatePlan { entries } = &input {
            self.notify(&env.session_id, Plan::new(entries.clone()))
                .await;
            return ToolOutcome {
                ok: true,
                for_model: "Plan updated.".into(),
                content: vec![],
                cancelled: false,
            };
        }
        let tc = ToolCall::new(call_id.clone(), input.title(&env.cwd))
            .kind(input.kind())
            .status(ToolCallStatus::Pending)
            .locations(input.locations())
            .raw_input(raw_input)
            .name(call.name.clone());
        self.notify(&env.session_id, tc).await;

        let outcome = self
            .authorize_and_run(env, session, call, &call_id, &input)
            .await;
        let mut update = final_update(call_id, &outcome);
        if !outcome.cancelled {
            update = update.raw_output(json!({"output": truncate(&outcome.for_model, 16000)}));
        }
        self.notify(&env.session_id, update).await;
        outcome
    }

    /// Runs a call to an MCP server's tool: asks permission (in `ask` mode)
    /// unless the server marks the tool read-only.
    async fn handle_mcp_call(
        &self,
        env: &ToolEnv,
        session: &Session,
        call: &ToolCallRequest,
        call_id: ToolCallId,
        raw_input: Value,
        info: McpToolInfo,
    ) -> ToolOutcome {
        let title = format!("{}: {}", info.server, info.tool);
        let tc = ToolCall::new(call_id.clone(), title.clone())
            .kind(if info.read_only {
                ToolKind::Read
            } else {
                ToolKind::OtherKind
            })
            .status(ToolCallStatus::Pending)
            .raw_input(raw_input.clone())
            .name(call.name.clone());
        self.notify(&env.session_id, tc).await;
        let outcome = if !raw_input.is_object() && !call.arguments.trim().is_empty() {
            ToolOutcome::fail(format!(
                "the arguments are not a JSON object: {}",
                truncate(&call.arguments, 300)
            ))
        } else {
            let scopes = if info.read_only {
                Vec::new()
            } else {
                vec![Scope::Tool(call.name.clone())]
            };
            match self
                .permit(env, session, call, &call_id, title, None, None, scopes)
                .await
            {
                Err(refusal) => refusal,
                Ok(()) => {
                    self.notify(&env.session_id, in_progress(&call_id)).await;
                    let run = session.mcp.call(&info, raw_input);
                    tokio::select! {
                        r = run => match r {
                            Ok(text) => ToolOutcome {
                                ok: true,
                                content: vec![ToolCallContent::from(truncate(&text, 8000))],
                                for_model: text,
                                cancelled: false,
                            },
                            Err(e) => ToolOutcome::fail(e),
                        },
                        _ = env.cancel.cancelled() => ToolOutcome::cancelled("Cancelled."),
                    }
                }
            }
        };
        self.notify(&env.session_id, final_update(call_id, &outcome))
            .await;
        outcome
    }

    /// Runs a built-in tool: a change to files is computed first, so that
    /// the user is shown the diff when asked for permission.
    async fn authorize_and_run(
        &self,
        env: &ToolEnv,
        session: &Session,
        call: &ToolCallRequest,
        call_id: &ToolCallId,
        input: &ToolInput,
    ) -> ToolOutcome {
        if !input.is_mutating() {
            self.notify(&env.session_id, in_progress(call_id)).await;
            return tools::run(env, input, call_id).await;
        }
        // File changes are computed first, so the user sees the diff.
        let change = match input {
            ToolInput::WriteFile { .. } | ToolInput::EditFile { .. } => {
                match tools::plan_change(env, input).await {
                    Ok(c) => Some(c),
                    Err(e) => return ToolOutcome::fail(e),
                }
            }
            _ => None,
        };
        let command = match input {
            ToolInput::RunCommand { command, .. } => Some((command.clone(), env.cwd.clone())),
            _ => None,
        };
        if let Err(refusal) = self
            .permit(
                env,
                session,
                call,
                call_id,
                input.title(&env.cwd),
                change.as_ref().map(|c| c.diff()),
                command,
                scope::for_input(input),
            )
            .await
        {
            return refusal;
        }
        self.notify(&env.session_id, in_progress(call_id)).await;
        match change {
            Some(c) => tools::apply_change(env, &c).await,
            None => tools::run(env, input, call_id).await,
        }
    }
}
