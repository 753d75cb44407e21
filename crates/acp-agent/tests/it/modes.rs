//! Modes and config options: read-only refuses edits, `ask` asks and
//! remembers "always" answers, unknown values are rejected.

use crate::support;

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

/// The names of the options of each permission request, in order.
fn option_names(r: &Running) -> Vec<Vec<String>> {
    r.client
        .rec
        .permissions
        .lock()
        .unwrap()
        .iter()
        .map(|p| p.options.iter().map(|o| o.name.clone()).collect())
        .collect()
}

#[tokio::test]
async fn always_covers_a_command_or_a_directory_never_everything() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    std::fs::create_dir_all(cwd.join("src")).unwrap();
    let mock = MockLlm::start(vec![
        tool_reply("c1", "run_command", json!({"command": "ls -a"})),
        text_reply("ok"),
        // Covered: `ls` again, with other arguments.
        tool_reply("c2", "run_command", json!({"command": "ls -l src"})),
        text_reply("ok"),
        // Not covered: another program, and `ls` chained with `rm`.
        tool_reply("c3", "run_command", json!({"command": "cat src/x"})),
        text_reply("ok"),
        tool_reply("c4", "run_command", json!({"command": "ls && rm -rf src"})),
        text_reply("ok"),
        // Edits: "always" for src/ covers src/ only.
        tool_reply(
            "w1",
            "write_file",
            json!({"path": "src/a.txt", "content": "A"}),
        ),
        text_reply("ok"),
        tool_reply(
            "w2",
            "write_file",
            json!({"path": "src/b.txt", "content": "B"}),
        ),
        text_reply("ok"),
        tool_reply(
            "w3",
            "write_file",
            json!({"path": "top.txt", "content": "T"}),
        ),
        text_reply("ok"),
    ])
    .await;
    let env = openai_env(&mock);
    let r = start_agent(&env, TestClient::new("allow_always")).await;
    let sid = open_session(&r, caps(false, false), &cwd).await;
    let choose = |c: &str| *r.client.permission_choice.lock().unwrap() = c.to_string();

    r.prompt(&sid, "list").await;
    r.prompt(&sid, "list src").await;
    choose("allow_once");
    r.prompt(&sid, "cat").await;
    choose("reject_once");
    r.prompt(&sid, "clean").await;
    assert!(
        cwd.join("src").exists(),
        "the chained rm was not allowed by `ls`"
    );
    let names = option_names(&r);
    assert_eq!(names.len(), 3, "ls -l was not asked: {names:?}");
    assert_eq!(
        names[0],
        [
            "Allow",
            "Always allow `ls` commands",
            "Reject",
            "Always reject `ls` commands"
        ]
    );
    assert_eq!(names[1][1], "Always allow `cat` commands");
    assert_eq!(names[2][1], "Always allow `ls` and `rm` commands");

    choose("allow_always");
    r.prompt(&sid, "write a").await;
    r.prompt(&sid, "write b").await;
    choose("allow_once");
    r.prompt(&sid, "write top").await;
    let names = option_names(&r);
    assert_eq!(names.len(), 5, "src/b.txt was not asked: {names:?}");
    assert_eq!(names[3][1], "Always allow edits in src/");
    assert_eq!(names[4][1], "Always allow edits in the working directory");
    for f in ["src/a.txt", "src/b.txt", "top.txt"] {
        assert!(cwd.join(f).exists(), "{f}");
    }
}
