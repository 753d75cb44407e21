//! `acp chat`'s live transcript, permission review, input and sessions,
//! driven through a pseudo-terminal as a user would.
//!
//! Turns that must be seen while they run wait at the test agent's gate
//! (`ACP_TEST_AGENT_GATE`): the test looks at the screen, then creates the
//! file.

use crate::common;
use common::*;
use expectrl::process::unix::WaitStatus;
use expectrl::session::OsSession as Session;
use expectrl::{Eof, Expect, Regex};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// The pty's size.
const COLS: u16 = 100;
const ROWS: u16 = 40;

struct Chat {
    s: Session,
    gate: PathBuf,
    log: PathBuf,
}

/// `acp chat` against the test agent in a pty, without colour, with a gate
/// and a log of what the agent received.
fn chat(sb: &Sandbox, extra: &[&str]) -> Chat {
    let gate = sb.dir.path().join("gate");
    let log = sb.dir.path().join("agent.log");
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
        .env("PAGER", "cat")
        .env("ACP_TEST_AGENT_GATE", &gate)
        .env("ACP_TEST_AGENT_LOG", &log)
        .current_dir(sb.work());
    for (k, v) in &sb.env {
        command.env(k, v);
    }
    let mut s = Session::spawn(command).expect("spawn acp chat in a pty");
    s.get_process_mut()
        .set_window_size(COLS, ROWS)
        .expect("set the pty's size");
    s.set_expect_timeout(Some(Duration::from_secs(20)));
    s.expect("Ctrl-D quits.").expect("the banner");
    s.expect("> ").expect("the first prompt");
    Chat { s, gate, log }
}

impl Chat {
    fn open_gate(&self) {
        std::fs::write(&self.gate, "").unwrap();
    }

    fn close_gate(&self) {
        let _ = std::fs::remove_file(&self.gate);
    }

    /// How many prompts the agent received.
    fn prompts(&self) -> usize {
        read(&self.log)
            .lines()
            .filter(|l| *l == "session/prompt")
            .count()
    }

    fn quit(mut self) {
        self.s
            .send(expectrl::ControlCode::EndOfTransmission)
            .unwrap();
        self.s.expect(Eof).expect("acp chat ends after Ctrl-D");
        let pid = self.s.get_process().pid();
        let status = self.s.get_process_mut().wait().unwrap();
        assert_eq!(status, WaitStatus::Exited(pid, 0));
    }
}

#[test]
fn text_appears_as_it_streams_before_the_turn_ends() {
    let sb = Sandbox::new();
    let mut c = chat(&sb, &[]);
    c.s.type_line("slow-stream").unwrap();
    // The open line is on the screen while the agent waits at the gate.
    c.s.expect("The quick brown fox").unwrap();
    c.s.expect(Regex("Working · \\d+s")).unwrap();
    c.open_gate();
    c.s.expect("The quick brown fox jumps over the lazy dog.\r\n")
        .unwrap();
    c.s.expect("Second line.").unwrap();
    c.s.expect("> ").unwrap();
    c.quit();
}

#[test]
fn a_silent_turn_shows_a_spinner_the_elapsed_time_and_the_usage() {
    let sb = Sandbox::new();
    let mut c = chat(&sb, &[]);
    c.s.type_line("usage-live").unwrap();
    c.s.expect(Regex(
        "[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Working · 1s · 1.2k/200k tokens · \\$0.05 · Ctrl-C cancels",
    ))
    .unwrap();
    c.open_gate();
    c.s.expect("done").unwrap();
    c.s.expect("> ").unwrap();
    c.quit();
}

#[test]
fn the_agents_progress_reports_go_to_the_status_line() {
    let sb = Sandbox::new();
    let mut c = chat(&sb, &[]);
    c.s.type_line("retry").unwrap();
    c.s.expect("[warning] Stream disconnected: retrying")
        .unwrap();
    c.s.expect(Regex("[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Reconnecting\\.\\.\\. 3/5 · "))
        .unwrap();
    c.s.send(expectrl::ControlCode::EndOfText).unwrap();
    c.s.expect("stopped: cancelled").unwrap();
    c.s.expect("> ").unwrap();
    c.quit();
}

