//! `acp exec` end to end: golden text and JSON output, prompt sources,
//! mentions, stop reasons, agent selection and setup errors.

use crate::common;
use common::*;
use std::io::Write;
use std::process::Stdio;

// The exact outputs live in tests/golden/ (see `assert_golden`; BLESS=1
// rewrites them).

#[test]
fn text_output_golden() {
    let sb = Sandbox::new();
    let out = sb.exec(&["stream"]);
    assert_code(&out, 0);
    assert_golden_run("exec_stream", &out);
}

#[test]
fn tool_calls_are_summarised_on_stderr() {
    let sb = Sandbox::new();
    let out = sb.exec(&["tool"]);
    assert_code(&out, 0);
    assert_golden_run("exec_tool", &out);
}

#[test]
fn plans_are_summarised_on_stderr() {
    let sb = Sandbox::new();
    let out = sb.exec(&["plan"]);
    assert_code(&out, 0);
    assert_golden_run("exec_plan", &out);
}

#[test]
fn json_output_golden() {
    let sb = Sandbox::new();
    let out = sb.exec(&["--format", "json", "thought"]);
    assert_code(&out, 0);
    assert_golden_jsonl("exec_thought", &out.stdout);
    assert_eq!(out.stderr, "[session] sess-1\n");
    // Thoughts are not part of the plain-text reply.
    let out = sb.exec(&["thought"]);
    assert_eq!(out.stdout, "Thought about it.\n");
}

#[test]
fn json_output_has_commands_and_usage_updates() {
    let sb = Sandbox::new().env("ACP_TEST_AGENT_EXTRAS", "1");
    let out = sb.exec(&["--format", "json", "hi"]);
    assert_code(&out, 0);
    assert_golden_jsonl("exec_extras", &out.stdout);
    // In text mode they are not shown.
    let out = sb.exec(&["hi"]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "You said: hi\n");
    assert_eq!(out.stderr, "[session] sess-1\n");
}

#[test]
fn prompt_from_stdin() {
    let sb = Sandbox::new();
    let mut child = sb
        .command(&["exec", "--agent", test_agent()])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"hi from stdin")
        .unwrap();
    let out = sb.output(child.wait_with_output().unwrap());
    assert_code(&out, 0);
    assert_eq!(out.stdout, "You said: hi from stdin\n");
}

#[test]
fn empty_prompt_is_a_usage_error() {
    let sb = Sandbox::new();
    let out = sb.exec(&[]);
    assert_code(&out, 2);
    assert_eq!(out.stderr, "acp: the prompt is empty\n");
    let out = sb.run(&["exec", "--approve-all", "--deny-all", "x"]);
    assert_code(&out, 2);
}

#[test]
fn mentions_become_links_or_embedded_resources() {
    let sb = Sandbox::new();
    std::fs::write(sb.work().join("notes.md"), "remember").unwrap();
    let out = sb.exec(&["blocks see @notes.md and @missing.txt"]);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "text: blocks see @notes.md and @missing.txt\nresource_link: notes.md file://$WORK/notes.md\n"
    );
    let sb = sb.env("ACP_TEST_AGENT_EMBEDDED", "1");
    std::fs::write(sb.work().join("notes.md"), "remember").unwrap();
    let out = sb.exec(&["blocks @notes.md"]);
    assert_eq!(
        out.stdout,
        "text: blocks @notes.md\nresource: file://$WORK/notes.md \"remember\"\n"
    );
}

#[test]
fn stop_reasons_map_to_exit_codes() {
    let sb = Sandbox::new();
    let out = sb.exec(&["refuse"]);
    assert_code(&out, 3);
    assert_eq!(out.stderr, "[session] sess-1\n[stop] refusal\n");
    assert_code(&sb.exec(&["max-tokens"]), 4);
    let out = sb.exec(&["error"]);
    assert_code(&out, 1);
    assert_eq!(
        out.stderr,
        "[session] sess-1\nacp: the agent answered session/prompt with an error: simulated failure (code -32603)\n"
    );
}

#[test]
fn malformed_lines_from_the_agent_do_not_break_the_run() {
    let sb = Sandbox::new();
    let out = sb.exec(&["garbage"]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "still here\n");
}

