//! Tests of spawning and stopping agent processes with `acp::process`.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use acp::process::{AgentCommand, AgentProcess, CommandLineError, STDERR_TAIL_LINES};
use acp::schema::{ErrorCode, ExtRequest, InitializeRequest, ProtocolVersion};
use acp::{Client, ConnectionError, ConnectionOptions, Direction};
use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;
use tokio::sync::mpsc;

/// Upper bound for anything that should happen "soon"; generous because test
/// machines can be slow and busy.
const PATIENCE: Duration = Duration::from_secs(30);

fn sh(script: &str) -> AgentCommand {
    AgentCommand::new("/bin/sh").arg("-c").arg(script)
}

/// Polls `done` until it holds or [`PATIENCE`] runs out.
async fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + PATIENCE;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    done()
}

/// Whether a process is gone: no such process, or a zombie that only waits
/// to be reaped by whoever adopted it.
fn is_gone(pid: i32) -> bool {
    if kill(Pid::from_raw(pid), None) == Err(Errno::ESRCH) {
        return true;
    }
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the parenthesised command name.
    stat.rsplit_once(')')
        .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']))
}

/// What the script wrote to its standard output, line by line (seen through
/// the connection's tap: the engine reads the script's output as it would an
/// agent's, and answers its non-JSON lines with parse errors, which the
/// scripts here ignore).
struct Lines(mpsc::UnboundedReceiver<String>);

impl Lines {
    async fn next(&mut self) -> Option<String> {
        tokio::time::timeout(PATIENCE, self.0.recv())
            .await
            .expect("a line from the script")
    }
}

/// Connects to `command` with a client that answers nothing, and returns the
/// script's output lines and the process.
fn spawn_script(command: AgentCommand) -> (Lines, AgentProcess) {
    let (tx, rx) = mpsc::unbounded_channel();
    let options = ConnectionOptions::default().tap(move |event| {
        if event.direction == Direction::Incoming {
            let _ = tx.send(event.text().into_owned());
        }
    });
    let process = command.connect(options, |_| Silent).expect("spawn");
    (Lines(rx), process)
}

/// A client with every default: answers -32601 to whatever the agent asks.
struct Silent;

impl Client for Silent {}

#[tokio::test]
async fn a_request_makes_a_round_trip_through_cat() {
    // `cat` sends our request back: our client answers it (-32601, it
    // handles no extension method), `cat` sends that answer back, and it
    // is the answer to our own request, which has the same id.
    let (_lines, mut process) = spawn_script(AgentCommand::new("cat"));
    assert!(process.id().is_some());
    let request = ExtRequest::new("_test/echo", &serde_json::json!({"n": 1})).unwrap();
    let err = tokio::time::timeout(PATIENCE, process.ext_method(request))
        .await
        .expect("an answer")
        .expect_err("nobody handles the method");
    assert_eq!(
        err.remote().map(|e| e.code),
        Some(ErrorCode::METHOD_NOT_FOUND),
        "{err}"
    );

    // Shutting down closes cat's input: it exits normally, without a signal.
    let status = tokio::time::timeout(PATIENCE, process.shutdown())
        .await
        .expect("cat exits")
        .expect("shutdown");
    assert!(status.success(), "{status:?}");
    assert!(process.try_wait().expect("try_wait").is_some());
    assert!(process.is_closed());
}

#[tokio::test]
async fn dropping_the_handle_closes_the_agents_input_first() {
    // An agent that exits at the end of its input, and leaves a mark when
    // it does: dropping the handle ends it that way, not with a signal.
    let dir = tempdir();
    let mark = dir.join("eof");
    let script = format!("cat >/dev/null; echo eof > '{}'", mark.display());
    let (_lines, process) = spawn_script(sh(&script).kill_grace(Duration::from_secs(20)));
    drop(process);
    assert!(
        eventually(|| std::fs::read_to_string(&mark).is_ok_and(|s| s == "eof\n")).await,
        "the agent never saw the end of its input"
    );
}

#[tokio::test]
async fn the_connection_ends_when_the_agent_exits() {
    let (_lines, mut process) = spawn_script(sh("exit 5"));
    tokio::time::timeout(PATIENCE, process.closed())
        .await
        .expect("the connection closes");
    let status = tokio::time::timeout(PATIENCE, process.wait())
        .await
        .expect("exits")
        .expect("wait");
    assert_eq!(status.code(), Some(5));
    let err = process
        .initialize(InitializeRequest::new(ProtocolVersion::V1))
        .await
        .expect_err("closed");
    assert!(matches!(err, ConnectionError::Closed), "{err:?}");
}

