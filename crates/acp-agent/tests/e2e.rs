//! End-to-end tests: the built `acp-agent` binary, driven through the runtime's
//! `ClientSideConnection`, against a scripted mock model server on 127.0.0.1.

mod support;

use acp::schema::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::*;

/// The scripted conversation of the main scenario: read, edit, run, plan, end.
fn main_script() -> Vec<Reply> {
    let mut first = vec![thought("I should look at the file."), text("Let me look.")];
    first.extend(tool_call(
        0,
        "call_read",
        "read_file",
        r#"{"path":"hello.txt"}"#,
        4,
    ));
    first.extend([finish("tool_calls"), usage(100, 20), done()]);
    let mut third = tool_call(
        0,
        "call_run",
        "run_command",
        r#"{"command":"cat hello.txt && echo ran-ok"}"#,
        5,
    );
    third.extend(tool_call(
        1,
        "call_plan",
        "update_plan",
        r#"{"entries":[{"content":"Edit hello.txt","status":"completed"},{"content":"Verify","status":"in_progress","priority":"high"}]}"#,
        3,
    ));
    third.extend([finish("tool_calls"), done()]);
    vec![
        Reply::Sse(first),
        tool_reply(
            "call_edit",
            "edit_file",
            json!({"path":"hello.txt","old_string":"world","new_string":"ACP"}),
        ),
        Reply::Sse(third),
        text_reply("Done."),
    ]
}

