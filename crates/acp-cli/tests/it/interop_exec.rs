//! Our `acp exec` against each peer's agent (`interop/js/agent.mjs` on the
//! official TypeScript SDK, `interop/python/agent.py` on the Python SDK; the
//! versions are pinned in `interop/`). Support code is in crate
//! `acp-interop`; a peer whose runtime is missing is skipped (see
//! `Peer::available`).
//!
//! Each scenario is written once, as a function taking the peer, and followed
//! by its tests, one per peer. The last few use what only the TypeScript
//! agent does (an authentication method, embedded context) and are tests
//! against it alone.

use std::io::{BufRead, BufReader, Read};

use acp_interop::Peer::{self, Js, Python};
use acp_interop::{Output, Sandbox, assert_code, logged, run, spawn_streaming};
use nix::sys::signal::{Signal, kill};
use serde_json::{Value, json};

/// The `acp` executable cargo built for this test.
const ACP: &str = env!("CARGO_BIN_EXE_acp");

/// The peer's agent as `acp exec --agent` takes it.
fn agent(peer: Peer) -> String {
    peer.programs().agent_command_line()
}

/// The id the peer's agent gives the first session it opens.
fn first_session(peer: Peer) -> &'static str {
    match peer {
        Js => "js-1",
        Python => "py-1",
    }
}

/// What the peer's agent logs as the `mcpServers` of a `session/new` that
/// has none: the TypeScript agent logs the params as they came, the Python
/// agent the number of servers.
fn logged_no_mcp_servers(peer: Peer) -> Value {
    match peer {
        Js => json!([]),
        Python => json!(0),
    }
}

/// The `<code> <message>` the agent logged when its `fs/read_text_file`
/// failed.
#[track_caller]
fn logged_read_error(log: &str, out: &Output) -> String {
    log.lines()
        .find_map(|l| l.strip_prefix("read error "))
        .unwrap_or_else(|| panic!("no read error logged:\n{log}\n{}", out.stderr))
        .to_owned()
}

fn streams_the_agents_echo_exactly(peer: Peer) {
    let sb = Sandbox::new();
    let prompt = "Hello,  interop\tworld ünïcödé ✓";
    let out = run(sb.acp_exec(ACP, &agent(peer), &[prompt]));
    assert_code(&out, 0);
    assert_eq!(out.stdout, format!("{prompt}\n"));

    // What the SDK made of our requests (both validate them with their
    // schema: zod, pydantic).
    let log = sb.log();
    let init = logged(&log, "initialize");
    assert_eq!(init["protocolVersion"], 1, "{init}");
    assert_eq!(
        init["clientCapabilities"]["fs"]["readTextFile"], true,
        "{init}"
    );
    // Without a terminal the policy is --deny-all: no writes, no terminals.
    assert_eq!(
        init["clientCapabilities"]["fs"]["writeTextFile"], false,
        "{init}"
    );
    assert_eq!(init["clientCapabilities"]["terminal"], false, "{init}");
    assert_eq!(init["clientInfo"]["name"], "acp", "{init}");
    let new = logged(&log, "session/new");
    assert_eq!(
        new,
        json!({
            "cwd": sb.work().display().to_string(),
            "mcpServers": logged_no_mcp_servers(peer),
        })
    );
    assert_eq!(
        logged(&log, "session/prompt"),
        json!([{ "type": "text", "text": prompt }])
    );
    assert!(log.lines().any(|l| l == "stop end_turn"), "{log}");
}

#[test]
fn acp_exec_streams_the_js_agents_echo_exactly() {
    if !Js.available() {
        return;
    }
    streams_the_agents_echo_exactly(Js);
}

#[test]
fn acp_exec_streams_the_python_agents_echo_exactly() {
    if !Python.available() {
        return;
    }
    streams_the_agents_echo_exactly(Python);
}

fn json_format_prints_the_agents_updates(peer: Peer) {
    let sb = Sandbox::new();
    let out = run(sb.acp_exec(ACP, &agent(peer), &["--format", "json", "one two"]));
    assert_code(&out, 0);
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let session = first_session(peer);
    let chunk = |text: &str| {
        json!({
            "sessionId": session,
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": { "type": "text", "text": text }
            }
        })
    };
    assert_eq!(
        lines,
        vec![
            chunk("one "),
            chunk("two"),
            chunk("\n"),
            json!({ "sessionId": session, "stopReason": "end_turn" }),
        ]
    );
}

