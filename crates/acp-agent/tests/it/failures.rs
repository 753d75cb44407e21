//! Honest model failures: a permanent failure (401, 404, a server that is
//! not running, a stream that stays malformed) ends `session/prompt` with a
//! JSON-RPC error carrying the provider's message; a transient one (429,
//! 503, a broken connection) is retried, honouring `retry-after`, and shown
//! as a thought; cancelling stops a retry wait at once.

use crate::support;

use acp::schema::*;
use std::time::{Duration, Instant};
use support::*;

/// Sends `text` in a fresh session and returns the error the prompt ended
/// with.
async fn prompt_error(r: &Running, sid: &SessionId, text: &str) -> Error {
    let err = r
        .conn
        .prompt(PromptRequest::new(sid.clone(), vec![text.into()]))
        .await
        .expect_err("the prompt ends with an error");
    err.remote().expect("a JSON-RPC error").clone()
}

/// The thoughts the client was sent.
fn thoughts(rec: &Recorded) -> String {
    rec.updates()
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::AgentThoughtChunk(c) => c.content.as_text().map(str::to_string),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn permanent_failures_are_json_rpc_errors_with_the_providers_message() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Reply::Status(401, error_body("Incorrect API key provided: sk-bad")),
        Reply::Status(404, error_body("The model `mock-model` does not exist")),
        text_reply("Still here."),
    ])
    .await;
    let env = openai_env(&mock);
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, false), dir.path()).await;

    let e = prompt_error(&r, &sid, "one").await;
    assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
    assert_eq!(
        e.message,
        "the model server answered HTTP 401: Incorrect API key provided: sk-bad"
    );
    let data = e.data.clone().unwrap().to_value();
    assert_eq!(data["status"], 401);
    assert_eq!(data["retries"], 0);
    assert_eq!(data["model"], "openai:mock-model");
    // The user sees why in the turn too.
    assert!(
        r.client
            .rec
            .message_text()
            .contains("⚠️ The turn stopped: the model server answered HTTP 401"),
        "{}",
        r.client.rec.message_text()
    );

    let e = prompt_error(&r, &sid, "two").await;
    assert_eq!(
        e.message,
        "the model server answered HTTP 404: The model `mock-model` does not exist"
    );
    // Permanent failures are not retried: one request each.
    assert_eq!(mock.requests().len(), 2);

    // The session goes on; both failed prompts are in the conversation.
    assert_eq!(r.prompt(&sid, "three").await, StopReason::EndTurn);
    let last = mock.requests().pop().unwrap();
    assert_eq!(roles(&last), ["system", "user", "user", "user"]);
}

#[tokio::test]
async fn a_server_that_is_not_running_is_an_error_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let url = refusing_base_url();
    let env = [
        ("OPENAI_BASE_URL", url.as_str()),
        ("ACP_AGENT_MODEL", "openai:qwen3"),
    ];
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, false), dir.path()).await;
    let t0 = Instant::now();
    let e = prompt_error(&r, &sid, "hi").await;
    assert!(
        e.message
            .starts_with("could not connect to the model server: "),
        "{}",
        e.message
    );
    assert!(e.message.contains(&url), "names the server: {}", e.message);
    assert_eq!(e.data.unwrap().to_value()["retries"], 0);
    assert!(t0.elapsed() < Duration::from_secs(5), "not retried");
}

#[tokio::test]
async fn a_stream_that_stays_malformed_fails_after_its_retries() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Reply::Sse(vec![text("partial"), "data: {this is not json\n\n".into()]),
        Reply::Sse(vec![text("cut off")]),
    ])
    .await;
    let mut env = openai_env(&mock);
    env.push(("ACP_AGENT_MAX_RETRIES", "1"));
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, false), dir.path()).await;
    let e = prompt_error(&r, &sid, "hi").await;
    assert_eq!(
        e.message,
        "the model server sent a malformed response: the stream ended before the response was \
         complete (it failed again after 1 retry)"
    );
    assert_eq!(e.data.unwrap().to_value()["retries"], 1);
    assert_eq!(mock.requests().len(), 2);
    let shown = thoughts(&r.client.rec);
    assert!(
        shown.contains("malformed response") && shown.contains("(retry 1 of 1)"),
        "{shown}"
    );
}

