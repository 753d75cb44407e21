//! `acp mock`: a recorded `acp exec` session replays to a second `acp exec`
//! with the same output; replays renumber the mock's requests and follow
//! the client's ids; differences are reported on stderr and in the exit
//! code; and every command of the script format, driven line by line.

use crate::common;
use common::*;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

#[test]
fn a_recorded_exec_session_replays_to_a_second_exec_with_the_same_output() {
    let sb = Sandbox::new();
    std::fs::write(sb.work().join("notes.txt"), "one\ntwo\n").unwrap();
    let notes = sb.work().join("notes.txt");
    let read = format!("read {}", notes.display());
    let prompts: Vec<(&[&str], &str)> = vec![
        (&[], "stream"),
        (&[], "tool"),
        (&[], "plan"),
        (&["--approve-all"], "permission"),
        (&["--deny-all"], "permission"),
        (&[], read.as_str()),
        (&["--approve-all"], "terminal echo hi"),
        (&["--format", "json"], "thought"),
        (&[], "refuse"),
        (&[], "error"),
        (&[], "later 1"),
    ];
    for (i, (flags, prompt)) in prompts.iter().enumerate() {
        let rec = sb.root().join(format!("rec-{i}.jsonl"));
        let recorder = format!(
            "{ACP} record -o {} -- {agent}",
            rec.display(),
            agent = test_agent()
        );
        let mut args = vec!["exec", "--agent", recorder.as_str()];
        args.extend_from_slice(flags);
        args.push(prompt);
        let first = sb.run(&args);
        let mock = format!("{ACP} mock --trace {}", rec.display());
        args[2] = mock.as_str();
        let second = sb.run(&args);
        assert_eq!(
            second.code, first.code,
            "{prompt}: exit code\n{}",
            second.stderr
        );
        assert_eq!(second.stdout, first.stdout, "{prompt}: stdout");
        assert_eq!(second.stderr, first.stderr, "{prompt}: stderr");
        assert!(
            !first.stdout.is_empty() || !first.stderr.is_empty(),
            "{prompt}"
        );
    }
}

#[test]
fn a_crash_replays_as_a_crash_with_the_agents_stderr_and_status() {
    let sb = Sandbox::new();
    let rec = sb.root().join("rec.jsonl");
    let recorder = format!(
        "{ACP} record -o {} -- {agent}",
        rec.display(),
        agent = test_agent()
    );
    let first = sb.run(&["exec", "--agent", &recorder, "crash"]);
    let mock = format!("{ACP} mock --trace {}", rec.display());
    let second = sb.run(&["exec", "--agent", &mock, "crash"]);
    assert_code(&first, 6);
    assert_code(&second, 6);
    assert_eq!(second.stdout, first.stdout);
    // The one line the replay cannot have is the proxy's own.
    let banner = format!(
        "  | acp record: recording to {}\n",
        sb.scrub(&rec.display().to_string())
    );
    assert_eq!(second.stderr, first.stderr.replace(&banner, ""));
    assert!(
        second.stderr.contains("(exit status: 3)"),
        "{}",
        second.stderr
    );
}