#[test]
fn acp_exec_json_format_prints_the_js_agents_updates() {
    if !Js.available() {
        return;
    }
    json_format_prints_the_agents_updates(Js);
}

#[test]
fn acp_exec_json_format_prints_the_python_agents_updates() {
    if !Python.available() {
        return;
    }
    json_format_prints_the_agents_updates(Python);
}

fn approve_all_allows_the_agents_permission_request(peer: Peer) {
    let sb = Sandbox::new();
    let out = run(sb.acp_exec(ACP, &agent(peer), &["--approve-all", "needs permission"]));
    assert_code(&out, 0);
    assert_eq!(out.stdout, "needs permission\npermission: selected allow\n");
    assert_eq!(
        logged(&sb.log(), "permission"),
        json!({ "outcome": "selected", "optionId": "allow" })
    );
}

#[test]
fn acp_exec_approve_all_allows_the_js_agents_permission_request() {
    if !Js.available() {
        return;
    }
    approve_all_allows_the_agents_permission_request(Js);
}

#[test]
fn acp_exec_approve_all_allows_the_python_agents_permission_request() {
    if !Python.available() {
        return;
    }
    approve_all_allows_the_agents_permission_request(Python);
}

fn deny_all_rejects_the_agents_permission_request(peer: Peer) {
    let sb = Sandbox::new();
    let out = run(sb.acp_exec(ACP, &agent(peer), &["--deny-all", "needs permission"]));
    // 5: the turn ended, but a permission request was denied.
    assert_code(&out, 5);
    assert_eq!(
        out.stdout,
        "needs permission\npermission: selected reject\n"
    );
    assert_eq!(
        logged(&sb.log(), "permission"),
        json!({ "outcome": "selected", "optionId": "reject" })
    );
}

#[test]
fn acp_exec_deny_all_rejects_the_js_agents_permission_request() {
    if !Js.available() {
        return;
    }
    deny_all_rejects_the_agents_permission_request(Js);
}

#[test]
fn acp_exec_deny_all_rejects_the_python_agents_permission_request() {
    if !Python.available() {
        return;
    }
    deny_all_rejects_the_agents_permission_request(Python);
}

fn serves_the_agents_file_read(peer: Peer) {
    let sb = Sandbox::new();
    let path = sb.write("notes.txt", "first line\nsecond line ✓\n");
    let prompt = format!("read {}", path.display());
    let out = run(sb.acp_exec(ACP, &agent(peer), &[&prompt]));
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        format!("{prompt}\nfile: first line\nsecond line ✓\n")
    );
}

#[test]
fn acp_exec_serves_the_js_agents_file_read() {
    if !Js.available() {
        return;
    }
    serves_the_agents_file_read(Js);
}

#[test]
fn acp_exec_serves_the_python_agents_file_read() {
    if !Python.available() {
        return;
    }
    serves_the_agents_file_read(Python);
}

fn answers_a_read_of_a_missing_file_with_resource_not_found(peer: Peer) {
    let sb = Sandbox::new();
    let missing = sb.work().join("missing.txt");
    let prompt = format!("read {}", missing.display());
    let out = run(sb.acp_exec(ACP, &agent(peer), &[&prompt]));
    assert_code(&out, 0);
    let error = logged_read_error(&sb.log(), &out);
    // -32002: resource not found (the SDKs' resourceNotFound), with our
    // message, which the agent shows.
    let message = error
        .strip_prefix("-32002 ")
        .unwrap_or_else(|| panic!("expected -32002 (resource not found): {error}"));
    assert_eq!(out.stdout, format!("{prompt}\nfile error: {message}\n"));
}

#[test]
fn acp_exec_answers_a_js_agent_read_of_a_missing_file_with_resource_not_found() {
    if !Js.available() {
        return;
    }
    answers_a_read_of_a_missing_file_with_resource_not_found(Js);
}

#[test]
fn acp_exec_answers_a_python_agent_read_of_a_missing_file_with_resource_not_found() {
    if !Python.available() {
        return;
    }
    answers_a_read_of_a_missing_file_with_resource_not_found(Python);
}