fn tool_results(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

async fn main_scenario(client_fs_and_terminal: bool) {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    std::fs::write(cwd.join("hello.txt"), "hello world\n").unwrap();
    let mock = MockLlm::start(main_script()).await;
    let env = openai_env(&mock);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let caps = caps(client_fs_and_terminal, client_fs_and_terminal);
    let sid = open_session(&r, caps, &cwd).await;

    let resp = r
        .conn
        .prompt(PromptRequest::new(
            sid.clone(),
            vec!["Change world to ACP".into()],
        ))
        .await
        .unwrap();
    assert_eq!(resp.stop_reason, StopReason::EndTurn);
    let rec = &r.client.rec;

    // The file was edited.
    assert_eq!(
        std::fs::read_to_string(cwd.join("hello.txt")).unwrap(),
        "hello ACP\n"
    );
    // Streamed text and reasoning.
    assert_eq!(rec.message_text(), "Let me look.Done.");
    assert!(rec.updates().iter().any(|u| matches!(u,
        SessionUpdate::AgentThoughtChunk(c) if c.content.as_text() == Some("I should look at the file."))));
    assert!(rec.updates().iter().any(|u| matches!(u,
        SessionUpdate::UsageUpdate(u) if u.used == 120)));
    // Tool calls: kinds, titles, locations, raw input, final statuses.
    let calls = rec.final_tool_calls();
    let kinds: Vec<_> = calls.iter().map(|c| c.kind.clone()).collect();
    assert_eq!(
        kinds,
        vec![ToolKind::Read, ToolKind::Edit, ToolKind::Execute]
    );
    assert_eq!(calls[0].title, "Read hello.txt");
    assert_eq!(
        calls[0].locations[0].path,
        cwd.join("hello.txt").display().to_string()
    );
    assert_eq!(calls[0].raw_input, Some(json!({"path":"hello.txt"})));
    assert!(
        calls.iter().all(|c| c.status == ToolCallStatus::Completed),
        "{calls:#?}"
    );
    assert!(matches!(&calls[1].content[0], ToolCallContent::Diff(d)
        if d.old_text.as_deref() == Some("hello world\n") && d.new_text == "hello ACP\n"));
    // Permission asked for the edit and the command, not the read.
    let perms = rec.permissions.lock().unwrap().clone();
    assert_eq!(perms.len(), 2);
    let option_ids: Vec<_> = perms[0]
        .options
        .iter()
        .map(|o| o.option_id.to_string())
        .collect();
    assert_eq!(
        option_ids,
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    assert_eq!(perms[0].tool_call.tool_call_id, calls[1].tool_call_id);
    assert_eq!(perms[1].tool_call.tool_call_id, calls[2].tool_call_id);
    // The plan.
    let plans: Vec<Plan> = rec
        .updates()
        .into_iter()
        .filter_map(|u| match u {
            SessionUpdate::Plan(p) => Some(p),
            _ => None,
        })
        .collect();
    assert_eq!(plans.len(), 1);
    assert_eq!(plans[0].entries[1].status, PlanEntryStatus::InProgress);
    assert_eq!(plans[0].entries[1].priority, PlanEntryPriority::High);

    // What the model was sent.
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 4);
    assert_eq!(reqs[0]["model"], "mock-model");
    assert_eq!(reqs[0]["stream"], true);
    assert_eq!(reqs[0]["stream_options"]["include_usage"], true);
    assert_eq!(tool_results(&reqs[1]), ["hello world\n"]);
    let results = tool_results(&reqs[3]);
    assert_eq!(results.len(), 4);
    assert!(
        results[2].contains("Exit code: 0")
            && results[2].contains("hello ACP")
            && results[2].contains("ran-ok"),
        "{}",
        results[2]
    );
    assert_eq!(results[3], "Plan updated.");

    if client_fs_and_terminal {
        let reads = rec.reads.lock().unwrap().clone();
        assert!(
            reads.iter().all(|p| p.ends_with("hello.txt")) && reads.len() >= 2,
            "{reads:?}"
        );
        assert_eq!(rec.writes.lock().unwrap().len(), 1);
        let terms = rec.terminals_created.lock().unwrap().clone();
        assert_eq!(terms.len(), 1);
        assert_eq!(terms[0].command, "sh");
        assert_eq!(terms[0].args, ["-c", "cat hello.txt && echo ran-ok"]);
        assert!(
            matches!(&calls[2].content[0], ToolCallContent::Terminal(t) if t.terminal_id.as_str() == "term-1")
        );
        assert_eq!(rec.releases.lock().unwrap().len(), 1);
    } else {
        assert!(rec.reads.lock().unwrap().is_empty());
        assert!(rec.writes.lock().unwrap().is_empty());
        assert!(rec.terminals_created.lock().unwrap().is_empty());
        let shown = serde_json::to_string(&calls[2].content).unwrap();
        assert!(shown.contains("ran-ok"), "{shown}");
        // No temporary files left beside the edited one.
        let names: Vec<_> = std::fs::read_dir(&cwd)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}

#[tokio::test]
async fn turn_with_client_fs_and_terminal() {
    main_scenario(true).await;
}

#[tokio::test]
async fn turn_with_local_fallbacks() {
    main_scenario(false).await;
}

#[tokio::test]
async fn auth_required_without_a_model() {
    let r = start_agent(&[], TestClient::new("allow_once")).await;
    let init = r
        .conn
        .initialize(InitializeRequest::new(ProtocolVersion::LATEST))
        .await
        .unwrap();
    assert_eq!(init.auth_methods.len(), 1);
    assert!(init.auth_methods[0].id() == Some("environment"));
    let err = r
        .conn
        .new_session(NewSessionRequest::new("/tmp"))
        .await
        .unwrap_err();
    let remote = err.remote().expect("an error response").clone();
    assert_eq!(remote.code, ErrorCode::AUTH_REQUIRED);
    assert!(
        remote.message.contains("OPENAI_API_KEY") && remote.message.contains("ACP_AGENT_MODEL"),
        "{}",
        remote.message
    );
    let err = r
        .conn
        .authenticate(AuthenticateRequest::new("environment"))
        .await
        .unwrap_err();
    assert_eq!(err.remote().unwrap().code, ErrorCode::AUTH_REQUIRED);
}

#[tokio::test]
async fn cancel_mid_stream() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![Reply::SseHang(vec![text("Thinking about it")])]).await;
    let env = openai_env(&mock);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(true, true), dir.path()).await;
    let conn = r.conn.clone();
    let sid2 = sid.clone();
    let turn = tokio::spawn(async move {
        conn.prompt(PromptRequest::new(sid2, vec!["hi".into()]))
            .await
    });
    let rec = r.client.rec.clone();
    wait_until("the first chunk", || {
        rec.message_text().contains("Thinking")
    })
    .await;
    let t0 = Instant::now();
    r.conn
        .cancel(CancelNotification::new(sid.clone()))
        .await
        .unwrap();
    let resp = tokio::time::timeout(Duration::from_secs(5), turn)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(resp.stop_reason, StopReason::Cancelled);
    assert!(t0.elapsed() < Duration::from_secs(3));
    // The session still works afterwards, and remembers the partial answer.
    mock.push(text_reply("Back."));
    let resp = r
        .conn
        .prompt(PromptRequest::new(sid, vec!["again".into()]))
        .await
        .unwrap();
    assert_eq!(resp.stop_reason, StopReason::EndTurn);
    let last = mock.requests().pop().unwrap();
    let roles: Vec<_> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
}

