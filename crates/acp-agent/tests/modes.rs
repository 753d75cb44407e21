//! Modes and config options: read-only refuses edits, `ask` asks and
//! remembers "always" answers, unknown values are rejected.

mod support;

use acp::schema::*;
use serde_json::json;
use support::*;

#[tokio::test]
async fn modes_config_options_and_remembered_choices() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    let mock = MockLlm::start(vec![
        tool_reply("w1", "write_file", json!({"path":"a.txt","content":"A"})),
        text_reply("ok"),
        tool_reply("w2", "write_file", json!({"path":"b.txt","content":"B"})),
        text_reply("ok"),
        tool_reply("w3", "write_file", json!({"path":"c.txt","content":"C"})),
        text_reply("ok"),
    ])
    .await;
    let env = openai_env(&mock);
    let r = start_agent(&env, TestClient::new("reject_always")).await;
    r.conn
        .initialize(
            InitializeRequest::new(ProtocolVersion::LATEST).client_capabilities(caps(false, false)),
        )
        .await
        .unwrap();
    let new = r
        .conn
        .new_session(NewSessionRequest::new(cwd.display().to_string()))
        .await
        .unwrap();
    let sid = new.session_id.clone();
    assert_eq!(new.modes.unwrap().current_mode_id.as_str(), "ask");
    let opts = new.config_options.unwrap();
    assert_eq!(opts[0].category, Some(SessionConfigOptionCategory::Mode));
    assert_eq!(opts[1].category, Some(SessionConfigOptionCategory::Model));

    // Read-only: the model is not offered write tools, and a write is refused.
    let resp = r
        .conn
        .set_session_config_option(SetSessionConfigOptionRequest::new(
            sid.clone(),
            "mode",
            "read-only",
        ))
        .await
        .unwrap();
    let SessionConfigKind::Select(sel) = &resp.config_options[0].kind else {
        panic!()
    };
    assert_eq!(sel.current_value.as_str(), "read-only");
    r.prompt(&sid, "write").await;
    assert!(!cwd.join("a.txt").exists());
    let tools: Vec<String> = mock.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        !tools.contains(&"write_file".to_string()) && tools.contains(&"read_file".to_string()),
        "{tools:?}"
    );
    let updates = r.client.rec.updates();
    assert!(updates.iter().any(|u| matches!(u, SessionUpdate::CurrentModeUpdate(m) if m.current_mode_id.as_str() == "read-only")));
    assert!(
        updates
            .iter()
            .any(|u| matches!(u, SessionUpdate::ConfigOptionUpdate(_)))
    );

    // Ask mode, the user rejects always: asked once, then refused without asking.
    r.conn
        .set_session_mode(SetSessionModeRequest::new(sid.clone(), "ask"))
        .await
        .unwrap();
    r.prompt(&sid, "write b").await;
    r.prompt(&sid, "write c").await;
    assert_eq!(r.client.rec.permissions.lock().unwrap().len(), 1);
    assert!(!cwd.join("b.txt").exists() && !cwd.join("c.txt").exists());
    let calls = r.client.rec.final_tool_calls();
    assert!(calls.iter().all(|c| c.status == ToolCallStatus::Failed));

    // Unknown values are rejected.
    assert!(
        r.conn
            .set_session_mode(SetSessionModeRequest::new(sid.clone(), "yolo"))
            .await
            .is_err()
    );
    assert!(
        r.conn
            .set_session_config_option(SetSessionConfigOptionRequest::new(
                sid,
                "model",
                "anthropic:x"
            ))
            .await
            .is_err()
    );
}
