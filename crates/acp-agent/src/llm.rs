//! Model providers: a provider-neutral conversation, and streaming clients for
//! OpenAI-compatible Chat Completions and the Anthropic Messages API.

use crate::config::{ModelRef, ProviderConfig, ProviderKind};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
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
    },
    /// The result of one tool call.
    Tool {
        /// The id of the call this answers.
        call_id: String,
        /// The result, as text for the model.
        content: String,
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
    /// A user message of plain text.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User {
            text: text.into(),
            images: Vec::new(),
        }
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
    fn parse(s: &str) -> Self {
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
    },
    /// The response is complete.
    Done {
        /// The tool calls, assembled from their streamed pieces.
        tool_calls: Vec<ToolCallRequest>,
        /// Why it ended.
        finish: FinishReason,
    },
}

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq)]
pub enum LlmError {
    /// The server could not be reached or the connection broke.
    Network(String),
    /// The server answered with an HTTP error.
    Http {
        /// The status code.
        status: u16,
        /// The error message, taken from the body.
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
            LlmError::Network(e) => write!(f, "could not reach the model server: {e}"),
            LlmError::Http { status, message } => {
                write!(f, "the model server answered HTTP {status}: {message}")
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
        }
    }

    async fn start(
        &self,
        req: reqwest::RequestBuilder,
        state: StreamState,
    ) -> Result<ModelStream, LlmError> {
        let response = tokio::time::timeout(self.timeout, req.send())
            .await
            .map_err(|_| LlmError::Timeout)?
            .map_err(|e| LlmError::Network(error_chain(&e)))?;
        let status = response.status();
        if !status.is_success() {
            let body = tokio::time::timeout(Duration::from_secs(10), response.text())
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            return Err(LlmError::Http {
                status: status.as_u16(),
                message: error_message(&body),
            });
        }
        Ok(ModelStream {
            response,
            timeout: self.timeout,
            sse: SseBuffer::default(),
            state,
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
        match model.provider {
            ProviderKind::OpenAi => {
                let url = format!(
                    "{}/chat/completions",
                    provider.base_url.trim_end_matches('/')
                );
                let body = openai_body(&model.model, messages, tools);
                let mut req = self.http.post(url).json(&body);
                if let Some(key) = &provider.api_key {
                    req = req.bearer_auth(key);
                }
                self.start(req, StreamState::OpenAi(OpenAiState::default()))
                    .await
            }
            ProviderKind::Anthropic => {
                let url = format!("{}/v1/messages", provider.base_url.trim_end_matches('/'));
                let body = anthropic_body(&model.model, messages, tools, self.max_output_tokens);
                let mut req = self
                    .http
                    .post(url)
                    .header("anthropic-version", "2023-06-01")
                    .json(&body);
                if let Some(key) = &provider.api_key {
                    req = req.header("x-api-key", key);
                }
                self.start(req, StreamState::Anthropic(AnthropicState::default()))
                    .await
            }
        }
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

/// The Chat Completions request body.
pub fn openai_body(model: &str, messages: &[Message], tools: &[ToolSpec]) -> Value {
    let messages: Vec<Value> = messages
        .iter()
        .map(|m| match m {
            Message::System { text } => json!({"role": "system", "content": text}),
            Message::User { text, images } if images.is_empty() => {
                json!({"role": "user", "content": text})
            }
            Message::User { text, images } => {
                let mut parts = vec![json!({"type": "text", "text": text})];
                parts.extend(images.iter().map(|i| {
                    json!({"type": "image_url", "image_url": {"url": format!("data:{};base64,{}", i.mime_type, i.data)}})
                }));
                json!({"role": "user", "content": parts})
            }
            Message::Assistant { text, tool_calls } => {
                let mut v = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
                if !tool_calls.is_empty() {
                    v["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| {
                            json!({"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": c.arguments}})
                        })
                        .collect();
                }
                v
            }
            Message::Tool { call_id, content } => {
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
        })
        .collect();
    let mut body = json!({
        "model": model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
    }
    body
}

/// Splits a byte stream into server-sent events' `data` payloads.
#[derive(Default)]
struct SseBuffer {
    pending: Vec<u8>,
    data: Vec<String>,
}

impl SseBuffer {
    /// Feeds bytes; returns the data of each event completed by them.
    fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(pos) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=pos).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() {
                    events.push(self.data.join("\n"));
                    self.data.clear();
                }
            } else if let Some(rest) = line.strip_prefix("data:") {
                self.data
                    .push(rest.strip_prefix(' ').unwrap_or(rest).to_string());
            }
            // `event:`, `id:`, `retry:` and comments carry nothing we need.
        }
        events
    }