fn pid_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.contains(") Z "),
        Err(_) => false,
    }
}

async fn cancel_mid_command(client_terminal: bool) {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    let mock = MockLlm::start(vec![tool_reply(
        "c1",
        "run_command",
        json!({"command": "echo started; echo $$ > pid.txt; exec sleep 30"}),
    )])
    .await;
    let env = openai_env(&mock);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, client_terminal), &cwd).await;
    // Auto mode: no permission prompt.
    r.conn
        .set_session_mode(SetSessionModeRequest::new(sid.clone(), "auto"))
        .await
        .unwrap();
    let conn = r.conn.clone();
    let sid2 = sid.clone();
    let turn = tokio::spawn(async move {
        conn.prompt(PromptRequest::new(sid2, vec!["run".into()]))
            .await
    });
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
    assert!(pid_alive(pid));
    let t0 = Instant::now();
    r.conn
        .cancel(CancelNotification::new(sid.clone()))
        .await
        .unwrap();
    let resp = tokio::time::timeout(Duration::from_secs(5), turn)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(resp.stop_reason, StopReason::Cancelled);
    assert!(t0.elapsed() < Duration::from_secs(3));
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

#[tokio::test]
async fn cancel_mid_command_local() {
    cancel_mid_command(false).await;
}

#[tokio::test]
async fn cancel_mid_command_in_client_terminal() {
    cancel_mid_command(true).await;
}

#[tokio::test]
async fn model_failures_end_the_turn_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Reply::Status(
            500,
            r#"{"error":{"message":"the GPUs are on fire"}}"#.into(),
        ),
        Reply::Sse(vec![text("partial"), "data: {this is not json\n\n".into()]),
        Reply::Sse(vec![text("cut off")]),
        // A tool call whose arguments are not JSON, then a recovery.
        Reply::Sse({
            let mut v = tool_call(0, "bad", "read_file", r#"{"path": "x"#, 2);
            v.extend([finish("tool_calls"), done()]);
            v
        }),
        text_reply("Sorry, fixed."),
    ])
    .await;
    let env = openai_env(&mock);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(true, true), dir.path()).await;
    let rec = r.client.rec.clone();

    let prompt = |text: &str| PromptRequest::new(sid.clone(), vec![text.into()]);
    let resp = r.conn.prompt(prompt("one")).await.unwrap();
    assert_eq!(resp.stop_reason, StopReason::EndTurn);
    assert!(
        rec.message_text()
            .contains("HTTP 500: the GPUs are on fire"),
        "{}",
        rec.message_text()
    );

    let resp = r.conn.prompt(prompt("two")).await.unwrap();
    assert_eq!(resp.stop_reason, StopReason::EndTurn);
    assert!(
        rec.message_text().contains("malformed response"),
        "{}",
        rec.message_text()
    );

    let resp = r.conn.prompt(prompt("three")).await.unwrap();
    assert_eq!(resp.stop_reason, StopReason::EndTurn);
    assert!(
        rec.message_text()
            .contains("stream ended before the response was complete"),
        "{}",
        rec.message_text()
    );

    let resp = r.conn.prompt(prompt("four")).await.unwrap();
    assert_eq!(resp.stop_reason, StopReason::EndTurn);
    let calls = rec.final_tool_calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].status, ToolCallStatus::Failed);
    let last = mock.requests().pop().unwrap();
    let results = tool_results(&last);
    assert!(results[0].contains("not valid JSON"), "{results:?}");
    assert!(rec.message_text().ends_with("Sorry, fixed."));
}

