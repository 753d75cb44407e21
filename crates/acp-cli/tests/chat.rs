//! `acp chat` driven through a pseudo-terminal.

mod common;
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
        .args(["chat", "--agent", AGENT])
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
    s.send_line("stream").unwrap();
    s.expect("Hello, world!").unwrap();
    s.expect("> ").unwrap();
    s.send_line("plan").unwrap();
    s.expect("Plan:\r\n  [~] Read the code\r\n  [ ] Change it")
        .unwrap();
    s.expect("Plan:\r\n  [x] Read the code\r\n  [x] Change it\r\n  [~] Run the tests")
        .unwrap();
    s.expect("Planned.").unwrap();
    s.expect("> ").unwrap();
    s.send_line("tool").unwrap();
    s.expect("[edit] Edit notes.txt · pending").unwrap();
    s.expect("@@ -1,3 +1,4 @@\r\n one\r\n-two\r\n+2\r\n three\r\n+four")
        .unwrap();
    s.expect("[edit] Edit notes.txt · completed").unwrap();
    s.expect("> ").unwrap();
    // Terminal output is shown in the transcript.
    s.send_line("terminal echo from-the-terminal").unwrap();
    s.expect(Regex("┌ terminal \\S+ \\(exit 0\\)")).unwrap();
    s.expect("│ from-the-terminal").unwrap();
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
fn a_permission_is_answered_by_number_and_always_is_remembered() {
    let sb = Sandbox::new();
    let mut s = chat(&sb, &[]);
    s.send_line("permission").unwrap();
    s.expect("? Permission: Remove build/ (edit)").unwrap();
    s.expect("  2) Always allow [allow_always]").unwrap();
    s.expect("Choose 1-4: ").unwrap();
    s.send_line("2").unwrap();
    s.expect("permission: selected always").unwrap();
    s.expect("> ").unwrap();
    // The same tool kind is now answered without asking.
    s.send_line("permission").unwrap();
    s.expect("[permission] remembered for edit tools").unwrap();
    s.expect("permission: selected always").unwrap();
    s.expect("> ").unwrap();
    // Another kind is asked again; reject it by number.
    s.send_line("permission execute").unwrap();
    s.expect("Choose 1-4: ").unwrap();
    s.send_line("3").unwrap();
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
    s.send_line("slow").unwrap();
    s.expect("tick 2").unwrap();
    s.send(expectrl::ControlCode::EndOfText).unwrap();
    s.expect("[cancel] cancelling the turn").unwrap();
    s.expect("stopped: cancelled").unwrap();
    s.expect("> ").unwrap();
    // The chat goes on.
    s.send_line("hi there").unwrap();
    s.expect("You said: hi there").unwrap();
    s.expect("> ").unwrap();
    // Ctrl-C at the prompt clears the line and keeps the chat.
    s.send("half a line").unwrap();
    s.send(expectrl::ControlCode::EndOfText).unwrap();
    s.expect("> ").unwrap();
    s.send_line("again").unwrap();
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
    s.send_line("/help").unwrap();
    s.expect("/sessions").unwrap();
    s.expect("Ctrl-D quits.").unwrap();
    s.expect("> ").unwrap();
    s.send_line("/nope").unwrap();
    s.expect("error: unknown command /nope").unwrap();
    s.expect("> ").unwrap();
    s.send_line("/load sess-9").unwrap();
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
    s.send_line("elicit").unwrap();
    s.expect("? The agent asks: Your name?").unwrap();
    s.expect(Regex("Send\\? .*: ")).unwrap();
    s.send_line("a").unwrap();
    s.expect("elicitation: accept").unwrap();
    s.expect("> ").unwrap();
    quit(s);
}
