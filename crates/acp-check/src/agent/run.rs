//! What the runs of `acp check agent` share, whichever the protocol
//! version: the options ([`AgentOptions`]), why a step of the agent's life
//! failed ([`StepError`]), the temporary workspace the agent's processes
//! start in ([`Workspace`]), how a call that failed is described, and the
//! run of a table of checks ([`run_checks`]) over a context that is a
//! [`Life`] (v1's `AgentCx`, v2's `V2Cx`).

use crate::catalog::Check;
use crate::process::Peer;
use crate::report::{CheckResult, Filters, Report};
use crate::strict::Handler;
use crate::wire::{Answer, Call, Log};
use acp_host::SupervisorProgram;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How `acp check agent` runs.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// The agent's command line.
    pub command: Vec<String>,
    /// The auth method to authenticate with (`--auth`).
    pub auth: Option<String>,
    /// The prompts of the ordinary turns (`--prompt`, repeatable); the
    /// first is "the ordinary turn". `{workspace}` is replaced by the
    /// temporary workspace's path.
    pub prompts: Vec<String>,
    /// The prompt of the turn to be cancelled (`--cancel-prompt`).
    pub cancel_prompt: String,
    /// How long a request may take (`--timeout`).
    pub timeout: Duration,
    /// How soon after `session/cancel` the turn must end (`--cancel-within`).
    pub cancel_within: Duration,
    /// Where to write every line exchanged (`--trace`).
    pub trace: Option<PathBuf>,
    /// The program that supervises terminals the agent creates.
    pub supervisor: SupervisorProgram,
    /// Which checks run and how they count.
    pub filters: Filters,
}

impl AgentOptions {
    /// Options with the defaults for `command`.
    pub fn new(command: Vec<String>) -> AgentOptions {
        AgentOptions {
            command,
            auth: None,
            prompts: vec![DEFAULT_PROMPT.to_string()],
            cancel_prompt: DEFAULT_CANCEL_PROMPT.to_string(),
            timeout: Duration::from_secs(60),
            cancel_within: Duration::from_secs(10),
            trace: None,
            supervisor: SupervisorProgram::CurrentExe,
            filters: Filters::default(),
        }
    }
}

/// The default prompt of the ordinary turn.
pub const DEFAULT_PROMPT: &str = "Say hello in one short sentence.";
/// The default prompt of the turn to be cancelled.
pub const DEFAULT_CANCEL_PROMPT: &str =
    "Count slowly from 1 to 500, one number per line, and explain each number.";

/// Why a step of the agent's life (starting a process, `initialize`,
/// `authenticate`, a session, the ordinary turns) could not be taken. Its
/// text is the reason the checks that need the step report.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StepError {
    /// The agent's process could not be started.
    #[error("{0}")]
    Start(String),
    /// A request of the step got no result: an error answer, a response
    /// under an id of no request, the agent's output closed, or no answer
    /// within the timeout.
    #[error("{method}: {detail}")]
    Call {
        /// The request (`initialize`, `session/new`, …).
        method: String,
        /// The answer, or why there is none.
        detail: String,
        /// Nothing but the timeout ended the wait, or the agent had already
        /// stopped answering.
        unanswered: bool,
    },
    /// A v2 `initialize` was answered with another protocol version (its
    /// JSON text).
    #[error("the agent answered protocol version {0} to a v2 initialize, so it does not speak v2")]
    NotV2(String),
    /// `session/new` answered without a `sessionId`.
    #[error("session/new answered no sessionId: {0}")]
    NoSessionId(String),
    /// No ordinary turn ran: there was no `--prompt`.
    #[error("no ordinary turn ran (no --prompt)")]
    NoPrompt,
}

impl StepError {
    /// The step's request `method` failed as `call` shows; `detail` says how.
    pub(super) fn call(method: &str, call: &Call, detail: String) -> StepError {
        StepError::Call {
            method: method.to_string(),
            detail,
            unanswered: call.unanswered(),
        }
    }

    /// Whether the agent did not answer in time (or had stopped answering).
    pub fn unanswered(&self) -> bool {
        matches!(
            self,
            StepError::Call {
                unanswered: true,
                ..
            }
        )
    }
}

