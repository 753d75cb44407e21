//! The session store under crashes and sharing: `kill -9` in the middle of a
//! turn keeps the prompt and every finished message; two agent processes on
//! one data directory keep both histories whole; a store written by the
//! first format is brought up to date with its sessions.

use crate::support;

use acp::schema::*;
use serde_json::json;
use std::path::Path;
use support::*;

/// `acp-agent --check-store --data-dir DIR`: its exit code and output.
fn check_store(data: &Path) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_acp-agent"))
        .arg("--check-store")
        .arg("--data-dir")
        .arg(data)
        .env_clear()
        .env("HOME", data)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

async fn load(r: &Running, sid: &SessionId, cwd: &Path) -> Vec<SessionUpdate> {
    let before = r.client.rec.updates().len();
    r.conn
        .load_session(LoadSessionRequest::new(
            sid.clone(),
            cwd.display().to_string(),
        ))
        .await
        .unwrap();
    r.client.rec.updates()[before..].to_vec()
}

/// The text of each user and agent message chunk of a replay, by kind.
fn replayed_text(updates: &[SessionUpdate]) -> Vec<(String, String)> {
    updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::UserMessageChunk(c) => Some(("user", c)),
            SessionUpdate::AgentMessageChunk(c) => Some(("agent", c)),
            _ => None,
        })
        .map(|(who, c)| {
            (
                who.to_string(),
                c.content.as_text().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn kill_9_in_the_middle_of_a_turn_keeps_the_prompt_and_finished_messages() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let cwd = canonical(work.path());
    std::fs::write(cwd.join("notes.txt"), "remember the milk\n").unwrap();
    let mut first = vec![text("Let me read it. ")];
    first.extend(tool_call(
        0,
        "r1",
        "read_file",
        r#"{"path":"notes.txt"}"#,
        2,
    ));
    first.extend([finish("tool_calls"), done()]);
    let mock = MockLlm::start(vec![
        Reply::Sse(first),
        // The second call streams a little, then hangs: the agent is killed
        // while this message is in flight.
        Reply::SseHang(vec![text("The notes say")]),
    ])
    .await;
    let env = openai_env(&mock);
    let mut r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    let sid = open_session(&r, caps(false, false), &cwd).await;
    let _turn = r.spawn_prompt(&sid, "What do my notes say?");
    let rec = r.client.rec.clone();
    wait_until("the second message to stream", || {
        rec.message_text().contains("The notes say")
    })
    .await;
    r.process.kill().unwrap();
    r.process.wait().await.unwrap();

    let (code, report) = check_store(data.path());
    assert_eq!(code, 0, "{report}");
    assert!(report.starts_with("ok: "), "{report}");

    mock.push(text_reply("They say to remember the milk."));
    let r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    r.initialize().await;
    let replay = load(&r, &sid, &cwd).await;
    assert_eq!(
        replayed_text(&replay),
        [
            ("user".into(), "What do my notes say?".into()),
            ("agent".into(), "Let me read it. ".into()),
        ]
    );
    let calls: Vec<&ToolCallUpdate> = replay
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCallUpdate(u) => Some(u),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls.last().unwrap().status,
        Some(ToolCallStatus::Completed)
    );
    // The model gets the prompt, the finished call and its result.
    assert_eq!(r.prompt(&sid, "Well?").await, StopReason::EndTurn);
    let last = mock.requests().pop().unwrap();
    assert_eq!(
        roles(&last),
        ["system", "user", "assistant", "tool", "user"]
    );
    assert_eq!(tool_results(&last), ["remember the milk\n"]);
}

#[tokio::test]
async fn kill_9_while_a_tool_runs_leaves_a_conversation_the_model_accepts() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let cwd = canonical(work.path());
    let mock = MockLlm::start(vec![tool_reply(
        "c1",
        "run_command",
        json!({"command": "echo started > started.txt; exec sleep 30"}),
    )])
    .await;
    let env = openai_env(&mock);
    let mut r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    let sid = open_session(&r, caps(false, false), &cwd).await;
    r.conn
        .set_session_mode(SetSessionModeRequest::new(sid.clone(), "auto"))
        .await
        .unwrap();
    let _turn = r.spawn_prompt(&sid, "run it");
    wait_until("the command to start", || cwd.join("started.txt").exists()).await;
    r.process.kill().unwrap();
    r.process.wait().await.unwrap();

    mock.push(text_reply("It was interrupted."));
    let r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    r.initialize().await;
    load(&r, &sid, &cwd).await;
    assert_eq!(r.prompt(&sid, "what happened?").await, StopReason::EndTurn);
    let last = mock.requests().pop().unwrap();
    // The call that never finished is answered, as providers require.
    assert_eq!(
        roles(&last),
        ["system", "user", "assistant", "tool", "user"]
    );
    assert!(
        tool_results(&last)[0].contains("stopped before this tool call finished"),
        "{:?}",
        tool_results(&last)
    );
}

