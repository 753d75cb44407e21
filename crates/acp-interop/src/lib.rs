//! Support for the interoperability tests, which run our ACP pieces against
//! implementations others wrote: the official TypeScript SDK (`interop/js`)
//! and the Python SDK (`interop/python`).
//!
//! The tests live next to what they drive, so that cargo builds it for them
//! and hands them its path (`CARGO_BIN_EXE_…`; the fixture agents through
//! crate acp-testkit); nothing here runs cargo:
//!
//! - `crates/acp-cli/tests/it/interop_exec.rs`: our `acp exec` against the
//!   peers' agents; `crates/acp-cli/tests/it/interop_clients.rs`: the peers'
//!   clients against our `acp-test-agent`;
//! - `tests/it/echo_agent.rs` here: the peers' clients against the `echo_agent`
//!   example of crate `acp` (built by this crate as its binary
//!   `echo_agent`, from the example's source file);
//! - `tests/it/runtime.rs` here: our runtime's client connection against the
//!   peers' agents;
//! - `tests/it/v2.rs` here (feature `v2`, on by default): protocol v2 against
//!   the TypeScript SDK's `experimental/v2` client and agent, directly and
//!   through the v1 ↔ v2 bridge (this crate's binary `interop-bridge`);
//! - `crates/acp-e2e/tests/it/check_agents.rs`: `acp check agent` judging the
//!   peers' agents (and our own).
//!
//! What they share:
//!
//! - [`Peer`]: the TypeScript SDK or the Python SDK, and its programs
//!   ([`Peer::programs`]), with their dependencies installed on first use
//!   (`npm ci`, a virtual environment with `pip install -r
//!   requirements.txt`) when not installed yet. [`Peer::available`] skips a
//!   test, with one line on standard error, when the peer's runtime (`node`,
//!   `python3`) is missing, unless `ACP_INTEROP=require` makes that a failure;
//! - [`acpx()`]: acpx, a client others wrote, pinned in `interop/acpx`, for
//!   `acp check client` (`crates/acp-cli/tests/it/interop_check_client.rs`);
//! - [`Sandbox`]: a temporary directory with a session directory and a log
//!   file, and commands run in it with a time limit ([`run`]).
//!
//! Installs are guarded by a file lock, so test processes running in
//! parallel do not race. A failed install fails the tests with the tool's
//! output.

use std::ffi::OsStr;
use std::fs::File;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

mod acpx;
mod peer;

pub use acpx::acpx;
pub use peer::{Peer, Programs, shell_quote};

/// How long one program run by a test may take before it is killed.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// The repository's root directory.
pub fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::canonicalize(&root).unwrap_or(root)
}

/// The target directory this test executable was built in (the lock file
/// of the installs lives there): `<target>/[<triple>/]<profile>/deps/…`,
/// whose root cargo marks with `CACHEDIR.TAG`.
fn target_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    exe.ancestors()
        .skip(1)
        .find(|dir| dir.join("CACHEDIR.TAG").exists())
        .map(Path::to_path_buf)
        .ok_or_else(|| format!("{} is not in a cargo target directory", exe.display()))
}

/// Holds an exclusive lock on `<target>/acp-interop.lock` while alive.
struct InstallLock {
    _lock: Flock<File>,
}

fn install_lock(target_dir: &Path) -> Result<InstallLock, String> {
    let path = target_dir.join("acp-interop.lock");
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let lock = Flock::lock(file, FlockArg::LockExclusive)
        .map_err(|(_, e)| format!("cannot lock {}: {e}", path.display()))?;
    Ok(InstallLock { _lock: lock })
}