/// `acp mock ARGS…` with piped stdio, driven line by line.
struct Mock {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Mock {
    fn start(sb: &Sandbox, args: &[&str]) -> Mock {
        let mut full = vec!["mock"];
        full.extend_from_slice(args);
        let mut child = sb.command(&full).stdin(Stdio::piped()).spawn().unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Mock {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn recv(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert!(line.ends_with('\n'), "the mock's output ended: {line:?}");
        line.pop();
        line
    }

    /// Closes the mock's input and returns its exit code and stderr.
    fn finish(mut self) -> (i32, String) {
        drop(self.stdin.take());
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.stdout, &mut rest).unwrap();
        assert_eq!(rest, "", "the mock said more than expected");
        let out = self.child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn write(path: &Path, lines: &[&str]) {
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// A recording by hand: a prompt, an agent request in the middle, garbage.
fn recording(path: &Path) {
    let line = |t: f64, from: &str, json: &str| {
        serde_json::json!({"t": t, "from": from, "line": json}).to_string()
    };
    let lines = [
        r#"{"acpRecord":1,"started":"2025-01-02T03:04:05.000000Z","agent":["a"],"redacted":false}"#
            .to_owned(),
        line(
            0.1,
            "client",
            r#"{"jsonrpc":"2.0","id":0,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"go"}]}}"#,
        ),
        line(
            0.2,
            "agent",
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#,
        ),
        line(0.3, "agent", "not json, sent as it was"),
        line(
            0.4,
            "agent",
            r#"{"jsonrpc":"2.0","id":"agent-7","method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}"#,
        ),
        line(
            0.5,
            "client",
            r#"{"jsonrpc":"2.0","id":"agent-7","result":{"content":"A"}}"#,
        ),
        line(0.6, "stderr", "agent: done"),
        line(
            0.7,
            "agent",
            r#"{"jsonrpc":"2.0","id":0,"result":{"stopReason":"end_turn"}}"#,
        ),
    ];
    write(path, &lines.iter().map(String::as_str).collect::<Vec<_>>());
}

#[test]
fn a_replay_renumbers_its_requests_and_answers_the_clients_ids() {
    let sb = Sandbox::new();
    let rec = sb.root().join("rec.jsonl");
    recording(&rec);
    let mut mock = Mock::start(&sb, &["--trace", rec.to_str().unwrap()]);
    mock.send(r#"{"jsonrpc":"2.0","id":"p-1","method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"go"}]}}"#);
    assert_eq!(
        mock.recv(),
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#
    );
    assert_eq!(mock.recv(), "not json, sent as it was");
    assert_eq!(
        mock.recv(),
        r#"{"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}"#
    );
    mock.send(r#"{"jsonrpc":"2.0","id":0,"result":{"content":"A","extra":true}}"#);
    assert_eq!(
        mock.recv(),
        r#"{"jsonrpc":"2.0","id":"p-1","result":{"stopReason":"end_turn"}}"#
    );
    let (code, stderr) = mock.finish();
    assert_eq!(stderr, "agent: done\n");
    assert_eq!(code, 0);
}

#[test]
fn a_replay_reports_differences_and_refuses_what_it_does_not_expect() {
    let sb = Sandbox::new();
    let rec = sb.root().join("rec.jsonl");
    recording(&rec);
    let mut mock = Mock::start(&sb, &["--trace", rec.to_str().unwrap()]);
    // Not in the recording: refused, and the prompt still plays.
    mock.send(r#"{"jsonrpc":"2.0","id":9,"method":"session/set_mode","params":{"sessionId":"s","modeId":"x"}}"#);
    assert_eq!(
        mock.recv(),
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"acp mock: the recording has no such request here"}}"#
    );
    mock.send("garbage");
    mock.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"stop"}]}}"#);
    mock.recv();
    mock.recv();
    mock.recv();
    mock.send(r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32002,"message":"no such file"}}"#);
    assert_eq!(
        mock.recv(),
        r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#
    );
    let (code, stderr) = mock.finish();
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "acp mock: difference: the client sent a request session/set_mode #9 that the recording does not have here (waiting for the request session/prompt #0 of record line 2)\n\
         acp mock: difference: the client sent a line that is not JSON (expected value at line 1 column 1)\n\
         acp mock: difference: record line 2, request session/prompt #0: params.prompt[0].text: \"stop\", expected \"go\"\n\
         acp mock: difference: record line 6, answer #\"agent-7\": an error answer, recorded was a result\n\
         agent: done\n\
         acp mock: 4 differences\n"
    );
}

#[test]
fn a_client_that_leaves_early_or_goes_quiet_fails_the_replay() {
    let sb = Sandbox::new();
    let rec = sb.root().join("rec.jsonl");
    recording(&rec);
    let mock = Mock::start(&sb, &["--trace", rec.to_str().unwrap()]);
    let (code, stderr) = mock.finish();
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "acp mock: difference: the client closed the connection while the mock waited for the request session/prompt #0 of record line 2\n"
    );
    let started = Instant::now();
    let mut mock = Mock::start(&sb, &["--trace", rec.to_str().unwrap(), "--timeout", "0.3"]);
    let mut out = String::new();
    mock.stdout.read_line(&mut out).unwrap();
    assert_eq!(out, "", "it said something");
    let (code, stderr) = mock.finish();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(code, 1);
    assert!(
        stderr.starts_with("acp mock: difference: nothing came from the client within --timeout"),
        "{stderr}"
    );
}

