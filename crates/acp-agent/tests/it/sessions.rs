//! Sessions kept in SQLite: list, load (with replay), resume, close and
//! delete across a restart of the agent.

use crate::support;

use acp::schema::*;
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
    assert_eq!(new, ["available_commands_update"], "resume replays nothing");
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