/// A temporary directory for one test: `work/` is the session directory
/// (canonical, so paths compare exactly) and `peer.log` the log file the
/// peers' agents and `acp-test-agent` append their events to.
#[derive(Debug)]
pub struct Sandbox {
    dir: tempfile::TempDir,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    /// A new sandbox.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        for sub in ["home", "config", "work"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("sandbox directory");
        }
        Sandbox { dir }
    }

    /// The sandbox's root.
    pub fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).expect("sandbox root")
    }

    /// The session directory.
    pub fn work(&self) -> PathBuf {
        self.root().join("work")
    }

    /// The log file the agents write to (see `INTEROP_LOG`, `ACP_TEST_AGENT_LOG`).
    pub fn log_path(&self) -> PathBuf {
        self.root().join("peer.log")
    }

    /// The log so far ("" before anything was logged).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// Writes `content` to `work/name` and returns the file's path.
    pub fn write(&self, name: &str, content: &str) -> PathBuf {
        let path = self.work().join(name);
        std::fs::write(&path, content).expect("write sandbox file");
        path
    }

    /// `program` run in `work/` with a small, fixed environment: `PATH`, a
    /// sandbox `HOME` and `XDG_CONFIG_HOME`, and the log variables of the
    /// agents (`INTEROP_LOG`, `ACP_TEST_AGENT_LOG`).
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new(program);
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root().join("home"))
            .env("XDG_CONFIG_HOME", self.root().join("config"))
            .env("INTEROP_LOG", self.log_path())
            .env("ACP_TEST_AGENT_LOG", self.log_path())
            .current_dir(self.work());
        command
    }

    /// `ACP exec --agent AGENT ARGS…`: our client, the `acp` executable at
    /// `acp`, against another agent.
    pub fn acp_exec(&self, acp: impl AsRef<OsStr>, agent: &str, args: &[&str]) -> Command {
        let mut command = self.command(acp);
        command.args(["exec", "--agent", agent]).args(args);
        command
    }

    /// A peer's client against `agent` (our agent), with `options` before `--`.
    pub fn peer_client<A: AsRef<OsStr>>(
        &self,
        peer: Peer,
        options: &[&str],
        agent: &[A],
    ) -> Command {
        let programs = peer.programs();
        let mut command = self.command(&programs.interpreter);
        command
            .arg(programs.client_script())
            .args(options)
            .arg("--")
            .args(agent);
        command
    }
}

/// What a finished program left.
#[derive(Debug)]
pub struct Output {
    /// The exit code (`None` if killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// A started program whose output is being collected.
#[derive(Debug)]
pub struct Running {
    child: Child,
    started: Instant,
    stdout: Option<std::thread::JoinHandle<Vec<u8>>>,
    stderr: std::thread::JoinHandle<Vec<u8>>,
}

/// Starts `command` with standard input closed and its outputs piped, in a
/// process group of its own (so a time-out can stop everything it started).
pub fn spawn(mut command: Command) -> Running {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    Running {
        child,
        started: Instant::now(),
        stdout: Some(std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stdout.read_to_end(&mut buf);
            buf
        })),
        stderr: std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stderr.read_to_end(&mut buf);
            buf
        }),
    }
}

/// Starts `command` and returns it with its standard output left to the
/// caller (to read it as it streams), standard error collected.
pub fn spawn_streaming(mut command: Command) -> (Running, std::process::ChildStdout) {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    let stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let running = Running {
        child,
        started: Instant::now(),
        stdout: None,
        stderr: std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stderr.read_to_end(&mut buf);
            buf
        }),
    };
    (running, stdout)
}

impl Running {
    /// The process id.
    pub fn pid(&self) -> Pid {
        Pid::from_raw(self.child.id() as i32)
    }

    /// Waits for the program to end; after [`TIMEOUT`] its process group is
    /// killed and the test fails with what it printed.
    pub fn finish(mut self) -> Output {
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break Some(status);
            }
            if self.started.elapsed() > TIMEOUT {
                let _ = killpg(self.pid(), Signal::SIGKILL);
                let _ = self.child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let stdout = self
            .stdout
            .map(|h| String::from_utf8_lossy(&h.join().unwrap_or_default()).into_owned())
            .unwrap_or_default();
        let stderr = String::from_utf8_lossy(&self.stderr.join().unwrap_or_default()).into_owned();
        match status {
            Some(status) => Output {
                code: status.code(),
                stdout,
                stderr,
            },
            None => {
                panic!("timed out after {TIMEOUT:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}")
            }
        }
    }
}

