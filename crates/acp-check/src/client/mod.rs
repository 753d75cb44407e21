//! `acp check client`: judging a client through one prompt turn.
//!
//! The checker is the agent. It writes a script `agent` into a temporary
//! directory, substitutes its path for `{agent}` in the client's command
//! line, and starts the client there (in a `workspace` subdirectory). The
//! client starts the script, which runs the [relay]: the relay connects to
//! the judge's Unix socket and passes bytes both ways, so the agent's whole
//! life — answering `initialize` and `session/new`, and in the **first
//! prompt turn** calling every client method — runs here, over the same raw
//! [`Wire`] and strict judgement as `acp check agent`.
//!
//! `{agent}` as a whole word of the command line becomes the script's path;
//! inside a longer word (`--agent={agent}`, a shell string) it becomes the
//! path shell-quoted. Either way it is one command with no arguments, so a
//! client that takes the agent as a program, as a command string, or as a
//! shell line can run it.
//!
//! Everything happens in the first prompt turn: a headless client
//! (`acp exec --agent {agent} hello`) needs nothing more, an interactive
//! one needs one prompt typed. The turn ends with a permission request left
//! pending and a SIGINT sent to the client's process group (as a terminal's
//! Ctrl-C would; `--no-interrupt` leaves the cancel to a person), which
//! should make the client send `session/cancel` and answer the pending
//! request `cancelled`. The checks are in [`CHECKS`].

mod checks;
mod elicitation;
pub mod relay;
mod terminal;
mod turn;

pub use checks::CHECKS;

use crate::report::{Filters, Outcome, Report};
use crate::strict::{Envelope, Handler};
use crate::wire::{Call, Log, Received, Wire};
use acp::process::StderrTail;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// How `acp check client` runs.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The client's command line, with `{agent}` somewhere in it.
    pub command: Vec<String>,
    /// The program (and its first arguments) that runs the [relay]; the
    /// socket's path is added as the last argument. `acp` uses
    /// `acp check __agent`.
    pub relay: Vec<String>,
    /// How long each request may take, and how long the client may take to
    /// start the agent and to prompt (`--timeout`).
    pub timeout: Duration,
    /// How long after the interrupt the client may take to send
    /// `session/cancel` (`--cancel-within`).
    pub cancel_within: Duration,
    /// Whether to send SIGINT to the client to have it cancel the turn.
    pub interrupt: bool,
    /// Where to write every line exchanged (`--trace`).
    pub trace: Option<PathBuf>,
    /// Which checks run and how they count.
    pub filters: Filters,
}

impl ClientOptions {
    /// Options with the defaults for `command`, relayed by `relay`.
    pub fn new(command: Vec<String>, relay: Vec<String>) -> ClientOptions {
        ClientOptions {
            command,
            relay,
            timeout: Duration::from_secs(30),
            cancel_within: Duration::from_secs(10),
            interrupt: true,
            trace: None,
            filters: Filters::default(),
        }
    }
}

/// The placeholder for the checking agent in the client's command line.
pub const PLACEHOLDER: &str = "{agent}";

/// `command` with `{agent}` replaced by `agent`: a whole word as it is, a
/// part of a word shell-quoted. An error when no word has it.
pub fn substitute(command: &[String], agent: &str) -> Result<Vec<String>, String> {
    if !command.iter().any(|w| w.contains(PLACEHOLDER)) {
        return Err(format!(
            "the client's command line has no {PLACEHOLDER}: put it where the client takes the agent's command"
        ));
    }
    Ok(command
        .iter()
        .map(|w| {
            if w == PLACEHOLDER {
                agent.to_string()
            } else {
                w.replace(PLACEHOLDER, &shell_quote(agent))
            }
        })
        .collect())
}

/// `text` quoted for a POSIX shell (unchanged when nothing needs quoting).
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./,:@%+=".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// The client process.
struct ClientProcess {
    child: Child,
    stderr: StderrTail,
    /// Ends when the client's stderr does.
    stderr_read: Option<tokio::task::JoinHandle<()>>,
}

