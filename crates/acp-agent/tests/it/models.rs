//! The session model, offered as the config option of category `model`
//! (and switched by `session/set_model` too, for older clients): results
//! carry no `models` (no current schema defines it). Both ways change the
//! same setting, the next model call uses it, it is stored with the session,
//! unknown ids are refused; and the prompt result reports the turn's token
//! usage in its `_meta` (the stable schema has no `usage` field).

use crate::support;

use acp::schema::*;
use serde_json::json;
use std::path::Path;
use support::*;

/// A config file offering two models of the mock server.
fn write_config(dir: &Path, mock: &MockLlm) -> String {
    let path = dir.join("agent.toml");
    std::fs::write(
        &path,
        format!(
            "model = \"openai:small\"\n\
             models = [\"openai:small\", \"openai:large\"]\n\
             [openai]\n\
             base_url = \"{}\"\n\
             api_key = \"k\"\n",
            mock.base_url
        ),
    )
    .unwrap();
    path.display().to_string()
}

/// The current value and the values offered by the config option `model`.
fn model_option(options: &[SessionConfigOption]) -> (String, Vec<String>) {
    let option = options
        .iter()
        .find(|o| o.category == Some(SessionConfigOptionCategory::Model))
        .expect("a config option of category model");
    assert_eq!(option.id.as_str(), "model");
    let SessionConfigKind::Select(sel) = &option.kind else {
        panic!("{option:?}")
    };
    (
        sel.current_value.to_string(),
        sel.options.iter().map(|o| o.value.to_string()).collect(),
    )
}

/// The top-level fields of a result as the client receives it: only those
/// the stable schema defines (no `models`).
fn fields(result: &impl serde::Serialize) -> Vec<String> {
    let value = serde_json::to_value(result).unwrap();
    // Sorted: whether serde_json keeps insertion order depends on which
    // crates share the build (acp-cli turns `preserve_order` on).
    let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}

/// The current model of the last `config_option_update`.
fn last_notified_model(r: &Running) -> Option<String> {
    r.client.rec.updates().iter().rev().find_map(|u| match u {
        SessionUpdate::ConfigOptionUpdate(c) => Some(model_option(&c.config_options).0),
        _ => None,
    })
}

fn offered() -> Vec<String> {
    vec!["openai:small".to_string(), "openai:large".to_string()]
}

#[tokio::test]
async fn both_ways_switch_the_same_model_and_it_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    let data = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        text_reply("one"),
        text_reply("two"),
        text_reply("three"),
        text_reply("four"),
    ])
    .await;
    let config = write_config(dir.path(), &mock);
    let args = ["--config", config.as_str()];
    let mut r = start_agent_with(&args, &[], TestClient::new("allow_once"), data.path()).await;
    r.initialize().await;
    let new = r
        .conn
        .new_session(NewSessionRequest::new(cwd.display().to_string()))
        .await
        .unwrap();
    let sid = new.session_id.clone();
    assert_eq!(fields(&new), ["configOptions", "modes", "sessionId"]);
    assert_eq!(
        model_option(new.config_options.as_deref().unwrap()),
        ("openai:small".into(), offered())
    );

    // session/set_model: the next turn runs on the new model, and the
    // config option follows.
    r.prompt(&sid, "first").await;
    r.conn
        .set_session_model(SetSessionModelRequest::new(sid.clone(), "openai:large"))
        .await
        .unwrap();
    assert_eq!(last_notified_model(&r).as_deref(), Some("openai:large"));
    r.prompt(&sid, "second").await;
    let requests = mock.requests();
    assert_eq!(requests[0]["model"], "small");
    assert_eq!(requests[1]["model"], "large");

    // The config option: back to small; the selector agrees on resume.
    let resp = r
        .conn
        .set_session_config_option(SetSessionConfigOptionRequest::new(
            sid.clone(),
            "model",
            "openai:small",
        ))
        .await
        .unwrap();
    assert_eq!(model_option(&resp.config_options).0, "openai:small");
    assert_eq!(last_notified_model(&r).as_deref(), Some("openai:small"));
    let resumed = r
        .conn
        .resume_session(ResumeSessionRequest::new(
            sid.clone(),
            cwd.display().to_string(),
        ))
        .await
        .unwrap();
    assert_eq!(fields(&resumed), ["configOptions", "modes"]);
    assert_eq!(
        model_option(resumed.config_options.as_deref().unwrap()).0,
        "openai:small"
    );
    r.prompt(&sid, "third").await;
    assert_eq!(mock.requests()[2]["model"], "small");

    // Switched to large once more, then a new process loads the session on
    // large.
    r.conn
        .set_session_model(SetSessionModelRequest::new(sid.clone(), "openai:large"))
        .await
        .unwrap();
    r.process.shutdown().await.unwrap();
    let r = start_agent_with(&args, &[], TestClient::new("allow_once"), data.path()).await;
    r.initialize().await;
    let loaded = r
        .conn
        .load_session(LoadSessionRequest::new(
            sid.clone(),
            cwd.display().to_string(),
        ))
        .await
        .unwrap();
    assert_eq!(fields(&loaded), ["configOptions", "modes"]);
    assert_eq!(
        model_option(loaded.config_options.as_deref().unwrap()),
        ("openai:large".into(), offered())
    );
    r.prompt(&sid, "fourth").await;
    assert_eq!(mock.requests()[3]["model"], "large");
}

