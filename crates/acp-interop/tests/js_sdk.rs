//! Our implementation against the official TypeScript SDK
//! (`@agentclientprotocol/sdk`, pinned in `interop/js/package.json`):
//!
//! - our `acp exec` against `interop/js/agent.mjs`;
//! - `interop/js/client.mjs` against our `acp-test-agent` and the
//!   `echo_agent` example;
//! - our runtime's `ClientSideConnection` against `interop/js/agent.mjs`,
//!   checking the typed decoding of everything it sends.

use std::io::{BufRead, BufReader, Read};

use acp::schema::*;
use acp_interop::{
    Connected, Output, Sandbox, assert_code, assert_round_trip, binaries, js, logged, run,
    spawn_streaming,
};
use nix::sys::signal::{Signal, kill};
use serde_json::{Value, json};

fn agent() -> String {
    js().agent_command_line()
}

// ---------------------------------------------------------------------------
// Our `acp exec` against the TypeScript SDK agent.

#[test]
fn acp_exec_streams_the_js_agents_echo_exactly() {
    let sb = Sandbox::new();
    let prompt = "Hello,  interop\tworld ünïcödé ✓";
    let out = run(sb.acp_exec(&agent(), &[prompt]));
    assert_code(&out, 0);
    assert_eq!(out.stdout, format!("{prompt}\n"));

    // What the SDK made of our initialize and session/new requests.
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
    assert_eq!(new["cwd"], sb.work().display().to_string(), "{new}");
    assert_eq!(new["mcpServers"], json!([]), "{new}");
    let prompt_blocks = logged(&log, "session/prompt");
    assert_eq!(prompt_blocks, json!([{ "type": "text", "text": prompt }]));
    assert!(log.lines().any(|l| l == "stop end_turn"), "{log}");
}

#[test]
fn acp_exec_json_format_prints_the_js_agents_updates() {
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
            "sessionId": "js-1",
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
            json!({ "sessionId": "js-1", "stopReason": "end_turn" }),
        ]
    );
}

#[test]
fn acp_exec_attaches_files_in_a_form_the_js_sdk_accepts() {
    let sb = Sandbox::new();
    let path = sb.write("notes.txt", "note body\n");
    let uri = format!("file://{}", path.display());

    // The agent accepts embedded context: the file is embedded.
    let out = run(sb.acp_exec(&agent(), &["explain @notes.txt"]));
    assert_code(&out, 0);
    assert_eq!(
        logged(&sb.log(), "session/prompt"),
        json!([
            { "type": "text", "text": "explain @notes.txt" },
            { "type": "resource", "resource": { "uri": uri, "text": "note body\n" } }
        ])
    );

    // It does not (a minimal initialize answer): a resource link instead.
    let sb2 = Sandbox::new();
    let path = sb2.write("notes.txt", "note body\n");
    let uri = format!("file://{}", path.display());
    let mut command = sb2.acp_exec(&agent(), &["explain @notes.txt"]);
    command.env("INTEROP_MINIMAL_INIT", "1");
    let out = run(command);
    assert_code(&out, 0);
    assert_eq!(
        logged(&sb2.log(), "session/prompt"),
        json!([
            { "type": "text", "text": "explain @notes.txt" },
            { "type": "resource_link", "name": "notes.txt", "uri": uri, "size": 10 }
        ])
    );
}

#[test]
fn acp_exec_authenticates_with_the_js_agents_method() {
    let sb = Sandbox::new();
    let out = run(sb.acp_exec(&agent(), &["--auth", "token", "hi"]));
    assert_code(&out, 0);
    assert_eq!(out.stdout, "hi\n");
    let log = sb.log();
    // ("closed", the agent seeing the end of its input, may or may not come:
    // acp stops the agent right after closing the connection.)
    let methods: Vec<&str> = log
        .lines()
        .map(|l| l.split(' ').next().unwrap_or(""))
        .filter(|m| *m != "closed")
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "authenticate",
            "session/new",
            "session/prompt",
            "stop"
        ],
        "{log}"
    );
    assert!(log.contains("authenticate token\n"), "{log}");
}

