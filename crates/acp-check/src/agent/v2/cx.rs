//! The life of a v2 agent under `acp check agent --protocol 2`
//! ([`V2Cx`]): processes initialized with version 2, a session, the
//! ordinary turn and the cancelled turn, each run once, the first time a
//! check needs it. A v2 turn is not the prompt's response (that only
//! acknowledges the prompt) but everything up to the idle `state_update`.

use crate::agent::run::{Life, Workspace, describe, stderr_end};
use crate::agent::{AgentOptions, StepError};
use crate::process::Peer;
use crate::report::Outcome;
use crate::strict::Envelope;
use crate::wire::{Answer, Call, Log};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

/// How long the checker keeps listening after a turn's idle update.
const GRACE: Duration = Duration::from_millis(300);

/// One v2 turn, as the log recorded it.
#[derive(Debug, Clone)]
pub struct V2Turn {
    /// Which wire.
    pub wire: usize,
    /// The session.
    pub session: String,
    /// The log place of the `session/prompt` request.
    pub sent: usize,
    /// The prompt's response (or why there is none).
    pub call: Call,
    /// The log place of the idle `state_update` that ended the turn.
    pub idle: Option<usize>,
    /// The log place of `session/cancel`, for the cancelled turn.
    pub cancelled: Option<usize>,
    /// The first log place after the grace period that followed.
    pub until: usize,
}

impl V2Turn {
    /// The `messageId` the prompt was acknowledged with.
    pub fn message_id(&self) -> Option<&str> {
        self.call.result()?.get("messageId")?.as_str()
    }
}

/// The context every v2 agent check runs in.
pub struct V2Cx {
    pub(super) opts: AgentOptions,
    /// Every line of the run.
    pub log: Arc<Log>,
    workspace: Workspace,
    main: Option<Peer>,
    /// The wires initialized with version 2 (whose lines the v2 types judge).
    pub(super) v2_wires: BTreeSet<usize>,
    init: Option<Result<Value, StepError>>,
    session: Option<Result<(String, Value), StepError>>,
    ordinary: Option<Result<V2Turn, StepError>>,
    cancel: Option<Result<V2Turn, Outcome>>,
    probe: Option<Result<Peer, StepError>>,
    /// The session `v2.session.close` closed.
    pub(super) closed: Option<String>,
    login: Option<Result<(), StepError>>,
}

/// What a check reports when a step it needs failed: NOT TESTED when the
/// agent does not speak v2 or stopped answering, SKIP otherwise.
pub(super) fn needs(step: &str, why: &StepError) -> Outcome {
    let reason = format!("needs {step}, which failed: {why}");
    if matches!(why, StepError::NotV2(_)) || why.unanswered() {
        Outcome::not_tested(reason)
    } else {
        Outcome::skip(reason)
    }
}

/// The v2 client's answers to the agent's requests: a permission question
/// gets the first option that allows (else the first option); anything
/// else (elicitation, extension methods) -32601.
fn answer() -> Answer {
    Arc::new(|method: String, params: Value| {
        Box::pin(async move {
            if method != "session/request_permission" {
                return Err(json!({"code": -32601, "message": "Method not found"}));
            }
            let options = params["options"].as_array().cloned().unwrap_or_default();
            let allow = options
                .iter()
                .find(|o| o["kind"].as_str().is_some_and(|k| k.starts_with("allow")))
                .or(options.first());
            Ok(match allow.and_then(|o| o.get("optionId")) {
                Some(id) => json!({"outcome": {"outcome": "selected", "optionId": id}}),
                None => json!({"outcome": {"outcome": "cancelled"}}),
            })
        })
    })
}

fn is_state(v: &Value, session: &str, state: &str) -> bool {
    v.get("method").and_then(Value::as_str) == Some("session/update")
        && v["params"]["sessionId"] == json!(session)
        && v["params"]["update"]["sessionUpdate"] == "state_update"
        && v["params"]["update"]["state"] == state
}

impl V2Cx {
    /// A context for `opts` (nothing started yet).
    pub fn new(opts: AgentOptions) -> std::io::Result<V2Cx> {
        let (workspace, log) = Workspace::prepare(&opts)?;
        Ok(V2Cx {
            opts,
            log,
            workspace,
            main: None,
            v2_wires: BTreeSet::new(),
            init: None,
            session: None,
            ordinary: None,
            cancel: None,
            probe: None,
            closed: None,
            login: None,
        })
    }

    /// The temporary workspace (the sessions' cwd).
    pub fn workspace(&self) -> String {
        self.workspace.cwd()
    }

    fn spawn(&mut self) -> Result<Peer, StepError> {
        self.workspace.start(&self.opts, &self.log, answer())
    }

