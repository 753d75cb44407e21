//! Protocol v2 on the wire: the agent answers a client that asks for v2 in
//! v2 (and a v1 client in v1, as the other modules test). Each test writes
//! JSON lines to the built agent and compares what comes back, exactly,
//! with the ids the agent makes up (session, messages) replaced by stable
//! names in order of appearance.

use crate::support;

use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::*;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};

/// The agent binary spoken to line by line.
struct Wire {
    _child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: Lines<BufReader<tokio::process::ChildStdout>>,
    next_id: u64,
    /// The names given to made-up ids, by id.
    names: HashMap<String, String>,
    _data: tempfile::TempDir,
}

impl Wire {
    /// Starts the agent with `env`, a data directory of its own and `cwd`
    /// as its home.
    async fn start(env: &[(&str, &str)]) -> Wire {
        let data = tempfile::tempdir().unwrap();
        let mut cmd = tokio::process::Command::new(agent_bin());
        cmd.arg("--data-dir")
            .arg(data.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", data.path())
            .env("XDG_CONFIG_HOME", data.path().join("config"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Wire {
            _child: child,
            stdin,
            lines,
            next_id: 1,
            names: HashMap::new(),
            _data: data,
        }
    }

    async fn send(&mut self, message: Value) {
        self.stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }

    /// Sends a request; its id.
    async fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// The next line from the agent, with made-up ids named.
    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
            .await
            .expect("the agent says something")
            .unwrap()
            .expect("the agent keeps its stdout open");
        let mut value: Value = serde_json::from_str(&line).unwrap();
        self.name_ids(&mut value);
        value
    }

    /// Lines up to and including the first that `done` accepts.
    async fn until(&mut self, done: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let m = self.recv().await;
            let last = done(&m);
            seen.push(m);
            if last {
                return seen;
            }
        }
    }

    /// Lines up to and including the answer to request `id`.
    async fn answer(&mut self, id: u64) -> Vec<Value> {
        self.until(|m| m["id"] == id && m.get("method").is_none())
            .await
    }

    /// Replaces session and message ids with `S1`, `M1`, … in order of
    /// appearance.
    fn name_ids(&mut self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    let prefix = match key.as_str() {
                        "sessionId" => Some("S"),
                        "messageId" => Some("M"),
                        _ => None,
                    };
                    match (prefix, v.as_str()) {
                        (Some(prefix), Some(id)) => {
                            let n = self.names.len() + 1;
                            let name = self
                                .names
                                .entry(id.to_string())
                                .or_insert_with(|| format!("{prefix}{n}"))
                                .clone();
                            *v = Value::String(name);
                        }
                        _ => self.name_ids(v),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.name_ids(v)),
            _ => {}
        }
    }

    /// The real id named `name`.
    fn real(&self, name: &str) -> String {
        self.names
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(id, _)| id.clone())
            .unwrap_or_else(|| panic!("no id named {name}"))
    }

    /// `initialize` asking for v2, then `session/new` in `cwd`: the session's
    /// real id.
    async fn open(&mut self, cwd: &Path) -> String {
        let id = self
            .request(
                "initialize",
                json!({"protocolVersion": 2, "info": {"name": "wire-test", "version": "0"}}),
            )
            .await;
        let init = self.answer(id).await;
        assert_eq!(init.last().unwrap()["result"]["protocolVersion"], 2);
        let id = self.request("session/new", json!({"cwd": cwd})).await;
        let new = self.answer(id).await;
        assert_eq!(new.len(), 1, "nothing before the answer: {new:#?}");
        assert_eq!(new[0]["result"]["sessionId"], "S1");
        self.real("S1")
    }
}

/// The `params.update` of a session update line.
fn update(m: &Value) -> &Value {
    &m["params"]["update"]
}

fn is_idle(m: &Value) -> bool {
    update(m)["sessionUpdate"] == "state_update" && update(m)["state"] == "idle"
}

fn temp_cwd() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    (dir, cwd)
}

