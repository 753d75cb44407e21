//! `acp-hostile-agent`: an ACP agent that tries what a hostile agent would,
//! a **test fixture** for the integration tests of `acp`'s host (files,
//! terminals, policies, sandbox). Not meant for end users.
//!
//! A prompt is a list of steps separated by ` ;; `, run in order; each
//! step's result is one message chunk ending in a newline (errors as
//! `error CODE: MESSAGE`). No step asks permission unless it says so.
//!
//! | step | what it does |
//! | ---- | ------------ |
//! | `caps` | `caps: read=B write=B terminal=B`, the client's capabilities |
//! | `grant KIND [PATH…]` | asks permission for a tool call of KIND naming PATHs; `granted` or `rejected` |
//! | `read PATH [LINE [LIMIT]]` | `fs/read_text_file`; `read N bytes` or the error |
//! | `show PATH` | `fs/read_text_file`; the content itself |
//! | `write PATH TEXT…` | `fs/write_text_file`; `wrote` or the error |
//! | `write-big PATH BYTES CHAR` | writes BYTES copies of the character CHAR |
//! | `run [--cwd DIR] CMD…` | `sh -c CMD` in a terminal; `exit: CODE` then the output |
//! | `escape MODE DIR` | a terminal whose command leaves two processes behind (one ignoring SIGTERM, one after `setsid`) and exits; once both wrote their pid to `DIR/pids`, MODE `kill` kills the terminal, `release` releases it, `leave` leaves it running; then `survivors: N` counts the live ones (`leave`: `left running`) |
//!
//! NUL bytes in paths are written `\0`.

use acp::schema::*;
use acp::{Agent, AgentSideConnection, NotificationContext, RequestContext, Transport};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

struct Hostile {
    conn: AgentSideConnection,
    caps: Mutex<ClientCapabilities>,
}

fn failure(e: &acp::ConnectionError) -> String {
    match e.remote() {
        Some(err) => format!("error {}: {}", err.code.0, err.message),
        None => format!("error: {e}"),
    }
}

use acp_host::is_alive as alive;