    /// The params of a v2 `initialize` asking for `version`.
    pub(super) fn init_params(version: u64) -> Value {
        json!({
            "protocolVersion": version,
            "info": {"name": "acp-check", "version": env!("CARGO_PKG_VERSION")},
            "capabilities": {},
        })
    }

    /// Starts a process and sends it a v2 `initialize` asking for
    /// `version` (the wire counts as v2 when it answers 2).
    pub async fn fresh(&mut self, version: u64) -> Result<(Peer, Call), StepError> {
        let mut peer = self.spawn()?;
        let call = peer
            .wire
            .call("initialize", Self::init_params(version), self.opts.timeout)
            .await;
        if call.result().and_then(|r| r.get("protocolVersion")) == Some(&json!(2)) {
            self.v2_wires.insert(peer.wire.id);
        }
        Ok((peer, call))
    }

    /// The main process, initialized with version 2 (once): its result, or
    /// why not ([`StepError::NotV2`] when it answered another version).
    pub async fn init(&mut self) -> Result<Value, StepError> {
        if let Some(done) = &self.init {
            return done.clone();
        }
        let done = match self.fresh(2).await {
            Err(e) => Err(e),
            Ok((peer, call)) => {
                let done = match call.result() {
                    Some(r) if r.get("protocolVersion") == Some(&json!(2)) => Ok(r.clone()),
                    Some(r) => Err(StepError::NotV2(
                        r.get("protocolVersion").unwrap_or(&Value::Null).to_string(),
                    )),
                    None => Err(StepError::call(
                        "initialize",
                        &call,
                        format!("{}{}", describe(&call), stderr_end(&peer, call.closed)),
                    )),
                };
                self.main = Some(peer);
                done
            }
        };
        self.init = Some(done.clone());
        done
    }

    /// The main process (initialized with v2).
    pub(super) async fn main(&mut self) -> Result<&mut Peer, StepError> {
        self.init().await?;
        Ok(self.main.as_mut().expect("initialized"))
    }

    /// Logs in with `--auth` (v2's `auth/login`), when given (once).
    async fn login(&mut self) -> Result<(), StepError> {
        if let Some(done) = &self.login {
            return done.clone();
        }
        let done = match self.opts.auth.clone() {
            None => Ok(()),
            Some(method) => {
                let timeout = self.opts.timeout;
                let peer = self.main().await?;
                let call = peer
                    .wire
                    .call("auth/login", json!({"methodId": method}), timeout)
                    .await;
                match call.result() {
                    Some(_) => Ok(()),
                    None => Err(StepError::call("auth/login", &call, describe(&call))),
                }
            }
        };
        self.login = Some(done.clone());
        done
    }

    /// Opens another session on the main process (logged in with `--auth`
    /// first): its id and the result.
    pub async fn new_session(&mut self) -> Result<(String, Value), StepError> {
        self.login().await?;
        let (params, timeout) = (self.workspace.new_session_params(), self.opts.timeout);
        let peer = self.main().await?;
        let call = peer.wire.call("session/new", params, timeout).await;
        let Some(result) = call.result().cloned() else {
            return Err(StepError::call("session/new", &call, describe(&call)));
        };
        match result.get("sessionId").and_then(Value::as_str) {
            Some(id) => Ok((id.to_string(), result)),
            None => Err(StepError::NoSessionId(call.describe())),
        }
    }

    /// The main session (opened once): its id and the `session/new` result.
    pub async fn session(&mut self) -> Result<(String, Value), StepError> {
        if let Some(done) = &self.session {
            return done.clone();
        }
        let done = self.new_session().await;
        self.session = Some(done.clone());
        done
    }

