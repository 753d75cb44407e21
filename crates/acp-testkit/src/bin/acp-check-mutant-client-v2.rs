//! `acp-check-mutant-client-v2 BUG AGENT [ARGS…]`: a small headless client
//! speaking ACP protocol version 2, written on raw JSON-RPC, with one
//! deliberate protocol bug — a **test fixture** for `acp check client
//! --protocol 2` (not for end users). `good` has none.
//!
//! It starts the agent in the current directory, initializes with version
//! 2, opens a session there, sends one prompt, answers a permission
//! question with its first allowing option, and exits at the session's
//! idle `state_update`.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

/// The bugs, one per mutant.
const BUGS: &[&str] = &[
    // None.
    "good",
    // Initializes with v1's fields (`clientInfo`, no `info`) while asking for 2.
    "v1-fields",
    // Answers a permission question with an option it was not offered.
    "unoffered-option",
    // Sends v1's `session/set_mode` on the v2 connection.
    "v1-method",
];

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(bug) = args.first().and_then(|b| BUGS.iter().find(|x| *x == b)) else {
        eprintln!(
            "usage: acp-check-mutant-client-v2 BUG AGENT [ARGS…], BUG one of: {}",
            BUGS.join(", ")
        );
        std::process::exit(2);
    };
    let Some((program, rest)) = args[1..].split_first() else {
        eprintln!("acp-check-mutant-client-v2: no agent command");
        std::process::exit(2);
    };
    let mut child = Command::new(program)
        .args(rest)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the agent starts");
    let mut stdin = child.stdin.take().expect("piped");
    let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
    let cwd = std::env::current_dir().unwrap().display().to_string();
    let init = if *bug == "v1-fields" {
        json!({"protocolVersion": 2, "clientInfo": {"name": "mutant", "version": "0"}, "clientCapabilities": {}})
    } else {
        json!({"protocolVersion": 2, "info": {"name": "mutant", "version": "0"}, "capabilities": {}})
    };
    let mut send = Vec::new();
    send.push(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}));
    let mut session = String::new();
    let mut step = 0;
    loop {
        for msg in send.drain(..) {
            let line = format!("{msg}\n");
            if stdin.write_all(line.as_bytes()).await.is_err() {
                return;
            }
        }
        let _ = stdin.flush().await;
        let Ok(Some(line)) = lines.next_line().await else {
            return;
        };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        match msg.get("method").and_then(Value::as_str) {
            None if step == 0 && msg["id"] == 1 => {
                step = 1;
                send.push(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
                    "params": {"cwd": cwd, "mcpServers": []}}));
            }
            None if step == 1 && msg["id"] == 2 => {
                step = 2;
                session = msg["result"]["sessionId"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                if *bug == "v1-method" {
                    send.push(
                        json!({"jsonrpc": "2.0", "id": 4, "method": "session/set_mode",
                        "params": {"sessionId": session, "modeId": "default"}}),
                    );
                }
                send.push(json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
                    "params": {"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]}}));
            }
            Some("session/request_permission") => {
                let options = msg["params"]["options"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let allow = options
                    .iter()
                    .find(|o| o["kind"].as_str().is_some_and(|k| k.starts_with("allow")))
                    .or(options.first())
                    .map(|o| o["optionId"].clone())
                    .unwrap_or(Value::Null);
                let chosen = if *bug == "unoffered-option" {
                    json!("never-offered")
                } else {
                    allow
                };
                send.push(json!({"jsonrpc": "2.0", "id": msg["id"],
                    "result": {"outcome": {"outcome": "selected", "optionId": chosen}}}));
            }
            Some("session/update")
                if msg["params"]["sessionId"] == json!(session)
                    && msg["params"]["update"]["sessionUpdate"] == "state_update"
                    && msg["params"]["update"]["state"] == "idle" =>
            {
                return;
            }
            Some(_) if msg.get("id").is_some() => {
                send.push(json!({"jsonrpc": "2.0", "id": msg["id"],
                    "error": {"code": -32601, "message": "Method not found"}}));
            }
            _ => {}
        }
    }
}
