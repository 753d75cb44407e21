//! `run_command`: a shell command in the session's working directory, in a
//! client terminal when the client offers terminals, otherwise in a terminal
//! of the agent's own (`acp-host`, the code `acp` runs terminals with), whose
//! output is streamed into the tool call. Cancelling the turn kills the
//! command and everything it started.

use super::{AskError, ToolEnv, ToolInput, ToolOutcome, code_block, typed};
use crate::llm::ToolSpec;
use acp::schema::*;
use acp_host::Terminals;
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;

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

/// Runs `command` with a time limit of `timeout`: in a client terminal when
/// the client offers terminals, else in one of the agent's own
/// ([`super::Local`]).
pub(super) async fn run(
    env: &ToolEnv,
    command: &str,
    timeout: Duration,
    call_id: &ToolCallId,
) -> ToolOutcome {
    let host = if env.client_terminal {
        match env.editor() {
            Ok(conn) => Host::Client(env, conn),
            Err(e) => return ToolOutcome::fail(format!("could not start the command: {e}")),
        }
    } else {
        match env.local.terminals() {
            Ok(terminals) => Host::Local(terminals),
            Err(e) => return ToolOutcome::fail(format!("could not start the command: {e}")),
        }
    };
    run_in(env, host, command, timeout, call_id).await
}

/// Where a command runs: both speak `terminal/*`. Requests to a client
/// terminal end with the turn's cancel or an over-long answer
/// ([`ToolEnv::ask`]); the clean-up after a cancel or a timeout (kill,
/// release) is given up after [`CLEANUP_WAIT`](super::CLEANUP_WAIT).
#[derive(Clone, Copy)]
enum Host<'a> {
    Client(&'a ToolEnv, &'a acp::AgentSideConnection),
    Local(&'a Terminals),
}

