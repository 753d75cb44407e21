//! Model providers: a provider-neutral conversation, and streaming clients for
//! OpenAI-compatible Chat Completions (`openai`) and the Anthropic Messages
//! API (`anthropic`), both read as server-sent events (`sse`).
//!
//! A [`ModelStream`] turns the HTTP response into [`ModelEvent`]s through the
//! provider's `Decoder`.

mod anthropic;
mod openai;
pub mod retry;
mod sse;

pub use anthropic::anthropic_body;
pub use openai::openai_body;

use crate::config::{ModelRef, ProviderConfig, ProviderKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sse::SseBuffer;
use std::fmt;
use std::time::Duration;

/// One message of a conversation, independent of the provider's wire format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// Instructions for the model.
    System {
        /// The instructions.
        text: String,
    },
    /// What the user said.
    User {
        /// The text of the message.
        text: String,
        /// Images attached to it.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
    /// What the model answered, with the tools it called.
    Assistant {
        /// The visible text.
        text: String,
        /// Tool calls the model made, in order.
        tool_calls: Vec<ToolCallRequest>,
        /// The reasoning the provider asks to be sent back with the message
        /// (Anthropic extended thinking), in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        thinking: Vec<Thinking>,
    },
    /// The result of one tool call.
    Tool {
        /// The id of the call this answers.
        call_id: String,
        /// The result, as text for the model.
        content: String,
    },
}

/// A block of the model's reasoning, kept to be sent back unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Thinking {
    /// Reasoning shown to the user, with the provider's signature of it.
    Shown {
        /// The reasoning text.
        text: String,
        /// The signature that vouches for it.
        signature: String,
    },
    /// Reasoning the provider withheld, encrypted.
    Redacted {
        /// The encrypted reasoning.
        data: String,
    },
}

/// An image given to the model, base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Image {
    /// Its MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// Its bytes, base64-encoded.
    pub data: String,
}

impl Message {
    /// An assistant message of plain text.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::Assistant {
            text: text.into(),
            tool_calls: Vec::new(),
            thinking: Vec::new(),
        }
    }

    /// A user message of plain text.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User {
            text: text.into(),
            images: Vec::new(),
        }
    }
}

/// What a tool call that never got its result is answered with.
pub const UNANSWERED_TOOL_CALL: &str =
    "No result: the agent stopped before this tool call finished (it was interrupted).";

/// Gives every tool call of an assistant message a result, right after the
/// results it has: providers refuse a conversation with an unanswered call,
/// and a crash (or a failed turn) can leave one behind.
pub fn answer_every_tool_call(messages: &mut Vec<Message>) {
    let mut i = 0;
    while i < messages.len() {
        let ids: Vec<String> = match &messages[i] {
            Message::Assistant { tool_calls, .. } => {
                tool_calls.iter().map(|c| c.id.clone()).collect()
            }
            _ => Vec::new(),
        };
        i += 1;
        if ids.is_empty() {
            continue;
        }
        let mut answered = Vec::new();
        while let Some(Message::Tool { call_id, .. }) = messages.get(i) {
            answered.push(call_id.clone());
            i += 1;
        }
        let missing: Vec<Message> = ids
            .into_iter()
            .filter(|id| !answered.contains(id))
            .map(|call_id| Message::Tool {
                call_id,
                content: UNANSWERED_TOOL_CALL.into(),
            })
            .collect();
        let n = missing.len();
        messages.splice(i..i, missing);
        i += n;
    }
}

/// A tool call as the model asked for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRequest {
    /// The provider's id of the call.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the raw JSON text the model produced (may be invalid).
    pub arguments: String,
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its arguments.
    pub parameters: Value,
}

/// Why the model stopped producing output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// A natural end.
    Stop,
    /// The output token limit was hit.
    Length,
    /// The model wants tool results.
    ToolCalls,
    /// The provider's content filter stopped it.
    ContentFilter,
    /// Any other reason, as the provider named it.
    Other(String),
}

impl FinishReason {
    pub(crate) fn parse(s: &str) -> Self {
        match s {
            "stop" | "end_turn" | "stop_sequence" => FinishReason::Stop,
            "length" | "max_tokens" => FinishReason::Length,
            "tool_calls" | "function_call" | "tool_use" => FinishReason::ToolCalls,
            "content_filter" | "refusal" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_string()),
        }
    }
}

