//! Protocol v2 against the official TypeScript SDK's `experimental/v2`
//! entry point (feature `v2`, on by default here):
//!
//! - its v2 client (`interop/js/client-v2.mjs`) driving the `echo_agent`
//!   example of crate `acp`, which serves v1 and v2 from one program
//!   (prompt acknowledgement, streaming, idle stop reasons, `session/cancel`,
//!   held prompts, `session/list`, `session/close`, `session/resume` with
//!   replay);
//! - our runtime's v2 client (`acp::negotiate::ClientRouter`) completing
//!   turns with its v2 agent (`interop/js/agent-v2.mjs`): every update
//!   decoded into our types and encoded back to what was on the wire;
//!   permission, cancellation; and the same client falling back to v1 with
//!   the SDK's v1 agent;
//! - through the bridge (`acp::bridge`, as the program `interop-bridge`):
//!   the SDK's v2 client with its v1 agent (`agent.mjs`), and its v1 client
//!   (`client.mjs`) with its v2 agent, and each client piped untouched to
//!   an agent of its own version.
//!
//! Every test needs Node.js; without it they are skipped (see
//! `Peer::available`).

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp::negotiate::{ClientRouter, Negotiated};
use acp::schema::v2;
use acp::schema::{Implementation, ProtocolVersion};
use acp_interop::Peer::Js;
use acp_interop::{
    Output, Recorder, Sandbox, TIMEOUT, assert_code, assert_round_trip,
    assert_sdk_accepted_everything, logged, run,
};
use serde_json::{Value, json};

const ECHO_AGENT: &str = env!("CARGO_BIN_EXE_echo_agent");
const BRIDGE: &str = env!("CARGO_BIN_EXE_interop-bridge");

/// `node interop/js/<script>`, as words.
fn js(script: &str) -> Vec<String> {
    let programs = Js.programs();
    vec![
        programs.interpreter.display().to_string(),
        programs.dir.join(script).display().to_string(),
    ]
}

/// A client script of `interop/js` run in the sandbox with `options`, against
/// the agent `agent` (words).
fn client(sb: &Sandbox, script: &str, options: &[&str], agent: &[String]) -> Output {
    let [node, path]: [String; 2] = js(script).try_into().expect("two words");
    let mut command: Command = sb.command(node);
    command.arg(path).args(options).arg("--").args(agent);
    run(command)
}

/// The SDK's v2 client against `agent`.
fn client_v2(sb: &Sandbox, options: &[&str], agent: &[String]) -> Output {
    client(sb, "client-v2.mjs", options, agent)
}

/// The SDK's v1 client against `agent`.
fn client_v1(sb: &Sandbox, options: &[&str], agent: &[String]) -> Output {
    client(sb, "client.mjs", options, agent)
}

fn echo_agent() -> Vec<String> {
    vec![ECHO_AGENT.to_string()]
}

/// `agent` behind the bridge.
fn bridged(agent: Vec<String>) -> Vec<String> {
    std::iter::once(BRIDGE.to_string()).chain(agent).collect()
}

#[track_caller]
fn assert_has(out: &Output, what: &str) {
    assert!(
        out.stderr.contains(what),
        "no {what:?} on standard error\n--- stdout\n{}\n--- stderr\n{}",
        out.stdout,
        out.stderr
    );
}

// ---------------------------------------------------------------------------
// The SDK's v2 client and the echo agent

#[test]
fn sdk_v2_client_reads_the_echo_agent_example() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let first = "hello  echo\nworld ✓";
    let out = client_v2(
        &sb,
        &["--prompt", first, "--prompt", "second one"],
        &echo_agent(),
    );
    assert_code(&out, 0);
    // Each acknowledgement matched the session's user message (no
    // MISMATCH line), and each turn ended with its idle update.
    assert_eq!(
        out.stdout,
        format!("{first}\nSTOP end_turn\nsecond one\nSTOP end_turn\n")
    );
    assert_has(
        &out,
        r#"agent speaks protocol 2; info {"name":"echo_agent""#,
    );
    assert_has(&out, r#"capabilities {"session":{}}"#);
    assert_has(&out, "prompt acknowledged: echo-1-user-1");
    assert_has(&out, "prompt acknowledged: echo-1-user-2");
    assert_has(&out, "state_update running");
    assert_sdk_accepted_everything(Js, &out);
}