#[tokio::test]
async fn limits_give_max_tokens_and_max_turn_requests() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Reply::Sse(vec![text("a long"), finish("length"), done()]),
        tool_reply("l1", "list_files", json!({})),
        tool_reply("l2", "list_files", json!({})),
        text_reply("never reached"),
    ])
    .await;
    let mut env = openai_env(&mock);
    env.push(("ACP_AGENT_MAX_TURN_REQUESTS", "2".into()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(true, true), dir.path()).await;
    let resp = r
        .conn
        .prompt(PromptRequest::new(sid.clone(), vec!["x".into()]))
        .await
        .unwrap();
    assert_eq!(resp.stop_reason, StopReason::MaxTokens);
    let resp = r
        .conn
        .prompt(PromptRequest::new(sid, vec!["y".into()]))
        .await
        .unwrap();
    assert_eq!(resp.stop_reason, StopReason::MaxTurnRequests);
    assert_eq!(mock.requests().len(), 3);
}

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
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
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
    r.conn
        .prompt(PromptRequest::new(sid.clone(), vec!["write".into()]))
        .await
        .unwrap();
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
    r.conn
        .prompt(PromptRequest::new(sid.clone(), vec!["write b".into()]))
        .await
        .unwrap();
    r.conn
        .prompt(PromptRequest::new(sid.clone(), vec!["write c".into()]))
        .await
        .unwrap();
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

