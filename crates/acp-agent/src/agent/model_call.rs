//! One model call: started, streamed to the client, and tried again after a
//! transient failure (see [`crate::llm::retry`]) with a thought saying so.
//! Cancellation stops it at once, also while it waits to retry.

use super::settings::Mode;
use super::{CodingAgent, Session, lock};
use crate::config::{ModelRef, SETUP_HELP};
use crate::llm::retry::{self, RetryPolicy, Verdict};
use crate::llm::{FinishReason, LlmError, Message, ModelEvent, Thinking, ToolCallRequest};
use crate::tools;
use acp::CancellationToken;
use acp::schema::*;
use serde_json::json;
use std::time::Duration;

/// How a call's output is shown to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Show {
    /// The model's answer: text as the agent's message, reasoning as
    /// thoughts, and token use as `usage_update`.
    Answer,
    /// A summary for compaction: text as the agent's message (`/compact`) or
    /// as a thought (automatic compaction); nothing else. Its token use is
    /// not the conversation's, so it is not reported as such.
    Summary {
        /// Whether the summary is shown as a thought.
        as_thought: bool,
    },
}

/// A complete answer of the model.
pub(super) struct Reply {
    pub(super) text: String,
    pub(super) tool_calls: Vec<ToolCallRequest>,
    pub(super) thinking: Vec<Thinking>,
    pub(super) finish: FinishReason,
    /// The tokens the call read and wrote, when the provider said.
    pub(super) usage: Option<(u64, u64)>,
}

/// Why a call gave no answer.
pub(super) enum CallFailure {
    /// The turn was cancelled; `partial` is the text streamed so far.
    Cancelled { partial: String },
    /// The call failed for good.
    Failed(ModelFailure),
}

/// A model call that failed for good.
#[derive(Debug, Clone)]
pub(super) struct ModelFailure {
    pub(super) error: LlmError,
    /// The model it was.
    pub(super) model: String,
    /// How many times it was tried again.
    pub(super) retries: u32,
    /// Why it was not tried (again), for a transient failure.
    pub(super) why: Option<String>,
    /// The text streamed before the last failure.
    pub(super) partial: String,
}

impl ModelFailure {
    /// What the user is told.
    pub(super) fn message(&self) -> String {
        match &self.why {
            Some(why) => format!("{} ({why})", self.error),
            None => self.error.to_string(),
        }
    }

    /// The JSON-RPC error that ends the prompt: -32603 with the provider's
    /// message, or `auth_required` when no provider is configured for the
    /// model.
    pub(super) fn to_rpc(&self) -> Error {
        let code = match self.error {
            LlmError::Unsupported(_) => ErrorCode::AUTH_REQUIRED,
            _ => ErrorCode::INTERNAL_ERROR,
        };
        let mut data = json!({"model": self.model, "retries": self.retries});
        if let LlmError::Http { status, .. } = &self.error {
            data["status"] = json!(status);
        }
        Error::new(code, self.message()).data(data)
    }
}

/// `d` for people: "1 s", "1.5 s".
fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if (s - s.round()).abs() < 0.05 {
        format!("{} s", s.round())
    } else {
        format!("{s:.1} s")
    }
}