#[test]
fn one_echo_agent_program_answers_each_sdk_client_in_its_version() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let v1 = client_v1(&sb, &["--prompt", "one"], &echo_agent());
    assert_code(&v1, 0);
    assert_eq!(v1.stdout, "one\nSTOP end_turn\n");
    assert_has(&v1, "agent speaks protocol 1");
    let v2 = client_v2(&sb, &["--prompt", "two"], &echo_agent());
    assert_code(&v2, 0);
    assert_eq!(v2.stdout, "two\nSTOP end_turn\n");
    assert_has(&v2, "agent speaks protocol 2");
}

#[test]
fn sdk_v2_client_cancels_the_echo_agent_example_and_prompts_again() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let words: Vec<String> = (1..=200).map(|i| format!("w{i}")).collect();
    let prompt = words.join(" ");
    let out = client_v2(
        &sb,
        &[
            "--prompt",
            &prompt,
            "--cancel-after-chunks",
            "3",
            "--prompt",
            "after the cancel",
        ],
        &echo_agent(),
    );
    assert_code(&out, 0);
    assert!(out.stdout.starts_with("w1 w2 w3 "), "{}", out.stdout);
    assert!(
        out.stdout
            .ends_with("\nSTOP cancelled\nafter the cancel\nSTOP end_turn\n"),
        "{}",
        out.stdout
    );
    assert!(
        !out.stdout.contains("w200"),
        "not cancelled: {}",
        out.stdout
    );
}

#[test]
fn sdk_v2_client_lists_closes_and_resumes_an_echo_agent_session_with_replay() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let out = client_v2(
        &sb,
        &[
            "--prompt", "one two", "--prompt", "three", "--list", "--resume",
        ],
        &echo_agent(),
    );
    assert_code(&out, 0);
    let cwd = sb.work().display().to_string();
    assert_eq!(
        out.stdout,
        format!(
            "one two\nSTOP end_turn\nthree\nSTOP end_turn\n\
             SESSION echo-1 {cwd}\n\
             REPLAY user_message echo-1-user-1 one two\n\
             REPLAY agent_message echo-1-agent-1 one two\n\
             REPLAY user_message echo-1-user-2 three\n\
             REPLAY agent_message echo-1-agent-2 three\n\
             STATE idle -\n\
             RESUMED\n"
        )
    );
    assert_sdk_accepted_everything(Js, &out);
}

// ---------------------------------------------------------------------------
// Our runtime's v2 client and the SDK's v2 agent

/// A v2 client that records every update, typed, and answers permission
/// requests with the first option that allows.
#[derive(Clone, Default)]
struct V2Recorder {
    updates: Arc<Mutex<Vec<v2::UpdateSessionNotification>>>,
}

impl acp::v2::Client for V2Recorder {
    async fn session_update(
        &self,
        n: v2::UpdateSessionNotification,
        _cx: acp::NotificationContext<v2::ClientSide>,
    ) -> Result<(), v2::Error> {
        self.updates.lock().unwrap().push(n);
        Ok(())
    }

    async fn request_permission(
        &self,
        request: v2::RequestPermissionRequest,
        _cx: acp::RequestContext<v2::ClientSide>,
    ) -> Result<v2::RequestPermissionResponse, v2::Error> {
        let allow = request.options.iter().find(|o| {
            matches!(
                o.kind,
                v2::PermissionOptionKind::AllowOnce | v2::PermissionOptionKind::AllowAlways
            )
        });
        Ok(match allow {
            Some(o) => v2::RequestPermissionResponse::selected(o.option_id.clone()),
            None => v2::RequestPermissionResponse::cancelled(),
        })
    }
}

