//! `acp chat` driven through a pseudo-terminal.

use crate::common;
use common::*;
use expectrl::process::unix::WaitStatus;
use expectrl::session::OsSession as Session;
use expectrl::{Eof, Expect, Regex};
use std::process::Command;
use std::time::Duration;

/// `acp chat` against the test agent in a pty, without colour.
fn chat(sb: &Sandbox, extra: &[&str]) -> Session {
    let mut command = Command::new(ACP);
    command
        .args(["chat", "--agent", test_agent()])
        .args(extra)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", sb.dir.path().join("home"))
        .env("XDG_CONFIG_HOME", sb.dir.path().join("config"))
        .env("XDG_STATE_HOME", sb.dir.path().join("state"))
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .current_dir(sb.work());
    for (k, v) in &sb.env {
        command.env(k, v);
    }
    let mut session = Session::spawn(command).expect("spawn acp chat in a pty");
    // Wide enough that no line these tests look for is wrapped.
    session
        .get_process_mut()
        .set_window_size(160, 40)
        .expect("set the pty's size");
    session.set_expect_timeout(Some(Duration::from_secs(20)));
    session.expect("Ctrl-D quits.").expect("the banner");
    session.expect("> ").expect("the first prompt");
    session
}

fn quit(mut session: Session) {
    session
        .send(expectrl::ControlCode::EndOfTransmission)
        .unwrap();
    session.expect(Eof).expect("acp chat ends after Ctrl-D");
    let pid = session.get_process().pid();
    let status = session.get_process_mut().wait().unwrap();
    assert_eq!(status, WaitStatus::Exited(pid, 0));
}

#[test]
fn a_turn_streams_text() {
    let sb = Sandbox::new();
    let mut s = chat(&sb, &[]);
    s.type_line("stream").unwrap();
    s.expect("Hello, world!").unwrap();
    s.expect("> ").unwrap();
    s.type_line("plan").unwrap();
    // The plan is in the live area during the turn, then committed.
    s.expect("Planned.").unwrap();
    s.expect("Plan:\r\n  [x] Read the code\r\n  [x] Change it\r\n  [~] Run the tests")
        .unwrap();
    s.expect("> ").unwrap();
    s.type_line("tool").unwrap();
    // One block for the call, once it has ended: its header with the
    // status it ended with, then its location and diff.
    let block = s.expect("[edit] Edit notes.txt · completed").unwrap();
    let before = String::from_utf8_lossy(block.before()).into_owned();
    assert!(
        !before.contains("@@"),
        "the diff came before the header: {before}"
    );
    s.expect("@@ -1,3 +1,4 @@\r\n one\r\n-two\r\n+2\r\n three\r\n+four")
        .unwrap();
    let rest = s.expect("Edited.").unwrap();
    let between = String::from_utf8_lossy(rest.before()).into_owned();
    assert!(
        !between.contains("Edit notes.txt · completed"),
        "a second header: {between}"
    );
    s.expect("> ").unwrap();
    // Terminal output is shown in the transcript.
    s.type_line("terminal echo from-the-terminal").unwrap();
    // It did not ask permission first: acp asks.
    s.expect("The agent wants to run `sh -c echo from-the-terminal`")
        .unwrap();
    s.expect("Choose 1-2: ").unwrap();
    s.type_line("1").unwrap();
    s.expect(Regex("┌ terminal \\S+")).unwrap();
    s.expect("│ from-the-terminal").unwrap();
    s.expect("└ exit 0").unwrap();
    s.expect("[execute] Run the command · completed").unwrap();
    s.expect("exit: 0").unwrap();
    s.expect("> ").unwrap();
    quit(s);
    // The prompts went to the history file.
    let history = read(&sb.dir.path().join("state/acp/history"));
    assert!(
        history.contains("stream") && history.contains("tool"),
        "{history}"
    );
}

#[test]
fn terminal_output_is_shown_while_the_command_runs() {
    let sb = Sandbox::new();
    let marker = sb.dir.path().join("finished");
    let mut s = chat(&sb, &[]);
    s.type_line(format!(
        "terminal echo first-line; sleep 2; touch {}; echo second-line",
        marker.display()
    ))
    .unwrap();
    s.expect("Choose 1-2: ").unwrap();
    s.type_line("1").unwrap();
    s.expect("│ first-line").unwrap();
    assert!(
        !marker.exists(),
        "the first line was only shown after the command had finished"
    );
    s.expect("│ second-line").unwrap();
    s.expect("└ exit 0").unwrap();
    assert!(marker.exists());
    s.expect("exit: 0").unwrap();
    s.expect("> ").unwrap();
    quit(s);
}

