//! Each peer's client (`interop/js/client.mjs` on the official TypeScript
//! SDK, `interop/python/client.py` on the Python SDK) against our
//! `acp-test-agent` fixture. (The peers' clients against the `echo_agent`
//! example of crate `acp` are tested in crate `acp-interop`.) A peer whose
//! runtime is missing is skipped (see `Peer::available`).
//!
//! Each scenario is written once, as a function taking the peer, and followed
//! by its tests, one per peer. The clients print the same things except where
//! the functions below say otherwise. The last few tests use what only one
//! SDK does (form elicitation and `$/cancel_request` in TypeScript, a `null`
//! answer in Python).

use std::path::Path;

use acp_interop::Peer::{self, Js, Python};
use acp_interop::{Output, Sandbox, assert_code, assert_sdk_accepted_everything, run};

/// The peer's client run against `agent` in the sandbox, with `options`.
fn client(peer: Peer, sb: &Sandbox, options: &[&str], agent: &[&Path]) -> Output {
    run(sb.peer_client(peer, options, agent))
}

/// The `acp-test-agent` fixture (crate acp-testkit).
fn test_agent() -> [&'static Path; 1] {
    static PATH: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    [PATH.get_or_init(|| acp_testkit::bin("acp-test-agent"))]
}

/// The note the client prints on standard error with the test agent's
/// info: as JSON from TypeScript, as a dict from Python.
fn test_agent_info_note(peer: Peer) -> &'static str {
    match peer {
        Js => r#"info {"name":"acp-test-agent","version":"0.1.0"}"#,
        Python => "info {'name': 'acp-test-agent', 'version': '0.1.0'}",
    }
}

/// The message of the SDK's resource-not-found error for `path`, as our
/// agent shows it.
fn resource_not_found(peer: Peer, path: &str) -> String {
    match peer {
        Js => format!("Resource not found: {path}"),
        Python => "Resource not found".to_owned(),
    }
}

/// Fails unless the client reported that the prompt request failed with
/// `code` and `message`: the TypeScript client prints the line `ERROR <code>
/// <message>`, the Python client prints nothing and notes the error on
/// standard error.
#[track_caller]
fn assert_prompt_failed(peer: Peer, out: &Output, code: i32, message: &str) {
    assert_code(out, 1);
    match peer {
        Js => assert_eq!(out.stdout, format!("ERROR {code} {message}\n")),
        Python => {
            assert_eq!(out.stdout, "");
            assert!(
                out.stderr
                    .contains(&format!("error: {message} (code {code}")),
                "{}",
                out.stderr
            );
        }
    }
}

fn reads_the_test_agents_stream(peer: Peer) {
    let sb = Sandbox::new();
    let out = client(peer, &sb, &["--prompt", "stream"], &test_agent());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "Hello, world!\nSTOP end_turn\n");
    assert!(
        out.stderr.contains(test_agent_info_note(peer)),
        "{}",
        out.stderr
    );
    assert_sdk_accepted_everything(peer, &out);
    let log = sb.log();
    let methods: Vec<&str> = log.lines().filter(|l| !l.starts_with("pid ")).collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "session/new",
            "session/prompt",
            "stop end_turn"
        ],
        "{log}"
    );
}

#[test]
fn js_client_reads_the_test_agents_stream() {
    if !Js.available() {
        return;
    }
    reads_the_test_agents_stream(Js);
}

#[test]
fn python_client_reads_the_test_agents_stream() {
    if !Python.available() {
        return;
    }
    reads_the_test_agents_stream(Python);
}

