//! Running an agent as a child process, for the client (editor) side.
//!
//! [`AgentCommand`] describes how to start the agent; [`AgentCommand::connect`]
//! starts it and connects a [`Client`] to its standard input and output. The
//! [`AgentProcess`] it returns is both the connection (it dereferences to a
//! [`ClientSideConnection`]) and the owner of the child: the process lives as
//! long as the handle, and dropping the handle stops it.
//!
//! The agent runs in a process group of its own, and every signal this module
//! sends goes to the whole group. Agents are often started through launchers
//! such as `npx` or `uvx` that run the real agent as a grandchild; stopping
//! only the direct child would leave that grandchild running.
//!
//! The agent's standard error is read line by line in a background task:
//! each line goes to a callback (by default to `tracing`) and the last
//! [`STDERR_TAIL_LINES`] lines are kept for error messages.
//!
//! This module does not speak the protocol: it does not send `initialize`
//! or detect a hung agent. Processes that leave the group (for example with
//! `setsid`) are out of its reach. It requires a Tokio runtime and a Unix
//! platform.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::process::{Child, ChildStderr, Command};
use tokio::task::JoinHandle;

use crate::client::Client;
use crate::connection::ClientSideConnection;
use crate::engine::ConnectionOptions;
use crate::error::ConnectionError;
use crate::transport::Transport;

mod stderr;

pub use stderr::{STDERR_TAIL_LINES, StderrTail};

/// How long the agent gets to exit after `SIGTERM` before it is sent
/// `SIGKILL`, unless set with [`AgentCommand::kill_grace`].
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_secs(2);

/// After the agent exits, [`AgentProcess::wait`] waits at most this long for
/// the rest of its standard error.
const STDERR_DRAIN_TIMEOUT: Duration = Duration::from_millis(500);

/// How often to check whether the process group is gone.
const GROUP_POLL_INTERVAL: Duration = Duration::from_millis(20);

type StderrCallback = Arc<dyn Fn(&str) + Send + Sync>;

/// Why [`AgentCommand::parse`] rejected a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CommandLineError {
    /// The command line holds no words.
    Empty,
    /// A quote is not closed.
    UnbalancedQuotes,
}

impl fmt::Display for CommandLineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("the agent command line is empty"),
            Self::UnbalancedQuotes => {
                f.write_str("the agent command line has an unterminated quote")
            }
        }
    }
}

impl std::error::Error for CommandLineError {}

/// How to start an agent process: program, arguments, environment, working
/// directory, and what to do with its standard error.
///
/// The agent inherits this process's environment, with the variables given
/// by [`env`](Self::env) added, unless [`env_clear`](Self::env_clear) is used.
///
/// A clone describes the same command (sharing the standard error
/// callback), so an agent can be started again the same way, for example
/// after the user logged in.
#[must_use]
#[derive(Clone)]
pub struct AgentCommand {
    program: OsString,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    env_clear: bool,
    current_dir: Option<PathBuf>,
    on_stderr: Option<StderrCallback>,
    kill_grace: Duration,
}

