//! The Anthropic Messages API: the request and the decoding of its streamed
//! events (text, thinking, tool use, usage).

use super::{
    Decoder, Ending, FinishReason, LlmError, Message, ModelEvent, PartialCall, Thinking,
    ToolCallRequest, ToolSpec, truncate,
};
use crate::config::ProviderConfig;
use serde_json::{Value, json};

/// The API version this client speaks.
const API_VERSION: &str = "2023-06-01";
/// The smallest thinking budget the API takes.
pub const MIN_THINKING_BUDGET: u64 = 1024;
/// Room left for the answer when the output limit must be raised above the
/// thinking budget.
const ANSWER_ROOM: u64 = 4096;

/// The streaming request for `model` at `provider`.
pub(super) fn request(
    http: &reqwest::Client,
    provider: &ProviderConfig,
    model: &str,
    messages: &[Message],
    tools: &[ToolSpec],
    max_tokens: u64,
    thinking_budget: Option<u64>,
) -> reqwest::RequestBuilder {
    let url = format!("{}/v1/messages", provider.base_url.trim_end_matches('/'));
    let body = anthropic_body(model, messages, tools, max_tokens, thinking_budget);
    let mut req = http
        .post(url)
        .header("anthropic-version", API_VERSION)
        .json(&body);
    if let Some(key) = &provider.api_key {
        req = req.header("x-api-key", key);
    }
    req
}

/// Whether thinking can be asked for: not in the middle of a tool-use cycle
/// that began without it (the API wants the last assistant message of a
/// cycle to start with its thinking).
fn thinking_allowed(messages: &[Message]) -> bool {
    let last_assistant = messages.iter().rev().find_map(|m| match m {
        Message::Assistant {
            tool_calls,
            thinking,
            ..
        } => Some((tool_calls, thinking)),
        _ => None,
    });
    !matches!(last_assistant, Some((calls, thinking)) if !calls.is_empty() && thinking.is_empty())
}

/// A thinking block as the API takes it back.
fn thinking_block(t: &Thinking) -> Value {
    match t {
        Thinking::Shown { text, signature } => {
            json!({"type": "thinking", "thinking": text, "signature": signature})
        }
        Thinking::Redacted { data } => json!({"type": "redacted_thinking", "data": data}),
    }
}

/// The request body of the Anthropic Messages API. With a `thinking_budget`,
/// extended thinking is asked for (at least `MIN_THINKING_BUDGET` tokens;
/// the output limit is raised above the budget when needed) and earlier
/// thinking blocks are sent back.
pub fn anthropic_body(
    model: &str,
    messages: &[Message],
    tools: &[ToolSpec],
    max_tokens: u64,
    thinking_budget: Option<u64>,
) -> Value {
    let thinking_budget = thinking_budget
        .filter(|_| thinking_allowed(messages))
        .map(|b| b.max(MIN_THINKING_BUDGET));
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
            Message::Assistant {
                text,
                tool_calls,
                thinking,
            } => {
                let mut blocks = Vec::new();
                if thinking_budget.is_some() {
                    blocks.extend(thinking.iter().map(thinking_block));
                }
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
    let max_tokens = match thinking_budget {
        Some(budget) if max_tokens <= budget => budget + ANSWER_ROOM,
        _ => max_tokens,
    };
    let mut body = json!({
        "model": model,
        "max_tokens": max_tokens,
        "stream": true,
        "messages": turns.into_iter().map(|(role, content)| json!({"role": role, "content": content})).collect::<Vec<_>>(),
    });
    if !system.is_empty() {
        body["system"] = json!(system.join("\n\n"));
    }
    if let Some(budget) = thinking_budget {
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    }
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
    }
    body
}

/// Decodes a Messages API stream.
#[derive(Default)]
pub(super) struct AnthropicDecoder {
    /// Tool-use blocks by content block index.
    calls: Vec<(usize, PartialCall)>,
    /// Thinking blocks by content block index.
    thinking: Vec<(usize, Thinking)>,
    input_tokens: u64,
    ending: Ending,
}