/// Something the model produced while streaming.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// Visible text.
    Text(String),
    /// Reasoning text.
    Thought(String),
    /// Token use of this call.
    Usage {
        /// Tokens read (prompt).
        input: u64,
        /// Tokens written (completion).
        output: u64,
        /// What the call cost, when the provider says (OpenRouter's
        /// `usage.cost`, in US dollars).
        cost: Option<f64>,
    },
    /// The response is complete.
    Done {
        /// The tool calls, assembled from their streamed pieces.
        tool_calls: Vec<ToolCallRequest>,
        /// The reasoning blocks to send back with the answer.
        thinking: Vec<Thinking>,
        /// Why it ended.
        finish: FinishReason,
    },
}

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq)]
pub enum LlmError {
    /// The server could not be reached at all: the connection was refused
    /// (a local server that is not running), the host is unknown, TLS failed.
    Connect(String),
    /// The connection broke after it was made (reset, closed early).
    Network(String),
    /// The server answered with an HTTP error.
    Http {
        /// The status code.
        status: u16,
        /// The error message, taken from the body.
        message: String,
        /// How long the server asks to wait before trying again
        /// (`retry-after`, `retry-after-ms`).
        retry_after: Option<Duration>,
    },
    /// The server reported an error inside a stream it had begun.
    Stream {
        /// The provider's error type (`overloaded_error`, `server_error`…).
        kind: Option<String>,
        /// Its message.
        message: String,
    },
    /// The response was not a stream this client understands.
    Malformed(String),
    /// No data arrived for too long.
    Timeout,
    /// The provider is not configured or not supported.
    Unsupported(String),
}