#[tokio::test]
async fn initialize_answers_v2_with_sessions_and_auth_methods() {
    let mock = MockLlm::start(vec![]).await;
    let mut w = Wire::start(&openai_env(&mock)).await;
    let id = w
        .request(
            "initialize",
            json!({"protocolVersion": 2, "info": {"name": "wire-test", "version": "0"}}),
        )
        .await;
    let answer = w.answer(id).await;
    let result = &answer[0]["result"];
    assert_eq!(result["protocolVersion"], 2);
    assert_eq!(
        result["info"],
        json!({"name": "acp-agent", "title": "ACP Agent", "version": env!("CARGO_PKG_VERSION")})
    );
    assert_eq!(
        result["capabilities"],
        json!({"session": {
            "prompt": {"embeddedContext": {}},
            "mcp": {"stdio": {}, "http": {}},
            "delete": {},
            "additionalDirectories": {}
        }})
    );
    // v1's methods, as v2 says them: `methodId`, `type: agent`.
    let methods: Vec<(&str, &str)> = result["authMethods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["type"].as_str().unwrap(), m["methodId"].as_str().unwrap()))
        .collect();
    assert_eq!(
        methods,
        [
            ("agent", "environment"),
            ("agent", "openai-api-key"),
            ("agent", "anthropic-api-key")
        ]
    );
    assert_eq!(
        result["authMethods"][1]["_meta"]["env_var"]["vars"][0]["name"],
        "OPENAI_API_KEY"
    );
    // auth/login is v1's authenticate.
    let id = w
        .request("auth/login", json!({"methodId": "environment"}))
        .await;
    assert_eq!(
        w.answer(id).await,
        [json!({"jsonrpc": "2.0", "id": id, "result": {}})]
    );
}

#[tokio::test]
async fn a_turn_is_acknowledged_then_streamed_up_to_idle() {
    let mock = MockLlm::start(vec![text_reply("Hello there")]).await;
    let (_dir, cwd) = temp_cwd();
    let mut w = Wire::start(&openai_env(&mock)).await;
    let sid = w.open(&cwd).await;
    let id = w
        .request(
            "session/prompt",
            json!({"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    let seen = w.until(is_idle).await;
    let title = update(&seen[3])["updatedAt"].clone();
    assert_eq!(
        seen,
        [
            note(json!({"sessionUpdate": "user_message", "messageId": "M2",
                "content": [{"type": "text", "text": "hi"}]})),
            json!({"jsonrpc": "2.0", "id": id, "result": {"messageId": "M2"}}),
            note(json!({"sessionUpdate": "state_update", "state": "running"})),
            note(
                json!({"sessionUpdate": "session_info_update", "title": "hi", "updatedAt": title})
            ),
            note(
                json!({"sessionUpdate": "agent_message_chunk", "messageId": "M3",
                "content": {"type": "text", "text": "Hello there"}})
            ),
            note(json!({"sessionUpdate": "usage_update", "used": 15, "size": 128000})),
            note(
                json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn",
                "_meta": {"usage": {"totalTokens": 15, "inputTokens": 10, "outputTokens": 5}}})
            ),
        ]
    );
}

/// A `session/update` line of session `S1`.
fn note(update: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "session/update",
        "params": {"sessionId": "S1", "update": update}})
}

#[tokio::test]
async fn an_edit_asks_with_its_subject_and_shows_a_structured_file_change() {
    let mock = MockLlm::start(vec![
        tool_reply(
            "call_1",
            "edit_file",
            json!({"path": "a.txt", "old_string": "one", "new_string": "two"}),
        ),
        text_reply("done"),
    ])
    .await;
    let (_dir, cwd) = temp_cwd();
    let file = cwd.join("a.txt");
    std::fs::write(&file, "one\n").unwrap();
    let path = file.display().to_string();
    let mut w = Wire::start(&openai_env(&mock)).await;
    let sid = w.open(&cwd).await;
    w.request(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "edit"}]}),
    )
    .await;
    let seen = w
        .until(|m| m["method"] == "session/request_permission")
        .await;
    // The call is upserted by its id before the question.
    assert_eq!(
        seen[4],
        note(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "call_1-1",
            "status": "pending", "title": "Edit a.txt", "kind": "edit", "name": "edit_file",
            "locations": [{"path": path}],
            "rawInput": {"path": "a.txt", "old_string": "one", "new_string": "two"}})
        )
    );
    let asked = seen.last().unwrap().clone();
    // The patch names the file by its absolute path, without Git's `a/` and
    // `b/` prefixes, as v2's `git_patch` requires.
    let patch =
        format!("diff --git {path} {path}\n--- {path}\n+++ {path}\n@@ -1 +1 @@\n-one\n+two\n");
    let change = json!({"type": "diff",
        "changes": [{"operation": "modify", "path": path, "fileType": "text"}],
        "patch": {"format": "git_patch", "text": patch}});
    let covers = "edits in the working directory";
    assert_eq!(
        asked,
        json!({"jsonrpc": "2.0", "id": asked["id"], "method": "session/request_permission",
        "params": {
            "sessionId": "S1",
            "title": "Edit a.txt",
            "description": format!("Always allowing or rejecting covers {covers}."),
            "subject": {"type": "tool_call", "toolCall": {"toolCallId": "call_1-1", "content": [change]}},
            "options": [
                {"optionId": "allow_once", "name": "Allow", "kind": "allow_once"},
                {"optionId": "allow_always", "name": format!("Always allow {covers}"), "kind": "allow_always"},
                {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
                {"optionId": "reject_always", "name": format!("Always reject {covers}"), "kind": "reject_always"}
            ]
        }})
    );
    w.send(json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}}))
        .await;
    let rest = w.until(is_idle).await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "two\n");
    assert_eq!(
        rest,
        [
            note(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "call_1-1",
                "status": "in_progress"})
            ),
            note(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "call_1-1",
                "status": "completed", "content": [change],
                "rawOutput": {"output": format!("Updated {path}.")}})
            ),
            // Text after a tool call is a new message.
            note(
                json!({"sessionUpdate": "agent_message_chunk", "messageId": "M3",
                "content": {"type": "text", "text": "done"}})
            ),
            note(json!({"sessionUpdate": "usage_update", "used": 15, "size": 128000})),
            note(
                json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn",
                "_meta": {"usage": {"totalTokens": 15, "inputTokens": 10, "outputTokens": 5}}})
            ),
        ]
    );
}

