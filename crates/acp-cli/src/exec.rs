//! `acp exec`: one prompt turn, headless.

use crate::cli::{ExecArgs, SessionArgs};
use crate::client::{CliClient, ClientSettings};
use crate::config::ChosenAgent;
use crate::exit::{self, Failure};
use crate::mentions::prompt_blocks;
use crate::permission::PermissionPolicy;
use crate::render::Renderer;
use acp::schema::*;
use acp::{AgentProcess, ClientSideConnection, ConnectionError, ConnectionOptions, Dropped};
use acp_host::{Files, Roots, Sandbox, Support, TerminalSettings};
use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::time::Duration;
use tokio::signal::unix::{Signal, SignalKind, signal};

/// How long the agent gets to answer `initialize`: long, because launchers such
/// as `npx` or `cargo run` may download or compile the agent first.
pub const INIT_TIMEOUT: Duration = Duration::from_secs(600);
/// When to tell the user that `initialize` is taking a while.
const INIT_NOTICE: Duration = Duration::from_secs(15);
/// After Ctrl-C, how long to wait for the turn to end as `cancelled`
/// before the agent is killed.
pub const CANCEL_GRACE: Duration = Duration::from_secs(5);
/// How long a finished session waits for the agent to exit once its input closes.
const EXIT_GRACE: Duration = Duration::from_secs(2);
/// How many of the agent's last stderr lines a crash report shows.
const CRASH_TAIL: usize = 10;

/// Runs `acp exec` and returns the exit code.
pub async fn run(agent: ChosenAgent, args: ExecArgs) -> Result<u8, Failure> {
    let prompt = read_prompt(&args.prompt)?;
    let default_policy = if std::io::stdin().is_terminal() {
        PermissionPolicy::Ask
    } else {
        PermissionPolicy::DenyAll
    };
    let setup = Setup::new(&args.session, default_policy)?;
    let client = CliClient::new(setup.settings(false), Renderer::stdio(args.format));
    let mut interrupts = watch_interrupts()?;
    let process = spawn_agent(agent, &setup.cwd, &client, args.session.verbose)?;
    let mut session = Session::new(client.clone(), process);
    let result = session.drive(&mut interrupts, &args, &setup, prompt).await;
    session.close().await;
    result
}

/// Directories, permission policy and sandbox of a session, from the
/// options.
pub(crate) struct Setup {
    /// The session's working directory (absolute).
    pub cwd: PathBuf,
    /// The `--add-dir` directories (absolute).
    pub add_dirs: Vec<PathBuf>,
    /// How permission requests are answered.
    pub policy: PermissionPolicy,
    /// The session's directories (confined unless `--allow-outside-cwd`).
    pub roots: Roots,
    /// The sandbox of the agent's commands.
    pub sandbox: Sandbox,
    /// What the sandbox does, in a line for the banner and `--verbose`.
    pub sandbox_state: String,
}

impl Setup {
    /// Checks the options; `default_policy` applies without a policy flag.
    pub fn new(args: &SessionArgs, default_policy: PermissionPolicy) -> Result<Self, Failure> {
        let cwd = match &args.cwd {
            Some(dir) => std::path::absolute(dir),
            None => std::env::current_dir(),
        }
        .map_err(|e| Failure::usage(format!("cannot determine the working directory: {e}")))?;
        if !cwd.is_dir() {
            return Err(Failure::usage(format!(
                "--cwd {} is not a directory",
                cwd.display()
            )));
        }
        let add_dirs: Vec<PathBuf> = args
            .add_dirs
            .iter()
            .map(std::path::absolute)
            .collect::<Result<_, _>>()
            .map_err(|e| Failure::usage(format!("bad --add-dir: {e}")))?;
        let roots = Roots::new(std::iter::once(&cwd).chain(&add_dirs))
            .map_err(|e| Failure::usage(format!("bad session directory: {e}")))?
            .confined(!args.allow_outside_cwd);
        let policy = if args.approve_all {
            PermissionPolicy::ApproveAll
        } else if args.approve_reads {
            PermissionPolicy::ApproveReads
        } else if args.deny_all {
            PermissionPolicy::DenyAll
        } else {
            default_policy
        };
        let runs = matches!(policy, PermissionPolicy::ApproveAll | PermissionPolicy::Ask);
        let (sandbox, sandbox_state) = choose_sandbox(args, &roots, runs)?;
        Ok(Setup {
            cwd,
            add_dirs,
            policy,
            roots,
            sandbox,
            sandbox_state,
        })
    }

