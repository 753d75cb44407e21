//! `acp-test-agent`: a deterministic ACP agent, a **test fixture** for the
//! integration tests of `acp` (not for end users).
//!
//! What it does in a turn depends on the first word of the prompt's text:
//!
//! | prompt | behaviour |
//! | ------ | --------- |
//! | `stream` | streams "Hello, world!" in four chunks |
//! | `thought` | two thought chunks, then "Thought about it." |
//! | `plan` | a three-entry plan, then the plan with progress, then "Planned." |
//! | `tool` | an edit tool call with a location and a diff, in progress, completed |
//! | `permission [KIND]` | a tool call of KIND (default `edit`), then a permission request; reports the outcome |
//! | `read PATH [LINE [LIMIT]]` | `fs/read_text_file`; replies with the content or the error |
//! | `write PATH TEXT…` | `fs/write_text_file`; replies "wrote PATH" or the error |
//! | `terminal [--limit N] CMD…` | runs `sh -c CMD` through `terminal/*`; reports exit code, truncation and output |
//! | `slow` | "tick N" every 100 ms for 30 s; honours `session/cancel` (stop reason `cancelled`) |
//! | `crash` | one chunk, two stderr lines, then exits with status 3 mid-turn |
//! | `refuse` / `max-tokens` | ends with `refusal` / `max_tokens` |
//! | `error` | answers the prompt with an internal error |
//! | `blocks` | describes the prompt's content blocks |
//! | `elicit` | asks for input with `elicitation/create`; reports the action |
//! | `garbage` | writes a line that is not JSON to stdout, then "still here" |
//! | anything else | "You said: TEXT" |
//!
//! Environment: `ACP_TEST_AGENT_LOG=FILE` appends each method received to
//! FILE; `ACP_TEST_AGENT_REQUIRE_AUTH=1` makes `session/new` fail with
//! `auth_required` until `authenticate` with `test-login`;
//! `ACP_TEST_AGENT_PROTOCOL=N` answers `initialize` with version N;
//! `ACP_TEST_AGENT_EMBEDDED=1` advertises embedded context;
//! `ACP_TEST_AGENT_RESUME=1` advertises `session/resume`.

use acp::schema::*;
use acp::{Agent, AgentSideConnection, Transport};
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

struct TestAgent {
    conn: AgentSideConnection,
    sessions: AtomicU64,
    authenticated: AtomicBool,
    cwds: Mutex<std::collections::HashMap<SessionId, String>>,
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

fn log(event: &str) {
    if let Some(path) = std::env::var_os("ACP_TEST_AGENT_LOG")
        && let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        let _ = writeln!(file, "{event}");
    }
}

impl TestAgent {
    async fn send(
        &self,
        session: &SessionId,
        update: impl Into<SessionUpdate>,
    ) -> Result<(), Error> {
        self.conn
            .session_notification(SessionNotification::new(session.clone(), update))
            .await?;
        Ok(())
    }

    async fn say(&self, session: &SessionId, text: &str) -> Result<(), Error> {
        self.send(session, SessionUpdate::agent_message(text)).await
    }

    fn cwd(&self, session: &SessionId) -> String {
        self.cwds
            .lock()
            .unwrap()
            .get(session)
            .cloned()
            .unwrap_or_default()
    }

