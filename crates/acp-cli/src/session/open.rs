//! Opening a session, for `acp exec` and `acp chat`: `initialize`, logging
//! in ([`super::login`]), then `session/new` (or resuming or loading the
//! session `--session` names), and setting the session's mode, model and
//! options ([`super::choices`]).
//!
//! When the agent wants a login and a person is at the terminal, acp offers
//! to run the agent's terminal login there; once it exits 0 the agent is
//! started again, initialized again, and the session opened as if nothing
//! had happened. Otherwise the failure says what to do ([`crate::session::auth`]).

use crate::cli::SessionArgs;
use crate::exit::Failure;
use crate::session::auth::{self, Login};
use crate::session::{Interrupted, Session, Setup};
use acp::ClientSideConnection;
use acp::schema::*;
use std::time::Duration;

/// How long the agent gets to answer `initialize`: long, because launchers such
/// as `npx` or `cargo run` may download or compile the agent first.
pub const INIT_TIMEOUT: Duration = Duration::from_secs(600);
/// When to tell the user that `initialize` is taking a while.
const INIT_NOTICE: Duration = Duration::from_secs(15);

/// How to open the session.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OpenOptions {
    /// Show the history a loaded session replays.
    pub show_replay: bool,
    /// For `--session`, load (replaying the history) rather than resume
    /// when the agent can do both (chat, which shows the transcript).
    pub prefer_load: bool,
}

/// How the session was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum How {
    /// `session/new`.
    New,
    /// `session/resume` (no history is replayed).
    Resumed,
    /// `session/load` (the history was replayed).
    Loaded,
}

/// An initialized connection with an open session.
#[allow(dead_code)] // `agent_info` and `how` are for chat's banner
pub(crate) struct Opened {
    /// The connection.
    pub conn: ClientSideConnection,
    /// What the agent can do.
    pub caps: AgentCapabilities,
    /// Who the agent says it is.
    pub agent_info: Option<Implementation>,
    /// The open session.
    pub session_id: SessionId,
    /// How it was opened.
    pub how: How,
    /// The session's modes, if the agent has any.
    pub modes: Option<SessionModeState>,
    /// The session's config options, if the agent has any.
    pub config_options: Option<Vec<SessionConfigOption>>,
    /// The session model selector, if the agent offers one.
    pub models: Option<SessionModelState>,
}

impl Session {
    /// Sends `initialize` with `capabilities` and checks the protocol
    /// version; keeps the agent's login methods.
    pub async fn initialize(
        &mut self,
        capabilities: ClientCapabilities,
    ) -> Result<InitializeResponse, Failure> {
        let conn = self.process.connection().clone();
        let init = InitializeRequest::new(ProtocolVersion::LATEST)
            .client_capabilities(capabilities)
            .client_info(Implementation::new("acp", env!("CARGO_PKG_VERSION")));
        let client = self.client.clone();
        let notice = async move {
            tokio::time::sleep(INIT_NOTICE).await;
            client.with_view(|v| {
                v.note(
                    "[waiting] the agent has not answered initialize yet (it may still be \
                     installing or compiling; Ctrl-C gives up)",
                )
            });
            std::future::pending::<std::convert::Infallible>().await
        };
        // `step` applies --timeout; initialize has its own, longer limit.
        let timeout = self.timeout.take();
        let answer = self.step("initialize", conn.initialize(init));
        let init = tokio::time::timeout(INIT_TIMEOUT, async {
            tokio::select! {
                answer = answer => answer,
                never = notice => match never {},
            }
        })
        .await;
        self.timeout = timeout;
        let init = init
            .map_err(|_| {
                Failure::agent(format!(
                    "the agent did not answer initialize within {} s; is it an ACP agent?",
                    INIT_TIMEOUT.as_secs()
                ))
            })?
            .map_err(|Interrupted::Failed(f)| f)?;
        if init.protocol_version != ProtocolVersion::V1 {
            return Err(Failure::agent(format!(
                "the agent speaks ACP protocol version {}, but acp supports version {}; \
                 update the agent or acp",
                init.protocol_version.get(),
                ProtocolVersion::V1.get()
            )));
        }
        self.logins = Login::parse(&init.auth_methods, self.agent_command());
        Ok(init)
    }

    /// Initializes the connection, logs in if asked (or needed, and a
    /// person can run the login), and opens the session.
    pub async fn open(
        &mut self,
        args: &SessionArgs,
        setup: &Setup,
        capabilities: ClientCapabilities,
        options: OpenOptions,
    ) -> Result<Opened, Failure> {
        self.timeout = setup.timeout;
        let mut logged_in = false;
        loop {
            let failure = match self
                .open_once(args, setup, capabilities.clone(), options)
                .await
            {
                Ok(opened) => {
                    self.session_id = Some(opened.session_id.clone());
                    return Ok(opened);
                }
                Err(failure) => failure,
            };
            let auth_failure = failure
                .error
                .as_ref()
                .is_some_and(|e| auth::is_auth_error(e) || self.trying.is_some());
            if !auth_failure || logged_in || !setup.interactive {
                return Err(failure);
            }
            if !self.offer_login(&failure, setup).await {
                return Err(failure);
            }
            self.restart()?;
            logged_in = true;
        }
    }