impl AgentCommand {
    /// A command that runs `program` (looked up in `PATH` if it has no
    /// slash) with no arguments.
    pub fn new(program: impl Into<OsString>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            envs: Vec::new(),
            env_clear: false,
            current_dir: None,
            on_stderr: None,
            kill_grace: DEFAULT_KILL_GRACE,
        }
    }

    /// Parses a shell-like command line ("npx -y @zed-industries/claude-code-acp --flag 'a b'") with shell-words; error on empty or unbalanced quotes.
    ///
    /// Quotes and backslashes are handled as a POSIX shell would; no
    /// expansion, redirection or piping takes place.
    pub fn parse(command_line: &str) -> Result<Self, CommandLineError> {
        let words =
            shell_words::split(command_line).map_err(|_| CommandLineError::UnbalancedQuotes)?;
        let mut words = words.into_iter();
        let program = words.next().ok_or(CommandLineError::Empty)?;
        Ok(Self::new(program).args(words))
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Adds several arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        self
    }

    /// Sets an environment variable for the agent.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.envs
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Sets several environment variables for the agent.
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        for (key, value) in vars {
            self = self.env(key, value);
        }
        self
    }

    /// Starts the agent with no inherited environment: only the variables
    /// set with [`env`](Self::env) and [`envs`](Self::envs). Note that
    /// `PATH` is then unset too.
    pub fn env_clear(mut self) -> Self {
        self.env_clear = true;
        self
    }

    /// Sets the agent's working directory.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.current_dir = Some(dir.as_ref().to_owned());
        self
    }

    /// Passes each line the agent writes to standard error (lossy UTF-8,
    /// without the line ending) to `f`, in order, from a background task.
    ///
    /// Without this, each line is logged with `tracing` at info level with
    /// target `acp::agent_stderr`. `f` should return quickly: while it
    /// runs, the agent's standard error is not read.
    pub fn on_stderr(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_stderr = Some(Arc::new(f));
        self
    }

    /// Sets how long the agent gets to exit after `SIGTERM` before
    /// `SIGKILL` (default [`DEFAULT_KILL_GRACE`]).
    pub fn kill_grace(mut self, grace: Duration) -> Self {
        self.kill_grace = grace;
        self
    }

    /// The program to run.
    pub fn get_program(&self) -> &OsStr {
        &self.program
    }

    /// The arguments, without the program.
    pub fn get_args(&self) -> &[OsString] {
        &self.args
    }

    /// The variables set with [`env`](Self::env) and [`envs`](Self::envs),
    /// in the order given (a later one wins).
    pub fn get_envs(&self) -> &[(OsString, OsString)] {
        &self.envs
    }

    /// The working directory, if one was set.
    pub fn get_current_dir(&self) -> Option<&Path> {
        self.current_dir.as_deref()
    }

    /// Whether the inherited environment is cleared
    /// ([`env_clear`](Self::env_clear)).
    pub fn get_env_clear(&self) -> bool {
        self.env_clear
    }

    /// Starts the agent in a new process group and connects `make_client`'s
    /// client to it.
    ///
    /// The connection's I/O runs in a task of its own. The returned handle
    /// owns the child process: it dereferences to the connection (to call the
    /// agent), and dropping it closes the agent's standard input, then stops
    /// the process group (see [`AgentProcess`]). A program that cannot be
    /// found gives an [`io::ErrorKind::NotFound`] error naming it. Must be
    /// called within a Tokio runtime.
    pub fn connect<C: Client>(
        self,
        options: ConnectionOptions,
        make_client: impl FnOnce(ClientSideConnection) -> C,
    ) -> io::Result<AgentProcess> {
        let mut child = self
            .command()
            .spawn()
            .map_err(|error| self.spawn_error(error))?;
        let pieces = take_pipes(&mut child);
        let (Some(pgid), Some((stdin, stdout, stderr))) = (process_group_id(&child), pieces) else {
            // Only possible if the child exited and was reaped already.
            let _ = child.start_kill();
            return Err(io::Error::other(format!(
                "agent program {:?} could not be set up",
                self.program
            )));
        };
        let on_line = self
            .on_stderr
            .unwrap_or_else(|| log_stderr_line(pgid.as_raw()));
        let (tail, stderr_task) = StderrTail::read(stderr, move |line| on_line(line));
        let (conn, io) =
            ClientSideConnection::new(Transport::new(stdout, stdin), options, make_client);
        Ok(AgentProcess {
            conn,
            io: Some(tokio::spawn(io)),
            child,
            pgid,
            kill_grace: self.kill_grace,
            tail,
            stderr_task: Some(stderr_task),
        })
    }

    /// Starts the agent in a new process group without connecting anything
    /// to it: the returned [`AgentChild`] owns the process, and the
    /// [`Transport`] is its standard output (to read) and input (to write),
    /// for code that passes the agent's bytes on as they are (a server
    /// bridging a network connection to the agent, say). Dropping the
    /// transport's writer closes the agent's input; dropping the
    /// `AgentChild` stops the process group as dropping an
    /// [`AgentProcess`] does. Must be called within a Tokio runtime.
    pub fn spawn_stdio(self) -> io::Result<(AgentChild, Transport)> {
        let mut child = self
            .command()
            .spawn()
            .map_err(|error| self.spawn_error(error))?;
        let pieces = take_pipes(&mut child);
        let (Some(pgid), Some((stdin, stdout, stderr))) = (process_group_id(&child), pieces) else {
            let _ = child.start_kill();
            return Err(io::Error::other(format!(
                "agent program {:?} could not be set up",
                self.program
            )));
        };
        let on_line = self
            .on_stderr
            .unwrap_or_else(|| log_stderr_line(pgid.as_raw()));
        let (tail, stderr_task) = StderrTail::read(stderr, move |line| on_line(line));
        let owner = AgentChild {
            child,
            pgid,
            kill_grace: self.kill_grace,
            tail,
            stderr_task: Some(stderr_task),
        };
        Ok((owner, Transport::new(stdout, stdin)))
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        if self.env_clear {
            command.env_clear();
        }
        command.envs(self.envs.iter().map(|(key, value)| (key, value)));
        if let Some(dir) = &self.current_dir {
            command.current_dir(dir);
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        command
    }

    fn spawn_error(&self, error: io::Error) -> io::Error {
        let what = match error.kind() {
            io::ErrorKind::NotFound => "not found",
            _ => "could not be started",
        };
        io::Error::new(
            error.kind(),
            format!("agent program {:?} {what}: {error}", self.program),
        )
    }
}