impl ClientProcess {
    fn spawn(argv: &[String], cwd: &Path) -> std::io::Result<ClientProcess> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| std::io::Error::other("no command"))?;
        let program = if program.contains('/') {
            std::path::absolute(program)?.into_os_string()
        } else {
            program.into()
        };
        let mut child = Command::new(&program)
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0)
            .spawn()
            .map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!("cannot start {}: {e}", program.to_string_lossy()),
                )
            })?;
        // Its stdout is the user's view (the reply): read, so that the
        // client never waits on it, and dropped.
        let mut stdout = child.stdout.take().expect("piped");
        tokio::spawn(async move { tokio::io::copy(&mut stdout, &mut tokio::io::sink()).await });
        let (stderr, read) = StderrTail::read(child.stderr.take().expect("piped"), |_| {});
        Ok(ClientProcess {
            child,
            stderr,
            stderr_read: Some(read),
        })
    }

    fn stderr_end(&self) -> String {
        self.stderr.last(3).join(" / ")
    }

    fn signal(&self, signal: nix::sys::signal::Signal) {
        if let Some(pid) = self.child.id() {
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid as i32), signal);
        }
    }

    async fn end(&mut self, wait: Duration) {
        if tokio::time::timeout(wait, self.child.wait()).await.is_err() {
            self.signal(nix::sys::signal::Signal::SIGKILL);
            let _ = self.child.kill().await;
        }
    }
}

/// The session the client opened.
#[derive(Debug, Clone)]
pub struct Session {
    /// The id the checker gave it.
    pub id: String,
    /// The cwd the client asked for.
    pub cwd: PathBuf,
}

/// The context every client check runs in: what the client did in its one
/// life, and the outcomes the turn recorded.
pub struct ClientCx {
    opts: ClientOptions,
    /// Every line of the run.
    pub log: Arc<Log>,
    dir: tempfile::TempDir,
    client: Option<ClientProcess>,
    wire: Option<Wire>,
    lived: bool,
    /// Why the life stopped early, if it did.
    stopped: Option<String>,
    /// Outcomes recorded by the life, by check name.
    results: HashMap<&'static str, Outcome>,
    /// The client's `initialize` request.
    init: Option<Received>,
    /// The client's `session/new` request.
    new_session: Option<Received>,
    session: Option<Session>,
    /// The client's first `session/prompt`.
    prompt: Option<Received>,
    /// The log place of the client's `session/cancel`, once it came.
    cancelled: Option<usize>,
    /// How many more times the client started the agent.
    extra_agents: Arc<Mutex<usize>>,
    next_tool: usize,
    /// A request went unanswered for `--timeout`: later ones wait 1 s at
    /// most, so a client that stopped answering does not hold the run for
    /// a timeout per request.
    silent: bool,
}

/// How long the checker keeps listening for late messages.
const GRACE: Duration = Duration::from_millis(300);

impl ClientCx {
    /// A context for `opts` (nothing started yet).
    pub fn new(opts: ClientOptions) -> std::io::Result<ClientCx> {
        let dir = tempfile::Builder::new().prefix("acp-check-").tempdir()?;
        std::fs::create_dir(dir.path().join("workspace"))?;
        let trace = match &opts.trace {
            Some(path) => Some(std::fs::File::create(path)?),
            None => None,
        };
        Ok(ClientCx {
            opts,
            log: Log::new(trace),
            dir,
            client: None,
            wire: None,
            lived: false,
            stopped: None,
            results: HashMap::new(),
            init: None,
            new_session: None,
            session: None,
            prompt: None,
            cancelled: None,
            extra_agents: Arc::default(),
            next_tool: 0,
            silent: false,
        })
    }