/// The message of a failed terminal call.
fn message(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl Host<'_> {
    async fn create(&self, req: CreateTerminalRequest) -> Result<TerminalId, String> {
        let response = match self {
            Host::Client(env, conn) => {
                let session = req.session_id.clone();
                let owned = (*conn).clone();
                let mut call = Box::pin(async move { owned.create_terminal(req).await });
                match env.ask(&mut call).await {
                    Ok(response) => response,
                    Err(AskError::Cancelled) => {
                        // The editor may have started the command already.
                        // Its answer is still awaited (the request is not
                        // withdrawn), off the turn so the cancel is not held
                        // up, and the terminal it names is ended, not leaked.
                        let (env, conn) = ((*env).clone(), (*conn).clone());
                        tokio::spawn(async move {
                            if let Ok(response) = env.ask_to_clean_up(call).await {
                                let host = Host::Client(&env, &conn);
                                let id = response.terminal_id;
                                host.kill(KillTerminalRequest::new(session.clone(), id.clone()))
                                    .await;
                                host.release(ReleaseTerminalRequest::new(session, id)).await;
                            }
                        });
                        return Err(AskError::Cancelled.to_string());
                    }
                    Err(e) => return Err(message(e)),
                }
            }
            Host::Local(t) => t.create(req).await.map_err(|e| e.message)?,
        };
        Ok(response.terminal_id)
    }

    async fn wait(&self, req: WaitForTerminalExitRequest) -> Option<TerminalExitStatus> {
        match self {
            Host::Client(env, conn) => env.ask(conn.wait_for_terminal_exit(req)).await.ok(),
            Host::Local(t) => t.wait_for_exit(req).await.ok(),
        }
        .map(|r| r.exit_status())
    }

    async fn kill(&self, req: KillTerminalRequest) {
        let _ = match self {
            Host::Client(env, conn) => env
                .ask_to_clean_up(conn.kill_terminal(req))
                .await
                .map(|_| ())
                .map_err(message),
            Host::Local(t) => t.kill(req).await.map(|_| ()).map_err(|e| e.message),
        };
    }

    async fn output(&self, req: TerminalOutputRequest) -> Result<TerminalOutputResponse, String> {
        match self {
            Host::Client(env, conn) => env.ask(conn.terminal_output(req)).await.map_err(message),
            Host::Local(t) => t.output(&req).map_err(|e| e.message),
        }
    }

    async fn release(&self, req: ReleaseTerminalRequest) {
        let _ = match self {
            Host::Client(env, conn) => env
                .ask_to_clean_up(conn.release_terminal(req))
                .await
                .map(|_| ())
                .map_err(message),
            Host::Local(t) => t.release(req).await.map(|_| ()).map_err(|e| e.message),
        };
    }
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

/// Runs `command` in a terminal of `host`. A client terminal is embedded in
/// the tool call (the client shows it); the output of a local one is
/// streamed into the tool call as it grows.
async fn run_in(
    env: &ToolEnv,
    host: Host<'_>,
    command: &str,
    timeout: Duration,
    call_id: &ToolCallId,
) -> ToolOutcome {
    let session = &env.session_id;
    let req = CreateTerminalRequest::new(session.clone(), "sh")
        .args(vec!["-c".to_string(), command.to_string()])
        .cwd(env.cwd.display().to_string())
        .output_byte_limit(MAX_COMMAND_OUTPUT as u64);
    let terminal_id = match host.create(req).await {
        Ok(id) => id,
        Err(e) => {
            return ToolOutcome::fail(format!("could not start the command in a terminal: {e}"));
        }
    };
    let embed = match host {
        Host::Client(..) => vec![ToolCallContent::Terminal(Terminal::new(
            terminal_id.clone(),
        ))],
        Host::Local(_) => vec![],
    };
    if !embed.is_empty() {
        update(env, call_id, embed.clone()).await;
    }
    let wait = host.wait(WaitForTerminalExitRequest::new(
        session.clone(),
        terminal_id.clone(),
    ));
    tokio::pin!(wait);
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut ticker = tokio::time::interval(Duration::from_millis(250));
    let mut shown = String::new();
    let mut note = None;
    let mut cancelled = false;
    let exit = loop {
        tokio::select! {
            r = &mut wait => break r,
            _ = env.cancel.cancelled() => { cancelled = true; break None }
            _ = &mut deadline => {
                note = Some(format!("The command timed out after {}s and was killed.", timeout.as_secs()));
                break None;
            }
            _ = ticker.tick(), if embed.is_empty() => {
                let req = TerminalOutputRequest::new(session.clone(), terminal_id.clone());
                if let Ok(out) = host.output(req).await && out.output != shown {
                    shown = out.output;
                    update(env, call_id, vec![code_block(&shown, usize::MAX)]).await;
                }
            }
        }
    };
    // The wait itself ends with the cancel, maybe before the branch above.
    cancelled |= exit.is_none() && env.cancel.is_cancelled();
    if exit.is_none() {
        host.kill(KillTerminalRequest::new(
            session.clone(),
            terminal_id.clone(),
        ))
        .await;
    }
    let output = host
        .output(TerminalOutputRequest::new(
            session.clone(),
            terminal_id.clone(),
        ))
        .await;
    host.release(ReleaseTerminalRequest::new(session.clone(), terminal_id))
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
    let (ok, exit_line) = describe_exit(exit.or(status).as_ref(), note);
    let content = if embed.is_empty() {
        vec![code_block(
            &command_report(&exit_line, &text, truncated),
            16000,
        )]
    } else {
        embed
    };
    ToolOutcome {
        ok,
        for_model: command_report(&exit_line, &plain_text(&text), truncated),
        content,
        cancelled: false,
    }
}

/// Terminal output as the model is given it: what a terminal would show of
/// it, as plain text. Control sequences (colours, cursor moves, window
/// titles) are dropped; `\r\n` (a pty's line end) becomes `\n`; a line
/// rewritten in place after a `\r` (a progress bar) keeps only what was
/// written last, and a backspace takes back the character before it. The
/// user sees the output untouched (in the editor's terminal, or in the tool
/// call).
pub fn plain_text(output: &str) -> String {
    /// Collects the text a terminal would print.
    #[derive(Default)]
    struct Screen {
        text: String,
        /// Where the current line starts in `text`.
        line_start: usize,
        /// A `\r` was seen: the next character overwrites the line.
        carriage_return: bool,
    }
    impl vte::Perform for Screen {
        fn print(&mut self, c: char) {
            if std::mem::take(&mut self.carriage_return) {
                self.text.truncate(self.line_start);
            }
            self.text.push(c);
        }
        fn execute(&mut self, byte: u8) {
            match byte {
                b'\n' => {
                    self.carriage_return = false;
                    self.text.push('\n');
                    self.line_start = self.text.len();
                }
                b'\r' => self.carriage_return = true,
                b'\t' => self.print('\t'),
                // Backspace: the character before goes.
                0x08 if self.text.len() > self.line_start => {
                    self.text.pop();
                }
                _ => {}
            }
        }
    }
    let mut screen = Screen::default();
    vte::Parser::new().advance(&mut screen, output.as_bytes());
    screen.text
}

/// Replaces the tool call's content.
async fn update(env: &ToolEnv, call_id: &ToolCallId, content: Vec<ToolCallContent>) {
    let _ = env
        .out
        .update(
            &env.session_id,
            ToolCallUpdate::new(call_id.clone()).content(content).into(),
        )
        .await;
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

#[cfg(test)]
mod tests {
    use super::plain_text;

    #[test]
    fn terminal_output_is_plain_text_for_the_model() {
        // A pty's line ends, colours and a window title.
        assert_eq!(
            plain_text("\x1b]0;title\x07\x1b[1;32mok\x1b[0m 1\r\nnext\r\n"),
            "ok 1\nnext\n"
        );
        // A progress bar rewritten in place keeps its last state; tabs stay.
        assert_eq!(
            plain_text("10%\r50%\r100%\r\ndone\tyes\n"),
            "100%\ndone\tyes\n"
        );
        // Cursor moves and erases are dropped; a backspace takes one back.
        assert_eq!(plain_text("ab\x08c\x1b[2K\x1b[1A\n"), "ac\n");
        // Text without control sequences is unchanged, whatever its script.
        assert_eq!(plain_text("héllo wörld ✓\n"), "héllo wörld ✓\n");
        assert_eq!(plain_text(""), "");
    }
}