#[tokio::test]
async fn anthropic_streaming_with_thinking_and_tool_use() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    std::fs::write(cwd.join("notes.md"), "# Notes\n").unwrap();
    let ev = anthropic_event;
    let mut first = vec![
        ev(
            json!({"type":"message_start","message":{"usage":{"input_tokens":50,"output_tokens":1}}}),
        ),
        ev(
            json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}),
        ),
        ev(
            json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"pondering"}}),
        ),
        ev(json!({"type":"content_block_stop","index":0})),
        ev(json!({"type":"ping"})),
        ev(
            json!({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}),
        ),
        ev(
            json!({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Reading."}}),
        ),
        ev(
            json!({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}}),
        ),
    ];
    for piece in [r#"{"pa"#, r#"th": "no"#, r#"tes.md"}"#] {
        first.push(ev(json!({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":piece}})));
    }
    first.extend([
        ev(json!({"type":"content_block_stop","index":2})),
        ev(json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}})),
        ev(json!({"type":"message_stop"})),
    ]);
    let second = vec![
        ev(json!({"type":"message_start","message":{"usage":{"input_tokens":90}}})),
        ev(
            json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        ),
        ev(
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" All good."}}),
        ),
        ev(
            json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}),
        ),
        ev(json!({"type":"message_stop"})),
    ];
    let mock = MockLlm::start(vec![Reply::Sse(first), Reply::Sse(second)]).await;
    let base = mock.base_url.trim_end_matches("/v1").to_string();
    let env = [
        ("ANTHROPIC_API_KEY", "ant-key"),
        ("ANTHROPIC_BASE_URL", base.as_str()),
    ];
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, false), &cwd).await;
    let resp = r
        .conn
        .prompt(PromptRequest::new(sid, vec!["read notes".into()]))
        .await
        .unwrap();
    assert_eq!(resp.stop_reason, StopReason::EndTurn);
    let rec = &r.client.rec;
    assert_eq!(rec.message_text(), "Reading. All good.");
    assert!(rec.updates().iter().any(|u| matches!(u,
        SessionUpdate::AgentThoughtChunk(c) if c.content.as_text() == Some("pondering"))));
    assert!(
        rec.updates()
            .iter()
            .any(|u| matches!(u, SessionUpdate::UsageUpdate(u) if u.used == 80))
    );
    let calls = rec.final_tool_calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        (calls[0].kind.clone(), calls[0].status.clone()),
        (ToolKind::Read, ToolCallStatus::Completed)
    );

    let heads = mock.heads.lock().unwrap().clone();
    assert!(heads[0].starts_with("post /v1/messages "), "{}", heads[0]);
    assert!(heads[0].contains("x-api-key: ant-key") && heads[0].contains("anthropic-version:"));
    let reqs = mock.requests();
    assert_eq!(reqs[0]["model"], "claude-sonnet-4-5");
    assert!(reqs[0]["system"].as_str().unwrap().contains("acp-agent"));
    assert!(reqs[0]["tools"][0]["input_schema"].is_object());
    let msgs = reqs[1]["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 3);
    assert_eq!(msgs[1]["content"][1]["type"], "tool_use");
    assert_eq!(msgs[1]["content"][1]["input"], json!({"path": "notes.md"}));
    assert_eq!(msgs[2]["content"][0]["type"], "tool_result");
    assert_eq!(msgs[2]["content"][0]["tool_use_id"], "toolu_1");
    assert_eq!(msgs[2]["content"][0]["content"], "# Notes\n");
}

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
    let mock = MockLlm::start(vec![Reply::Sse(first), text_reply("Fixed."), text_reply("B answer")]).await;
    let env = openai_env(&mock);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();

    // First agent process: two sessions.
    let mut r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    let a = open_session(&r, caps(false, false), &cwd1).await;
    let b = r.conn.new_session(NewSessionRequest::new(cwd2.display().to_string())).await.unwrap().session_id;
    r.conn.prompt(PromptRequest::new(a.clone(), vec!["Fix the bug\nin bug.rs".into()])).await.unwrap();
    r.conn.set_session_mode(SetSessionModeRequest::new(a.clone(), "auto")).await.unwrap();
    r.conn.prompt(PromptRequest::new(b.clone(), vec!["Other question".into()])).await.unwrap();
    assert!(r.client.rec.updates().iter().any(|u| matches!(u,
        SessionUpdate::SessionInfoUpdate(i) if i.title == Some(Some("Fix the bug".into())))));
    r.process.shutdown().await.unwrap();

    // Second process, same data directory.
    let r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    let init = r.conn.initialize(InitializeRequest::new(ProtocolVersion::LATEST)).await.unwrap();
    assert!(init.agent_capabilities.load_session);
    let all = r.conn.list_sessions(ListSessionsRequest::new()).await.unwrap();
    assert_eq!(all.sessions.len(), 2);
    assert_eq!(all.next_cursor, None);
    assert_eq!(all.sessions[0].session_id, b, "most recent first");
    assert_eq!(all.sessions[1].title.as_deref(), Some("Fix the bug"));
    assert!(all.sessions[1].updated_at.as_deref().unwrap().ends_with('Z'));
    let only1 = r.conn.list_sessions(ListSessionsRequest::new().cwd(cwd1.display().to_string())).await.unwrap();
    assert_eq!(only1.sessions.len(), 1);
    assert_eq!(only1.sessions[0].session_id, a);
    assert!(r.conn.list_sessions(ListSessionsRequest::new().cursor("bogus")).await.is_err());

    // Load replays the history before answering.
    let loaded = r.conn.load_session(LoadSessionRequest::new(a.clone(), cwd1.display().to_string())).await.unwrap();
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
    assert!(matches!(&replay[0], SessionUpdate::UserMessageChunk(c) if c.content.as_text() == Some("Fix the bug\nin bug.rs")));
    assert_eq!(r.client.rec.message_text(), "Reading. Fixed.");
    let calls = r.client.rec.final_tool_calls();
    assert_eq!(calls[0].status, ToolCallStatus::Completed);

    // The model sees the whole earlier conversation.
    mock.push(text_reply("Again."));
    r.conn.prompt(PromptRequest::new(a.clone(), vec!["and now?".into()])).await.unwrap();
    let last = mock.requests().pop().unwrap();
    let roles: Vec<_> = last["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap().to_string()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "assistant", "user"]);

    // Resume without replay.
    let before = r.client.rec.updates().len();
    r.conn.resume_session(ResumeSessionRequest::new(b.clone(), cwd2.display().to_string())).await.unwrap();
    let new: Vec<String> = r.client.rec.updates()[before..].iter().map(|u| u.kind().to_string()).collect();
    assert_eq!(new, ["available_commands_update"], "resume replays nothing");
    mock.push(text_reply("B again"));
    r.conn.prompt(PromptRequest::new(b.clone(), vec!["more".into()])).await.unwrap();
    let last = mock.requests().pop().unwrap();
    assert_eq!(last["messages"][1]["content"], "Other question");

    // Close and delete.
    r.conn.close_session(CloseSessionRequest::new(b.clone())).await.unwrap();
    assert!(r.conn.prompt(PromptRequest::new(b.clone(), vec!["x".into()])).await.is_err());
    r.conn.delete_session(DeleteSessionRequest::new(a.clone())).await.unwrap();
    let left = r.conn.list_sessions(ListSessionsRequest::new()).await.unwrap();
    assert_eq!(left.sessions.iter().map(|s| s.session_id.clone()).collect::<Vec<_>>(), [b]);
    let err = r.conn.load_session(LoadSessionRequest::new(a, cwd1.display().to_string())).await.unwrap_err();
    assert_eq!(err.remote().unwrap().code, ErrorCode::RESOURCE_NOT_FOUND);
}

