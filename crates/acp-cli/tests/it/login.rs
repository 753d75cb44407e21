//! Logging in, with test agents that imitate the login shapes of real
//! agents (`ACP_TEST_AGENT_AUTH`, see `acp-testkit/src/bin/acp-test-agent/auth.rs`): the
//! advice names the variable or the command, a terminal login runs in the
//! user's terminal and the run carries on after it, `acp login`, and the
//! JSON error line of a failed run.

use crate::common;
use common::*;
use expectrl::process::unix::WaitStatus;
use expectrl::session::OsSession as Session;
use expectrl::{Eof, Expect};
use std::process::Command;
use std::time::Duration;

/// A sandbox whose agent plays `shape`, keeping its login state in
/// `state/`.
fn shaped(shape: &str) -> Sandbox {
    let sb = Sandbox::new();
    let state = sb.dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    sb.env("ACP_TEST_AGENT_AUTH", shape)
        .env("ACP_TEST_AGENT_STATE", state.to_str().unwrap())
}

/// `acp ARGS…` with one more variable set.
fn run_with(sb: &Sandbox, var: (&str, &str), args: &[&str]) -> Output {
    let mut command = sb.command(args);
    command.env(var.0, var.1);
    sb.output(command.output().unwrap())
}

fn state(sb: &Sandbox, file: &str) -> String {
    read(&sb.dir.path().join("state").join(file))
}

/// `acp ARGS…` in a pseudo-terminal.
fn in_pty(sb: &Sandbox, args: &[&str]) -> Session {
    let mut command = Command::new(ACP);
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", sb.dir.path().join("home"))
        .env("XDG_CONFIG_HOME", sb.dir.path().join("config"))
        .env("XDG_STATE_HOME", sb.dir.path().join("xdg-state"))
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .current_dir(sb.work());
    for (k, v) in &sb.env {
        command.env(k, v);
    }
    let mut session = Session::spawn(command).expect("spawn acp in a pty");
    session.set_expect_timeout(Some(Duration::from_secs(30)));
    session
}

fn exit_code(mut session: Session) -> i32 {
    session.expect(Eof).expect("acp ends");
    let pid = session.get_process().pid();
    match session.get_process_mut().wait().unwrap() {
        WaitStatus::Exited(p, code) if p == pid => code,
        other => panic!("acp ended with {other:?}"),
    }
}

#[test]
fn headless_advice_names_the_terminal_command_and_acp_login() {
    let sb = shaped("terminal");
    let out = sb.exec(&["hi"]);
    assert_code(&out, 1);
    assert_eq!(
        out.stderr,
        "acp: the agent requires authentication (session/new answered: Authentication required)\n\
         To log in: Test Console (console-login): run `TEST_LOGIN_MODE=console $AGENT --login console` \
         in a terminal, or `acp login --agent $AGENT console-login` — Log in to the test console.\n"
    );
    // Nothing ran.
    assert_eq!(state(&sb, "login-args"), "");
}

#[test]
fn the_terminal_login_is_offered_only_because_acp_advertises_it() {
    // An agent that offers its terminal login only to clients that can run
    // it (as claude-agent-acp does) offers it to acp: acp says it can,
    // both ways.
    let sb = shaped("terminal");
    let out = sb.exec(&["--format", "json", "hi"]);
    assert_code(&out, 1);
    let line = out.stdout.lines().last().unwrap();
    let error: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(error["error"]["code"], -32000);
    assert_eq!(error["exitCode"], 1);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("acp login --agent $AGENT console-login"),
        "{line}"
    );
    assert!(!out.stdout.contains("The agent offers no login"));
}

#[test]
fn acp_login_runs_the_terminal_login_in_the_terminal() {
    let sb = shaped("terminal");
    let mut s = in_pty(&sb, &["login", "--agent", test_agent(), "console-login"]);
    s.expect("running `TEST_LOGIN_MODE=console").unwrap();
    s.expect("Test login (console). Code: ").unwrap();
    s.send_line("1234").unwrap();
    s.expect("logged in with console-login").unwrap();
    assert_eq!(exit_code(s), 0);
    // The agent's own command with the method's arguments and variables.
    assert_eq!(state(&sb, "login-args"), "--login console\n");
    assert_eq!(state(&sb, "logged-in"), "console console\n");
    // Logged in, exec works.
    let out = sb.exec(&["hi"]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "You said: hi\n");
}

