//! Our implementation against the Python SDK (`agent-client-protocol`,
//! pinned in `interop/python/requirements.txt`):
//!
//! - our `acp exec` against `interop/python/agent.py`;
//! - `interop/python/client.py` against our `acp-test-agent` and the
//!   `echo_agent` example;
//! - our runtime's `ClientSideConnection` against `interop/python/agent.py`.

use std::io::{BufRead, BufReader, Read};

use acp::schema::*;
use acp_interop::{
    Connected, Output, Sandbox, assert_code, assert_round_trip, binaries, logged, python, run,
    spawn_streaming,
};
use nix::sys::signal::{Signal, kill};
use serde_json::{Value, json};

fn agent() -> String {
    python().agent_command_line()
}

// ---------------------------------------------------------------------------
// Our `acp exec` against the Python SDK agent.

#[test]
fn acp_exec_streams_the_python_agents_echo_exactly() {
    let sb = Sandbox::new();
    let prompt = "Hello,  interop\tworld ünïcödé ✓";
    let out = run(sb.acp_exec(&agent(), &[prompt]));
    assert_code(&out, 0);
    assert_eq!(out.stdout, format!("{prompt}\n"));

    // What the SDK made of our requests (it validates them with pydantic).
    let log = sb.log();
    let init = logged(&log, "initialize");
    assert_eq!(init["protocolVersion"], 1, "{init}");
    assert_eq!(
        init["clientCapabilities"]["fs"]["readTextFile"], true,
        "{init}"
    );
    assert_eq!(
        init["clientCapabilities"]["fs"]["writeTextFile"], true,
        "{init}"
    );
    assert_eq!(init["clientInfo"]["name"], "acp", "{init}");
    let new = logged(&log, "session/new");
    assert_eq!(
        new,
        json!({ "cwd": sb.work().display().to_string(), "mcpServers": 0 })
    );
    assert_eq!(
        logged(&log, "session/prompt"),
        json!([{ "type": "text", "text": prompt }])
    );
    assert!(log.lines().any(|l| l == "stop end_turn"), "{log}");
}

#[test]
fn acp_exec_json_format_prints_the_python_agents_updates() {
    let sb = Sandbox::new();
    let out = run(sb.acp_exec(&agent(), &["--format", "json", "one two"]));
    assert_code(&out, 0);
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let chunk = |text: &str| {
        json!({
            "sessionId": "py-1",
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": { "type": "text", "text": text }
            }
        })
    };
    assert_eq!(
        lines,
        vec![
            chunk("one "),
            chunk("two"),
            chunk("\n"),
            json!({ "sessionId": "py-1", "stopReason": "end_turn" }),
        ]
    );
}

#[test]
fn acp_exec_approve_all_allows_the_python_agents_permission_request() {
    let sb = Sandbox::new();
    let out = run(sb.acp_exec(&agent(), &["--approve-all", "needs permission"]));
    assert_code(&out, 0);
    assert_eq!(out.stdout, "needs permission\npermission: selected allow\n");
    assert_eq!(
        logged(&sb.log(), "permission"),
        json!({ "outcome": "selected", "optionId": "allow" })
    );
}

#[test]
fn acp_exec_deny_all_rejects_the_python_agents_permission_request() {
    let sb = Sandbox::new();
    let out = run(sb.acp_exec(&agent(), &["--deny-all", "needs permission"]));
    assert_code(&out, 5);
    assert_eq!(
        out.stdout,
        "needs permission\npermission: selected reject\n"
    );
    assert_eq!(
        logged(&sb.log(), "permission"),
        json!({ "outcome": "selected", "optionId": "reject" })
    );
}

#[test]
fn acp_exec_serves_the_python_agents_file_reads() {
    let sb = Sandbox::new();
    let path = sb.write("notes.txt", "first line\nsecond line ✓\n");
    let prompt = format!("read {}", path.display());
    let out = run(sb.acp_exec(&agent(), &[&prompt]));
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        format!("{prompt}\nfile: first line\nsecond line ✓\n")
    );

    // A missing file: resource not found (-32002), with our message.
    let missing = sb.work().join("missing.txt");
    let prompt = format!("read {}", missing.display());
    let out = run(sb.acp_exec(&agent(), &[&prompt]));
    assert_code(&out, 0);
    let log = sb.log();
    let error = log
        .lines()
        .find_map(|l| l.strip_prefix("read error "))
        .unwrap_or_else(|| panic!("no read error logged:\n{log}"));
    assert!(error.starts_with("-32002 "), "{error}");
    let message = &error["-32002 ".len()..];
    assert_eq!(out.stdout, format!("{prompt}\nfile error: {message}\n"));
}