    /// The last event, if the stream ended without a blank line after it.
    fn finish(&mut self) -> Option<String> {
        let rest = String::from_utf8_lossy(&std::mem::take(&mut self.pending)).to_string();
        if let Some(d) = rest.trim_end().strip_prefix("data:") {
            self.data.push(d.trim_start().to_string());
        }
        (!self.data.is_empty()).then(|| std::mem::take(&mut self.data).join("\n"))
    }
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

#[derive(Default)]
struct OpenAiState {
    calls: Vec<PartialCall>,
    finish: Option<FinishReason>,
    done: bool,
}

impl OpenAiState {
    /// Digests one SSE data payload into events.
    fn handle(&mut self, data: &str, out: &mut Vec<ModelEvent>) -> Result<(), LlmError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let v: Value = serde_json::from_str(data)
            .map_err(|e| LlmError::Malformed(format!("{e} in {}", truncate(data, 200))))?;
        if let Some(err) = v.get("error") {
            let message = err
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| err.to_string());
            return Err(LlmError::Http {
                status: 200,
                message,
            });
        }
        if let Some(usage) = v.get("usage").filter(|u| u.is_object()) {
            let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
            out.push(ModelEvent::Usage {
                input: n("prompt_tokens"),
                output: n("completion_tokens"),
            });
        }
        let Some(choices) = v.get("choices").and_then(Value::as_array) else {
            if v.get("usage").is_some() {
                return Ok(());
            }
            return Err(LlmError::Malformed(format!(
                "chunk without choices: {}",
                truncate(data, 200)
            )));
        };
        for choice in choices {
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.get("delta") {
                for key in ["reasoning_content", "reasoning"] {
                    if let Some(t) = delta.get(key).and_then(Value::as_str)
                        && !t.is_empty()
                    {
                        out.push(ModelEvent::Thought(t.to_string()));
                    }
                }
                if let Some(t) = delta.get("content").and_then(Value::as_str)
                    && !t.is_empty()
                {
                    out.push(ModelEvent::Text(t.to_string()));
                }
                if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                    for call in calls {
                        let id = call.get("id").and_then(Value::as_str).unwrap_or("");
                        // Without an index, a new id starts a new call and
                        // anything else continues the last one.
                        let index = match call.get("index").and_then(Value::as_u64) {
                            Some(i) => i as usize,
                            None => match self.calls.last() {
                                Some(last) if id.is_empty() || last.id == id => self.calls.len() - 1,
                                _ => self.calls.len(),
                            },
                        };
                        if index > 128 {
                            return Err(LlmError::Malformed(format!(
                                "tool call index {index} out of range"
                            )));
                        }
                        while self.calls.len() <= index {
                            self.calls.push(PartialCall::default());
                        }
                        let slot = &mut self.calls[index];
                        if !id.is_empty() && slot.id != id {
                            slot.id.push_str(id);
                        }
                        if let Some(f) = call.get("function") {
                            if let Some(name) = f.get("name").and_then(Value::as_str) {
                                slot.name.push_str(name);
                            }
                            if let Some(args) = f.get("arguments").and_then(Value::as_str) {
                                slot.arguments.push_str(args);
                            }
                        }
                    }
                }
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish = Some(FinishReason::parse(reason));
            }
        }
        Ok(())
    }

    fn done_event(&mut self) -> ModelEvent {
        let tool_calls: Vec<ToolCallRequest> = std::mem::take(&mut self.calls)
            .into_iter()
            .enumerate()
            .filter(|(_, c)| !c.name.is_empty())
            .map(|(i, c)| ToolCallRequest {
                id: if c.id.is_empty() {
                    format!("call_{i}")
                } else {
                    c.id
                },
                name: c.name,
                arguments: c.arguments,
            })
            .collect();
        let finish = self.finish.take().unwrap_or(if tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        });
        ModelEvent::Done { tool_calls, finish }
    }
}

