//! The agent in our own client: `acp exec --agent "<acp-agent> --data-dir
//! <tmp>"` against the mock model server (acp-agent's test support), in a
//! temporary HOME with a cleared environment. Files and commands go through
//! `acp` (it offers `fs/*` and `terminal/*`). A model failure or a damaged
//! store makes `acp exec` exit non-zero with the agent's message.
//!
//! Both programs are binaries of this crate built from their own `main.rs`
//! (see Cargo.toml), so cargo has built them before these tests run.

use crate::support;

use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use support::*;

/// The `acp` binary, built from acp-cli's main.rs.
const ACP: &str = env!("CARGO_BIN_EXE_acp-e2e-acp");

struct Exec {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `acp exec ARGS… PROMPT` in `work`, with the agent keeping its data
/// in `home/agent-data`, against the model server at `base_url`; the
/// environment holds PATH, HOME and the model settings only.
async fn acp_exec(base_url: &str, home: &Path, work: &Path, args: &[&str], prompt: &str) -> Exec {
    let agent = format!(
        "'{}' --data-dir '{}'",
        agent_bin(),
        home.join("agent-data").display()
    );
    let mut cmd = tokio::process::Command::new(ACP);
    cmd.arg("exec")
        .arg("--agent")
        .arg(&agent)
        .args(args)
        .arg(prompt)
        .current_dir(work)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("OPENAI_BASE_URL", base_url)
        .env("ACP_AGENT_MODEL", "openai:mock-model")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("acp exec finishes within 60 s")
        .unwrap();
    Exec {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A temporary HOME and, inside it, the project directory.
fn sandbox() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let home = canonical(dir.path());
    let work = home.join("project");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("hello.txt"), "hello world\n").unwrap();
    (dir, home, work)
}

#[tokio::test]
async fn acp_exec_streams_the_answer_and_runs_tools_through_acp() {
    let (_dir, home, work) = sandbox();
    let mut first = vec![text("Let me edit. ")];
    first.extend(tool_call(
        0,
        "e1",
        "edit_file",
        r#"{"path":"hello.txt","old_string":"world","new_string":"ACP"}"#,
        3,
    ));
    first.extend([finish("tool_calls"), done()]);
    let mock = MockLlm::start(vec![
        Reply::Sse(first),
        tool_reply("r1", "run_command", json!({"command": "cat hello.txt"})),
        text_reply("Done."),
    ])
    .await;
    let out = acp_exec(
        &mock.base_url,
        &home,
        &work,
        &["--approve-all"],
        "Change world to ACP",
    )
    .await;
    let report = format!("--- stdout\n{}\n--- stderr\n{}", out.stdout, out.stderr);
    assert_eq!(out.code, 0, "{report}");
    assert_eq!(out.stdout, "Let me edit. Done.\n", "{report}");
    for line in [
        "[session] sess-",
        "[tool] Edit hello.txt (edit, pending)",
        "[permission] Edit hello.txt: allowed",
        "[tool] Edit hello.txt: completed",
        "hello.txt (+1 -1)",
        "[tool] Run `cat hello.txt` (execute, pending)",
        "[permission] Run `cat hello.txt`: allowed",
        "[tool] Run `cat hello.txt`: completed",
    ] {
        assert!(out.stderr.contains(line), "missing {line:?}\n{report}");
    }
    assert_eq!(
        std::fs::read_to_string(work.join("hello.txt")).unwrap(),
        "hello ACP\n"
    );
    // The command ran in a terminal of acp's, in the project directory.
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 3);
    let results = tool_results(&reqs[2]);
    assert!(
        results[1].contains("Exit code: 0") && results[1].contains("hello ACP"),
        "{results:?}"
    );
}

#[tokio::test]
async fn acp_exec_deny_all_leaves_the_file_and_exits_5() {
    let (_dir, home, work) = sandbox();
    let mock = MockLlm::start(vec![
        tool_reply(
            "w1",
            "write_file",
            json!({"path": "hello.txt", "content": "overwritten\n"}),
        ),
        text_reply("The user declined."),
    ])
    .await;
    let out = acp_exec(
        &mock.base_url,
        &home,
        &work,
        &["--deny-all"],
        "Overwrite hello.txt",
    )
    .await;
    let report = format!("--- stdout\n{}\n--- stderr\n{}", out.stdout, out.stderr);
    assert_eq!(out.code, 5, "{report}");
    assert_eq!(out.stdout, "The user declined.\n", "{report}");
    assert!(
        out.stderr.contains("[permission] Write hello.txt: denied"),
        "{report}"
    );
    assert!(
        out.stderr.contains("[tool] Write hello.txt: failed"),
        "{report}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("hello.txt")).unwrap(),
        "hello world\n"
    );
    let results = tool_results(&mock.requests()[1]);
    assert!(results[0].contains("rejected"), "{results:?}");
}

#[tokio::test]
async fn a_model_failure_makes_acp_exec_exit_1_with_the_providers_message() {
    let (_dir, home, work) = sandbox();
    let mock = MockLlm::start(vec![Reply::Status(
        401,
        error_body("Incorrect API key provided"),
    )])
    .await;
    let out = acp_exec(&mock.base_url, &home, &work, &[], "hi").await;
    let report = format!("--- stdout\n{}\n--- stderr\n{}", out.stdout, out.stderr);
    assert_eq!(out.code, 1, "{report}");
    assert!(
        out.stderr.contains(
            "acp: the agent answered session/prompt with an error: the model server answered \
             HTTP 401: Incorrect API key provided (code -32603)"
        ),
        "{report}"
    );
    assert!(
        out.stdout
            .contains("⚠️ The turn stopped: the model server answered HTTP 401"),
        "{report}"
    );
}

#[tokio::test]
async fn a_model_server_that_is_not_running_makes_acp_exec_exit_1() {
    let (_dir, home, work) = sandbox();
    let url = refusing_base_url();
    let out = acp_exec(&url, &home, &work, &[], "hi").await;
    let report = format!("--- stdout\n{}\n--- stderr\n{}", out.stdout, out.stderr);
    assert_eq!(out.code, 1, "{report}");
    assert!(
        out.stderr.contains(
            "acp: the agent answered session/prompt with an error: could not connect to the model server: "
        ),
        "{report}"
    );
}

#[tokio::test]
async fn a_damaged_store_makes_acp_exec_exit_1_saying_what_to_do() {
    let (_dir, home, work) = sandbox();
    let data = home.join("agent-data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("sessions.sqlite3"), b"").unwrap();
    let mock = MockLlm::start(vec![text_reply("never")]).await;
    let out = acp_exec(&mock.base_url, &home, &work, &[], "hi").await;
    let report = format!("--- stdout\n{}\n--- stderr\n{}", out.stdout, out.stderr);
    assert_eq!(out.code, 1, "{report}");
    assert!(
        out.stderr.contains(&format!(
            "acp: the agent answered session/new with an error: The session store {} is empty (0 bytes): \
             the sessions it held are gone.",
            data.join("sessions.sqlite3").display()
        )),
        "{report}"
    );
    assert!(
        out.stderr.contains("acp-agent --recover-store --data-dir"),
        "{report}"
    );
    assert!(mock.requests().is_empty());
}