impl CodingAgent {
    /// Calls the session's model on `messages` (the system prompt first),
    /// with the tools its mode allows, streaming the output as `show` says,
    /// and retrying transient failures.
    pub(super) async fn call_model(
        &self,
        session_id: &SessionId,
        session: &Session,
        messages: &[Message],
        cancel: &CancellationToken,
        show: Show,
    ) -> Result<Reply, CallFailure> {
        let (mode, model) = {
            let s = lock(&session.settings);
            (s.mode, s.model.clone())
        };
        let fail = |error, retries, why, partial| {
            CallFailure::Failed(ModelFailure {
                error,
                model: model.id(),
                retries,
                why,
                partial,
            })
        };
        let Some(provider) = self.config.provider(model.provider) else {
            let e = LlmError::Unsupported(format!(
                "the provider of {model} is not configured. {SETUP_HELP}"
            ));
            return Err(fail(e, 0, None, String::new()));
        };
        // Tools stay declared even when none should be called (compaction):
        // some APIs reject tool calls in the history otherwise.
        let mut specs = tools::specs(mode == Mode::ReadOnly);
        specs.extend(session.mcp.specs(mode == Mode::ReadOnly));
        let policy = RetryPolicy::new(self.config.max_retries);
        let mut retries = 0;
        loop {
            let mut partial = String::new();
            let attempt = self
                .attempt(
                    session_id,
                    session,
                    provider,
                    &model,
                    messages,
                    &specs,
                    cancel,
                    show,
                    &mut partial,
                )
                .await;
            let error = match attempt {
                Ok(reply) => {
                    if let Some(usage) = reply.usage {
                        session.add_turn_usage(usage);
                    }
                    return Ok(reply);
                }
                Err(None) => return Err(CallFailure::Cancelled { partial }),
                Err(Some(e)) => e,
            };
            let Verdict::Retry { after } = retry::verdict(&error) else {
                return Err(fail(error, retries, None, partial));
            };
            let delay = match policy.delay(retries + 1, after) {
                Ok(d) => d,
                Err(why) => return Err(fail(error, retries, Some(why.to_string()), partial)),
            };
            retries += 1;
            let notice = format!(
                "{error}. Trying again in {} (retry {retries} of {})…\n",
                seconds(delay),
                policy.max_retries
            );
            self.send(session_id, SessionUpdate::agent_thought(notice))
                .await;
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = cancel.cancelled() => return Err(CallFailure::Cancelled { partial: String::new() }),
            }
        }
    }

    /// One try: `Err(None)` when cancelled, `Err(Some(e))` when it failed;
    /// the text streamed so far is left in `text`.
    #[allow(clippy::too_many_arguments)]
    async fn attempt(
        &self,
        session_id: &SessionId,
        session: &Session,
        provider: &crate::config::ProviderConfig,
        model: &ModelRef,
        messages: &[Message],
        specs: &[crate::llm::ToolSpec],
        cancel: &CancellationToken,
        show: Show,
        text: &mut String,
    ) -> Result<Reply, Option<LlmError>> {
        let started = tokio::select! {
            s = self.llm.stream(provider, model, messages, specs) => s,
            _ = cancel.cancelled() => return Err(None),
        };
        let mut stream = started.map_err(Some)?;
        let mut usage = None;
        loop {
            let events = tokio::select! {
                e = stream.next_events() => e,
                _ = cancel.cancelled() => return Err(None),
            };
            let events = events.map_err(Some)?;
            if events.is_empty() {
                return Err(Some(LlmError::Malformed(
                    "the stream ended without a complete response".into(),
                )));
            }
            for ev in events {
                match ev {
                    ModelEvent::Text(t) => {
                        text.push_str(&t);
                        let update = match show {
                            Show::Summary { as_thought: true } => SessionUpdate::agent_thought(t),
                            _ => SessionUpdate::agent_message(t),
                        };
                        self.notify(session_id, update).await;
                    }
                    ModelEvent::Thought(t) => {
                        if show == Show::Answer {
                            self.notify(session_id, SessionUpdate::agent_thought(t))
                                .await;
                        }
                    }
                    ModelEvent::Usage {
                        input,
                        output,
                        cost,
                    } => {
                        usage = Some((input, output));
                        let total = session.add_cost(cost);
                        if show == Show::Answer {
                            let mut update =
                                UsageUpdate::new(input + output, self.config.context_window);
                            if let Some(total) = total {
                                update = update.cost(Cost::new(total, "USD"));
                            }
                            *lock(&session.usage) = Some(update.clone());
                            self.notify(session_id, update).await;
                        }
                    }
                    ModelEvent::Done {
                        tool_calls,
                        thinking,
                        finish,
                    } => {
                        return Ok(Reply {
                            text: std::mem::take(text),
                            tool_calls,
                            thinking,
                            finish,
                            usage,
                        });
                    }
                }
            }
        }
    }
}