#[test]
fn elicitation_is_declined() {
    let sb = Sandbox::new();
    let out = sb.exec(&["elicit"]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "elicitation: decline\n");
    assert!(
        out.stderr.contains("[elicitation] declined: Your name?"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_link_to_open_is_declined_and_no_browser_runs() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let opened = sb.dir.path().join("opened");
    let browser = sb.dir.path().join("browser");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\ntouch '{}'\n", opened.display()),
    )
    .unwrap();
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let sb = sb.env("BROWSER", browser.to_str().unwrap());
    let out = sb.exec(&["url-elicit"]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "elicitation: decline\n");
    assert!(
        out.stderr
            .contains("[elicitation] declined: Sign in to Example"),
        "{}",
        out.stderr
    );
    assert!(!opened.exists());
}

#[test]
fn missing_agent_binary_is_actionable() {
    let sb = Sandbox::new();
    let out = sb.run(&["exec", "--agent", "no-such-agent-xyz --flag", "hi"]);
    assert_code(&out, 127);
    assert!(
        out.stderr.contains("\"no-such-agent-xyz\" not found"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--agent"), "{}", out.stderr);
    // No agent named and no acp-agent anywhere: a copy of `acp` alone in a
    // directory (the workspace build puts a real acp-agent beside the original).
    let alone = sb.root().join("alone");
    std::fs::create_dir_all(&alone).unwrap();
    let copy = alone.join("acp");
    std::fs::copy(ACP, &copy).unwrap();
    let out = loop {
        let result = std::process::Command::new(&copy)
            .args(["exec", "hi"])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", sb.root().join("home"))
            .env("XDG_CONFIG_HOME", sb.root().join("config"))
            .current_dir(sb.work())
            .stdin(std::process::Stdio::null())
            .output();
        match result {
            // Another test's child, forked while the copy was being
            // written, may still hold it open until it execs.
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            other => break other.unwrap(),
        }
    };
    let out = sb.output(out);
    assert_code(&out, 127);
    assert!(out.stderr.contains("acp-agent"), "{}", out.stderr);
}

#[test]
fn agents_from_the_config_file() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.config_file().parent().unwrap()).unwrap();
    std::fs::write(
        sb.config_file(),
        format!(
            "default_agent = \"test\"\n[agents.test]\ncommand = \"{agent}\"\nenv = {{ ACP_TEST_AGENT_REQUIRE_AUTH = \"0\" }}\n\
             [agents.other]\ncommand = \"npx\"\nargs = [\"-y\", \"some agent\"]\n",
            agent = test_agent()
        ),
    )
    .unwrap();
    let out = sb.run(&["agents"]);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "other  npx -y 'some agent'\ntest   $AGENT (default)\n"
    );
    let out = sb.run(&["exec", "stream"]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "Hello, world!\n");
    let out = sb.run(&["exec", "--agent", "test", "stream"]);
    assert_code(&out, 0);
    std::fs::write(sb.config_file(), "[agents.bad]\n").unwrap();
    let out = sb.run(&["agents"]);
    assert_code(&out, 2);
    assert!(out.stderr.contains("bad config file"), "{}", out.stderr);
}

#[test]
fn auth_required_lists_methods_and_auth_flag_logs_in() {
    let sb = Sandbox::new()
        .env("ACP_TEST_AGENT_REQUIRE_AUTH", "1")
        .env("ACP_TEST_AGENT_TERMINAL_AUTH", "1");
    let out = sb.exec(&["stream"]);
    assert_code(&out, 1);
    assert_eq!(
        out.stderr,
        "acp: the agent requires authentication (session/new answered: Authentication required)\n\
         To log in, do one of these:\n  \
         - Test login (test-login): run again with --auth test-login — Logs in a test user\n  \
         - Terminal login (tui-login): run `$AGENT --login` in a terminal, or `acp login --agent $AGENT tui-login`\n"
    );
    let out = sb.exec(&["--auth", "test-login", "stream"]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "Hello, world!\n");
    let out = sb.exec(&["--auth", "nope", "stream"]);
    assert_code(&out, 2);
}

#[test]
fn unsupported_protocol_version() {
    let sb = Sandbox::new().env("ACP_TEST_AGENT_PROTOCOL", "7");
    let out = sb.exec(&["stream"]);
    assert_code(&out, 1);
    assert_eq!(
        out.stderr,
        "acp: the agent speaks ACP protocol version 7, but acp supports version 1; update the agent or acp\n"
    );
}