    /// The client settings; `interactive` for `acp chat`.
    pub fn settings(&self, interactive: bool) -> ClientSettings {
        ClientSettings {
            policy: self.policy,
            files: Files::new(self.roots.clone()).max_message_size(message_limit()),
            terminal: TerminalSettings::new(self.roots.clone())
                .sandbox(self.sandbox.clone())
                .max_message_size(message_limit()),
            protected: crate::config::default_config_path()
                .and_then(|p| p.parent().map(std::path::Path::to_path_buf))
                .into_iter()
                .collect(),
            interactive,
        }
    }

    /// The policy in a line for the banner and `--verbose`.
    pub fn policy_state(&self) -> &'static str {
        match self.policy {
            PermissionPolicy::ApproveAll => {
                "permissions: --approve-all: the agent may write files and run commands \
                 (files of .git and acp's config need a permission naming them)"
            }
            PermissionPolicy::Ask => {
                "permissions: ask: writes and commands need a permission granted this turn, \
                 else you are asked"
            }
            PermissionPolicy::ApproveReads => {
                "permissions: --approve-reads: reads only; nothing is written, no command runs"
            }
            PermissionPolicy::DenyAll => {
                "permissions: --deny-all: nothing is written, no command runs"
            }
        }
    }
}

/// The sandbox the options and the kernel give, and a line saying so.
/// Where the kernel cannot sandbox, says so once on stderr and carries on;
/// `--no-network` there is an error (it cannot be kept).
fn choose_sandbox(
    args: &SessionArgs,
    roots: &Roots,
    runs: bool,
) -> Result<(Sandbox, String), Failure> {
    if !runs {
        return Ok((
            Sandbox::off(),
            "sandbox: not needed (no command runs)".into(),
        ));
    }
    if args.no_sandbox {
        return Ok((
            Sandbox::off(),
            "sandbox: off (--no-sandbox): commands run with your rights".into(),
        ));
    }
    let support = acp_host::sandbox_support();
    match &support {
        Support::Landlock { network, .. } => {
            if args.no_network && !network {
                return Err(Failure::usage(format!(
                    "--no-network needs Landlock ABI 4 or later; this kernel has {support}"
                )));
            }
            let sandbox =
                Sandbox::for_roots(roots.dirs().iter().cloned()).no_network(args.no_network);
            let places: Vec<String> = sandbox
                .writable
                .iter()
                .map(|d| d.display().to_string())
                .collect();
            let net = if args.no_network { ", no network" } else { "" };
            Ok((
                sandbox,
                format!(
                    "sandbox: on ({support}): commands may write only in {}{net}",
                    places.join(", ")
                ),
            ))
        }
        _ => {
            if args.no_network {
                return Err(Failure::usage(format!(
                    "--no-network needs the sandbox, which is unavailable: {support}"
                )));
            }
            eprintln!(
                "acp: the agent's commands cannot be sandboxed here ({support}); they run with \
                 your rights (--no-sandbox silences this)"
            );
            Ok((
                Sandbox::off(),
                format!("sandbox: unavailable ({support}): commands run with your rights"),
            ))
        }
    }
}

/// Starts watching for SIGINT (Ctrl-C).
pub(crate) fn watch_interrupts() -> Result<Signal, Failure> {
    signal(SignalKind::interrupt())
        .map_err(|e| Failure::agent(format!("cannot watch for Ctrl-C: {e}")))
}

