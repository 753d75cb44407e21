//! Protocol v2 recordings: `acp trace` (text, JSON, HTML) and `acp mock`
//! on a small hand-written v2 session (`tests/fixtures/session_v2.jsonl`:
//! the prompt acknowledged with a message id, a message streamed in chunks,
//! interleaved with a tool call and a permission question, and replaced as
//! a whole, the turn ended by the idle `state_update`), and a real v2
//! session recorded by `acp record` between the official TypeScript SDK's
//! v2 client and agent.

use crate::common;
use common::*;
use std::path::PathBuf;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/session_v2.jsonl")
}

fn trace(sb: &Sandbox, args: &[&str]) -> Output {
    let fixture = fixture();
    let mut full = vec!["trace", fixture.to_str().unwrap()];
    full.extend_from_slice(args);
    let out = sb.run(&full);
    Output {
        stdout: out
            .stdout
            .replace(fixture.to_str().unwrap(), "tests/fixtures/session_v2.jsonl"),
        ..out
    }
}

/// What `acp trace` shows of the fixture.
const TIMELINE: &str = concat!(
    "recording tests/fixtures/session_v2.jsonl\n",
    "agent: my-v2-agent\n",
    "started: 2025-01-02T03:04:05.000000Z\n",
    "\n",
    "    0.001  → initialize #0: ok in 10.0 ms, protocol 2, my-v2-agent 0.9\n",
    "    0.020  → session/new #1: ok in 5.0 ms, session s2\n",
    "    0.025  ← session s2 opened\n",
    "    0.100  ┌ s2 turn 1 \"hello\"\n",
    "    0.102  │ ← user_message \"hello\"\n",
    "    0.103  │ ← state_update running\n",
    "    0.104  │ ← session/prompt acknowledged as m-user-1 in 4.0 ms\n",
    "    0.110  │ ← agent_message_chunk ×4 \"Hello, world.\"\n",
    "    0.120  │ ← tool_call_update call-1 \"Edit notes.txt\" (edit): pending\n",
    "    0.121  │ ← state_update requires_action\n",
    "    0.122  │ ← session/request_permission #0 call-1 \"Allow editing notes.txt?\": allow (allow_once), reject (reject_once): ok in 178.0 ms, selected allow\n",
    "    0.301  │ ← state_update running\n",
    "    0.302  │ ← tool_call_update call-1: completed\n",
    "    0.305  │ ← plan_update p1: 1 of 2 done\n",
    "    0.330  └ s2 turn 1: end_turn in 230.0 ms\n",
    "    0.400  client closed its end\n",
    "    0.410  agent closed its end\n",
    "    0.411  the agent exited with code 0\n",
    "\n",
    "session s2 (session/new, cwd /work)\n",
    "  turn 1 \"hello\": end_turn, 230.0 ms\n",
    "    tool call call-1 \"Edit notes.txt\" (edit): pending → completed\n",
    "    permission for call-1: selected allow (offered allow (allow_once), reject (reject_once)), 178.0 ms\n",
    "counts: 1 sessions, 1 turns, 1 tool calls, 1 permission questions\n",
    "  lines: client 4 (419 bytes), agent 16 (2679 bytes), stderr 0\n",
    "  messages: 4 requests, 4 responses, 12 notifications; 0 errors, 0 invalid lines\n",
    "  updates: agent_message 1, agent_message_chunk 3, plan_update 1, state_update 4, tool_call_update 2, user_message 1\n",
);

#[test]
fn a_v2_turn_ends_at_idle_and_a_message_is_one_row_with_its_final_text() {
    let sb = Sandbox::new();
    let out = trace(&sb, &[]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, TIMELINE);
    assert_eq!(out.stderr, "");
}

