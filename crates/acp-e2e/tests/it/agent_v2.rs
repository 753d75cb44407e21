//! `acp-agent` speaking protocol v2 with the official TypeScript SDK's v2
//! client (`interop/js/client-v2.mjs`, on `@agentclientprotocol/sdk`'s
//! `experimental/v2`), on the scripted mock model: every feature the client
//! checks (the acknowledgement matching the user message, streamed text,
//! idle with the stop reason, a permission question with its subject,
//! `session/cancel`, `session/list`, `session/close`, `session/resume` with
//! the history replayed), and the SDK finding nothing wrong with what it
//! was sent. Skipped without Node.js unless `ACP_INTEROP=require`.

use crate::support::{self, MockLlm, Reply, text, text_reply, tool_reply};
use acp_interop::Peer::Js;
use acp_interop::{Output, Sandbox, assert_code, assert_sdk_accepted_everything, run};
use serde_json::json;

/// The SDK's v2 client with `options`, against `acp-agent` on `mock`, in a
/// sandbox whose `work/` is the session's directory.
async fn client_v2(sb: &Sandbox, mock: &MockLlm, options: &[&str]) -> Output {
    let programs = Js.programs();
    let mut command = sb.command(&programs.interpreter);
    command
        .arg(programs.dir.join("client-v2.mjs"))
        .args(options)
        .arg("--")
        .arg(support::agent_bin())
        .arg("--data-dir")
        .arg(sb.root().join("agent-data"))
        .env("OPENAI_BASE_URL", &mock.base_url)
        .env("OPENAI_API_KEY", "test-key")
        .env("ACP_AGENT_MODEL", "openai:mock-model");
    tokio::task::spawn_blocking(move || run(command))
        .await
        .unwrap()
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

/// The REPLAY lines of `stdout` without their message ids (made up by the
/// agent).
fn replayed(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("REPLAY "))
        .map(|l| {
            let mut words = l.splitn(3, ' ');
            let kind = words.next().unwrap_or_default();
            let _id = words.next();
            format!("{kind} {}", words.next().unwrap_or_default())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_v2_client_completes_turns_with_an_edit_then_lists_and_resumes() {
    if !Js.available() {
        return;
    }
    let mock = MockLlm::start(vec![
        text_reply("Hello there"),
        tool_reply(
            "call_1",
            "edit_file",
            json!({"path": "notes.txt", "old_string": "one", "new_string": "two"}),
        ),
        text_reply("Edited."),
    ])
    .await;
    let sb = Sandbox::new();
    let notes = sb.write("notes.txt", "one\n");
    let work = sb.work().display().to_string();
    let out = client_v2(
        &sb,
        &mock,
        &[
            "--prompt",
            "hi",
            "--prompt",
            "edit notes",
            "--list",
            "--resume",
        ],
    )
    .await;
    assert_code(&out, 0);
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "two\n");
    // Each acknowledgement matched a user message (no MISMATCH line).
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[..4],
        ["Hello there", "STOP end_turn", "Edited.", "STOP end_turn"],
        "{}",
        out.stdout
    );
    assert!(lines[4].starts_with("SESSION sess-"), "{}", out.stdout);
    assert!(lines[4].ends_with(&format!(" {work}")), "{}", out.stdout);
    assert_eq!(
        replayed(&out.stdout),
        [
            "user_message hi",
            "agent_message Hello there",
            "user_message edit notes",
            "agent_message Edited.",
        ]
    );
    assert_eq!(lines[lines.len() - 2..], ["STATE idle -", "RESUMED"]);
    assert_has(
        &out,
        "agent speaks protocol 2; info {\"name\":\"acp-agent\"",
    );
    assert_has(&out, "state_update running");
    assert_has(&out, "prompt acknowledged: ");
    // The question names the call it is about; the call shows the change.
    assert_has(&out, "permission \"Edit notes.txt\" call_1-");
    assert_has(&out, ": allow_once");
    assert_has(&out, &format!("completed diff modify {}", notes.display()));
    assert_has(&out, "replayed tool_call_update call_1-");
    assert_sdk_accepted_everything(Js, &out);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_v2_client_cancels_a_turn_which_ends_idle_cancelled() {
    if !Js.available() {
        return;
    }
    let mock = MockLlm::start(vec![Reply::SseHang(vec![text("Counting: 1, 2, 3")])]).await;
    let sb = Sandbox::new();
    let out = client_v2(
        &sb,
        &mock,
        &["--cancel-after-chunks", "1", "--prompt", "count"],
    )
    .await;
    assert_code(&out, 0);
    assert_eq!(out.stdout, "Counting: 1, 2, 3\nSTOP cancelled\n");
    assert_has(&out, "sending session/cancel");
    assert_sdk_accepted_everything(Js, &out);
}
