//! Support for the interoperability tests in `tests/`, which run our ACP
//! pieces against implementations others wrote: the official TypeScript SDK
//! (`interop/js`) and the Python SDK (`interop/python`).
//!
//! This crate has no code of its own beyond what those tests share:
//!
//! - [`binaries`]: our `acp` and `acp-test-agent` executables and the
//!   `echo_agent` example, found in the target directory the tests were built
//!   in, and built with `cargo build` when missing or older than their sources;
//! - [`Peer`]: the TypeScript SDK or the Python SDK, and its programs
//!   ([`Peer::programs`]), with their dependencies installed on first use
//!   (`npm ci`, a virtual environment with `pip install -r
//!   requirements.txt`) when not installed yet;
//! - [`Sandbox`]: a temporary directory with a session directory and a log
//!   file, and commands run in it with a time limit ([`run`]).
//!
//! Installs and builds are guarded by a file lock, so test processes running
//! in parallel do not race. A failed install fails the tests with the tool's
//! output: these tests are never skipped.

use std::ffi::OsStr;
use std::fs::File;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use nix::fcntl::{Flock, FlockArg};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

mod peer;

pub use peer::{Peer, Programs, shell_quote};

/// How long one program run by a test may take before it is killed.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// The repository's root directory.
pub fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::canonicalize(&root).unwrap_or(root)
}

/// Where cargo put this test executable: `<target>/[<triple>/]<profile>/deps/`.
struct Layout {
    target_dir: PathBuf,
    triple: Option<String>,
    profile_dir: PathBuf,
    /// The cargo profile (`dev` for the `debug` directory).
    profile: String,
}

fn layout() -> Result<Layout, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let deps = exe
        .parent()
        .filter(|d| d.file_name() == Some(OsStr::new("deps")))
        .ok_or_else(|| format!("{} is not in a cargo deps directory", exe.display()))?;
    let profile_dir = deps.parent().ok_or("no profile directory")?.to_path_buf();
    let profile = match profile_dir.file_name().and_then(OsStr::to_str) {
        Some("debug") => "dev".to_owned(),
        Some(name) => name.to_owned(),
        None => return Err("no profile directory name".into()),
    };
    let parent = profile_dir.parent().ok_or("no target directory")?;
    // Cargo marks the root of a target directory with CACHEDIR.TAG; with
    // `--target TRIPLE` the profile directory sits one level further down.
    let (target_dir, triple) = if parent.join("CACHEDIR.TAG").exists() {
        (parent.to_path_buf(), None)
    } else {
        let triple = parent
            .file_name()
            .and_then(OsStr::to_str)
            .map(str::to_owned);
        let root = parent.parent().ok_or("no target directory")?.to_path_buf();
        (root, triple)
    };
    Ok(Layout {
        target_dir,
        triple,
        profile_dir,
        profile,
    })
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

/// Our executables under test.
#[derive(Debug)]
pub struct Binaries {
    /// The `acp` client (crate acp-cli).
    pub acp: PathBuf,
    /// The `acp-test-agent` fixture (crate acp-cli).
    pub test_agent: PathBuf,
    /// The `echo_agent` example (crate acp).
    pub echo_agent: PathBuf,
}

impl Binaries {
    fn all(&self) -> [&Path; 3] {
        [&self.acp, &self.test_agent, &self.echo_agent]
    }
}

/// Our executables, built first if missing or older than their sources.
///
/// `cargo test --workspace` builds them itself (binaries of acp-cli for its
/// integration tests, examples of acp); run alone (`cargo test -p
/// acp-interop`), this runs `cargo build -p acp-cli --bins -p acp --examples`
/// with the same target directory and profile.
pub fn binaries() -> &'static Binaries {
    static BINARIES: OnceLock<Result<Binaries, String>> = OnceLock::new();
    match BINARIES.get_or_init(find_or_build_binaries) {
        Ok(b) => b,
        Err(e) => panic!("our binaries are not available: {e}"),
    }
}

fn find_or_build_binaries() -> Result<Binaries, String> {
    let layout = layout()?;
    let bins = Binaries {
        acp: layout.profile_dir.join("acp"),
        test_agent: layout.profile_dir.join("acp-test-agent"),
        echo_agent: layout.profile_dir.join("examples").join("echo_agent"),
    };
    let _lock = install_lock(&layout.target_dir)?;
    if let Some(reason) = needs_build(&bins) {
        eprintln!("acp-interop: building our binaries ({reason})");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
        let mut command = Command::new(cargo);
        command
            .current_dir(repo_root())
            .args([
                "build",
                "-p",
                "acp-cli",
                "--bins",
                "-p",
                "acp",
                "--examples",
            ])
            .arg("--profile")
            .arg(&layout.profile)
            .arg("--target-dir")
            .arg(&layout.target_dir);
        if let Some(triple) = &layout.triple {
            command.arg("--target").arg(triple);
        }
        let out = command
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "`cargo build -p acp-cli --bins -p acp --examples` failed ({}):\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        // Cargo knows best whether they are up to date (a newer file may not
        // be part of any build): from here on only their presence counts.
        if let Some(missing) = bins.all().into_iter().find(|p| !p.exists()) {
            return Err(format!(
                "{} is still missing after cargo build",
                missing.display()
            ));
        }
    }
    Ok(bins)
}

/// Why the binaries must be (re)built, if they must: one is missing, or
/// older than a source file it is built from.
fn needs_build(bins: &Binaries) -> Option<String> {
    const RUNTIME: &[&str] = &[
        "Cargo.toml",
        "crates/acp/Cargo.toml",
        "crates/acp/src",
        "crates/acp-schema/Cargo.toml",
        "crates/acp-schema/src",
    ];
    const CLI: &[&str] = &["crates/acp-cli/Cargo.toml", "crates/acp-cli/src"];
    const EXAMPLES: &[&str] = &["crates/acp/examples"];
    let root = repo_root();
    let newest = |groups: &[&[&str]]| {
        groups
            .iter()
            .flat_map(|g| g.iter())
            .map(|source| newest_mtime(&root.join(source)))
            .max()
            .unwrap_or(SystemTime::UNIX_EPOCH)
    };
    for (path, sources) in [
        (&bins.acp, newest(&[RUNTIME, CLI])),
        (&bins.test_agent, newest(&[RUNTIME, CLI])),
        (&bins.echo_agent, newest(&[RUNTIME, EXAMPLES])),
    ] {
        match std::fs::metadata(path).and_then(|m| m.modified()) {
            Err(_) => return Some(format!("{} is missing", path.display())),
            Ok(built) if built < sources => {
                return Some(format!("{} is older than its sources", path.display()));
            }
            Ok(_) => {}
        }
    }
    None
}

fn newest_mtime(path: &Path) -> SystemTime {
    let Ok(meta) = std::fs::metadata(path) else {
        return SystemTime::UNIX_EPOCH;
    };
    let mut newest = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    if meta.is_dir()
        && let Ok(entries) = std::fs::read_dir(path)
    {
        for entry in entries.flatten() {
            newest = newest.max(newest_mtime(&entry.path()));
        }
    }
    newest
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

    /// `acp exec --agent AGENT ARGS…` (our client against another agent).
    pub fn acp_exec(&self, agent: &str, args: &[&str]) -> Command {
        let mut command = self.command(&binaries().acp);
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
