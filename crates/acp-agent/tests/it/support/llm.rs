//! The mock model server: answers each HTTP request with the next scripted
//! reply (OpenAI-style or Anthropic-style server-sent events, or an error),
//! recording what it was sent.

use super::read_request;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One scripted HTTP reply.
#[derive(Clone)]
pub enum Reply {
    /// 200 with these SSE pieces, then the connection closes.
    Sse(Vec<String>),
    /// 200 with these SSE pieces, then nothing more (the stream hangs open).
    SseHang(Vec<String>),
    /// An HTTP error status with a body.
    Status(u16, String),
    /// An HTTP error status with extra headers (`retry-after`) and a body.
    StatusWith(u16, Vec<(&'static str, String)>, String),
    /// Reads the request, then closes the connection without answering.
    HangUp,
    /// Waits this long before the reply (for requests racing a slow model).
    Delayed(Duration, Box<Reply>),
}

/// The mock model server.
pub struct MockLlm {
    pub base_url: String,
    /// Request bodies, in order.
    pub requests: Arc<Mutex<Vec<Value>>>,
    /// Request lines and headers (lowercased), in order.
    pub heads: Arc<Mutex<Vec<String>>>,
    replies: Arc<Mutex<VecDeque<Reply>>>,
}

impl MockLlm {
    pub async fn start(replies: Vec<Reply>) -> MockLlm {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let heads = Arc::new(Mutex::new(Vec::new()));
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let (req2, rep2, heads2) = (requests.clone(), replies.clone(), heads.clone());
        tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    return;
                };
                let (req3, rep3, heads3) = (req2.clone(), rep2.clone(), heads2.clone());
                tokio::spawn(async move {
                    let _ = serve_one(sock, req3, rep3, heads3).await;
                });
            }
        });
        MockLlm {
            base_url: format!("http://{addr}/v1"),
            requests,
            heads,
            replies,
        }
    }

    pub fn push(&self, reply: Reply) {
        self.replies.lock().unwrap().push_back(reply);
    }

    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }

    /// The system prompt of request `i`.
    pub fn system_prompt(&self, i: usize) -> String {
        self.requests()[i]["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// How many replies are still scripted.
    pub fn replies_left(&self) -> usize {
        self.replies.lock().unwrap().len()
    }
}

async fn serve_one(
    mut sock: tokio::net::TcpStream,
    requests: Arc<Mutex<Vec<Value>>>,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    heads: Arc<Mutex<Vec<String>>>,
) -> std::io::Result<()> {
    let Some((head, body)) = read_request(&mut sock).await? else {
        return Ok(());
    };
    heads.lock().unwrap().push(head);
    requests.lock().unwrap().push(body);
    let mut reply = replies.lock().unwrap().pop_front().unwrap_or(Reply::Status(
        500,
        "{\"error\":{\"message\":\"no scripted reply\"}}".into(),
    ));
    while let Reply::Delayed(wait, inner) = reply {
        tokio::time::sleep(wait).await;
        reply = *inner;
    }
    let reply_kind = if matches!(reply, Reply::SseHang(_)) {
        ReplyKind::Hang
    } else {
        ReplyKind::Close
    };
    match reply {
        Reply::Delayed(..) => unreachable!("unwrapped above"),
        Reply::HangUp => return Ok(()),
        Reply::Status(code, body) => {
            let head = format!(
                "HTTP/1.1 {code} Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            sock.write_all(head.as_bytes()).await?;
            sock.write_all(body.as_bytes()).await?;
        }
        Reply::StatusWith(code, headers, body) => {
            let mut head = format!(
                "HTTP/1.1 {code} Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            sock.write_all(head.as_bytes()).await?;
            sock.write_all(body.as_bytes()).await?;
        }
        Reply::Sse(pieces) | Reply::SseHang(pieces) => {
            let hang = matches!(reply_kind, ReplyKind::Hang);
            sock.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
            )
            .await?;
            for piece in &pieces {
                // Split every piece in two writes to exercise re-assembly.
                let bytes = piece.as_bytes();
                let mid = bytes.len() / 2;
                sock.write_all(&bytes[..mid]).await?;
                sock.flush().await?;
                tokio::time::sleep(Duration::from_millis(2)).await;
                sock.write_all(&bytes[mid..]).await?;
                sock.flush().await?;
            }
            if hang {
                // Keep the stream open without sending anything more.
                let mut tmp = [0u8; 1];
                let _ = tokio::time::timeout(Duration::from_secs(60), sock.read(&mut tmp)).await;
            }
        }
    }
    sock.flush().await?;
    Ok(())
}

enum ReplyKind {
    Hang,
    Close,
}

fn sse(v: Value) -> String {
    format!("data: {v}\n\n")
}

pub fn text(t: &str) -> String {
    sse(json!({"choices":[{"index":0,"delta":{"content":t}}]}))
}

pub fn thought(t: &str) -> String {
    sse(json!({"choices":[{"index":0,"delta":{"reasoning_content":t}}]}))
}

/// A tool call whose arguments arrive in `pieces` chunks.
pub fn tool_call(index: u32, id: &str, name: &str, args: &str, pieces: usize) -> Vec<String> {
    let mut out = vec![sse(json!({"choices":[{"index":0,"delta":{"tool_calls":[
        {"index":index,"id":id,"type":"function","function":{"name":name,"arguments":""}}]}}]}))];
    let step = args.len().div_ceil(pieces.max(1)).max(1);
    let mut start = 0;
    while start < args.len() {
        let mut end = (start + step).min(args.len());
        while !args.is_char_boundary(end) {
            end += 1;
        }
        out.push(sse(json!({"choices":[{"index":0,"delta":{"tool_calls":[
            {"index":index,"function":{"arguments":&args[start..end]}}]}}]})));
        start = end;
    }
    out
}

pub fn finish(reason: &str) -> String {
    sse(json!({"choices":[{"index":0,"delta":{},"finish_reason":reason}]}))
}

pub fn usage(prompt: u64, completion: u64) -> String {
    sse(
        json!({"choices":[],"usage":{"prompt_tokens":prompt,"completion_tokens":completion,"total_tokens":prompt+completion}}),
    )
}

pub fn done() -> String {
    "data: [DONE]\n\n".into()
}

/// A complete reply making one tool call.
pub fn tool_reply(id: &str, name: &str, args: Value) -> Reply {
    let mut v = tool_call(0, id, name, &args.to_string(), 3);
    v.push(finish("tool_calls"));
    v.push(done());
    Reply::Sse(v)
}

/// A complete text reply.
pub fn text_reply(t: &str) -> Reply {
    Reply::Sse(vec![text(t), finish("stop"), usage(10, 5), done()])
}

/// A complete text reply reporting its token use.
pub fn text_reply_using(t: &str, prompt: u64, completion: u64) -> Reply {
    Reply::Sse(vec![
        text(t),
        finish("stop"),
        usage(prompt, completion),
        done(),
    ])
}

/// An OpenAI-style error body.
pub fn error_body(message: &str) -> String {
    json!({"error": {"message": message}}).to_string()
}

/// A base URL on 127.0.0.1 where nothing listens (connections are refused).
pub fn refusing_base_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/v1")
}

/// The results of the tool calls in a Chat Completions request, in order.
pub fn tool_results(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

/// A complete Anthropic reply of one text block, with its token use.
pub fn anthropic_text_reply(text: &str, input_tokens: u64, output_tokens: u64) -> Reply {
    let ev = anthropic_event;
    Reply::Sse(vec![
        ev(json!({"type":"message_start","message":{"usage":{"input_tokens":input_tokens}}})),
        ev(
            json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        ),
        ev(
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}}),
        ),
        ev(
            json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":output_tokens}}),
        ),
        ev(json!({"type":"message_stop"})),
    ])
}

/// An Anthropic stream event.
pub fn anthropic_event(v: Value) -> String {
    format!("event: {}\ndata: {v}\n\n", v["type"].as_str().unwrap())
}
