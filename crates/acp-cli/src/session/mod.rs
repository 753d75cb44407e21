//! A session with an agent: everything `acp exec`, `acp chat` and
//! `acp login` share.
//!
//! `Session` is the one type here, its methods spread over this folder
//! by concern: starting the agent (directly, or asking it for protocol v2
//! through the bridge: `link`), awaiting requests outside a turn
//! (Ctrl-C, `--timeout`), explaining failures, restarting after a login
//! and closing (this file); its `setup` (directories, policy, sandbox);
//! opening the session (`open`), logging in while it opens (`login`,
//! with [`auth`] reading the agent's login methods), its mode, model and
//! options (`choices`, `models`); one prompt turn ([`turn`], its
//! prompt from [`mentions`]); the sessions acp had ([`recent`]); an agent
//! given by URL, whose link to the server may break and be resumed
//! (`remote`).
//!
//! A session holds its client ([`crate::host`], which shows it through
//! [`crate::view`]) and reads [`crate::config`] and [`crate::cli`]'s
//! options; the commands above use it. A new thing every session does
//! (another way to open, say) is a method of `Session` in a file here.

pub mod auth;
pub(crate) mod choices;
pub(crate) mod link;
pub(crate) mod login;
pub mod mentions;
pub(crate) mod models;
pub(crate) mod open;
pub mod recent;
pub(crate) mod remote;
pub(crate) mod setup;
pub mod turn;

use crate::config::ChosenAgent;
use crate::exit::{self, Failure};
use crate::host::CliClient;
use acp::schema::*;
use acp::{ConnectionError, ConnectionOptions, Dropped};
use auth::Login;
use link::AgentLink;
use std::path::PathBuf;
use std::time::Duration;
use tokio::signal::unix::{Signal, SignalKind, signal};

pub(crate) use setup::Setup;

/// When to tell the user that a request before the turn (`authenticate`,
/// `session/new`, …) is taking a while.
const STEP_NOTICE: Duration = Duration::from_secs(15);
/// How long a finished session waits for the agent to exit once its input closes.
const EXIT_GRACE: Duration = Duration::from_secs(2);
/// How many of the agent's last stderr lines a crash report shows.
const CRASH_TAIL: usize = 10;

/// Starts watching for SIGINT (Ctrl-C).
fn watch_interrupts() -> Result<Signal, Failure> {
    signal(SignalKind::interrupt())
        .map_err(|e| Failure::agent(format!("cannot watch for Ctrl-C: {e}")))
}

/// Starts the agent process in `cwd` and connects `client` to it, asking
/// for `protocol` (1 or 2; see `link`). With `show_stderr`, the agent's
/// stderr lines are shown as notes of the client's view (in chat, above the
/// prompt while a line is being typed).
fn spawn_agent(
    agent: ChosenAgent,
    cwd: &std::path::Path,
    client: &CliClient,
    show_stderr: bool,
    protocol: u8,
) -> Result<AgentLink, Failure> {
    let remote = crate::config::remote::is_mirror(&agent);
    let ChosenAgent {
        mut command, label, ..
    } = agent;
    command = command.current_dir(cwd);
    let shown = client.clone();
    command = command.on_stderr(move |line| {
        // `acp connect`'s notes on its link are shown whatever --verbose.
        if remote && remote::show_link_note(&shown, line) {
            return;
        }
        if show_stderr {
            shown.with_view(|v| v.note(&format!("agent: {line}")));
        }
    });
    let watcher = client.clone();
    let options = ConnectionOptions::default().on_dropped(move |dropped| match dropped {
        Dropped::TooLong { .. } => watcher.mark_overlong(),
        Dropped::BadNotification { method, reason } if method == "session/update" => watcher
            .with_view(|v| {
                v.note(&format!(
                    "[warning] the agent sent a malformed session/update, which was left out: {reason}"
                ))
            }),
        _ => {}
    });
    let noted = client.clone();
    let on_v1 = move || {
        noted.with_view(|v| {
            v.note("[protocol] the agent speaks protocol v1 only (asked for v2): going on in v1")
        })
    };
    let client = client.clone();
    AgentLink::start(command, protocol, options, move |_| client, on_v1).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Failure::new(
                exit::AGENT_NOT_FOUND,
                format!(
                    "{e}\nInstall it or put it on PATH, or choose another agent with --agent \
                     (a command line or a name from {}).",
                    crate::config::paths::config_path_hint()
                ),
            )
        } else {
            Failure::agent(format!("cannot start agent {label}: {e}"))
        }
    })
}

/// A running agent process, connected.
pub(crate) struct Session {
    /// Our side of the connection: it answers the agent and shows the
    /// session.
    pub client: CliClient,
    pub process: AgentLink,
    /// Ctrl-C: it abandons a request made outside a turn, and cancels a
    /// turn ([`turn`]).
    pub interrupts: Signal,
    /// The sweep of killed writers' temporary files, started with the
    /// session.
    sweep: Option<tokio::task::JoinHandle<acp_host::Sweep>>,
    /// How the agent was started, to start it again (after a login).
    launch: Launch,
    /// The agent's login methods, from `initialize`.
    pub(crate) logins: Vec<Login>,
    /// The method `authenticate` is being called with.
    pub(crate) trying: Option<String>,
    /// The open session, once there is one.
    pub session_id: Option<SessionId>,
    /// `--timeout`, which also bounds the requests before the turn.
    pub(crate) timeout: Option<Duration>,
}