/// Runs `command` to its end (see [`spawn`] and [`Running::finish`]).
pub fn run(command: Command) -> Output {
    spawn(command).finish()
}

/// Fails unless `out` ended with exit code `code`, showing what it printed.
#[track_caller]
pub fn assert_code(out: &Output, code: i32) {
    assert_eq!(
        out.code,
        Some(code),
        "exit code\n--- stdout\n{}\n--- stderr\n{}",
        out.stdout,
        out.stderr
    );
}

/// Fails on any complaint a peer's client printed about a message it
/// received (the Python SDK logs a handler's pydantic validation error with
/// its traceback).
#[track_caller]
pub fn assert_sdk_accepted_everything(peer: Peer, out: &Output) {
    let complaints: &[&str] = match peer {
        Peer::Js => &[
            "Invalid message",
            "Error handling notification",
            "Got response to unknown request",
        ],
        Peer::Python => &["Traceback", "ValidationError", "Unhandled error"],
    };
    for complaint in complaints {
        assert!(
            !out.stderr.contains(complaint),
            "the {} complained:\n{}",
            peer.name(),
            out.stderr
        );
    }
}

/// The JSON a peer's agent logged after `prefix ` (its first such line).
#[track_caller]
pub fn logged(log: &str, prefix: &str) -> serde_json::Value {
    let line = log
        .lines()
        .find_map(|l| l.strip_prefix(prefix).and_then(|l| l.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no {prefix:?} line in the agent's log:\n{log}"));
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{prefix}: {e}: {line}"))
}

/// Our typed value, encoded again, says what the JSON the peer sent says:
/// every field it sent is there with the same value (nothing was lost or
/// changed in decoding). Fields the peer left out may come back only with
/// their default value (`false`, `{}` or `[]`).
#[track_caller]
pub fn assert_round_trip<T: serde::Serialize>(what: &str, typed: &T, sent: &serde_json::Value) {
    let again = serde_json::to_value(typed).expect("encode");
    let mut problems = Vec::new();
    compare("", sent, &again, &mut problems);
    assert!(
        problems.is_empty(),
        "{what}: decoding changed the message:\n{}\n--- sent\n{sent}\n--- decoded and encoded again\n{again}",
        problems.join("\n")
    );
}

fn compare(
    path: &str,
    sent: &serde_json::Value,
    again: &serde_json::Value,
    problems: &mut Vec<String>,
) {
    use serde_json::Value;
    match (sent, again) {
        (Value::Object(s), Value::Object(a)) => {
            for (k, v) in s {
                match a.get(k) {
                    Some(w) => compare(&format!("{path}/{k}"), v, w, problems),
                    None => problems.push(format!("{path}/{k}: dropped (was {v})")),
                }
            }
            for (k, w) in a {
                let default = matches!(w, Value::Bool(false))
                    || w.as_object().is_some_and(|o| o.is_empty())
                    || w.as_array().is_some_and(|o| o.is_empty());
                if !s.contains_key(k) && !default {
                    problems.push(format!("{path}/{k}: added {w}"));
                }
            }
        }
        (Value::Array(s), Value::Array(a)) if s.len() == a.len() => {
            for (i, (v, w)) in s.iter().zip(a).enumerate() {
                compare(&format!("{path}/{i}"), v, w, problems);
            }
        }
        _ if sent == again => {}
        _ => problems.push(format!("{path}: {sent} became {again}")),
    }
}

/// A [`Client`](acp::Client) that records every update, typed, and answers
/// permission requests with the first option that allows.
#[derive(Clone, Default)]
pub struct Recorder {
    /// The updates received so far.
    pub updates: Arc<Mutex<Vec<acp::schema::SessionNotification>>>,
}

impl acp::Client for Recorder {
    async fn session_notification(
        &self,
        n: acp::schema::SessionNotification,
        _cx: acp::NotificationContext<acp::ClientSide>,
    ) -> Result<(), acp::schema::Error> {
        self.updates.lock().expect("updates").push(n);
        Ok(())
    }

    async fn request_permission(
        &self,
        request: acp::schema::RequestPermissionRequest,
        _cx: acp::RequestContext<acp::ClientSide>,
    ) -> Result<acp::schema::RequestPermissionResponse, acp::schema::Error> {
        use acp::schema::{PermissionOptionKind, RequestPermissionResponse};
        let allow = request.options.iter().find(|o| {
            matches!(
                o.kind,
                PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways
            )
        });
        Ok(match allow {
            Some(o) => RequestPermissionResponse::selected(o.option_id.clone()),
            None => RequestPermissionResponse::cancelled(),
        })
    }
}

/// Our runtime's client connection to a peer's agent, with every line read
/// from the agent kept as JSON.
pub struct Connected {
    /// The connection.
    pub conn: acp::ClientSideConnection,
    /// What our client received.
    pub recorder: Recorder,
    incoming: Arc<Mutex<Vec<serde_json::Value>>>,
    process: acp::AgentProcess,
}

/// Starts `peer`'s agent in the sandbox (with `env` added) and connects our
/// runtime's [`ClientSideConnection`](acp::ClientSideConnection) to it. Needs
/// a Tokio runtime.
pub fn connect(peer: Peer, sb: &Sandbox, env: &[(&str, &str)]) -> Connected {
    let [program, script]: [String; 2] = peer
        .programs()
        .agent_command()
        .try_into()
        .expect("two words");
    let mut command = acp::AgentCommand::new(program)
        .arg(script)
        .env("INTEROP_LOG", sb.log_path())
        .current_dir(sb.work());
    for (k, v) in env {
        command = command.env(k, v);
    }
    let incoming = Arc::new(Mutex::new(Vec::new()));
    let lines = incoming.clone();
    let options = acp::ConnectionOptions::default().tap(move |event| {
        if event.direction == acp::Direction::Incoming {
            // A line that is not JSON is kept as a string, to fail the checks.
            let value = serde_json::from_slice(event.line)
                .unwrap_or_else(|_| serde_json::Value::String(event.text().into_owned()));
            lines.lock().expect("lines").push(value);
        }
    });
    let recorder = Recorder::default();
    let client = recorder.clone();
    let process = command
        .connect(options, move |_| client)
        .expect("start the agent");
    let conn = process.connection().clone();
    Connected {
        conn,
        recorder,
        incoming,
        process,
    }
}

impl Connected {
    /// The `result` of the response to our request `id`, as it came over the wire.
    #[track_caller]
    pub fn raw_result(&self, id: i64) -> serde_json::Value {
        self.incoming
            .lock()
            .expect("lines")
            .iter()
            .find(|m| m["id"] == id && m.get("result").is_some())
            .unwrap_or_else(|| panic!("no result for request {id}"))["result"]
            .clone()
    }

    /// The params of every `session/update` that came over the wire.
    pub fn raw_updates(&self) -> Vec<serde_json::Value> {
        self.incoming
            .lock()
            .expect("lines")
            .iter()
            .filter(|m| m["method"] == "session/update")
            .map(|m| m["params"].clone())
            .collect()
    }

    /// Waits until an update with the message text `text` has arrived.
    pub async fn wait_for_text(&self, text: &str) {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            let seen = self.recorder.updates.lock().expect("updates").iter().any(|n| {
                matches!(&n.update, acp::schema::SessionUpdate::AgentMessageChunk(c) if c.content.as_text() == Some(text))
            });
            if seen {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no chunk {text:?} from the agent"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Closes the connection and waits for the agent to exit (stopping it
    /// after 5 s).
    pub async fn close(mut self) {
        self.conn.close();
        if tokio::time::timeout(Duration::from_secs(5), self.process.wait())
            .await
            .is_err()
        {
            let _ = self.process.shutdown().await;
        }
    }
}
