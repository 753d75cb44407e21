//! The context every check of `acp check agent` runs in ([`AgentCx`]): the
//! agent's life so far, each step run once, the first time a check needs
//! it.

use super::acting::Acting;
use super::run::{AgentOptions, Life, StepError, Workspace, describe, stderr_end};
use crate::process::Peer;
use crate::report::Outcome;
use crate::wire::{Call, Log};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// How long the checker keeps listening after a response for late messages.
pub(super) const GRACE: Duration = Duration::from_millis(300);

/// The initialize exchange.
#[derive(Debug, Clone)]
pub struct Init {
    /// The `result`.
    pub result: Value,
}

/// A session the checker opened.
#[derive(Debug, Clone)]
pub struct Session {
    /// Its id.
    pub id: String,
    /// The `session/new` result.
    pub result: Value,
}

/// One turn, as the log recorded it.
#[derive(Debug, Clone)]
pub struct Turn {
    /// Which wire.
    pub wire: usize,
    /// The session.
    pub session: String,
    /// The log place of the `session/prompt` request.
    pub sent: usize,
    /// The log place of its response.
    pub answered: Option<usize>,
    /// The first log place after the grace period that followed.
    pub until: usize,
    /// The log place of the `session/cancel` sent during the turn, if one was.
    pub cancelled_at: Option<usize>,
    /// The response (or why there is none).
    pub call: Call,
}

/// The context every agent check runs in: the agent's life so far.
pub struct AgentCx {
    pub(super) opts: AgentOptions,
    /// Every line of the run.
    pub log: Arc<Log>,
    workspace: Workspace,
    acting: Arc<Acting>,
    main: Option<Peer>,
    others: Vec<Peer>,
    init: Option<Result<Init, StepError>>,
    authed: Option<Result<(), StepError>>,
    session: Option<Result<Session, StepError>>,
    turns: Vec<Turn>,
    ordinary: Option<Result<Turn, StepError>>,
    cancel: Option<Result<Turn, Outcome>>,
    probe: Option<Result<Peer, StepError>>,
}

/// What a check reports when a step it needs failed: SKIP, or NOT TESTED
/// when the step failed because the agent stopped answering.
pub(super) fn needs(step: &str, why: &StepError) -> Outcome {
    let reason = format!("needs {step}, which failed: {why}");
    if why.unanswered() {
        Outcome::not_tested(reason)
    } else {
        Outcome::skip(reason)
    }
}

impl Life for AgentCx {
    fn start(opts: AgentOptions) -> std::io::Result<Self> {
        AgentCx::new(opts)
    }

    fn log(&self) -> Arc<Log> {
        self.log.clone()
    }

    async fn shutdown(&mut self) {
        AgentCx::shutdown(self).await
    }
}

impl AgentCx {
    /// A context for `opts` (nothing started yet).
    pub fn new(opts: AgentOptions) -> std::io::Result<AgentCx> {
        let (workspace, log) = Workspace::prepare(&opts)?;
        let acting = Acting::new(workspace.path(), opts.supervisor.clone())?;
        Ok(AgentCx {
            opts,
            log,
            workspace,
            acting,
            main: None,
            others: Vec::new(),
            init: None,
            authed: None,
            session: None,
            turns: Vec::new(),
            ordinary: None,
            cancel: None,
            probe: None,
        })
    }

    /// The temporary workspace (the sessions' cwd).
    pub fn workspace(&self) -> String {
        self.workspace.cwd()
    }

    fn spawn(&mut self) -> Result<Peer, StepError> {
        let answer = self.acting.answer();
        self.workspace.start(&self.opts, &self.log, answer)
    }

    fn init_params(version: u64) -> Value {
        json!({
            "protocolVersion": version,
            "clientCapabilities": {
                "fs": {"readTextFile": true, "writeTextFile": true},
                "terminal": true,
            },
            "clientInfo": {"name": "acp-check", "version": env!("CARGO_PKG_VERSION")},
        })
    }

    pub(super) async fn main(&mut self) -> Result<&mut Peer, StepError> {
        if self.main.is_none() {
            self.main = Some(self.spawn()?);
        }
        Ok(self.main.as_mut().unwrap())
    }

    /// Initializes the main process with protocol version 1 (once).
    pub async fn init(&mut self) -> Result<Init, StepError> {
        if let Some(done) = &self.init {
            return done.clone();
        }
        let timeout = self.opts.timeout;
        let done = match self.main().await {
            Err(e) => Err(e),
            Ok(peer) => {
                let call = peer
                    .wire
                    .call("initialize", Self::init_params(1), timeout)
                    .await;
                match call.result() {
                    Some(result) => Ok(Init {
                        result: result.clone(),
                    }),
                    None => Err(StepError::call("initialize", &call, self.describe(&call))),
                }
            }
        };
        self.init = Some(done.clone());
        done
    }