/// The request body of the Anthropic Messages API.
pub fn anthropic_body(
    model: &str,
    messages: &[Message],
    tools: &[ToolSpec],
    max_tokens: u64,
) -> Value {
    let mut system = Vec::new();
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in messages {
        let (role, blocks) = match m {
            Message::System { text } => {
                system.push(text.clone());
                continue;
            }
            Message::User { text, images } => {
                let mut blocks: Vec<Value> = images
                    .iter()
                    .map(|i| json!({"type": "image", "source": {"type": "base64", "media_type": i.mime_type, "data": i.data}}))
                    .collect();
                blocks.push(json!({"type": "text", "text": text}));
                ("user", blocks)
            }
            Message::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in tool_calls {
                    let input = serde_json::from_str::<Value>(&c.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    blocks.push(
                        json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}),
                    );
                }
                if blocks.is_empty() {
                    continue;
                }
                ("assistant", blocks)
            }
            Message::Tool { call_id, content } => (
                "user",
                vec![json!({"type": "tool_result", "tool_use_id": call_id, "content": content})],
            ),
        };
        // Consecutive messages of one role are merged: the API alternates roles.
        match turns.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    let mut body = json!({
        "model": model,
        "max_tokens": max_tokens,
        "stream": true,
        "messages": turns.into_iter().map(|(role, content)| json!({"role": role, "content": content})).collect::<Vec<_>>(),
    });
    if !system.is_empty() {
        body["system"] = json!(system.join("\n\n"));
    }
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
    }
    body
}

#[derive(Default)]
struct AnthropicState {
    /// Tool-use blocks by content block index.
    calls: Vec<(usize, PartialCall)>,
    input_tokens: u64,
    finish: Option<FinishReason>,
    done: bool,
}

impl AnthropicState {
    fn handle(&mut self, data: &str, out: &mut Vec<ModelEvent>) -> Result<(), LlmError> {
        let v: Value = serde_json::from_str(data.trim())
            .map_err(|e| LlmError::Malformed(format!("{e} in {}", truncate(data, 200))))?;
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
        match v.get("type").and_then(Value::as_str).unwrap_or("") {
            "message_start" => {
                self.input_tokens = v
                    .pointer("/message/usage/input_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
            }
            "content_block_start" => {
                let block = v.get("content_block").cloned().unwrap_or_default();
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_use") => {
                        let s = |k: &str| {
                            block
                                .get(k)
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string()
                        };
                        self.calls.push((
                            index,
                            PartialCall {
                                id: s("id"),
                                name: s("name"),
                                arguments: String::new(),
                            },
                        ));
                    }
                    Some("text") => {
                        if let Some(t) = block
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            out.push(ModelEvent::Text(t.to_string()));
                        }
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = v.get("delta").cloned().unwrap_or_default();
                let field = |k: &str| {
                    delta
                        .get(k)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => out.push(ModelEvent::Text(field("text"))),
                    Some("thinking_delta") => out.push(ModelEvent::Thought(field("thinking"))),
                    Some("input_json_delta") => {
                        let Some((_, call)) = self.calls.iter_mut().find(|(i, _)| *i == index)
                        else {
                            return Err(LlmError::Malformed(format!(
                                "tool input for unknown content block {index}"
                            )));
                        };
                        call.arguments.push_str(&field("partial_json"));
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.finish = Some(FinishReason::parse(r));
                }
                if let Some(o) = v.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    out.push(ModelEvent::Usage {
                        input: self.input_tokens,
                        output: o,
                    });
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                let message = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error")
                    .to_string();
                return Err(LlmError::Http {
                    status: 200,
                    message,
                });
            }
            _ => {} // ping, content_block_stop
        }
        Ok(())
    }

    fn done_event(&mut self) -> ModelEvent {
        let tool_calls: Vec<ToolCallRequest> = std::mem::take(&mut self.calls)
            .into_iter()
            .map(|(i, c)| ToolCallRequest {
                id: if c.id.is_empty() {
                    format!("toolu_{i}")
                } else {
                    c.id
                },
                name: c.name,
                // An empty input means no arguments.
                arguments: if c.arguments.is_empty() {
                    "{}".into()
                } else {
                    c.arguments
                },
            })
            .collect();
        let finish = self.finish.take().unwrap_or(FinishReason::Stop);
        ModelEvent::Done { tool_calls, finish }
    }
}

/// The decoding state of one response, by provider.
enum StreamState {
    OpenAi(OpenAiState),
    Anthropic(AnthropicState),
}

impl StreamState {
    fn handle(&mut self, data: &str, out: &mut Vec<ModelEvent>) -> Result<(), LlmError> {
        match self {
            StreamState::OpenAi(s) => s.handle(data, out),
            StreamState::Anthropic(s) => s.handle(data, out),
        }
    }

    fn is_done(&self) -> bool {
        match self {
            StreamState::OpenAi(s) => s.done,
            StreamState::Anthropic(s) => s.done,
        }
    }

    fn has_finish(&self) -> bool {
        match self {
            StreamState::OpenAi(s) => s.finish.is_some(),
            StreamState::Anthropic(s) => s.finish.is_some(),
        }
    }

    fn set_done(&mut self) {
        match self {
            StreamState::OpenAi(s) => s.done = true,
            StreamState::Anthropic(s) => s.done = true,
        }
    }