#[tokio::test]
async fn slash_commands_compact_and_init() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    let mock = MockLlm::start(vec![
        text_reply("Hi there."),
        text_reply("SUMMARY: the user said hello."),
        text_reply("Continuing."),
        tool_reply("i1", "write_file", json!({"path":"AGENTS.md","content":"# Agents\n"})),
        text_reply("Wrote AGENTS.md."),
    ])
    .await;
    let env = openai_env(&mock);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, false), &cwd).await;
    let rec = r.client.rec.clone();
    wait_until("available commands", || {
        rec.updates().iter().any(|u| matches!(u, SessionUpdate::AvailableCommandsUpdate(c)
            if c.available_commands.iter().map(|c| c.name.as_str()).collect::<Vec<_>>() == ["compact", "init"]))
    })
    .await;
    let p = |t: &str| PromptRequest::new(sid.clone(), vec![t.into()]);
    r.conn.prompt(p("hello")).await.unwrap();
    let resp = r.conn.prompt(p("/compact")).await.unwrap();
    assert_eq!(resp.stop_reason, StopReason::EndTurn);
    assert!(rec.message_text().contains("SUMMARY: the user said hello."));
    let compact_req = &mock.requests()[1];
    let last_user = compact_req["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string();
    assert!(last_user.contains("Summarise our conversation"), "{last_user}");
    r.conn.prompt(p("next")).await.unwrap();
    let after = &mock.requests()[2];
    let msgs = after["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 4, "system, summary, acknowledgement, new prompt");
    assert!(msgs[1]["content"].as_str().unwrap().contains("SUMMARY: the user said hello."));
    assert_eq!(msgs[3]["content"], "next");

    let resp = r.conn.prompt(p("/init")).await.unwrap();
    assert_eq!(resp.stop_reason, StopReason::EndTurn);
    let init_req = &mock.requests()[3];
    let last_user = init_req["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_string();
    assert!(last_user.contains("AGENTS.md"), "{last_user}");
    assert_eq!(std::fs::read_to_string(cwd.join("AGENTS.md")).unwrap(), "# Agents\n");
}

#[tokio::test]
async fn prompt_content_resources_and_images() {
    let dir = tempfile::tempdir().unwrap();
    let blocks = || {
        vec![
            ContentBlock::from("look"),
            ContentBlock::from(EmbeddedResource::new(TextResourceContents::new("fn x() {}", "file:///p/x.rs"))),
            ContentBlock::from(ResourceLink::new("y.rs", "file:///p/y.rs")),
            ContentBlock::from(ImageContent::new("AAAA", "image/png")),
        ]
    };
    // A model that takes images.
    let mock = MockLlm::start(vec![text_reply("seen")]).await;
    let mut env = openai_env(&mock);
    env.push(("ACP_AGENT_IMAGES", "1".into()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let init = r.conn.initialize(InitializeRequest::new(ProtocolVersion::LATEST)).await.unwrap();
    let pc = &init.agent_capabilities.prompt_capabilities;
    assert!(pc.image && pc.embedded_context && !pc.audio);
    let sid = r.conn.new_session(NewSessionRequest::new(dir.path().display().to_string())).await.unwrap().session_id;
    r.conn.prompt(PromptRequest::new(sid, blocks())).await.unwrap();
    let content = mock.requests()[0]["messages"][1]["content"].clone();
    let text = content[0]["text"].as_str().unwrap();
    assert!(text.starts_with("look"), "{text}");
    assert!(text.contains("<context uri=\"file:///p/x.rs\">\nfn x() {}\n</context>"), "{text}");
    assert!(text.contains("/p/y.rs: use read_file"), "{text}");
    assert_eq!(content[1]["image_url"]["url"], "data:image/png;base64,AAAA");

    // A local model: no images, and the user is told.
    let mock = MockLlm::start(vec![text_reply("ok")]).await;
    let env = openai_env(&mock);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let init = r.conn.initialize(InitializeRequest::new(ProtocolVersion::LATEST)).await.unwrap();
    assert!(!init.agent_capabilities.prompt_capabilities.image);
    let sid = r.conn.new_session(NewSessionRequest::new(dir.path().display().to_string())).await.unwrap().session_id;
    r.conn.prompt(PromptRequest::new(sid, blocks())).await.unwrap();
    let content = mock.requests()[0]["messages"][1]["content"].as_str().unwrap().to_string();
    assert!(content.contains("attachment the model cannot take was omitted"), "{content}");
    assert!(r.client.rec.message_text().contains("not sent images"));
}

#[tokio::test]
async fn mcp_http_tools_are_offered_and_called() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = McpFixture::start().await;
    let mock = MockLlm::start(vec![
        tool_reply("m1", "mcp__fixture__shout", json!({"text": "hi there"})),
        tool_reply("m2", "mcp__local__touch", json!({})),
        text_reply("done"),
    ])
    .await;
    // A stdio MCP server written in POSIX sh, answering in the order a client asks.
    let script = dir.path().join("server.sh");
    std::fs::write(&script, STDIO_MCP_SERVER).unwrap();
    let marker = dir.path().join("marker.txt");
    let env = openai_env(&mock);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let init = r.conn.initialize(InitializeRequest::new(ProtocolVersion::LATEST)).await.unwrap();
    let mcp_caps = &init.agent_capabilities.mcp_capabilities;
    assert!(mcp_caps.http && !mcp_caps.sse);
    let servers = vec![
        McpServer::from(McpServerHttp::new("fixture", fixture.url.clone())),
        McpServer::from(McpServerStdio::new("broken", "/nonexistent/mcp-server")),
        McpServer::from(
            McpServerStdio::new("local", "sh")
                .args(vec![script.display().to_string()])
                .env(vec![EnvVariable::new("MARKER", marker.display().to_string())]),
        ),
    ];
    let sid = r
        .conn
        .new_session(NewSessionRequest::new(dir.path().display().to_string()).mcp_servers(servers))
        .await
        .unwrap()
        .session_id;
    let resp = r.conn.prompt(PromptRequest::new(sid, vec!["shout".into()])).await.unwrap();
    assert_eq!(resp.stop_reason, StopReason::EndTurn);
    let reqs = mock.requests();
    let tool = reqs[0]["tools"].as_array().unwrap().iter()
        .find(|t| t["function"]["name"] == "mcp__fixture__shout").expect("the MCP tool is offered").clone();
    assert_eq!(tool["function"]["parameters"]["required"], json!(["text"]));
    assert_eq!(tool_results(&reqs[1]), ["HI THERE"]);
    assert_eq!(tool_results(&reqs[2]), ["HI THERE", "touched"]);
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "called\n");
    assert_eq!(fixture.calls.lock().unwrap()[0]["name"], "shout");
    let calls = r.client.rec.final_tool_calls();
    assert_eq!(calls[0].title, "fixture: shout");
    assert_eq!((calls[0].kind.clone(), calls[0].status.clone()), (ToolKind::Read, ToolCallStatus::Completed));
    assert_eq!(calls[1].title, "local: touch");
    assert_eq!(calls[1].status, ToolCallStatus::Completed);
    let perms = r.client.rec.permissions.lock().unwrap().clone();
    assert_eq!(perms.len(), 1, "only the tool not marked read-only needs permission");
    assert_eq!(perms[0].tool_call.tool_call_id, calls[1].tool_call_id);
    assert!(r.client.rec.message_text().contains("MCP server broken"), "{}", r.client.rec.message_text());
}

const STDIO_MCP_SERVER: &str = r#"
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      pv=$(printf '%s\n' "$line" | sed -n 's/.*"protocolVersion":"\([^"]*\)".*/\1/p')
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}\n' "$id" "$pv";;
    *'"method":"tools/list"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"touch","description":"Writes a marker file","inputSchema":{"type":"object","properties":{}}}]}}\n' "$id";;
    *'"method":"tools/call"'*)
      echo called > "$MARKER"
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"touched"}]}}\n' "$id";;
    *) if [ -n "$id" ]; then printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"; fi;;
  esac
done
"#;