/// How the agent was started: what [`Session::restart`] needs.
struct Launch {
    agent: ChosenAgent,
    cwd: PathBuf,
    verbose: bool,
    /// The protocol version asked for (1 or 2).
    protocol: u8,
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

/// How a request made outside a turn ended, when not with a result.
pub(crate) enum Interrupted {
    Failed(Failure),
}

impl From<Failure> for Interrupted {
    fn from(f: Failure) -> Self {
        Interrupted::Failed(f)
    }
}

impl Session {
    /// Starts watching for Ctrl-C and starts `agent` in the setup's
    /// directory, with `client` answering it; with `verbose` the agent's
    /// stderr lines are shown as notes. Nothing is sent to it yet.
    pub fn start(
        agent: ChosenAgent,
        setup: &Setup,
        client: CliClient,
        verbose: bool,
    ) -> Result<Self, Failure> {
        let interrupts = watch_interrupts()?;
        let protocol = setup.protocol.or(agent.defaults.protocol).unwrap_or(1);
        let process = spawn_agent(agent.clone(), &setup.cwd, &client, verbose, protocol)?;
        let sweep = Some(tokio::spawn(client.sweep()));
        Ok(Session {
            client,
            process,
            interrupts,
            sweep,
            launch: Launch {
                agent,
                cwd: setup.cwd.clone(),
                verbose,
                protocol,
            },
            logins: Vec::new(),
            trying: None,
            session_id: None,
            timeout: setup.timeout,
        })
    }

    /// Starts the agent again, the same way; the old process is stopped.
    pub fn restart(&mut self) -> Result<(), Failure> {
        let launch = &self.launch;
        let process = spawn_agent(
            launch.agent.clone(),
            &launch.cwd,
            &self.client,
            launch.verbose,
            launch.protocol,
        )?;
        // Dropping the old process closes its input and stops its group.
        self.process = process;
        self.session_id = None;
        Ok(())
    }

    /// Whether the agent is given by URL (it runs as `acp connect URL`).
    pub(crate) fn remote(&self) -> bool {
        crate::config::remote::is_mirror(&self.launch.agent)
    }

    /// The `--agent …` words that name this agent again, for advice.
    pub fn agent_flag(&self) -> String {
        self.launch.agent.flag.clone()
    }

    /// The agent's command line, as configured.
    pub fn agent_command(&self) -> &acp::AgentCommand {
        &self.launch.agent.command
    }

    /// What the agent's config entry asks the session to use (mode,
    /// model, config options).
    pub fn agent_defaults(&self) -> &crate::config::AgentDefaults {
        &self.launch.agent.defaults
    }

    /// Forgets the Ctrl-C presses not acted on yet: those typed into a
    /// login that ran in the terminal, or while no turn ran.
    pub async fn forget_interrupts(&mut self) {
        while let Ok(Some(())) = tokio::time::timeout(Duration::ZERO, self.interrupts.recv()).await
        {
        }
    }

    /// Whether a variable is set for the agent: in its configured
    /// environment or in acp's.
    pub fn var_is_set(&self, name: &str) -> bool {
        let configured = self
            .agent_command()
            .get_envs()
            .iter()
            .any(|(k, v)| k == name && !v.is_empty());
        configured || std::env::var_os(name).is_some_and(|v| !v.is_empty())
    }

    /// Awaits one request made outside a turn; Ctrl-C abandons it, and so
    /// does `--timeout` running out. After 15 s a note says what acp is
    /// waiting for.
    pub async fn step<T>(
        &mut self,
        method: &str,
        call: impl Future<Output = Result<T, ConnectionError>>,
    ) -> Result<T, Interrupted> {
        let overlong = self.client.overlong();
        let client = self.client.clone();
        let notice = async {
            tokio::time::sleep(STEP_NOTICE).await;
            client.with_view(|v| {
                v.note(&format!(
                    "[waiting] the agent has not answered {method} for {} s (Ctrl-C gives up; \
                     --timeout SECS bounds the wait)",
                    STEP_NOTICE.as_secs()
                ))
            });
            std::future::pending::<()>().await
        };
        let timeout = self.timeout;
        let limit = async move {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            _ = overlong => Err(Interrupted::Failed(overlong_failure())),
            result = call => match result {
                Ok(value) => Ok(value),
                Err(e) => Err(Interrupted::Failed(self.failure(method, e).await)),
            },
            _ = self.interrupts.recv() => Err(Interrupted::Failed(Failure::new(exit::CANCELLED, format!("interrupted during {method}")))),
            _ = limit => Err(Interrupted::Failed(Failure::new(
                exit::TIMEOUT,
                format!("the agent did not answer {method} within {} s (--timeout)", timeout.unwrap_or_default().as_secs_f64()),
            ))),
            _ = notice => unreachable!("the notice never ends"),
        }
    }

    /// Explains a failed call: an error answer, a malformed message, or a
    /// dead agent (with the last lines of its stderr).
    pub async fn failure(&mut self, method: &str, error: ConnectionError) -> Failure {
        match error {
            ConnectionError::Remote(e)
                if auth::is_auth_error(&e)
                    || (method == "authenticate" && self.trying.is_some()) =>
            {
                Failure::agent(self.auth_advice(method, &e)).caused_by(e)
            }
            ConnectionError::Remote(e) => {
                let mut message = format!(
                    "the agent answered {method} with an error: {} (code {})",
                    e.message, e.code.0
                );
                if let Some(data) = &e.data {
                    message.push_str(&format!("\n  details: {data}"));
                }
                Failure::agent(message).caused_by(e)
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
        if let Some(failure) = self.remote_failure(method) {
            return failure;
        }
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
        self.process.connection().close();
        // Closing the connection closes the agent's stdin; give it a moment to
        // save its state and exit on its own before it is signalled.
        let exited = tokio::time::timeout(EXIT_GRACE, self.process.wait()).await;
        if !matches!(exited, Ok(Ok(_))) {
            let _ = self.process.shutdown().await;
        }
    }
}
