//! Cancellation: a turn cancelled while the model streams, and while a
//! command runs (locally and in a client terminal), ends promptly with
//! `cancelled` and kills the command.

use crate::support;

use acp::schema::*;
use serde_json::json;
use support::*;

#[tokio::test]
async fn cancel_mid_stream() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![Reply::SseHang(vec![text("Thinking about it")])]).await;
    let env = openai_env(&mock);
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(true, true), dir.path()).await;
    let turn = r.spawn_prompt(&sid, "hi");
    let rec = r.client.rec.clone();
    wait_until("the first chunk", || {
        rec.message_text().contains("Thinking")
    })
    .await;
    r.cancel_turn(&sid, turn).await;
    // The session still works afterwards, and remembers the partial answer.
    mock.push(text_reply("Back."));
    assert_eq!(r.prompt(&sid, "again").await, StopReason::EndTurn);
    let last = mock.requests().pop().unwrap();
    assert_eq!(roles(&last), ["system", "user", "assistant", "user"]);
}

fn pid_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.contains(") Z "),
        Err(_) => false,
    }
}

/// A turn in auto mode (no permission prompt) whose one tool call runs
/// `sleep 30`, started and running: its pid is known.
struct Sleeping {
    _dir: tempfile::TempDir,
    _mock: MockLlm,
    r: Running,
    sid: SessionId,
    turn: tokio::task::JoinHandle<Result<PromptResponse, acp::ConnectionError>>,
    pid: i32,
}

async fn start_sleeping_command(client: TestClient, client_terminal: bool) -> Sleeping {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    let mock = MockLlm::start(vec![tool_reply(
        "c1",
        "run_command",
        json!({"command": "echo started; echo $$ > pid.txt; exec sleep 30"}),
    )])
    .await;
    let env = openai_env(&mock);
    let r = start_agent(&env, client).await;
    let sid = open_session(&r, caps(false, client_terminal), &cwd).await;
    r.conn
        .set_session_mode(SetSessionModeRequest::new(sid.clone(), "auto"))
        .await
        .unwrap();
    let turn = r.spawn_prompt(&sid, "run");
    let pid_file = cwd.join("pid.txt");
    wait_until("the command to start", || {
        std::fs::read_to_string(&pid_file)
            .map(|s| s.ends_with('\n'))
            .unwrap_or(false)
    })
    .await;
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    Sleeping {
        _dir: dir,
        _mock: mock,
        r,
        sid,
        turn,
        pid,
    }
}

async fn cancel_mid_command(client_terminal: bool) {
    // `_dir` and `_mock` are kept alive to the end of the test.
    let Sleeping {
        r,
        sid,
        turn,
        pid,
        _dir,
        _mock,
    } = start_sleeping_command(TestClient::new("allow_once"), client_terminal).await;
    assert!(pid_alive(pid));
    r.cancel_turn(&sid, turn).await;
    wait_until("the command to be killed", || !pid_alive(pid)).await;
    assert!(r.client.rec.permissions.lock().unwrap().is_empty());
    assert!(r.client.rec.updates().iter().any(|u| matches!(u,
        SessionUpdate::CurrentModeUpdate(m) if m.current_mode_id.as_str() == "auto")));
    if client_terminal {
        assert_eq!(r.client.rec.kills.lock().unwrap().len(), 1);
    }
    let calls = r.client.rec.final_tool_calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].status, ToolCallStatus::Failed);
}

/// The editor starts the command but answers `terminal/create` only after
/// the cancel: the agent still learns the terminal and ends it, rather than
/// leaving the command running.
#[tokio::test]
async fn cancel_before_the_editor_answers_terminal_create() {
    let client = TestClient::new("allow_once");
    client.late.lock().unwrap().push("terminal/create");
    // `_dir` and `_mock` are kept alive to the end of the test.
    let Sleeping {
        r,
        sid,
        turn,
        pid,
        _dir,
        _mock,
    } = start_sleeping_command(client, true).await;
    r.cancel_turn(&sid, turn).await;
    wait_until("the command to be killed", || !pid_alive(pid)).await;
    wait_until("the terminal to be released", || {
        r.client.rec.releases.lock().unwrap().len() == 1
    })
    .await;
    assert_eq!(r.client.rec.kills.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn cancel_mid_command_local() {
    cancel_mid_command(false).await;
}

#[tokio::test]
async fn cancel_mid_command_in_client_terminal() {
    cancel_mid_command(true).await;
}
