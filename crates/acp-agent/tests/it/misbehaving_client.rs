//! An editor that answers the agent's requests with more than one message
//! may hold, or never answers them: the tool call fails (or the cancel ends
//! it) with a clear message, and the turn goes on instead of hanging.

use crate::support;

use acp::schema::*;
use serde_json::json;
use std::path::Path;
use std::time::Duration;
use support::*;

/// The message for an answer of `OVERSIZE` bytes plus a little framing.
const TOO_LONG: &str = "the editor's answer was 65.0 MiB, longer than one message may be \
                        (64.0 MiB), and was dropped";

/// Runs one turn in which the model calls `tool` with `args` (in `mode`),
/// then answers "done"; the client, the tool result the model was sent.
async fn one_tool_call(
    client: TestClient,
    cwd: &Path,
    mode: &str,
    tool: &str,
    args: serde_json::Value,
) -> (Running, String) {
    let mock = MockLlm::start(vec![tool_reply("call_1", tool, args), text_reply("done")]).await;
    let env = openai_env(&mock);
    let r = start_agent(&env, client).await;
    let sid = open_session(&r, caps(true, true), cwd).await;
    r.conn
        .set_session_mode(SetSessionModeRequest::new(sid.clone(), mode))
        .await
        .unwrap();
    let stop = tokio::time::timeout(Duration::from_secs(120), r.prompt(&sid, "go"))
        .await
        .expect("the turn ends: the request does not hang");
    assert_eq!(stop, StopReason::EndTurn);
    let results = tool_results(&mock.requests()[1]);
    assert_eq!(results.len(), 1);
    let call = r.client.rec.final_tool_calls().pop().unwrap();
    assert_eq!(call.status, ToolCallStatus::Failed);
    (r, results[0].clone())
}

#[tokio::test]
async fn an_over_long_permission_answer_fails_the_tool_call_not_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    let client = TestClient::new("allow_once");
    client
        .oversize
        .lock()
        .unwrap()
        .push("session/request_permission");
    let (r, result) = one_tool_call(
        client,
        &cwd,
        "ask",
        "write_file",
        json!({"path": "a.txt", "content": "hi"}),
    )
    .await;
    assert_eq!(r.client.rec.permissions.lock().unwrap().len(), 1);
    assert!(
        result.contains(&format!(
            "could not ask the user for permission: {TOO_LONG}"
        )),
        "{result}"
    );
    assert!(!cwd.join("a.txt").exists(), "nothing written without a yes");
}

#[tokio::test]
async fn an_over_long_terminal_output_fails_the_command_not_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    let client = TestClient::new("allow_once");
    client.oversize.lock().unwrap().push("terminal/output");
    let (r, result) = one_tool_call(
        client,
        &cwd,
        "auto",
        "run_command",
        json!({"command": "echo hi"}),
    )
    .await;
    assert!(
        result.contains(&format!("could not read the terminal output: {TOO_LONG}")),
        "{result}"
    );
    // The terminal is still released.
    assert_eq!(r.client.rec.releases.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_cancel_ends_a_request_the_editor_never_answers() {
    for (method, mode, tool, args) in [
        (
            "terminal/create",
            "auto",
            "run_command",
            json!({"command": "echo hi"}),
        ),
        (
            "session/request_permission",
            "ask",
            "write_file",
            json!({"path": "a.txt", "content": "hi"}),
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let cwd = canonical(dir.path());
        let client = TestClient::new("allow_once");
        client.silent.lock().unwrap().push(method);
        let mock = MockLlm::start(vec![tool_reply("call_1", tool, args)]).await;
        let env = openai_env(&mock);
        let r = start_agent(&env, client).await;
        let sid = open_session(&r, caps(true, true), &cwd).await;
        r.conn
            .set_session_mode(SetSessionModeRequest::new(sid.clone(), mode))
            .await
            .unwrap();
        let turn = r.spawn_prompt(&sid, "go");
        wait_until("the request to reach the editor", || {
            let rec = &r.client.rec;
            !rec.terminals_created.lock().unwrap().is_empty()
                || !rec.permissions.lock().unwrap().is_empty()
        })
        .await;
        // Ends `cancelled` within the helper's bound, or it panics.
        r.cancel_turn(&sid, turn).await;
        assert!(!cwd.join("a.txt").exists(), "{method}");
    }
}