impl fmt::Debug for AgentCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentCommand")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("envs", &self.envs)
            .field("env_clear", &self.env_clear)
            .field("current_dir", &self.current_dir)
            .field("on_stderr", &self.on_stderr.as_ref().map(|_| "<callback>"))
            .field("kill_grace", &self.kill_grace)
            .finish()
    }
}

/// A running agent started by [`AgentCommand::connect`], and the connection
/// to it.
///
/// Dereferences to the [`ClientSideConnection`], so the agent's methods are
/// called on it directly (`agent.prompt(…)`); clones of that connection (the
/// one the client was made with, for example) do not keep the process.
///
/// Dropping the handle closes the connection, so the agent reads the end of
/// its input once what was queued is written; if its process group is still
/// there after the grace period ([`AgentCommand::kill_grace`]), it gets
/// `SIGTERM`, and `SIGKILL` after another grace period. The waiting happens
/// on a separate thread, so dropping never blocks.
pub struct AgentProcess {
    conn: ClientSideConnection,
    /// The connection's I/O task.
    io: Option<JoinHandle<Result<(), ConnectionError>>>,
    child: Child,
    pgid: Pid,
    kill_grace: Duration,
    tail: StderrTail,
    stderr_task: Option<JoinHandle<()>>,
}

impl std::ops::Deref for AgentProcess {
    type Target = ClientSideConnection;

    fn deref(&self) -> &ClientSideConnection {
        &self.conn
    }
}

impl AgentProcess {
    /// The connection to the agent (also reached through `Deref`).
    pub fn connection(&self) -> &ClientSideConnection {
        &self.conn
    }

    /// The agent's process id, or `None` once it has been waited for.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Waits for the agent to exit.
    ///
    /// Once it has, waits briefly for the rest of its standard error so that
    /// [`stderr_tail`](Self::stderr_tail) is complete. Cancel safe.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait().await?;
        self.drain_stderr().await;
        Ok(status)
    }

    /// The agent's exit status if it has exited, without waiting.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Stops the agent and waits for it: closes the connection (the agent
    /// reads the end of its input), gives the process group the grace period
    /// to exit, then `SIGTERM`, and `SIGKILL` after another grace period to
    /// whatever is left. Returns the child's status.
    pub async fn shutdown(&mut self) -> io::Result<ExitStatus> {
        self.conn.close();
        if let Some(io) = self.io.take() {
            // The writer drains what was queued, then drops the agent's stdin.
            let _ = io.await;
        }
        let exited = tokio::time::timeout(self.kill_grace, self.wait_for_group()).await;
        if matches!(exited, Ok(Ok(()))) {
            return self.wait().await;
        }
        if signal_group(self.pgid, Signal::SIGTERM)? {
            let ended = tokio::time::timeout(self.kill_grace, self.wait_for_group()).await;
            if !matches!(ended, Ok(Ok(()))) {
                signal_group(self.pgid, Signal::SIGKILL)?;
            }
        }
        self.wait().await
    }

    /// SIGKILL to the whole group now.
    ///
    /// Does not wait; use [`wait`](Self::wait) for the exit status.
    pub fn kill(&mut self) -> io::Result<()> {
        signal_group(self.pgid, Signal::SIGKILL).map(|_| ())
    }

    /// The last lines (at most [`STDERR_TAIL_LINES`]) the agent wrote to
    /// standard error, oldest first, for error messages such as
    /// `agent crashed: <last lines>`.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.tail.lines()
    }

    /// Waits for the child, then for every other member of its group, to
    /// be gone.
    async fn wait_for_group(&mut self) -> io::Result<()> {
        self.child.wait().await?;
        while group_exists(self.pgid) {
            tokio::time::sleep(GROUP_POLL_INTERVAL).await;
        }
        Ok(())
    }

    /// Gives the standard error reader a short time to reach end of file.
    /// Tried once: a grandchild may hold the pipe open for a long time.
    async fn drain_stderr(&mut self) {
        if let Some(task) = self.stderr_task.take() {
            let _ = tokio::time::timeout(STDERR_DRAIN_TIMEOUT, task).await;
        }
    }
}

