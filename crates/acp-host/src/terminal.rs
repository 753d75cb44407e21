//! `terminal/*` on the local machine: [`Terminals`].
//!
//! Each command runs under a supervisor process of its own (see
//! [`crate::supervisor`]), sandboxed as [`TerminalSettings::sandbox`] says.
//! Its standard output and standard error are one pipe, so the captured
//! output keeps the order in which the command wrote it; it keeps the most
//! recent `outputByteLimit` bytes (by default [`DEFAULT_OUTPUT_LIMIT`]),
//! cut at a UTF-8 character boundary, and never more than fits in one
//! message. The exit status names signals as `SIGKILL`, `SIGTERM`, ….
//! `terminal/kill` and `terminal/release` end every descendant of the
//! command, including those that left its process group or session or
//! whose parent exited, and answer once they are gone; so does the
//! client's exit, however it happens (the supervisors notice their control
//! socket closing).
//!
//! The environment of a command is the client's, with the request's `env`
//! added (a name given there replaces the client's value); nothing else
//! is added or removed. Its working directory is the request's `cwd`
//! (which must be absolute, a directory, and inside the roots when they
//! are confined), else the session's working directory. Its standard input
//! is `/dev/null`.

use crate::output::{OutputBuffer, OutputSince};
use crate::read::ENVELOPE;
use crate::roots::{Roots, invalid};
use crate::sandbox::Sandbox;
use crate::supervisor::{SUPERVISOR_ENV, Spec};
use acp_schema::{
    CreateTerminalRequest, CreateTerminalResponse, Error, ErrorCode, KillTerminalRequest,
    KillTerminalResponse, ReleaseTerminalRequest, ReleaseTerminalResponse, SessionId,
    TerminalExitStatus, TerminalId, TerminalOutputRequest, TerminalOutputResponse,
    WaitForTerminalExitRequest, WaitForTerminalExitResponse,
};
use std::collections::HashMap;
use std::io::Read;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::watch;

/// The output kept when the agent gives no `outputByteLimit`: 1 MiB, the
/// most recent bytes. Enough for any build log a model can use, and a
/// bound on the memory a chatty command can take.
pub const DEFAULT_OUTPUT_LIMIT: usize = 1024 * 1024;

/// After the command exits, how long to wait for the rest of its output
/// (a background process may keep the pipe open).
const OUTPUT_DRAIN: Duration = Duration::from_millis(500);

/// How long a new supervisor gets to say whether the command started (a
/// loaded machine may be slow to run a program).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a kill may take before it is reported as failed.
const KILL_TIMEOUT: Duration = Duration::from_secs(30);

/// Which program runs as the supervisor of terminal commands.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SupervisorProgram {
    /// This very executable, whose `main` calls
    /// [`crate::supervise_if_requested`] first.
    CurrentExe,
    /// Another program that does (such as the `acp-host-supervisor` binary
    /// of this crate).
    Path(PathBuf),
}

impl SupervisorProgram {
    fn path(&self) -> PathBuf {
        match self {
            SupervisorProgram::Path(path) => path.clone(),
            SupervisorProgram::CurrentExe if cfg!(target_os = "linux") => {
                // The running executable even if its file was replaced.
                PathBuf::from("/proc/self/exe")
            }
            SupervisorProgram::CurrentExe => {
                std::env::current_exe().unwrap_or_else(|_| PathBuf::from("acp"))
            }
        }
    }
}

/// How a [`Terminals`] runs commands.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TerminalSettings {
    /// Where a command's `cwd` may be (and the default one: the first root).
    pub roots: Roots,
    /// The sandbox of every command.
    pub sandbox: Sandbox,
    /// The supervisor program.
    pub supervisor: SupervisorProgram,
    /// The output kept when the request sets no `outputByteLimit`.
    pub default_output_limit: usize,
    /// The connection's largest message: no output answer exceeds it.
    pub max_message_size: usize,
}