#[tokio::test]
async fn a_resumed_session_replays_whole_messages_then_its_state() {
    let mock = MockLlm::start(vec![text_reply("Hello there")]).await;
    let (_dir, cwd) = temp_cwd();
    let mut w = Wire::start(&openai_env(&mock)).await;
    let sid = w.open(&cwd).await;
    w.request(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}),
    )
    .await;
    w.until(is_idle).await;
    let id = w.request("session/close", json!({"sessionId": sid})).await;
    assert_eq!(
        w.answer(id).await,
        [json!({"jsonrpc": "2.0", "id": id, "result": {}})]
    );
    let id = w
        .request(
            "session/resume",
            json!({"sessionId": sid, "cwd": cwd, "replayFrom": {"type": "start"}}),
        )
        .await;
    let seen = w.answer(id).await;
    let commands = json!([
        {"type": "command", "name": "compact",
         "description": "Summarise the conversation so far and continue from the summary, freeing context",
         "input": {"type": "text", "hint": "what the summary should keep (optional)"}},
        {"type": "command", "name": "init",
         "description": "Explore the project and write an AGENTS.md describing it for coding agents",
         "input": {"type": "text", "hint": "extra instructions (optional)"}}
    ]);
    assert_eq!(
        seen[..6],
        [
            note(json!({"sessionUpdate": "user_message", "messageId": "M4",
                "content": [{"type": "text", "text": "hi"}]})),
            note(json!({"sessionUpdate": "agent_message", "messageId": "M5",
                "content": [{"type": "text", "text": "Hello there"}]})),
            note(json!({"sessionUpdate": "session_info_update", "title": "hi"})),
            note(json!({"sessionUpdate": "usage_update", "used": 15, "size": 128000})),
            note(
                json!({"sessionUpdate": "available_commands_update", "availableCommands": commands})
            ),
            note(json!({"sessionUpdate": "state_update", "state": "idle"})),
        ]
    );
    let result = &seen[6]["result"];
    assert_eq!(result["availableCommands"], commands);
    let options = result["configOptions"].as_array().unwrap();
    assert_eq!(options[0]["configId"], "mode");
    assert_eq!(options[0]["currentValue"], "ask");
    assert_eq!(options[1]["configId"], "model");
    assert_eq!(seen.len(), 7);
}

#[tokio::test]
async fn a_v1_method_on_a_v2_connection_is_an_error_and_the_connection_goes_on() {
    let mock = MockLlm::start(vec![]).await;
    let (_dir, cwd) = temp_cwd();
    let mut w = Wire::start(&openai_env(&mock)).await;
    let sid = w.open(&cwd).await;
    for (method, params) in [
        (
            "session/set_mode",
            json!({"sessionId": sid, "modeId": "auto"}),
        ),
        (
            "session/load",
            json!({"sessionId": sid, "cwd": cwd, "mcpServers": []}),
        ),
        ("authenticate", json!({"methodId": "environment"})),
    ] {
        let id = w.request(method, params).await;
        let reason = format!(
            "`{method}` is a method of protocol version 1; this connection speaks version 2"
        );
        assert_eq!(
            w.answer(id).await,
            [json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601,
                "message": "Method not found",
                "data": {"method": method, "protocolVersion": 2, "reason": reason}}})]
        );
    }
    // The mode is a config option on v2.
    let id = w
        .request(
            "session/set_config_option",
            json!({"sessionId": sid, "configId": "mode", "type": "id", "value": "auto"}),
        )
        .await;
    let answer = w.answer(id).await;
    let result = &answer.last().unwrap()["result"];
    assert_eq!(
        result["configOptions"][0]["currentValue"], "auto",
        "{answer:#?}"
    );
}