#[tokio::test]
async fn rate_limits_and_outages_are_retried_then_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Reply::StatusWith(
            429,
            vec![("retry-after", "1".into())],
            error_body("Rate limit reached"),
        ),
        Reply::Status(503, error_body("upstream overloaded")),
        Reply::HangUp,
        text_reply("Made it."),
    ])
    .await;
    let env = openai_env(&mock);
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, false), dir.path()).await;
    let t0 = Instant::now();
    assert_eq!(r.prompt(&sid, "hi").await, StopReason::EndTurn);
    // 1 s asked for by the server, then backoffs of about 1 s and 2 s.
    assert!(
        t0.elapsed() >= Duration::from_millis(2600),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!(mock.requests().len(), 4);
    assert_eq!(r.client.rec.message_text(), "Made it.");
    let shown = thoughts(&r.client.rec);
    for line in [
        "the model server answered HTTP 429: Rate limit reached. Trying again in 1 s (retry 1 of 4)…",
        "the model server answered HTTP 503: upstream overloaded. Trying again in ",
        "(retry 2 of 4)",
        "the connection to the model server broke: ",
        "(retry 3 of 4)",
    ] {
        assert!(shown.contains(line), "missing {line:?} in {shown}");
    }
    // The retries are not replayed as part of the conversation.
    let last = mock.requests().pop().unwrap();
    assert_eq!(roles(&last), ["system", "user"]);
}

#[tokio::test]
async fn a_wait_longer_than_a_minute_is_not_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![Reply::StatusWith(
        429,
        vec![("retry-after", "3600".into())],
        error_body("Daily quota exhausted"),
    )])
    .await;
    let env = openai_env(&mock);
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, false), dir.path()).await;
    let e = prompt_error(&r, &sid, "hi").await;
    assert_eq!(
        e.message,
        "the model server answered HTTP 429: Daily quota exhausted (the server asks to wait 3600 s \
         before trying again, longer than 60 s)"
    );
}

#[tokio::test]
async fn cancelling_stops_a_retry_wait_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockLlm::start(vec![
        Reply::StatusWith(
            429,
            vec![("retry-after", "30".into())],
            error_body("slow down"),
        ),
        text_reply("too late"),
    ])
    .await;
    let env = openai_env(&mock);
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, false), dir.path()).await;
    let turn = r.spawn_prompt(&sid, "hi");
    let rec = r.client.rec.clone();
    wait_until("the retry notice", || {
        thoughts(&rec).contains("Trying again in 30 s")
    })
    .await;
    r.cancel_turn(&sid, turn).await;
    assert_eq!(mock.requests().len(), 1, "no retry after the cancel");
    assert_eq!(mock.replies_left(), 1);
}

#[tokio::test]
async fn anthropic_overloaded_mid_stream_is_retried() {
    let dir = tempfile::tempdir().unwrap();
    let ev = anthropic_event;
    let overloaded = Reply::Sse(vec![
        ev(serde_json::json!({"type":"message_start","message":{"usage":{"input_tokens":5}}})),
        ev(
            serde_json::json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}),
        ),
    ]);
    let mock = MockLlm::start(vec![
        overloaded,
        Reply::StatusWith(
            529,
            vec![("retry-after", "0".into())],
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.into(),
        ),
        anthropic_text_reply("Hello.", 5, 2),
    ])
    .await;
    let env = anthropic_env(&mock);
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, false), dir.path()).await;
    assert_eq!(r.prompt(&sid, "hi").await, StopReason::EndTurn);
    assert_eq!(r.client.rec.message_text(), "Hello.");
    let shown = thoughts(&r.client.rec);
    assert!(
        shown.contains("the model server reported an error: Overloaded. Trying again"),
        "{shown}"
    );
    assert!(
        shown.contains("the model server answered HTTP 529: Overloaded. Trying again in 0 s"),
        "{shown}"
    );
}
