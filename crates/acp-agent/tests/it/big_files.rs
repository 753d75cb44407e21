//! A 70 MiB file read through the client: over the 64 MiB a message may
//! take. The agent asks only for the lines that fit and tells the model how
//! to read on; an editor that answers with the whole file anyway (its answer
//! is dropped by the connection, which tells the read it answered by its
//! id) fails the tool call instead of hanging the turn; a line that could never fit in a message is refused at once.

use crate::support;

use acp::schema::*;
use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::time::Duration;
use support::*;

/// Lines of 100 bytes numbered from 1, 70 MiB in all.
fn write_big_file(path: &Path) -> usize {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let lines = 70 * 1024 * 1024 / 100;
    for n in 1..=lines {
        writeln!(out, "line {n:>9} {}", "x".repeat(84)).unwrap();
    }
    out.flush().unwrap();
    lines
}

/// Runs one turn in which the model reads `file` (with `args` added) and
/// then answers "done"; the tool result the model was sent.
async fn read_through_client(
    client: TestClient,
    cwd: &Path,
    args: serde_json::Value,
) -> (Running, String) {
    one_tool_call(client, cwd, "read_file", args).await
}

/// Runs one turn in which the model calls `tool` with `args`, then answers
/// "done"; the tool result the model was sent.
async fn one_tool_call(
    client: TestClient,
    cwd: &Path,
    tool: &str,
    args: serde_json::Value,
) -> (Running, String) {
    let mock = MockLlm::start(vec![tool_reply("call_1", tool, args), text_reply("done")]).await;
    let env = openai_env(&mock);
    let r = start_agent(&env, client).await;
    let sid = open_session(&r, caps(true, true), cwd).await;
    let stop = tokio::time::timeout(Duration::from_secs(120), r.prompt(&sid, "read it"))
        .await
        .expect("the turn ends: the read does not hang");
    assert_eq!(stop, StopReason::EndTurn);
    let results = tool_results(&mock.requests()[1]);
    assert_eq!(results.len(), 1);
    (r, results[0].clone())
}

#[tokio::test]
async fn a_70_mib_file_is_read_a_part_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    let lines = write_big_file(&cwd.join("big.log"));

    let (r, result) = read_through_client(
        TestClient::new("allow_once"),
        &cwd,
        json!({"path": "big.log"}),
    )
    .await;
    // 256 KiB of 100-byte lines: 2621 lines, asked for as such.
    let ranges = r.client.rec.read_ranges.lock().unwrap().clone();
    assert_eq!(ranges, vec![(Some(1), Some(2621))]);
    assert!(
        result.starts_with(&format!("line {:>9} ", 1)),
        "{}",
        &result[..80]
    );
    assert!(result.contains(&format!("line {:>9} ", 2621)));
    assert!(!result.contains(&format!("line {:>9} ", 2622)));
    assert!(
        result.ends_with(&format!(
            "[lines 1–2621 of {lines}, to stay within 256 KiB; read on with line=2622]"
        )),
        "{}",
        &result[result.len() - 120..]
    );

    // Reading on from the middle asks for the same amount from there.
    let (r, result) = read_through_client(
        TestClient::new("allow_once"),
        &cwd,
        json!({"path": "big.log", "line": 500_000, "limit": 10}),
    )
    .await;
    let ranges = r.client.rec.read_ranges.lock().unwrap().clone();
    assert_eq!(ranges, vec![(Some(500_000), Some(10))]);
    assert_eq!(result.lines().count(), 10);
    assert!(result.starts_with(&format!("line {:>9} ", 500_000)));
}

#[tokio::test]
async fn an_editor_answering_with_the_whole_70_mib_fails_the_read_not_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    write_big_file(&cwd.join("big.log"));
    let client = TestClient::new("allow_once");
    client
        .whole_files
        .store(true, std::sync::atomic::Ordering::SeqCst);

    let (r, result) = read_through_client(client, &cwd, json!({"path": "big.log"})).await;
    assert_eq!(r.client.rec.reads.lock().unwrap().len(), 1);
    let expected = format!(
        "could not read {}: the editor's answer was 70.7 MiB, longer than one message may be \
         (64.0 MiB), and was dropped; read fewer lines at a time with line and limit",
        cwd.join("big.log").display()
    );
    assert!(result.contains(&expected), "{result}");
    let call = r.client.rec.final_tool_calls().pop().unwrap();
    assert_eq!(call.status, ToolCallStatus::Failed);

    // An edit, which needs the whole file for its diff, is refused before
    // anything is read.
    let client = TestClient::new("allow_once");
    let (r, result) = one_tool_call(
        client,
        &cwd,
        "edit_file",
        json!({"path": "big.log", "old_string": "line", "new_string": "LINE"}),
    )
    .await;
    assert!(r.client.rec.reads.lock().unwrap().is_empty());
    assert!(
        result.contains(&format!(
            "{} is 70.0 MiB, too large to change with write_file or edit_file (at most 16.0 MiB); \
             change it with a command instead",
            cwd.join("big.log").display()
        )),
        "{result}"
    );
}

#[tokio::test]
async fn a_line_too_long_for_any_message_is_refused_without_asking() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    // One line of 40 MiB: more than half a message.
    std::fs::write(cwd.join("min.js"), "y".repeat(40 * 1024 * 1024)).unwrap();

    let (r, result) = read_through_client(
        TestClient::new("allow_once"),
        &cwd,
        json!({"path": "min.js"}),
    )
    .await;
    assert!(r.client.rec.reads.lock().unwrap().is_empty());
    assert!(
        result.contains(&format!(
            "line 1 of {} is 40.0 MiB, longer than can be read in one message; search it with \
             grep, or look at part of it with a command (for example head -c)",
            cwd.join("min.js").display()
        )),
        "{result}"
    );

    // A line of 1 MiB is read, and only its start shown.
    std::fs::write(cwd.join("one.js"), "z".repeat(1024 * 1024)).unwrap();
    let (_, result) = read_through_client(
        TestClient::new("allow_once"),
        &cwd,
        json!({"path": "one.js"}),
    )
    .await;
    assert!(result.starts_with("zzzz"));
    assert!(
        result.ends_with(
            "[line 1 alone is 1048576 bytes, more than 256 KiB: only its start is shown; \
             search it with grep]"
        ),
        "{}",
        &result[result.len() - 200..]
    );
}