fn accepts_the_test_agents_thoughts_plans_and_tool_calls(peer: Peer) {
    let sb = Sandbox::new();
    for (prompt, stdout, notes) in [
        (
            "thought",
            "Thought about it.\nSTOP end_turn\n",
            &["agent_thought_chunk", "agent_thought_chunk"][..],
        ),
        ("plan", "Planned.\nSTOP end_turn\n", &["plan", "plan"][..]),
        (
            "tool",
            "Edited.\nSTOP end_turn\n",
            &[
                "tool_call call-1 pending",
                "tool_call_update call-1 in_progress",
                "tool_call_update call-1 completed",
            ][..],
        ),
    ] {
        let out = client(peer, &sb, &["--prompt", prompt], &test_agent());
        assert_code(&out, 0);
        assert_eq!(out.stdout, stdout, "{prompt}");
        let seen: Vec<&str> = out
            .stderr
            .lines()
            .filter_map(|l| l.strip_prefix("[client] "))
            .filter(|l| {
                l.starts_with("agent_thought_chunk")
                    || l.starts_with("plan")
                    || l.starts_with("tool_call")
            })
            .collect();
        assert_eq!(seen, notes, "{prompt}: {}", out.stderr);
        assert_sdk_accepted_everything(peer, &out);
    }
}

#[test]
fn js_client_accepts_the_test_agents_thoughts_plans_and_tool_calls() {
    if !Js.available() {
        return;
    }
    accepts_the_test_agents_thoughts_plans_and_tool_calls(Js);
}

#[test]
fn python_client_accepts_the_test_agents_thoughts_plans_and_tool_calls() {
    if !Python.available() {
        return;
    }
    accepts_the_test_agents_thoughts_plans_and_tool_calls(Python);
}

fn answers_the_test_agents_permission_request(peer: Peer) {
    let sb = Sandbox::new();
    let out = client(peer, &sb, &["--prompt", "permission"], &test_agent());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "permission: selected allow\nSTOP end_turn\n");
    for note in [
        "[client] permission for call-p: allow",
        "[client] tool_call_update call-p completed",
    ] {
        assert!(out.stderr.contains(note), "{note}: {}", out.stderr);
    }
    assert_sdk_accepted_everything(peer, &out);
}

#[test]
fn js_client_answers_the_test_agents_permission_request() {
    if !Js.available() {
        return;
    }
    answers_the_test_agents_permission_request(Js);
}

#[test]
fn python_client_answers_the_test_agents_permission_request() {
    if !Python.available() {
        return;
    }
    answers_the_test_agents_permission_request(Python);
}

fn serves_the_test_agents_file_reads_and_writes(peer: Peer) {
    let sb = Sandbox::new();
    let path = sb.write("notes.txt", "alpha\nbeta\ngamma\n");
    let p = path.display().to_string();
    let prompting = |text: &str| client(peer, &sb, &["--prompt", text], &test_agent());

    let out = prompting(&format!("read {p}"));
    assert_code(&out, 0);
    assert_eq!(out.stdout, "alpha\nbeta\ngamma\nSTOP end_turn\n");

    // `line` and `limit` reach the SDK as numbers it understands.
    let out = prompting(&format!("read {p} 2 1"));
    assert_code(&out, 0);
    assert_eq!(out.stdout, "beta\nSTOP end_turn\n");

    let target = sb.work().join("written.txt");
    let t = target.display().to_string();
    let out = prompting(&format!("write {t} hello from rust"));
    assert_code(&out, 0);
    assert_eq!(out.stdout, format!("wrote {t}\nSTOP end_turn\n"));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello from rust");

    // The SDK's error answer reaches our agent as an error with a message.
    let missing = sb.work().join("missing.txt").display().to_string();
    let out = prompting(&format!("read {missing}"));
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        format!(
            "error: {}\nSTOP end_turn\n",
            resource_not_found(peer, &missing)
        )
    );
    assert_sdk_accepted_everything(peer, &out);
}

#[test]
fn js_client_serves_the_test_agents_file_reads_and_writes() {
    if !Js.available() {
        return;
    }
    serves_the_test_agents_file_reads_and_writes(Js);
}

#[test]
fn python_client_serves_the_test_agents_file_reads_and_writes() {
    if !Python.available() {
        return;
    }
    serves_the_test_agents_file_reads_and_writes(Python);
}