impl TerminalSettings {
    /// Settings with the roots' directories and the temporary directories as
    /// the sandbox's writable places ([`Sandbox::for_roots`]), this executable as the supervisor, and the defaults above.
    pub fn new(roots: Roots) -> Self {
        TerminalSettings {
            sandbox: Sandbox::for_roots(roots.dirs().iter().cloned()),
            roots,
            supervisor: SupervisorProgram::CurrentExe,
            default_output_limit: DEFAULT_OUTPUT_LIMIT,
            max_message_size: crate::DEFAULT_MAX_MESSAGE_SIZE,
        }
    }

    /// The same settings with another sandbox.
    #[must_use]
    pub fn sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// The same settings with another supervisor program.
    #[must_use]
    pub fn supervisor(mut self, supervisor: SupervisorProgram) -> Self {
        self.supervisor = supervisor;
        self
    }

    /// The same settings with another message size limit.
    #[must_use]
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }
}

/// The terminals of a client, by id. Needs a Tokio runtime.
pub struct Terminals {
    settings: TerminalSettings,
    next: AtomicU64,
    running: Mutex<HashMap<TerminalId, Arc<Running>>>,
}

impl std::fmt::Debug for Terminals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terminals")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

struct Running {
    session: SessionId,
    output: Arc<Mutex<OutputBuffer>>,
    exit: watch::Receiver<Option<TerminalExitStatus>>,
    /// How many `killed` answers the supervisor sent; `None` once it is gone.
    kills: watch::Receiver<Option<u64>>,
    control: tokio::sync::Mutex<Option<OwnedWriteHalf>>,
}

impl Terminals {
    /// No terminals yet.
    pub fn new(settings: TerminalSettings) -> Self {
        Terminals {
            settings,
            next: AtomicU64::new(0),
            running: Mutex::new(HashMap::new()),
        }
    }

    /// The settings.
    pub fn settings(&self) -> &TerminalSettings {
        &self.settings
    }