#[tokio::test]
async fn cancel_ends_the_turn_with_idle_cancelled() {
    let mock = MockLlm::start(vec![Reply::SseHang(vec![text("Thinking about")])]).await;
    let (_dir, cwd) = temp_cwd();
    let mut w = Wire::start(&openai_env(&mock)).await;
    let sid = w.open(&cwd).await;
    w.request(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}),
    )
    .await;
    w.until(|m| update(m)["sessionUpdate"] == "agent_message_chunk")
        .await;
    w.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}))
        .await;
    assert_eq!(
        w.recv().await,
        note(json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}))
    );
}

/// Each tool call with every upsert applied (fields set replace, as v2 says).
fn final_tool_calls(seen: &[Value]) -> Vec<Value> {
    let mut calls: Vec<Value> = Vec::new();
    for m in seen {
        let u = update(m);
        if u["sessionUpdate"] != "tool_call_update" {
            continue;
        }
        let id = &u["toolCallId"];
        let call = match calls.iter_mut().find(|c| &c["toolCallId"] == id) {
            Some(c) => c,
            None => {
                calls.push(json!({}));
                calls.last_mut().unwrap()
            }
        };
        for (k, v) in u.as_object().unwrap() {
            if k != "sessionUpdate" {
                call[k] = v.clone();
            }
        }
    }
    calls
}

/// v2 clients lend no terminals: a command runs in the agent's own
/// (acp-host), after the user allowed it, asked with the command as subject.
#[tokio::test]
async fn a_command_runs_on_the_agents_own_host_after_permission() {
    let mock = MockLlm::start(vec![
        tool_reply(
            "call_1",
            "run_command",
            json!({"command": "echo hi > out.txt; echo done"}),
        ),
        text_reply("ok"),
    ])
    .await;
    let (_dir, cwd) = temp_cwd();
    let mut w = Wire::start(&openai_env(&mock)).await;
    let sid = w.open(&cwd).await;
    w.request(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "run"}]}),
    )
    .await;
    let seen = w
        .until(|m| m["method"] == "session/request_permission")
        .await;
    let asked = seen.last().unwrap().clone();
    assert_eq!(
        asked["params"]["title"],
        "Run `echo hi > out.txt; echo done`"
    );
    assert_eq!(
        asked["params"]["subject"],
        json!({"type": "command", "command": "echo hi > out.txt; echo done",
            "cwd": cwd, "toolCallId": "call_1-1"})
    );
    assert!(
        !cwd.join("out.txt").exists(),
        "nothing runs before the answer"
    );
    w.send(json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}}))
        .await;
    let rest = w.until(is_idle).await;
    assert_eq!(
        std::fs::read_to_string(cwd.join("out.txt")).unwrap(),
        "hi\n"
    );
    assert!(
        !rest.iter().any(|m| m["method"]
            .as_str()
            .is_some_and(|m| m.starts_with("terminal/"))),
        "no terminal asked of the client: {rest:#?}"
    );
    let calls = final_tool_calls(&[seen, rest.clone()].concat());
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["status"], "completed", "{calls:#?}");
    assert_eq!(calls[0]["kind"], "execute");
    let shown = calls[0]["content"][0]["content"]["text"].as_str().unwrap();
    assert!(shown.contains("done"), "{shown}");
    let sent = tool_results(&mock.requests()[1]);
    assert!(sent[0].contains("done"), "{sent:?}");
    assert_eq!(
        rest.last().unwrap(),
        &note(
            json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn",
            "_meta": {"usage": {"totalTokens": 15, "inputTokens": 10, "outputTokens": 5}}})
        )
    );
}

