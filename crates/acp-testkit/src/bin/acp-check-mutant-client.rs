//! `acp-check-mutant-client BUG AGENT [ARGS…]`: a small headless ACP client,
//! written on raw JSON-RPC, with one deliberate protocol bug — a **test
//! fixture** for the mutation tests of `acp check client` (not for end
//! users). `good` has none.
//!
//! It starts the agent in the current directory, initializes (fs read and
//! write, terminals, form and URL elicitation), opens a session there, sends one prompt and exits when
//! the turn ends. File and terminal calls are carried out by `acp-host`
//! (through `acp_check::agent::Acting`); a permission request is answered
//! with its first allowing option (else its first option), except one whose
//! tool call title says it is "waiting for a person": that one stays
//! pending, as a question to a person would. A form elicitation is accepted
//! with a value for every field that fits its schema (the first value
//! offered, a number within the bounds), a URL one accepted without content.
//! SIGINT sends `session/cancel`
//! and answers the pending questions `cancelled`.
//!
//! Two bugs have the shapes of broken peers the checker must not wait out:
//! `wrong-ids` answers every request with an id no request had,
//! `stops-answering` answers no request at all.
//!
//! `acp-check-mutant-client relay SOCKET` is the checking agent's relay
//! (what `acp check __agent` is in `acp`), for the tests of this crate. It
//! also serves as the terminal supervisor (`acp_host::supervise_if_requested`).

use acp_check::agent::Acting;
use acp_host::SupervisorProgram;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::mpsc;

/// The bugs, one per mutant.
const BUGS: &[&str] = &[
    "good",
    "fake-write",
    "empty-missing",
    "unoffered-option",
    "byte-cut",
    "truncated-flag",
    "released-accepted",
    "numeric-ids",
    "stdout-noise",
    "wrong-error-code",
    "cancel-selects",
    "elicitation-wrong-type",
    "elicitation-missing",
    "elicitation-unoffered",
    "elicitation-unsupported",
    "wrong-ids",
    "stops-answering",
];

struct Client {
    bug: &'static str,
    out: mpsc::UnboundedSender<String>,
    acting: Arc<Acting>,
    /// Permission requests held for "a person", by id.
    held: Mutex<Vec<(Value, Value)>>,
    cancelled: Mutex<bool>,
    /// The `outputByteLimit` of each terminal (the byte-cut bugs apply it themselves).
    limits: Mutex<HashMap<String, usize>>,
    released: Mutex<HashSet<String>>,
}

impl Client {
    fn send(&self, v: Value) {
        let _ = self.out.send(v.to_string());
    }

    fn answer(&self, id: &Value, answer: Result<Value, Value>) {
        if self.bug == "stops-answering" {
            return;
        }
        let id = if self.bug == "wrong-ids" {
            match id {
                Value::Number(n) => json!(n.as_i64().unwrap_or(0) + 1000),
                Value::String(s) => json!(format!("{s}-wrong")),
                other => other.clone(),
            }
        } else if self.bug == "numeric-ids"
            && let Some(n) = id.as_str().and_then(|s| s.parse::<u64>().ok())
        {
            json!(n)
        } else {
            id.clone()
        };
        match answer {
            Ok(result) => self.send(json!({"jsonrpc": "2.0", "id": id, "result": result})),
            Err(error) => self.send(json!({"jsonrpc": "2.0", "id": id, "error": error})),
        }
    }

    fn permission(&self, id: Value, params: Value) {
        if *self.cancelled.lock().unwrap() {
            self.answer(&id, Ok(json!({"outcome": {"outcome": "cancelled"}})));
            return;
        }
        let title = params["toolCall"]["title"].as_str().unwrap_or("");
        if title.contains("waiting for a person") {
            self.held.lock().unwrap().push((id, params));
            return;
        }
        let options = params["options"].as_array().cloned().unwrap_or_default();
        let pick = options
            .iter()
            .find(|o| o["kind"] == "allow_once" || o["kind"] == "allow_always")
            .or(options.first());
        let outcome = match pick.and_then(|o| o["optionId"].as_str()) {
            Some(_) if self.bug == "unoffered-option" => {
                json!({"outcome": "selected", "optionId": "allow"})
            }
            Some(option) => json!({"outcome": "selected", "optionId": option}),
            None => json!({"outcome": "cancelled"}),
        };
        self.answer(&id, Ok(json!({"outcome": outcome})));
    }