impl fmt::Display for LlmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LlmError::Connect(e) => write!(f, "could not connect to the model server: {e}"),
            LlmError::Network(e) => write!(f, "the connection to the model server broke: {e}"),
            LlmError::Http {
                status, message, ..
            } => {
                write!(f, "the model server answered HTTP {status}: {message}")
            }
            LlmError::Stream { message, .. } => {
                write!(f, "the model server reported an error: {message}")
            }
            LlmError::Malformed(e) => write!(f, "the model server sent a malformed response: {e}"),
            LlmError::Timeout => f.write_str("the model server stopped responding (timeout)"),
            LlmError::Unsupported(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for LlmError {}

/// Sends conversations to model providers.
#[derive(Clone)]
pub struct LlmClient {
    http: reqwest::Client,
    timeout: Duration,
    max_output_tokens: u64,
    thinking_budget: Option<u64>,
}

impl LlmClient {
    /// A client whose requests give up after `timeout` without data, asking
    /// for at most `max_output_tokens` per call where the API needs a limit
    /// (Anthropic).
    pub fn new(timeout: Duration, max_output_tokens: u64) -> Self {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .build()
            .unwrap_or_default();
        LlmClient {
            http,
            timeout,
            max_output_tokens,
            thinking_budget: None,
        }
    }

    /// Asks Anthropic models to think first, with up to `budget` tokens
    /// (extended thinking); `None` leaves it off.
    pub fn thinking_budget(mut self, budget: Option<u64>) -> Self {
        self.thinking_budget = budget;
        self
    }

    async fn start(
        &self,
        req: reqwest::RequestBuilder,
        decoder: Box<dyn Decoder>,
    ) -> Result<ModelStream, LlmError> {
        let response = tokio::time::timeout(self.timeout, req.send())
            .await
            .map_err(|_| LlmError::Timeout)?
            .map_err(|e| {
                if e.is_connect() {
                    LlmError::Connect(error_chain(&e))
                } else {
                    LlmError::Network(error_chain(&e))
                }
            })?;
        let status = response.status();
        if !status.is_success() {
            let header = |name: &str| {
                response
                    .headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            let retry_after = retry::parse_retry_after(
                header("retry-after-ms").as_deref(),
                header("retry-after").as_deref(),
                std::time::SystemTime::now(),
            );
            let body = tokio::time::timeout(Duration::from_secs(10), response.text())
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            return Err(LlmError::Http {
                status: status.as_u16(),
                message: error_message(&body),
                retry_after,
            });
        }
        Ok(ModelStream {
            response,
            timeout: self.timeout,
            sse: SseBuffer::default(),
            decoder,
            finished: false,
        })
    }

    /// Starts one streaming model call.
    pub async fn stream(
        &self,
        provider: &ProviderConfig,
        model: &ModelRef,
        messages: &[Message],
        tools: &[ToolSpec],
    ) -> Result<ModelStream, LlmError> {
        let (req, decoder): (_, Box<dyn Decoder>) = match model.provider {
            ProviderKind::OpenAi => (
                openai::request(&self.http, provider, &model.model, messages, tools),
                Box::<openai::OpenAiDecoder>::default(),
            ),
            ProviderKind::Anthropic => (
                anthropic::request(
                    &self.http,
                    provider,
                    &model.model,
                    messages,
                    tools,
                    self.max_output_tokens,
                    self.thinking_budget,
                ),
                Box::<anthropic::AnthropicDecoder>::default(),
            ),
        };
        self.start(req, decoder).await
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        source = inner.source();
    }
    s
}

/// The message of a provider's JSON error body, or the body itself, shortened.
fn error_message(body: &str) -> String {
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        let msg = v
            .pointer("/error/message")
            .or_else(|| v.get("message"))
            .or_else(|| v.get("error"))
            .and_then(Value::as_str);
        if let Some(m) = msg {
            return m.to_string();
        }
    }
    let trimmed = body.trim();
    if trimmed.is_empty() {
        "(empty body)".into()
    } else {
        truncate(trimmed, 500)
    }
}

/// `s` cut to at most `max` bytes at a character boundary, marked with `…`.
pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// A tool call being assembled from streamed pieces.
#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

impl PartialCall {
    /// The finished call, with `default_id` if the provider sent no id.
    fn into_request(self, default_id: String) -> ToolCallRequest {
        ToolCallRequest {
            id: if self.id.is_empty() {
                default_id
            } else {
                self.id
            },
            name: self.name,
            arguments: self.arguments,
        }
    }
}

/// How far a response got: the finish reason it gave, and whether its end
/// marker arrived.
#[derive(Default)]
struct Ending {
    finish: Option<FinishReason>,
    done: bool,
}

/// Turns one provider's server-sent events into [`ModelEvent`]s.
trait Decoder: Send {
    /// Digests one event's `data` payload, adding what it produced to `out`.
    fn handle(&mut self, data: &str, out: &mut Vec<ModelEvent>) -> Result<(), LlmError>;
    /// How far the response got.
    fn ending(&mut self) -> &mut Ending;
    /// The closing [`ModelEvent::Done`], with the assembled tool calls.
    fn done_event(&mut self) -> ModelEvent;
}

/// A model response being streamed. Dropping it closes the connection.
pub struct ModelStream {
    response: reqwest::Response,
    timeout: Duration,
    sse: SseBuffer,
    decoder: Box<dyn Decoder>,
    finished: bool,
}

impl ModelStream {
    /// Reads until at least one event is available; the last batch ends with
    /// [`ModelEvent::Done`]. After that, returns an empty batch.
    pub async fn next_events(&mut self) -> Result<Vec<ModelEvent>, LlmError> {
        let mut out = Vec::new();
        while out.is_empty() {
            if self.finished {
                return Ok(out);
            }
            if self.decoder.ending().done {
                self.finished = true;
                out.push(self.decoder.done_event());
                return Ok(out);
            }
            let chunk = tokio::time::timeout(self.timeout, self.response.chunk())
                .await
                .map_err(|_| LlmError::Timeout)?
                .map_err(|e| LlmError::Network(error_chain(&e)))?;
            match chunk {
                Some(bytes) => {
                    for data in self.sse.push(&bytes) {
                        self.decoder.handle(&data, &mut out)?;
                    }
                }
                None => {
                    if let Some(data) = self.sse.finish() {
                        self.decoder.handle(&data, &mut out)?;
                    }
                    let ending = self.decoder.ending();
                    if !ending.done && ending.finish.is_none() {
                        return Err(LlmError::Malformed(
                            "the stream ended before the response was complete".into(),
                        ));
                    }
                    ending.done = true;
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_body_message() {
        assert_eq!(
            error_message(r#"{"error":{"message":"bad key"}}"#),
            "bad key"
        );
        assert_eq!(error_message("oops"), "oops");
        assert_eq!(error_message(""), "(empty body)");
    }

    #[test]
    fn unanswered_tool_calls_get_a_result() {
        let call = |id: &str| ToolCallRequest {
            id: id.into(),
            name: "t".into(),
            arguments: "{}".into(),
        };
        let asked = |ids: &[&str]| Message::Assistant {
            text: String::new(),
            tool_calls: ids.iter().map(|i| call(i)).collect(),
            thinking: vec![],
        };
        let result = |id: &str, c: &str| Message::Tool {
            call_id: id.into(),
            content: c.into(),
        };
        let mut m = vec![
            Message::user("go"),
            asked(&["a", "b"]),
            result("a", "ok"),
            Message::user("next"),
            asked(&["c"]),
        ];
        answer_every_tool_call(&mut m);
        assert_eq!(
            m,
            [
                Message::user("go"),
                asked(&["a", "b"]),
                result("a", "ok"),
                result("b", UNANSWERED_TOOL_CALL),
                Message::user("next"),
                asked(&["c"]),
                result("c", UNANSWERED_TOOL_CALL),
            ]
        );
        let before = m.clone();
        answer_every_tool_call(&mut m);
        assert_eq!(m, before, "a complete conversation is left as it is");
    }

    #[test]
    fn body_shape() {
        let body = openai_body(
            "m",
            &[
                Message::user("hi"),
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![ToolCallRequest {
                        id: "1".into(),
                        name: "t".into(),
                        arguments: "{}".into(),
                    }],
                    thinking: vec![],
                },
                Message::Tool {
                    call_id: "1".into(),
                    content: "ok".into(),
                },
            ],
            &[],
        );
        assert_eq!(body["messages"][1]["content"], Value::Null);
        assert_eq!(
            body["messages"][1]["tool_calls"][0]["function"]["name"],
            "t"
        );
        assert_eq!(body["messages"][2]["tool_call_id"], "1");
        assert_eq!(body["stream_options"]["include_usage"], true);
        let with_image = Message::User {
            text: "see".into(),
            images: vec![Image {
                mime_type: "image/png".into(),
                data: "AAAA".into(),
            }],
        };
        let body = openai_body("m", std::slice::from_ref(&with_image), &[]);
        assert_eq!(
            body["messages"][0]["content"][1]["image_url"]["url"],
            "data:image/png;base64,AAAA"
        );
        let body = anthropic_body("m", &[with_image], &[], 10, None);
        assert_eq!(
            body["messages"][0]["content"][0]["source"]["media_type"],
            "image/png"
        );
        assert_eq!(body["messages"][0]["content"][1]["text"], "see");
    }
}