impl Decoder for AnthropicDecoder {
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
                    Some("thinking") => {
                        let text = block.get("thinking").and_then(Value::as_str).unwrap_or("");
                        if !text.is_empty() {
                            out.push(ModelEvent::Thought(text.to_string()));
                        }
                        let signature = block.get("signature").and_then(Value::as_str);
                        self.thinking.push((
                            index,
                            Thinking::Shown {
                                text: text.to_string(),
                                signature: signature.unwrap_or("").to_string(),
                            },
                        ));
                    }
                    Some("redacted_thinking") => {
                        let data = block.get("data").and_then(Value::as_str).unwrap_or("");
                        self.thinking.push((
                            index,
                            Thinking::Redacted {
                                data: data.to_string(),
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
                    Some("thinking_delta") => {
                        let piece = field("thinking");
                        if let Some(Thinking::Shown { text, .. }) = self.thinking_at(index) {
                            text.push_str(&piece);
                        }
                        out.push(ModelEvent::Thought(piece));
                    }
                    Some("signature_delta") => {
                        if let Some(Thinking::Shown { signature, .. }) = self.thinking_at(index) {
                            signature.push_str(&field("signature"));
                        }
                    }
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
                    self.ending.finish = Some(FinishReason::parse(r));
                }
                if let Some(o) = v.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    out.push(ModelEvent::Usage {
                        input: self.input_tokens,
                        output: o,
                        cost: None,
                    });
                }
            }
            "message_stop" => self.ending.done = true,
            "error" => {
                let message = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error")
                    .to_string();
                let kind = v
                    .pointer("/error/type")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                return Err(LlmError::Stream { kind, message });
            }
            _ => {} // ping, content_block_stop
        }
        Ok(())
    }

    fn ending(&mut self) -> &mut Ending {
        &mut self.ending
    }

    fn done_event(&mut self) -> ModelEvent {
        let tool_calls: Vec<ToolCallRequest> = std::mem::take(&mut self.calls)
            .into_iter()
            .map(|(i, mut c)| {
                // An empty input means no arguments.
                if c.arguments.is_empty() {
                    c.arguments = "{}".into();
                }
                c.into_request(format!("toolu_{i}"))
            })
            .collect();
        // A thinking block without its signature would be refused when sent
        // back: keep only whole ones.
        let thinking = std::mem::take(&mut self.thinking)
            .into_iter()
            .map(|(_, t)| t)
            .filter(|t| !matches!(t, Thinking::Shown { signature, .. } if signature.is_empty()))
            .collect();
        let finish = self.ending.finish.take().unwrap_or(FinishReason::Stop);
        ModelEvent::Done {
            tool_calls,
            thinking,
            finish,
        }
    }
}

impl AnthropicDecoder {
    /// The thinking block at content block `index`, if there is one.
    fn thinking_at(&mut self, index: usize) -> Option<&mut Thinking> {
        self.thinking
            .iter_mut()
            .find(|(i, _)| *i == index)
            .map(|(_, t)| t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(events: &[Value]) -> Vec<ModelEvent> {
        let mut decoder = AnthropicDecoder::default();
        let mut out = Vec::new();
        for e in events {
            decoder.handle(&e.to_string(), &mut out).unwrap();
        }
        assert!(decoder.ending.done);
        out.push(decoder.done_event());
        out
    }

    #[test]
    fn thinking_blocks_are_kept_with_their_signatures() {
        let events = decode(&[
            json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}),
            json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"a "}}),
            json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"plan"}}),
            json!({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}),
            json!({"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"xyz"}}),
            // Unsigned thinking cannot be sent back: dropped.
            json!({"type":"content_block_start","index":2,"content_block":{"type":"thinking","thinking":"?"}}),
            json!({"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}}),
            json!({"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"Hi"}}),
            json!({"type":"message_delta","delta":{"stop_reason":"end_turn"}}),
            json!({"type":"message_stop"}),
        ]);
        assert_eq!(
            events,
            [
                ModelEvent::Thought("a ".into()),
                ModelEvent::Thought("plan".into()),
                ModelEvent::Thought("?".into()),
                ModelEvent::Text("Hi".into()),
                ModelEvent::Done {
                    tool_calls: vec![],
                    thinking: vec![
                        Thinking::Shown {
                            text: "a plan".into(),
                            signature: "sig".into()
                        },
                        Thinking::Redacted { data: "xyz".into() }
                    ],
                    finish: FinishReason::Stop
                }
            ]
        );
    }

    fn tool_cycle(thinking: Vec<Thinking>) -> Vec<Message> {
        vec![
            Message::user("go"),
            Message::Assistant {
                text: "Reading.".into(),
                tool_calls: vec![ToolCallRequest {
                    id: "t1".into(),
                    name: "read_file".into(),
                    arguments: "{}".into(),
                }],
                thinking,
            },
            Message::Tool {
                call_id: "t1".into(),
                content: "text".into(),
            },
        ]
    }

    #[test]
    fn body_asks_for_thinking_and_sends_it_back() {
        let signed = Thinking::Shown {
            text: "plan".into(),
            signature: "sig".into(),
        };
        let body = anthropic_body("m", &tool_cycle(vec![signed]), &[], 16000, Some(2048));
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 2048})
        );
        assert_eq!(body["max_tokens"], 16000);
        let content = &body["messages"][1]["content"];
        assert_eq!(
            content[0],
            json!({"type": "thinking", "thinking": "plan", "signature": "sig"})
        );
        assert_eq!(content[1]["type"], "text");
        assert_eq!(content[2]["type"], "tool_use");

        // Budgets are raised to the API's minimum, and the output limit above
        // the budget.
        let body = anthropic_body("m", &[Message::user("hi")], &[], 16000, Some(100));
        assert_eq!(body["thinking"]["budget_tokens"], MIN_THINKING_BUDGET);
        let body = anthropic_body("m", &[Message::user("hi")], &[], 16000, Some(20000));
        assert_eq!(body["max_tokens"], 20000 + ANSWER_ROOM);

        // Without a budget nothing is asked for or sent back.
        let signed = Thinking::Shown {
            text: "plan".into(),
            signature: "sig".into(),
        };
        let body = anthropic_body("m", &tool_cycle(vec![signed]), &[], 16000, None);
        assert!(body.get("thinking").is_none());
        assert_eq!(body["messages"][1]["content"][0]["type"], "text");

        // A tool-use cycle that began without thinking continues without it.
        let body = anthropic_body("m", &tool_cycle(vec![]), &[], 16000, Some(2048));
        assert!(body.get("thinking").is_none());
    }
}