/// The temporary workspace of a run (the sessions' cwd, holding
/// `notes.txt`), where each process of the agent starts as the run's next
/// wire.
pub(super) struct Workspace {
    dir: tempfile::TempDir,
    next_wire: usize,
}

impl Workspace {
    /// A new workspace, and the run's log (also written to `--trace`).
    pub(super) fn prepare(opts: &AgentOptions) -> std::io::Result<(Workspace, Arc<Log>)> {
        let dir = tempfile::Builder::new().prefix("acp-check-").tempdir()?;
        std::fs::write(
            dir.path().join("notes.txt"),
            "acp check notes\nline two\nline three\n",
        )?;
        let trace = match &opts.trace {
            Some(path) => Some(std::fs::File::create(path)?),
            None => None,
        };
        let workspace = Workspace { dir, next_wire: 0 };
        Ok((workspace, Log::new(trace)))
    }

    /// Its path.
    pub(super) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Its path as text (the sessions' cwd).
    pub(super) fn cwd(&self) -> String {
        self.path().display().to_string()
    }

    /// `text` (a prompt) with `{workspace}` replaced by the path.
    pub(super) fn fill(&self, text: &str) -> String {
        text.replace("{workspace}", &self.cwd())
    }

    /// The params of `session/new` here (no MCP servers).
    pub(super) fn new_session_params(&self) -> Value {
        json!({"cwd": self.cwd(), "mcpServers": []})
    }

    /// Starts a process of the agent (`opts.command`) here as the next
    /// wire, its requests to the client answered by `answer`; a request of
    /// ours it leaves unanswered for `opts.timeout` marks it as stopped
    /// answering.
    pub(super) fn start(
        &mut self,
        opts: &AgentOptions,
        log: &Arc<Log>,
        answer: Answer,
    ) -> Result<Peer, StepError> {
        let id = self.next_wire;
        self.next_wire += 1;
        let mut peer = Peer::spawn(&opts.command, self.path(), id, log.clone(), Handler::Agent)
            .map_err(|e| StepError::Start(e.to_string()))?;
        peer.wire.answer_with(answer);
        peer.wire.stall_after(opts.timeout);
        Ok(peer)
    }
}

/// What went wrong with a call, shortened.
pub(super) fn describe(call: &Call) -> String {
    crate::report::shorten(&call.describe(), 300)
}

/// The last lines the agent wrote to stderr, when it closed its output.
pub(super) fn stderr_end(peer: &Peer, closed: bool) -> String {
    let tail = peer.stderr_tail();
    let last: Vec<&str> = tail.lines().rev().take(3).collect();
    if !closed || last.is_empty() {
        return String::new();
    }
    let last: Vec<&str> = last.into_iter().rev().collect();
    format!(" (its stderr ends: {})", last.join(" / "))
}

/// A context the checks of one protocol version run in: made from the
/// options, logging every line, and ended by [`shutdown`](Life::shutdown).
pub(super) trait Life: Sized + Send {
    /// A context for `opts` (nothing started yet).
    fn start(opts: AgentOptions) -> std::io::Result<Self>;
    /// Every line of the run.
    fn log(&self) -> Arc<Log>;
    /// Ends every process (and terminal) of the run.
    fn shutdown(&mut self) -> impl Future<Output = ()> + Send;
}

/// Runs `checks` in a context of type `C` for `opts`, handing each result
/// to `decided` as soon as it is decided, then ends the context's
/// processes.
pub(super) async fn run_checks<C: Life>(
    opts: AgentOptions,
    checks: &[Check<C>],
    decided: &mut (dyn FnMut(&CheckResult) + Send),
) -> std::io::Result<Report> {
    let command = opts.command.join(" ");
    let filters = opts.filters.clone();
    let mut cx = C::start(opts)?;
    let log = cx.log();
    let results = crate::catalog::run_all(checks, &mut cx, &log, &filters, decided).await;
    cx.shutdown().await;
    Ok(Report {
        side: "agent".into(),
        command,
        results,
    })
}