#[test]
fn a_running_tool_call_is_one_line_updated_in_place() {
    let sb = Sandbox::new();
    let mut c = chat(&sb, &[]);
    c.s.type_line("tool-progress").unwrap();
    c.s.expect("⏺ [search] Search the code · in_progress")
        .unwrap();
    c.open_gate();
    let done =
        c.s.expect("⏺ [search] Search the code · completed")
            .unwrap();
    // Nothing about the call was committed before it ended.
    let before = String::from_utf8_lossy(done.before()).into_owned();
    assert!(!before.contains("3 matches"), "{before}");
    c.s.expect("3 matches").unwrap();
    c.s.expect("Searched.").unwrap();
    c.s.expect("> ").unwrap();
    c.quit();
}

#[test]
fn a_permission_question_shows_the_diff_before_the_choice() {
    let sb = Sandbox::new();
    let mut c = chat(&sb, &[]);
    c.s.type_line("edit-permission notes.txt").unwrap();
    let asked = c.s.expect("Choose 1-4: ").unwrap();
    let question = String::from_utf8_lossy(asked.before()).into_owned();
    assert!(
        question.contains("? Permission: Edit notes.txt (edit)"),
        "{question}"
    );
    let diff = question.find("@@ -1,3 +1,4 @@\r\n one\r\n-two\r\n+2\r\n three\r\n+four");
    let options = question.find("1) Allow [allow_once]");
    assert!(
        diff.is_some() && diff < options,
        "the diff is not shown before the options: {question}"
    );
    assert!(question.contains("remembered for "), "{question}");
    c.s.type_line("1").unwrap();
    c.s.expect("permission: selected allow").unwrap();
    c.s.expect("> ").unwrap();
    // A long diff shows its first rows; d shows all of it (here through
    // PAGER=cat), then the question is asked again.
    c.s.type_line("edit-permission big.txt long").unwrap();
    c.s.expect("more lines of the diff (d shows it all)")
        .unwrap();
    c.s.expect("Choose 1-4 (d: the whole diff): ").unwrap();
    c.s.type_line("d").unwrap();
    c.s.expect("+LINE 200").unwrap();
    c.s.expect("Choose 1-4 (d: the whole diff): ").unwrap();
    c.s.type_line("3").unwrap();
    c.s.expect("permission: selected reject").unwrap();
    c.s.expect("> ").unwrap();
    c.quit();
}

#[test]
fn always_allow_holds_for_that_command_only_and_can_be_revoked() {
    let sb = Sandbox::new();
    let mut c = chat(&sb, &[]);
    c.s.type_line("run-permission cat notes.txt").unwrap();
    c.s.expect("$ cat notes.txt").unwrap();
    c.s.expect("remembered for the command `cat notes.txt`")
        .unwrap();
    c.s.expect("Choose 1-4: ").unwrap();
    c.s.type_line("2").unwrap();
    c.s.expect("permission: selected always").unwrap();
    c.s.expect("> ").unwrap();
    // The same command: answered from memory.
    c.s.type_line("run-permission cat notes.txt").unwrap();
    c.s.expect("[permission] remembered: always allow the command `cat notes.txt` (execute)")
        .unwrap();
    c.s.expect("permission: selected always").unwrap();
    c.s.expect("> ").unwrap();
    // Another command of the same kind is asked.
    c.s.type_line("run-permission rm -rf build").unwrap();
    c.s.expect("$ rm -rf build").unwrap();
    c.s.expect("Choose 1-4: ").unwrap();
    c.s.type_line("3").unwrap();
    c.s.expect("permission: selected reject").unwrap();
    c.s.expect("> ").unwrap();
    // Listed, revoked, then asked again.
    c.s.type_line("/permissions").unwrap();
    c.s.expect("1) always allow the command `cat notes.txt` (execute)")
        .unwrap();
    c.s.expect("> ").unwrap();
    c.s.type_line("/permissions revoke 1").unwrap();
    c.s.expect("Forgot: always allow the command `cat notes.txt`")
        .unwrap();
    c.s.expect("> ").unwrap();
    c.s.type_line("run-permission cat notes.txt").unwrap();
    c.s.expect("Choose 1-4: ").unwrap();
    c.s.type_line("1").unwrap();
    c.s.expect("permission: selected allow").unwrap();
    c.s.expect("> ").unwrap();
    c.quit();
}