/// Our client connected to an agent of `interop/js`, negotiated: the
/// connection, what it recorded, and every line read, as JSON.
struct Connected {
    negotiated: Negotiated,
    recorder: V2Recorder,
    incoming: Arc<Mutex<Vec<Value>>>,
    _child: acp::AgentChild,
}

async fn connect_to(sb: &Sandbox, script: &str) -> Connected {
    let [node, path]: [String; 2] = js(script).try_into().expect("two words");
    let (child, transport) = acp::AgentCommand::new(node)
        .arg(path)
        .env("INTEROP_LOG", sb.log_path())
        .current_dir(sb.work())
        .spawn_stdio()
        .expect("start the agent");
    let incoming = Arc::new(Mutex::new(Vec::new()));
    let lines = incoming.clone();
    let options = acp::ConnectionOptions::default().tap(move |event| {
        if event.direction == acp::Direction::Incoming {
            let value = serde_json::from_slice(event.line)
                .unwrap_or_else(|_| Value::String(event.text().into_owned()));
            lines.lock().unwrap().push(value);
        }
    });
    let recorder = V2Recorder::default();
    let v2_client = recorder.clone();
    let (negotiating, io) = ClientRouter::new(move |_| v2_client)
        .v1(|_| Recorder::default())
        .connect(transport, options);
    tokio::spawn(io);
    let hello = v2::InitializeRequest::new(Implementation::new("acp-interop", "0.0.0"));
    let negotiated = negotiating.initialize(hello).await.expect("initialize");
    Connected {
        negotiated,
        recorder,
        incoming,
        _child: child,
    }
}

impl Connected {
    fn v2(&self) -> &acp::v2::ClientSideConnection {
        match &self.negotiated {
            Negotiated::V2 { connection, .. } => connection,
            Negotiated::V1 { .. } => panic!("the agent answered v1"),
        }
    }

    /// The params of every `session/update` that came over the wire.
    fn raw_updates(&self) -> Vec<Value> {
        self.incoming
            .lock()
            .unwrap()
            .iter()
            .filter(|m| m["method"] == "session/update")
            .map(|m| m["params"].clone())
            .collect()
    }

    /// The updates so far, as their JSON (typed, encoded again).
    fn updates(&self) -> Vec<Value> {
        self.recorder
            .updates
            .lock()
            .unwrap()
            .iter()
            .map(|n| serde_json::to_value(&n.update).unwrap())
            .collect()
    }

    /// Waits until an update satisfies `done`.
    async fn wait_for(&self, what: &str, done: impl Fn(&Value) -> bool) {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        while !self.updates().iter().any(&done) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "no {what}: {:#?}",
                self.updates()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn wait_for_idle(&self) {
        self.wait_for("idle update", |u| u["state"] == "idle").await;
    }
}

#[tokio::test]
async fn our_v2_client_completes_a_turn_with_the_sdk_v2_agent() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let c = connect_to(&sb, "agent-v2.mjs").await;
    let Negotiated::V2 { response, .. } = &c.negotiated else {
        panic!("v1 negotiated");
    };
    assert_eq!(response.protocol_version, ProtocolVersion::V2);
    assert_eq!(response.info.name, "interop-js-agent-v2");
    assert!(response.capabilities.session.is_some());
    // What the agent got: our v2 initialize.
    let init = logged(&sb.log(), "initialize");
    assert_eq!(init["protocolVersion"], 2);
    assert_eq!(init["info"]["name"], "acp-interop");

    let cwd = sb.work().display().to_string();
    let session = c
        .v2()
        .new_session(v2::NewSessionRequest::new(cwd.clone()))
        .await
        .unwrap()
        .session_id;
    assert_eq!(session.to_string(), "js2-1");
    let ack = c
        .v2()
        .prompt(v2::PromptRequest::new(
            session.clone(),
            vec!["think permission plan".into()],
        ))
        .await
        .unwrap();
    assert_eq!(ack.message_id.to_string(), "js2-1-user-1");
    c.wait_for_idle().await;