#[test]
fn acp_exec_approve_all_allows_the_js_agents_permission_request() {
    let sb = Sandbox::new();
    let out = run(sb.acp_exec(&agent(), &["--approve-all", "needs permission"]));
    assert_code(&out, 0);
    assert_eq!(out.stdout, "needs permission\npermission: selected allow\n");
    let log = sb.log();
    assert_eq!(
        logged(&log, "permission"),
        json!({ "outcome": "selected", "optionId": "allow" })
    );
}

#[test]
fn acp_exec_deny_all_rejects_the_js_agents_permission_request() {
    let sb = Sandbox::new();
    let out = run(sb.acp_exec(&agent(), &["--deny-all", "needs permission"]));
    // 5: the turn ended, but a permission request was denied.
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
fn acp_exec_serves_the_js_agents_file_read() {
    let sb = Sandbox::new();
    let path = sb.write("notes.txt", "first line\nsecond line ✓\n");
    let prompt = format!("read {}", path.display());
    let out = run(sb.acp_exec(&agent(), &[&prompt]));
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        format!("{prompt}\nfile: first line\nsecond line ✓\n")
    );
}

#[test]
fn acp_exec_answers_a_js_agent_read_of_a_missing_file_with_resource_not_found() {
    let sb = Sandbox::new();
    let missing = sb.work().join("missing.txt");
    let prompt = format!("read {}", missing.display());
    let out = run(sb.acp_exec(&agent(), &[&prompt]));
    assert_code(&out, 0);
    let log = sb.log();
    let error = log
        .lines()
        .find_map(|l| l.strip_prefix("read error "))
        .unwrap_or_else(|| panic!("no read error logged:\n{log}\n{}", out.stderr));
    // -32002: resource not found, as the SDK's RequestError.resourceNotFound.
    assert!(error.starts_with("-32002 "), "{error}");
    assert!(
        out.stdout.starts_with(&format!("{prompt}\nfile error: ")),
        "{}",
        out.stdout
    );
}

#[test]
fn acp_exec_refuses_a_js_agent_read_outside_the_session_directory() {
    let sb = Sandbox::new();
    let outside = sb.root().join("outside.txt");
    std::fs::write(&outside, "secret\n").unwrap();
    let prompt = format!("read {}", outside.display());
    let out = run(sb.acp_exec(&agent(), &[&prompt]));
    assert_code(&out, 0);
    // The SDK turned our error answer into a rejected promise with its code.
    let log = sb.log();
    let error = log
        .lines()
        .find_map(|l| l.strip_prefix("read error "))
        .unwrap_or_else(|| panic!("no read error logged:\n{log}\n{}", out.stderr));
    let (code, _message) = error.split_once(' ').unwrap();
    assert!(
        code.parse::<i64>().is_ok(),
        "the SDK saw no numeric error code: {error}"
    );
    assert!(
        out.stdout.starts_with(&format!("{prompt}\nfile error: ")),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("secret"), "{}", out.stdout);
}

#[test]
fn acp_exec_ctrl_c_cancels_the_js_agents_turn() {
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
    // 130: cancelled (Ctrl-C), after the agent answered `cancelled`.
    assert_code(&out, 130);
    assert!(out.stderr.contains("[stop] cancelled"), "{}", out.stderr);
    let log = sb.log();
    assert!(log.lines().any(|l| l == "session/cancel js-1"), "{log}");
    assert!(log.lines().any(|l| l == "stop cancelled"), "{log}");
}

// ---------------------------------------------------------------------------
// The TypeScript SDK client against our agents.

fn js_client(sb: &Sandbox, options: &[&str], agent: &[&std::path::Path]) -> Output {
    run(sb.peer_client(js(), options, agent))
}

fn test_agent() -> [&'static std::path::Path; 1] {
    [binaries().test_agent.as_path()]
}

/// Fails on any complaint the SDK printed about a message it received.
fn assert_sdk_accepted_everything(out: &Output) {
    for complaint in [
        "Invalid message",
        "Error handling notification",
        "Got response to unknown request",
    ] {
        assert!(
            !out.stderr.contains(complaint),
            "the TypeScript SDK complained:\n{}",
            out.stderr
        );
    }
}