    /// The directory the client runs in.
    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("workspace")
    }

    /// The path substituted for `{agent}`.
    pub fn agent_path(&self) -> PathBuf {
        self.dir.path().join("agent")
    }

    fn socket_path(&self) -> PathBuf {
        self.dir.path().join("agent.sock")
    }

    fn write_agent_script(&self) -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt as _;
        let mut words: Vec<String> = self.opts.relay.iter().map(|w| shell_quote(w)).collect();
        words.push(shell_quote(&self.socket_path().display().to_string()));
        let script = format!(
            "#!/bin/sh\n# The checking agent of acp check client: a relay to the judge.\ntrap '' INT\nexec {}\n",
            words.join(" ")
        );
        let path = self.agent_path();
        std::fs::write(&path, script)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
    }

    /// Records `outcome` for the check `name` (the first one stays).
    fn record(&mut self, name: &'static str, outcome: Outcome) {
        self.results.entry(name).or_insert(outcome);
    }

    /// Whether any selected check starts with `prefix` (a part of the turn
    /// runs only when a check needs it).
    fn wanted(&self, prefix: &str) -> bool {
        CHECKS
            .iter()
            .any(|c| c.name.starts_with(prefix) && self.opts.filters.selects(c.name))
    }

    /// The outcome of check `name`, after running the life once.
    pub async fn judged(&mut self, name: &'static str) -> Outcome {
        self.life().await;
        if let Some(o) = self.results.get(name) {
            return o.clone();
        }
        match &self.stopped {
            Some(why) => Outcome::skip(format!("not reached: {why}")),
            None => Outcome::skip("not reached"),
        }
    }

    fn stop(&mut self, why: String) {
        if self.stopped.is_none() {
            self.stopped = Some(why);
        }
    }

    /// The client's stderr, for messages about its death.
    fn client_said(&self) -> String {
        match &self.client {
            Some(c) => {
                let end = c.stderr_end();
                if end.is_empty() {
                    String::new()
                } else {
                    format!(" (its stderr ends: {end})")
                }
            }
            None => String::new(),
        }
    }

    /// Runs the client's life once: start it, wait for the agent, serve
    /// initialize and session/new, run the turn, end.
    pub async fn life(&mut self) {
        if self.lived {
            return;
        }
        self.lived = true;
        if let Err(why) = self.start().await {
            self.stop(why);
            self.finish().await;
            self.fail_missing_step();
            return;
        }
        self.serve().await;
        self.finish().await;
        self.fail_missing_step();
        checks::judge_wire(self);
    }

    /// Fails the first step of the life that did not happen (the client
    /// must initialize, open a session and prompt once); the checks after it
    /// are skipped as not reached.
    fn fail_missing_step(&mut self) {
        let why = self.stopped.clone().unwrap_or_default();
        let step = if self.init.is_none() {
            "initialize.request"
        } else if self.new_session.is_none() {
            "session.new"
        } else if self.prompt.is_none() {
            "session.prompt"
        } else {
            return;
        };
        let mut o = Outcome::fail(why);
        if step == "session.prompt" {
            o = o.with_notes([
                "acp check client needs the client to send one prompt: give a \
                 headless client one on its command line, or type one"
                    .to_string(),
            ]);
        }
        self.record(step, o);
    }

    async fn start(&mut self) -> Result<(), String> {
        self.write_agent_script()
            .map_err(|e| format!("cannot write the agent script: {e}"))?;
        let listener = tokio::net::UnixListener::bind(self.socket_path())
            .map_err(|e| format!("cannot listen on {}: {e}", self.socket_path().display()))?;
        let argv = substitute(&self.opts.command, &self.agent_path().display().to_string())?;
        let client = ClientProcess::spawn(&argv, &self.workspace()).map_err(|e| e.to_string())?;
        self.client = Some(client);
        let deadline = tokio::time::Instant::now() + self.opts.timeout;
        let stream = loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let exited = self
                .client
                .as_mut()
                .unwrap()
                .child
                .try_wait()
                .ok()
                .flatten();
            if let Some(status) = exited {
                // What it said last, once its stderr has been read to the end.
                if let Some(read) = self.client.as_mut().unwrap().stderr_read.take() {
                    let _ = tokio::time::timeout(Duration::from_secs(1), read).await;
                }
                return Err(format!(
                    "the client exited ({status}) without starting the agent{}",
                    self.client_said()
                ));
            }
            if left.is_zero() {
                return Err(format!(
                    "the client did not start the agent ({PLACEHOLDER}) within {} s{}",
                    self.opts.timeout.as_secs(),
                    self.client_said()
                ));
            }
            let step = left.min(Duration::from_millis(200));
            if let Ok(Ok((stream, _))) = tokio::time::timeout(step, listener.accept()).await {
                break stream;
            }
        };
        // Later starts of the agent are told to go away (closed at once).
        let extra = self.extra_agents.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                *extra.lock().unwrap() += 1;
                drop(stream);
            }
        });
        let (read, write) = stream.into_split();
        let mut read = BufReader::new(read);
        let mut hello = String::new();
        let got = tokio::time::timeout(self.opts.timeout, read.read_line(&mut hello)).await;
        let ok = matches!(got, Ok(Ok(n)) if n > 0)
            && serde_json::from_str::<Value>(&hello).is_ok_and(|v| v["acpCheckRelay"] == 1);
        if !ok {
            return Err("the checking agent's relay did not introduce itself".into());
        }
        let mut wire = Wire::new(0, self.log.clone(), Handler::Client, read, write);
        wire.answer_manually();
        self.wire = Some(wire);
        Ok(())
    }

    fn wire(&mut self) -> &mut Wire {
        self.wire.as_mut().expect("the wire is up")
    }

    /// The next message from the client within `wait`; requests the turn
    /// does not expect are answered here, `session/cancel` is noted.
    async fn next(&mut self, wait: Duration) -> Option<Received> {
        let got = self.wire().next(wait).await?;
        if let Some(Envelope::Notification { method }) = &got.envelope
            && method == "session/cancel"
            && self.cancelled.is_none()
        {
            self.cancelled = Some(got.seq);
        }
        Some(got)
    }

    /// Answers a request of the client the turn has no use for.
    fn refuse(&mut self, id: &Value, method: &str) {
        let error = match method {
            "session/prompt" | "session/new" => {
                json!({"code": -32603, "message": "acp check serves one session and one prompt turn"})
            }
            _ => json!({"code": -32601, "message": format!("method not found: {method}")}),
        };
        self.wire().respond(id, Err(error));
    }

    /// Sends a request to the client and waits for its answer (its own
    /// requests meanwhile are refused).
    async fn call(&mut self, method: &str, params: Value) -> Call {
        let id = self.wire().fresh_id();
        self.call_with_id(id, method, params).await
    }

    async fn call_with_id(&mut self, id: Value, method: &str, params: Value) -> Call {
        let sent = self.wire().send_request(id.clone(), method, params);
        self.wait_response(&id, sent, self.opts.timeout).await
    }

    async fn wait_response(&mut self, id: &Value, sent: usize, wait: Duration) -> Call {
        let long = wait >= self.opts.timeout;
        let wait = if self.silent {
            wait.min(Duration::from_secs(1))
        } else {
            wait
        };
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let Some(got) = self.next(left).await else {
                let closed = self.wire().is_closed();
                if long && !closed {
                    self.silent = true;
                }
                return Call {
                    sent,
                    response: None,
                    closed,
                };
            };
            match &got.envelope {
                Some(Envelope::Response { id: got_id, .. }) if got_id == id => {
                    return Call {
                        sent,
                        response: Some(got),
                        closed: false,
                    };
                }
                Some(Envelope::Request { id, method }) => {
                    let (id, method) = (id.clone(), method.clone());
                    self.refuse(&id, &method);
                }
                _ => {}
            }
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.wire().notify(method, params);
    }

    fn update(&mut self, update: Value) {
        let session = self
            .session
            .as_ref()
            .map(|s| s.id.clone())
            .unwrap_or_default();
        self.notify(
            "session/update",
            json!({"sessionId": session, "update": update}),
        );
    }

    /// Announces a tool call of `kind` and returns its id.
    fn tool_call(&mut self, title: &str, kind: &str, locations: Value) -> String {
        self.next_tool += 1;
        let id = format!("acp-check-{}", self.next_tool);
        self.update(json!({"sessionUpdate": "tool_call", "toolCallId": id, "title": title, "kind": kind, "status": "pending", "locations": locations}));
        id
    }

    fn tool_done(&mut self, id: &str, status: &str) {
        self.update(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": status}),
        );
    }

    fn agent_info() -> Value {
        json!({"name": "acp-check", "title": "acp check client", "version": env!("CARGO_PKG_VERSION")})
    }

    /// Serves the client until its first prompt turn is over.
    async fn serve(&mut self) {
        let wait = self.opts.timeout;
        loop {
            let Some(got) = self.next(wait).await else {
                let why = if self.wire().is_closed() {
                    format!("the client closed the agent's stdin{}", self.client_said())
                } else {
                    format!("the client sent nothing for {} s", wait.as_secs())
                };
                let step = if self.init.is_none() {
                    "initialize"
                } else if self.session.is_none() {
                    "session/new"
                } else {
                    "session/prompt"
                };
                self.stop(format!("{why} before its {step}"));
                return;
            };
            let Some(Envelope::Request { id, method }) = got.envelope.clone() else {
                continue;
            };
            match method.as_str() {
                "initialize" => {
                    if self.init.is_none() {
                        self.init = Some(got.clone());
                    }
                    // The one version there is: a client asking for a later
                    // one is answered 1, as the protocol says.
                    let result = json!({
                        "protocolVersion": 1,
                        "agentCapabilities": {
                            "loadSession": false,
                            "promptCapabilities": {"image": false, "audio": false, "embeddedContext": false},
                        },
                        "authMethods": [],
                        "agentInfo": Self::agent_info(),
                    });
                    self.wire().respond(&id, Ok(result));
                }
                "authenticate" => {
                    self.wire().respond(&id, Ok(json!({})));
                }
                "session/new" if self.session.is_none() => {
                    self.new_session = Some(got.clone());
                    let cwd = got
                        .value
                        .as_ref()
                        .and_then(|v| v["params"]["cwd"].as_str())
                        .unwrap_or("")
                        .to_string();
                    let session = Session {
                        id: "acp-check-session-1".into(),
                        cwd: PathBuf::from(cwd),
                    };
                    let result = json!({"sessionId": session.id});
                    self.session = Some(session);
                    self.wire().respond(&id, Ok(result));
                }
                "session/prompt" if self.session.is_some() && self.prompt.is_none() => {
                    self.prompt = Some(got.clone());
                    let stop = turn::run(self).await;
                    self.wire().respond(&id, Ok(json!({"stopReason": stop})));
                    return;
                }
                _ => self.refuse(&id, &method),
            }
        }
    }

    /// Ends the life: a moment for late messages, then the agent's stdout
    /// closes and the client has a few seconds to exit before it is killed.
    async fn finish(&mut self) {
        if self.wire.is_some() {
            let deadline = tokio::time::Instant::now() + GRACE;
            loop {
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                if left.is_zero() {
                    break;
                }
                let Some(got) = self.next(left).await else {
                    break;
                };
                if let Some(Envelope::Request { id, method }) = &got.envelope {
                    let (id, method) = (id.clone(), method.clone());
                    self.refuse(&id, &method);
                }
            }
            self.wire().close_input();
        }
        if let Some(client) = &mut self.client {
            client.end(Duration::from_secs(5)).await;
        }
    }

    /// The client's capability at `pointer` (JSON pointer into
    /// `clientCapabilities`), if it is `true` or an object.
    fn capability(&self, pointer: &str) -> bool {
        let caps = self
            .init
            .as_ref()
            .and_then(|r| r.value.as_ref())
            .map(|v| v["params"]["clientCapabilities"].clone())
            .unwrap_or(Value::Null);
        match caps.pointer(pointer) {
            Some(Value::Bool(b)) => *b,
            Some(Value::Object(_)) => true,
            _ => false,
        }
    }
}

/// Runs `acp check client` and returns its report.
pub async fn run(opts: ClientOptions) -> std::io::Result<Report> {
    let command = opts.command.join(" ");
    let filters = opts.filters.clone();
    let mut cx = ClientCx::new(opts)?;
    // The life runs before the checks (it is one turn, driven by the client).
    cx.life().await;
    let results = crate::catalog::run_all(CHECKS, &mut cx, &filters).await;
    Ok(Report {
        side: "client".into(),
        command,
        results,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_placeholder_is_a_word_or_a_quoted_part_of_one() {
        let got = substitute(
            &words(&["acp", "exec", "--agent", "{agent}", "sh -c '{agent} --x'"]),
            "/tmp/a b/agent",
        )
        .unwrap();
        assert_eq!(
            got,
            words(&[
                "acp",
                "exec",
                "--agent",
                "/tmp/a b/agent",
                "sh -c ''/tmp/a b/agent' --x'"
            ])
        );
        assert_eq!(
            substitute(&words(&["c", "--agent={agent}"]), "/tmp/x/agent").unwrap(),
            words(&["c", "--agent=/tmp/x/agent"])
        );
        assert!(substitute(&words(&["c", "agent"]), "/x").is_err());
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