#[test]
fn alt_enter_and_a_trailing_backslash_make_multi_line_prompts() {
    let sb = Sandbox::new();
    let mut c = chat(&sb, &[]);
    // Alt-Enter is ESC then CR.
    c.s.send("line A\x1b\rline B\r").unwrap();
    // Each line is committed on its own (the live area is redrawn between).
    c.s.expect("You said: line A\r\n").unwrap();
    c.s.expect("line B\r\n").unwrap();
    c.s.expect("> ").unwrap();
    c.s.send("first \\\r").unwrap();
    c.s.send("second\r").unwrap();
    c.s.expect("You said: first \r\n").unwrap();
    c.s.expect("second\r\n").unwrap();
    c.s.expect("> ").unwrap();
    c.quit();
}

#[test]
fn type_ahead_is_kept_for_the_next_prompt_and_not_sent() {
    let sb = Sandbox::new();
    let mut c = chat(&sb, &[]);
    c.s.type_line("silent").unwrap();
    c.s.expect(Regex("Working · \\d+s")).unwrap();
    // Typed during the turn, Enter included: shown in the input line,
    // a hint, nothing sent.
    c.s.send("next one\r").unwrap();
    c.s.expect("Enter sends once the turn ends").unwrap();
    c.s.expect("> next one").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(c.prompts(), 1);
    c.open_gate();
    let done = c.s.expect("done\r\n").unwrap();
    assert!(
        !String::from_utf8_lossy(done.before()).contains("You said"),
        "the type-ahead was sent"
    );
    // The next prompt starts with it; Enter sends it.
    c.s.expect("> next one").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(c.prompts(), 1);
    c.s.send("\r").unwrap();
    c.s.expect("You said: next one").unwrap();
    c.s.expect("> ").unwrap();
    c.close_gate();
    c.quit();
}

#[test]
fn type_ahead_is_not_a_permission_answer_and_survives_ctrl_c() {
    let sb = Sandbox::new();
    let mut c = chat(&sb, &[]);
    // A "1" typed while the turn runs, before the question comes.
    c.s.type_line("slow").unwrap();
    c.s.expect("tick 2").unwrap();
    c.s.send("1").unwrap();
    c.s.expect("> 1").unwrap();
    c.s.send(expectrl::ControlCode::EndOfText).unwrap();
    c.s.expect("stopped: cancelled").unwrap();
    // Kept after Ctrl-C: the prompt starts with it.
    c.s.expect("> 1").unwrap();
    // Cleared (Ctrl-U), then a question: the typed "1" did not answer it.
    c.s.send("\x15edit-permission notes.txt\r").unwrap();
    c.s.expect("Choose 1-4: ").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    c.s.type_line("3").unwrap();
    c.s.expect("permission: selected reject").unwrap();
    c.s.expect("> ").unwrap();
    c.quit();
}