#[test]
fn session_load_and_resume() {
    let sb = Sandbox::new();
    let log = sb.dir.path().join("agent.log");
    let sb = sb.env("ACP_TEST_AGENT_LOG", log.to_str().unwrap());
    let out = sb.exec(&["--session", "old-1", "stream"]);
    assert_code(&out, 0);
    // The replayed history is not printed in text mode.
    assert_eq!(out.stdout, "Hello, world!\n");
    assert_eq!(out.stderr, "[session] old-1\n");
    assert!(read(&log).contains("session/load old-1"), "{}", read(&log));
    // In JSON the replayed history is printed.
    let out = sb.exec(&["--format", "json", "--session", "old-2", "refuse"]);
    assert_code(&out, 3);
    assert_golden_jsonl("exec_load_replay", &out.stdout);
    let sb = sb.env("ACP_TEST_AGENT_RESUME", "1");
    let out = sb.exec(&["--session", "old-3", "stream"]);
    assert_code(&out, 0);
    assert!(
        read(&log).contains("session/resume old-3"),
        "{}",
        read(&log)
    );
    assert!(!read(&log).contains("session/load old-3"));
    // Resume works without load too.
    let sb = sb.env("ACP_TEST_AGENT_NO_LOAD", "1");
    let out = sb.exec(&["--session", "old-4", "stream"]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "Hello, world!\n");
    assert_eq!(out.stderr, "[session] old-4\n");
    assert!(
        read(&log).contains("session/resume old-4"),
        "{}",
        read(&log)
    );
}

#[test]
fn session_flag_with_an_agent_that_can_neither_load_nor_resume() {
    let sb = Sandbox::new();
    let log = sb.dir.path().join("agent.log");
    let sb = sb
        .env("ACP_TEST_AGENT_LOG", log.to_str().unwrap())
        .env("ACP_TEST_AGENT_NO_LOAD", "1");
    let out = sb.exec(&["--session", "old-1", "stream"]);
    assert_code(&out, 1);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "acp: the agent can neither resume nor load sessions, so --session cannot be used with it\n"
    );
    let log = read(&log);
    assert!(!log.contains("session/"), "no session was opened: {log}");
}

#[test]
fn timeout_ends_a_turn_that_retries_forever() {
    let sb = Sandbox::new();
    let started = std::time::Instant::now();
    let out = sb.exec(&["--timeout", "1", "retry"]);
    assert_code(&out, 124);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // What the agent said about its retries was shown as it came.
    assert!(
        out.stderr.starts_with(
            "[session] sess-1\n[warning] Stream disconnected: retrying\n[status] Reconnecting... 1/5\n"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.ends_with(
            "[timeout] the turn ran past 1 s (--timeout): cancelling it\n\
             acp: the turn did not end within 1 s (--timeout); it was cancelled\n"
        ),
        "{}",
        out.stderr
    );
    // In JSON, the updates, then one error line.
    let out = sb.exec(&["--format", "json", "--timeout", "0.5", "retry"]);
    assert_code(&out, 124);
    let last = out.stdout.lines().last().unwrap();
    assert_eq!(
        last,
        r#"{"exitCode":124,"message":"the turn did not end within 0.5 s (--timeout); it was cancelled","sessionId":"sess-1"}"#
    );
    assert!(!out.stdout.contains("stopReason"), "{}", out.stdout);
}

#[test]
fn timeout_stops_an_agent_that_ignores_the_cancel() {
    let sb = Sandbox::new();
    let log = sb.dir.path().join("agent.log");
    let sb = sb.env("ACP_TEST_AGENT_LOG", log.to_str().unwrap());
    let out = sb.exec(&["--timeout", "0.5", "stubborn"]);
    assert_code(&out, 124);
    assert!(
        out.stderr.ends_with(
            "acp: the turn did not end within 0.5 s (--timeout), nor within 5 s of being cancelled; \
             the agent was stopped\n"
        ),
        "{}",
        out.stderr
    );
    let log = read(&log);
    assert!(log.lines().any(|l| l == "session/cancel"), "{log}");
    assert!(!log.lines().any(|l| l.starts_with("stop")), "{log}");
}

#[test]
fn timeout_bounds_the_requests_before_the_turn() {
    let sb = Sandbox::new().env("ACP_TEST_AGENT_HANG_NEW", "1");
    let out = sb.exec(&["--timeout", "0.5", "--format", "json", "hi"]);
    assert_code(&out, 124);
    assert_eq!(
        out.stdout,
        "{\"exitCode\":124,\"message\":\"the agent did not answer session/new within 0.5 s (--timeout)\"}\n"
    );
    assert_eq!(
        out.stderr,
        "acp: the agent did not answer session/new within 0.5 s (--timeout)\n"
    );
    let out = sb.exec(&["--timeout", "0", "hi"]);
    assert_code(&out, 2);
}

#[test]
fn every_failure_under_json_ends_with_one_error_line() {
    let sb = Sandbox::new();
    // An error answer to the prompt: its code, message and data as sent.
    let out = sb.exec(&["--format", "json", "error"]);
    assert_code(&out, 1);
    assert_eq!(
        out.stdout,
        "{\"error\":{\"code\":-32603,\"message\":\"simulated failure\"},\"exitCode\":1,\
         \"message\":\"the agent answered session/prompt with an error: simulated failure (code -32603)\",\
         \"sessionId\":\"sess-1\"}\n"
    );
    // A crash.
    let out = sb.exec(&["--format", "json", "crash"]);
    assert_code(&out, 6);
    let last: serde_json::Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["exitCode"], 6);
    assert!(
        last["message"]
            .as_str()
            .unwrap()
            .contains("simulated crash"),
        "{last}"
    );
    assert!(last.get("error").is_none());
    // An agent that cannot be found, and a bad config: before any session.
    let out = sb.run(&[
        "exec",
        "--format",
        "json",
        "--agent",
        "/no/such/agent",
        "hi",
    ]);
    assert_code(&out, 127);
    let last: serde_json::Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["exitCode"], 127);
    std::fs::create_dir_all(sb.config_file().parent().unwrap()).unwrap();
    std::fs::write(sb.config_file(), "[agents.bad]\n").unwrap();
    let out = sb.run(&["exec", "--format", "json", "hi"]);
    assert_code(&out, 2);
    let last: serde_json::Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["exitCode"], 2);
    // A success has no error line.
    std::fs::remove_file(sb.config_file()).unwrap();
    let out = sb.exec(&["--format", "json", "stream"]);
    assert_code(&out, 0);
    assert!(!out.stdout.contains("exitCode"), "{}", out.stdout);
}