#[test]
fn js_client_reads_the_test_agents_stream() {
    let sb = Sandbox::new();
    let out = js_client(&sb, &["--prompt", "stream"], &test_agent());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "Hello, world!\nSTOP end_turn\n");
    assert!(
        out.stderr
            .contains(r#"info {"name":"acp-test-agent","version":"0.1.0"}"#),
        "{}",
        out.stderr
    );
    assert_sdk_accepted_everything(&out);
    let log = sb.log();
    let methods: Vec<&str> = log.lines().filter(|l| !l.starts_with("pid ")).collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "session/new",
            "session/prompt",
            "stop end_turn"
        ],
        "{log}"
    );
}

#[test]
fn js_client_accepts_the_test_agents_thoughts_plans_and_tool_calls() {
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
        let out = js_client(&sb, &["--prompt", prompt], &test_agent());
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
fn js_client_answers_the_test_agents_permission_request() {
    let sb = Sandbox::new();
    let out = js_client(&sb, &["--prompt", "permission"], &test_agent());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "permission: selected allow\nSTOP end_turn\n");
    assert!(
        out.stderr.contains("[client] permission for call-p: allow"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("[client] tool_call_update call-p completed"),
        "{}",
        out.stderr
    );
    assert_sdk_accepted_everything(&out);
}

#[test]
fn js_client_accepts_the_test_agents_form_elicitation() {
    let sb = Sandbox::new();
    let out = js_client(&sb, &["--prompt", "elicit"], &test_agent());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "elicitation: accept\nSTOP end_turn\n");
    assert!(
        out.stderr
            .contains(r#"[client] elicitation (form) "Your name?""#),
        "{}",
        out.stderr
    );
    assert_sdk_accepted_everything(&out);
}

#[test]
fn js_client_serves_the_test_agents_file_reads_and_writes() {
    let sb = Sandbox::new();
    let path = sb.write("notes.txt", "alpha\nbeta\ngamma\n");
    let p = path.display().to_string();

    let out = js_client(&sb, &["--prompt", &format!("read {p}")], &test_agent());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "alpha\nbeta\ngamma\nSTOP end_turn\n");

    // `line` and `limit` reach the SDK as numbers it understands.
    let out = js_client(&sb, &["--prompt", &format!("read {p} 2 1")], &test_agent());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "beta\nSTOP end_turn\n");

    let target = sb.work().join("written.txt");
    let t = target.display().to_string();
    let out = js_client(
        &sb,
        &["--prompt", &format!("write {t} hello from rust")],
        &test_agent(),
    );
    assert_code(&out, 0);
    assert_eq!(out.stdout, format!("wrote {t}\nSTOP end_turn\n"));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello from rust");

    // The SDK's error answer reaches our agent as an error with a message.
    let missing = sb.work().join("missing.txt").display().to_string();
    let out = js_client(
        &sb,
        &["--prompt", &format!("read {missing}")],
        &test_agent(),
    );
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        format!("error: Resource not found: {missing}\nSTOP end_turn\n")
    );
    assert_sdk_accepted_everything(&out);
}

#[test]
fn js_client_sees_the_test_agents_stop_reasons_and_errors() {
    let sb = Sandbox::new();
    for (prompt, stop) in [("refuse", "refusal"), ("max-tokens", "max_tokens")] {
        let out = js_client(&sb, &["--prompt", prompt], &test_agent());
        assert_code(&out, 0);
        assert_eq!(out.stdout, format!("STOP {stop}\n"), "{prompt}");
    }
    let out = js_client(&sb, &["--prompt", "error"], &test_agent());
    assert_code(&out, 1);
    assert_eq!(out.stdout, "ERROR -32603 simulated failure\n");
}

#[test]
fn js_client_cancel_request_for_a_prompt_gets_request_cancelled() {
    let sb = Sandbox::new();
    // The SDK sends `$/cancel_request` for the prompt request; our engine
    // stops the handler and answers -32800.
    let out = js_client(
        &sb,
        &["--prompt", "slow", "--abort-after-chunks", "2"],
        &test_agent(),
    );
    assert_code(&out, 1);
    assert!(out.stdout.starts_with("tick 1\ntick 2\n"), "{}", out.stdout);
    assert!(
        out.stdout.ends_with("\nERROR -32800 Request cancelled\n"),
        "{}",
        out.stdout
    );
    assert_sdk_accepted_everything(&out);
}

