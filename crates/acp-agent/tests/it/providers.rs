//! Model providers and their configuration: no model configured
//! (`auth_required`), the authentication methods offered (a general one and
//! one per provider naming its variables) and `authenticate` with each,
//! and the Anthropic Messages API.

use crate::support;

use acp::schema::*;
use serde_json::json;
use support::*;

#[tokio::test]
async fn auth_required_without_a_model() {
    let r = start_agent(&[], TestClient::new("allow_once")).await;
    let init = r.initialize().await;
    assert_eq!(init.auth_methods.len(), 3);
    assert!(init.auth_methods[0].id().as_deref() == Some("environment"));
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
    let second = anthropic_text_reply(" All good.", 90, 5);
    let mock = MockLlm::start(vec![Reply::Sse(first), second]).await;
    let env = anthropic_env(&mock);
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, false), &cwd).await;
    assert_eq!(r.prompt(&sid, "read notes").await, StopReason::EndTurn);
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
async fn anthropic_extended_thinking_is_asked_for_and_sent_back() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    std::fs::write(cwd.join("notes.md"), "# Notes\n").unwrap();
    let ev = anthropic_event;
    let first = vec![
        ev(json!({"type":"message_start","message":{"usage":{"input_tokens":10}}})),
        ev(
            json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}),
        ),
        ev(
            json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Read it first."}}),
        ),
        ev(
            json!({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2ln"}}),
        ),
        ev(json!({"type":"content_block_stop","index":0})),
        ev(
            json!({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_9","name":"read_file","input":{}}}),
        ),
        ev(
            json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"notes.md\"}"}}),
        ),
        ev(
            json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":20}}),
        ),
        ev(json!({"type":"message_stop"})),
    ];
    let mock = MockLlm::start(vec![
        Reply::Sse(first),
        anthropic_text_reply("Notes read.", 40, 3),
    ])
    .await;
    let mut env = anthropic_env(&mock);
    env.push(("ACP_AGENT_THINKING_BUDGET", "3000"));
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, false), &cwd).await;
    assert_eq!(r.prompt(&sid, "read notes").await, StopReason::EndTurn);
    let rec = &r.client.rec;
    assert!(rec.updates().iter().any(|u| matches!(u,
        SessionUpdate::AgentThoughtChunk(c) if c.content.as_text() == Some("Read it first."))));
    assert_eq!(rec.message_text(), "Notes read.");
    let reqs = mock.requests();
    for req in &reqs {
        assert_eq!(
            req["thinking"],
            json!({"type": "enabled", "budget_tokens": 3000})
        );
        assert_eq!(req["max_tokens"], 16000);
    }
    // The tool-use turn is sent back starting with its signed thinking.
    let assistant = &reqs[1]["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["content"][0],
        json!({"type": "thinking", "thinking": "Read it first.", "signature": "c2ln"})
    );
    assert_eq!(assistant["content"][1]["type"], "tool_use");
}

#[tokio::test]
async fn reported_costs_add_up_in_usage_updates() {
    let dir = tempfile::tempdir().unwrap();
    let with_cost = |cost: f64| {
        format!(
            "data: {}\n\n",
            json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 2, "cost": cost}})
        )
    };
    let mut first = tool_call(0, "l1", "list_files", "{}", 1);
    first.extend([finish("tool_calls"), with_cost(0.5), done()]);
    let mock = MockLlm::start(vec![
        Reply::Sse(first),
        Reply::Sse(vec![text("ok"), finish("stop"), with_cost(0.25), done()]),
    ])
    .await;
    let r = start_agent(&openai_env(&mock), TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, false), dir.path()).await;
    assert_eq!(r.prompt(&sid, "list").await, StopReason::EndTurn);
    let costs: Vec<(u64, Option<Cost>)> = r
        .client
        .rec
        .updates()
        .into_iter()
        .filter_map(|u| match u {
            SessionUpdate::UsageUpdate(u) => Some((u.used, u.cost)),
            _ => None,
        })
        .collect();
    assert_eq!(
        costs,
        [
            (12, Some(Cost::new(0.5, "USD"))),
            (12, Some(Cost::new(0.75, "USD")))
        ]
    );
}

