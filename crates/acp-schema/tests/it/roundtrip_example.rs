//! Runs `examples/roundtrip.rs` as a co-process and checks its exact output.
//!
//! `cargo test` builds the crate's examples next to the test executables
//! (`target/<profile>/examples/`), so the binary is found from this test's own
//! path rather than rebuilt with `cargo run`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn example_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable has a path");
    // target/<profile>/deps/roundtrip_example-<hash> → target/<profile>/examples/roundtrip
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test runs from target/<profile>/deps");
    let bin = profile_dir
        .join("examples")
        .join(format!("roundtrip{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} does not exist: run the tests with `cargo test -p acp-schema` (which builds the \
         examples), or build it first with `cargo build -p acp-schema --example roundtrip`",
        bin.display()
    );
    bin
}

/// Feeds `input` to the example and returns its stdout lines.
fn run(input: &str) -> Vec<String> {
    let mut child = Command::new(example_binary())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the example starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input.as_bytes())
        .expect("the example reads stdin");
    let out = child.wait_with_output().expect("the example exits");
    assert!(
        out.status.success(),
        "exit status {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("the output is UTF-8")
        .lines()
        .map(str::to_string)
        .collect()
}

fn check(cases: &[(&str, &str)]) {
    let input: String = cases.iter().map(|(i, _)| format!("{i}\n")).collect();
    let got = run(&input);
    let expected: Vec<&str> = cases.iter().map(|(_, o)| *o).collect();
    assert_eq!(
        got.len(),
        expected.len(),
        "one output line per input line: {got:#?}"
    );
    for ((input, want), got) in cases.iter().zip(&got) {
        assert_eq!(got, want, "for input {input}");
    }
}

#[test]
fn decodes_and_reencodes_params_and_results() {
    check(&[
        (
            r#"{"method":"session/prompt","kind":"params","value":{"sessionId":"sess_1","prompt":[{"type":"text","text":"hi"}]}}"#,
            r#"{"ok":true,"value":{"sessionId":"sess_1","prompt":[{"type":"text","text":"hi"}]}}"#,
        ),
        (
            r#"{"value":{"protocolVersion":1},"kind":"params","method":"initialize"}"#,
            r#"{"ok":true,"value":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"auth":{"terminal":false}}}}"#,
        ),
        (
            r#"{"method":"session/prompt","kind":"result","value":{"stopReason":"end_turn","_meta":{"a":[1]}}}"#,
            r#"{"ok":true,"value":{"stopReason":"end_turn","_meta":{"a":[1]}}}"#,
        ),
        (
            r#"{"method":"session/update","kind":"params","value":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}"#,
            r#"{"ok":true,"value":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}"#,
        ),
        (
            r#"{"method":"fs/read_text_file","kind":"result","value":{"content":"fn main() {}\n"}}"#,
            r#"{"ok":true,"value":{"content":"fn main() {}\n"}}"#,
        ),
        (
            r#"{"method":"logout","kind":"params","value":null}"#,
            r#"{"ok":true,"value":{}}"#,
        ),
        (
            r#"{"method":"$/cancel_request","kind":"params","value":{"requestId":"r-1"}}"#,
            r#"{"ok":true,"value":{"requestId":"r-1"}}"#,
        ),
        (
            r#"{"method":"_acme/x","kind":"params","value":{ "b" : 1.50 ,"a":[ ]}}"#,
            r#"{"ok":true,"value":{ "b" : 1.50 ,"a":[ ]}}"#,
        ),
        (
            r#"{"method":"_acme/x","kind":"result","value":null}"#,
            r#"{"ok":true,"value":null}"#,
        ),
    ]);
}

#[test]
fn reports_errors_with_field_paths() {
    check(&[
        (
            r#"{"method":"session/update","kind":"params","value":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":7}}}}"#,
            r#"{"ok":false,"error":"update.content.text: invalid type: integer `7`, expected a string"}"#,
        ),
        (
            r#"{"method":"session/prompt","kind":"params","value":{"sessionId":"s"}}"#,
            r#"{"ok":false,"error":"missing field `prompt`"}"#,
        ),
        (
            r#"{"method":"session/prompt","kind":"result","value":{"stopReason":1}}"#,
            r#"{"ok":false,"error":"stopReason: invalid type: integer `1`, expected a string"}"#,
        ),
        #[cfg(not(feature = "unstable-session-fork"))]
        (
            r#"{"method":"session/fork","kind":"params","value":{}}"#,
            r#"{"ok":false,"error":"unknown method `session/fork`"}"#,
        ),
        #[cfg(feature = "unstable-session-fork")]
        (
            r#"{"method":"session/fork","kind":"params","value":{}}"#,
            r#"{"ok":false,"error":"missing field `sessionId`"}"#,
        ),
        (
            r#"{"method":"nes/start","kind":"params","value":{}}"#,
            r#"{"ok":false,"error":"unknown method `nes/start`"}"#,
        ),
        (
            r#"{"method":"session/cancel","kind":"result","value":{}}"#,
            r#"{"ok":false,"error":"`session/cancel` is a notification: it has no result"}"#,
        ),
        (
            r#"{"method":"session/prompt","kind":"reply","value":{}}"#,
            r#"{"ok":false,"error":"`kind` must be \"params\" or \"result\", not \"reply\""}"#,
        ),
        (
            r#"{"method":"logout","kind":"params"}"#,
            r#"{"ok":false,"error":"the line has no `value`"}"#,
        ),
        (
            r#"{"kind":"params","value":{}}"#,
            r#"{"ok":false,"error":"the line has no `method`"}"#,
        ),
        (
            r#"{"method":7,"kind":"params","value":{}}"#,
            r#"{"ok":false,"error":"`method` must be a string"}"#,
        ),
        (
            "",
            r#"{"ok":false,"error":"empty line: expected {\"method\": …, \"kind\": …, \"value\": …}"}"#,
        ),
        (
            "not json",
            r#"{"ok":false,"error":"the line is not a JSON object: expected ident at line 1 column 2"}"#,
        ),
        (
            "[1,2]",
            r#"{"ok":false,"error":"the line is not a JSON object: invalid type: sequence, expected a map at line 1 column 0"}"#,
        ),
    ]);
}

#[test]
fn answers_each_line_as_it_arrives() {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(example_binary())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the example starts");
    let mut stdin = child.stdin.take().expect("piped");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
    for i in 0..3 {
        writeln!(
            stdin,
            r#"{{"method":"session/cancel","kind":"params","value":{{"sessionId":"s{i}"}}}}"#
        )
        .expect("write");
        stdin.flush().expect("flush");
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read");
        assert_eq!(
            line,
            format!("{{\"ok\":true,\"value\":{{\"sessionId\":\"s{i}\"}}}}\n")
        );
    }
    drop(stdin);
    assert!(child.wait().expect("exits").success());
}