/// The pids in `file` once it holds `count` of them (a minute at most).
fn wait_for_pids(file: &Path, count: usize) -> Vec<i32> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let pids: Vec<i32> = std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.len() >= count || Instant::now() > deadline {
            return pids;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

impl Hostile {
    async fn step(&self, s: &SessionId, step: &str) -> String {
        let words: Vec<&str> = step.split_whitespace().collect();
        let arg = |i: usize| words.get(i).copied().unwrap_or("").replace("\\0", "\0");
        let rest = |i: usize| words.get(i..).map(|w| w.join(" ")).unwrap_or_default();
        match words.first().copied().unwrap_or("") {
            "caps" => {
                let caps = self.caps.lock().unwrap().clone();
                format!(
                    "caps: read={} write={} terminal={}",
                    caps.fs.read_text_file, caps.fs.write_text_file, caps.terminal
                )
            }
            "grant" => {
                let locations = words[2.min(words.len())..]
                    .iter()
                    .map(|p| ToolCallLocation::new(p.to_string()))
                    .collect::<Vec<_>>();
                let call = ToolCall::new("call-g", format!("{} {}", arg(1), rest(2)))
                    .kind(ToolKind::from(arg(1).as_str()))
                    .status(ToolCallStatus::Pending)
                    .locations(locations);
                let _ = self
                    .conn
                    .session_notification(SessionNotification::new(
                        s.clone(),
                        SessionUpdate::ToolCall(call),
                    ))
                    .await;
                let options = vec![
                    PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
                    PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
                ];
                let request = RequestPermissionRequest::new(
                    s.clone(),
                    ToolCallUpdate::new("call-g"),
                    options,
                );
                match self.conn.request_permission(request).await {
                    Ok(r)
                        if r.outcome
                            .selected_option()
                            .is_some_and(|o| o.as_str() == "allow") =>
                    {
                        "granted".into()
                    }
                    Ok(_) => "rejected".into(),
                    Err(e) => failure(&e),
                }
            }
            "read" | "show" => {
                let mut request = ReadTextFileRequest::new(s.clone(), arg(1));
                if let Ok(line) = arg(2).parse::<u32>() {
                    request = request.line(line);
                }
                if let Ok(limit) = arg(3).parse::<u32>() {
                    request = request.limit(limit);
                }
                match self.conn.read_text_file(request).await {
                    Ok(r) if words[0] == "show" => r.content.trim_end().to_owned(),
                    Ok(r) => format!("read {} bytes", r.content.len()),
                    Err(e) => failure(&e),
                }
            }
            "write" | "write-big" => {
                let content = if words[0] == "write" {
                    rest(2)
                } else {
                    let n: usize = arg(2).parse().unwrap_or(0);
                    arg(3).repeat(n)
                };
                let request = WriteTextFileRequest::new(s.clone(), arg(1), content);
                match self.conn.write_text_file(request).await {
                    Ok(_) => "wrote".into(),
                    Err(e) => failure(&e),
                }
            }
            "run" => {
                let (cwd, start) = if arg(1) == "--cwd" {
                    (Some(arg(2)), 3)
                } else {
                    (None, 1)
                };
                let mut request = CreateTerminalRequest::new(s.clone(), "sh")
                    .args(vec!["-c".into(), rest(start)]);
                if let Some(cwd) = cwd {
                    request = request.cwd(cwd);
                }
                match self.run(s, request).await {
                    Ok(text) => text,
                    Err(e) => failure(&e),
                }
            }
            "escape" => match self.escape(s, &arg(1), Path::new(&arg(2))).await {
                Ok(text) => text,
                Err(e) => failure(&e),
            },
            other => format!("unknown step {other:?}"),
        }
    }

    async fn run(
        &self,
        s: &SessionId,
        request: CreateTerminalRequest,
    ) -> Result<String, acp::ConnectionError> {
        let id = self.conn.create_terminal(request).await?.terminal_id;
        let exit = self
            .conn
            .wait_for_terminal_exit(WaitForTerminalExitRequest::new(s.clone(), id.clone()))
            .await?;
        let output = self
            .conn
            .terminal_output(TerminalOutputRequest::new(s.clone(), id.clone()))
            .await?;
        self.conn
            .release_terminal(ReleaseTerminalRequest::new(s.clone(), id))
            .await?;
        let code = exit
            .exit_code
            .map_or_else(|| format!("signal {:?}", exit.signal), |c| c.to_string());
        Ok(format!("exit: {code}\n{}", output.output.trim_end()))
    }

    async fn escape(
        &self,
        s: &SessionId,
        mode: &str,
        dir: &Path,
    ) -> Result<String, acp::ConnectionError> {
        let file = dir.join("pids");
        let script = format!(
            "sh -c 'trap \"\" TERM; echo $$ >> {f}; exec sleep 1000' & \
             setsid sh -c 'echo $$ >> {f}; exec sleep 1000' & exit 0",
            f = file.display()
        );
        let request = CreateTerminalRequest::new(s.clone(), "sh").args(vec!["-c".into(), script]);
        let id = self.conn.create_terminal(request).await?.terminal_id;
        self.conn
            .wait_for_terminal_exit(WaitForTerminalExitRequest::new(s.clone(), id.clone()))
            .await?;
        let pids = tokio::task::spawn_blocking(move || wait_for_pids(&file, 2))
            .await
            .unwrap_or_default();
        let before = pids.iter().filter(|&&p| alive(p)).count();
        match mode {
            "kill" => {
                self.conn
                    .kill_terminal(KillTerminalRequest::new(s.clone(), id.clone()))
                    .await?;
            }
            "release" => {
                self.conn
                    .release_terminal(ReleaseTerminalRequest::new(s.clone(), id.clone()))
                    .await?;
            }
            _ => return Ok(format!("left running: {before}")),
        }
        let after = pids.iter().filter(|&&p| alive(p)).count();
        if mode == "kill" {
            let _ = self
                .conn
                .release_terminal(ReleaseTerminalRequest::new(s.clone(), id))
                .await;
        }
        Ok(format!("alive before: {before}, survivors: {after}"))
    }
}

impl Agent for Hostile {
    async fn initialize(
        &self,
        request: InitializeRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<InitializeResponse, Error> {
        *self.caps.lock().unwrap() = request.client_capabilities;
        Ok(InitializeResponse::new(ProtocolVersion::V1)
            .agent_info(Implementation::new("acp-hostile-agent", "0.1.0")))
    }

    async fn new_session(
        &self,
        _: NewSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<NewSessionResponse, Error> {
        Ok(NewSessionResponse::new("hostile-1"))
    }

    async fn prompt(
        &self,
        req: PromptRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        let text = req
            .prompt
            .iter()
            .find_map(|b| b.as_text())
            .unwrap_or("")
            .to_owned();
        for step in text.split(" ;; ") {
            let said = self.step(&req.session_id, step.trim()).await;
            let _ = self
                .conn
                .session_notification(SessionNotification::new(
                    req.session_id.clone(),
                    SessionUpdate::agent_message(format!("{said}\n")),
                ))
                .await;
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }

    async fn cancel(
        &self,
        _: CancelNotification,
        _cx: NotificationContext<AgentSide>,
    ) -> Result<(), Error> {
        Ok(())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let result = AgentSideConnection::serve(Transport::stdio(), |conn| Hostile {
        conn,
        caps: Mutex::new(ClientCapabilities::new()),
    })
    .await;
    if let Err(e) = result {
        eprintln!("acp-hostile-agent: {e}");
        std::process::exit(1);
    }
}