    fn cancel(&self, session: &str) {
        *self.cancelled.lock().unwrap() = true;
        self.send(
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
        );
        for (id, params) in self.held.lock().unwrap().drain(..) {
            let outcome = if self.bug == "cancel-selects" {
                let first = params["options"][0]["optionId"].clone();
                json!({"outcome": "selected", "optionId": first})
            } else {
                json!({"outcome": "cancelled"})
            };
            self.answer(&id, Ok(json!({"outcome": outcome})));
        }
    }

    /// The answer to `elicitation/create`.
    fn elicitation(&self, params: &Value) -> Result<Value, Value> {
        if self.bug == "elicitation-unsupported" {
            return Err(json!({"code": -32601, "message": "method not found: elicitation/create"}));
        }
        if params["mode"] != "form" {
            return Ok(json!({"action": "accept"}));
        }
        let schema = &params["requestedSchema"];
        let required: Vec<&Value> = schema["required"]
            .as_array()
            .map(|r| r.iter().collect())
            .unwrap_or_default();
        let mut content = serde_json::Map::new();
        for (name, property) in schema["properties"].as_object().into_iter().flatten() {
            if self.bug == "elicitation-missing" && required.first() == Some(&&json!(name)) {
                continue;
            }
            if let Some(value) = self.fill(property) {
                content.insert(name.clone(), value);
            }
        }
        Ok(json!({"action": "accept", "content": content}))
    }

    /// A value for one field of a form; none for a type it does not know.
    fn fill(&self, property: &Value) -> Option<Value> {
        let first_offered = |s: &Value| {
            s["enum"][0]
                .as_str()
                .or(s["oneOf"][0]["const"].as_str())
                .or(s["anyOf"][0]["const"].as_str())
                .map(str::to_string)
        };
        Some(match property["type"].as_str().unwrap_or_default() {
            "string" => match first_offered(property) {
                Some(_) if self.bug == "elicitation-unoffered" => json!("not-offered"),
                Some(value) => json!(value),
                None => json!("mutant"),
            },
            "integer" if self.bug == "elicitation-wrong-type" => json!("1"),
            "integer" => json!(property["minimum"].as_i64().unwrap_or(0).max(1)),
            "number" => {
                let min = property["minimum"].as_f64().unwrap_or(0.0);
                let max = property["maximum"].as_f64().unwrap_or(min + 1.0);
                json!((min + max) / 2.0)
            }
            "boolean" => json!(property["default"].as_bool().unwrap_or(true)),
            "array" => match first_offered(&property["items"]) {
                Some(value) => json!([value]),
                None => json!([]),
            },
            _ => return None,
        })
    }