#[test]
fn continue_picks_up_the_last_session_here_and_shows_its_transcript() {
    let sb = Sandbox::new();
    // Nothing to continue yet.
    let out = sb.run(&["chat", "--continue", "--agent", test_agent()]);
    assert_code(&out, 2);
    assert!(
        out.stderr.contains("--continue: acp has had no session"),
        "{}",
        out.stderr
    );
    let c = chat(&sb, &[]);
    c.quit();
    let c = chat(&sb, &["--continue"]);
    let log = read(&c.log);
    assert!(log.lines().any(|l| l == "session/load sess-1"), "{log}");
    c.quit();
    // The transcript was replayed: started again to see it.
    let mut c2 = {
        let mut command = Command::new(ACP);
        command
            .args(["chat", "--agent", test_agent(), "--continue"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", sb.dir.path().join("home"))
            .env("XDG_CONFIG_HOME", sb.dir.path().join("config"))
            .env("XDG_STATE_HOME", sb.dir.path().join("state"))
            .env("NO_COLOR", "1")
            .env("TERM", "xterm")
            .current_dir(sb.work());
        Session::spawn(command).unwrap()
    };
    c2.set_expect_timeout(Some(Duration::from_secs(20)));
    let banner = c2.expect("Ctrl-D quits.").unwrap();
    let shown = String::from_utf8_lossy(banner.before()).into_owned();
    assert!(
        shown.contains("> earlier question") && shown.contains("earlier answer"),
        "{shown}"
    );
    c2.expect("> ").unwrap();
    c2.send(expectrl::ControlCode::EndOfTransmission).unwrap();
    c2.expect(Eof).unwrap();
}

#[test]
fn a_unique_prefix_of_a_session_id_is_enough() {
    let sb = Sandbox::new();
    let c = chat(&sb, &[]);
    c.quit();
    let mut c = chat(&sb, &["--session", "sess-"]);
    let log = read(&c.log);
    assert!(log.lines().any(|l| l == "session/load sess-1"), "{log}");
    c.s.type_line("hi").unwrap();
    c.s.expect("You said: hi").unwrap();
    c.s.expect("> ").unwrap();
    c.quit();
}

#[test]
fn the_history_is_written_as_you_go_and_survives_a_hangup() {
    let sb = Sandbox::new();
    let mut c = chat(&sb, &[]);
    c.s.type_line("first prompt").unwrap();
    c.s.expect("You said: first prompt").unwrap();
    c.s.expect("> ").unwrap();
    let pid = c.s.get_process().pid();
    let killed = Command::new("kill")
        .args(["-HUP", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    c.s.expect(Eof).unwrap();
    let status = c.s.get_process_mut().wait().unwrap();
    assert_eq!(status, WaitStatus::Exited(pid, 129));
    let history = read(&sb.dir.path().join("state/acp/history"));
    assert!(history.contains("first prompt"), "{history}");
}

#[test]
fn a_crash_says_how_to_resume() {
    let sb = Sandbox::new();
    let mut c = chat(&sb, &[]);
    c.s.type_line("crash").unwrap();
    c.s.expect("the agent exited").unwrap();
    c.s.expect(Regex(
        "To resume the session: acp chat --agent \\S+ --session sess-1",
    ))
    .unwrap();
    c.s.expect("--continue in this directory").unwrap();
    c.s.expect(Eof).unwrap();
    let pid = c.s.get_process().pid();
    let status = c.s.get_process_mut().wait().unwrap();
    assert_eq!(status, WaitStatus::Exited(pid, 6));
}

#[test]
fn ctrl_j_makes_a_multi_line_prompt() {
    let sb = Sandbox::new();
    let mut c = chat(&sb, &[]);
    // Ctrl-J is a line feed.
    c.s.send("line A\nline B\r").unwrap();
    c.s.expect("You said: line A\r\n").unwrap();
    c.s.expect("line B\r\n").unwrap();
    c.s.expect("> ").unwrap();
    c.quit();
}

#[test]
fn the_plan_is_updated_in_place_and_committed_when_the_turn_ends() {
    let sb = Sandbox::new();
    let mut c = chat(&sb, &[]);
    c.s.type_line("plan-live").unwrap();
    c.s.expect("Reading.").unwrap();
    // In the live area, over the status line, while the turn waits.
    c.s.expect(Regex(
        "Plan:\r+\n  \\[~\\] Read the code\r+\n  \\[ \\] Change it\r+\n  \\[ \\] Run the tests\r+\n",
    ))
    .unwrap();
    c.s.expect(Regex("[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Working")).unwrap();
    c.open_gate();
    c.s.expect("Planned.").unwrap();
    let end = c.s.expect("> ").unwrap();
    let after = String::from_utf8_lossy(end.before()).into_owned();
    // Committed once, after the text, in its last state (the live area's
    // rows are joined by CR LF, which the tty makes CR CR LF).
    let committed = "Plan:\r\n  [x] Read the code\r\n  [x] Change it\r\n  [~] Run the tests\r\n";
    assert_eq!(after.matches(committed).count(), 1, "{after:?}");
    c.quit();
}

#[test]
fn markdown_tables_numbered_lists_and_links_are_laid_out() {
    let sb = Sandbox::new();
    let mut c = chat(&sb, &[]);
    c.s.type_line("markdown").unwrap();
    c.s.expect(
        "┌────────────┬──────┐\r\n│ name       │ size │\r\n├────────────┼──────┤\r\n\
         │ alpha      │    1 │\r\n│ beta gamma │   22 │\r\n└────────────┴──────┘\r\n",
    )
    .unwrap();
    // Each line is committed on its own (the live area is drawn between).
    c.s.expect("1. first step\r\n").unwrap();
    c.s.expect("2. second step\r\n").unwrap();
    // No OSC 8 here (TERM=xterm, no colour): the link and its address.
    c.s.expect("See the docs (https://example.test/docs) for more.")
        .unwrap();
    c.s.expect("> ").unwrap();
    c.quit();
}

#[test]
fn the_sessions_picker_opens_a_session_by_number_and_refuses_bad_answers() {
    let sb = Sandbox::new().env("ACP_TEST_AGENT_EXTRAS", "1");
    let mut c = chat(&sb, &[]);
    c.s.type_line("fix the parser\nplease").unwrap();
    c.s.expect("You said: fix the parser").unwrap();
    c.s.expect("> ").unwrap();
    // acp's own record gives this session its first prompt and a count.
    let picker = |c: &mut Chat, prompts: &str| {
        c.s.type_line("/sessions").unwrap();
        c.s.expect(format!(
            "1) \"fix the parser\" · just now · {prompts} · sess-1 (this session)"
        ))
        .unwrap();
        c.s.expect("2) Fix the parser · on 2025-01-02 · sess-a")
            .unwrap();
        c.s.expect("Open which? [1-4, Enter: none] ").unwrap();
    };
    for (answer, said) in [
        (
            "x",
            "error: `x` is not a number from the list (1-4); no session opened, still in sess-1",
        ),
        (
            "9",
            "error: there is no session 9 in the list (1-4); no session opened, still in sess-1",
        ),
        ("", "No session opened."),
        ("1", "Already in session sess-1."),
    ] {
        picker(&mut c, "1 prompt");
        c.s.type_line(answer).unwrap();
        c.s.expect(said).unwrap();
        c.s.expect("> ").unwrap();
    }
    // The chat went on: still the same session.
    c.s.type_line("still here").unwrap();
    c.s.expect("You said: still here").unwrap();
    c.s.expect("> ").unwrap();
    // Number 2: loaded, its history replayed like a turn.
    picker(&mut c, "2 prompts");
    c.s.type_line("2").unwrap();
    c.s.expect("Loading session sess-a").unwrap();
    c.s.expect("> earlier question\r\nearlier answer\r\n")
        .unwrap();
    c.s.expect("⏺ [read] Read notes.txt · completed\r\n  ↳ notes.txt")
        .unwrap();
    c.s.expect("[session] sess-a").unwrap();
    c.s.expect("> ").unwrap();
    c.s.type_line("now here").unwrap();
    c.s.expect("You said: now here").unwrap();
    c.s.expect("> ").unwrap();
    // `/sessions N` opens without asking.
    c.s.type_line("/sessions 4").unwrap();
    c.s.expect("[session] sess-c").unwrap();
    c.s.expect("> ").unwrap();
    let log = read(&c.log);
    let opened: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("session/load"))
        .collect();
    assert_eq!(
        opened,
        ["session/load sess-a", "session/load sess-c"],
        "{log}"
    );
    c.quit();
    // The record counts the prompts per session.
    let record = read(&sb.dir.path().join("state/acp/sessions.jsonl"));
    assert!(
        record.contains("\"sessionId\":\"sess-1\",\"at\":")
            && record.contains("\"prompts\":2,\"title\":\"fix the parser\"}"),
        "{record}"
    );
}

#[test]
fn a_session_that_can_only_be_resumed_says_its_turns_are_not_shown() {
    let sb = Sandbox::new()
        .env("ACP_TEST_AGENT_EXTRAS", "1")
        .env("ACP_TEST_AGENT_RESUME", "1")
        .env("ACP_TEST_AGENT_NO_LOAD", "1");
    let mut c = chat(&sb, &[]);
    c.s.type_line("/load sess-b").unwrap();
    let shown = c.s.expect("[session] sess-b").unwrap();
    let shown = String::from_utf8_lossy(shown.before()).into_owned();
    assert!(
        shown.contains(
            "[session] resumed: the agent replays nothing, so earlier turns are not shown"
        ),
        "{shown}"
    );
    assert!(!shown.contains("earlier answer"), "{shown}");
    c.s.expect("> ").unwrap();
    c.s.type_line("hello again").unwrap();
    c.s.expect("You said: hello again").unwrap();
    c.s.expect("> ").unwrap();
    let log = read(&c.log);
    assert!(log.lines().any(|l| l == "session/resume sess-b"), "{log}");
    c.quit();
}

#[test]
fn a_resize_during_a_turn_redraws_the_live_area_over_its_rewrapped_rows() {
    let sb = Sandbox::new();
    let mut c = chat(&sb, &[]);
    c.s.type_line("slow-stream").unwrap();
    c.s.expect("The quick brown fox").unwrap();
    // Drawn 100 wide: the open line and the status line, two rows.
    c.s.expect(Regex(
        "Working · \\d+s · Ctrl-C cancels\x1b\\[\\?25h\x1b\\[1A\r\x1b\\[J",
    ))
    .unwrap();
    // 20 wide, the terminal rewraps the 31-column status line into two
    // rows: the next redraw goes up over all three before it clears, then
    // draws rows that fit.
    c.s.get_process_mut().set_window_size(20, ROWS).unwrap();
    c.s.expect("\x1b[2A\r\x1b[J").unwrap();
    let drawn = c.s.expect("\x1b[?25h").unwrap();
    let rows = String::from_utf8_lossy(drawn.before()).into_owned();
    // Joined by CR LF, which the tty makes CR CR LF.
    let rows: Vec<&str> = rows
        .trim_start_matches("\x1b[?25l")
        .split("\r\r\n")
        .collect();
    assert_eq!(rows[0], "The quick brown fox", "{rows:?}");
    assert!(rows[1].contains(" Working · "), "{rows:?}");
    assert!(
        rows.len() == 2 && rows.iter().all(|r| r.chars().count() < 20),
        "{rows:?}"
    );
    c.open_gate();
    c.s.expect("Second line.").unwrap();
    c.s.expect("> ").unwrap();
    c.quit();
}

/// The lines of the agent's log that start with `prefix`.
fn logged(c: &Chat, prefix: &str) -> Vec<String> {
    read(&c.log)
        .lines()
        .filter(|l| l.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

#[test]
fn slash_model_switches_an_agent_that_offers_models_and_the_next_turn_uses_it() {
    let sb = Sandbox::new().env("ACP_TEST_AGENT_MODELS", "1");
    let mut c = chat(&sb, &[]);
    c.s.type_line("which-model").unwrap();
    c.s.expect("Running on fast").unwrap();
    // The turn's usage, from the prompt result.
    c.s.expect("── tokens 120 in, 30 out").unwrap();
    c.s.expect("> ").unwrap();
    c.s.type_line("/model").unwrap();
    c.s.expect(
        "Models:\r\n * fast  Fast model — Quick answers\r\n   smart  Smart model\r\n/model ID switches.",
    )
    .unwrap();
    c.s.expect("> ").unwrap();
    c.s.type_line("/model huge").unwrap();
    c.s.expect("error: no model huge; the models are fast, smart")
        .unwrap();
    c.s.expect("> ").unwrap();
    // By its name, in any case, as well as by id.
    c.s.type_line("/model SMART model").unwrap();
    c.s.expect("Model: smart").unwrap();
    c.s.expect("> ").unwrap();
    c.s.type_line("which-model").unwrap();
    c.s.expect("Running on smart").unwrap();
    c.s.expect("> ").unwrap();
    c.s.type_line("/model").unwrap();
    c.s.expect("   fast  Fast model — Quick answers\r\n * smart  Smart model")
        .unwrap();
    c.s.expect("> ").unwrap();
    assert_eq!(logged(&c, "session/set_model"), ["session/set_model smart"]);
    assert!(logged(&c, "session/set_config_option").is_empty());
    c.quit();
}

#[test]
fn slash_model_uses_the_model_config_option_when_there_is_no_selector() {
    let sb = Sandbox::new().env("ACP_TEST_AGENT_EXTRAS", "1");
    let mut c = chat(&sb, &[]);
    c.s.type_line("/model").unwrap();
    c.s.expect("Models:\r\n * fast  Fast model\r\n   smart  Smart model")
        .unwrap();
    c.s.expect("> ").unwrap();
    c.s.type_line("/model smart").unwrap();
    c.s.expect("Model: smart").unwrap();
    c.s.expect("> ").unwrap();
    c.s.type_line("which-model").unwrap();
    c.s.expect("Running on smart").unwrap();
    c.s.expect("> ").unwrap();
    assert_eq!(
        logged(&c, "session/set_config_option"),
        ["session/set_config_option model smart"]
    );
    c.quit();
}

#[test]
fn the_model_selector_and_the_config_option_stay_in_step() {
    let sb = Sandbox::new()
        .env("ACP_TEST_AGENT_MODELS", "1")
        .env("ACP_TEST_AGENT_EXTRAS", "1");
    let mut c = chat(&sb, &[]);
    // Through the selector: /config shows the new model too.
    c.s.type_line("/model smart").unwrap();
    c.s.expect("Model: smart").unwrap();
    c.s.expect("> ").unwrap();
    c.s.type_line("/config model").unwrap();
    c.s.expect("model: smart (one of fast, smart)").unwrap();
    c.s.expect("> ").unwrap();
    // Through the config option: /model marks it.
    c.s.type_line("/config model fast").unwrap();
    c.s.expect("model: fast (one of fast, smart)").unwrap();
    c.s.expect("> ").unwrap();
    c.s.type_line("/model").unwrap();
    c.s.expect(" * fast  Fast model — Quick answers\r\n   smart  Smart model")
        .unwrap();
    c.s.expect("> ").unwrap();
    c.s.type_line("which-model").unwrap();
    c.s.expect("Running on fast").unwrap();
    c.s.expect(
        "── mode ask · context 1000/20000 tokens (5%), cost 0.25 USD · tokens 120 in, 30 out",
    )
    .unwrap();
    c.s.expect("> ").unwrap();
    c.quit();
}

#[test]
fn slash_model_says_so_when_the_agent_offers_no_model() {
    let sb = Sandbox::new();
    let mut c = chat(&sb, &[]);
    c.s.type_line("/model").unwrap();
    c.s.expect(
        "error: the agent offers no model choice (neither models nor a model config option)",
    )
    .unwrap();
    c.s.expect("> ").unwrap();
    c.quit();
}
