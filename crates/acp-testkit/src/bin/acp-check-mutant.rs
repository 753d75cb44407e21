//! `acp-check-mutant BUG`: a small ACP agent, written on raw JSON-RPC, with
//! one deliberate protocol bug — a **test fixture** for the mutation tests
//! of `acp check agent` (not for end users). `good` has none.
//!
//! A turn whose prompt contains `slow` sends "tick N" every 100 ms for 30 s
//! and honours `session/cancel`; any other turn says "ok", makes a tool call
//! (pending, a permission request, in progress, completed), reads
//! `notes.txt` in the session's cwd, runs `echo hi` in a terminal (waits,
//! releases), and ends with `end_turn`. `session/load` replays two chunks.
//!
//! The shapes of the official conformance kit's broken fixture agents are
//! bugs here too, written anew: `cancel-end-turn` (the `slow` turn says one
//! tick and waits for the cancel, then ends `end_turn` 1.2 s after it),
//! `cancel-ends-first` (the same at once: a race the checker cannot tell
//! from a turn that ended first),
//! `wrong-ids` (every response carries an id no request had),
//! `missing-fields` (a message chunk without its `content`), and
//! `stops-answering` (after `session/new`, no request is answered).
//!
//! It also serves as the terminal supervisor of the tests (it calls
//! `acp_host::supervise_if_requested` first).

use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

/// The bugs, one per mutant.
const BUGS: &[&str] = &[
    "good",
    "late-update",
    "numeric-ids",
    "ignore-cancel",
    "unreleased-terminal",
    "stdout-noise",
    "no-exit-on-eof",
    "malformed-update",
    "wrong-error-code",
    "update-before-call",
    "status-backwards",
    "echo-version",
    "no-replay",
    "wrong-session-id",
    "answer-notification",
    "unknown-session-ok",
    "cancel-end-turn",
    "cancel-ends-first",
    "wrong-ids",
    "missing-fields",
    "stops-answering",
];

#[derive(Clone)]
struct Agent {
    bug: &'static str,
    out: mpsc::UnboundedSender<String>,
    pending: Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>,
    next: Arc<AtomicU64>,
    sessions: Arc<Mutex<HashMap<String, String>>>,
    cancelled: Arc<Mutex<HashSet<String>>>,
}

impl Agent {
    fn send(&self, v: Value) {
        let _ = self.out.send(v.to_string());
    }