    /// What went wrong with a call, with the agent's stderr when it exited.
    fn describe(&self, call: &Call) -> String {
        let mut text = describe(call);
        if let Some(peer) = &self.main {
            text.push_str(&stderr_end(peer, call.closed));
        }
        text
    }

    /// Authenticates with `--auth`, when given (once).
    pub async fn authed(&mut self) -> Result<(), StepError> {
        if let Some(done) = &self.authed {
            return done.clone();
        }
        self.init().await?;
        let done = match self.opts.auth.clone() {
            None => Ok(()),
            Some(method) => {
                let timeout = self.opts.timeout;
                let peer = self.main().await?;
                let call = peer
                    .wire
                    .call("authenticate", json!({"methodId": method}), timeout)
                    .await;
                match call.result() {
                    Some(_) => Ok(()),
                    None => Err(StepError::call("authenticate", &call, self.describe(&call))),
                }
            }
        };
        self.authed = Some(done.clone());
        done
    }

    /// Opens another session on the main process.
    pub async fn new_session(&mut self) -> Result<(Session, Call), StepError> {
        self.authed().await?;
        let (params, timeout) = (self.workspace.new_session_params(), self.opts.timeout);
        let peer = self.main().await?;
        let call = peer.wire.call("session/new", params, timeout).await;
        let Some(result) = call.result().cloned() else {
            return Err(StepError::call("session/new", &call, self.describe(&call)));
        };
        match result.get("sessionId").and_then(Value::as_str) {
            Some(id) => Ok((
                Session {
                    id: id.to_string(),
                    result,
                },
                call,
            )),
            None => Err(StepError::NoSessionId(call.describe())),
        }
    }

    /// The main session (opened once).
    pub async fn session(&mut self) -> Result<Session, StepError> {
        if let Some(done) = &self.session {
            return done.clone();
        }
        let done = self.new_session().await.map(|(s, _)| s);
        self.session = Some(done.clone());
        done
    }

    pub(super) fn prompt_text(&self, text: &str) -> String {
        self.workspace.fill(text)
    }

    /// Runs a turn of `prompt` (content blocks) on `session` of the main
    /// process, and keeps listening for a moment (300 ms) after its response.
    pub async fn turn(&mut self, session: &str, prompt: Value) -> Result<Turn, StepError> {
        let timeout = self.opts.timeout;
        let peer = self.main().await?;
        let params = json!({"sessionId": session, "prompt": prompt});
        let call = peer.wire.call("session/prompt", params, timeout).await;
        peer.wire.drain(GRACE).await;
        let turn = Turn {
            wire: peer.wire.id,
            session: session.to_string(),
            sent: call.sent,
            answered: call.seq(),
            until: self.log.len(),
            cancelled_at: None,
            call,
        };
        self.turns.push(turn.clone());
        Ok(turn)
    }

    /// The ordinary turns (`--prompt`), once; the first one.
    pub async fn ordinary(&mut self) -> Result<Turn, StepError> {
        if let Some(done) = &self.ordinary {
            return done.clone();
        }
        let done = match self.session().await {
            Err(e) => Err(e),
            Ok(session) => {
                let mut first = None;
                for text in self.opts.prompts.clone() {
                    let text = self.prompt_text(&text);
                    let turn = self
                        .turn(&session.id, json!([{"type": "text", "text": text}]))
                        .await;
                    match turn {
                        Ok(turn) => {
                            first.get_or_insert(turn);
                        }
                        Err(e) => {
                            first = None;
                            self.ordinary = Some(Err(e));
                            break;
                        }
                    }
                }
                first.ok_or(StepError::NoPrompt)
            }
        };
        let done = match &self.ordinary {
            Some(Err(e)) => Err(e.clone()),
            _ => done,
        };
        self.ordinary = Some(done.clone());
        done
    }

    /// The turn to be cancelled (`--cancel-prompt`), once: sent, cancelled
    /// at its first sign of work (an update or a request, or after two
    /// seconds), and awaited for `--cancel-within`.
    pub async fn cancel_turn(&mut self) -> Result<Turn, Outcome> {
        if let Some(done) = &self.cancel {
            return done.clone();
        }
        let done = self.run_cancel_turn().await;
        self.cancel = Some(done.clone());
        done
    }