    async fn turn(&self, s: &SessionId, req: &PromptRequest) -> Result<StopReason, Error> {
        let text = req
            .prompt
            .iter()
            .find_map(|b| b.as_text())
            .unwrap_or("")
            .to_owned();
        let words: Vec<&str> = text.split_whitespace().collect();
        let arg = |i: usize| words.get(i).copied().unwrap_or("");
        match arg(0) {
            "stream" => {
                for chunk in ["Hello", ", ", "world", "!"] {
                    self.say(s, chunk).await?;
                }
            }
            "thought" => {
                self.send(s, SessionUpdate::agent_thought("Let me think. "))
                    .await?;
                self.send(s, SessionUpdate::agent_thought("Done thinking."))
                    .await?;
                self.say(s, "Thought about it.\n").await?;
            }
            "plan" => {
                let entries = |done: usize| {
                    ["Read the code", "Change it", "Run the tests"]
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            let status = if i < done {
                                PlanEntryStatus::Completed
                            } else if i == done {
                                PlanEntryStatus::InProgress
                            } else {
                                PlanEntryStatus::Pending
                            };
                            PlanEntry::new(*c, PlanEntryPriority::Medium, status)
                        })
                        .collect::<Vec<_>>()
                };
                self.send(s, SessionUpdate::Plan(Plan::new(entries(0))))
                    .await?;
                self.send(s, SessionUpdate::Plan(Plan::new(entries(2))))
                    .await?;
                self.say(s, "Planned.\n").await?;
            }
            "tool" => {
                let path = format!("{}/notes.txt", self.cwd(s));
                let call = ToolCall::new("call-1", "Edit notes.txt")
                    .kind(ToolKind::Edit)
                    .status(ToolCallStatus::Pending)
                    .locations(vec![ToolCallLocation::new(path.clone()).line(2u32)])
                    .content(vec![ToolCallContent::from(Diff::new(
                        path,
                        Some("one\ntwo\nthree\n".to_owned()),
                        "one\n2\nthree\nfour\n",
                    ))]);
                self.send(s, SessionUpdate::ToolCall(call)).await?;
                let update = ToolCallUpdate::new("call-1").status(ToolCallStatus::InProgress);
                self.send(s, SessionUpdate::ToolCallUpdate(update)).await?;
                let update = ToolCallUpdate::new("call-1").status(ToolCallStatus::Completed);
                self.send(s, SessionUpdate::ToolCallUpdate(update)).await?;
                self.say(s, "Edited.\n").await?;
            }
            "permission" => {
                let kind = ToolKind::from(if arg(1).is_empty() { "edit" } else { arg(1) });
                let call = ToolCall::new("call-p", "Remove build/")
                    .kind(kind)
                    .status(ToolCallStatus::Pending);
                self.send(s, SessionUpdate::ToolCall(call)).await?;
                let options = vec![
                    PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
                    PermissionOption::new(
                        "always",
                        "Always allow",
                        PermissionOptionKind::AllowAlways,
                    ),
                    PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
                    PermissionOption::new("never", "Never", PermissionOptionKind::RejectAlways),
                ];
                let request = RequestPermissionRequest::new(
                    s.clone(),
                    ToolCallUpdate::new("call-p"),
                    options,
                );
                let answer = self.conn.request_permission(request).await?;
                let (status, said) = match answer
                    .outcome
                    .selected_option()
                    .map(|o| o.as_str().to_owned())
                {
                    Some(id) if id == "allow" || id == "always" => {
                        (ToolCallStatus::Completed, format!("selected {id}"))
                    }
                    Some(id) => (ToolCallStatus::Failed, format!("selected {id}")),
                    None => (ToolCallStatus::Failed, "cancelled".to_owned()),
                };
                self.send(
                    s,
                    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new("call-p").status(status)),
                )
                .await?;
                self.say(s, &format!("permission: {said}\n")).await?;
            }
            "read" => {
                let mut request = ReadTextFileRequest::new(s.clone(), arg(1));
                if let Ok(line) = arg(2).parse::<u32>() {
                    request = request.line(line);
                }
                if let Ok(limit) = arg(3).parse::<u32>() {
                    request = request.limit(limit);
                }
                match self.conn.read_text_file(request).await {
                    Ok(r) => self.say(s, &r.content).await?,
                    Err(e) => self.say(s, &format!("error: {}\n", describe(&e))).await?,
                }
            }
            "write" => {
                let content = words.get(2..).map(|w| w.join(" ")).unwrap_or_default();
                let request = WriteTextFileRequest::new(s.clone(), arg(1), content);
                match self.conn.write_text_file(request).await {
                    Ok(_) => self.say(s, &format!("wrote {}\n", arg(1))).await?,
                    Err(e) => self.say(s, &format!("error: {}\n", describe(&e))).await?,
                }
            }
            "terminal" => {
                let (limit, start) = if arg(1) == "--limit" {
                    (arg(2).parse::<u64>().ok(), 3)
                } else {
                    (None, 1)
                };
                let script = words.get(start..).map(|w| w.join(" ")).unwrap_or_default();
                let mut request =
                    CreateTerminalRequest::new(s.clone(), "sh").args(vec!["-c".to_owned(), script]);
                if let Some(limit) = limit {
                    request = request.output_byte_limit(limit);
                }
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
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "none".into());
                self.say(
                    s,
                    &format!(
                        "exit: {code}\ntruncated: {}\noutput:\n{}",
                        output.truncated, output.output
                    ),
                )
                .await?;
            }
            "slow" => {
                let cancel = self.conn.cancellation(s);
                for tick in 1..=300 {
                    self.say(s, &format!("tick {tick}\n")).await?;
                    tokio::select! {
                        _ = cancel.cancelled() => return Ok(StopReason::Cancelled),
                        _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                    }
                }
            }
            "crash" => {
                self.say(s, "about to crash\n").await?;
                tokio::time::sleep(Duration::from_millis(50)).await;
                eprintln!("test-agent: something went wrong");
                eprintln!("test-agent: fatal: simulated crash");
                std::process::exit(3);
            }
            "refuse" => return Ok(StopReason::Refusal),
            "max-tokens" => return Ok(StopReason::MaxTokens),
            "error" => return Err(Error::new(ErrorCode::INTERNAL_ERROR, "simulated failure")),
            "blocks" => {
                let mut text = String::new();
                for block in &req.prompt {
                    let line = match block {
                        ContentBlock::Text(t) => format!("text: {}", t.text),
                        ContentBlock::ResourceLink(l) => {
                            format!("resource_link: {} {}", l.name, l.uri)
                        }
                        ContentBlock::Resource(r) => match &r.resource {
                            EmbeddedResourceResource::Text(t) => {
                                format!("resource: {} {:?}", t.uri, t.text)
                            }
                            _ => "resource: blob".to_owned(),
                        },
                        _ => "other".to_owned(),
                    };
                    text.push_str(&line);
                    text.push('\n');
                }
                self.say(s, &text).await?;
            }
            "elicit" => {
                let request = CreateElicitationRequest::form(
                    "Your name?",
                    ElicitationSessionScope::new(s.clone()),
                    ElicitationSchema::new(),
                );
                let answer = self.conn.create_elicitation(request).await?;
                let action = match answer.action {
                    ElicitationAction::Accept(_) => "accept",
                    ElicitationAction::Decline => "decline",
                    ElicitationAction::Cancel => "cancel",
                    _ => "other",
                };
                self.say(s, &format!("elicitation: {action}\n")).await?;
            }
            "garbage" => {
                {
                    let mut out = std::io::stdout().lock();
                    let _ = out.write_all(b"this is not json\n");
                    let _ = out.flush();
                }
                self.say(s, "still here\n").await?;
            }
            _ => self.say(s, &format!("You said: {text}\n")).await?,
        }
        Ok(StopReason::EndTurn)
    }
}