    fn respond(&self, id: &Value, result: Value) {
        let id = self.id_back(id);
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn error(&self, id: &Value, code: i64, message: &str) {
        let id = self.id_back(id);
        self.send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}));
    }

    /// The id as it goes back (the `numeric-ids` bug turns "7" into 7,
    /// `wrong-ids` answers an id no request had).
    fn id_back(&self, id: &Value) -> Value {
        if self.bug == "wrong-ids" {
            return match id {
                Value::Number(n) => json!(n.as_i64().unwrap_or(0) + 1000),
                Value::String(s) => json!(format!("{s}-wrong")),
                other => other.clone(),
            };
        }
        if self.bug == "numeric-ids"
            && let Some(n) = id.as_str().and_then(|s| s.parse::<u64>().ok())
        {
            return json!(n);
        }
        id.clone()
    }

    fn update(&self, session: &str, update: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}}));
    }

    fn say(&self, session: &str, text: &str) {
        self.update(session, json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}));
    }

    async fn call(&self, method: &str, params: Value) -> Value {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap().insert(id, tx);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        rx.await.unwrap_or(Value::Null)
    }

    fn is_cancelled(&self, session: &str) -> bool {
        self.bug != "ignore-cancel" && self.cancelled.lock().unwrap().contains(session)
    }

    async fn turn(&self, id: Value, session: String, text: String) {
        self.cancelled.lock().unwrap().remove(&session);
        if text.contains("slow") && matches!(self.bug, "cancel-end-turn" | "cancel-ends-first") {
            // One sign of work, then nothing until the cancel (as the kit's
            // fixture hangs), so the cancel's answer is the next line.
            self.say(&session, "tick 0\n");
            for _ in 0..3000 {
                if self.is_cancelled(&session) {
                    if self.bug == "cancel-end-turn" {
                        // Past the race window: the cancel was surely read.
                        tokio::time::sleep(Duration::from_millis(1200)).await;
                    }
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            self.respond(&id, json!({"stopReason": "end_turn"}));
            return;
        }
        if text.contains("slow") {
            let ticks = if self.bug == "ignore-cancel" { 40 } else { 300 };
            for n in 0..ticks {
                if self.is_cancelled(&session) {
                    self.respond(&id, json!({"stopReason": "cancelled"}));
                    return;
                }
                self.say(&session, &format!("tick {n}\n"));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            self.respond(&id, json!({"stopReason": "end_turn"}));
            return;
        }
        if self.bug == "missing-fields" {
            self.update(&session, json!({"sessionUpdate": "agent_message_chunk"}));
        }
        if self.bug == "malformed-update" {
            self.update(&session, json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": 42}}));
        }
        if self.bug == "wrong-session-id" {
            self.say(&format!("{session}-other"), "ok");
        } else {
            self.say(&session, "ok");
        }
        let call_id = format!("call-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let call = json!({"toolCallId": call_id, "title": "Read notes", "kind": "read"});
        if self.bug == "update-before-call" {
            self.update(&session, json!({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"}));
        }
        let mut announce = call.clone();
        announce["sessionUpdate"] = json!("tool_call");
        announce["status"] = json!("pending");
        self.update(&session, announce);
        let options = json!([
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ]);
        self.call(
            "session/request_permission",
            json!({"sessionId": session, "toolCall": call, "options": options}),
        )
        .await;
        self.update(&session, json!({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"}));
        let cwd = self
            .sessions
            .lock()
            .unwrap()
            .get(&session)
            .cloned()
            .unwrap_or_default();
        self.call("fs/read_text_file", json!({"sessionId": session, "path": format!("{cwd}/notes.txt"), "line": 1, "limit": 1})).await;
        let created = self
            .call(
                "terminal/create",
                json!({"sessionId": session, "command": "echo", "args": ["hi"]}),
            )
            .await;
        if let Some(t) = created["result"]["terminalId"].as_str() {
            let ids = json!({"sessionId": session, "terminalId": t});
            self.call("terminal/wait_for_exit", ids.clone()).await;
            self.call("terminal/output", ids.clone()).await;
            if self.bug != "unreleased-terminal" {
                self.call("terminal/release", ids).await;
            }
        }
        self.update(&session, json!({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "completed"}));
        if self.bug == "status-backwards" {
            self.update(&session, json!({"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"}));
        }
        self.respond(&id, json!({"stopReason": "end_turn"}));
        if self.bug == "late-update" {
            self.say(&session, "one more thing");
        }
    }

    fn handle(&self, line: &str) {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            self.error(&Value::Null, -32700, "parse error");
            return;
        };
        let id = msg.get("id").cloned();
        let method = msg.get("method");
        let Some(method) = method else {
            // A response to one of our requests.
            if let Some(n) = id.as_ref().and_then(Value::as_u64)
                && let Some(tx) = self.pending.lock().unwrap().remove(&n)
            {
                let _ = tx.send(msg);
            }
            if id.is_none() {
                self.error(&Value::Null, -32600, "invalid request");
            }
            return;
        };
        let Some(method) = method.as_str() else {
            self.error(
                id.as_ref().unwrap_or(&Value::Null),
                -32600,
                "invalid request",
            );
            return;
        };
        let params = msg.get("params").cloned().unwrap_or(json!({}));
        let Some(id) = id else {
            self.notification(method, &params);
            return;
        };
        if self.bug == "stops-answering" && !matches!(method, "initialize" | "session/new") {
            return;
        }
        match method {
            "initialize" => {
                let asked = params["protocolVersion"].as_u64().unwrap_or(1);
                let version = if self.bug == "echo-version" {
                    asked
                } else {
                    asked.min(1)
                };
                self.respond(
                    &id,
                    json!({
                        "protocolVersion": version,
                        "agentCapabilities": {"loadSession": true},
                        "agentInfo": {"name": "acp-check-mutant", "version": self.bug},
                    }),
                );
            }
            "session/new" | "session/load" => {
                let Some(cwd) = params["cwd"].as_str() else {
                    self.error(&id, -32602, "invalid params: cwd must be a string");
                    return;
                };
                if !params["mcpServers"].is_array() {
                    self.error(&id, -32602, "invalid params: mcpServers must be a list");
                    return;
                }
                if method == "session/new" {
                    let n = self.next.fetch_add(1, Ordering::Relaxed);
                    let session = format!("m-{n}");
                    self.sessions
                        .lock()
                        .unwrap()
                        .insert(session.clone(), cwd.to_string());
                    self.respond(&id, json!({"sessionId": session}));
                } else {
                    let session = params["sessionId"].as_str().unwrap_or("").to_string();
                    self.sessions
                        .lock()
                        .unwrap()
                        .insert(session.clone(), cwd.to_string());
                    if self.bug != "no-replay" {
                        self.update(&session, json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "earlier"}}));
                        self.say(&session, "earlier answer");
                    }
                    self.respond(&id, json!({}));
                }
            }
            "session/prompt" => {
                let session = params["sessionId"].as_str().unwrap_or("").to_string();
                if !self.sessions.lock().unwrap().contains_key(&session)
                    && self.bug != "unknown-session-ok"
                {
                    self.error(&id, -32002, "resource not found");
                    return;
                }
                let text: String = params["prompt"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|b| b["text"].as_str())
                    .collect();
                let me = self.clone();
                tokio::spawn(async move { me.turn(id, session, text).await });
            }
            _ => {
                let code = if self.bug == "wrong-error-code" {
                    -32603
                } else {
                    -32601
                };
                self.error(&id, code, "method not found");
            }
        }
    }

    fn notification(&self, method: &str, params: &Value) {
        if method == "session/cancel"
            && let Some(s) = params["sessionId"].as_str()
        {
            self.cancelled.lock().unwrap().insert(s.to_string());
        }
        if self.bug == "answer-notification" {
            self.send(json!({"jsonrpc": "2.0", "id": null, "result": {}}));
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    acp_host::supervise_if_requested();
    let name = std::env::args().nth(1).unwrap_or_default();
    let Some(bug) = BUGS.iter().copied().find(|b| *b == name) else {
        eprintln!("usage: acp-check-mutant BUG (one of {})", BUGS.join(", "));
        std::process::exit(2);
    };
    let (out, mut rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = rx.recv().await {
            if stdout
                .write_all(format!("{line}\n").as_bytes())
                .await
                .is_err()
            {
                break;
            }
            let _ = stdout.flush().await;
        }
    });
    if bug == "stdout-noise" {
        let _ = out.send("debug: acp-check-mutant starting".to_string());
    }
    let agent = Agent {
        bug,
        out,
        pending: Arc::default(),
        next: Arc::new(AtomicU64::new(1)),
        sessions: Arc::default(),
        cancelled: Arc::default(),
    };
    let mut lines = BufReader::new(tokio::io::stdin()).split(b'\n');
    while let Ok(Some(line)) = lines.next_segment().await {
        let line = String::from_utf8_lossy(&line).into_owned();
        agent.handle(line.trim_end_matches('\r'));
    }
    if bug == "no-exit-on-eof" {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
    drop(agent);
    let _ = writer.await;
}