/// A fresh directory under the system's temp dir.
fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "acp-process-test-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test]
async fn stderr_lines_reach_the_callback_in_order() {
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = Arc::clone(&seen);
    let command = sh(
        "i=1; while [ $i -le 80 ]; do echo \"line $i\" >&2; i=$((i+1)); done; \
         printf 'no newline at end' >&2",
    )
    .on_stderr(move |line| sink.lock().expect("lock").push(line.to_owned()));
    let (_lines, mut process) = spawn_script(command);

    let status = tokio::time::timeout(PATIENCE, process.wait())
        .await
        .expect("script exits")
        .expect("wait");
    assert!(status.success());

    let mut expected: Vec<String> = (1..=80).map(|i| format!("line {i}")).collect();
    expected.push("no newline at end".to_owned());
    assert!(eventually(|| seen.lock().expect("lock").len() == expected.len()).await);
    assert_eq!(*seen.lock().expect("lock"), expected);

    let tail = process.stderr_tail();
    assert_eq!(tail.len(), STDERR_TAIL_LINES);
    assert_eq!(tail, expected[expected.len() - STDERR_TAIL_LINES..]);
}

#[tokio::test]
async fn stderr_goes_to_tracing_by_default() {
    // Only checks that the default handler does not get in the way.
    let (_lines, mut process) = spawn_script(sh("echo oops >&2; exit 3"));
    let status = tokio::time::timeout(PATIENCE, process.wait())
        .await
        .expect("script exits")
        .expect("wait");
    assert_eq!(status.code(), Some(3));
    assert!(eventually(|| process.stderr_tail() == ["oops"]).await);
}

#[tokio::test]
async fn dropping_the_process_kills_grandchildren() {
    let (mut lines, process) = spawn_script(sh("sleep 300 & echo $!; wait"));
    let grandchild: i32 = lines
        .next()
        .await
        .expect("grandchild pid")
        .parse()
        .expect("a pid");
    assert!(!is_gone(grandchild), "grandchild should be running");

    drop(process);
    assert!(
        eventually(|| is_gone(grandchild)).await,
        "grandchild survived"
    );
}

#[tokio::test]
async fn dropping_the_process_kills_grandchildren_that_ignore_sigterm() {
    let command =
        sh("trap '' TERM; sleep 300 & echo $!; wait").kill_grace(Duration::from_millis(200));
    let (mut lines, process) = spawn_script(command);
    let grandchild: i32 = lines
        .next()
        .await
        .expect("grandchild pid")
        .parse()
        .expect("a pid");
    assert!(!is_gone(grandchild), "grandchild should be running");

    drop(process);
    assert!(
        eventually(|| is_gone(grandchild)).await,
        "grandchild survived"
    );
}

#[tokio::test]
async fn shutdown_stops_a_cooperative_agent_with_sigterm() {
    // The agent does not exit at the end of its input: after the grace
    // period it gets SIGTERM, and obeys.
    let command = sh("echo ready; sleep 300").kill_grace(Duration::from_millis(300));
    let (mut lines, mut process) = spawn_script(command);
    assert_eq!(lines.next().await.as_deref(), Some("ready"));
    let status = tokio::time::timeout(PATIENCE, process.shutdown())
        .await
        .expect("shutdown finishes")
        .expect("shutdown");
    assert_eq!(
        status.signal(),
        Some(libc_signal(nix::sys::signal::Signal::SIGTERM))
    );
    assert_eq!(process.id(), None);
}

#[tokio::test]
async fn shutdown_kills_an_agent_that_ignores_sigterm() {
    let command = sh("trap '' TERM; echo ready; while :; do sleep 1; done")
        .kill_grace(Duration::from_millis(300));
    let (mut lines, mut process) = spawn_script(command);
    assert_eq!(lines.next().await.as_deref(), Some("ready"));
    let status = tokio::time::timeout(PATIENCE, process.shutdown())
        .await
        .expect("shutdown finishes")
        .expect("shutdown");
    assert_eq!(
        status.signal(),
        Some(libc_signal(nix::sys::signal::Signal::SIGKILL))
    );
    // The stdout pipe closes once everything in the group is gone.
    let eof = tokio::time::timeout(PATIENCE, lines.next()).await;
    assert_eq!(eof.expect("stdout closes"), None);
}

#[tokio::test]
async fn shutdown_after_exit_returns_the_status() {
    let (_lines, mut process) = spawn_script(sh("exit 7"));
    let status = tokio::time::timeout(PATIENCE, process.wait())
        .await
        .expect("script exits")
        .expect("wait");
    assert_eq!(status.code(), Some(7));
    let again = tokio::time::timeout(PATIENCE, process.shutdown())
        .await
        .expect("shutdown finishes")
        .expect("shutdown");
    assert_eq!(again.code(), Some(7));
}