/// The same permission rules as v1: read-only refuses edits and commands
/// without asking, and a file is read from the agent's own host.
#[tokio::test]
async fn read_only_refuses_without_asking_and_files_are_read_locally() {
    let mock = MockLlm::start(vec![
        tool_reply("call_1", "read_file", json!({"path": "a.txt"})),
        tool_reply(
            "call_2",
            "write_file",
            json!({"path": "b.txt", "content": "x"}),
        ),
        text_reply("ok"),
    ])
    .await;
    let (_dir, cwd) = temp_cwd();
    std::fs::write(cwd.join("a.txt"), "alpha\n").unwrap();
    let mut w = Wire::start(&openai_env(&mock)).await;
    let sid = w.open(&cwd).await;
    let id = w
        .request(
            "session/set_config_option",
            json!({"sessionId": sid, "configId": "mode", "type": "id", "value": "read-only"}),
        )
        .await;
    w.answer(id).await;
    w.request(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}),
    )
    .await;
    let seen = w.until(is_idle).await;
    assert!(
        !seen
            .iter()
            .any(|m| m["method"] == "session/request_permission"),
        "{seen:#?}"
    );
    assert!(!cwd.join("b.txt").exists());
    let sent = tool_results(&mock.requests()[2]);
    assert!(sent[0].contains("alpha"), "{sent:?}");
    assert!(sent[1].contains("read-only mode"), "{sent:?}");
    let calls = final_tool_calls(&seen);
    assert_eq!(calls[0]["status"], "completed");
    assert_eq!(calls[1]["status"], "failed");
}

/// A model failure that a v1 prompt answers with an error ends the v2 turn
/// with the stop reason `error` carrying that error, after the message
/// telling the user.
#[tokio::test]
async fn a_failed_turn_ends_idle_with_the_error() {
    let mock = MockLlm::start(vec![Reply::Status(400, error_body("no such model"))]).await;
    let (_dir, cwd) = temp_cwd();
    let mut w = Wire::start(&openai_env(&mock)).await;
    let sid = w.open(&cwd).await;
    w.request(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}),
    )
    .await;
    let seen = w.until(is_idle).await;
    let idle = update(seen.last().unwrap());
    assert_eq!(idle["stopReason"], "error", "{idle:#}");
    assert_eq!(idle["error"]["code"], -32603, "{idle:#}");
    assert!(
        idle["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no such model"),
        "{idle:#}"
    );
    let told = &update(&seen[seen.len() - 2]);
    assert_eq!(told["sessionUpdate"], "agent_message_chunk");
    assert!(
        told["content"]["text"]
            .as_str()
            .unwrap()
            .contains("The turn stopped"),
        "{told:#}"
    );
}

/// A v1 client asking for a newer version (its `initialize` has no `info`)
/// is answered 1, as before the agent spoke v2; a v2 client asking for a
/// newer version gets 2.
#[tokio::test]
async fn a_newer_version_asked_for_gets_v1_or_v2_by_the_requests_shape() {
    let mock = MockLlm::start(vec![]).await;
    let mut w = Wire::start(&openai_env(&mock)).await;
    let id = w
        .request(
            "initialize",
            json!({"protocolVersion": 65535, "clientCapabilities": {}}),
        )
        .await;
    let answer = w.answer(id).await;
    assert_eq!(answer[0]["result"]["protocolVersion"], 1, "{answer:#?}");
    assert!(answer[0]["result"]["agentCapabilities"].is_object());
    let mut w = Wire::start(&openai_env(&mock)).await;
    let id = w
        .request(
            "initialize",
            json!({"protocolVersion": 65535, "info": {"name": "x", "version": "0"}}),
        )
        .await;
    let answer = w.answer(id).await;
    assert_eq!(answer[0]["result"]["protocolVersion"], 2, "{answer:#?}");
}

/// A second prompt while a turn runs is refused before any
/// acknowledgement; the running turn goes on to its own end.
#[tokio::test]
async fn a_prompt_during_a_turn_is_refused_and_the_turn_goes_on() {
    let mock = MockLlm::start(vec![Reply::SseHang(vec![text("Working")])]).await;
    let (_dir, cwd) = temp_cwd();
    let mut w = Wire::start(&openai_env(&mock)).await;
    let sid = w.open(&cwd).await;
    let prompt = json!({"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]});
    w.request("session/prompt", prompt.clone()).await;
    w.until(|m| update(m)["sessionUpdate"] == "agent_message_chunk")
        .await;
    let id = w.request("session/prompt", prompt).await;
    assert_eq!(
        w.answer(id).await,
        [json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600,
            "message": "Invalid request",
            "data": {"message": "a prompt turn is already running in this session"}}})]
    );
    w.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}))
        .await;
    assert_eq!(
        w.recv().await,
        note(json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}))
    );
}