fn sees_the_test_agents_stop_reasons_and_errors(peer: Peer) {
    let sb = Sandbox::new();
    for (prompt, stop) in [("refuse", "refusal"), ("max-tokens", "max_tokens")] {
        let out = client(peer, &sb, &["--prompt", prompt], &test_agent());
        assert_code(&out, 0);
        assert_eq!(out.stdout, format!("STOP {stop}\n"), "{prompt}");
    }
    let out = client(peer, &sb, &["--prompt", "error"], &test_agent());
    assert_prompt_failed(peer, &out, -32603, "simulated failure");
}

#[test]
fn js_client_sees_the_test_agents_stop_reasons_and_errors() {
    if !Js.available() {
        return;
    }
    sees_the_test_agents_stop_reasons_and_errors(Js);
}

#[test]
fn python_client_sees_the_test_agents_stop_reasons_and_errors() {
    if !Python.available() {
        return;
    }
    sees_the_test_agents_stop_reasons_and_errors(Python);
}

fn cancels_the_test_agents_turn(peer: Peer) {
    let sb = Sandbox::new();
    let out = client(
        peer,
        &sb,
        &["--prompt", "slow", "--cancel-after-chunks", "2"],
        &test_agent(),
    );
    assert_code(&out, 0);
    assert!(out.stdout.starts_with("tick 1\ntick 2\n"), "{}", out.stdout);
    assert!(out.stdout.ends_with("\nSTOP cancelled\n"), "{}", out.stdout);
    let log = sb.log();
    assert!(log.lines().any(|l| l == "session/cancel"), "{log}");
    assert!(log.lines().any(|l| l == "stop cancelled"), "{log}");
}

#[test]
fn js_client_cancels_the_test_agents_turn() {
    if !Js.available() {
        return;
    }
    cancels_the_test_agents_turn(Js);
}

#[test]
fn python_client_cancels_the_test_agents_turn() {
    if !Python.available() {
        return;
    }
    cancels_the_test_agents_turn(Python);
}

// ---------------------------------------------------------------------------
// What one SDK alone does.

#[test]
fn js_client_accepts_the_test_agents_form_elicitation() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let out = client(Js, &sb, &["--prompt", "elicit"], &test_agent());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "elicitation: accept\nSTOP end_turn\n");
    assert!(
        out.stderr
            .contains(r#"[client] elicitation (form) "Your name?""#),
        "{}",
        out.stderr
    );
    assert_sdk_accepted_everything(Js, &out);
}

#[test]
fn js_client_cancel_request_for_a_prompt_gets_request_cancelled() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    // The SDK sends `$/cancel_request` for the prompt request; our engine
    // stops the handler and answers -32800.
    let out = client(
        Js,
        &sb,
        &["--prompt", "slow", "--abort-after-chunks", "2"],
        &test_agent(),
    );
    assert_code(&out, 1);
    assert!(out.stdout.starts_with("tick 1\ntick 2\n"), "{}", out.stdout);
    assert!(
        out.stdout.ends_with("\nERROR -32800 Request cancelled\n"),
        "{}",
        out.stdout
    );
    assert_sdk_accepted_everything(Js, &out);
}

/// The Python SDK's `Client.write_text_file` may return `None` (its
/// interface says `-> WriteTextFileResponse | None`); the SDK then answers
/// `{"result": null}`. The TypeScript SDK treats such empty answers as `{}`
/// ("empty-payload handling"). Our runtime accepts it.
#[test]
fn python_client_write_answered_with_null_is_accepted() {
    if !Python.available() {
        return;
    }
    let sb = Sandbox::new();
    let target = sb.work().join("written.txt");
    let t = target.display().to_string();
    let out = client(
        Python,
        &sb,
        &[
            "--prompt",
            &format!("write {t} hello"),
            "--write-returns-none",
        ],
        &test_agent(),
    );
    assert_code(&out, 0);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello");
    assert_eq!(out.stdout, format!("wrote {t}\nSTOP end_turn\n"));
}