    /// Sends a text prompt to `session` and follows the turn until its
    /// idle `state_update` (or an error answer, or `--timeout`), cancelling
    /// it at its first sign of work when `cancel` is set.
    pub async fn turn(
        &mut self,
        session: &str,
        text: &str,
        cancel: bool,
    ) -> Result<V2Turn, StepError> {
        let (timeout, within) = (self.opts.timeout, self.opts.cancel_within);
        let log = self.log.clone();
        let peer = self.main().await?;
        let id = peer.wire.fresh_id();
        let params = json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]});
        let sent = peer.wire.send_request(id.clone(), "session/prompt", params);
        let mut call = Call {
            sent,
            response: None,
            closed: false,
            stray: None,
            stalled: None,
        };
        let mut idle = None;
        let mut cancelled = None;
        let start = tokio::time::Instant::now();
        let mut deadline = start + timeout;
        let first_sign = start + Duration::from_secs(2).min(timeout);
        loop {
            let now = tokio::time::Instant::now();
            let wake = if cancel && cancelled.is_none() {
                deadline.min(first_sign)
            } else {
                deadline
            };
            let left = wake.saturating_duration_since(now);
            let got = if left.is_zero() {
                None
            } else {
                peer.wire.next(left).await
            };
            let Some(got) = got else {
                if peer.wire.is_closed() {
                    call.closed = true;
                    break;
                }
                if cancel && cancelled.is_none() && idle.is_none() {
                    cancelled = Some(
                        peer.wire
                            .notify("session/cancel", json!({"sessionId": session})),
                    );
                    deadline = tokio::time::Instant::now() + within;
                    continue;
                }
                break;
            };
            if let Some(Envelope::Response { id: got_id, .. }) = &got.envelope {
                if *got_id == id {
                    let is_error = got.value.as_ref().is_some_and(|v| v.get("error").is_some());
                    call.response = Some(got);
                    if is_error || idle.is_some() {
                        break;
                    }
                    continue;
                }
                if got.unknown_id {
                    call.stray = Some(got);
                    break;
                }
            }
            let Some(value) = &got.value else { continue };
            if is_state(value, session, "idle") {
                idle = Some(got.seq);
                if call.response.is_some() {
                    break;
                }
                continue;
            }
            let sign = matches!(got.envelope, Some(Envelope::Request { .. }))
                || (value.get("method").and_then(Value::as_str) == Some("session/update")
                    && value["params"]["sessionId"] == json!(session)
                    && value["params"]["update"]["sessionUpdate"] != "user_message"
                    && value["params"]["update"]["sessionUpdate"] != "state_update");
            if cancel && cancelled.is_none() && sign {
                cancelled = Some(
                    peer.wire
                        .notify("session/cancel", json!({"sessionId": session})),
                );
                deadline = tokio::time::Instant::now() + within;
            }
        }
        peer.wire.drain(GRACE).await;
        Ok(V2Turn {
            wire: peer.wire.id,
            session: session.to_string(),
            sent,
            call,
            idle,
            cancelled,
            until: log.len(),
        })
    }

    /// The ordinary turns (`--prompt`), once; the first one.
    pub async fn ordinary(&mut self) -> Result<V2Turn, StepError> {
        if let Some(done) = &self.ordinary {
            return done.clone();
        }
        let done = match self.session().await {
            Err(e) => Err(e),
            Ok((session, _)) => {
                let mut first: Option<Result<V2Turn, StepError>> = None;
                for text in self.opts.prompts.clone() {
                    let text = self.workspace.fill(&text);
                    let turn = self.turn(&session, &text, false).await;
                    let ended = turn.as_ref().map(|t| t.idle.is_some()).unwrap_or(false);
                    first.get_or_insert(turn);
                    if !ended {
                        break;
                    }
                }
                first.unwrap_or(Err(StepError::NoPrompt))
            }
        };
        self.ordinary = Some(done.clone());
        done
    }

    /// The turn to be cancelled (`--cancel-prompt`), once, after the
    /// ordinary turns.
    pub async fn cancel_turn(&mut self) -> Result<V2Turn, Outcome> {
        if let Some(done) = &self.cancel {
            return done.clone();
        }
        let done = match self.ordinary().await {
            Err(e) => Err(needs("the ordinary turn", &e)),
            Ok(turn) if turn.idle.is_none() => Err(Outcome::skip(
                "needs the ordinary turn to end with an idle state_update, which it did not",
            )),
            Ok(turn) => {
                let text = self.workspace.fill(&self.opts.cancel_prompt);
                self.turn(&turn.session, &text, true)
                    .await
                    .map_err(|e| needs("the main process", &e))
            }
        };
        self.cancel = Some(done.clone());
        done
    }

    /// A process of its own for the raw probes, initialized with v2 (once).
    pub async fn probe(&mut self) -> Result<&mut Peer, Outcome> {
        if let Err(e) = self.init().await {
            return Err(needs("a v2 initialize", &e));
        }
        if self.probe.is_none() {
            let started = match self.fresh(2).await {
                Err(e) => Err(e),
                Ok((peer, call)) => match call.result() {
                    Some(_) => Ok(peer),
                    None => Err(StepError::call(
                        "initialize of the probe process",
                        &call,
                        describe(&call),
                    )),
                },
            };
            self.probe = Some(started);
        }
        match self.probe.as_mut().expect("set") {
            Ok(peer) => Ok(peer),
            Err(e) => Err(needs("a process to probe", e)),
        }
    }

    /// Ends every process of the run.
    pub async fn shutdown(&mut self) {
        for peer in self.main.iter_mut() {
            peer.kill().await;
        }
        if let Some(Ok(peer)) = &mut self.probe {
            peer.kill().await;
        }
    }
}

impl Life for V2Cx {
    fn start(opts: AgentOptions) -> std::io::Result<Self> {
        V2Cx::new(opts)
    }

    fn log(&self) -> Arc<Log> {
        self.log.clone()
    }

    async fn shutdown(&mut self) {
        V2Cx::shutdown(self).await
    }
}