#[test]
fn every_script_command_does_what_it_says() {
    let sb = Sandbox::new();
    let script = sb.root().join("agent.mock");
    write(
        &script,
        &[
            "# A hand-written agent.",
            "expect initialize {\"protocolVersion\":1}",
            "reply {\"protocolVersion\":1,\"agentCapabilities\":{}}",
            "",
            "expect session/new",
            "reply {\"sessionId\":\"s1\"}",
            "expect session/prompt {\"prompt\":[{\"type\":\"text\",\"text\":\"hi\"}]}",
            "send update {\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"Hello\"}}",
            "send ext/ping {\"n\":1}",
            "send ext/bare",
            "request fs/read_text_file {\"sessionId\":\"s1\",\"path\":\"/x\"}",
            "answered {\"content\":\"X\"}",
            "request fs/read_text_file {\"sessionId\":\"s1\",\"path\":\"/y\"}",
            "answered error -32002",
            "sleep 200ms",
            "reply {\"stopReason\":\"end_turn\"}",
            "expect session/prompt",
            "fail -32603 out of tokens",
            "expect session/cancel",
            "exit 9",
        ],
    );
    let mut mock = Mock::start(&sb, &["--script", script.to_str().unwrap()]);
    mock.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#);
    assert_eq!(
        mock.recv(),
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}"#
    );
    mock.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}"#,
    );
    assert_eq!(
        mock.recv(),
        r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#
    );
    mock.send(r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}"#);
    assert_eq!(
        mock.recv(),
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello"}}}}"#
    );
    assert_eq!(
        mock.recv(),
        r#"{"jsonrpc":"2.0","method":"ext/ping","params":{"n":1}}"#
    );
    assert_eq!(mock.recv(), r#"{"jsonrpc":"2.0","method":"ext/bare"}"#);
    assert_eq!(
        mock.recv(),
        r#"{"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/x"}}"#
    );
    mock.send(r#"{"jsonrpc":"2.0","id":0,"result":{"content":"X"}}"#);
    assert_eq!(
        mock.recv(),
        r#"{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/y"}}"#
    );
    mock.send(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"not found"}}"#);
    let asked = Instant::now();
    assert_eq!(
        mock.recv(),
        r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#
    );
    assert!(
        asked.elapsed() >= Duration::from_millis(200),
        "sleep did not wait"
    );
    mock.send(r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#);
    assert_eq!(
        mock.recv(),
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"out of tokens"}}"#
    );
    mock.send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#);
    // `exit 9` ends the mock without waiting for the client.
    let status = mock.child.wait().unwrap();
    assert_eq!(status.code(), Some(9));
}

#[test]
fn a_script_reports_what_the_client_got_wrong() {
    let sb = Sandbox::new();
    let script = sb.root().join("agent.mock");
    write(
        &script,
        &[
            "expect session/prompt {\"prompt\":[{\"text\":\"hi\"}]}",
            "request session/request_permission {\"sessionId\":\"s1\",\"toolCall\":{\"toolCallId\":\"t\"},\"options\":[]}",
            "answered {\"outcome\":{\"outcome\":\"selected\",\"optionId\":\"ok\"}}",
            "reply {\"stopReason\":\"end_turn\"}",
        ],
    );
    let mut mock = Mock::start(&sb, &["--script", script.to_str().unwrap()]);
    mock.send(r#"{"jsonrpc":"2.0","id":5,"method":"session/load","params":{}}"#);
    assert_eq!(
        mock.recv(),
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"acp mock: expected session/prompt"}}"#
    );
    mock.send(r#"{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"bye"}]}}"#);
    mock.recv();
    // A notification while the mock waits for the answer is kept, then
    // found unexpected after the end.
    mock.send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#);
    mock.send(r#"{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}"#);
    assert_eq!(
        mock.recv(),
        r#"{"jsonrpc":"2.0","id":6,"result":{"stopReason":"end_turn"}}"#
    );
    let (code, stderr) = mock.finish();
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "acp mock: difference: script line 1: the client sent a request session/load #5 instead of session/prompt\n\
         acp mock: difference: script line 1, session/prompt: params.prompt[0].text: \"bye\", expected \"hi\"\n\
         acp mock: difference: script line 3, the answer: result.outcome.outcome: \"cancelled\", expected \"selected\"\n\
         acp mock: difference: script line 3, the answer: result.outcome.optionId: missing (expected \"ok\")\n\
         acp mock: difference: unexpected after the end: notification session/cancel\n\
         acp mock: 5 differences\n"
    );
}

