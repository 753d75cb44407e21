//! The agent in our own client: the built `acp` binary (crate `acp-cli`) runs
//! `acp exec --agent "<acp-agent> --data-dir <tmp>"` against the mock model
//! server, in a temporary HOME with a cleared environment. Files and commands
//! go through `acp` (it offers `fs/*` and `terminal/*`).
//!
//! `acp` is not a target of this crate. It is looked for in the target
//! directory these tests were built in (`current_exe()/../..`), after one
//! `$CARGO build -p acp-cli --bin acp` per test binary, so that it is fresh;
//! if that build fails, an `acp` already there is used.

mod support;

use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;
use support::*;

/// The `acp` binary, built once per test binary (other tests wait for it).
fn acp_binary() -> &'static Path {
    static ACP: OnceLock<PathBuf> = OnceLock::new();
    ACP.get_or_init(|| {
        // …/<target>/<profile>/deps/<this test> → …/<target>/<profile>/acp
        let exe = std::env::current_exe().unwrap();
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("the test binary lies in <target>/<profile>/deps");
        let target_dir = profile_dir.parent().expect("a target directory");
        let acp = profile_dir.join(format!("acp{}", std::env::consts::EXE_SUFFIX));
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = std::process::Command::new(cargo);
        build
            .args(["build", "-p", "acp-cli", "--bin", "acp"])
            .env("CARGO_TARGET_DIR", target_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        let out = build.output().expect("cargo runs");
        if !out.status.success() {
            assert!(
                acp.is_file(),
                "could not build acp:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            eprintln!("warning: `cargo build -p acp-cli` failed; using the existing {acp:?}");
        }
        assert!(acp.is_file(), "no acp at {acp:?} after building it");
        acp
    })
}

struct Exec {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `acp exec ARGS… PROMPT` in `work`, with the agent keeping its data
/// in `data`, against `mock`; the environment holds PATH, HOME and the model
/// settings only.
async fn acp_exec(mock: &MockLlm, home: &Path, work: &Path, args: &[&str], prompt: &str) -> Exec {
    let agent = format!(
        "'{}' --data-dir '{}'",
        env!("CARGO_BIN_EXE_acp-agent"),
        home.join("agent-data").display()
    );
    let mut cmd = tokio::process::Command::new(acp_binary());
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
        .env("OPENAI_BASE_URL", &mock.base_url)
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
        &mock,
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
    let out = acp_exec(&mock, &home, &work, &["--deny-all"], "Overwrite hello.txt").await;
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