#[test]
fn json_output_ends_the_v2_turn_at_idle() {
    let sb = Sandbox::new();
    let out = trace(&sb, &["--format", "json"]);
    assert_code(&out, 0);
    let value: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let turn = &value["sessions"][0]["turns"][0];
    assert_eq!(turn["stopReason"], "end_turn");
    assert_eq!(turn["durationMs"], 230.0);
    assert_eq!(turn["permissions"][0]["toolCall"], "call-1");
    let ends: Vec<u64> = value["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["endsTurn"] == true)
        .map(|e| e["record"].as_u64().unwrap())
        .collect();
    assert_eq!(ends, [21], "the idle state_update, line 21");
    // The acknowledgement is the prompt's answer, inside the turn.
    let ack = value["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["record"] == 9)
        .unwrap();
    assert_eq!(ack["turn"], 1);
    assert_eq!(ack["summary"], "acknowledged as m-user-1");
}

#[test]
fn the_html_page_shows_a_v2_message_once_with_its_final_text() {
    let sb = Sandbox::new();
    let page = sb.root().join("v2.html");
    let out = trace(&sb, &["--html", page.to_str().unwrap()]);
    assert_code(&out, 0);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(
        html.matches("agent_message_chunk ×4 Hello, world.").count(),
        1,
        "{html}"
    );
    assert!(!html.contains("agent_message_chunk Hel"), "{html}");
    assert!(html.contains("└ s2 turn 1: end_turn in 230.0 ms"), "{html}");
    assert!(
        html.contains("session/prompt acknowledged as m-user-1"),
        "{html}"
    );
}

#[test]
fn acp_mock_replays_a_v2_recording_to_acp_exec_protocol_2() {
    let sb = Sandbox::new();
    let mock = format!("{} mock --trace {}", ACP, fixture().display());
    let out = sb.run(&[
        "exec",
        "--agent",
        &mock,
        "--protocol",
        "2",
        "--approve-all",
        "--verbose",
        "hello",
    ]);
    assert_code(&out, 0);
    // The bridge shows a whole-message replacement after the earlier
    // chunks (its documented loss).
    assert_eq!(out.stdout, "Hello againHello, world.\n");
    assert!(
        out.stderr
            .contains("[permission] Allow editing notes.txt?: allowed (allow_once: Allow)\n"),
        "{}",
        out.stderr
    );
    // The mock found our client's v2 messages as recorded.
    assert!(!out.stderr.contains("difference"), "{}", out.stderr);
}

#[test]
fn acp_mock_replays_a_v2_recording_to_the_sdk_v2_client() {
    use acp_interop::Peer::Js;
    if !Js.available() {
        return;
    }
    let sb = acp_interop::Sandbox::new();
    let programs = Js.programs();
    let mut command = sb.command(&programs.interpreter);
    command
        .arg(programs.dir.join("client-v2.mjs"))
        .args(["--prompt", "hello", "--", ACP, "mock", "--trace"])
        .arg(fixture());
    let out = acp_interop::run(command);
    acp_interop::assert_code(&out, 0);
    assert_eq!(out.stdout, "Hello again\nSTOP end_turn\n");
    assert!(
        out.stderr.contains("prompt acknowledged: m-user-1"),
        "{}",
        out.stderr
    );
    acp_interop::assert_sdk_accepted_everything(Js, &out);
}

#[test]
fn a_v2_session_recorded_by_acp_record_is_traced_to_its_idle_end() {
    use acp_interop::Peer::Js;
    if !Js.available() {
        return;
    }
    let sb = acp_interop::Sandbox::new();
    let record = sb.root().join("v2.jsonl");
    let programs = Js.programs();
    let mut command = sb.command(&programs.interpreter);
    command
        .arg(programs.dir.join("client-v2.mjs"))
        .args(["--prompt", "one two permission", "--", ACP, "record", "-o"])
        .arg(&record)
        .arg("--")
        .arg(&programs.interpreter)
        .arg(programs.dir.join("agent-v2.mjs"));
    let out = acp_interop::run(command);
    acp_interop::assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "one two permission\npermission: selected allow\nSTOP end_turn\n"
    );
    let mut command = sb.command(ACP);
    command.arg("trace").arg(&record);
    let out = acp_interop::run(command);
    acp_interop::assert_code(&out, 0);
    // One row for the agent's message (its five chunks), the turn ended
    // at idle, the permission question's title and subject.
    assert!(
        out.stdout.contains(
            "│ ← agent_message_chunk ×5 \"one two permission\\npermission: selected allow\\n\"\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("└ js2-1 turn 1: end_turn in "),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("  turn 1 \"one two permission\": end_turn, "),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "call-1 \"Allow editing notes.txt?\": allow (allow_once), reject (reject_once): ok in "
        ),
        "{}",
        out.stdout
    );
}
