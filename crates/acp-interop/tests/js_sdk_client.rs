//! The official TypeScript SDK's client (`interop/js/client.mjs`) against our
//! agents: the `acp-test-agent` fixture and the `echo_agent` example.

use acp_interop::{Output, Sandbox, assert_code, binaries, js, run};

fn js_client(sb: &Sandbox, options: &[&str], agent: &[&std::path::Path]) -> Output {
    run(sb.peer_client(js(), options, agent))
}

fn test_agent() -> [&'static std::path::Path; 1] {
    [binaries().test_agent.as_path()]
}

/// Fails on any complaint the SDK printed about a message it received.
fn assert_sdk_accepted_everything(out: &Output) {
    for complaint in [
        "Invalid message",
        "Error handling notification",
        "Got response to unknown request",
    ] {
        assert!(
            !out.stderr.contains(complaint),
            "the TypeScript SDK complained:\n{}",
            out.stderr
        );
    }
}

#[test]
fn js_client_reads_the_test_agents_stream() {
    let sb = Sandbox::new();
    let out = js_client(&sb, &["--prompt", "stream"], &test_agent());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "Hello, world!\nSTOP end_turn\n");
    assert!(
        out.stderr
            .contains(r#"info {"name":"acp-test-agent","version":"0.1.0"}"#),
        "{}",
        out.stderr
    );
    assert_sdk_accepted_everything(&out);
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
fn js_client_accepts_the_test_agents_thoughts_plans_and_tool_calls() {
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
        let out = js_client(&sb, &["--prompt", prompt], &test_agent());
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
        assert_sdk_accepted_everything(&out);
    }
}

#[test]
fn js_client_answers_the_test_agents_permission_request() {
    let sb = Sandbox::new();
    let out = js_client(&sb, &["--prompt", "permission"], &test_agent());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "permission: selected allow\nSTOP end_turn\n");
    assert!(
        out.stderr.contains("[client] permission for call-p: allow"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("[client] tool_call_update call-p completed"),
        "{}",
        out.stderr
    );
    assert_sdk_accepted_everything(&out);
}

#[test]
fn js_client_accepts_the_test_agents_form_elicitation() {
    let sb = Sandbox::new();
    let out = js_client(&sb, &["--prompt", "elicit"], &test_agent());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "elicitation: accept\nSTOP end_turn\n");
    assert!(
        out.stderr
            .contains(r#"[client] elicitation (form) "Your name?""#),
        "{}",
        out.stderr
    );
    assert_sdk_accepted_everything(&out);
}

#[test]
fn js_client_serves_the_test_agents_file_reads_and_writes() {
    let sb = Sandbox::new();
    let path = sb.write("notes.txt", "alpha\nbeta\ngamma\n");
    let p = path.display().to_string();

    let out = js_client(&sb, &["--prompt", &format!("read {p}")], &test_agent());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "alpha\nbeta\ngamma\nSTOP end_turn\n");

    // `line` and `limit` reach the SDK as numbers it understands.
    let out = js_client(&sb, &["--prompt", &format!("read {p} 2 1")], &test_agent());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "beta\nSTOP end_turn\n");

    let target = sb.work().join("written.txt");
    let t = target.display().to_string();
    let out = js_client(
        &sb,
        &["--prompt", &format!("write {t} hello from rust")],
        &test_agent(),
    );
    assert_code(&out, 0);
    assert_eq!(out.stdout, format!("wrote {t}\nSTOP end_turn\n"));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello from rust");

    // The SDK's error answer reaches our agent as an error with a message.
    let missing = sb.work().join("missing.txt").display().to_string();
    let out = js_client(
        &sb,
        &["--prompt", &format!("read {missing}")],
        &test_agent(),
    );
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        format!("error: Resource not found: {missing}\nSTOP end_turn\n")
    );
    assert_sdk_accepted_everything(&out);
}

#[test]
fn js_client_sees_the_test_agents_stop_reasons_and_errors() {
    let sb = Sandbox::new();
    for (prompt, stop) in [("refuse", "refusal"), ("max-tokens", "max_tokens")] {
        let out = js_client(&sb, &["--prompt", prompt], &test_agent());
        assert_code(&out, 0);
        assert_eq!(out.stdout, format!("STOP {stop}\n"), "{prompt}");
    }
    let out = js_client(&sb, &["--prompt", "error"], &test_agent());
    assert_code(&out, 1);
    assert_eq!(out.stdout, "ERROR -32603 simulated failure\n");
}

#[test]
fn js_client_cancel_request_for_a_prompt_gets_request_cancelled() {
    let sb = Sandbox::new();
    // The SDK sends `$/cancel_request` for the prompt request; our engine
    // stops the handler and answers -32800.
    let out = js_client(
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
    assert_sdk_accepted_everything(&out);
}

#[test]
fn js_client_cancels_the_test_agents_turn() {
    let sb = Sandbox::new();
    let out = js_client(
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
fn js_client_reads_the_echo_agent_example() {
    let sb = Sandbox::new();
    let prompt = "hello  echo\nworld ✓";
    let out = js_client(&sb, &["--prompt", prompt], &[&binaries().echo_agent]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, format!("{prompt}\nSTOP end_turn\n"));
    assert_sdk_accepted_everything(&out);
}

#[test]
fn js_client_cancels_the_echo_agent_example() {
    let sb = Sandbox::new();
    let words: Vec<String> = (1..=200).map(|i| format!("w{i}")).collect();
    let prompt = words.join(" ");
    let out = js_client(
        &sb,
        &["--prompt", &prompt, "--cancel-after-chunks", "3"],
        &[&binaries().echo_agent],
    );
    assert_code(&out, 0);
    assert!(out.stdout.starts_with("w1 w2 w3 "), "{}", out.stdout);
    assert!(out.stdout.ends_with("\nSTOP cancelled\n"), "{}", out.stdout);
    assert!(
        !out.stdout.contains("w200"),
        "not cancelled: {}",
        out.stdout
    );
}
