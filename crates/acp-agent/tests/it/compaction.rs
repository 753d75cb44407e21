//! Automatic compaction: once the conversation takes `compact_at_percent`
//! of `context_window` tokens (as the provider counted at the last call), the
//! turns before the running one are summarised before the next model call;
//! the client is told, the summary is a thought, `usage_update` never
//! reports the summarising call as the conversation's size, and the
//! summarised turns are still replayed.

use crate::support;

use acp::schema::*;
use support::*;

/// The `used` of each `usage_update`, in order.
fn usage_used(rec: &Recorded) -> Vec<u64> {
    rec.updates()
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::UsageUpdate(u) => Some(u.used),
            _ => None,
        })
        .collect()
}

/// The content of each message of a request after the system prompt.
fn contents(req: &serde_json::Value) -> Vec<String> {
    req["messages"].as_array().unwrap()[1..]
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn env_with<'a>(
    mock: &'a MockLlm,
    extra: &[(&'static str, &'a str)],
) -> Vec<(&'static str, &'a str)> {
    let mut env = openai_env(mock);
    env.extend_from_slice(extra);
    env
}

#[tokio::test]
async fn older_turns_are_summarised_when_the_context_fills_up() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let cwd = canonical(work.path());
    let mock = MockLlm::start(vec![
        // 700 of 1000 tokens: under the threshold of 80%.
        text_reply_using("first answer", 650, 50),
        // 850: over it, so the next turn compacts first.
        text_reply_using("second answer", 800, 50),
        // The summary (its own token count is not the conversation's).
        text_reply_using("SUMMARY: the user asked twice.", 900, 20),
        text_reply_using("third answer", 120, 10),
    ])
    .await;
    let env = env_with(
        &mock,
        &[
            ("ACP_AGENT_CONTEXT_WINDOW", "1000"),
            ("ACP_AGENT_COMPACT_AT_PERCENT", "80"),
        ],
    );
    let r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    let sid = open_session(&r, caps(false, false), &cwd).await;
    assert_eq!(r.prompt(&sid, "first").await, StopReason::EndTurn);
    assert_eq!(r.prompt(&sid, "second").await, StopReason::EndTurn);
    assert_eq!(
        mock.requests().len(),
        2,
        "no compaction under the threshold"
    );
    assert_eq!(r.prompt(&sid, "third").await, StopReason::EndTurn);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 4);
    // The summary request: the two earlier turns, then the request.
    let asked = contents(&reqs[2]);
    assert_eq!(
        &asked[..4],
        ["first", "first answer", "second", "second answer"]
    );
    assert!(asked[4].contains("Summarise our conversation"), "{asked:?}");
    // The turn goes on from the summary.
    assert_eq!(
        contents(&reqs[3]),
        [
            "Summary of our earlier conversation:\n\nSUMMARY: the user asked twice.",
            "Understood. I will continue from this summary.",
            "third"
        ]
    );
    let rec = &r.client.rec;
    let text = rec.message_text();
    assert!(
        text.contains(
            "_The conversation has reached 850 of 1,000 tokens (85%; compaction starts at 80%): \
             summarising the earlier turns to make room…_"
        ),
        "{text}"
    );
    assert!(
        text.contains("_The earlier turns are summarised; continuing._"),
        "{text}"
    );
    assert!(
        !text.contains("SUMMARY"),
        "the summary is a thought: {text}"
    );
    assert!(rec.updates().iter().any(|u| matches!(u,
        SessionUpdate::AgentThoughtChunk(c) if c.content.as_text() == Some("SUMMARY: the user asked twice."))));
    assert_eq!(
        usage_used(rec),
        [700, 850, 130],
        "the summary call is not reported"
    );

    // In another process: the replay still has every turn, and the model
    // gets the conversation from the summary on.
    let mut r = r;
    r.process.shutdown().await.unwrap();
    mock.push(text_reply("fourth answer"));
    let r = start_agent_in(&env, TestClient::new("allow_once"), data.path()).await;
    r.initialize().await;
    r.conn
        .load_session(LoadSessionRequest::new(
            sid.clone(),
            cwd.display().to_string(),
        ))
        .await
        .unwrap();
    let replayed: Vec<String> = r
        .client
        .rec
        .updates()
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::UserMessageChunk(c) => c.content.as_text().map(str::to_string),
            _ => None,
        })
        .collect();
    assert_eq!(replayed, ["first", "second", "third"]);
    r.prompt(&sid, "fourth").await;
    let last = mock.requests().pop().unwrap();
    assert_eq!(contents(&last).len(), 5);
    assert!(contents(&last)[0].starts_with("Summary of our earlier conversation"));
}

#[tokio::test]
async fn compaction_in_the_middle_of_a_turn_keeps_the_running_turn() {
    let work = tempfile::tempdir().unwrap();
    let cwd = canonical(work.path());
    std::fs::write(cwd.join("big.txt"), "lots of text\n").unwrap();
    let mut call = tool_call(0, "r1", "read_file", r#"{"path":"big.txt"}"#, 2);
    call.extend([finish("tool_calls"), usage(880, 20), done()]);
    let mock = MockLlm::start(vec![
        text_reply_using("earlier answer", 100, 10),
        // The tool call takes the conversation to 900 of 1000.
        Reply::Sse(call),
        text_reply_using("SUMMARY: an earlier question.", 500, 10),
        text_reply_using("The file has lots of text.", 200, 10),
    ])
    .await;
    let env = env_with(&mock, &[("ACP_AGENT_CONTEXT_WINDOW", "1000")]);
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, false), &cwd).await;
    r.prompt(&sid, "earlier").await;
    assert_eq!(r.prompt(&sid, "read big.txt").await, StopReason::EndTurn);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 4);
    assert_eq!(&contents(&reqs[2])[..2], ["earlier", "earlier answer"]);
    let after = &reqs[3];
    assert_eq!(
        roles(after),
        ["system", "user", "assistant", "user", "assistant", "tool"],
        "summary, acknowledgement, then the running turn whole"
    );
    assert_eq!(contents(after)[2], "read big.txt");
    assert_eq!(tool_results(after), ["lots of text\n"]);
}

#[tokio::test]
async fn compaction_is_off_at_zero_and_slash_compact_still_works() {
    let work = tempfile::tempdir().unwrap();
    let cwd = canonical(work.path());
    let mock = MockLlm::start(vec![
        text_reply_using("answer", 990, 5),
        text_reply("next answer"),
        text_reply("SUMMARY"),
    ])
    .await;
    let env = env_with(
        &mock,
        &[
            ("ACP_AGENT_CONTEXT_WINDOW", "1000"),
            ("ACP_AGENT_COMPACT_AT_PERCENT", "0"),
        ],
    );
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, false), &cwd).await;
    r.prompt(&sid, "one").await;
    r.prompt(&sid, "two").await;
    assert_eq!(contents(&mock.requests()[1]), ["one", "answer", "two"]);
    assert_eq!(r.prompt(&sid, "/compact").await, StopReason::EndTurn);
    assert!(r.client.rec.message_text().ends_with("SUMMARY"));
}