impl fmt::Debug for AgentProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentProcess")
            .field("pid", &self.child.id())
            .field("pgid", &self.pgid.as_raw())
            .field("kill_grace", &self.kill_grace)
            .finish_non_exhaustive()
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        // The I/O task goes on until the queued output is written and the
        // agent's stdin is closed; then it ends by itself.
        self.conn.close();
        if !group_exists(self.pgid) {
            return;
        }
        let (pgid, grace) = (self.pgid, self.kill_grace);
        let killer = std::thread::Builder::new()
            .name("acp-agent-kill".to_owned())
            .spawn(move || stop_group_after(pgid, grace));
        if killer.is_err() {
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }
}

/// A running agent started by [`AgentCommand::spawn_stdio`]: the owner of
/// its process group, with no connection.
///
/// Dropping it stops the group as dropping an [`AgentProcess`] does: if the
/// group is still there after the grace period, it gets `SIGTERM`, then
/// `SIGKILL` after another, from a separate thread.
pub struct AgentChild {
    child: Child,
    pgid: Pid,
    kill_grace: Duration,
    tail: StderrTail,
    stderr_task: Option<JoinHandle<()>>,
}

impl AgentChild {
    /// The agent's process id, or `None` once it has been waited for.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// The id of the agent's process group (every signal goes to it).
    pub fn process_group(&self) -> i32 {
        self.pgid.as_raw()
    }

    /// Waits for the agent to exit (cancel safe).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait().await?;
        if let Some(task) = self.stderr_task.take() {
            let _ = tokio::time::timeout(STDERR_DRAIN_TIMEOUT, task).await;
        }
        Ok(status)
    }

    /// SIGKILL to the whole group now.
    pub fn kill(&mut self) -> io::Result<()> {
        signal_group(self.pgid, Signal::SIGKILL).map(|_| ())
    }

    /// The last lines (at most [`STDERR_TAIL_LINES`]) the agent wrote to
    /// standard error, oldest first.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.tail.lines()
    }
}

impl fmt::Debug for AgentChild {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentChild")
            .field("pid", &self.child.id())
            .field("pgid", &self.pgid.as_raw())
            .field("kill_grace", &self.kill_grace)
            .finish_non_exhaustive()
    }
}

impl Drop for AgentChild {
    fn drop(&mut self) {
        if !group_exists(self.pgid) {
            return;
        }
        let (pgid, grace) = (self.pgid, self.kill_grace);
        let killer = std::thread::Builder::new()
            .name("acp-agent-kill".to_owned())
            .spawn(move || stop_group_after(pgid, grace));
        if killer.is_err() {
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }
}

/// Takes the child's three pipes, which `spawn` asked for.
fn take_pipes(
    child: &mut Child,
) -> Option<(
    tokio::process::ChildStdin,
    tokio::process::ChildStdout,
    ChildStderr,
)> {
    Some((
        child.stdin.take()?,
        child.stdout.take()?,
        child.stderr.take()?,
    ))
}

/// The child leads its own group, so the group id is its process id.
fn process_group_id(child: &Child) -> Option<Pid> {
    let pid = i32::try_from(child.id()?).ok()?;
    Some(Pid::from_raw(pid))
}

/// Sends `signal` to the group; `Ok(false)` if the group no longer exists.
fn signal_group(pgid: Pid, signal: Signal) -> io::Result<bool> {
    match killpg(pgid, signal) {
        Ok(()) => Ok(true),
        Err(Errno::ESRCH) => Ok(false),
        Err(errno) => Err(io::Error::from(errno)),
    }
}

/// Whether any process (including an unreaped zombie) is left in the group.
fn group_exists(pgid: Pid) -> bool {
    killpg(pgid, None) != Err(Errno::ESRCH)
}

/// Body of the thread started on drop: `SIGTERM` to the group once the
/// grace period is over, then `SIGKILL` after another, unless it is gone.
fn stop_group_after(pgid: Pid, grace: Duration) {
    for signal in [Signal::SIGTERM, Signal::SIGKILL] {
        if !wait_for_group_to_end(pgid, grace) {
            let _ = killpg(pgid, signal);
        } else {
            return;
        }
    }
}

/// Waits up to `grace` for the group to be gone; true if it is.
fn wait_for_group_to_end(pgid: Pid, grace: Duration) -> bool {
    let deadline = Instant::now() + grace;
    while group_exists(pgid) {
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        std::thread::sleep(GROUP_POLL_INTERVAL.min(deadline - now));
    }
    true
}

/// The default standard error handler: log each line with `tracing`.
fn log_stderr_line(pid: i32) -> StderrCallback {
    Arc::new(move |line: &str| {
        tracing::info!(target: "acp::agent_stderr", pid, "{line}");
    })
}