/// v2's MCP servers (`type: http`, `type: stdio`) are the session's, as on
/// v1: the HTTP server's tool is offered and called, the broken stdio
/// server is reported in the turn.
#[tokio::test]
async fn mcp_servers_of_a_v2_session_are_connected() {
    let fixture = McpFixture::start().await;
    let mock = MockLlm::start(vec![
        tool_reply("m1", "mcp__fixture__shout", json!({"text": "hi there"})),
        text_reply("done"),
    ])
    .await;
    let (_dir, cwd) = temp_cwd();
    let mut w = Wire::start(&openai_env(&mock)).await;
    let id = w
        .request(
            "initialize",
            json!({"protocolVersion": 2, "info": {"name": "wire-test", "version": "0"}}),
        )
        .await;
    w.answer(id).await;
    let id = w
        .request(
            "session/new",
            json!({"cwd": cwd, "mcpServers": [
                {"type": "http", "name": "fixture", "url": fixture.url},
                {"type": "stdio", "name": "broken", "command": "/nonexistent/mcp-server"}
            ]}),
        )
        .await;
    let created = w.answer(id).await;
    let sid = created[0]["result"]["sessionId"].clone();
    assert!(sid.is_string(), "{created:#?}");
    let sid = w.real(sid.as_str().unwrap());
    w.request(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "shout"}]}),
    )
    .await;
    let seen = w.until(is_idle).await;
    assert_eq!(tool_results(&mock.requests()[1]), ["HI THERE"]);
    let said: String = seen
        .iter()
        .filter(|m| update(m)["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|m| update(m)["content"]["text"].as_str())
        .collect();
    assert!(said.contains("MCP server broken"), "{said}");
    let calls = final_tool_calls(&seen);
    assert_eq!(calls[0]["title"], "fixture: shout");
    assert_eq!(calls[0]["status"], "completed");
}

/// A v2 prompt's blocks reach the model as a v1 prompt's do, and are echoed
/// unchanged in the user message.
#[tokio::test]
async fn prompt_blocks_reach_the_model_and_are_echoed() {
    let mock = MockLlm::start(vec![text_reply("ok")]).await;
    let (_dir, cwd) = temp_cwd();
    let mut w = Wire::start(&openai_env(&mock)).await;
    let sid = w.open(&cwd).await;
    let blocks = json!([
        {"type": "text", "text": "look at"},
        {"type": "resource_link", "name": "main.rs", "uri": "file:///w/src/main.rs", "size": 12},
        {"type": "resource", "resource": {"uri": "file:///w/a.txt", "text": "alpha"}}
    ]);
    w.request(
        "session/prompt",
        json!({"sessionId": sid, "prompt": blocks}),
    )
    .await;
    let seen = w.until(is_idle).await;
    assert_eq!(update(&seen[0])["content"], blocks);
    let sent = &mock.requests()[0]["messages"];
    let user = sent
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "user")
        .unwrap();
    assert_eq!(
        user["content"],
        "look at\n\n[referenced file main.rs at /w/src/main.rs: use read_file to read it]\n\n\
         <context uri=\"file:///w/a.txt\">\nalpha\n</context>"
    );
}

/// A cancel while the user is asked withdraws the question and ends the
/// turn idle/cancelled; nothing is written.
#[tokio::test]
async fn cancel_during_a_permission_question_withdraws_it() {
    let mock = MockLlm::start(vec![tool_reply(
        "call_1",
        "write_file",
        json!({"path": "b.txt", "content": "x"}),
    )])
    .await;
    let (_dir, cwd) = temp_cwd();
    let mut w = Wire::start(&openai_env(&mock)).await;
    let sid = w.open(&cwd).await;
    w.request(
        "session/prompt",
        json!({"sessionId": sid, "prompt": [{"type": "text", "text": "write"}]}),
    )
    .await;
    let asked = w
        .until(|m| m["method"] == "session/request_permission")
        .await
        .pop()
        .unwrap();
    w.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}))
        .await;
    let rest = w.until(is_idle).await;
    assert_eq!(
        rest[0],
        json!({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": asked["id"]}}),
        "{rest:#?}"
    );
    assert_eq!(
        rest.last().unwrap(),
        &note(json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}))
    );
    let calls = final_tool_calls(&rest);
    assert_eq!(calls[0]["status"], "failed", "{rest:#?}");
    assert!(!cwd.join("b.txt").exists());
}