/// Starts the agent process in `cwd` and connects `client` to it. With
/// `show_stderr`, the agent's stderr lines are shown as notes of the client's
/// renderer (in chat, above the prompt while a line is being typed).
pub(crate) fn spawn_agent(
    agent: ChosenAgent,
    cwd: &std::path::Path,
    client: &CliClient,
    show_stderr: bool,
) -> Result<AgentProcess, Failure> {
    let ChosenAgent { mut command, label } = agent;
    command = command.current_dir(cwd);
    if show_stderr {
        let client = client.clone();
        command = command.on_stderr(move |line| {
            client.with_renderer(|r| r.note(&format!("agent: {line}")));
        });
    } else {
        command = command.on_stderr(|_| {});
    }
    let watcher = client.clone();
    let options = ConnectionOptions::default().on_dropped(move |dropped| match dropped {
        Dropped::TooLong { .. } => watcher.mark_overlong(),
        Dropped::BadNotification { method, reason } if method == "session/update" => watcher
            .with_renderer(|r| {
                r.note(&format!(
                    "[warning] the agent sent a malformed session/update, which was left out: {reason}"
                ))
            }),
        _ => {}
    });
    let client = client.clone();
    command.connect(options, move |_| client).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Failure::new(
                exit::AGENT_NOT_FOUND,
                format!(
                    "{e}\nInstall it or put it on PATH, or choose another agent with --agent \
                     (a command line or a name from {}).",
                    crate::config::config_path_hint()
                ),
            )
        } else {
            Failure::agent(format!("cannot start agent {label}: {e}"))
        }
    })
}

/// A running agent process, connected.
pub(crate) struct Session {
    pub client: CliClient,
    pub process: AgentProcess,
    /// The sweep of killed writers' temporary files, started with the
    /// session.
    sweep: Option<tokio::task::JoinHandle<acp_host::Sweep>>,
}

/// The connection's size limit of one message, in bytes.
pub(crate) fn message_limit() -> usize {
    ConnectionOptions::default().max_message_size
}

/// Why a run stops after the agent sent a line over the size limit.
pub(crate) fn overlong_failure() -> Failure {
    Failure::agent(format!(
        "the agent sent a message longer than {} MiB, the most acp reads; it was skipped, \
         and since the agent or acp could now wait for it forever, the run stops",
        message_limit() / (1024 * 1024)
    ))
}

/// How a step before the prompt turn ended, when not with a result.
pub(crate) enum Interrupted {
    Failed(Failure),
}

impl From<Failure> for Interrupted {
    fn from(f: Failure) -> Self {
        Interrupted::Failed(f)
    }
}

/// An initialized connection with an open session.
pub(crate) struct Opened {
    /// The connection.
    pub conn: ClientSideConnection,
    /// What the agent can do.
    pub caps: AgentCapabilities,
    /// The agent's auth methods.
    pub auth_methods: Vec<AuthMethod>,
    /// The open session.
    pub session_id: SessionId,
    /// The session's modes, if the agent has any.
    pub modes: Option<SessionModeState>,
    /// The session's config options, if the agent has any.
    pub config_options: Option<Vec<SessionConfigOption>>,
}

impl Session {
    /// A session with the agent `process`, not initialized yet.
    pub fn new(client: CliClient, process: AgentProcess) -> Self {
        let sweep = Some(tokio::spawn(client.sweep()));
        Session {
            client,
            process,
            sweep,
        }
    }