fn describe(e: &acp::ConnectionError) -> String {
    match e.remote() {
        Some(err) => err.message.clone(),
        None => e.to_string(),
    }
}

impl Agent for TestAgent {
    async fn initialize(&self, _: InitializeRequest) -> Result<InitializeResponse, Error> {
        log("initialize");
        let version = std::env::var("ACP_TEST_AGENT_PROTOCOL")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(ProtocolVersion)
            .unwrap_or(ProtocolVersion::V1);
        let mut session_caps = SessionCapabilities::new();
        if env_flag("ACP_TEST_AGENT_RESUME") {
            session_caps = session_caps.resume(SessionResumeCapabilities::new());
        }
        let caps = AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(
                PromptCapabilities::new().embedded_context(env_flag("ACP_TEST_AGENT_EMBEDDED")),
            )
            .session_capabilities(session_caps);
        let methods = vec![
            AuthMethod::from(
                AuthMethodAgent::new("test-login", "Test login").description("Logs in a test user"),
            ),
            AuthMethod::from(
                AuthMethodTerminal::new("tui-login", "Terminal login")
                    .args(vec!["--login".to_owned()]),
            ),
        ];
        Ok(InitializeResponse::new(version)
            .agent_capabilities(caps)
            .auth_methods(methods)
            .agent_info(Implementation::new("acp-test-agent", "0.1.0")))
    }

    async fn authenticate(&self, req: AuthenticateRequest) -> Result<AuthenticateResponse, Error> {
        log(&format!("authenticate {}", req.method_id));
        if req.method_id.as_str() != "test-login" {
            return Err(Error::new(ErrorCode::INVALID_PARAMS, "unknown auth method"));
        }
        self.authenticated.store(true, Ordering::Relaxed);
        Ok(AuthenticateResponse::new())
    }

    async fn new_session(&self, req: NewSessionRequest) -> Result<NewSessionResponse, Error> {
        log("session/new");
        if env_flag("ACP_TEST_AGENT_REQUIRE_AUTH") && !self.authenticated.load(Ordering::Relaxed) {
            return Err(Error::auth_required());
        }
        let id = SessionId::new(format!(
            "sess-{}",
            self.sessions.fetch_add(1, Ordering::Relaxed) + 1
        ));
        self.cwds.lock().unwrap().insert(id.clone(), req.cwd);
        Ok(NewSessionResponse::new(id))
    }

    async fn load_session(&self, req: LoadSessionRequest) -> Result<LoadSessionResponse, Error> {
        log(&format!("session/load {}", req.session_id));
        self.cwds
            .lock()
            .unwrap()
            .insert(req.session_id.clone(), req.cwd);
        let s = &req.session_id;
        self.send(s, SessionUpdate::user_message("earlier question"))
            .await?;
        self.say(s, "earlier answer\n").await?;
        Ok(LoadSessionResponse::new())
    }

    async fn resume_session(
        &self,
        req: ResumeSessionRequest,
    ) -> Result<ResumeSessionResponse, Error> {
        log(&format!("session/resume {}", req.session_id));
        self.cwds
            .lock()
            .unwrap()
            .insert(req.session_id.clone(), req.cwd);
        Ok(ResumeSessionResponse::new())
    }

    async fn prompt(&self, req: PromptRequest) -> Result<PromptResponse, Error> {
        log("session/prompt");
        let stop = self.turn(&req.session_id, &req).await?;
        log(&format!("stop {stop}"));
        Ok(PromptResponse::new(stop))
    }

    async fn cancel(&self, _: CancelNotification) -> Result<(), Error> {
        log("session/cancel");
        Ok(())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let result = AgentSideConnection::serve(Transport::stdio(), |conn| TestAgent {
        conn,
        sessions: AtomicU64::new(0),
        authenticated: AtomicBool::new(false),
        cwds: Mutex::new(Default::default()),
    })
    .await;
    if let Err(e) = result {
        eprintln!("acp-test-agent: {e}");
        std::process::exit(1);
    }
}