#[test]
fn a_permission_is_answered_by_number_and_always_is_remembered() {
    let sb = Sandbox::new();
    let mut s = chat(&sb, &[]);
    s.type_line("permission").unwrap();
    s.expect("? Permission: Remove build/ (edit)").unwrap();
    s.expect("  2) Always allow [allow_always]").unwrap();
    s.expect("Choose 1-4: ").unwrap();
    s.type_line("2").unwrap();
    s.expect("permission: selected always").unwrap();
    s.expect("> ").unwrap();
    // The same call (same kind, same title) is now answered without asking.
    s.type_line("permission").unwrap();
    s.expect("[permission] remembered: always allow \"Remove build/\" (edit)")
        .unwrap();
    s.expect("permission: selected always").unwrap();
    s.expect("> ").unwrap();
    // Another kind is asked again; reject it by number.
    s.type_line("permission execute").unwrap();
    s.expect("Choose 1-4: ").unwrap();
    s.type_line("3").unwrap();
    s.expect("permission: selected reject").unwrap();
    s.expect("> ").unwrap();
    quit(s);
}

#[test]
fn ctrl_c_cancels_a_slow_turn_and_the_prompt_returns() {
    let sb = Sandbox::new();
    let log = sb.dir.path().join("agent.log");
    let sb = sb.env("ACP_TEST_AGENT_LOG", log.to_str().unwrap());
    let mut s = chat(&sb, &[]);
    s.type_line("slow").unwrap();
    s.expect("tick 2").unwrap();
    s.send(expectrl::ControlCode::EndOfText).unwrap();
    s.expect("[cancel] cancelling the turn").unwrap();
    s.expect("stopped: cancelled").unwrap();
    s.expect("> ").unwrap();
    // The chat goes on.
    s.type_line("hi there").unwrap();
    s.expect("You said: hi there").unwrap();
    s.expect("> ").unwrap();
    // Ctrl-C at the prompt clears the line and keeps the chat.
    s.send("half a line").unwrap();
    s.send(expectrl::ControlCode::EndOfText).unwrap();
    s.expect("> ").unwrap();
    s.type_line("again").unwrap();
    s.expect("You said: again").unwrap();
    s.expect("> ").unwrap();
    quit(s);
    let log = read(&log);
    assert!(log.lines().any(|l| l == "session/cancel"), "{log}");
    assert!(log.lines().any(|l| l == "stop cancelled"), "{log}");
}

#[test]
fn ctrl_d_quits_with_code_0_and_slash_commands_work() {
    let sb = Sandbox::new();
    let mut s = chat(&sb, &[]);
    s.type_line("/help").unwrap();
    s.expect("/sessions").unwrap();
    s.expect("Ctrl-D quits.").unwrap();
    s.expect("> ").unwrap();
    s.type_line("/nope").unwrap();
    s.expect("error: unknown command /nope").unwrap();
    s.expect("> ").unwrap();
    s.type_line("/load sess-9").unwrap();
    s.expect("> earlier question").unwrap();
    s.expect("earlier answer").unwrap();
    s.expect("[session] sess-9").unwrap();
    s.expect("> ").unwrap();
    quit(s);
}

#[test]
fn an_elicitation_is_answered_in_chat() {
    let sb = Sandbox::new();
    let mut s = chat(&sb, &[]);
    s.type_line("elicit").unwrap();
    s.expect("? The agent asks: Your name?").unwrap();
    s.expect(Regex("Send\\? .*: ")).unwrap();
    s.type_line("a").unwrap();
    s.expect("elicitation: accept").unwrap();
    s.expect("> ").unwrap();
    quit(s);
}

/// A sandbox whose `BROWSER` is a script that appends its arguments, one
/// per line, to the file `opened`.
fn with_browser() -> (Sandbox, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let opened = sb.dir.path().join("opened");
    let script = sb.dir.path().join("browser");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" >> '{}'\n",
            opened.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let sb = sb.env("BROWSER", script.to_str().unwrap());
    (sb, opened)
}