    /// `terminal/create`: starts the command and answers with its id once
    /// it runs (an error if it could not start).
    pub async fn create(
        &self,
        request: CreateTerminalRequest,
    ) -> Result<CreateTerminalResponse, Error> {
        let cwd = match request.cwd.as_deref() {
            Some(dir) => {
                let resolved = self.settings.roots.resolve(dir)?;
                if !resolved.is_dir() {
                    return Err(invalid(format!(
                        "the terminal's cwd {dir} is not a directory"
                    )));
                }
                resolved
            }
            None => self.settings.roots.cwd().to_path_buf(),
        };
        let (reader, writer) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
            .map_err(|e| internal(format!("cannot create a pipe: {e}")))?;
        let writer_err = writer
            .try_clone()
            .map_err(|e| internal(format!("cannot create a pipe: {e}")))?;
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()
            .map_err(|e| internal(format!("cannot create a socket: {e}")))?;
        ours.set_nonblocking(true)
            .map_err(|e| internal(format!("cannot create a socket: {e}")))?;
        let spec = serde_json::to_string(&Spec {
            sandbox: self.settings.sandbox.clone(),
        })
        .map_err(|e| internal(format!("cannot describe the sandbox: {e}")))?;
        let mut command = tokio::process::Command::new(self.settings.supervisor.path());
        command
            .arg(&request.command)
            .args(&request.args)
            .envs(request.env.iter().map(|v| (&v.name, &v.value)))
            .env(SUPERVISOR_ENV, spec)
            .current_dir(&cwd)
            .stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
            .stdout(writer)
            .stderr(writer_err)
            .process_group(0)
            .kill_on_drop(false);
        let mut supervisor = command.spawn().map_err(|e| {
            internal(format!(
                "cannot start the terminal supervisor {}: {e}",
                self.settings.supervisor.path().display()
            ))
        })?;
        // Our copies of the pipe's writing end must go, or its reader would
        // never see the end.
        drop(command);
        tokio::spawn(async move {
            let _ = supervisor.wait().await;
        });
        let stream = tokio::net::UnixStream::from_std(ours)
            .map_err(|e| internal(format!("cannot watch the terminal: {e}")))?;
        let (read_half, write_half) = stream.into_split();
        let mut lines = BufReader::new(read_half).lines();
        let first = tokio::time::timeout(START_TIMEOUT, lines.next_line()).await;
        match first {
            Ok(Ok(Some(line))) if line.starts_with("started ") => {}
            Ok(Ok(Some(line))) if line.starts_with("error ") => {
                return Err(internal(format!(
                    "cannot run {:?} in {}: {}",
                    request.command,
                    cwd.display(),
                    &line["error ".len()..]
                )));
            }
            Ok(Ok(_)) | Ok(Err(_)) => {
                return Err(internal(format!(
                    "the terminal supervisor {} did not start; a program that runs terminals \
                     must call acp_host::supervise_if_requested() first in main",
                    self.settings.supervisor.path().display()
                )));
            }
            Err(_) => return Err(internal("the terminal supervisor did not answer")),
        }
        let limit = request
            .output_byte_limit
            .map_or(self.settings.default_output_limit, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            })
            .min(self.settings.max_message_size);
        let output = Arc::new(Mutex::new(OutputBuffer::new(limit)));
        let drained = spawn_reader(reader, Arc::clone(&output));
        let (exit_tx, exit_rx) = watch::channel(None);
        let (kills_tx, kills_rx) = watch::channel(Some(0));
        tokio::spawn(watch_supervisor(lines, drained, exit_tx, kills_tx));
        let id = TerminalId::new(format!(
            "term-{}",
            self.next.fetch_add(1, Ordering::Relaxed) + 1
        ));
        let running = Arc::new(Running {
            session: request.session_id,
            output,
            exit: exit_rx,
            kills: kills_rx,
            control: tokio::sync::Mutex::new(Some(write_half)),
        });
        self.lock().insert(id.clone(), running);
        Ok(CreateTerminalResponse::new(id))
    }

    /// `terminal/output`: the output so far, and the exit status once the
    /// command has exited.
    pub fn output(&self, request: &TerminalOutputRequest) -> Result<TerminalOutputResponse, Error> {
        let running = self.get(&request.session_id, &request.terminal_id)?;
        let exit = running.exit.borrow().clone();
        let budget = self.settings.max_message_size.saturating_sub(ENVELOPE);
        let (text, truncated) = lock(&running.output).snapshot(budget);
        let mut response = TerminalOutputResponse::new(text, truncated);
        response.exit_status = exit;
        Ok(response)
    }

    /// The output after offset `from` (see [`OutputBuffer::since`]) and the
    /// exit status if the command has exited (its output is then complete),
    /// for a client that shows output as it arrives.
    pub fn output_since(
        &self,
        id: &TerminalId,
        from: usize,
        all: bool,
    ) -> Result<(OutputSince, Option<TerminalExitStatus>), Error> {
        let running = self.find(id)?;
        let exit = running.exit.borrow().clone();
        let since = lock(&running.output).since(from, all || exit.is_some());
        Ok((since, exit))
    }

    /// The whole output of terminal `id` as [`Terminals::output`] gives it,
    /// whatever its session.
    pub fn output_of(&self, id: &TerminalId) -> Result<TerminalOutputResponse, Error> {
        let running = self.find(id)?;
        self.output(&TerminalOutputRequest::new(
            running.session.clone(),
            id.clone(),
        ))
    }

    /// `terminal/wait_for_exit`: resolves when the command has exited.
    pub async fn wait_for_exit(
        &self,
        request: WaitForTerminalExitRequest,
    ) -> Result<WaitForTerminalExitResponse, Error> {
        let running = self.get(&request.session_id, &request.terminal_id)?;
        Ok(wait_exit(&running).await?.into())
    }

    /// `terminal/kill`: kills the command and every descendant, and answers
    /// once they are gone; the terminal and its output stay.
    pub async fn kill(&self, request: KillTerminalRequest) -> Result<KillTerminalResponse, Error> {
        let running = self.get(&request.session_id, &request.terminal_id)?;
        kill(&running).await?;
        Ok(KillTerminalResponse::new())
    }

    /// `terminal/release`: kills what still runs and forgets the terminal.
    pub async fn release(
        &self,
        request: ReleaseTerminalRequest,
    ) -> Result<ReleaseTerminalResponse, Error> {
        self.get(&request.session_id, &request.terminal_id)?;
        let running = self
            .lock()
            .remove(&request.terminal_id)
            .ok_or_else(|| unknown(&request.terminal_id))?;
        release(&running).await?;
        Ok(ReleaseTerminalResponse::new())
    }

    /// Releases every terminal (when the client shuts down).
    pub async fn shutdown(&self) {
        let all: Vec<Arc<Running>> = self.lock().drain().map(|(_, r)| r).collect();
        for running in all {
            let _ = release(&running).await;
        }
    }

    fn get(&self, session: &SessionId, id: &TerminalId) -> Result<Arc<Running>, Error> {
        let running = self.find(id)?;
        if &running.session != session {
            return Err(unknown(id));
        }
        Ok(running)
    }

    fn find(&self, id: &TerminalId) -> Result<Arc<Running>, Error> {
        self.lock().get(id).cloned().ok_or_else(|| unknown(id))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TerminalId, Arc<Running>>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

async fn wait_exit(running: &Running) -> Result<TerminalExitStatus, Error> {
    let mut exit = running.exit.clone();
    let status = exit
        .wait_for(Option::is_some)
        .await
        .map_err(|_| internal("the terminal's watcher stopped"))?;
    Ok(status.clone().unwrap_or_default())
}

/// Asks the supervisor to kill the tree and waits for its answer and for
/// the exit status.
async fn kill(running: &Running) -> Result<(), Error> {
    let work = async {
        let mut control = running.control.lock().await;
        let Some(writer) = control.as_mut() else {
            return Ok(());
        };
        let mut kills = running.kills.clone();
        let before = *kills.borrow();
        let Some(before) = before else {
            return Ok(());
        };
        if writer.write_all(b"kill\n").await.is_err() {
            return Ok(());
        }
        let _ = kills.wait_for(|n| n.is_none_or(|n| n > before)).await;
        drop(control);
        wait_exit(running).await.map(|_| ())
    };
    tokio::time::timeout(KILL_TIMEOUT, work)
        .await
        .map_err(|_| internal("the terminal's processes could not be killed in time"))?
}

/// Kills the tree, then lets the supervisor go.
async fn release(running: &Running) -> Result<(), Error> {
    let result = kill(running).await;
    running.control.lock().await.take();
    result
}

/// Follows the supervisor's reports until it goes away.
async fn watch_supervisor(
    mut lines: tokio::io::Lines<BufReader<OwnedReadHalf>>,
    drained: tokio::sync::oneshot::Receiver<()>,
    exit: watch::Sender<Option<TerminalExitStatus>>,
    kills: watch::Sender<Option<u64>>,
) {
    let mut drained = Some(drained);
    while let Ok(Some(line)) = lines.next_line().await {
        let status = if let Some(code) = line.strip_prefix("exit ") {
            Some(TerminalExitStatus::exited(code.parse().unwrap_or(u32::MAX)))
        } else if let Some(signal) = line.strip_prefix("signal ") {
            Some(TerminalExitStatus::signaled(signal))
        } else {
            if line == "killed" {
                kills.send_modify(|n| *n = n.map(|n| n + 1));
            }
            None
        };
        if let Some(status) = status {
            if let Some(drained) = drained.take() {
                let _ = tokio::time::timeout(OUTPUT_DRAIN, drained).await;
            }
            exit.send_replace(Some(status));
        }
    }
    if exit.borrow().is_none() {
        exit.send_replace(Some(TerminalExitStatus::signaled(
            "unknown (supervisor gone)",
        )));
    }
    kills.send_replace(None);
}

/// Reads the pipe on a thread of its own until end of file; the returned
/// receiver resolves then.
fn spawn_reader(
    reader: std::os::fd::OwnedFd,
    output: Arc<Mutex<OutputBuffer>>,
) -> tokio::sync::oneshot::Receiver<()> {
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let mut reader = std::fs::File::from(reader);
    std::thread::spawn(move || {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match reader.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => lock(&output).push(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = done_tx.send(());
    });
    done_rx
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn internal(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, message)
}

fn unknown(id: &TerminalId) -> Error {
    invalid(format!("no terminal with id {id}"))
}