    fn done_event(&mut self) -> ModelEvent {
        match self {
            StreamState::OpenAi(s) => s.done_event(),
            StreamState::Anthropic(s) => s.done_event(),
        }
    }
}

/// A model response being streamed. Dropping it closes the connection.
pub struct ModelStream {
    response: reqwest::Response,
    timeout: Duration,
    sse: SseBuffer,
    state: StreamState,
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
            if self.state.is_done() {
                self.finished = true;
                out.push(self.state.done_event());
                return Ok(out);
            }
            let chunk = tokio::time::timeout(self.timeout, self.response.chunk())
                .await
                .map_err(|_| LlmError::Timeout)?
                .map_err(|e| LlmError::Network(error_chain(&e)))?;
            match chunk {
                Some(bytes) => {
                    for data in self.sse.push(&bytes) {
                        self.state.handle(&data, &mut out)?;
                    }
                }
                None => {
                    if let Some(data) = self.sse.finish() {
                        self.state.handle(&data, &mut out)?;
                    }
                    if !self.state.is_done() && !self.state.has_finish() {
                        return Err(LlmError::Malformed(
                            "the stream ended before the response was complete".into(),
                        ));
                    }
                    self.state.set_done();
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&str]) -> Result<Vec<ModelEvent>, LlmError> {
        let mut sse = SseBuffer::default();
        let mut st = OpenAiState::default();
        let mut out = Vec::new();
        for c in chunks {
            for d in sse.push(c.as_bytes()) {
                st.handle(&d, &mut out)?;
            }
        }
        if st.done {
            out.push(st.done_event());
        }
        Ok(out)
    }

    #[test]
    fn tool_call_arguments_split_across_chunks_and_lines() {
        let events = run(&[
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\",\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"pa\"}}]}}]}\n",
            "\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"th\\\":\\\"a\\\"}\"}}]}}]}\n\ndata: {\"choi",
            "ces\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\r\n\r\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7}}\n\ndata: [DONE]\n\n",
        ])
        .unwrap();
        assert_eq!(
            events,
            vec![
                ModelEvent::Thought("hmm".into()),
                ModelEvent::Text("Hi".into()),
                ModelEvent::Usage {
                    input: 5,
                    output: 7
                },
                ModelEvent::Done {
                    tool_calls: vec![ToolCallRequest {
                        id: "c1".into(),
                        name: "read_file".into(),
                        arguments: "{\"path\":\"a\"}".into()
                    }],
                    finish: FinishReason::ToolCalls
                }
            ]
        );
    }

    #[test]
    fn tool_calls_without_index_are_told_apart_by_id() {
        let events = run(&[
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"grep\",\"arguments\":\"{\\\"pattern\\\":\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"\\\"x\\\"}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"id\":\"b\",\"function\":{\"name\":\"list_files\",\"arguments\":\"{}\"}}]}}]}\n\n",
            "data: [DONE]\n\n",
        ])
        .unwrap();
        let Some(ModelEvent::Done { tool_calls, finish }) = events.last() else { panic!("{events:?}") };
        assert_eq!(finish, &FinishReason::ToolCalls);
        assert_eq!(tool_calls.len(), 2);
        assert_eq!((tool_calls[0].id.as_str(), tool_calls[0].arguments.as_str()), ("a", "{\"pattern\":\"x\"}"));
        assert_eq!((tool_calls[1].id.as_str(), tool_calls[1].name.as_str()), ("b", "list_files"));
    }

    #[test]
    fn malformed_chunk_is_an_error() {
        let err = run(&["data: {not json\n\n"]).unwrap_err();
        assert!(matches!(err, LlmError::Malformed(_)), "{err:?}");
        let err = run(&["data: {\"error\":{\"message\":\"overloaded\"}}\n\n"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the model server answered HTTP 200: overloaded"
        );
    }

    #[test]
    fn length_finish() {
        let events = run(&[
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n",
        ])
        .unwrap();
        assert!(matches!(
            events.last(),
            Some(ModelEvent::Done {
                finish: FinishReason::Length,
                ..
            })
        ));
    }

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
            images: vec![Image { mime_type: "image/png".into(), data: "AAAA".into() }],
        };
        let body = openai_body("m", std::slice::from_ref(&with_image), &[]);
        assert_eq!(body["messages"][0]["content"][1]["image_url"]["url"], "data:image/png;base64,AAAA");
        let body = anthropic_body("m", &[with_image], &[], 10);
        assert_eq!(body["messages"][0]["content"][0]["source"]["media_type"], "image/png");
        assert_eq!(body["messages"][0]["content"][1]["text"], "see");
    }
}