    let updates = c.updates();
    let kinds: Vec<String> = updates
        .iter()
        .map(|u| match u["sessionUpdate"].as_str().unwrap() {
            "state_update" => format!("state {}", u["state"].as_str().unwrap()),
            kind => kind.to_string(),
        })
        .collect();
    let text: String = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "think permission plan\npermission: selected allow\n");
    let expected_order = [
        "user_message",
        "state running",
        "agent_thought_chunk",
        "tool_call_update",
        "state requires_action",
        "state running",
        "tool_call_update",
        "plan_update",
        "state idle",
    ];
    let skeleton: Vec<&str> = kinds
        .iter()
        .map(String::as_str)
        .filter(|k| *k != "agent_message_chunk")
        .collect();
    assert_eq!(skeleton, expected_order, "{updates:#?}");
    assert_eq!(updates[0]["messageId"], "js2-1-user-1");
    assert_eq!(updates.last().unwrap()["stopReason"], "end_turn");
    let diff = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update")
        .unwrap();
    assert_eq!(diff["content"][0]["type"], "diff");
    assert_eq!(diff["content"][0]["patch"]["format"], "git_patch");
    assert_eq!(
        logged(&sb.log(), "permission"),
        json!({"outcome": "selected", "optionId": "allow"})
    );

    // Every update, decoded into our types and encoded again, says what the
    // SDK sent.
    let raw = c.raw_updates();
    let typed = c.recorder.updates.lock().unwrap().clone();
    assert_eq!(raw.len(), typed.len());
    for (sent, typed) in raw.iter().zip(&typed) {
        assert_round_trip("session/update", typed, sent);
    }

    // The session lists, closes and resumes with its replay.
    let listed = c
        .v2()
        .list_sessions(v2::ListSessionsRequest::new())
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&listed).unwrap(),
        json!({"sessions": [{"sessionId": "js2-1", "cwd": cwd}]})
    );
    c.v2()
        .close_session(v2::CloseSessionRequest::new(session.clone()))
        .await
        .unwrap();
    let before = c.updates().len();
    c.v2()
        .resume_session(
            v2::ResumeSessionRequest::new(session.clone(), cwd)
                .replay_from(v2::ReplayFrom::start()),
        )
        .await
        .unwrap();
    let replayed: Vec<Value> = c.updates()[before..].to_vec();
    let replay: Vec<(&str, &str)> = replayed
        .iter()
        .map(|u| {
            (
                u["sessionUpdate"].as_str().unwrap(),
                u.get("messageId").and_then(Value::as_str).unwrap_or("-"),
            )
        })
        .collect();
    assert_eq!(
        replay,
        [
            ("user_message", "js2-1-user-1"),
            ("agent_message", "js2-1-agent-1"),
            ("state_update", "-"),
        ]
    );
}

#[tokio::test]
async fn our_v2_client_cancels_a_turn_of_the_sdk_v2_agent() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let c = connect_to(&sb, "agent-v2.mjs").await;
    let session = c
        .v2()
        .new_session(v2::NewSessionRequest::new(sb.work().display().to_string()))
        .await
        .unwrap()
        .session_id;
    c.v2()
        .prompt(v2::PromptRequest::new(session.clone(), vec!["slow".into()]))
        .await
        .unwrap();
    c.wait_for("tick", |u| u["content"]["text"] == "tick 1\n")
        .await;
    c.v2()
        .cancel(v2::CancelSessionNotification::new(session.clone()))
        .await
        .unwrap();
    c.wait_for_idle().await;
    let last = c.updates().last().cloned().unwrap();
    assert_eq!(
        last,
        json!({"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"})
    );
    let log = sb.log();
    assert!(log.contains("session/cancel js2-1"), "{log}");
    assert!(log.contains("stop cancelled"), "{log}");
}

