//! Prompt turns end to end: the built `acp-agent` binary, driven through the
//! runtime's `ClientSideConnection`, against a scripted mock model server on
//! 127.0.0.1. Tools through the client and local fallbacks, bad tool calls,
//! limits, and prompt content (model failures are in `failures.rs`).

use crate::support;

use acp::schema::*;
use serde_json::json;
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

async fn main_scenario(client_fs_and_terminal: bool) {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    std::fs::write(cwd.join("hello.txt"), "hello world\n").unwrap();
    let mock = MockLlm::start(main_script()).await;
    let env = openai_env(&mock);
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
    assert_eq!(
        calls[0].raw_input,
        Some(acp::schema::RawJson::from(json!({"path":"hello.txt"})))
    );
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
async fn a_tool_call_with_bad_arguments_fails_and_the_turn_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
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
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(true, true), dir.path()).await;
    let rec = r.client.rec.clone();
    assert_eq!(r.prompt(&sid, "four").await, StopReason::EndTurn);
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
    env.push(("ACP_AGENT_MAX_TURN_REQUESTS", "2"));
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(true, true), dir.path()).await;
    assert_eq!(r.prompt(&sid, "x").await, StopReason::MaxTokens);
    assert_eq!(r.prompt(&sid, "y").await, StopReason::MaxTurnRequests);
    assert_eq!(mock.requests().len(), 3);
}

#[tokio::test]
async fn prompt_content_resources_and_images() {
    let dir = tempfile::tempdir().unwrap();
    let blocks = || {
        vec![
            ContentBlock::from("look"),
            ContentBlock::from(EmbeddedResource::new(TextResourceContents::new(
                "fn x() {}",
                "file:///p/x.rs",
            ))),
            ContentBlock::from(ResourceLink::new("y.rs", "file:///p/y.rs")),
            ContentBlock::from(ImageContent::new("AAAA", "image/png")),
        ]
    };
    // A model that takes images.
    let mock = MockLlm::start(vec![text_reply("seen")]).await;
    let mut env = openai_env(&mock);
    env.push(("ACP_AGENT_IMAGES", "1"));
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let init = r.initialize().await;
    let pc = &init.agent_capabilities.prompt_capabilities;
    assert!(pc.image && pc.embedded_context && !pc.audio);
    let sid = r.new_session(dir.path()).await;
    r.conn
        .prompt(PromptRequest::new(sid, blocks()))
        .await
        .unwrap();
    let content = mock.requests()[0]["messages"][1]["content"].clone();
    let text = content[0]["text"].as_str().unwrap();
    assert!(text.starts_with("look"), "{text}");
    assert!(
        text.contains("<context uri=\"file:///p/x.rs\">\nfn x() {}\n</context>"),
        "{text}"
    );
    assert!(text.contains("/p/y.rs: use read_file"), "{text}");
    assert_eq!(content[1]["image_url"]["url"], "data:image/png;base64,AAAA");

    // A local model: no images, and the user is told.
    let mock = MockLlm::start(vec![text_reply("ok")]).await;
    let env = openai_env(&mock);
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let init = r.initialize().await;
    assert!(!init.agent_capabilities.prompt_capabilities.image);
    let sid = r.new_session(dir.path()).await;
    r.conn
        .prompt(PromptRequest::new(sid, blocks()))
        .await
        .unwrap();
    let content = mock.requests()[0]["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        content.contains("attachment the model cannot take was omitted"),
        "{content}"
    );
    assert!(r.client.rec.message_text().contains("not sent images"));
}

/// What a client is shown of reads, new files and commands, on the wire,
/// and what the model is given: a read's block closes right after the
/// text; a new file's diff says `"oldText": null` (clients such as Toad show
/// a diff only when the key is there); a command's output in the editor's
/// terminal (a pty, with `\r\n` and colours) reaches the model as plain text,
/// while the user's terminal keeps it as it was.
#[tokio::test]
async fn reads_new_files_and_terminal_output_as_clients_and_the_model_see_them() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    std::fs::write(cwd.join("a.txt"), "one\ntwo\n").unwrap();
    let command = r"printf 'ok \033[1;32mgreen\033[0m\r\n10%%\r100%%\r\n'";
    let mock = MockLlm::start(vec![
        tool_reply("c_read", "read_file", json!({"path": "a.txt"})),
        tool_reply(
            "c_write",
            "write_file",
            json!({"path": "new.txt", "content": "new\n"}),
        ),
        tool_reply("c_run", "run_command", json!({"command": command})),
        text_reply("Done."),
    ])
    .await;
    let r = start_agent(&openai_env(&mock), TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(true, true), &cwd).await;
    assert_eq!(r.prompt(&sid, "go").await, StopReason::EndTurn);

    let wire = |c: &ToolCallContent| serde_json::to_value(c).unwrap();
    let calls = r.client.rec.final_tool_calls();
    // The read: one fenced block, no blank line before the closing fence.
    assert_eq!(
        calls[0].content.iter().map(wire).collect::<Vec<_>>(),
        [json!({"type": "content", "content": {"type": "text", "text": "```\none\ntwo\n```"}})]
    );
    // The new file: asked with its diff, and shown with it once written.
    let new_file = json!({
        "type": "diff",
        "path": cwd.join("new.txt").display().to_string(),
        "oldText": null,
        "newText": "new\n",
    });
    let perms = r.client.rec.permissions.lock().unwrap().clone();
    let asked = perms[0].tool_call.content.as_ref().unwrap();
    assert_eq!(
        asked.iter().map(wire).collect::<Vec<_>>(),
        vec![new_file.clone()]
    );
    assert_eq!(
        calls[1].content.iter().map(wire).collect::<Vec<_>>(),
        vec![new_file]
    );
    // The command: the user's terminal is embedded and keeps the bytes as
    // they came; the model is given plain text.
    assert!(matches!(
        &calls[2].content[..],
        [ToolCallContent::Terminal(_)]
    ));
    let terminals = r.client.rec.terminals.lock().unwrap();
    let raw = terminals
        .values()
        .next()
        .unwrap()
        .output
        .lock()
        .unwrap()
        .clone();
    assert_eq!(raw, "ok \x1b[1;32mgreen\x1b[0m\r\n10%\r100%\r\n");
    drop(terminals);
    let results = tool_results(&mock.requests()[3]);
    assert_eq!(
        results,
        [
            "one\ntwo\n",
            &format!("Created {} (4 bytes).", cwd.join("new.txt").display()),
            "Exit code: 0\nok green\n100%\n",
        ]
    );
}