#[tokio::test]
async fn two_processes_on_one_data_dir_keep_both_histories() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let cwd = canonical(work.path());
    let mock = MockLlm::start(vec![]).await;
    let env = openai_env(&mock);
    let a = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    let b = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    let sid = open_session(&a, caps(false, false), &cwd).await;
    b.initialize().await;

    // Two windows on one session, taking turns.
    mock.push(text_reply("answer 1"));
    assert_eq!(a.prompt(&sid, "prompt 1").await, StopReason::EndTurn);
    load(&b, &sid, &cwd).await;
    mock.push(text_reply("answer 2"));
    assert_eq!(b.prompt(&sid, "prompt 2").await, StopReason::EndTurn);
    mock.push(text_reply("answer 3"));
    assert_eq!(a.prompt(&sid, "prompt 3").await, StopReason::EndTurn);
    mock.push(text_reply("answer 4"));
    assert_eq!(b.prompt(&sid, "prompt 4").await, StopReason::EndTurn);
    // Each process saw the other's turns before its own.
    let contents = |req: &serde_json::Value| -> Vec<String> {
        req["messages"].as_array().unwrap()[1..]
            .iter()
            .map(|m| m["content"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let reqs = mock.requests();
    assert_eq!(
        contents(&reqs[2]),
        ["prompt 1", "answer 1", "prompt 2", "answer 2", "prompt 3"],
        "the first process read the second one's turn"
    );
    assert_eq!(
        contents(&reqs[3]),
        [
            "prompt 1", "answer 1", "prompt 2", "answer 2", "prompt 3", "answer 3", "prompt 4"
        ]
    );

    // Turns that run at the same time in the two processes are each kept
    // whole, in the order they started.
    mock.push(Reply::Delayed(
        std::time::Duration::from_millis(500),
        Box::new(text_reply("slow answer")),
    ));
    let slow = a.spawn_prompt(&sid, "slow prompt");
    wait_until("the slow call", || mock.requests().len() == 5).await;
    mock.push(text_reply("fast answer"));
    assert_eq!(b.prompt(&sid, "fast prompt").await, StopReason::EndTurn);
    assert_eq!(
        slow.await.unwrap().unwrap().stop_reason,
        StopReason::EndTurn
    );

    // A third process sees everything, in turn order.
    let c = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    c.initialize().await;
    let replay = load(&c, &sid, &cwd).await;
    let texts: Vec<String> = replayed_text(&replay).into_iter().map(|(_, t)| t).collect();
    assert_eq!(
        texts,
        [
            "prompt 1",
            "answer 1",
            "prompt 2",
            "answer 2",
            "prompt 3",
            "answer 3",
            "prompt 4",
            "answer 4",
            "slow prompt",
            "slow answer",
            "fast prompt",
            "fast answer"
        ]
    );
    mock.push(text_reply("all there"));
    c.prompt(&sid, "last").await;
    let last = mock.requests().pop().unwrap();
    assert_eq!(contents(&last).len(), 13);
    assert_eq!(
        &contents(&last)[8..12],
        ["slow prompt", "slow answer", "fast prompt", "fast answer"]
    );

    // Two sessions, one per process, with turns at the same time.
    let (ma, mb) = (MockLlm::start(vec![]).await, MockLlm::start(vec![]).await);
    let (env_a, env_b) = (openai_env(&ma), openai_env(&mb));
    let a = start_agent_in(&env_a, TestClient::new("allow_once"), data.path()).await;
    let b = start_agent_in(&env_b, TestClient::new("allow_once"), data.path()).await;
    let sa = open_session(&a, caps(false, false), &cwd).await;
    let sb = open_session(&b, caps(false, false), &cwd).await;
    for i in 0..10 {
        ma.push(text_reply(&format!("a{i}")));
        mb.push(text_reply(&format!("b{i}")));
        let (ta, tb) = (
            a.spawn_prompt(&sa, &format!("pa{i}")),
            b.spawn_prompt(&sb, &format!("pb{i}")),
        );
        ta.await.unwrap().unwrap();
        tb.await.unwrap().unwrap();
    }
    let c = start_agent_in(&env_a, TestClient::new("allow_once"), data.path()).await;
    c.initialize().await;
    for (sid, p) in [(&sa, "a"), (&sb, "b")] {
        let texts: Vec<String> = replayed_text(&load(&c, sid, &cwd).await)
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        let expected: Vec<String> = (0..10)
            .flat_map(|i| [format!("p{p}{i}"), format!("{p}{i}")])
            .collect();
        assert_eq!(texts, expected);
    }
}

#[tokio::test]
async fn a_store_of_the_first_format_keeps_its_sessions() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(
        data.path().join("sessions.sqlite3"),
        include_bytes!("../fixtures/store-v1/sessions.sqlite3"),
    )
    .unwrap();
    let mock = MockLlm::start(vec![text_reply("Welcome back.")]).await;
    let env = openai_env(&mock);
    let r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    r.initialize().await;
    let all = r
        .conn
        .list_sessions(ListSessionsRequest::new())
        .await
        .unwrap();
    let titles: Vec<Option<&str>> = all.sessions.iter().map(|s| s.title.as_deref()).collect();
    assert_eq!(titles, [None, Some("Other question"), Some("Fix the bug")]);
    let sid = SessionId::new("sess-18ed421c4cc8fa7a-15128-0");
    let cwd = Path::new("/home/user/project-one");
    let loaded = r
        .conn
        .load_session(LoadSessionRequest::new(
            sid.clone(),
            cwd.display().to_string(),
        ))
        .await
        .unwrap();
    assert_eq!(loaded.modes.unwrap().current_mode_id.as_str(), "auto");
    let replay = r.client.rec.updates();
    let kinds: Vec<&str> = replay.iter().map(|u| u.kind()).collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "agent_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_message_chunk",
            // Its title; no usage (the first format kept no size or usage).
            "session_info_update",
            "available_commands_update"
        ]
    );
    assert_eq!(r.client.rec.message_text(), "Reading. Fixed.");
    assert_eq!(r.prompt(&sid, "Thanks").await, StopReason::EndTurn);
    let last = mock.requests().pop().unwrap();
    assert_eq!(
        roles(&last),
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
    assert_eq!(last["messages"][1]["content"], "Fix the bug\nin bug.rs");
    let (code, report) = check_store(data.path());
    assert_eq!(code, 0, "{report}");
    assert!(
        report.contains("3 sessions, 3 turns, 10 messages"),
        "{report}"
    );
}
