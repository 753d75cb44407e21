//! `run_command`: a shell command in the session's working directory, in a
//! client terminal when the client offers terminals, otherwise as a local
//! process group whose output is streamed into the tool call. Cancelling the
//! turn kills the command.

use super::{ToolEnv, ToolInput, ToolOutcome, code_block, typed};
use crate::llm::ToolSpec;
use acp::schema::*;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Most bytes of command output kept (the tail is kept).
pub const MAX_COMMAND_OUTPUT: usize = 64 * 1024;
/// What the model is told of a command the user cancelled.
const USER_CANCELLED: &str = "The user cancelled this tool call.";
/// Default time limit of a command, in seconds.
pub const DEFAULT_COMMAND_TIMEOUT: u64 = 600;

pub(super) fn spec() -> ToolSpec {
    ToolSpec {
        name: "run_command".into(),
        description: "Run a shell command (sh -c) in the working directory and return its exit status and output.".into(),
        parameters: json!({"type": "object", "properties": {
            "command": {"type": "string"},
            "timeout_secs": {"type": "integer", "description": "Time limit, default 600"}
        }, "required": ["command"]}),
    }
}

#[derive(Deserialize)]
struct CommandArgs {
    command: String,
    timeout_secs: Option<u64>,
}

pub(super) fn parse(value: Value) -> Result<ToolInput, String> {
    let a: CommandArgs = typed(value, "run_command")?;
    if a.command.trim().is_empty() {
        return Err("command must not be empty".into());
    }
    Ok(ToolInput::RunCommand {
        command: a.command,
        timeout_secs: a
            .timeout_secs
            .filter(|t| *t > 0)
            .unwrap_or(DEFAULT_COMMAND_TIMEOUT),
    })
}

