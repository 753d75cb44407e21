//! End-to-end runs of the `client` and `echo_agent` examples as real processes.
//!
//! `cargo test` builds the examples next to the test binary's own directory:
//! `target/<profile>/deps/<this test>` and `target/<profile>/examples/<name>`.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The path of a built example binary.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test binary lives in target/<profile>/deps");
    let path = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} not found: build the examples (`cargo test` does)",
        path.display()
    );
    path
}

/// Quotes a path as one shell word, for `AgentCommand::parse`.
fn shell_quote(path: &std::path::Path) -> String {
    format!("'{}'", path.to_string_lossy().replace('\'', r"'\''"))
}

fn client_command(prompt: &[&str]) -> Command {
    let mut command = Command::new(example("client"));
    command
        .arg(shell_quote(&example("echo_agent")))
        .arg("--")
        .args(prompt)
        .stdin(Stdio::null());
    command
}

/// Waits for the child, failing the test if it takes too long.
fn wait_with_timeout(child: std::process::Child, limit: Duration) -> Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(output) => output.expect("wait for the client"),
        Err(_) => {
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
            panic!("the client did not finish within {limit:?}");
        }
    }
}

#[test]
fn client_prints_the_echo_of_its_prompt() {
    let child = client_command(&["hello", "world"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the client example");
    let output = wait_with_timeout(child, Duration::from_secs(30));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "client failed: {stderr}");
    assert_eq!(stdout, "hello world\n", "stderr: {stderr}");
    assert!(stderr.contains("stop reason: end_turn"), "stderr: {stderr}");
}

#[test]
fn ctrl_c_cancels_the_turn() {
    // 200 words at 30 ms each would take 6 s; the interrupt ends it early.
    let words: Vec<String> = (1..=200).map(|n| format!("w{n}")).collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let mut child = client_command(&words)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the client example");

    // Wait until the first word has streamed through, then interrupt.
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 2];
    stdout.read_exact(&mut first).expect("first streamed bytes");
    assert_eq!(&first, b"w1");
    let started = Instant::now();
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).expect("send SIGINT");

    let output = wait_with_timeout(child, Duration::from_secs(30));
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).expect("rest of stdout");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "client failed: {stderr}");
    assert!(
        stderr.contains("stop reason: cancelled"),
        "stderr: {stderr}"
    );
    assert!(
        !rest.contains("w200"),
        "the whole prompt was echoed despite the cancel"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn the_echo_agent_refuses_a_prompt_for_a_session_it_did_not_create() {
    use std::io::{BufRead, BufReader, Write};
    let mut agent = Command::new(example("echo_agent"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the echo agent");
    let mut stdin = agent.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(agent.stdout.take().expect("stdout"));
    let mut call = |line: &str| {
        writeln!(stdin, "{line}").expect("write");
        stdin.flush().expect("flush");
        let mut answer = String::new();
        stdout.read_line(&mut answer).expect("read");
        answer.trim_end().to_owned()
    };
    assert_eq!(
        call(
            r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"echo-9","prompt":[{"type":"text","text":"hi"}]}}"#
        ),
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found","data":"no session echo-9 on this agent"}}"#
    );
    assert_eq!(
        call(
            r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#
        ),
        r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"echo-1"}}"#
    );
    assert_eq!(
        call(
            r#"{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"echo-1","prompt":[]}}"#
        ),
        r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#
    );
    drop(stdin);
    let status = wait_with_timeout(agent, Duration::from_secs(30)).status;
    assert!(status.success(), "the agent exits at the end of its input");
}