#[tokio::test]
async fn unknown_models_are_refused_with_invalid_params() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    let mock = MockLlm::start(vec![text_reply("still small")]).await;
    let config = write_config(dir.path(), &mock);
    let data = tempfile::tempdir().unwrap();
    let r = start_agent_with(
        &["--config", config.as_str()],
        &[],
        TestClient::new("allow_once"),
        data.path(),
    )
    .await;
    r.initialize().await;
    let sid = r.new_session(&cwd).await;
    let err = r
        .conn
        .set_session_model(SetSessionModelRequest::new(sid.clone(), "openai:huge"))
        .await
        .unwrap_err();
    let remote = err.remote().expect("an error answer");
    assert_eq!(remote.code, ErrorCode::INVALID_PARAMS);
    let data: serde_json::Value =
        serde_json::from_str(remote.data.as_ref().unwrap().get()).unwrap();
    assert_eq!(
        data["message"],
        "unknown model \"openai:huge\"; this session offers openai:small, openai:large"
    );
    for bad in ["openai:huge", "huge", "anthropic:claude-sonnet-4-5"] {
        let err = r
            .conn
            .set_session_config_option(SetSessionConfigOptionRequest::new(
                sid.clone(),
                "model",
                bad,
            ))
            .await
            .unwrap_err();
        assert_eq!(
            err.remote().unwrap().code,
            ErrorCode::INVALID_PARAMS,
            "{bad}"
        );
    }
    // Another session's id: not found.
    let err = r
        .conn
        .set_session_model(SetSessionModelRequest::new("sess-none", "openai:large"))
        .await
        .unwrap_err();
    assert_eq!(err.remote().unwrap().code, ErrorCode::RESOURCE_NOT_FOUND);
    // Nothing changed: no notification, and the turn runs on small.
    assert_eq!(last_notified_model(&r), None);
    r.prompt(&sid, "hi").await;
    assert_eq!(mock.requests()[0]["model"], "small");
}

#[tokio::test]
async fn one_configured_model_is_the_one_offered() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    let mock = MockLlm::start(vec![]).await;
    let r = start_agent(&openai_env(&mock), TestClient::new("allow_once")).await;
    r.initialize().await;
    let new = r
        .conn
        .new_session(NewSessionRequest::new(cwd.display().to_string()))
        .await
        .unwrap();
    let only = vec!["openai:mock-model".to_string()];
    assert_eq!(
        model_option(&new.config_options.unwrap()),
        ("openai:mock-model".into(), only)
    );
    // Setting the current model again changes nothing and tells nothing.
    r.conn
        .set_session_model(SetSessionModelRequest::new(
            new.session_id,
            "openai:mock-model",
        ))
        .await
        .unwrap();
    assert_eq!(last_notified_model(&r), None);
}

#[tokio::test]
async fn the_prompt_result_reports_the_turns_token_usage() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    std::fs::write(cwd.join("a.txt"), "A\n").unwrap();
    let mut read = tool_call(0, "r1", "read_file", r#"{"path":"a.txt"}"#, 1);
    read.extend([finish("tool_calls"), usage(100, 20), done()]);
    let mock = MockLlm::start(vec![
        Reply::Sse(read),
        text_reply_using("Read it.", 130, 7),
        // No usage reported: none in the result.
        Reply::Sse(vec![text("quiet"), finish("stop"), done()]),
    ])
    .await;
    let r = start_agent(&openai_env(&mock), TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, false), &cwd).await;
    let resp = r
        .conn
        .prompt(PromptRequest::new(sid.clone(), vec!["read a".into()]))
        .await
        .unwrap();
    // Both model calls of the turn, summed, in `_meta` (the stable schema
    // has no `usage` field).
    assert_eq!(
        serde_json::to_value(&resp).unwrap(),
        json!({
            "stopReason": "end_turn",
            "_meta": {"usage": {"totalTokens": 257, "inputTokens": 230, "outputTokens": 27}}
        })
    );
    let resp = r
        .conn
        .prompt(PromptRequest::new(sid.clone(), vec!["again".into()]))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&resp).unwrap(),
        json!({"stopReason": "end_turn"}),
        "no usage reported: none in the result (the previous turn's is not repeated)"
    );
}