#[tokio::test]
async fn kill_ends_the_group_at_once() {
    let (mut lines, mut process) = spawn_script(sh("trap '' TERM; sleep 300 & echo $!; wait"));
    let grandchild: i32 = lines
        .next()
        .await
        .expect("grandchild pid")
        .parse()
        .expect("a pid");
    process.kill().expect("kill");
    let status = tokio::time::timeout(PATIENCE, process.wait())
        .await
        .expect("killed agent exits")
        .expect("wait");
    assert_eq!(
        status.signal(),
        Some(libc_signal(nix::sys::signal::Signal::SIGKILL))
    );
    assert!(
        eventually(|| is_gone(grandchild)).await,
        "grandchild survived"
    );
    // Killing a group that is gone is not an error.
    assert!(eventually(|| process.kill().is_ok()).await);
}

#[tokio::test]
async fn environment_and_working_directory() {
    let dir = std::env::temp_dir().canonicalize().expect("temp dir");
    let command = sh("echo \"$ACP_TEST_A\"; echo \"$ACP_TEST_B\"; pwd")
        .env("ACP_TEST_A", "one")
        .envs([("ACP_TEST_B", "two words")])
        .current_dir(&dir);
    let (mut lines, mut process) = spawn_script(command);
    assert_eq!(lines.next().await.as_deref(), Some("one"));
    assert_eq!(lines.next().await.as_deref(), Some("two words"));
    let pwd = lines.next().await.expect("pwd");
    assert_eq!(std::path::Path::new(&pwd).canonicalize().expect("pwd"), dir);
    process.wait().await.expect("wait");
}

#[tokio::test]
async fn env_clear_starts_from_an_empty_environment() {
    assert!(std::env::var_os("PATH").is_some(), "test needs PATH set");
    let command = sh("echo \"${PATH:-unset}\"; echo \"$ONLY\"")
        .env_clear()
        .env("ONLY", "this");
    let (mut lines, mut process) = spawn_script(command);
    let path = lines.next().await.expect("path line");
    // Some shells set a default PATH of their own when it is unset, so only
    // check that ours was not inherited.
    assert_ne!(Some(path.as_str()), std::env::var("PATH").ok().as_deref());
    assert_eq!(lines.next().await.as_deref(), Some("this"));
    process.wait().await.expect("wait");
}

#[tokio::test]
async fn missing_program_is_not_found() {
    let err = AgentCommand::new("acp-test-no-such-program-7f3a")
        .connect(ConnectionOptions::default(), |_| Silent)
        .expect_err("must fail");
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    assert!(
        err.to_string().contains("acp-test-no-such-program-7f3a"),
        "message should name the program: {err}"
    );
}

#[test]
fn parse_splits_words_and_quotes() {
    let command = AgentCommand::parse(
        "npx -y @zed-industries/claude-code-acp --flag 'a b' \"c \\\" d\" e\\ f",
    )
    .expect("parse");
    assert_eq!(command.get_program(), "npx");
    let args: Vec<&str> = command
        .get_args()
        .iter()
        .map(|a| a.to_str().expect("utf-8"))
        .collect();
    assert_eq!(
        args,
        [
            "-y",
            "@zed-industries/claude-code-acp",
            "--flag",
            "a b",
            "c \" d",
            "e f"
        ]
    );
}

#[test]
fn parse_rejects_empty_and_unbalanced_lines() {
    assert_eq!(
        AgentCommand::parse("").unwrap_err(),
        CommandLineError::Empty
    );
    assert_eq!(
        AgentCommand::parse("   \t ").unwrap_err(),
        CommandLineError::Empty
    );
    assert_eq!(
        AgentCommand::parse("agent 'unterminated").unwrap_err(),
        CommandLineError::UnbalancedQuotes
    );
    assert_eq!(
        AgentCommand::parse("agent \"half").unwrap_err(),
        CommandLineError::UnbalancedQuotes
    );
}

#[tokio::test]
async fn parsed_command_runs() {
    let command =
        AgentCommand::parse("/bin/sh -c 'echo \"$0 $1\"' 'first arg' second").expect("parse");
    let (mut lines, mut process) = spawn_script(command);
    assert_eq!(lines.next().await.as_deref(), Some("first arg second"));
    process.wait().await.expect("wait");
}

fn libc_signal(signal: nix::sys::signal::Signal) -> i32 {
    signal as i32
}