#[test]
fn js_client_cancels_the_test_agents_turn() {
    let sb = Sandbox::new();
    let out = js_client(
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
fn js_client_reads_the_echo_agent_example() {
    let sb = Sandbox::new();
    let prompt = "hello  echo\nworld ✓";
    let out = js_client(&sb, &["--prompt", prompt], &[&binaries().echo_agent]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, format!("{prompt}\nSTOP end_turn\n"));
    assert_sdk_accepted_everything(&out);
}

#[test]
fn js_client_cancels_the_echo_agent_example() {
    let sb = Sandbox::new();
    let words: Vec<String> = (1..=200).map(|i| format!("w{i}")).collect();
    let prompt = words.join(" ");
    let out = js_client(
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
// Our runtime's ClientSideConnection against the TypeScript SDK agent.

fn connect(sb: &Sandbox, env: &[(&str, &str)]) -> Connected {
    acp_interop::connect(js(), sb, env)
}

fn client_capabilities() -> ClientCapabilities {
    ClientCapabilities::new()
        .fs(FileSystemCapabilities::new()
            .read_text_file(true)
            .write_text_file(true))
        .session(
            ClientSessionCapabilities::new()
                .notices(NoticeCapabilities::new())
                .compaction(CompactionCapabilities::new()),
        )
}

#[tokio::test]
async fn runtime_decodes_the_js_agents_initialize_and_session_new() {
    let sb = Sandbox::new();
    let c = connect(&sb, &[]);
    let init = c
        .conn
        .initialize(
            InitializeRequest::new(ProtocolVersion::V1)
                .client_capabilities(client_capabilities())
                .client_info(Implementation::new("interop-test", "0.0.0")),
        )
        .await
        .unwrap();
    assert_eq!(init.protocol_version, ProtocolVersion::V1);
    let caps = &init.agent_capabilities;
    assert!(!caps.load_session);
    assert!(caps.prompt_capabilities.image);
    assert!(!caps.prompt_capabilities.audio);
    assert!(caps.prompt_capabilities.embedded_context);
    assert!(caps.mcp_capabilities.http);
    assert!(!caps.mcp_capabilities.sse);
    assert_eq!(caps.session_capabilities, SessionCapabilities::new());
    assert_eq!(init.auth_methods.len(), 1);
    match &init.auth_methods[0] {
        AuthMethod::Agent(m) => {
            assert_eq!(m.id.as_str(), "token");
            assert_eq!(m.name, "API token");
            assert_eq!(m.description.as_deref(), Some("Uses INTEROP_TOKEN"));
        }
        other => panic!("auth method decoded as {other:?}"),
    }
    let info = init.agent_info.as_ref().unwrap();
    assert_eq!(info.name, "interop-js-agent");
    assert_eq!(info.title.as_deref(), Some("Interop JS agent"));
    assert_eq!(info.version, "2.4.0");
    assert_round_trip("initialize response", &init, &c.raw_result(0));

    // What the SDK made of our request (it validates params with its schema).
    let sent = logged(&sb.log(), "initialize");
    assert_eq!(sent["clientCapabilities"]["fs"]["readTextFile"], true);
    assert_eq!(sent["clientCapabilities"]["session"]["notices"], json!({}));
    assert_eq!(
        sent["clientCapabilities"]["session"]["compaction"],
        json!({})
    );
    assert_eq!(sent["clientInfo"]["name"], "interop-test");

    let cwd = sb.work().display().to_string();
    let new = c
        .conn
        .new_session(NewSessionRequest::new(cwd.clone()))
        .await
        .unwrap();
    assert_eq!(new.session_id.as_str(), "js-1");
    let modes = new.modes.as_ref().unwrap();
    assert_eq!(modes.current_mode_id.as_str(), "code");
    assert_eq!(modes.available_modes.len(), 2);
    assert_eq!(modes.available_modes[1].id.as_str(), "plan");
    assert_eq!(
        modes.available_modes[1].description.as_deref(),
        Some("Plans before it edits")
    );
    let options = new.config_options.as_ref().unwrap();
    assert_eq!(options.len(), 1);
    assert_eq!(options[0].id.as_str(), "model");
    assert_eq!(
        options[0].category,
        Some(SessionConfigOptionCategory::Model)
    );
    match &options[0].kind {
        SessionConfigKind::Select(select) => {
            assert_eq!(select.current_value.as_str(), "small");
            match &select.options {
                SessionConfigSelectOptions::Ungrouped(list) => {
                    assert_eq!(list.len(), 2);
                    assert_eq!(list[1].description.as_deref(), Some("Slower"));
                }
                other => panic!("select options decoded as {other:?}"),
            }
        }
        other => panic!("config option decoded as {other:?}"),
    }
    assert_round_trip("session/new response", &new, &c.raw_result(1));
    let sent = logged(&sb.log(), "session/new");
    assert_eq!(sent, json!({ "cwd": cwd, "mcpServers": [] }));
    c.close().await;
}

#[tokio::test]
async fn runtime_applies_the_capability_defaults_to_a_minimal_initialize_answer() {
    let sb = Sandbox::new();
    let c = connect(&sb, &[("INTEROP_MINIMAL_INIT", "1")]);
    let init = c
        .conn
        .initialize(InitializeRequest::new(ProtocolVersion::V1))
        .await
        .unwrap();
    assert_eq!(c.raw_result(0), json!({ "protocolVersion": 1 }));
    // The defaults the SDK documents (and fills in itself when it parses an
    // answer): nothing supported, no authentication, no agent info.
    assert_eq!(init.protocol_version, ProtocolVersion::V1);
    assert_eq!(init.agent_capabilities, AgentCapabilities::new());
    assert!(!init.agent_capabilities.load_session);
    assert!(!init.agent_capabilities.prompt_capabilities.image);
    assert!(!init.agent_capabilities.prompt_capabilities.audio);
    assert!(!init.agent_capabilities.prompt_capabilities.embedded_context);
    assert!(!init.agent_capabilities.mcp_capabilities.http);
    assert!(!init.agent_capabilities.mcp_capabilities.sse);
    assert!(init.auth_methods.is_empty());
    assert!(init.agent_info.is_none());
    c.close().await;
}

#[tokio::test]
async fn runtime_decodes_every_update_kind_the_js_agent_sends() {
    let sb = Sandbox::new();
    let c = connect(&sb, &[]);
    c.conn
        .initialize(
            InitializeRequest::new(ProtocolVersion::V1).client_capabilities(client_capabilities()),
        )
        .await
        .unwrap();
    let session = c
        .conn
        .new_session(NewSessionRequest::new(sb.work().display().to_string()))
        .await
        .unwrap()
        .session_id;
    let reply = c
        .conn
        .prompt(PromptRequest::new(
            session.clone(),
            vec!["all-updates".into()],
        ))
        .await
        .unwrap();
    assert_eq!(reply.stop_reason, StopReason::EndTurn);
    assert_round_trip("session/prompt response", &reply, &c.raw_result(2));

    let typed = c.recorder.updates.lock().unwrap().clone();
    let raw = c.raw_updates();
    assert_eq!(typed.len(), raw.len(), "every update reached the Client");
    for (typed, raw) in typed.iter().zip(&raw) {
        assert_eq!(typed.session_id, session);
        assert_round_trip("session/update", typed, raw);
    }

    let updates: Vec<&SessionUpdate> = typed.iter().map(|n| &n.update).collect();
    // The echo: "all-updates", "\n".
    let text = |u: &SessionUpdate| match u {
        SessionUpdate::AgentMessageChunk(c) => c.content.as_text().map(str::to_owned),
        _ => None,
    };
    assert_eq!(text(updates[0]).as_deref(), Some("all-updates"));
    assert_eq!(text(updates[1]).as_deref(), Some("\n"));
    let rest = &updates[2..];
    assert_eq!(rest.len(), 17, "{rest:#?}");

    match rest[0] {
        SessionUpdate::UserMessageChunk(c) => {
            assert_eq!(c.content.as_text(), Some("an earlier question"));
            assert_eq!(
                c.message_id.as_ref().map(|m| m.as_str()),
                Some("msg-user-1")
            );
        }
        other => panic!("user_message_chunk decoded as {other:?}"),
    }
    match rest[1] {
        SessionUpdate::AgentThoughtChunk(c) => assert_eq!(c.content.as_text(), Some("thinking")),
        other => panic!("agent_thought_chunk decoded as {other:?}"),
    }
    match rest[2] {
        SessionUpdate::AgentMessageChunk(ContentChunk {
            content: ContentBlock::ResourceLink(link),
            ..
        }) => {
            assert_eq!(link.uri, "file:///tmp/example.txt");
            assert_eq!(link.name, "example.txt");
            assert_eq!(link.mime_type.as_deref(), Some("text/plain"));
            assert_eq!(link.size, Some(12));
        }
        other => panic!("resource_link decoded as {other:?}"),
    }
    match rest[3] {
        SessionUpdate::AgentMessageChunk(ContentChunk {
            content: ContentBlock::Resource(resource),
            ..
        }) => match &resource.resource {
            EmbeddedResourceResource::Text(t) => {
                assert_eq!(t.uri, "file:///tmp/embedded.txt");
                assert_eq!(t.text, "embedded text");
            }
            other => panic!("embedded resource decoded as {other:?}"),
        },
        other => panic!("resource decoded as {other:?}"),
    }
    match rest[4] {
        SessionUpdate::AgentMessageChunk(ContentChunk {
            content: ContentBlock::Image(image),
            ..
        }) => {
            assert_eq!(image.data, "aGVsbG8=");
            assert_eq!(image.mime_type, "image/png");
        }
        other => panic!("image decoded as {other:?}"),
    }
    match rest[5] {
        SessionUpdate::ToolCall(call) => {
            assert_eq!(call.tool_call_id.as_str(), "call-2");
            assert_eq!(call.kind, ToolKind::Edit);
            assert_eq!(call.status, ToolCallStatus::InProgress);
            assert_eq!(call.locations.len(), 1);
            assert_eq!(call.locations[0].path, "/tmp/a.txt");
            assert_eq!(call.locations[0].line, Some(3));
            assert_eq!(call.content.len(), 2);
            match &call.content[0] {
                ToolCallContent::Diff(d) => {
                    assert_eq!(d.path, "/tmp/a.txt");
                    assert_eq!(d.old_text.as_deref(), Some("one\n"));
                    assert_eq!(d.new_text, "two\n");
                }
                other => panic!("diff decoded as {other:?}"),
            }
            match &call.content[1] {
                ToolCallContent::Content(c) => {
                    assert_eq!(c.content.as_text(), Some("changing a line"));
                }
                other => panic!("content decoded as {other:?}"),
            }
            assert_eq!(
                call.raw_input,
                Some(json!({ "path": "/tmp/a.txt", "nested": { "n": 1 } }))
            );
        }
        other => panic!("tool_call decoded as {other:?}"),
    }
    match rest[6] {
        SessionUpdate::ToolCallUpdate(u) => {
            assert_eq!(u.tool_call_id.as_str(), "call-2");
            assert_eq!(u.status, Some(ToolCallStatus::Completed));
            assert_eq!(u.raw_output, Some(json!({ "ok": true })));
            assert_eq!(u.title, None);
        }
        other => panic!("tool_call_update decoded as {other:?}"),
    }
    match rest[7] {
        SessionUpdate::Plan(plan) => {
            let entries: Vec<_> = plan
                .entries
                .iter()
                .map(|e| (e.content.as_str(), e.priority.clone(), e.status.clone()))
                .collect();
            assert_eq!(
                entries,
                vec![
                    (
                        "Read the code",
                        PlanEntryPriority::High,
                        PlanEntryStatus::Completed
                    ),
                    (
                        "Change it",
                        PlanEntryPriority::Medium,
                        PlanEntryStatus::InProgress
                    ),
                    (
                        "Run the tests",
                        PlanEntryPriority::Low,
                        PlanEntryStatus::Pending
                    ),
                ]
            );
        }
        other => panic!("plan decoded as {other:?}"),
    }
    match rest[8] {
        SessionUpdate::AvailableCommandsUpdate(u) => {
            assert_eq!(u.available_commands.len(), 2);
            assert_eq!(u.available_commands[0].name, "web");
            match &u.available_commands[0].input {
                Some(AvailableCommandInput::Unstructured(i)) => assert_eq!(i.hint, "query"),
                other => panic!("command input decoded as {other:?}"),
            }
            assert!(u.available_commands[1].input.is_none());
        }
        other => panic!("available_commands_update decoded as {other:?}"),
    }
    match rest[9] {
        SessionUpdate::CurrentModeUpdate(u) => assert_eq!(u.current_mode_id.as_str(), "plan"),
        other => panic!("current_mode_update decoded as {other:?}"),
    }
    match rest[10] {
        SessionUpdate::ConfigOptionUpdate(u) => {
            assert_eq!(u.config_options.len(), 1);
            match &u.config_options[0].kind {
                SessionConfigKind::Select(s) => assert_eq!(s.current_value.as_str(), "large"),
                other => panic!("config option decoded as {other:?}"),
            }
        }
        other => panic!("config_option_update decoded as {other:?}"),
    }
    match rest[11] {
        SessionUpdate::SessionInfoUpdate(u) => {
            assert_eq!(u.title, Some(Some("Interop session".to_owned())));
            assert_eq!(u.updated_at, Some(Some("2026-01-02T03:04:05Z".to_owned())));
        }
        other => panic!("session_info_update decoded as {other:?}"),
    }
    match rest[12] {
        SessionUpdate::UsageUpdate(u) => {
            assert_eq!((u.used, u.size), (1200, 200000));
            let cost = u.cost.as_ref().unwrap();
            assert_eq!((cost.amount, cost.currency.as_str()), (0.25, "USD"));
        }
        other => panic!("usage_update decoded as {other:?}"),
    }
    match rest[13] {
        SessionUpdate::Notice(n) => {
            assert_eq!(n.severity, NoticeSeverity::Warning);
            assert_eq!(n.title, "Rate limited");
            assert_eq!(n.description.as_deref(), Some("Retrying in 1 s"));
        }
        other => panic!("notice decoded as {other:?}"),
    }
    match rest[14] {
        SessionUpdate::CompactionUpdate(u) => {
            assert_eq!(u.compaction_id.as_str(), "cmp-1");
            assert_eq!(u.status, CompactionStatus::InProgress);
            assert_eq!(u.summary, None);
        }
        other => panic!("compaction_update decoded as {other:?}"),
    }
    match rest[15] {
        SessionUpdate::CompactionSummaryChunk(u) => {
            assert_eq!(u.compaction_id.as_str(), "cmp-1");
            assert_eq!(u.content.as_text(), Some("summary so far"));
        }
        other => panic!("compaction_summary_chunk decoded as {other:?}"),
    }
    match rest[16] {
        SessionUpdate::CompactionUpdate(u) => {
            assert_eq!(u.status, CompactionStatus::Completed);
            // `summary: null` (clear) is not the same as no summary field.
            assert_eq!(u.summary, Some(None));
        }
        other => panic!("compaction_update decoded as {other:?}"),
    }
    c.close().await;
}

#[tokio::test]
async fn runtime_sends_cancel_request_when_a_prompt_is_dropped() {
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
        async move {
            conn.prompt(PromptRequest::new(session, vec!["slow".into()]))
                .await
        }
    });
    c.wait_for_text("tick 1\n").await;
    // Dropping the future sends `$/cancel_request`; the SDK aborts the
    // handler's signal and the agent answers -32800.
    turn.abort();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !sb.log().contains("stop request cancelled\n") {
        assert!(
            std::time::Instant::now() < deadline,
            "the agent saw no $/cancel_request:\n{}",
            sb.log()
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    c.close().await;
}

#[tokio::test]
async fn runtime_cancels_the_js_agents_turn() {
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
    // Closing our end closes the agent's standard input: the SDK sees the
    // end of the connection and the agent exits by itself.
    c.close().await;
    let log = sb.log();
    assert!(log.ends_with("closed\n"), "{log}");
}