    pub(super) async fn open_once(
        &mut self,
        args: &SessionArgs,
        setup: &Setup,
        capabilities: ClientCapabilities,
        options: OpenOptions,
    ) -> Result<Opened, Failure> {
        self.trying = None;
        let mut init = self.initialize(capabilities.clone()).await?;
        if let Some(method) = &args.auth
            && self.login_with(method, setup).await?
        {
            // A terminal login ran: the agent starts again to see it.
            self.restart()?;
            init = self.initialize(capabilities).await?;
        }
        let conn = self.process.connection().clone();
        let caps = init.agent_capabilities;
        let cwd_text = setup.cwd.to_string_lossy().into_owned();
        let dirs: Vec<String> = setup
            .add_dirs
            .iter()
            .map(|d| d.to_string_lossy().into_owned())
            .collect();
        let send_dirs =
            !dirs.is_empty() && caps.session_capabilities.additional_directories.is_some();
        if !dirs.is_empty() && !send_dirs {
            self.client.with_view(|v| {
                v.note("[note] the agent does not accept additional directories; --add-dir only widens file access")
            });
        }
        let (session_id, how, modes, config_options, models) = match &args.session {
            None => {
                let mut request = NewSessionRequest::new(cwd_text);
                if send_dirs {
                    request = request.additional_directories(dirs);
                }
                let response = self
                    .step("session/new", conn.new_session(request))
                    .await
                    .map_err(|Interrupted::Failed(f)| f)?;
                (
                    response.session_id,
                    How::New,
                    response.modes,
                    response.config_options,
                    response.models,
                )
            }
            Some(id) => {
                let id = self.expand_session(id, &caps, &conn, &cwd_text).await?;
                let id = SessionId::new(id.as_str());
                let resume = caps.session_capabilities.resume.is_some();
                let load = caps.load_session;
                if resume && !(load && options.prefer_load) {
                    let mut request = ResumeSessionRequest::new(id.clone(), cwd_text);
                    if send_dirs {
                        request = request.additional_directories(dirs);
                    }
                    let response = self
                        .step("session/resume", conn.resume_session(request))
                        .await
                        .map_err(|Interrupted::Failed(f)| f)?;
                    let r = response;
                    (id, How::Resumed, r.modes, r.config_options, r.models)
                } else if load {
                    let mut request = LoadSessionRequest::new(id.clone(), cwd_text);
                    if send_dirs {
                        request = request.additional_directories(dirs);
                    }
                    self.client
                        .with_view(|v| v.set_replaying(!options.show_replay));
                    let loaded = self.step("session/load", conn.load_session(request)).await;
                    self.client.with_view(|v| v.set_replaying(false));
                    let response = loaded.map_err(|Interrupted::Failed(f)| f)?;
                    let r = response;
                    (id, How::Loaded, r.modes, r.config_options, r.models)
                } else {
                    return Err(Failure::agent(
                        "the agent can neither resume nor load sessions, so --session cannot be used with it",
                    ));
                }
            }
        };
        let mut opened = Opened {
            conn,
            caps,
            agent_info: init.agent_info,
            session_id,
            how,
            modes,
            config_options,
            models,
        };
        self.session_id = Some(opened.session_id.clone());
        self.apply_choices(args, &mut opened).await?;
        Ok(opened)
    }

    /// The session a `--session` value names: a unique prefix of an ID acp
    /// recorded ([`crate::session::recent`]) or the agent lists for this directory
    /// (`session/list`, first page) stands for that ID.
    async fn expand_session(
        &mut self,
        given: &str,
        caps: &AgentCapabilities,
        conn: &ClientSideConnection,
        cwd: &str,
    ) -> Result<String, Failure> {
        let mut known: Vec<String> = crate::session::recent::path()
            .map(|p| crate::session::recent::read(&p))
            .unwrap_or_default()
            .into_iter()
            .map(|r| r.session_id)
            .collect();
        let unique = |known: &[String]| {
            known.iter().any(|k| k == given)
                || known.iter().filter(|k| k.starts_with(given)).count() == 1
        };
        if !unique(&known) && caps.session_capabilities.list.is_some() {
            let mut request = ListSessionsRequest::new();
            request.cwd = Some(cwd.to_owned());
            if let Ok(list) = self.step("session/list", conn.list_sessions(request)).await {
                known.extend(list.sessions.into_iter().map(|s| s.session_id.to_string()));
            }
        }
        let id = crate::session::recent::expand(given, &known).map_err(Failure::usage)?;
        if id != given {
            self.client
                .with_view(|v| v.note(&format!("[session] {given} is {id}")));
        }
        Ok(id)
    }
}
