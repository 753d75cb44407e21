//! The context of `acp check client`: the client process, the wire to it
//! (through the relay), what it sent, and the outcomes recorded so far.

use super::child::ClientProcess;
use super::options::ClientOptions;
use crate::report::Outcome;
use crate::strict::Envelope;
use crate::wire::{Call, Log, Received, Wire};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
    pub(super) opts: ClientOptions,
    /// Every line of the run.
    pub log: Arc<Log>,
    pub(super) dir: tempfile::TempDir,
    pub(super) client: Option<ClientProcess>,
    pub(super) wire: Option<Wire>,
    pub(super) lived: bool,
    /// Why the life stopped early, if it did.
    pub(super) stopped: Option<String>,
    /// Outcomes recorded by the life, by check name.
    pub(super) results: HashMap<&'static str, Outcome>,
    /// The client's `initialize` request.
    pub(super) init: Option<Received>,
    /// The client's `session/new` request.
    pub(super) new_session: Option<Received>,
    pub(super) session: Option<Session>,
    /// The client's first `session/prompt`.
    pub(super) prompt: Option<Received>,
    /// The log place of the client's `session/cancel`, once it came.
    pub(super) cancelled: Option<usize>,
    /// How many more times the client started the agent.
    pub(super) extra_agents: Arc<Mutex<usize>>,
    pub(super) next_tool: usize,
    /// A request went unanswered for `--timeout`: later ones wait 1 s at
    /// most, so a client that stopped answering does not hold the run for
    /// a timeout per request; why.
    pub(super) silent: Option<String>,
    /// A wait was cut short since the last outcome recorded (the client had
    /// stopped answering): that outcome is NOT TESTED.
    pub(super) cut_short: bool,
}

/// How long the checker keeps listening for late messages.
pub(super) const GRACE: Duration = Duration::from_millis(300);

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
            silent: None,
            cut_short: false,
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

    pub(super) fn socket_path(&self) -> PathBuf {
        self.dir.path().join("agent.sock")
    }

    /// Records `outcome` for the check `name` (the first one stays). An
    /// outcome other than a pass that a cut-short wait went into, or that a
    /// step failed for that reason, is NOT TESTED: the client had stopped
    /// answering.
    pub(super) fn record(&mut self, name: &'static str, outcome: Outcome) {
        let unanswered = self.cut_short || outcome.reason.contains(crate::wire::STOPPED_ANSWERING);
        let outcome = match &self.silent {
            Some(why) if unanswered && outcome.status != crate::Status::Pass => {
                Outcome::not_tested(format!("not tested: {why}"))
            }
            _ => outcome,
        };
        self.cut_short = false;
        self.results.entry(name).or_insert(outcome);
    }

    /// The outcome of check `name`, once the life has run (a SKIP saying
    /// why when the life did not reach it).
    pub fn judged(&self, name: &'static str) -> Outcome {
        if let Some(o) = self.results.get(name) {
            return o.clone();
        }
        match &self.stopped {
            Some(why) => Outcome::skip(format!("not reached: {why}")),
            None => Outcome::skip("not reached"),
        }
    }

    pub(super) fn stop(&mut self, why: String) {
        if self.stopped.is_none() {
            self.stopped = Some(why);
        }
    }

    /// The client's stderr, for messages about its death.
    pub(super) fn client_said(&self) -> String {
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

    pub(super) fn wire(&mut self) -> &mut Wire {
        self.wire.as_mut().expect("the wire is up")
    }

    /// The next message from the client within `wait`; requests the turn
    /// does not expect are answered here, `session/cancel` is noted.
    pub(super) async fn next(&mut self, wait: Duration) -> Option<Received> {
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
    pub(super) fn refuse(&mut self, id: &Value, method: &str) {
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
    pub(super) async fn call(&mut self, method: &str, params: Value) -> Call {
        let id = self.wire().fresh_id();
        self.call_with_id(id, method, params).await
    }

    pub(super) async fn call_with_id(&mut self, id: Value, method: &str, params: Value) -> Call {
        let sent = self.wire().send_request(id.clone(), method, params);
        self.wait_response(&id, sent, self.opts.timeout).await
    }

    pub(super) async fn wait_response(&mut self, id: &Value, sent: usize, wait: Duration) -> Call {
        let long = wait >= self.opts.timeout;
        let was_silent = self.silent.is_some();
        let wait = if was_silent {
            wait.min(Duration::from_secs(1))
        } else {
            wait
        };
        let deadline = tokio::time::Instant::now() + wait;
        let mut call = Call {
            sent,
            response: None,
            closed: false,
            stray: None,
            stalled: None,
        };
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let Some(got) = self.next(left).await else {
                call.closed = self.wire().is_closed();
                if was_silent {
                    self.cut_short = true;
                    call.stalled = self.silent.clone();
                } else if long && !call.closed {
                    let method = self.log.since(sent).first().and_then(|e| {
                        e.value
                            .as_ref()
                            .and_then(|v| v.get("method"))
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    });
                    self.silent = Some(format!(
                        "the client {}: {} (id {id}) got no response within {} s",
                        crate::wire::STOPPED_ANSWERING,
                        method.unwrap_or_else(|| "a request".into()),
                        wait.as_secs_f32()
                    ));
                }
                return call;
            };
            match &got.envelope {
                Some(Envelope::Response { id: got_id, .. }) if got_id == id => {
                    call.response = Some(got);
                    return call;
                }
                Some(Envelope::Response { .. }) if got.unknown_id => {
                    call.stray = Some(got);
                    return call;
                }
                Some(Envelope::Request { id, method }) => {
                    let (id, method) = (id.clone(), method.clone());
                    self.refuse(&id, &method);
                }
                _ => {}
            }
        }
    }

    pub(super) fn notify(&mut self, method: &str, params: Value) {
        self.wire().notify(method, params);
    }

    pub(super) fn update(&mut self, update: Value) {
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
    pub(super) fn tool_call(&mut self, title: &str, kind: &str, locations: Value) -> String {
        self.next_tool += 1;
        let id = format!("acp-check-{}", self.next_tool);
        self.update(json!({"sessionUpdate": "tool_call", "toolCallId": id, "title": title, "kind": kind, "status": "pending", "locations": locations}));
        id
    }

    pub(super) fn tool_done(&mut self, id: &str, status: &str) {
        self.update(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": status}),
        );
    }

    /// The client's capability at `pointer` (JSON pointer into
    /// `clientCapabilities`), if it is `true` or an object.
    pub(super) fn capability(&self, pointer: &str) -> bool {
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