#[test]
fn mode_and_model_flags() {
    let sb = Sandbox::new();
    let log = sb.dir.path().join("agent.log");
    let sb = sb
        .env("ACP_TEST_AGENT_EXTRAS", "1")
        .env("ACP_TEST_AGENT_LOG", log.to_str().unwrap());
    let out = sb.exec(&["--mode", "auto", "--model", "Smart model", "hi"]);
    assert_code(&out, 0);
    let text = read(&log);
    assert!(text.lines().any(|l| l == "session/set_mode auto"), "{text}");
    assert!(
        text.lines()
            .any(|l| l == "session/set_config_option model smart"),
        "{text}"
    );
    // Choices that do not exist are usage errors, before any prompt.
    let out = sb.exec(&["--mode", "turbo", "hi"]);
    assert_code(&out, 2);
    assert_eq!(
        out.stderr,
        "acp: the agent has no mode turbo; its modes are ask, auto\n"
    );
    let out = sb.exec(&["--model", "huge", "hi"]);
    assert_code(&out, 2);
    assert_eq!(out.stderr, "acp: --model: model takes one of fast, smart\n");
    // An agent without modes or models.
    let plain = Sandbox::new();
    let out = plain.exec(&["--model", "x", "hi"]);
    assert_code(&out, 2);
    assert_eq!(
        out.stderr,
        "acp: the agent offers no model choice, so the model x cannot be chosen\n"
    );
}

#[test]
fn model_flag_uses_set_model_when_the_agent_offers_only_the_selector() {
    let sb = Sandbox::new();
    let log = sb.dir.path().join("agent.log");
    let sb = sb
        .env("ACP_TEST_AGENT_MODELS", "1")
        .env("ACP_TEST_AGENT_LOG", log.to_str().unwrap());
    let out = sb.exec(&["--model", "Smart model", "which-model"]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "Running on smart\n");
    let text = read(&log);
    assert!(
        text.lines().any(|l| l == "session/set_model smart"),
        "{text}"
    );
    // The current model: nothing to send.
    std::fs::remove_file(&log).unwrap();
    let out = sb.exec(&["--model", "fast", "which-model"]);
    assert_eq!(out.stdout, "Running on fast\n");
    assert!(!read(&log).contains("session/set_model"));
    let out = sb.exec(&["--model", "huge", "hi"]);
    assert_code(&out, 2);
    assert_eq!(
        out.stderr,
        "acp: the agent has no model huge; its models are fast, smart\n"
    );
    // With a model config option as well, --model sets the option.
    let both = sb.env("ACP_TEST_AGENT_EXTRAS", "1");
    std::fs::remove_file(&log).unwrap();
    let out = both.exec(&["--model", "smart", "which-model"]);
    assert_eq!(out.stdout, "Running on smart\n");
    let text = read(&log);
    assert!(
        text.lines()
            .any(|l| l == "session/set_config_option model smart"),
        "{text}"
    );
    assert!(!text.contains("session/set_model"), "{text}");
}

#[test]
fn a_bare_prompt_is_exec() {
    let sb = Sandbox::new();
    let out = sb.run(&["--agent", test_agent(), "hello", "there"]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "You said: hello there\n");
}