fn ctrl_c_cancels_the_agents_turn(peer: Peer) {
    let sb = Sandbox::new();
    let (running, stdout) = spawn_streaming(sb.acp_exec(ACP, &agent(peer), &["slow"]));
    let mut stdout = BufReader::new(stdout);
    let mut seen = String::new();
    while !seen.ends_with("tick 2\n") {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "acp ended early: {seen}"
        );
        seen.push_str(&line);
    }
    kill(running.pid(), Signal::SIGINT).unwrap();
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let out = running.finish();
    // 130: cancelled (Ctrl-C), after the agent answered `cancelled`.
    assert_code(&out, 130);
    assert!(out.stderr.contains("[stop] cancelled"), "{}", out.stderr);
    let log = sb.log();
    let cancel = format!("session/cancel {}", first_session(peer));
    assert!(log.lines().any(|l| l == cancel), "{log}");
    assert!(log.lines().any(|l| l == "stop cancelled"), "{log}");
}

#[test]
fn acp_exec_ctrl_c_cancels_the_js_agents_turn() {
    if !Js.available() {
        return;
    }
    ctrl_c_cancels_the_agents_turn(Js);
}

#[test]
fn acp_exec_ctrl_c_cancels_the_python_agents_turn() {
    if !Python.available() {
        return;
    }
    ctrl_c_cancels_the_agents_turn(Python);
}

// ---------------------------------------------------------------------------
// Against the TypeScript agent alone.

#[test]
fn acp_exec_attaches_files_in_a_form_the_js_sdk_accepts() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let path = sb.write("notes.txt", "note body\n");
    let uri = format!("file://{}", path.display());

    // The agent accepts embedded context: the file is embedded.
    let out = run(sb.acp_exec(ACP, &agent(Js), &["explain @notes.txt"]));
    assert_code(&out, 0);
    assert_eq!(
        logged(&sb.log(), "session/prompt"),
        json!([
            { "type": "text", "text": "explain @notes.txt" },
            { "type": "resource", "resource": { "uri": uri, "text": "note body\n" } }
        ])
    );

    // It does not (a minimal initialize answer): a resource link instead.
    let sb2 = Sandbox::new();
    let path = sb2.write("notes.txt", "note body\n");
    let uri = format!("file://{}", path.display());
    let mut command = sb2.acp_exec(ACP, &agent(Js), &["explain @notes.txt"]);
    command.env("INTEROP_MINIMAL_INIT", "1");
    let out = run(command);
    assert_code(&out, 0);
    assert_eq!(
        logged(&sb2.log(), "session/prompt"),
        json!([
            { "type": "text", "text": "explain @notes.txt" },
            { "type": "resource_link", "name": "notes.txt", "uri": uri, "size": 10 }
        ])
    );
}

#[test]
fn acp_exec_authenticates_with_the_js_agents_method() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let out = run(sb.acp_exec(ACP, &agent(Js), &["--auth", "token", "hi"]));
    assert_code(&out, 0);
    assert_eq!(out.stdout, "hi\n");
    let log = sb.log();
    // ("closed", the agent seeing the end of its input, may or may not come:
    // acp stops the agent right after closing the connection.)
    let methods: Vec<&str> = log
        .lines()
        .map(|l| l.split(' ').next().unwrap_or(""))
        .filter(|m| *m != "closed")
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "authenticate",
            "session/new",
            "session/prompt",
            "stop"
        ],
        "{log}"
    );
    assert!(log.contains("authenticate token\n"), "{log}");
}

#[test]
fn acp_exec_refuses_a_js_agent_read_outside_the_session_directory() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let outside = sb.root().join("outside.txt");
    std::fs::write(&outside, "secret\n").unwrap();
    let prompt = format!("read {}", outside.display());
    let out = run(sb.acp_exec(ACP, &agent(Js), &[&prompt]));
    assert_code(&out, 0);
    // The SDK turned our error answer into a rejected promise with its code.
    let error = logged_read_error(&sb.log(), &out);
    let (code, _message) = error.split_once(' ').unwrap();
    assert!(
        code.parse::<i64>().is_ok(),
        "the SDK saw no numeric error code: {error}"
    );
    assert!(
        out.stdout.starts_with(&format!("{prompt}\nfile error: ")),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("secret"), "{}", out.stdout);
}
