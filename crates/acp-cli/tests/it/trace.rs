//! `acp trace`: the timeline of a hand-written recording (every kind of
//! event, a torn last line) as text and JSON, the `--session` / `--turn`
//! filters, and a real `acp record` session read back.

use crate::common;
use common::*;
use std::path::PathBuf;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/session.jsonl")
}

fn trace(sb: &Sandbox, args: &[&str]) -> Output {
    let fixture = fixture();
    let mut full = vec!["trace", fixture.to_str().unwrap()];
    full.extend_from_slice(args);
    let out = sb.run(&full);
    Output {
        stdout: out
            .stdout
            .replace(fixture.to_str().unwrap(), "tests/fixtures/session.jsonl"),
        ..out
    }
}

#[test]
fn the_timeline_pairs_requests_follows_turns_and_marks_errors() {
    let sb = Sandbox::new();
    let out = trace(&sb, &[]);
    assert_code(&out, 0);
    assert_golden("trace_session.txt", &out.stdout);
    assert_eq!(out.stderr, "");
}

#[test]
fn json_output_has_the_same_timeline_for_scripts() {
    let sb = Sandbox::new();
    let out = trace(&sb, &["--format", "json"]);
    assert_code(&out, 0);
    let value: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_golden("trace_session.json", &out.stdout);
    // The parts a script would look for.
    let turn = &value["sessions"][0]["turns"][0];
    assert_eq!(turn["stopReason"], "end_turn");
    assert_eq!(turn["durationMs"], 460.0);
    assert_eq!(turn["permissions"][0]["answer"], "selected yes");
    let statuses: Vec<&str> = turn["toolCalls"][0]["statuses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["pending", "in_progress", "completed"]);
    assert_eq!(value["exit"]["code"], 3);
    assert_eq!(value["counts"]["errors"], 6);
    assert_eq!(
        value["warnings"][0],
        "line 31 is incomplete (the recording was cut off); left out"
    );
}

#[test]
fn filters_keep_one_session_or_one_turn() {
    let sb = Sandbox::new();
    let out = trace(&sb, &["--session", "sess-1", "--turn", "2"]);
    assert_code(&out, 0);
    let body: Vec<&str> = out.stdout.lines().skip_while(|l| !l.is_empty()).collect();
    assert_eq!(
        body,
        [
            "",
            "    1.000  ┌ sess-1 turn 2 \"and <b>again</b>\"",
            "    1.250  └ sess-1 turn 2: ERROR -32603 model overloaded after 250.0 ms",
            "",
            "session sess-1 (session/new, cwd /work)",
            "  turn 2 \"and <b>again</b>\": ERROR -32603 model overloaded, 250.0 ms",
            "counts: 1 sessions, 1 turns, 0 tool calls, 0 permission questions",
            "  lines: client 1 (136 bytes), agent 1 (78 bytes), stderr 0",
            "  messages: 1 requests, 1 responses, 0 notifications; 2 errors, 0 invalid lines",
        ]
    );
    let out = trace(&sb, &["--session", "sess-0", "--format", "json"]);
    let value: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let methods: Vec<String> = value["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| format!("{} {}", e["kind"], e["method"]))
        .collect();
    assert_eq!(
        methods,
        [
            "\"request\" \"session/load\"",
            "\"notification\" \"session/update\"",
            "\"response\" \"session/load\"",
            "\"request\" \"session/set_mode\"",
        ]
    );
}

#[test]
fn bad_files_are_usage_errors() {
    let sb = Sandbox::new();
    let out = sb.run(&["trace", "no-such-file.jsonl"]);
    assert_code(&out, 2);
    assert!(
        out.stderr
            .starts_with("acp: cannot read no-such-file.jsonl"),
        "{}",
        out.stderr
    );
    std::fs::write(sb.work().join("junk.txt"), "hello\nworld\n").unwrap();
    let out = sb.run(&["trace", "junk.txt"]);
    assert_code(&out, 2);
    assert!(
        out.stderr
            .starts_with("acp: junk.txt is not a recording: line 1 is not a record"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_recorded_exec_session_reads_back_with_its_turn_and_tool_calls() {
    let sb = Sandbox::new();
    let rec = sb.root().join("rec.jsonl");
    let agent = format!(
        "{ACP} record -o {} -- {agent}",
        rec.display(),
        agent = test_agent()
    );
    let out = sb.run(&["exec", "--approve-all", "--agent", &agent, "permission"]);
    assert_code(&out, 0);
    let out = sb.run(&["trace", "--format", "json", rec.to_str().unwrap()]);
    assert_code(&out, 0);
    let value: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(value["warnings"], serde_json::json!([]));
    let session = &value["sessions"][0];
    assert_eq!(session["id"], "sess-1");
    assert_eq!(session["cwd"], "$WORK");
    let turn = &session["turns"][0];
    assert_eq!(turn["prompt"], "permission");
    assert_eq!(turn["stopReason"], "end_turn");
    assert_eq!(turn["permissions"][0]["answer"], "selected allow");
    assert_eq!(turn["toolCalls"][0]["title"], "Remove build/");
    let counts = &value["counts"];
    assert_eq!(counts["errors"], 0);
    assert_eq!(counts["requests"], 4);
    assert_eq!(counts["responses"], 4);
    assert_eq!(value["exit"]["code"], 0);
    // Every request got its answer, in the order the wire had them.
    for event in value["events"].as_array().unwrap() {
        if event["kind"] == "request" {
            assert_eq!(event["outcome"], "ok", "{event}");
        }
    }
    let text = sb.run(&["trace", rec.to_str().unwrap()]);
    assert!(
        text.stdout.contains("┌ sess-1 turn 1 \"permission\""),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("└ sess-1 turn 1: end_turn in "),
        "{}",
        text.stdout
    );
}