    /// Initializes the connection, authenticates if asked, and opens the
    /// session (new, resumed or loaded). `show_replay` shows the history a
    /// loaded session replays.
    pub async fn open(
        &mut self,
        interrupts: &mut Signal,
        args: &SessionArgs,
        setup: &Setup,
        capabilities: ClientCapabilities,
        show_replay: bool,
    ) -> Result<Opened, Failure> {
        let conn = self.process.connection().clone();

        let init = InitializeRequest::new(ProtocolVersion::LATEST)
            .client_capabilities(capabilities)
            .client_info(Implementation::new("acp", env!("CARGO_PKG_VERSION")));
        let notice = async {
            tokio::time::sleep(INIT_NOTICE).await;
            eprintln!(
                "acp: waiting for the agent to answer initialize (it may still be installing \
                 or compiling; Ctrl-C gives up)"
            );
            std::future::pending::<std::convert::Infallible>().await
        };
        let answer = self.step("initialize", interrupts, conn.initialize(init));
        let init = tokio::time::timeout(INIT_TIMEOUT, async {
            tokio::select! {
                answer = answer => answer,
                never = notice => match never {},
            }
        })
        .await
        .map_err(|_| {
            Failure::agent(format!(
                "the agent did not answer initialize within {} s; is it an ACP agent?",
                INIT_TIMEOUT.as_secs()
            ))
        })?
        .map_err(|Interrupted::Failed(f)| f)?;
        if init.protocol_version != ProtocolVersion::V1 {
            return Err(Failure::agent(format!(
                "the agent speaks ACP protocol version {}, but acp supports version {}; \
                 update the agent or acp",
                init.protocol_version.get(),
                ProtocolVersion::V1.get()
            )));
        }
        let auth_methods = init.auth_methods.clone();
        let caps = init.agent_capabilities;

        if let Some(method) = &args.auth {
            let known = auth_methods
                .iter()
                .any(|m| m.id().as_deref() == Some(method.as_str()));
            if !known {
                return Err(Failure::usage(format!(
                    "the agent has no auth method {method:?}.\n{}",
                    describe_auth_methods(&auth_methods)
                )));
            }
            self.step(
                "authenticate",
                interrupts,
                conn.authenticate(AuthenticateRequest::new(method.as_str())),
            )
            .await
            .map_err(|Interrupted::Failed(f)| f)?;
        }

        let cwd_text = setup.cwd.to_string_lossy().into_owned();
        let dirs: Vec<String> = setup
            .add_dirs
            .iter()
            .map(|d| d.to_string_lossy().into_owned())
            .collect();
        let send_dirs =
            !dirs.is_empty() && caps.session_capabilities.additional_directories.is_some();
        if !dirs.is_empty() && !send_dirs {
            self.client.with_renderer(|r| {
                r.note("[note] the agent does not accept additional directories; --add-dir only widens file access")
            });
        }
        let auth_hint = |f: Failure| with_auth_hint(f, &auth_methods);
        let (session_id, modes, config_options) = match &args.session {
            None => {
                let mut request = NewSessionRequest::new(cwd_text);
                if send_dirs {
                    request = request.additional_directories(dirs);
                }
                let response = self
                    .step("session/new", interrupts, conn.new_session(request))
                    .await
                    .map_err(|Interrupted::Failed(f)| auth_hint(f))?;
                (response.session_id, response.modes, response.config_options)
            }
            Some(id) => {
                let id = SessionId::new(id.as_str());
                if caps.session_capabilities.resume.is_some() {
                    let mut request = ResumeSessionRequest::new(id.clone(), cwd_text);
                    if send_dirs {
                        request = request.additional_directories(dirs);
                    }
                    let response = self
                        .step("session/resume", interrupts, conn.resume_session(request))
                        .await
                        .map_err(|Interrupted::Failed(f)| auth_hint(f))?;
                    (id, response.modes, response.config_options)
                } else if caps.load_session {
                    let mut request = LoadSessionRequest::new(id.clone(), cwd_text);
                    if send_dirs {
                        request = request.additional_directories(dirs);
                    }
                    self.client.with_renderer(|r| r.set_replaying(!show_replay));
                    let loaded = self
                        .step("session/load", interrupts, conn.load_session(request))
                        .await;
                    self.client.with_renderer(|r| r.set_replaying(false));
                    let response = loaded.map_err(|Interrupted::Failed(f)| auth_hint(f))?;
                    (id, response.modes, response.config_options)
                } else {
                    return Err(Failure::agent(
                        "the agent can neither resume nor load sessions, so --session cannot be used with it",
                    ));
                }
            }
        };
        Ok(Opened {
            conn,
            caps,
            auth_methods,
            session_id,
            modes,
            config_options,
        })
    }