/// The methods every `initialize` offers, exactly: all handled by the agent
/// (no `type`; registries require one such), the general one, then one per
/// provider naming its variables (the RFD's `env_var` shape in `_meta`).
fn offered_auth_methods() -> serde_json::Value {
    json!([
        {
            "id": "environment",
            "name": "Environment variables or config file",
            "description": "Set OPENAI_API_KEY (and optionally OPENAI_BASE_URL), OPENAI_BASE_URL \
                alone for a local OpenAI-compatible server, or ANTHROPIC_API_KEY; choose the \
                model with ACP_AGENT_MODEL=provider:model. Or make the same settings in the \
                config file (`acp-agent --help` tells where it is). Then restart the agent."
        },
        {
            "id": "openai-api-key",
            "name": "OpenAI API key",
            "description": "Start the agent with OPENAI_API_KEY set: a key of OpenAI, or of \
                another hosted OpenAI-compatible API together with its OPENAI_BASE_URL. Choose \
                the model with ACP_AGENT_MODEL (default openai:gpt-4.1).",
            "_meta": {"env_var": {
                "vars": [
                    {"name": "OPENAI_API_KEY", "label": "OpenAI API key",
                     "secret": true, "optional": false},
                    {"name": "OPENAI_BASE_URL",
                     "label": "Base URL of another OpenAI-compatible API",
                     "secret": false, "optional": true}
                ],
                "link": "https://platform.openai.com/api-keys"
            }}
        },
        {
            "id": "anthropic-api-key",
            "name": "Anthropic API key",
            "description": "Start the agent with ANTHROPIC_API_KEY set: a key of the Anthropic \
                API. Choose the model with ACP_AGENT_MODEL (default \
                anthropic:claude-sonnet-4-5).",
            "_meta": {"env_var": {
                "vars": [
                    {"name": "ANTHROPIC_API_KEY", "label": "Anthropic API key",
                     "secret": true, "optional": false}
                ],
                "link": "https://console.anthropic.com/settings/keys"
            }}
        }
    ])
}

/// `authenticate` with `method`: `Ok(())` or the error's code, message and
/// data.
async fn authenticate(
    r: &Running,
    method: &str,
) -> Result<(), (ErrorCode, String, serde_json::Value)> {
    match r.conn.authenticate(AuthenticateRequest::new(method)).await {
        Ok(resp) => {
            assert_eq!(serde_json::to_value(resp).unwrap(), json!({}));
            Ok(())
        }
        Err(e) => {
            let e = e.remote().expect("an error answer").clone();
            let data = e
                .data
                .map(|d| serde_json::from_str(d.get()).unwrap())
                .unwrap_or_default();
            Err((e.code, e.message, data))
        }
    }
}

#[tokio::test]
async fn provider_methods_authenticate_when_their_key_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    let mock = MockLlm::start(vec![]).await;

    // OpenAI's key set: its method and the agent's succeed, Anthropic's
    // names the variable to set; session/new works after either.
    let r = start_agent(&openai_env(&mock), TestClient::new("allow_once")).await;
    let init = r.initialize().await;
    assert_eq!(
        serde_json::to_value(&init).unwrap()["authMethods"],
        offered_auth_methods()
    );
    assert_eq!(authenticate(&r, "openai-api-key").await, Ok(()));
    assert_eq!(authenticate(&r, "environment").await, Ok(()));
    assert_eq!(
        authenticate(&r, "anthropic-api-key").await,
        Err((
            ErrorCode::AUTH_REQUIRED,
            "ANTHROPIC_API_KEY is not set: start the agent with ANTHROPIC_API_KEY in its \
             environment (or anthropic.api_key in the config file)"
                .into(),
            json!({"methodId": "anthropic-api-key", "missing": ["ANTHROPIC_API_KEY"]})
        ))
    );
    let (code, _, data) = authenticate(&r, "github").await.unwrap_err();
    assert_eq!(code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        data["message"],
        "unknown auth method \"github\"; this agent offers environment, openai-api-key, \
         anthropic-api-key"
    );
    r.new_session(&cwd).await;

    // Anthropic's key alone: the other way round.
    let r = start_agent(&anthropic_env(&mock), TestClient::new("allow_once")).await;
    r.initialize().await;
    assert_eq!(authenticate(&r, "anthropic-api-key").await, Ok(()));
    let (code, message, _) = authenticate(&r, "openai-api-key").await.unwrap_err();
    assert_eq!(code, ErrorCode::AUTH_REQUIRED);
    assert!(
        message.starts_with("OPENAI_API_KEY is not set"),
        "{message}"
    );
    r.new_session(&cwd).await;

    // A local server needs no key: its base URL and model are set, and the
    // OpenAI key method says the key is missing (the agent's method works).
    let local = [
        ("OPENAI_BASE_URL", mock.base_url.as_str()),
        ("ACP_AGENT_MODEL", "openai:local"),
    ];
    let r = start_agent(&local, TestClient::new("allow_once")).await;
    r.initialize().await;
    assert_eq!(authenticate(&r, "environment").await, Ok(()));
    let (code, _, _) = authenticate(&r, "openai-api-key").await.unwrap_err();
    assert_eq!(code, ErrorCode::AUTH_REQUIRED);

    // A key whose model is not usable: the model's problem is the answer.
    let mixed = [
        ("OPENAI_API_KEY", "k"),
        ("ACP_AGENT_MODEL", "anthropic:claude-sonnet-4-5"),
    ];
    let r = start_agent(&mixed, TestClient::new("allow_once")).await;
    r.initialize().await;
    let (code, message, _) = authenticate(&r, "openai-api-key").await.unwrap_err();
    assert_eq!(code, ErrorCode::AUTH_REQUIRED);
    assert!(message.contains("anthropic"), "{message}");
}