    async fn request(self: Arc<Self>, id: Value, method: String, mut params: Value) {
        if method == "elicitation/create" {
            let answer = self.elicitation(&params);
            self.answer(&id, answer);
            return;
        }
        if method == "session/request_permission" {
            if params["options"].is_array() && params["sessionId"].is_string() {
                self.permission(id, params);
            } else {
                let error =
                    json!({"code": -32602, "message": "invalid params: options must be a list"});
                self.answer(&id, Err(error));
            }
            return;
        }
        let terminal = params["terminalId"].as_str().unwrap_or("").to_string();
        let mut limit = None;
        if method == "terminal/create"
            && ["byte-cut", "truncated-flag"].contains(&self.bug)
            && let Some(l) = params
                .as_object_mut()
                .and_then(|p| p.remove("outputByteLimit"))
        {
            limit = l.as_u64().map(|l| l as usize);
        }
        if method == "terminal/output"
            && self.bug == "released-accepted"
            && self.released.lock().unwrap().contains(&terminal)
        {
            self.answer(&id, Ok(json!({"output": "", "truncated": false})));
            return;
        }
        if method == "fs/write_text_file" && self.bug == "fake-write" {
            self.answer(&id, Ok(json!({})));
            return;
        }
        let mut answer = (self.acting.answer())(method.clone(), params).await;
        match (method.as_str(), &mut answer) {
            ("fs/read_text_file", Err(_)) if self.bug == "empty-missing" => {
                answer = Ok(json!({"content": ""}));
            }
            ("terminal/create", Ok(r)) => {
                if let (Some(l), Some(t)) = (limit, r["terminalId"].as_str()) {
                    self.limits.lock().unwrap().insert(t.to_string(), l);
                }
            }
            ("terminal/output", Ok(r)) => {
                if let Some(&l) = self.limits.lock().unwrap().get(&terminal) {
                    let full = r["output"].as_str().unwrap_or("").to_string();
                    let over = full.len() > l;
                    if self.bug == "byte-cut" && over {
                        let bytes = &full.as_bytes()[full.len() - l..];
                        r["output"] = json!(String::from_utf8_lossy(bytes));
                        r["truncated"] = json!(true);
                    } else if over {
                        let mut cut = full.len() - l;
                        while !full.is_char_boundary(cut) {
                            cut += 1;
                        }
                        r["output"] = json!(&full[cut..]);
                        r["truncated"] = json!(false);
                    }
                }
            }
            ("terminal/release", Ok(_)) => {
                self.released.lock().unwrap().insert(terminal);
            }
            (_, Err(e)) if self.bug == "wrong-error-code" && e["code"] == -32601 => {
                e["code"] = json!(-32603);
            }
            _ => {}
        }
        self.answer(&id, answer);
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    acp_host::supervise_if_requested();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("relay") {
        let socket = args.get(1).cloned().unwrap_or_default();
        if let Err(e) = acp_check::client::relay::run(std::path::Path::new(&socket)) {
            eprintln!("acp-check-mutant-client relay: {e}");
            std::process::exit(1);
        }
        return;
    }
    let Some(bug) = BUGS
        .iter()
        .copied()
        .find(|b| Some(*b) == args.first().map(String::as_str))
    else {
        eprintln!(
            "usage: acp-check-mutant-client BUG AGENT [ARGS…] (BUG one of {})",
            BUGS.join(", ")
        );
        std::process::exit(2);
    };
    let agent: Vec<&String> = args[1..].iter().filter(|a| *a != "--").collect();
    let Some((program, rest)) = agent.split_first() else {
        eprintln!("acp-check-mutant-client: no agent command");
        std::process::exit(2);
    };
    let cwd = std::env::current_dir().expect("a current directory");
    let mut child = Command::new(program)
        .args(rest)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| {
            eprintln!("acp-check-mutant-client: cannot start {program}: {e}");
            std::process::exit(2);
        });
    let mut stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let (out, mut rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        while let Some(line) = rx.recv().await {
            if stdin
                .write_all(format!("{line}\n").as_bytes())
                .await
                .is_err()
            {
                break;
            }
            let _ = stdin.flush().await;
        }
    });
    if bug == "stdout-noise" {
        let _ = out.send("mutant client: starting up".to_string());
    }
    let acting = Acting::new(&cwd, SupervisorProgram::CurrentExe).expect("an acting client");
    let client = Arc::new(Client {
        bug,
        out,
        acting: acting.clone(),
        held: Mutex::default(),
        cancelled: Mutex::default(),
        limits: Mutex::default(),
        released: Mutex::default(),
    });
    client.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": true, "writeTextFile": true},
                "terminal": true,
                "elicitation": {"form": {}, "url": {}},
            },
            "clientInfo": {"name": "acp-check-mutant-client", "version": "0"},
        }}),
    );
    let mut interrupts =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).expect("SIGINT");
    let mut lines = BufReader::new(stdout).lines();
    let mut session = String::new();
    loop {
        let line = tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(line)) => line,
                _ => break,
            },
            _ = interrupts.recv() => {
                client.cancel(&session);
                continue;
            }
        };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            client.send(json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "parse error"}}));
            continue;
        };
        let id = msg.get("id").cloned();
        match (id, msg.get("method").and_then(Value::as_str)) {
            (Some(id), Some(method)) => {
                let params = msg.get("params").cloned().unwrap_or(Value::Null);
                tokio::spawn(client.clone().request(id, method.to_string(), params));
            }
            (Some(id), None) if id == 1 => {
                client.send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": cwd.display().to_string(), "mcpServers": []}}));
            }
            (Some(id), None) if id == 2 => {
                session = msg["result"]["sessionId"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                client.send(json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": session, "prompt": [{"type": "text", "text": "check me"}]}}));
            }
            (Some(id), None) if id == 3 => break,
            _ => {}
        }
    }
    acting.shutdown().await;
    drop(client);
    let _ = writer.await;
    let _ = child.wait().await;
}