    async fn drive(
        &mut self,
        interrupts: &mut Signal,
        args: &ExecArgs,
        setup: &Setup,
        prompt: String,
    ) -> Result<u8, Failure> {
        let capabilities = self.client.capabilities();
        if args.session.verbose {
            self.client.with_renderer(|r| {
                r.note(&format!("[policy] {}", setup.policy_state()));
                r.note(&format!("[sandbox] {}", setup.sandbox_state));
            });
        }
        let opened = self
            .open(interrupts, &args.session, setup, capabilities, false)
            .await?;
        let Opened {
            conn,
            caps,
            auth_methods,
            session_id,
            ..
        } = opened;
        self.client
            .with_renderer(|r| r.note(&format!("[session] {session_id}")));

        let blocks = prompt_blocks(
            &prompt,
            &setup.cwd,
            caps.prompt_capabilities.embedded_context,
        );
        let request = PromptRequest::new(session_id.clone(), blocks);
        let turn = conn.prompt(request);
        tokio::pin!(turn);
        let mut cancelled = false;
        let deadline = tokio::time::sleep(Duration::MAX);
        tokio::pin!(deadline);
        let overlong = self.client.overlong();
        tokio::pin!(overlong);
        let response = loop {
            tokio::select! {
                // The over-long report comes before the answer that follows
                // it; when both are in, the report wins.
                biased;
                _ = &mut overlong => return Err(overlong_failure()),
                response = &mut turn => break response,
                _ = interrupts.recv() => {
                    if cancelled {
                        let _ = self.process.kill();
                        return Err(Failure::new(exit::CANCELLED, "interrupted again: killed the agent"));
                    }
                    cancelled = true;
                    self.client.mark_cancelled();
                    self.client.with_renderer(|r| r.note("[cancel] cancelling the turn (Ctrl-C again to kill the agent)"));
                    let _ = conn.cancel(CancelNotification::new(session_id.clone())).await;
                    deadline.as_mut().reset(tokio::time::Instant::now() + CANCEL_GRACE);
                }
                _ = &mut deadline => {
                    let _ = self.process.kill();
                    return Err(Failure::new(
                        exit::CANCELLED,
                        format!("the agent did not end the turn within {} s of the cancel; killed it", CANCEL_GRACE.as_secs()),
                    ));
                }
            }
        };
        let response = match response {
            Ok(response) => response,
            Err(_) if cancelled => {
                return Err(Failure::new(exit::CANCELLED, "the turn was cancelled"));
            }
            Err(e) => {
                return Err(with_auth_hint(
                    self.failure("session/prompt", e).await,
                    &auth_methods,
                ));
            }
        };
        self.client
            .with_renderer(|r| r.finish(&session_id, &response.stop_reason));
        Ok(match response.stop_reason {
            _ if cancelled => exit::CANCELLED,
            StopReason::EndTurn if self.client.denied_count() > 0 => exit::PERMISSION_DENIED,
            StopReason::EndTurn => exit::OK,
            StopReason::Refusal => exit::REFUSAL,
            StopReason::MaxTokens | StopReason::MaxTurnRequests => exit::LIMIT,
            StopReason::Cancelled => exit::CANCELLED,
            _ => exit::AGENT_ERROR,
        })
    }

    /// Awaits one request before the turn; Ctrl-C abandons it.
    pub async fn step<T>(
        &mut self,
        method: &str,
        interrupts: &mut Signal,
        call: impl Future<Output = Result<T, ConnectionError>>,
    ) -> Result<T, Interrupted> {
        let overlong = self.client.overlong();
        tokio::select! {
            biased;
            _ = overlong => Err(Interrupted::Failed(overlong_failure())),
            result = call => match result {
                Ok(value) => Ok(value),
                Err(e) => Err(Interrupted::Failed(self.failure(method, e).await)),
            },
            _ = interrupts.recv() => Err(Interrupted::Failed(Failure::new(exit::CANCELLED, format!("interrupted during {method}")))),
        }
    }

