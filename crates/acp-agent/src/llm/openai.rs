//! OpenAI-compatible Chat Completions: the request and the decoding of its
//! streamed chunks (text, `reasoning_content`, tool calls assembled from their
//! pieces, usage).

use super::{
    Decoder, Ending, FinishReason, LlmError, Message, ModelEvent, PartialCall, ToolCallRequest,
    ToolSpec, truncate,
};
use crate::config::ProviderConfig;
use serde_json::{Value, json};

/// The streaming request for `model` at `provider`.
pub(super) fn request(
    http: &reqwest::Client,
    provider: &ProviderConfig,
    model: &str,
    messages: &[Message],
    tools: &[ToolSpec],
) -> reqwest::RequestBuilder {
    let url = format!(
        "{}/chat/completions",
        provider.base_url.trim_end_matches('/')
    );
    let mut req = http.post(url).json(&openai_body(model, messages, tools));
    if let Some(key) = &provider.api_key {
        req = req.bearer_auth(key);
    }
    req
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
            Message::Assistant {
                text, tool_calls, ..
            } => {
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

/// Decodes a Chat Completions stream.
#[derive(Default)]
pub(super) struct OpenAiDecoder {
    calls: Vec<PartialCall>,
    ending: Ending,
}

impl Decoder for OpenAiDecoder {
    /// Digests one SSE data payload into events.
    fn handle(&mut self, data: &str, out: &mut Vec<ModelEvent>) -> Result<(), LlmError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.ending.done = true;
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
            let kind = ["type", "code"]
                .iter()
                .find_map(|k| err.get(*k).and_then(Value::as_str))
                .map(str::to_string);
            return Err(LlmError::Stream { kind, message });
        }
        if let Some(usage) = v.get("usage").filter(|u| u.is_object()) {
            let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
            out.push(ModelEvent::Usage {
                input: n("prompt_tokens"),
                output: n("completion_tokens"),
                cost: usage.get("cost").and_then(Value::as_f64),
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
                                Some(last) if id.is_empty() || last.id == id => {
                                    self.calls.len() - 1
                                }
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
                self.ending.finish = Some(FinishReason::parse(reason));
            }
        }
        Ok(())
    }

    fn ending(&mut self) -> &mut Ending {
        &mut self.ending
    }

    fn done_event(&mut self) -> ModelEvent {
        let tool_calls: Vec<ToolCallRequest> = std::mem::take(&mut self.calls)
            .into_iter()
            .enumerate()
            .filter(|(_, c)| !c.name.is_empty())
            .map(|(i, c)| c.into_request(format!("call_{i}")))
            .collect();
        let finish = self
            .ending
            .finish
            .take()
            .unwrap_or(if tool_calls.is_empty() {
                FinishReason::Stop
            } else {
                FinishReason::ToolCalls
            });
        ModelEvent::Done {
            tool_calls,
            thinking: Vec::new(),
            finish,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::sse::SseBuffer;
    use crate::llm::{FinishReason, LlmError};

    fn run(chunks: &[&str]) -> Result<Vec<ModelEvent>, LlmError> {
        let mut sse = SseBuffer::default();
        let mut st = OpenAiDecoder::default();
        let mut out = Vec::new();
        for c in chunks {
            for d in sse.push(c.as_bytes()) {
                st.handle(&d, &mut out)?;
            }
        }
        if st.ending.done {
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
                    output: 7,
                    cost: None
                },
                ModelEvent::Done {
                    tool_calls: vec![ToolCallRequest {
                        id: "c1".into(),
                        name: "read_file".into(),
                        arguments: "{\"path\":\"a\"}".into()
                    }],
                    thinking: vec![],
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
        let Some(ModelEvent::Done {
            tool_calls, finish, ..
        }) = events.last()
        else {
            panic!("{events:?}")
        };
        assert_eq!(finish, &FinishReason::ToolCalls);
        assert_eq!(tool_calls.len(), 2);
        assert_eq!(
            (tool_calls[0].id.as_str(), tool_calls[0].arguments.as_str()),
            ("a", "{\"pattern\":\"x\"}")
        );
        assert_eq!(
            (tool_calls[1].id.as_str(), tool_calls[1].name.as_str()),
            ("b", "list_files")
        );
    }

    #[test]
    fn usage_with_a_cost() {
        let events = run(&[
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4,\"cost\":0.25}}\n\n",
        ])
        .unwrap();
        assert_eq!(
            events,
            [ModelEvent::Usage {
                input: 3,
                output: 4,
                cost: Some(0.25)
            }]
        );
    }

    #[test]
    fn malformed_chunk_is_an_error() {
        let err = run(&["data: {not json\n\n"]).unwrap_err();
        assert!(matches!(err, LlmError::Malformed(_)), "{err:?}");
        let err = run(&["data: {\"error\":{\"message\":\"overloaded\"}}\n\n"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the model server reported an error: overloaded"
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
}