#[tokio::test]
async fn our_client_asking_for_v2_falls_back_to_v1_with_the_sdk_v1_agent() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let c = connect_to(&sb, "agent.mjs").await;
    let Negotiated::V1 {
        connection,
        response,
    } = &c.negotiated
    else {
        panic!("v2 negotiated with a v1 agent");
    };
    assert_eq!(response.protocol_version, ProtocolVersion::V1);
    assert_eq!(
        response.agent_info.as_ref().map(|i| i.name.as_str()),
        Some("interop-js-agent")
    );
    // It read v1's members of our v2 initialize (version 2 asked).
    let init = logged(&sb.log(), "initialize");
    assert_eq!(init["protocolVersion"], 2);
    assert_eq!(init["clientInfo"]["name"], "acp-interop");
    let session = connection
        .new_session(acp::schema::NewSessionRequest::new(
            sb.work().display().to_string(),
        ))
        .await
        .unwrap()
        .session_id;
    let done = connection
        .prompt(acp::schema::PromptRequest::new(session, vec!["hi".into()]))
        .await
        .unwrap();
    assert_eq!(done.stop_reason, acp::schema::StopReason::EndTurn);
}

// ---------------------------------------------------------------------------
// Through the bridge

#[test]
fn sdk_v2_client_uses_the_sdk_v1_agent_through_the_bridge() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let out = client_v2(
        &sb,
        &["--prompt", "hello there permission"],
        &bridged(js("agent.mjs")),
    );
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "hello there permission\npermission: selected allow\nSTOP end_turn\n"
    );
    assert_has(&out, "interop-bridge: client v2, agent v1, translated");
    // The bridge acknowledged the prompt with its own message id, and the
    // SDK matched it with the user message the bridge sent.
    assert_has(&out, "user_message bridge-user-1 hello there permission");
    assert_has(&out, "prompt acknowledged: bridge-user-1");
    // The v1 permission request arrived as v2's: the tool call as subject,
    // its title as the question, requires_action while it waited.
    assert_has(&out, r#"permission "Edit notes.txt" call-1: allow"#);
    assert_has(&out, "state_update requires_action");
    assert_has(&out, "tool_call_update call-1 pending Edit notes.txt");
    assert_has(&out, "tool_call_update call-1 completed");
    assert_sdk_accepted_everything(Js, &out);
    // What the v1 agent got: the client's v2 initialize with v1's members
    // added (it answered 1), and the v1 answer to its permission request.
    let init = logged(&sb.log(), "initialize");
    assert_eq!(init["protocolVersion"], 2);
    assert_eq!(init["clientInfo"]["name"], "interop-js-client-v2");
    assert_eq!(
        init["clientCapabilities"]["fs"],
        json!({"readTextFile": false, "writeTextFile": false})
    );
    assert_eq!(
        logged(&sb.log(), "permission"),
        json!({"outcome": "selected", "optionId": "allow"})
    );
}

#[test]
fn the_bridge_translates_every_update_of_the_sdk_v1_agent_for_the_sdk_v2_client() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let file = sb.write("notes.txt", "secret\n");
    let prompt = format!("all-updates read {}", file.display());
    let out = client_v2(&sb, &["--prompt", &prompt], &bridged(js("agent.mjs")));
    assert_code(&out, 0);
    // The v2 client has no file system: the agent's fs/read_text_file was
    // refused (-32601, saying why), and the agent said so.
    assert!(
        out.stdout.contains("file error: Method not found\n"),
        "{}",
        out.stdout
    );
    let log = sb.log();
    assert!(log.contains("read error -32601"), "{log}");
    // Every kind of v1 update reached the v2 SDK as a v2 update it accepted.
    for line in [
        "user_message_chunk",
        "agent_thought_chunk bridge-msg-",
        "tool_call_update call-2 in_progress Edit /tmp/a.txt diff modify /tmp/a.txt content",
        "tool_call_update call-2 completed",
        "plan_update items Read the code:completed,Change it:in_progress,Run the tests:pending",
        "available_commands_update",
        "config_option_update",
        "session_info_update",
        "usage_update",
    ] {
        assert_has(&out, line);
    }
    assert!(out.stdout.ends_with("STOP end_turn\n"), "{}", out.stdout);
    assert_sdk_accepted_everything(Js, &out);
}