#[test]
fn a_failed_terminal_login_is_an_error() {
    let sb = shaped("terminal");
    let mut s = in_pty(&sb, &["login", "--agent", test_agent(), "console-login"]);
    s.expect("Code: ").unwrap();
    s.send_line("0000").unwrap();
    s.expect("wrong code").unwrap();
    s.expect(
        "acp: the login command of console-login ended: exit status: 1; you are not logged in",
    )
    .unwrap();
    assert_eq!(exit_code(s), 1);
    assert_eq!(state(&sb, "logged-in"), "");
}

#[test]
fn acp_login_lists_the_methods_without_a_terminal() {
    let sb = shaped("error-data");
    let out = sb.run(&["login", "--agent", test_agent()]);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "The agent's login methods:\n  \
         1) test-api-key (Use TEST_AGENT_API_KEY): environment variables; needs TEST_AGENT_API_KEY (not set) \
         — Requires setting the `TEST_AGENT_API_KEY` environment variable.\n  \
         2) browser (Log in with a browser): done by the agent — Opens the login page in your browser\n\
         Log in with one: acp login --agent $AGENT METHOD\n"
    );
    let out = sb.run(&["login", "--agent", test_agent(), "test-api-key"]);
    assert_code(&out, 2);
    assert_eq!(
        out.stderr,
        "acp: test-api-key needs TEST_AGENT_API_KEY set in the environment; set it, then run acp login again\n"
    );
    let out = run_with(
        &sb,
        ("TEST_AGENT_API_KEY", "k"),
        &["login", "--agent", test_agent(), "test-api-key"],
    );
    assert_code(&out, 0);
    assert_eq!(out.stdout, "logged in with test-api-key\n");
    let out = sb.run(&["login", "--agent", test_agent(), "nope"]);
    assert_code(&out, 2);
    assert!(
        out.stderr.starts_with(
            "acp: the agent has no login method \"nope\".\nThe agent's login methods:"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn exec_in_a_terminal_runs_the_login_and_carries_on_with_the_prompt() {
    let sb = shaped("terminal");
    let log = sb.dir.path().join("agent.log");
    let sb = sb.env("ACP_TEST_AGENT_LOG", log.to_str().unwrap());
    let mut s = in_pty(&sb, &["exec", "--agent", test_agent(), "hi there"]);
    s.expect("The agent needs you to log in. acp can run its login here:")
        .unwrap();
    s.expect("1) Test Console: TEST_LOGIN_MODE=console")
        .unwrap();
    s.expect("Run it now? [Y/n] ").unwrap();
    s.send_line("").unwrap();
    s.expect("Test login (console). Code: ").unwrap();
    s.send_line("1234").unwrap();
    s.expect("[login] done; starting the agent again").unwrap();
    s.expect("You said: hi there").unwrap();
    assert_eq!(exit_code(s), 0);
    // Two agents: the first one asked for the login, the second one served.
    let log = read(&log);
    assert_eq!(
        log.lines().filter(|l| *l == "initialize").count(),
        2,
        "{log}"
    );
    assert_eq!(
        log.lines().filter(|l| *l == "session/prompt").count(),
        1,
        "{log}"
    );
}

#[test]
fn declining_the_login_ends_with_the_advice() {
    let sb = shaped("terminal");
    let mut s = in_pty(&sb, &["exec", "--agent", test_agent(), "hi"]);
    s.expect("Run it now? [Y/n] ").unwrap();
    s.send_line("n").unwrap();
    s.expect("acp: the agent requires authentication").unwrap();
    s.expect("acp login --agent").unwrap();
    assert_eq!(exit_code(s), 1);
    assert_eq!(state(&sb, "login-args"), "");
}

#[test]
fn chat_runs_the_terminal_login_and_the_session_starts() {
    let sb = shaped("terminal");
    let mut s = in_pty(&sb, &["chat", "--agent", test_agent()]);
    s.expect("Run it now? [Y/n] ").unwrap();
    s.send_line("y").unwrap();
    s.expect("Code: ").unwrap();
    s.send_line("1234").unwrap();
    s.expect("Ctrl-D quits.").unwrap();
    s.expect("> ").unwrap();
    // At chat's prompt Enter is a carriage return (a line feed is Ctrl-J).
    s.type_line("hello").unwrap();
    s.expect("You said: hello").unwrap();
    s.expect("> ").unwrap();
    s.send(expectrl::ControlCode::EndOfTransmission).unwrap();
    assert_eq!(exit_code(s), 0);
}

#[test]
fn a_terminal_method_given_with_auth_needs_a_terminal() {
    let sb = shaped("terminal");
    let out = sb.exec(&["--auth", "console-login", "hi"]);
    assert_code(&out, 2);
    assert_eq!(
        out.stderr,
        "acp: console-login is a login in a terminal, which needs one: run \
         `TEST_LOGIN_MODE=console $AGENT --login console`, or `acp login --agent $AGENT console-login`, \
         then run again without --auth\n"
    );
}

#[test]
fn env_hints_name_the_variable() {
    // As qwen-code and gemini: the variable is in a method's description,
    // the methods that fit are in the error's data.
    let sb = shaped("env-hint");
    let out = sb.exec(&["hi"]);
    assert_code(&out, 1);
    assert_eq!(
        out.stderr,
        "acp: the agent requires authentication (session/new answered: Authentication required: \
         Use the test CLI to authenticate first.)\n\
         To log in: Use a test key (test-key): set TEST_AGENT_API_KEY, then run again with --auth test-key.\n"
    );
    let out = run_with(
        &sb,
        ("TEST_AGENT_API_KEY", "k"),
        &["exec", "--agent", test_agent(), "hi"],
    );
    assert_code(&out, 0);
}

#[test]
fn the_errors_data_names_the_missing_variable_and_no_advice_repeats_what_failed() {
    // As codex-acp: an env_var method, and authenticate failing with the
    // variable's name in the error's data.
    let sb = shaped("error-data");
    let out = sb.exec(&["hi"]);
    assert_code(&out, 1);
    assert_eq!(
        out.stderr,
        "acp: the agent requires authentication (session/new answered: Authentication required)\n\
         To log in, do one of these:\n  \
         - Use TEST_AGENT_API_KEY (test-api-key): set TEST_AGENT_API_KEY, then run again with --auth test-api-key\n  \
         - Log in with a browser (browser): run again with --auth browser — Opens the login page in your browser\n"
    );
    let out = sb.exec(&["--auth", "test-api-key", "hi"]);
    assert_code(&out, 1);
    assert_eq!(
        out.stderr,
        "acp: logging in with test-api-key failed (authenticate answered: Internal error): \
         TEST_AGENT_API_KEY is not set\n\
         To log in, do one of these:\n  \
         - set TEST_AGENT_API_KEY in the environment, then run again with --auth test-api-key\n  \
         - Log in with a browser (browser): run again with --auth browser — Opens the login page in your browser\n"
    );
    let out = sb.exec(&["--auth", "browser", "hi"]);
    assert_code(&out, 1);
    assert!(
        out.stderr.starts_with(
            "acp: logging in with browser failed (authenticate answered: failed to open the browser: no opener found)\n"
        ),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("run again with --auth browser"),
        "{}",
        out.stderr
    );
    let out = run_with(
        &sb,
        ("TEST_AGENT_API_KEY", "k"),
        &[
            "exec",
            "--agent",
            test_agent(),
            "--auth",
            "test-api-key",
            "hi",
        ],
    );
    assert_code(&out, 0);
    assert_eq!(out.stdout, "You said: hi\n");
}

#[test]
fn an_agent_with_no_methods_and_no_words_gets_the_generic_advice() {
    let sb = Sandbox::new().env("ACP_TEST_AGENT_REQUIRE_AUTH", "1");
    let out = sb.exec(&["--auth", "nope", "hi"]);
    assert_code(&out, 2);
    assert!(
        out.stderr
            .starts_with("acp: the agent has no login method \"nope\"."),
        "{}",
        out.stderr
    );
    let out = sb.exec(&["--auth", "test-login", "hi"]);
    assert_code(&out, 0);
}
