//! Slash commands: `available_commands_update`, `/compact` and `/init`.

use crate::support;

use acp::schema::*;
use serde_json::json;
use support::*;

#[tokio::test]
async fn slash_commands_compact_and_init() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    let mock = MockLlm::start(vec![
        text_reply("Hi there."),
        text_reply("SUMMARY: the user said hello."),
        text_reply("Continuing."),
        tool_reply(
            "i1",
            "write_file",
            json!({"path":"AGENTS.md","content":"# Agents\n"}),
        ),
        text_reply("Wrote AGENTS.md."),
    ])
    .await;
    let env = openai_env(&mock);
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
    let last_user = compact_req["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        last_user.contains("Summarise our conversation"),
        "{last_user}"
    );
    r.conn.prompt(p("next")).await.unwrap();
    let after = &mock.requests()[2];
    let msgs = after["messages"].as_array().unwrap();
    assert_eq!(
        msgs.len(),
        4,
        "system, summary, acknowledgement, new prompt"
    );
    assert!(
        msgs[1]["content"]
            .as_str()
            .unwrap()
            .contains("SUMMARY: the user said hello.")
    );
    assert_eq!(msgs[3]["content"], "next");

    let resp = r.conn.prompt(p("/init")).await.unwrap();
    assert_eq!(resp.stop_reason, StopReason::EndTurn);
    let init_req = &mock.requests()[3];
    let last_user = init_req["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(last_user.contains("AGENTS.md"), "{last_user}");
    assert_eq!(
        std::fs::read_to_string(cwd.join("AGENTS.md")).unwrap(),
        "# Agents\n"
    );
}

/// On the wire, a new session's `available_commands_update` is the line right
/// after the `session/new` response (the client knows the session by then).
#[tokio::test]
async fn commands_follow_the_new_session_response_on_the_wire() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let mut agent = tokio::process::Command::new(env!("CARGO_BIN_EXE_acp-agent"))
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .env_clear()
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        .env("ACP_AGENT_MODEL", "openai:unused")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = agent.stdin.take().unwrap();
    let mut lines = BufReader::new(agent.stdout.take().unwrap()).lines();
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": ProtocolVersion::LATEST}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/new",
               "params": {"cwd": canonical(dir.path()), "mcpServers": []}}),
    ];
    for request in &requests {
        stdin
            .write_all(format!("{request}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut seen: Vec<serde_json::Value> = Vec::new();
    while !seen.iter().any(|m| m["id"] == 2) || seen.len() < 3 {
        let line = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line())
            .await
            .expect("the agent answers")
            .unwrap()
            .expect("the agent keeps its stdout open");
        seen.push(serde_json::from_str(&line).unwrap());
    }
    let new = seen.iter().position(|m| m["id"] == 2).unwrap();
    let session_id = &seen[new]["result"]["sessionId"];
    assert!(session_id.is_string(), "{seen:#?}");
    let next = &seen[new + 1];
    assert_eq!(next["method"], "session/update", "{seen:#?}");
    assert_eq!(&next["params"]["sessionId"], session_id);
    assert_eq!(
        next["params"]["update"]["sessionUpdate"],
        "available_commands_update"
    );
}