#[test]
fn acp_exec_ctrl_c_cancels_the_python_agents_turn() {
    let sb = Sandbox::new();
    let (running, stdout) = spawn_streaming(sb.acp_exec(&agent(), &["slow"]));
    let mut stdout = BufReader::new(stdout);
    let mut seen = String::new();
    while !seen.ends_with("tick 2\n") {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "acp ended early: {seen}"
        );
        seen.push_str(&line);
    }
    kill(running.pid(), Signal::SIGINT).unwrap();
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let out = running.finish();
    assert_code(&out, 130);
    assert!(out.stderr.contains("[stop] cancelled"), "{}", out.stderr);
    let log = sb.log();
    assert!(log.lines().any(|l| l == "session/cancel py-1"), "{log}");
    assert!(log.lines().any(|l| l == "stop cancelled"), "{log}");
}

// ---------------------------------------------------------------------------
// The Python SDK client against our agents.

fn python_client(sb: &Sandbox, options: &[&str], agent: &[&std::path::Path]) -> Output {
    run(sb.peer_client(python(), options, agent))
}

fn test_agent() -> [&'static std::path::Path; 1] {
    [binaries().test_agent.as_path()]
}

/// Fails on any complaint the SDK logged about a message it received
/// (a handler's pydantic validation error is logged with its traceback).
fn assert_sdk_accepted_everything(out: &Output) {
    for complaint in ["Traceback", "ValidationError", "Unhandled error"] {
        assert!(
            !out.stderr.contains(complaint),
            "the Python SDK complained:\n{}",
            out.stderr
        );
    }
}

#[test]
fn python_client_reads_the_test_agents_stream() {
    let sb = Sandbox::new();
    let out = python_client(&sb, &["--prompt", "stream"], &test_agent());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "Hello, world!\nSTOP end_turn\n");
    assert!(
        out.stderr
            .contains("info {'name': 'acp-test-agent', 'version': '0.1.0'}"),
        "{}",
        out.stderr
    );
    assert_sdk_accepted_everything(&out);
}

#[test]
fn python_client_accepts_the_test_agents_thoughts_plans_and_tool_calls() {
    let sb = Sandbox::new();
    for (prompt, stdout, notes) in [
        (
            "thought",
            "Thought about it.\nSTOP end_turn\n",
            &["agent_thought_chunk", "agent_thought_chunk"][..],
        ),
        ("plan", "Planned.\nSTOP end_turn\n", &["plan", "plan"][..]),
        (
            "tool",
            "Edited.\nSTOP end_turn\n",
            &[
                "tool_call call-1 pending",
                "tool_call_update call-1 in_progress",
                "tool_call_update call-1 completed",
            ][..],
        ),
    ] {
        let out = python_client(&sb, &["--prompt", prompt], &test_agent());
        assert_code(&out, 0);
        assert_eq!(out.stdout, stdout, "{prompt}");
        let seen: Vec<&str> = out
            .stderr
            .lines()
            .filter_map(|l| l.strip_prefix("[client] "))
            .filter(|l| {
                l.starts_with("agent_thought_chunk")
                    || l.starts_with("plan")
                    || l.starts_with("tool_call")
            })
            .collect();
        assert_eq!(seen, notes, "{prompt}: {}", out.stderr);
        assert_sdk_accepted_everything(&out);
    }
}

#[test]
fn python_client_answers_the_test_agents_permission_request() {
    let sb = Sandbox::new();
    let out = python_client(&sb, &["--prompt", "permission"], &test_agent());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "permission: selected allow\nSTOP end_turn\n");
    assert!(
        out.stderr.contains("[client] permission for call-p: allow"),
        "{}",
        out.stderr
    );
    assert_sdk_accepted_everything(&out);
}

#[test]
fn python_client_serves_the_test_agents_file_reads_and_writes() {
    let sb = Sandbox::new();
    let path = sb.write("notes.txt", "alpha\nbeta\ngamma\n");
    let p = path.display().to_string();

    let out = python_client(&sb, &["--prompt", &format!("read {p}")], &test_agent());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "alpha\nbeta\ngamma\nSTOP end_turn\n");

    let out = python_client(&sb, &["--prompt", &format!("read {p} 2 1")], &test_agent());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "beta\nSTOP end_turn\n");

    let target = sb.work().join("written.txt");
    let t = target.display().to_string();
    let out = python_client(
        &sb,
        &["--prompt", &format!("write {t} hello from rust")],
        &test_agent(),
    );
    assert_code(&out, 0);
    assert_eq!(out.stdout, format!("wrote {t}\nSTOP end_turn\n"));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello from rust");

    let missing = sb.work().join("missing.txt").display().to_string();
    let out = python_client(
        &sb,
        &["--prompt", &format!("read {missing}")],
        &test_agent(),
    );
    assert_code(&out, 0);
    assert_eq!(out.stdout, "error: Resource not found\nSTOP end_turn\n");
    assert_sdk_accepted_everything(&out);
}

