//! Our runtime's `ClientSideConnection` against each peer's agent
//! (`interop/js/agent.mjs` on the official TypeScript SDK,
//! `interop/python/agent.py` on the Python SDK), checking the typed decoding
//! of everything it sends.
//!
//! The scenarios both agents can play are written once, as functions taking
//! the peer, each followed by its tests, one per peer. What each agent
//! answers and sends differs (the TypeScript agent sends every kind of
//! update), so the decoding checks are a test per agent.

use acp::schema::*;
use acp_interop::Peer::{self, Js, Python};
use acp_interop::{Connected, Sandbox, assert_round_trip, connect, logged};
use serde_json::json;
use tokio::task::JoinHandle;

async fn applies_the_capability_defaults_to_a_minimal_initialize_answer(peer: Peer) {
    let sb = Sandbox::new();
    let c = connect(peer, &sb, &[("INTEROP_MINIMAL_INIT", "1")]);
    let init = c
        .conn
        .initialize(InitializeRequest::new(ProtocolVersion::V1))
        .await
        .unwrap();
    assert_eq!(c.raw_result(0), json!({ "protocolVersion": 1 }));
    // The defaults the SDKs document (the TypeScript SDK fills them in
    // itself when it parses an answer): nothing supported, no
    // authentication, no agent info.
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
async fn runtime_applies_the_capability_defaults_to_a_minimal_js_initialize_answer() {
    if !Js.available() {
        return;
    }
    applies_the_capability_defaults_to_a_minimal_initialize_answer(Js).await;
}

#[tokio::test]
async fn runtime_applies_the_capability_defaults_to_a_minimal_python_initialize_answer() {
    if !Python.available() {
        return;
    }
    applies_the_capability_defaults_to_a_minimal_initialize_answer(Python).await;
}

/// A prompt turn in progress: the agent streams "tick N" lines until it is
/// cancelled.
struct SlowTurn {
    c: Connected,
    session: SessionId,
    turn: JoinHandle<Result<PromptResponse, acp::ConnectionError>>,
}

/// Connects to the peer's agent, opens a session, prompts "slow" and waits
/// for the first tick.
async fn start_slow_turn(peer: Peer, sb: &Sandbox) -> SlowTurn {
    let c = connect(peer, sb, &[]);
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
    SlowTurn { c, session, turn }
}

async fn cancels_the_agents_turn(peer: Peer) {
    let sb = Sandbox::new();
    let SlowTurn { c, session, turn } = start_slow_turn(peer, &sb).await;
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

#[tokio::test]
async fn runtime_cancels_the_js_agents_turn() {
    if !Js.available() {
        return;
    }
    cancels_the_agents_turn(Js).await;
}

#[tokio::test]
async fn runtime_cancels_the_python_agents_turn() {
    if !Python.available() {
        return;
    }
    cancels_the_agents_turn(Python).await;
}

#[tokio::test]
async fn runtime_sends_cancel_request_when_a_prompt_to_the_js_agent_is_dropped() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let SlowTurn { c, turn, .. } = start_slow_turn(Js, &sb).await;
    // Dropping the future sends `$/cancel_request`; the SDK aborts the
    // handler's signal and the agent answers -32800. (The Python SDK has no
    // `$/cancel_request`.)
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

// ---------------------------------------------------------------------------
// Decoding what each agent answers and sends.

#[tokio::test]
async fn runtime_decodes_the_python_agents_answers_and_updates() {
    if !Python.available() {
        return;
    }
    let sb = Sandbox::new();
    let c = connect(Python, &sb, &[]);
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

/// What we advertise to the TypeScript agent: fs, and the session
/// capabilities (notices, compaction) it needs to send those updates.
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
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let c = connect(Js, &sb, &[]);
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
async fn runtime_decodes_every_update_kind_the_js_agent_sends() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let c = connect(Js, &sb, &[]);
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
                Some(RawJson::from(
                    json!({ "path": "/tmp/a.txt", "nested": { "n": 1 } })
                ))
            );
        }
        other => panic!("tool_call decoded as {other:?}"),
    }
    match rest[6] {
        SessionUpdate::ToolCallUpdate(u) => {
            assert_eq!(u.tool_call_id.as_str(), "call-2");
            assert_eq!(u.status, Some(ToolCallStatus::Completed));
            assert_eq!(u.raw_output, Some(RawJson::from(json!({ "ok": true }))));
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

// ---------------------------------------------------------------------------
// A missing peer runtime: skipped with one line, or a failure when required.

/// Runs one test of this executable again, alone, with a `PATH` on which
/// neither `node`, `npm` nor `python3` can be found, and `ACP_INTEROP` set to
/// `mode` (or unset).
fn rerun_without_runtimes(test: &str, mode: Option<&str>) -> std::process::Output {
    let empty = tempfile::tempdir().expect("tempdir");
    // The harness names a test by its module path inside this executable.
    let test = match module_path!().split_once("::") {
        Some((_crate, module)) => format!("{module}::{test}"),
        None => test.to_owned(),
    };
    let mut command = std::process::Command::new(std::env::current_exe().expect("this test"));
    command
        .args(["--exact", &test, "--test-threads", "1"])
        .env("PATH", empty.path())
        .env_remove("ACP_INTEROP")
        .stdin(std::process::Stdio::null());
    if let Some(mode) = mode {
        command.env("ACP_INTEROP", mode);
    }
    command.output().expect("run this test executable")
}

fn a_missing_runtime_is_skipped_unless_required(peer: Peer, test: &str, runtime: &str) {
    let skipped = rerun_without_runtimes(test, None);
    let stdout = String::from_utf8_lossy(&skipped.stdout);
    let stderr = String::from_utf8_lossy(&skipped.stderr);
    assert!(skipped.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed"),
        "the test ran (and returned): {stdout}"
    );
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(
        lines[0].starts_with(&format!(
            "acp-interop: SKIPPED the {} interop tests: `{runtime}` was not found on PATH",
            peer.name()
        )),
        "{stderr}"
    );
    assert!(
        lines[0].ends_with("(set ACP_INTEROP=require to make this a failure)"),
        "{stderr}"
    );

    let required = rerun_without_runtimes(test, Some("require"));
    let stdout = String::from_utf8_lossy(&required.stdout);
    let stderr = String::from_utf8_lossy(&required.stderr);
    assert!(!required.status.success(), "must fail: {stdout}\n{stderr}");
    assert!(stdout.contains("1 failed"), "{stdout}");
    let message = format!(
        "the {} interop tests cannot run: `{runtime}` was not found on PATH",
        peer.name()
    );
    assert!(
        stdout.contains(&message) || stderr.contains(&message),
        "{stdout}\n{stderr}"
    );
    assert!(!stderr.contains("SKIPPED"), "{stderr}");

    let typo = rerun_without_runtimes(test, Some("required"));
    let out = String::from_utf8_lossy(&typo.stdout);
    assert!(
        !typo.status.success(),
        "a value other than `require` is refused"
    );
    assert!(
        out.contains("the only value it takes is `require`"),
        "{out}"
    );
}

#[test]
fn a_missing_node_skips_the_js_tests_unless_required() {
    a_missing_runtime_is_skipped_unless_required(
        Js,
        "runtime_applies_the_capability_defaults_to_a_minimal_js_initialize_answer",
        "node",
    );
}

#[test]
fn a_missing_python_skips_the_python_tests_unless_required() {
    a_missing_runtime_is_skipped_unless_required(
        Python,
        "runtime_applies_the_capability_defaults_to_a_minimal_python_initialize_answer",
        "python3",
    );
}