#[test]
fn sdk_v2_client_cancels_the_sdk_v1_agent_through_the_bridge() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let out = client_v2(
        &sb,
        &["--prompt", "slow", "--cancel-after-chunks", "3"],
        &bridged(js("agent.mjs")),
    );
    assert_code(&out, 0);
    assert!(out.stdout.starts_with("slow\n"), "{}", out.stdout);
    assert!(out.stdout.ends_with("\nSTOP cancelled\n"), "{}", out.stdout);
    let log = sb.log();
    assert!(log.contains("session/cancel js-1"), "{log}");
    assert!(log.contains("stop cancelled"), "{log}");
}

#[test]
fn sdk_v1_client_uses_the_sdk_v2_agent_through_the_bridge() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let out = client_v1(
        &sb,
        &["--prompt", "think permission plan"],
        &bridged(js("agent-v2.mjs")),
    );
    assert_code(&out, 0);
    // The v1 prompt was answered when the v2 agent went idle, with its stop
    // reason.
    assert_eq!(
        out.stdout,
        "think permission plan\npermission: selected allow\nSTOP end_turn\n"
    );
    assert_has(&out, "interop-bridge: client v1, agent v2, translated");
    assert_has(&out, "agent speaks protocol 1");
    // v2's upserts became v1's tool_call then tool_call_update; the
    // permission subject became the v1 tool call; the plan arrived.
    assert_has(&out, "agent_thought_chunk");
    assert_has(&out, "tool_call call-1 pending");
    assert_has(&out, "permission for call-1: allow");
    assert_has(&out, "tool_call_update call-1 completed");
    assert_has(&out, "[client] plan");
    assert_sdk_accepted_everything(Js, &out);
    // What the v2 agent got: v2's initialize (the v1 one translated, after
    // the SDK refused the v1 one with -32022 before its handler), and the v1
    // answer to its permission request.
    let log = sb.log();
    let init = logged(&log, "initialize");
    assert_eq!(init["protocolVersion"], 2);
    assert_eq!(init["info"]["name"], "interop-js-client");
    assert_eq!(
        logged(&log, "permission"),
        json!({"outcome": "selected", "optionId": "allow"})
    );
}

#[test]
fn sdk_v1_client_cancels_the_sdk_v2_agent_through_the_bridge() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let out = client_v1(
        &sb,
        &["--prompt", "slow", "--cancel-after-chunks", "3"],
        &bridged(js("agent-v2.mjs")),
    );
    assert_code(&out, 0);
    assert!(out.stdout.ends_with("\nSTOP cancelled\n"), "{}", out.stdout);
    let log = sb.log();
    assert!(log.contains("session/cancel js2-1"), "{log}");
    assert!(log.contains("stop cancelled"), "{log}");
}

#[test]
fn a_v1_prompt_dropped_by_cancel_request_cancels_the_v2_turn_through_the_bridge() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let out = client_v1(
        &sb,
        &["--prompt", "slow", "--abort-after-chunks", "3"],
        &bridged(js("agent-v2.mjs")),
    );
    assert_code(&out, 1);
    assert!(
        out.stdout.ends_with("\nERROR -32800 Request cancelled\n"),
        "{}",
        out.stdout
    );
    // The client gives up at once; the agent got session/cancel.
    let log = sb.log();
    assert!(log.contains("session/cancel js2-1"), "{log}");
}

#[test]
fn the_bridge_pipes_a_client_and_an_agent_of_the_same_version() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let v2 = client_v2(&sb, &["--prompt", "hello v2"], &bridged(echo_agent()));
    assert_code(&v2, 0);
    assert_eq!(v2.stdout, "hello v2\nSTOP end_turn\n");
    assert_has(&v2, "interop-bridge: client v2, agent v2, piped");
    assert_has(&v2, "prompt acknowledged: echo-1-user-1");
    let v1 = client_v1(&sb, &["--prompt", "hello v1"], &bridged(js("agent.mjs")));
    assert_code(&v1, 0);
    assert_eq!(v1.stdout, "hello v1\nSTOP end_turn\n");
    assert_has(&v1, "interop-bridge: client v1, agent v1, piped");
}