#[test]
fn a_script_is_an_agent_for_acp_exec() {
    let sb = Sandbox::new();
    let script = sb.root().join("agent.mock");
    write(
        &script,
        &[
            "expect initialize",
            "reply {\"protocolVersion\":1,\"agentCapabilities\":{},\"agentInfo\":{\"name\":\"scripted\",\"version\":\"1\"}}",
            "expect session/new",
            "reply {\"sessionId\":\"scripted-1\"}",
            "expect session/prompt {\"prompt\":[{\"type\":\"text\",\"text\":\"hello\"}]}",
            "send update {\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"Hi from a script.\\n\"}}",
            "reply {\"stopReason\":\"max_tokens\"}",
        ],
    );
    let agent = format!("{ACP} mock --script {}", script.display());
    let out = sb.run(&["exec", "--agent", &agent, "hello"]);
    assert_code(&out, 4);
    assert_eq!(out.stdout, "Hi from a script.\n");
    assert_eq!(out.stderr, "[session] scripted-1\n[stop] max_tokens\n");
}

#[test]
fn bad_scripts_and_arguments_exit_2_before_reading_anything() {
    let sb = Sandbox::new();
    let script = sb.root().join("bad.mock");
    write(&script, &["expect initialize", "reply {not json"]);
    let out = sb.run(&["mock", "--script", script.to_str().unwrap()]);
    assert_code(&out, 2);
    assert!(
        out.stderr
            .starts_with("acp: $ROOT/bad.mock:2: the result is not one JSON value"),
        "{}",
        out.stderr
    );
    let out = sb.run(&["mock"]);
    assert_code(&out, 2);
    let out = sb.run(&["mock", "--trace", "x", "--script", "y"]);
    assert_code(&out, 2);
    let out = sb.run(&["mock", "--trace", "missing.jsonl"]);
    assert_code(&out, 2);
    // A runtime mistake of the script is exit 2 as well.
    write(&script, &["expect session/cancel", "reply {}"]);
    let mut mock = Mock::start(&sb, &["--script", script.to_str().unwrap()]);
    mock.send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#);
    let (code, stderr) = mock.finish();
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("acp mock: script line 2: there is no request to answer"),
        "{stderr}"
    );
}

#[test]
fn a_client_may_send_in_another_order_than_the_recording() {
    let sb = Sandbox::new();
    let rec = sb.root().join("rec.jsonl");
    let line = |t: f64, from: &str, json: &str| {
        serde_json::json!({"t": t, "from": from, "line": json}).to_string()
    };
    let lines = [
        r#"{"acpRecord":1,"started":"","agent":["a"],"redacted":false}"#.to_owned(),
        line(
            0.1,
            "client",
            r#"{"jsonrpc":"2.0","id":0,"method":"session/set_mode","params":{"sessionId":"s","modeId":"auto"}}"#,
        ),
        line(
            0.2,
            "client",
            r#"{"jsonrpc":"2.0","method":"ext/note","params":{}}"#,
        ),
        line(0.3, "agent", r#"{"jsonrpc":"2.0","id":0,"result":{}}"#),
    ];
    write(&rec, &lines.iter().map(String::as_str).collect::<Vec<_>>());
    let mut mock = Mock::start(&sb, &["--trace", rec.to_str().unwrap()]);
    // The notification first: it is kept for its place in the recording.
    mock.send(r#"{"jsonrpc":"2.0","method":"ext/note","params":{}}"#);
    mock.send(r#"{"jsonrpc":"2.0","id":"m","method":"session/set_mode","params":{"sessionId":"s","modeId":"auto"}}"#);
    assert_eq!(mock.recv(), r#"{"jsonrpc":"2.0","id":"m","result":{}}"#);
    let (code, stderr) = mock.finish();
    assert_eq!((code, stderr.as_str()), (0, ""));
}