/// The Python SDK's `Client.write_text_file` may return `None` (its
/// interface says `-> WriteTextFileResponse | None`); the SDK then answers
/// `{"result": null}`. The TypeScript SDK treats such empty answers as `{}`
/// ("empty-payload handling"). Our runtime rejects it.
#[test]
fn python_client_write_answered_with_null_is_accepted() {
    let sb = Sandbox::new();
    let target = sb.work().join("written.txt");
    let t = target.display().to_string();
    let out = python_client(
        &sb,
        &[
            "--prompt",
            &format!("write {t} hello"),
            "--write-returns-none",
        ],
        &test_agent(),
    );
    assert_code(&out, 0);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello");
    assert_eq!(out.stdout, format!("wrote {t}\nSTOP end_turn\n"));
}

#[test]
fn python_client_sees_the_test_agents_stop_reasons_and_errors() {
    let sb = Sandbox::new();
    for (prompt, stop) in [("refuse", "refusal"), ("max-tokens", "max_tokens")] {
        let out = python_client(&sb, &["--prompt", prompt], &test_agent());
        assert_code(&out, 0);
        assert_eq!(out.stdout, format!("STOP {stop}\n"), "{prompt}");
    }
    let out = python_client(&sb, &["--prompt", "error"], &test_agent());
    assert_code(&out, 1);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains("error: simulated failure (code -32603"),
        "{}",
        out.stderr
    );
}

#[test]
fn python_client_cancels_the_test_agents_turn() {
    let sb = Sandbox::new();
    let out = python_client(
        &sb,
        &["--prompt", "slow", "--cancel-after-chunks", "2"],
        &test_agent(),
    );
    assert_code(&out, 0);
    assert!(out.stdout.starts_with("tick 1\ntick 2\n"), "{}", out.stdout);
    assert!(out.stdout.ends_with("\nSTOP cancelled\n"), "{}", out.stdout);
    let log = sb.log();
    assert!(log.lines().any(|l| l == "session/cancel"), "{log}");
    assert!(log.lines().any(|l| l == "stop cancelled"), "{log}");
}

#[test]
fn python_client_reads_the_echo_agent_example() {
    let sb = Sandbox::new();
    let prompt = "hello  echo\nworld ✓";
    let out = python_client(&sb, &["--prompt", prompt], &[&binaries().echo_agent]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, format!("{prompt}\nSTOP end_turn\n"));
    assert_sdk_accepted_everything(&out);
}

#[test]
fn python_client_cancels_the_echo_agent_example() {
    let sb = Sandbox::new();
    let words: Vec<String> = (1..=200).map(|i| format!("w{i}")).collect();
    let prompt = words.join(" ");
    let out = python_client(
        &sb,
        &["--prompt", &prompt, "--cancel-after-chunks", "3"],
        &[&binaries().echo_agent],
    );
    assert_code(&out, 0);
    assert!(out.stdout.starts_with("w1 w2 w3 "), "{}", out.stdout);
    assert!(out.stdout.ends_with("\nSTOP cancelled\n"), "{}", out.stdout);
    assert!(
        !out.stdout.contains("w200"),
        "not cancelled: {}",
        out.stdout
    );
}

// ---------------------------------------------------------------------------
// Our runtime's ClientSideConnection against the Python SDK agent.

fn connect(sb: &Sandbox, env: &[(&str, &str)]) -> Connected {
    acp_interop::connect(python(), sb, env)
}

