//! `acp chat` with `acp-agent`, driven through a pseudo-terminal as a user
//! would: the agent runs against the mock model server (acp-agent's test
//! support) and keeps its sessions in a temporary data directory; HOME and
//! the XDG directories are temporary and the environment is cleared.
//!
//! Covered: text on the screen while the model is still streaming (the
//! turn has not ended), an edit's permission question showing its diff
//! before the choice, and a session taken up again with `--continue`
//! (loaded, its history shown).

use crate::support;

use expectrl::session::OsSession as Session;
use expectrl::{Eof, Expect, Regex};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::*;

/// The `acp` binary, built from acp-cli's main.rs.
const ACP: &str = env!("CARGO_BIN_EXE_acp-e2e-acp");

/// A temporary HOME and, inside it, the project directory.
fn sandbox() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let home = canonical(dir.path());
    let work = home.join("project");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("hello.txt"), "hello world\n").unwrap();
    (dir, home, work)
}

/// `acp chat` with acp-agent on the model server at `base_url`, in a
/// 100×40 pty, without colour; waits for the first prompt.
fn chat(base_url: &str, home: &Path, work: &Path, extra: &[&str]) -> Session {
    let agent = format!(
        "'{}' --data-dir '{}'",
        agent_bin(),
        home.join("agent-data").display()
    );
    let mut command = Command::new(ACP);
    command
        .args(["chat", "--agent", &agent])
        .args(extra)
        .current_dir(work)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_STATE_HOME", home.join(".state"))
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .env("PAGER", "cat")
        .env("OPENAI_BASE_URL", base_url)
        .env("ACP_AGENT_MODEL", "openai:mock-model");
    let mut s = Session::spawn(command).expect("spawn acp chat in a pty");
    s.get_process_mut().set_window_size(100, 40).unwrap();
    s.set_expect_timeout(Some(Duration::from_secs(30)));
    s.expect("Ctrl-D quits.").expect("the banner");
    s.expect("> ").expect("the first prompt");
    s
}

/// Types `line` and Enter (a carriage return, as a terminal sends it).
fn enter(s: &mut Session, line: &str) {
    s.send(format!("{line}\r")).unwrap();
}

fn quit(mut s: Session) {
    s.send(expectrl::ControlCode::EndOfTransmission).unwrap();
    s.expect(Eof).expect("acp chat ends after Ctrl-D");
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn text_is_on_the_screen_while_the_model_still_streams() {
    let rt = runtime();
    let (_dir, home, work) = sandbox();
    // The model sends two pieces, then keeps the stream open.
    let mock = rt.block_on(MockLlm::start(vec![Reply::SseHang(vec![
        text("The answer is "),
        text("forty-two"),
    ])]));
    let mut s = chat(&mock.base_url, &home, &work, &[]);
    enter(&mut s, "What is the answer?");
    s.expect("The answer is forty-two").unwrap();
    s.expect(Regex("[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Working · \\d+s · Ctrl-C cancels"))
        .unwrap();
    // The turn is still running: Ctrl-C ends it.
    s.send(expectrl::ControlCode::EndOfText).unwrap();
    s.expect("stopped: cancelled").unwrap();
    s.expect("> ").unwrap();
    quit(s);
}

#[test]
fn an_edit_asks_with_its_diff_first_and_then_changes_the_file() {
    let rt = runtime();
    let (_dir, home, work) = sandbox();
    let mock = rt.block_on(MockLlm::start(vec![
        tool_reply(
            "e1",
            "edit_file",
            json!({"path": "hello.txt", "old_string": "world", "new_string": "ACP"}),
        ),
        text_reply("Changed it."),
    ]));
    let mut s = chat(&mock.base_url, &home, &work, &[]);
    enter(&mut s, "Change world to ACP");
    let asked = s.expect(Regex("Choose 1-\\d+[^:]*: ")).unwrap();
    let question = String::from_utf8_lossy(asked.before()).into_owned();
    let permission = question.find("? Permission: ");
    let diff = question.find("-hello world\r\n+hello ACP");
    let options = question.find("1) ");
    assert!(
        permission.is_some() && diff > permission && options > diff,
        "the diff is not shown between the question and the options: {question}"
    );
    // Nothing changed before the answer.
    assert_eq!(
        std::fs::read_to_string(work.join("hello.txt")).unwrap(),
        "hello world\n"
    );
    enter(&mut s, "1");
    s.expect("Changed it.").unwrap();
    s.expect("> ").unwrap();
    quit(s);
    assert_eq!(
        std::fs::read_to_string(work.join("hello.txt")).unwrap(),
        "hello ACP\n"
    );
}

#[test]
fn continue_loads_the_last_session_and_shows_its_history() {
    let rt = runtime();
    let (_dir, home, work) = sandbox();
    let mock = rt.block_on(MockLlm::start(vec![
        text_reply("Nice to meet you."),
        text_reply("You said your name is Ada."),
    ]));
    let mut s = chat(&mock.base_url, &home, &work, &[]);
    enter(&mut s, "My name is Ada.");
    s.expect("Nice to meet you.").unwrap();
    s.expect("> ").unwrap();
    quit(s);
    // Again, in the same directory: the session comes back, replayed.
    let mut s = {
        let agent = format!(
            "'{}' --data-dir '{}'",
            agent_bin(),
            home.join("agent-data").display()
        );
        let mut command = Command::new(ACP);
        command
            .args(["chat", "--agent", &agent, "--continue"])
            .current_dir(&work)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_STATE_HOME", home.join(".state"))
            .env("NO_COLOR", "1")
            .env("TERM", "xterm")
            .env("OPENAI_BASE_URL", &mock.base_url)
            .env("ACP_AGENT_MODEL", "openai:mock-model");
        let mut s = Session::spawn(command).unwrap();
        s.get_process_mut().set_window_size(100, 40).unwrap();
        s.set_expect_timeout(Some(Duration::from_secs(30)));
        s
    };
    let banner = s.expect("Ctrl-D quits.").unwrap();
    let shown = String::from_utf8_lossy(banner.before()).into_owned();
    let asked = shown.find("> My name is Ada.");
    let answered = shown.find("Nice to meet you.");
    assert!(
        asked.is_some() && answered > asked,
        "the history is not shown: {shown}"
    );
    s.expect("> ").unwrap();
    // And the conversation goes on in it: the model sees the earlier turn.
    enter(&mut s, "What is my name?");
    s.expect("You said your name is Ada.").unwrap();
    s.expect("> ").unwrap();
    quit(s);
    let requests = mock.requests();
    let last = requests.last().unwrap().to_string();
    assert!(last.contains("My name is Ada."), "{last}");
}
