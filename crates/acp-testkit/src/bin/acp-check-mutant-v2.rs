//! `acp-check-mutant-v2 BUG`: a small agent speaking ACP protocol version
//! 2, written on raw JSON-RPC, with one deliberate protocol bug — a **test
//! fixture** for `acp check agent --protocol 2` (not for end users). `good`
//! has none.
//!
//! A prompt is acknowledged with the user message's id, which it reports
//! (`user_message`), then `running`, a message chunk "ok", a tool call
//! upserted twice (pending, completed) and `idle`/`end_turn`. A prompt
//! containing `slow` sends a chunk every 100 ms for 30 s instead, and ends
//! idle/`cancelled` on `session/cancel`. It answers a v1 `initialize` with
//! -32022 (it speaks v2 only), every other method -32601, a batch -32600.

use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The bugs, one per mutant.
const BUGS: &[&str] = &[
    // None.
    "good",
    // Answers 1 to every initialize (a v1 agent's answer).
    "v1-only",
    // Never reports idle: the turn seems to run forever.
    "no-idle",
    // Message chunks carry no messageId.
    "no-message-id",
    // Answers the prompt only when the turn has ended.
    "late-ack",
    // Ends a cancelled turn with end_turn.
    "cancel-end-turn",
];

type Out = mpsc::UnboundedSender<Value>;

fn note(out: &Out, session: &str, update: Value) {
    let _ = out.send(json!({"jsonrpc": "2.0", "method": "session/update",
        "params": {"sessionId": session, "update": update}}));
}

struct Agent {
    bug: &'static str,
    out: Out,
    next: AtomicU64,
    closed: Mutex<HashSet<String>>,
    cancelled: Mutex<HashSet<String>>,
    cwd: Mutex<Option<String>>,
}

impl Agent {
    fn fresh(&self, prefix: &str) -> String {
        format!("{prefix}-{}", self.next.fetch_add(1, Ordering::SeqCst) + 1)
    }

    fn respond(&self, id: &Value, result: Result<Value, Value>) {
        let msg = match result {
            Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
            Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": e}),
        };
        let _ = self.out.send(msg);
    }

    async fn turn(self: Arc<Self>, id: Value, session: String, text: String) {
        let user = self.fresh("user");
        let agent = self.fresh("msg");
        let call = self.fresh("call");
        note(
            &self.out,
            &session,
            json!({"sessionUpdate": "user_message", "messageId": user,
            "content": [{"type": "text", "text": text}]}),
        );
        if self.bug != "late-ack" {
            self.respond(&id, Ok(json!({"messageId": user})));
        }
        note(
            &self.out,
            &session,
            json!({"sessionUpdate": "state_update", "state": "running"}),
        );
        let chunk = |text: &str| {
            let mut update = json!({"sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": text}});
            if self.bug != "no-message-id" {
                update["messageId"] = json!(agent);
            }
            update
        };
        let mut stop = "end_turn";
        if text.contains("slow") {
            for n in 0..300 {
                if self.cancelled.lock().unwrap().remove(&session) {
                    stop = if self.bug == "cancel-end-turn" {
                        "end_turn"
                    } else {
                        "cancelled"
                    };
                    break;
                }
                note(&self.out, &session, chunk(&format!("tick {n}\n")));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        } else {
            note(&self.out, &session, chunk("ok"));
            note(
                &self.out,
                &session,
                json!({"sessionUpdate": "tool_call_update",
                "toolCallId": call, "title": "Read notes.txt", "kind": "read", "status": "pending"}),
            );
            note(
                &self.out,
                &session,
                json!({"sessionUpdate": "tool_call_update",
                "toolCallId": call, "status": "completed"}),
            );
        }
        if self.bug != "no-idle" {
            note(
                &self.out,
                &session,
                json!({"sessionUpdate": "state_update", "state": "idle",
                "stopReason": stop}),
            );
        }
        if self.bug == "late-ack" {
            self.respond(&id, Ok(json!({"messageId": user})));
        }
    }

    fn handle(self: &Arc<Self>, msg: Value) {
        let Some(method) = msg.get("method").and_then(Value::as_str) else {
            return;
        };
        let params = msg.get("params").cloned().unwrap_or(json!({}));
        let session = params["sessionId"].as_str().unwrap_or("").to_string();
        let Some(id) = msg.get("id").cloned() else {
            if method == "session/cancel" {
                self.cancelled.lock().unwrap().insert(session);
            }
            return;
        };
        let answer = match method {
            "initialize" => {
                let asked = params["protocolVersion"].as_u64().unwrap_or(0);
                if self.bug == "v1-only" {
                    Ok(json!({"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}))
                } else if asked < 2 {
                    Err(
                        json!({"code": -32022, "message": "Unsupported protocol version",
                        "data": {"requested": asked, "supported": [2]}}),
                    )
                } else {
                    Ok(json!({"protocolVersion": 2,
                        "info": {"name": "acp-check-mutant-v2", "version": "0"},
                        "capabilities": {"session": {"delete": {}}}}))
                }
            }
            "session/new" => {
                *self.cwd.lock().unwrap() = params["cwd"].as_str().map(str::to_string);
                Ok(json!({"sessionId": self.fresh("sess")}))
            }
            "session/prompt" if self.closed.lock().unwrap().contains(&session) => Err(
                json!({"code": -32002, "message": "Session not found", "data": {"sessionId": session}}),
            ),
            "session/prompt" => {
                let text = params["prompt"][0]["text"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                tokio::spawn(self.clone().turn(id, session, text));
                return;
            }
            "session/list" => {
                let cwd = self
                    .cwd
                    .lock()
                    .unwrap()
                    .clone()
                    .unwrap_or_else(|| "/".into());
                Ok(json!({"sessions": [{"sessionId": "sess-1", "cwd": cwd}]}))
            }
            "session/resume" | "session/delete" => Ok(json!({})),
            "session/close" => {
                self.closed.lock().unwrap().insert(session);
                Ok(json!({}))
            }
            _ => Err(json!({"code": -32601, "message": "Method not found"})),
        };
        self.respond(&id, answer);
    }
}

#[tokio::main]
async fn main() {
    let bug = std::env::args().nth(1).unwrap_or_default();
    let Some(bug) = BUGS.iter().find(|b| **b == bug) else {
        eprintln!(
            "usage: acp-check-mutant-v2 BUG, one of: {}",
            BUGS.join(", ")
        );
        std::process::exit(2);
    };
    let (out, mut rx) = mpsc::unbounded_channel::<Value>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(msg) = rx.recv().await {
            let line = format!("{msg}\n");
            if stdout.write_all(line.as_bytes()).await.is_err() {
                break;
            }
            let _ = stdout.flush().await;
        }
    });
    let agent = Arc::new(Agent {
        bug,
        out: out.clone(),
        next: AtomicU64::new(0),
        closed: Mutex::default(),
        cancelled: Mutex::default(),
        cwd: Mutex::default(),
    });
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        match serde_json::from_str::<Value>(&line) {
            Ok(msg) if msg.is_object() => agent.handle(msg),
            Ok(_) => {
                let _ = out.send(json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": -32600, "message": "Invalid request"}}));
            }
            Err(_) => {
                let _ = out.send(json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": -32700, "message": "Parse error"}}));
            }
        }
    }
    drop(agent);
    drop(out);
    let _ = tokio::time::timeout(Duration::from_millis(200), writer).await;
}