#[tokio::test]
async fn runtime_decodes_the_python_agents_answers_and_updates() {
    let sb = Sandbox::new();
    let c = connect(&sb, &[]);
    let init = c
        .conn
        .initialize(
            InitializeRequest::new(ProtocolVersion::V1).client_capabilities(
                ClientCapabilities::new().fs(FileSystemCapabilities::new().read_text_file(true)),
            ),
        )
        .await
        .unwrap();
    assert_eq!(init.protocol_version, ProtocolVersion::V1);
    let caps = &init.agent_capabilities;
    assert!(!caps.load_session);
    assert!(caps.prompt_capabilities.image);
    assert!(caps.prompt_capabilities.embedded_context);
    assert!(caps.mcp_capabilities.http);
    assert!(init.auth_methods.is_empty());
    let info = init.agent_info.as_ref().unwrap();
    assert_eq!(
        (
            info.name.as_str(),
            info.title.as_deref(),
            info.version.as_str()
        ),
        (
            "interop-python-agent",
            Some("Interop Python agent"),
            "0.12.1"
        )
    );
    assert_round_trip("initialize response", &init, &c.raw_result(0));
    let sent = logged(&sb.log(), "initialize");
    assert_eq!(sent["clientCapabilities"]["fs"]["readTextFile"], true);

    let new = c
        .conn
        .new_session(NewSessionRequest::new(sb.work().display().to_string()))
        .await
        .unwrap();
    assert_eq!(new.session_id.as_str(), "py-1");
    let modes = new.modes.as_ref().unwrap();
    assert_eq!(modes.current_mode_id.as_str(), "code");
    assert_eq!(modes.available_modes.len(), 2);
    assert_round_trip("session/new response", &new, &c.raw_result(1));

    let reply = c
        .conn
        .prompt(PromptRequest::new(
            new.session_id.clone(),
            vec!["a b permission".into()],
        ))
        .await
        .unwrap();
    assert_eq!(reply.stop_reason, StopReason::EndTurn);
    assert_round_trip("session/prompt response", &reply, &c.raw_result(2));
    let typed = c.recorder.updates.lock().unwrap().clone();
    let raw = c.raw_updates();
    assert_eq!(typed.len(), raw.len());
    for (typed, raw) in typed.iter().zip(&raw) {
        assert_round_trip("session/update", typed, raw);
    }
    let text: String = typed
        .iter()
        .filter_map(|n| match &n.update {
            SessionUpdate::AgentMessageChunk(c) => c.content.as_text(),
            _ => None,
        })
        .collect();
    assert_eq!(text, "a b permission\npermission: selected allow\n");
    let tool_calls: Vec<_> = typed
        .iter()
        .filter_map(|n| match &n.update {
            SessionUpdate::ToolCall(t) => Some(format!(
                "{} {} {:?} {:?}",
                t.tool_call_id, t.title, t.kind, t.status
            )),
            SessionUpdate::ToolCallUpdate(u) => Some(format!("{} {:?}", u.tool_call_id, u.status)),
            _ => None,
        })
        .collect();
    assert_eq!(
        tool_calls,
        [
            "call-1 Edit notes.txt Edit Pending",
            "call-1 Some(Completed)"
        ]
    );
    c.close().await;
}

#[tokio::test]
async fn runtime_applies_the_capability_defaults_to_a_minimal_python_initialize_answer() {
    let sb = Sandbox::new();
    let c = connect(&sb, &[("INTEROP_MINIMAL_INIT", "1")]);
    let init = c
        .conn
        .initialize(InitializeRequest::new(ProtocolVersion::V1))
        .await
        .unwrap();
    assert_eq!(c.raw_result(0), json!({ "protocolVersion": 1 }));
    assert_eq!(init.agent_capabilities, AgentCapabilities::new());
    assert!(init.auth_methods.is_empty());
    assert!(init.agent_info.is_none());
    c.close().await;
}

#[tokio::test]
async fn runtime_cancels_the_python_agents_turn() {
    let sb = Sandbox::new();
    let c = connect(&sb, &[]);
    c.conn
        .initialize(InitializeRequest::new(ProtocolVersion::V1))
        .await
        .unwrap();
    let session = c
        .conn
        .new_session(NewSessionRequest::new(sb.work().display().to_string()))
        .await
        .unwrap()
        .session_id;
    let turn = tokio::spawn({
        let conn = c.conn.clone();
        let session = session.clone();
        async move {
            conn.prompt(PromptRequest::new(session, vec!["slow".into()]))
                .await
        }
    });
    c.wait_for_text("tick 1\n").await;
    c.conn
        .cancel(CancelNotification::new(session.clone()))
        .await
        .unwrap();
    let reply = tokio::time::timeout(std::time::Duration::from_secs(10), turn)
        .await
        .expect("the turn did not end after session/cancel")
        .unwrap()
        .unwrap();
    assert_eq!(reply.stop_reason, StopReason::Cancelled);
    let log = sb.log();
    assert!(
        log.lines()
            .any(|l| l == format!("session/cancel {session}")),
        "{log}"
    );
    assert!(log.lines().any(|l| l == "stop cancelled"), "{log}");
    c.close().await;
    let log = sb.log();
    assert!(log.ends_with("closed\n"), "{log}");
}