    /// Explains a failed call: an error answer, a malformed message, or a
    /// dead agent (with the last lines of its stderr).
    pub async fn failure(&mut self, method: &str, error: ConnectionError) -> Failure {
        match error {
            ConnectionError::Remote(e) if e.code == ErrorCode::AUTH_REQUIRED => {
                Failure::agent(format!(
                    "the agent requires authentication ({method} answered: {})",
                    e.message
                ))
            }
            ConnectionError::Remote(e) => {
                let mut message = format!(
                    "the agent answered {method} with an error: {} (code {})",
                    e.message, e.code.0
                );
                if let Some(data) = &e.data {
                    message.push_str(&format!("\n  details: {data}"));
                }
                Failure::agent(message)
            }
            ConnectionError::Protocol(e) => Failure::agent(format!(
                "the agent sent a malformed response to {method}: {e}"
            )),
            ConnectionError::Closed | ConnectionError::Io(_) => self.crashed(method).await,
            other => Failure::agent(format!("{method} failed: {other}")),
        }
    }

    async fn crashed(&mut self, method: &str) -> Failure {
        let status = tokio::time::timeout(Duration::from_secs(2), self.process.wait()).await;
        let how = match status {
            Ok(Ok(status)) => format!("exited ({status})"),
            _ => "closed the connection".to_owned(),
        };
        let mut message = format!("the agent {how} during {method}");
        let tail = self.process.stderr_tail();
        let tail = &tail[tail.len().saturating_sub(CRASH_TAIL)..];
        if tail.is_empty() {
            message.push_str("; it wrote nothing to stderr");
        } else {
            message.push_str("; last lines of its stderr:");
            for line in tail {
                message.push_str("\n  | ");
                message.push_str(line);
            }
        }
        Failure::new(exit::AGENT_CRASHED, message)
    }

    pub async fn close(&mut self) {
        self.client.shutdown().await;
        if let Some(sweep) = self.sweep.take() {
            let _ = sweep.await;
        }
        self.process.close();
        // Closing the connection closes the agent's stdin; give it a moment to
        // save its state and exit on its own before it is signalled.
        let exited = tokio::time::timeout(EXIT_GRACE, self.process.wait()).await;
        if !matches!(exited, Ok(Ok(_))) {
            let _ = self.process.shutdown().await;
        }
    }
}

/// Adds the agent's auth methods to an authentication failure.
pub(crate) fn with_auth_hint(failure: Failure, methods: &[AuthMethod]) -> Failure {
    if failure.message.contains("requires authentication") {
        Failure::new(
            failure.code,
            format!("{}\n{}", failure.message, describe_auth_methods(methods)),
        )
    } else {
        failure
    }
}

/// The agent's auth methods and what to do for each.
pub fn describe_auth_methods(methods: &[AuthMethod]) -> String {
    if methods.is_empty() {
        return "The agent lists no auth methods; see its documentation for how to log in."
            .to_owned();
    }
    let mut text = String::from("Auth methods of this agent:");
    for method in methods {
        let id = method.id().unwrap_or("?".into());
        let name = method.name().unwrap_or_else(|| id.clone());
        let todo = match method {
            AuthMethod::Agent(m) => {
                let mut todo = format!("run again with --auth {id}");
                if let Some(d) = &m.description {
                    todo = format!("{d}; {todo}");
                }
                todo
            }
            AuthMethod::Terminal(m) => {
                let args = m.args.clone().unwrap_or_default().join(" ");
                format!(
                    "log in interactively: run the agent's command with arguments `{args}` in a terminal, then retry"
                )
            }
            _ => format!("a method acp does not know; --auth {id} may work"),
        };
        text.push_str(&format!("\n  - {id} ({name}): {todo}"));
    }
    text
}

fn read_prompt(words: &[String]) -> Result<String, Failure> {
    let prompt = match words {
        [] => None,
        [dash] if dash == "-" => None,
        words => Some(words.join(" ")),
    };
    let prompt = match prompt {
        Some(text) => text,
        None => {
            if std::io::stdin().is_terminal() {
                return Err(Failure::usage(
                    "no prompt: pass it as an argument or on standard input (acp exec \"fix the tests\")",
                ));
            }
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).map_err(|e| {
                Failure::usage(format!("cannot read the prompt from standard input: {e}"))
            })?;
            text
        }
    };
    if prompt.trim().is_empty() {
        return Err(Failure::usage("the prompt is empty"));
    }
    Ok(prompt)
}