/// The content of `path` once it has some (the browser runs detached).
fn eventually(path: &std::path::Path) -> String {
    let started = std::time::Instant::now();
    loop {
        let text = read(path);
        if text.ends_with('\n') {
            return text;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "nothing in {} after 10 s",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

const LINK: &str = "https://example.test/auth?x=1";

#[test]
fn a_link_is_opened_in_the_browser_after_a_yes() {
    let (sb, opened) = with_browser();
    let mut s = chat(&sb, &[]);
    s.type_line("url-elicit").unwrap();
    s.expect("? The agent asks: Sign in to Example").unwrap();
    s.expect(format!("Open {LINK} in your browser? [y/N] "))
        .unwrap();
    s.type_line("y").unwrap();
    s.expect("to open the link").unwrap();
    s.expect("elicitation: accept").unwrap();
    // The agent's elicitation/complete.
    s.expect("[elicitation] completed: Sign in to Example")
        .unwrap();
    s.expect("> ").unwrap();
    quit(s);
    // The link was the browser's only argument, exactly as sent.
    assert_eq!(eventually(&opened), format!("{LINK}\n"));
}

#[test]
fn a_browser_that_cannot_start_leaves_the_link_to_open_by_hand() {
    let sb = Sandbox::new();
    let missing = sb.dir.path().join("no-such-browser");
    let sb = sb.env("BROWSER", missing.to_str().unwrap());
    let mut s = chat(&sb, &[]);
    s.type_line("url-elicit").unwrap();
    s.expect("in your browser? [y/N] ").unwrap();
    s.type_line("y").unwrap();
    s.expect(Regex("\\[elicitation\\] cannot start \\S*no-such-browser"))
        .unwrap();
    s.expect(format!("open the link yourself: {LINK}")).unwrap();
    // The user agreed, so the answer is still accept.
    s.expect("elicitation: accept").unwrap();
    s.expect("> ").unwrap();
    quit(s);
}

#[test]
fn a_link_is_declined_after_a_no_and_not_opened() {
    let (sb, opened) = with_browser();
    let mut s = chat(&sb, &[]);
    s.type_line("url-elicit").unwrap();
    s.expect(format!("Open {LINK} in your browser? [y/N] "))
        .unwrap();
    s.type_line("n").unwrap();
    let answered = s.expect("elicitation: decline").unwrap();
    assert!(
        !String::from_utf8_lossy(answered.before()).contains("completed"),
        "a declined link is not completed"
    );
    s.expect("> ").unwrap();
    // Asked again and accepted: the browser then runs once, for this one.
    s.type_line("url-elicit").unwrap();
    s.expect("in your browser? [y/N] ").unwrap();
    s.type_line("yes").unwrap();
    s.expect("elicitation: accept").unwrap();
    s.expect("> ").unwrap();
    quit(s);
    assert_eq!(eventually(&opened), format!("{LINK}\n"));
}

/// Sends Ctrl-C while a question is asked: the elicitation is answered
/// `cancel`, the turn ends cancelled, and the abandoned question does not
/// take the next line typed at the prompt.
fn cancel_the_question(s: &mut Session) {
    s.send(expectrl::ControlCode::EndOfText).unwrap();
    // The two lines may come in either order.
    let turn = s.expect("stopped: cancelled").unwrap();
    let shown = String::from_utf8_lossy(turn.before()).into_owned();
    assert!(shown.contains("[cancel] cancelling the turn"), "{shown}");
    assert!(shown.contains("elicitation: cancel"), "{shown}");
    s.expect("> ").unwrap();
    s.type_line("hi").unwrap();
    s.expect("You said: hi").unwrap();
    s.expect("> ").unwrap();
}

#[test]
fn ctrl_c_while_a_link_is_asked_cancels_the_elicitation() {
    let (sb, opened) = with_browser();
    let mut s = chat(&sb, &[]);
    s.type_line("url-elicit").unwrap();
    s.expect("in your browser? [y/N] ").unwrap();
    cancel_the_question(&mut s);
    quit(s);
    assert!(!opened.exists(), "the browser ran: {}", read(&opened));
}

#[test]
fn ctrl_c_while_a_form_is_asked_cancels_the_elicitation() {
    let sb = Sandbox::new();
    let mut s = chat(&sb, &[]);
    s.type_line("elicit").unwrap();
    s.expect(Regex("Send\\? .*: ")).unwrap();
    cancel_the_question(&mut s);
    quit(s);
}

#[test]
fn a_link_that_is_not_http_is_declined_without_asking() {
    let (sb, opened) = with_browser();
    let mut s = chat(&sb, &[]);
    s.type_line("url-elicit file:///etc/passwd").unwrap();
    s.expect(
        "[elicitation] declined: Sign in to Example — acp opens only http and https links: \
         file:///etc/passwd",
    )
    .unwrap();
    let answered = s.expect("elicitation: decline").unwrap();
    s.expect("> ").unwrap();
    quit(s);
    assert!(
        !String::from_utf8_lossy(answered.before()).contains("browser?"),
        "the user was asked"
    );
    assert!(!opened.exists(), "the browser ran: {}", read(&opened));
}

#[test]
fn output_between_turns_is_printed_above_the_prompt_and_the_typed_line_is_kept() {
    let sb = Sandbox::new();
    let mut s = chat(&sb, &[]);
    // The agent sends "late news" 2 s after the end of the turn.
    s.type_line("later 20").unwrap();
    s.expect("see you later").unwrap();
    s.expect("> ").unwrap();
    s.send("abc").unwrap();
    let late = s.expect("late news").unwrap();
    assert!(
        String::from_utf8_lossy(late.before()).contains("abc"),
        "the typed characters were echoed before the late output"
    );
    // The prompt and the half-typed line are drawn again under it.
    s.expect("> abc").unwrap();
    s.type_line("").unwrap();
    s.expect("You said: abc\r\n").unwrap();
    s.expect("> ").unwrap();
    quit(s);
}

/// A sandbox whose agent has modes, config options, session listing,
/// commands and usage (`ACP_TEST_AGENT_EXTRAS=1`), logging to `agent.log`.
fn extras() -> (Sandbox, std::path::PathBuf) {
    let sb = Sandbox::new();
    let log = sb.dir.path().join("agent.log");
    let sb = sb
        .env("ACP_TEST_AGENT_EXTRAS", "1")
        .env("ACP_TEST_AGENT_LOG", log.to_str().unwrap());
    (sb, log)
}

#[test]
fn mode_switch_shows_in_the_status_line_with_usage() {
    let (sb, log) = extras();
    let mut s = chat(&sb, &[]);
    s.type_line("/mode").unwrap();
    s.expect(
        "Modes:\r\n * ask  Ask — Asks before every edit\r\n   auto  Auto — Edits without asking",
    )
    .unwrap();
    s.expect("> ").unwrap();
    s.type_line("first").unwrap();
    s.expect("You said: first").unwrap();
    s.expect("── mode ask · context 1000/20000 tokens (5%), cost 0.25 USD")
        .unwrap();
    s.expect("> ").unwrap();
    s.type_line("/mode auto").unwrap();
    // The agent's current_mode_update, then the answer to set_mode.
    s.expect("[mode] auto").unwrap();
    s.expect("Mode: auto").unwrap();
    s.expect("> ").unwrap();
    s.type_line("/mode nope").unwrap();
    s.expect("error: no mode nope; the modes are ask, auto")
        .unwrap();
    s.expect("> ").unwrap();
    s.type_line("second").unwrap();
    s.expect("You said: second").unwrap();
    s.expect("── mode auto · context 2000/20000 tokens (10%), cost 0.50 USD")
        .unwrap();
    s.expect("> ").unwrap();
    s.type_line("/mode").unwrap();
    s.expect("   ask  Ask — Asks before every edit\r\n * auto  Auto — Edits without asking")
        .unwrap();
    s.expect("> ").unwrap();
    quit(s);
    let log = read(&log);
    assert!(log.lines().any(|l| l == "session/set_mode auto"), "{log}");
    assert!(!log.contains("session/set_mode nope"), "{log}");
}

#[test]
fn config_options_are_listed_set_and_toggled() {
    let (sb, log) = extras();
    let mut s = chat(&sb, &[]);
    s.type_line("/config").unwrap();
    s.expect(
        "Config options:\r\n  model (Model): fast (one of fast, smart)\r\n  web (Web search): false (true or false)",
    )
    .unwrap();
    s.expect("> ").unwrap();
    // A select option alone is shown.
    s.type_line("/config model").unwrap();
    s.expect("model: fast (one of fast, smart)").unwrap();
    s.expect("> ").unwrap();
    s.type_line("/config model smart").unwrap();
    s.expect("model: smart (one of fast, smart)").unwrap();
    s.expect("> ").unwrap();
    // A boolean without a value is toggled; on/off are accepted.
    s.type_line("/config web").unwrap();
    s.expect("web: true (true or false)").unwrap();
    s.expect("> ").unwrap();
    s.type_line("/config web off").unwrap();
    s.expect("web: false (true or false)").unwrap();
    s.expect("> ").unwrap();
    s.type_line("/config model huge").unwrap();
    s.expect("error: model takes one of fast, smart").unwrap();
    s.expect("> ").unwrap();
    s.type_line("/config nope 1").unwrap();
    s.expect("error: no config option nope").unwrap();
    s.expect("> ").unwrap();
    // The listing shows what the agent answered.
    s.type_line("/config").unwrap();
    s.expect("model (Model): smart (one of fast, smart)")
        .unwrap();
    s.expect("> ").unwrap();
    quit(s);
    let log = read(&log);
    let sets: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("session/set_config_option"))
        .collect();
    assert_eq!(
        sets,
        [
            "session/set_config_option model smart",
            "session/set_config_option web true",
            "session/set_config_option web false",
        ],
        "{log}"
    );
}

#[test]
fn sessions_lists_every_page_of_this_directory() {
    let (sb, log) = extras();
    let mut s = chat(&sb, &[]);
    s.type_line("/sessions").unwrap();
    // This session (acp's record) first, then the agent's, newest first.
    s.expect(Regex(
        "Sessions in \\S+:\r\n  1\\) \\(untitled\\) · just now · sess-1 \\(this session\\)\r\n  \
         2\\) Fix the parser · on 2025-01-02 · sess-a\r\n  3\\) Write docs · sess-b\r\n  \
         4\\) Old experiment · sess-c\r\n",
    ))
    .unwrap();
    s.expect("Open which? [1-4, Enter: none] ").unwrap();
    s.type_line("").unwrap();
    s.expect("No session opened.").unwrap();
    s.expect("> ").unwrap();
    quit(s);
    let log = read(&log);
    let lists: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("session/list"))
        .collect();
    assert_eq!(lists, ["session/list -", "session/list page-2"], "{log}");
}

#[test]
fn sessions_without_the_capability_shows_acps_own_record() {
    let sb = Sandbox::new();
    let mut s = chat(&sb, &[]);
    s.type_line("/sessions").unwrap();
    s.expect("1) (untitled) · just now · sess-1 (this session)")
        .unwrap();
    s.expect("(the agent does not list its sessions: these are the ones acp had here)")
        .unwrap();
    s.expect("Open which? [1, Enter: none] ").unwrap();
    s.type_line("1").unwrap();
    s.expect("Already in session sess-1.").unwrap();
    s.expect("> ").unwrap();
    // Ctrl-C at the question: nothing opened, the chat goes on.
    s.type_line("/sessions").unwrap();
    s.expect("Open which? [1, Enter: none] ").unwrap();
    s.send(expectrl::ControlCode::EndOfText).unwrap();
    s.expect("No session opened (/sessions N opens number N).")
        .unwrap();
    s.expect("> ").unwrap();
    s.type_line("still here").unwrap();
    s.expect("You said: still here").unwrap();
    s.expect("> ").unwrap();
    quit(s);
}

#[test]
fn agent_commands_are_tab_completed_and_sent_as_prompts() {
    let (sb, _log) = extras();
    let mut s = chat(&sb, &[]);
    // Any answer from the agent comes after the commands it sent right
    // after session/new.
    s.type_line("hello").unwrap();
    s.expect("You said: hello").unwrap();
    s.expect("> ").unwrap();
    s.type_line("/help").unwrap();
    s.expect("The agent's commands:\r\n  /review  Review the changes\r\n  /test which tests  Run the tests")
        .unwrap();
    s.expect("> ").unwrap();
    s.send("/rev").unwrap();
    s.send("\t").unwrap();
    s.type_line("").unwrap();
    s.expect("You said: /review").unwrap();
    s.expect("> ").unwrap();
    s.send("/te").unwrap();
    s.send("\t").unwrap();
    s.type_line("unit").unwrap();
    s.expect("You said: /test unit").unwrap();
    s.expect("> ").unwrap();
    quit(s);
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[test]
fn a_second_ctrl_c_kills_an_agent_that_ignores_cancel() {
    let sb = Sandbox::new();
    let log = sb.dir.path().join("agent.log");
    let sb = sb.env("ACP_TEST_AGENT_LOG", log.to_str().unwrap());
    let mut s = chat(&sb, &[]);
    s.type_line("stubborn").unwrap();
    s.expect("tick 2").unwrap();
    s.send(expectrl::ControlCode::EndOfText).unwrap();
    s.expect("[cancel] cancelling the turn").unwrap();
    // The agent goes on regardless.
    s.expect(Regex("tick [0-9]+")).unwrap();
    s.expect(Regex("tick [0-9]+")).unwrap();
    s.send(expectrl::ControlCode::EndOfText).unwrap();
    s.expect("acp: interrupted again: killed the agent")
        .unwrap();
    s.expect(Eof).unwrap();
    let pid = s.get_process().pid();
    let status = s.get_process_mut().wait().unwrap();
    assert_eq!(status, WaitStatus::Exited(pid, 130));
    let log = read(&log);
    assert!(log.lines().any(|l| l == "session/cancel"), "{log}");
    assert!(!log.lines().any(|l| l.starts_with("stop")), "{log}");
    let agent: i32 = log
        .lines()
        .find_map(|l| l.strip_prefix("pid "))
        .and_then(|p| p.parse().ok())
        .expect("the agent logged its pid");
    let started = std::time::Instant::now();
    while !gone(agent) {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the agent {agent} is still running"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_message_over_the_size_limit_ends_the_chat_with_code_1() {
    let sb = Sandbox::new();
    let mut s = chat(&sb, &[]);
    // 64 MiB through a pipe in a debug build on a loaded machine: be generous.
    s.set_expect_timeout(Some(Duration::from_secs(120)));
    s.type_line("too-long").unwrap();
    s.expect("acp: the agent sent a message longer than 64 MiB")
        .unwrap();
    s.expect(Eof).unwrap();
    let pid = s.get_process().pid();
    let status = s.get_process_mut().wait().unwrap();
    assert_eq!(status, WaitStatus::Exited(pid, 1));
}

#[test]
fn the_banner_shows_the_policy_and_the_sandbox() {
    let sb = Sandbox::new();
    let mut command = Command::new(ACP);
    command
        .args(["chat", "--agent", test_agent()])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", sb.dir.path().join("home"))
        .env("XDG_CONFIG_HOME", sb.dir.path().join("config"))
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .current_dir(sb.work());
    let mut s = Session::spawn(command).unwrap();
    s.set_expect_timeout(Some(Duration::from_secs(20)));
    s.expect("Ctrl-D quits.").unwrap();
    s.expect("permissions: ask: writes and commands need a permission granted this turn")
        .unwrap();
    let support = acp_host::sandbox_support();
    if support.is_available() {
        s.expect(format!("sandbox: on ({support}): commands may write only in").as_str())
            .unwrap();
    } else {
        s.expect("sandbox: unavailable").unwrap();
    }
    s.expect("> ").unwrap();
    quit(s);
}

#[test]
fn a_write_nobody_granted_is_asked_and_a_rejection_writes_nothing() {
    let sb = Sandbox::new();
    let target = sb.work().join("unasked.txt");
    let mut s = chat(&sb, &[]);
    s.type_line(format!("write {} sneaky", target.display()))
        .unwrap();
    s.expect(
        format!(
            "The agent wants to write {} (the agent did not ask permission for it this turn)",
            target.display()
        )
        .as_str(),
    )
    .unwrap();
    s.expect("Choose 1-2: ").unwrap();
    s.type_line("2").unwrap();
    s.expect("error: refused: write").unwrap();
    s.expect("> ").unwrap();
    assert!(!target.exists());
    // Allowed this time.
    s.type_line(format!("write {} allowed", target.display()))
        .unwrap();
    s.expect("Choose 1-2: ").unwrap();
    s.type_line("1").unwrap();
    s.expect("wrote").unwrap();
    s.expect("> ").unwrap();
    assert_eq!(read(&target), "allowed");
    quit(s);
}