/// Runs `command` with a time limit of `timeout`, where the client said.
pub(super) async fn run(
    env: &ToolEnv,
    command: &str,
    timeout: Duration,
    call_id: &ToolCallId,
) -> ToolOutcome {
    if env.client_terminal {
        run_in_client_terminal(env, command, timeout, call_id).await
    } else {
        run_locally(env, command, timeout, call_id).await
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn command_report(exit: &str, output: &str, truncated: bool) -> String {
    let mut s = format!("{exit}\n");
    if truncated {
        s.push_str("[output truncated; showing the end]\n");
    }
    if output.is_empty() {
        s.push_str("(no output)");
    } else {
        s.push_str(output);
    }
    s
}

async fn run_in_client_terminal(
    env: &ToolEnv,
    command: &str,
    timeout: Duration,
    call_id: &ToolCallId,
) -> ToolOutcome {
    let req = CreateTerminalRequest::new(env.session_id.clone(), "sh")
        .args(vec!["-c".to_string(), command.to_string()])
        .cwd(env.cwd.display().to_string())
        .output_byte_limit(MAX_COMMAND_OUTPUT as u64);
    let terminal_id = match env.conn.create_terminal(req).await {
        Ok(r) => r.terminal_id,
        Err(e) => {
            return ToolOutcome::fail(format!("could not start the command in a terminal: {e}"));
        }
    };
    let embed = vec![ToolCallContent::Terminal(Terminal::new(
        terminal_id.clone(),
    ))];
    let _ = env
        .conn
        .session_notification(SessionNotification::new(
            env.session_id.clone(),
            ToolCallUpdate::new(call_id.clone()).content(embed.clone()),
        ))
        .await;
    let wait = env
        .conn
        .wait_for_terminal_exit(WaitForTerminalExitRequest::new(
            env.session_id.clone(),
            terminal_id.clone(),
        ));
    let mut note = None;
    let mut cancelled = false;
    let exit = tokio::select! {
        r = wait => r.ok().map(|r| r.exit_status()),
        _ = env.cancel.cancelled() => { cancelled = true; None }
        _ = tokio::time::sleep(timeout) => { note = Some(format!("The command timed out after {}s and was killed.", timeout.as_secs())); None }
    };
    if exit.is_none() {
        let _ = env
            .conn
            .kill_terminal(KillTerminalRequest::new(
                env.session_id.clone(),
                terminal_id.clone(),
            ))
            .await;
    }
    let output = env
        .conn
        .terminal_output(TerminalOutputRequest::new(
            env.session_id.clone(),
            terminal_id.clone(),
        ))
        .await;
    let _ = env
        .conn
        .release_terminal(ReleaseTerminalRequest::new(
            env.session_id.clone(),
            terminal_id,
        ))
        .await;
    if cancelled {
        let mut o = ToolOutcome::cancelled(USER_CANCELLED);
        o.content = embed;
        return o;
    }
    let (text, truncated, status) = match output {
        Ok(o) => (o.output, o.truncated, o.exit_status),
        Err(e) => return ToolOutcome::fail(format!("could not read the terminal output: {e}")),
    };
    let status = exit.or(status);
    let (ok, exit_line) = describe_exit(status.as_ref(), note);
    ToolOutcome {
        ok,
        for_model: command_report(&exit_line, &text, truncated),
        content: embed,
        cancelled: false,
    }
}

fn describe_exit(status: Option<&TerminalExitStatus>, note: Option<String>) -> (bool, String) {
    if let Some(n) = note {
        return (false, n);
    }
    match status {
        Some(TerminalExitStatus {
            exit_code: Some(c), ..
        }) => (*c == 0, format!("Exit code: {c}")),
        Some(TerminalExitStatus {
            signal: Some(s), ..
        }) => (false, format!("Killed by signal {s}")),
        _ => (false, "The command ended with an unknown status.".into()),
    }
}

/// Output kept from a local command: the last [`MAX_COMMAND_OUTPUT`] bytes.
#[derive(Default)]
struct Tail {
    bytes: Vec<u8>,
    truncated: bool,
    changed: bool,
}

impl Tail {
    fn push(&mut self, b: &[u8]) {
        self.bytes.extend_from_slice(b);
        if self.bytes.len() > MAX_COMMAND_OUTPUT {
            let cut = self.bytes.len() - MAX_COMMAND_OUTPUT;
            self.bytes.drain(..cut);
            self.truncated = true;
        }
        self.changed = true;
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

/// Copies a command's output pipe into `tail` until it closes.
async fn read_into(mut pipe: impl AsyncRead + Unpin, tail: Arc<Mutex<Tail>>) {
    let mut buf = [0u8; 8192];
    while let Ok(n) = pipe.read(&mut buf).await {
        if n == 0 {
            break;
        }
        lock(&tail).push(&buf[..n]);
    }
}

async fn run_locally(
    env: &ToolEnv,
    command: &str,
    timeout: Duration,
    call_id: &ToolCallId,
) -> ToolOutcome {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(&env.cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return ToolOutcome::fail(format!("could not start sh: {e}")),
    };
    let pgid = child.id();
    let tail = Arc::new(Mutex::new(Tail::default()));
    let mut readers = Vec::new();
    if let Some(out) = child.stdout.take() {
        readers.push(tokio::spawn(read_into(out, tail.clone())));
    }
    if let Some(err) = child.stderr.take() {
        readers.push(tokio::spawn(read_into(err, tail.clone())));
    }
    let kill_group = || {
        if let Some(pid) = pgid {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    };
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut ticker = tokio::time::interval(Duration::from_millis(250));
    let mut note = None;
    let status = loop {
        tokio::select! {
            s = child.wait() => break s.ok(),
            _ = env.cancel.cancelled() => {
                kill_group();
                let _ = child.wait().await;
                for r in &readers { r.abort(); }
                return ToolOutcome::cancelled(USER_CANCELLED);
            }
            _ = &mut deadline => {
                kill_group();
                note = Some(format!("The command timed out after {}s and was killed.", timeout.as_secs()));
                break child.wait().await.ok();
            }
            _ = ticker.tick() => {
                let update = {
                    let mut t = lock(&tail);
                    if t.changed { t.changed = false; Some(t.text()) } else { None }
                };
                if let Some(text) = update {
                    let _ = env.conn.session_notification(SessionNotification::new(
                        env.session_id.clone(),
                        ToolCallUpdate::new(call_id.clone())
                            .content(vec![code_block(&text, usize::MAX)]),
                    )).await;
                }
            }
        }
    };
    // Background processes may keep the pipes open: give the readers a moment.
    kill_group();
    for r in readers {
        let _ = tokio::time::timeout(Duration::from_secs(2), r).await;
    }
    let t = lock(&tail);
    let text = t.text();
    let exit = status.map(|s| {
        use std::os::unix::process::ExitStatusExt;
        match (s.code(), s.signal()) {
            (Some(c), _) => TerminalExitStatus::exited(c as u32),
            (None, Some(sig)) => TerminalExitStatus::signaled(format!("{sig}")),
            _ => TerminalExitStatus::default(),
        }
    });
    let (ok, exit_line) = describe_exit(exit.as_ref(), note);
    let report = command_report(&exit_line, &text, t.truncated);
    ToolOutcome {
        ok,
        content: vec![code_block(&report, 16000)],
        for_model: report,
        cancelled: false,
    }
}
