//! Sessions kept in SQLite: list, load (with replay), resume, close and
//! delete across a restart of the agent; the title and the last usage a
//! client is shown when it opens a stored session.

use crate::support;

use acp::schema::*;
use serde_json::{Value, json};
use support::*;

#[tokio::test]
async fn sessions_survive_a_restart() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let cwd1 = canonical(work.path()).join("one");
    let cwd2 = canonical(work.path()).join("two");
    std::fs::create_dir_all(&cwd1).unwrap();
    std::fs::create_dir_all(&cwd2).unwrap();
    std::fs::write(cwd1.join("bug.rs"), "fn bug() {}\n").unwrap();
    let mut first = vec![text("Reading. ")];
    first.extend(tool_call(0, "r1", "read_file", r#"{"path":"bug.rs"}"#, 2));
    first.extend([finish("tool_calls"), done()]);
    let mock = MockLlm::start(vec![
        Reply::Sse(first),
        text_reply("Fixed."),
        text_reply("B answer"),
    ])
    .await;
    let env = openai_env(&mock);

    // First agent process: two sessions.
    let mut r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    let a = open_session(&r, caps(false, false), &cwd1).await;
    let b = r.new_session(&cwd2).await;
    r.conn
        .prompt(PromptRequest::new(
            a.clone(),
            vec!["Fix the bug\nin bug.rs".into()],
        ))
        .await
        .unwrap();
    r.conn
        .set_session_mode(SetSessionModeRequest::new(a.clone(), "auto"))
        .await
        .unwrap();
    r.prompt(&b, "Other question").await;
    assert!(r.client.rec.updates().iter().any(|u| matches!(u,
        SessionUpdate::SessionInfoUpdate(i) if i.title == Some(Some("Fix the bug".into())))));
    r.process.shutdown().await.unwrap();

    // Second process, same data directory.
    let r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    let init = r.initialize().await;
    assert!(init.agent_capabilities.load_session);
    let all = r
        .conn
        .list_sessions(ListSessionsRequest::new())
        .await
        .unwrap();
    assert_eq!(all.sessions.len(), 2);
    assert_eq!(all.next_cursor, None);
    assert_eq!(all.sessions[0].session_id, b, "most recent first");
    assert_eq!(all.sessions[1].title.as_deref(), Some("Fix the bug"));
    assert!(
        all.sessions[1]
            .updated_at
            .as_deref()
            .unwrap()
            .ends_with('Z')
    );
    let only1 = r
        .conn
        .list_sessions(ListSessionsRequest::new().cwd(cwd1.display().to_string()))
        .await
        .unwrap();
    assert_eq!(only1.sessions.len(), 1);
    assert_eq!(only1.sessions[0].session_id, a);
    assert!(
        r.conn
            .list_sessions(ListSessionsRequest::new().cursor("bogus"))
            .await
            .is_err()
    );

    // Load replays the history before answering.
    let loaded = r
        .conn
        .load_session(LoadSessionRequest::new(
            a.clone(),
            cwd1.display().to_string(),
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
            "session_info_update",
            "usage_update",
            "available_commands_update"
        ]
    );
    assert!(
        matches!(&replay[0], SessionUpdate::UserMessageChunk(c) if c.content.as_text() == Some("Fix the bug\nin bug.rs"))
    );
    assert_eq!(r.client.rec.message_text(), "Reading. Fixed.");
    let calls = r.client.rec.final_tool_calls();
    assert_eq!(calls[0].status, ToolCallStatus::Completed);

    // The model sees the whole earlier conversation.
    mock.push(text_reply("Again."));
    r.prompt(&a, "and now?").await;
    let last = mock.requests().pop().unwrap();
    assert_eq!(
        roles(&last),
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );

    // Resume without replay.
    let before = r.client.rec.updates().len();
    r.conn
        .resume_session(ResumeSessionRequest::new(
            b.clone(),
            cwd2.display().to_string(),
        ))
        .await
        .unwrap();
    let new: Vec<String> = r.client.rec.updates()[before..]
        .iter()
        .map(|u| u.kind().to_string())
        .collect();
    assert_eq!(
        new,
        [
            "session_info_update",
            "usage_update",
            "available_commands_update"
        ],
        "resume replays nothing of the history"
    );
    mock.push(text_reply("B again"));
    r.prompt(&b, "more").await;
    let last = mock.requests().pop().unwrap();
    assert_eq!(last["messages"][1]["content"], "Other question");

    // Close and delete.
    r.conn
        .close_session(CloseSessionRequest::new(b.clone()))
        .await
        .unwrap();
    assert!(
        r.conn
            .prompt(PromptRequest::new(b.clone(), vec!["x".into()]))
            .await
            .is_err()
    );
    r.conn
        .delete_session(DeleteSessionRequest::new(a.clone()))
        .await
        .unwrap();
    // Deleting it again, or a session that never was, succeeds silently
    // (the spec's SHOULD): what the client wanted gone is gone.
    for gone in [a.clone(), SessionId::new("sess-never-was")] {
        let resp = r
            .conn
            .delete_session(DeleteSessionRequest::new(gone))
            .await
            .unwrap();
        assert_eq!(serde_json::to_value(resp).unwrap(), json!({}));
    }
    let left = r
        .conn
        .list_sessions(ListSessionsRequest::new())
        .await
        .unwrap();
    assert_eq!(
        left.sessions
            .iter()
            .map(|s| s.session_id.clone())
            .collect::<Vec<_>>(),
        [b]
    );
    let err = r
        .conn
        .load_session(LoadSessionRequest::new(a, cwd1.display().to_string()))
        .await
        .unwrap_err();
    assert_eq!(err.remote().unwrap().code, ErrorCode::RESOURCE_NOT_FOUND);
}

/// A usage chunk reporting a cost (OpenRouter's `usage.cost`, in dollars).
fn usage_costing(prompt: u64, completion: u64, cost: f64) -> String {
    let usage = json!({"choices": [], "usage": {
        "prompt_tokens": prompt, "completion_tokens": completion, "cost": cost}});
    format!("data: {usage}\n\n")
}

/// The updates from `from` on, as JSON.
fn updates_json(r: &Running, from: usize) -> Vec<Value> {
    r.client.rec.updates()[from..]
        .iter()
        .map(|u| serde_json::to_value(u).unwrap())
        .collect()
}

#[tokio::test]
async fn an_opened_session_shows_its_title_and_last_usage_with_the_cost_so_far() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let cwd = canonical(work.path());
    let mock = MockLlm::start(vec![
        Reply::Sse(vec![
            text("One."),
            finish("stop"),
            usage_costing(100, 20, 0.25),
            done(),
        ]),
        Reply::Sse(vec![
            text("Two."),
            finish("stop"),
            usage_costing(300, 40, 0.5),
            done(),
        ]),
    ])
    .await;
    let mut env = openai_env(&mock);

    // First process: one turn.
    let mut r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    let sid = open_session(&r, caps(false, false), &cwd).await;
    r.prompt(&sid, "Fix the parser\nplease").await;
    r.process.shutdown().await.unwrap();

    // Second process, with another context window: load shows the title and
    // the last usage (of the window configured now) after the history and
    // before answering; the cost goes on from the stored one.
    env.push(("ACP_AGENT_CONTEXT_WINDOW", "200000"));
    let mut r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    r.initialize().await;
    r.conn
        .load_session(LoadSessionRequest::new(
            sid.clone(),
            cwd.display().to_string(),
        ))
        .await
        .unwrap();
    let shown = updates_json(&r, 0);
    assert_eq!(
        shown[shown.len() - 3..=shown.len() - 2],
        [
            json!({"sessionUpdate": "session_info_update", "title": "Fix the parser"}),
            json!({"sessionUpdate": "usage_update", "used": 120, "size": 200000,
                   "cost": {"amount": 0.25, "currency": "USD"}}),
        ]
    );
    assert_eq!(
        shown
            .iter()
            .filter(|u| u["sessionUpdate"] == "usage_update")
            .count(),
        1,
        "the usage is not replayed as it came, only the last: {shown:?}"
    );
    let before = r.client.rec.updates().len();
    r.prompt(&sid, "And the lexer").await;
    let usage: Vec<Value> = updates_json(&r, before)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "usage_update")
        .collect();
    assert_eq!(
        usage,
        [
            json!({"sessionUpdate": "usage_update", "used": 340, "size": 200000,
                "cost": {"amount": 0.75, "currency": "USD"}})
        ]
    );
    // The title is the first prompt's, in the list too.
    let list = r
        .conn
        .list_sessions(ListSessionsRequest::new())
        .await
        .unwrap();
    let entry = serde_json::to_value(&list.sessions[0]).unwrap();
    assert_eq!(entry["sessionId"], sid.as_str());
    assert_eq!(entry["title"], "Fix the parser");
    r.process.shutdown().await.unwrap();

    // Third process: resume tells the same, without the history.
    let r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    r.initialize().await;
    r.conn
        .resume_session(ResumeSessionRequest::new(
            sid.clone(),
            cwd.display().to_string(),
        ))
        .await
        .unwrap();
    assert_eq!(
        updates_json(&r, 0)[..2],
        [
            json!({"sessionUpdate": "session_info_update", "title": "Fix the parser"}),
            json!({"sessionUpdate": "usage_update", "used": 340, "size": 200000,
                   "cost": {"amount": 0.75, "currency": "USD"}}),
        ]
    );
    let list = r
        .conn
        .list_sessions(ListSessionsRequest::new())
        .await
        .unwrap();
    assert_eq!(list.sessions[0].title.as_deref(), Some("Fix the parser"));
}