    async fn run_cancel_turn(&mut self) -> Result<Turn, Outcome> {
        let session = self.session().await.map_err(|e| needs("session/new", &e))?;
        if let Err(e) = self.ordinary().await {
            return Err(needs("a turn", &e));
        }
        let text = self.prompt_text(&self.opts.cancel_prompt.clone());
        let (timeout, within) = (self.opts.timeout, self.opts.cancel_within);
        let acting = self.acting.clone();
        let log = self.log.clone();
        let peer = self
            .main()
            .await
            .map_err(|e| Outcome::fail(e.to_string()))?;
        let id = peer.wire.fresh_id();
        let params = json!({"sessionId": session.id, "prompt": [{"type": "text", "text": text}]});
        let sent = peer.wire.send_request(id.clone(), "session/prompt", params);
        let first_sign = tokio::time::Instant::now() + Duration::from_secs(2).min(timeout);
        loop {
            let left = first_sign.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                break;
            }
            let Some(got) = peer.wire.next(left).await else {
                if peer.wire.is_closed() {
                    return Err(Outcome::fail("the agent closed its output during the turn"));
                }
                break;
            };
            match &got.envelope {
                Some(crate::strict::Envelope::Response { id: got_id, .. }) if *got_id == id => {
                    let reason = got
                        .value
                        .as_ref()
                        .and_then(|v| v["result"].get("stopReason"))
                        .map(|r| format!("stop reason {r}"))
                        .unwrap_or_else(|| "an error".into());
                    peer.wire.drain(GRACE).await;
                    return Err(Outcome::skip(format!(
                        "not exercised: the turn ended ({reason}) before the cancel could be sent; \
                         choose a --cancel-prompt that runs longer"
                    )));
                }
                Some(crate::strict::Envelope::Request { .. }) => break,
                Some(crate::strict::Envelope::Notification { .. })
                    if got
                        .value
                        .as_ref()
                        .is_some_and(|v| v["params"]["sessionId"] == json!(session.id)) =>
                {
                    break;
                }
                _ => {}
            }
        }
        acting.cancelling(&session.id);
        let cancelled_at = peer
            .wire
            .notify("session/cancel", json!({"sessionId": session.id}));
        let call = peer.wire.wait_response(&id, sent, within).await;
        peer.wire.drain(GRACE).await;
        acting.resume(&session.id);
        let turn = Turn {
            wire: peer.wire.id,
            session: session.id.clone(),
            sent,
            answered: call.seq(),
            until: log.len(),
            cancelled_at: Some(cancelled_at),
            call,
        };
        self.turns.push(turn.clone());
        Ok(turn)
    }

    /// The process the raw probes go to, initialized (started once). NOT
    /// TESTED once the agent stopped answering: each probe would wait out
    /// its own wait.
    pub async fn probe(&mut self) -> Result<&mut Peer, Outcome> {
        if let Some(why) = self.log.stalled() {
            self.log.note_cut_short();
            return Err(Outcome::not_tested(format!("not tested: {why}")));
        }
        if self.probe.is_none() {
            let started = match self.spawn() {
                Err(e) => Err(e),
                Ok(mut peer) => {
                    let line = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": Self::init_params(1)});
                    let sent = peer.wire.send_line(&line.to_string());
                    let call = peer
                        .wire
                        .wait_response(&json!(0), sent, self.opts.timeout)
                        .await;
                    match call.result() {
                        Some(_) => Ok(peer),
                        None => Err(StepError::call(
                            "initialize of the probe process",
                            &call,
                            call.describe(),
                        )),
                    }
                }
            };
            self.probe = Some(started);
        }
        match self.probe.as_mut().unwrap() {
            Ok(peer) => Ok(peer),
            Err(e) => Err(needs("a process to probe", e)),
        }
    }

    /// Every turn run so far.
    pub fn turns(&self) -> &[Turn] {
        &self.turns
    }

    /// Starts another process of the agent and initializes it.
    pub async fn fresh(&mut self, version: u64) -> Result<(Peer, Call), StepError> {
        let mut peer = self.spawn()?;
        let call = peer
            .wire
            .call("initialize", Self::init_params(version), self.opts.timeout)
            .await;
        Ok((peer, call))
    }

    /// Keeps a process until the run ends (it is killed then).
    pub(super) fn keep(&mut self, peer: Peer) {
        self.others.push(peer);
    }

    /// Ends every process and terminal of the run.
    pub async fn shutdown(&mut self) {
        for peer in self.main.iter_mut().chain(self.others.iter_mut()) {
            peer.kill().await;
        }
        if let Some(Ok(peer)) = &mut self.probe {
            peer.kill().await;
        }
        self.acting.shutdown().await;
    }
}
