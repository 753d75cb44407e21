//! Opening a session, for `acp exec` and `acp chat`: `initialize`, logging
//! in, then `session/new` (or resuming or loading the session `--session`
//! names), and setting the session's mode, model and options.
//!
//! When the agent wants a login and a person is at the terminal, acp offers
//! to run the agent's terminal login there; once it exits 0 the agent is
//! started again, initialized again, and the session opened as if nothing
//! had happened. Otherwise the failure says what to do ([`crate::session::auth`]).
//!
//! The session's mode and model come from `--mode` and `--model`, else from
//! the agent's config entry (`default_mode`, `default_model`,
//! `default_config_options`, as imported from Zed). A flag that does not fit
//! the agent is a usage error; a config default that does not fit is a note.

use crate::cli::SessionArgs;
use crate::exit::Failure;
use crate::session::auth::{self, Login, TerminalCommand};
use crate::session::{Interrupted, Session, Setup};
use crate::tty::Tty;
use acp::ClientSideConnection;
use acp::schema::*;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use tokio::signal::unix::Signal;

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
        interrupts: &mut Signal,
        capabilities: ClientCapabilities,
    ) -> Result<InitializeResponse, Failure> {
        let conn = self.process.connection().clone();
        let init = InitializeRequest::new(ProtocolVersion::LATEST)
            .client_capabilities(capabilities)
            .client_info(Implementation::new("acp", env!("CARGO_PKG_VERSION")));
        let client = self.client.clone();
        let notice = async move {
            tokio::time::sleep(INIT_NOTICE).await;
            client.with_renderer(|r| {
                r.note(
                    "[waiting] the agent has not answered initialize yet (it may still be \
                     installing or compiling; Ctrl-C gives up)",
                )
            });
            std::future::pending::<std::convert::Infallible>().await
        };
        // `step` applies --timeout; initialize has its own, longer limit.
        let timeout = self.timeout.take();
        let answer = self.step("initialize", interrupts, conn.initialize(init));
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
        self.logins = match &self.restart {
            Some(restart) => Login::parse(&init.auth_methods, &restart.agent.command),
            None => Login::parse(&init.auth_methods, &acp::AgentCommand::new("AGENT")),
        };
        Ok(init)
    }

    /// Initializes the connection, logs in if asked (or needed, and a
    /// person can run the login), and opens the session.
    pub async fn open(
        &mut self,
        interrupts: &mut Signal,
        args: &SessionArgs,
        setup: &Setup,
        capabilities: ClientCapabilities,
        options: OpenOptions,
    ) -> Result<Opened, Failure> {
        self.timeout = setup.timeout;
        let mut logged_in = false;
        loop {
            let failure = match self
                .open_once(interrupts, args, setup, capabilities.clone(), options)
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
            if !self.offer_login(&failure, interrupts, setup).await {
                return Err(failure);
            }
            self.restart()?;
            logged_in = true;
        }
    }

    async fn open_once(
        &mut self,
        interrupts: &mut Signal,
        args: &SessionArgs,
        setup: &Setup,
        capabilities: ClientCapabilities,
        options: OpenOptions,
    ) -> Result<Opened, Failure> {
        self.trying = None;
        let mut init = self.initialize(interrupts, capabilities.clone()).await?;
        if let Some(method) = &args.auth
            && self.login_with(method, interrupts, setup).await?
        {
            // A terminal login ran: the agent starts again to see it.
            self.restart()?;
            init = self.initialize(interrupts, capabilities).await?;
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
            self.client.with_renderer(|r| {
                r.note("[note] the agent does not accept additional directories; --add-dir only widens file access")
            });
        }
        let (session_id, how, modes, config_options, models) = match &args.session {
            None => {
                let mut request = NewSessionRequest::new(cwd_text);
                if send_dirs {
                    request = request.additional_directories(dirs);
                }
                let response = self
                    .step("session/new", interrupts, conn.new_session(request))
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
                let id = self
                    .expand_session(id, &caps, interrupts, &conn, &cwd_text)
                    .await?;
                let id = SessionId::new(id.as_str());
                let resume = caps.session_capabilities.resume.is_some();
                let load = caps.load_session;
                if resume && !(load && options.prefer_load) {
                    let mut request = ResumeSessionRequest::new(id.clone(), cwd_text);
                    if send_dirs {
                        request = request.additional_directories(dirs);
                    }
                    let response = self
                        .step("session/resume", interrupts, conn.resume_session(request))
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
                        .with_renderer(|r| r.set_replaying(!options.show_replay));
                    let loaded = self
                        .step("session/load", interrupts, conn.load_session(request))
                        .await;
                    self.client.with_renderer(|r| r.set_replaying(false));
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
        self.apply_choices(interrupts, args, &mut opened).await?;
        Ok(opened)
    }

    /// The session a `--session` value names: a unique prefix of an ID acp
    /// recorded ([`crate::session::recent`]) or the agent lists for this directory
    /// (`session/list`, first page) stands for that ID.
    async fn expand_session(
        &mut self,
        given: &str,
        caps: &AgentCapabilities,
        interrupts: &mut Signal,
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
            if let Ok(list) = self
                .step("session/list", interrupts, conn.list_sessions(request))
                .await
            {
                known.extend(list.sessions.into_iter().map(|s| s.session_id.to_string()));
            }
        }
        let id = crate::session::recent::expand(given, &known).map_err(Failure::usage)?;
        if id != given {
            self.client
                .with_renderer(|r| r.note(&format!("[session] {given} is {id}")));
        }
        Ok(id)
    }

    /// `--auth METHOD`: `authenticate`, or the terminal login of a terminal
    /// method. True when a terminal login ran (the agent must start again).
    async fn login_with(
        &mut self,
        method: &str,
        interrupts: &mut Signal,
        setup: &Setup,
    ) -> Result<bool, Failure> {
        let Some(login) = self.logins.iter().find(|l| l.id == method).cloned() else {
            let is_set = |name: &str| self.var_is_set(name);
            return Err(Failure::usage(format!(
                "the agent has no login method {method:?}.\n{}",
                auth::describe(&self.logins, &is_set)
            )));
        };
        if !login.authenticates() {
            let Some(command) = login.terminal.clone() else {
                return Err(Failure::usage(format!(
                    "acp cannot use the login method {method:?} ({:?}); see the agent's documentation",
                    login.kind
                )));
            };
            if !setup.interactive {
                let mut flag = self.agent_flag();
                if !flag.is_empty() {
                    flag.push(' ');
                }
                return Err(Failure::usage(format!(
                    "{method} is a login in a terminal, which needs one: run `{}`, or `acp login \
                     {flag}{method}`, then run again without --auth",
                    command.display(&login.env)
                )));
            }
            return if self.run_login(&command, &login, interrupts, setup).await {
                Ok(true)
            } else {
                Err(Failure::agent(format!(
                    "the login {method} did not finish successfully"
                )))
            };
        }
        self.trying = Some(method.to_owned());
        let conn = self.process.connection().clone();
        self.step(
            "authenticate",
            interrupts,
            conn.authenticate(AuthenticateRequest::new(method)),
        )
        .await
        .map_err(|Interrupted::Failed(f)| f)?;
        self.trying = None;
        Ok(false)
    }

    /// Asks whether to run one of the terminal logins that fit `failure`,
    /// and runs it. True once one exited 0.
    async fn offer_login(
        &mut self,
        failure: &Failure,
        interrupts: &mut Signal,
        setup: &Setup,
    ) -> bool {
        let Some(error) = failure.error.as_deref().cloned() else {
            return false;
        };
        let problem = auth::Problem {
            method: "",
            error: &error,
            tried: None,
        };
        let logins = match &self.restart {
            Some(r) => auth::relevant(&problem, &self.logins, &r.agent.command),
            None => return false,
        };
        let runnable: Vec<(Login, TerminalCommand)> = logins
            .into_iter()
            .filter_map(|l| {
                let command = l.terminal.clone()?;
                Some((l, command))
            })
            .collect();
        if runnable.is_empty() {
            return false;
        }
        let color = self.client.with_renderer(|r| r.color());
        self.client.with_renderer(|r| r.break_line());
        let mut question = format!(
            "{}\nThe agent needs you to log in. acp can run its login here:\n",
            failure.message.lines().next().unwrap_or_default()
        );
        for (i, (login, command)) in runnable.iter().enumerate() {
            question.push_str(&format!(
                "  {}) {}: {}\n",
                i + 1,
                login.name,
                command.display(&login.env)
            ));
        }
        let count = runnable.len();
        let chosen = tokio::task::spawn_blocking(move || {
            let mut tty = Tty::open(Arc::new(AtomicBool::new(false)))?;
            ask_choice(&mut tty, &question, count, color)
        })
        .await
        .ok()
        .flatten();
        let Some(index) = chosen else {
            return false;
        };
        let (login, command) = &runnable[index];
        self.run_login(command, login, interrupts, setup).await
    }

    /// Runs a terminal login in the user's terminal and waits for it.
    async fn run_login(
        &mut self,
        command: &TerminalCommand,
        login: &Login,
        interrupts: &mut Signal,
        setup: &Setup,
    ) -> bool {
        self.client.with_renderer(|r| {
            r.note(&format!(
                "[login] running `{}`; acp goes on when it exits",
                command.display(&login.env)
            ))
        });
        let (command, cwd) = (command.clone(), setup.cwd.clone());
        let status = tokio::task::spawn_blocking(move || command.run(&cwd)).await;
        // Ctrl-C typed during the login was the login's.
        while let Ok(Some(())) = tokio::time::timeout(Duration::ZERO, interrupts.recv()).await {}
        let note = match &status {
            Ok(Ok(status)) if status.success() => {
                "[login] done; starting the agent again".to_owned()
            }
            Ok(Ok(status)) => format!("[login] the login command ended: {status}"),
            Ok(Err(e)) => format!("[login] cannot run the login command: {e}"),
            Err(e) => format!("[login] the login command failed: {e}"),
        };
        self.client.with_renderer(|r| r.note(&note));
        matches!(status, Ok(Ok(status)) if status.success())
    }

    /// Sets the mode, model and config options the flags or the agent's
    /// config entry ask for.
    async fn apply_choices(
        &mut self,
        interrupts: &mut Signal,
        args: &SessionArgs,
        opened: &mut Opened,
    ) -> Result<(), Failure> {
        let defaults = self
            .restart
            .as_ref()
            .map(|r| r.agent.defaults.clone())
            .unwrap_or_default();
        let mode = match &args.mode {
            Some(mode) => Some((mode.clone(), true)),
            None => defaults.mode.map(|m| (m, false)),
        };
        if let Some((mode, explicit)) = mode {
            self.choose_mode(interrupts, opened, &mode, explicit)
                .await?;
        }
        let model = match &args.model {
            Some(model) => Some((model.clone(), true)),
            None => defaults.model.map(|m| (m, false)),
        };
        if let Some((model, explicit)) = model {
            let option = find_option(opened, SessionConfigOptionCategory::Model, "model");
            match option {
                Some(id) => {
                    self.choose_option(interrupts, opened, &id, &model, explicit, "--model")
                        .await?
                }
                None => match self
                    .choose_model_by_selector(interrupts, opened, &model)
                    .await?
                {
                    Ok(true) => {}
                    Ok(false) => self.refuse(
                        explicit,
                        format!(
                            "the agent offers no model choice, so the model {model} cannot be chosen"
                        ),
                    )?,
                    Err(why) => self.refuse(explicit, why)?,
                },
            }
        }
        for (id, value) in defaults.options {
            self.choose_option(interrupts, opened, &id, &value, false, "")
                .await?;
        }
        Ok(())
    }

    /// A choice that cannot be made: a usage error for a flag, a note for a
    /// default from the config.
    fn refuse(&self, explicit: bool, why: String) -> Result<(), Failure> {
        if explicit {
            return Err(Failure::usage(why));
        }
        self.client.with_renderer(|r| {
            r.note(&format!(
                "[note] {why} (a default of the agent's config entry)"
            ))
        });
        Ok(())
    }

    async fn choose_mode(
        &mut self,
        interrupts: &mut Signal,
        opened: &mut Opened,
        mode: &str,
        explicit: bool,
    ) -> Result<(), Failure> {
        if let Some(modes) = &opened.modes {
            let known = modes
                .available_modes
                .iter()
                .any(|m| m.id.to_string() == mode);
            if !known {
                let ids: Vec<String> = modes
                    .available_modes
                    .iter()
                    .map(|m| m.id.to_string())
                    .collect();
                return self.refuse(
                    explicit,
                    format!(
                        "the agent has no mode {mode}; its modes are {}",
                        ids.join(", ")
                    ),
                );
            }
            if modes.current_mode_id.to_string() == mode {
                return Ok(());
            }
            let conn = opened.conn.clone();
            let request = SetSessionModeRequest::new(opened.session_id.clone(), mode);
            self.step(
                "session/set_mode",
                interrupts,
                conn.set_session_mode(request),
            )
            .await
            .map_err(|Interrupted::Failed(f)| f)?;
            if let Some(modes) = &mut opened.modes {
                modes.current_mode_id = SessionModeId::new(mode);
            }
            return Ok(());
        }
        match find_option(opened, SessionConfigOptionCategory::Mode, "mode") {
            Some(id) => {
                self.choose_option(interrupts, opened, &id, mode, explicit, "--mode")
                    .await
            }
            None => self.refuse(
                explicit,
                format!("the agent has no session modes, so the mode {mode} cannot be chosen"),
            ),
        }
    }

    /// Sets config option `id` to `value` (a value id or name; `true` or
    /// `false` for a boolean).
    async fn choose_option(
        &mut self,
        interrupts: &mut Signal,
        opened: &mut Opened,
        id: &str,
        value: &str,
        explicit: bool,
        flag: &str,
    ) -> Result<(), Failure> {
        let options = opened.config_options.clone().unwrap_or_default();
        let Some(option) = options.iter().find(|o| o.id.to_string() == id) else {
            return self.refuse(explicit, format!("the agent has no config option {id}"));
        };
        let value = match parse_config_value(option, value) {
            Ok(value) => value,
            Err(why) if flag.is_empty() => return self.refuse(explicit, why),
            Err(why) => return self.refuse(explicit, format!("{flag}: {why}")),
        };
        let unchanged = match (&option.kind, &value) {
            (SessionConfigKind::Select(s), SessionConfigValue::ValueId(v)) => s.current_value == *v,
            (SessionConfigKind::Boolean(b), SessionConfigValue::Boolean(v)) => {
                b.current_value == *v
            }
            _ => false,
        };
        if unchanged {
            return Ok(());
        }
        let conn = opened.conn.clone();
        let request =
            SetSessionConfigOptionRequest::new(opened.session_id.clone(), option.id.clone(), value);
        let response = self
            .step(
                "session/set_config_option",
                interrupts,
                conn.set_session_config_option(request),
            )
            .await
            .map_err(|Interrupted::Failed(f)| f)?;
        opened.config_options = Some(response.config_options);
        Ok(())
    }
}

/// The id of the config option of `category` (or, failing that, the one
/// with id `fallback`).
fn find_option(
    opened: &Opened,
    category: SessionConfigOptionCategory,
    fallback: &str,
) -> Option<String> {
    let options = opened.config_options.as_ref()?;
    options
        .iter()
        .find(|o| o.category.as_ref() == Some(&category))
        .or_else(|| options.iter().find(|o| o.id.to_string() == fallback))
        .map(|o| o.id.to_string())
}

/// A config option's current value and its choices.
pub(crate) fn describe_value(option: &SessionConfigOption) -> String {
    match &option.kind {
        SessionConfigKind::Select(select) => {
            let values: Vec<String> = select.options.iter().map(|o| o.value.to_string()).collect();
            format!("{} (one of {})", select.current_value, values.join(", "))
        }
        SessionConfigKind::Boolean(b) => format!("{} (true or false)", b.current_value),
        _ => "(a kind of option acp cannot show)".to_owned(),
    }
}

/// Reads a value typed for a config option: a value id or name for a
/// select, `true`/`false` (`on`/`off`, `yes`/`no`) for a boolean.
pub(crate) fn parse_config_value(
    option: &SessionConfigOption,
    text: &str,
) -> Result<SessionConfigValue, String> {
    match &option.kind {
        SessionConfigKind::Select(select) => select
            .options
            .iter()
            .find(|o| o.value.to_string() == text || o.name.eq_ignore_ascii_case(text))
            .map(|o| SessionConfigValue::from(o.value.clone()))
            .ok_or_else(|| {
                let values: Vec<String> =
                    select.options.iter().map(|o| o.value.to_string()).collect();
                format!("{} takes one of {}", option.id, values.join(", "))
            }),
        SessionConfigKind::Boolean(_) => match text.to_ascii_lowercase().as_str() {
            "true" | "on" | "yes" => Ok(true.into()),
            "false" | "off" | "no" => Ok(false.into()),
            _ => Err(format!("{} takes true or false", option.id)),
        },
        _ => Err(format!(
            "acp cannot set {}: unknown kind of option",
            option.id
        )),
    }
}

/// Asks which of `count` numbered choices to take; Enter takes the first,
/// `n` (or the end of input) none.
fn ask_choice(tty: &mut Tty, question: &str, count: usize, color: bool) -> Option<usize> {
    let style = crate::style::Style::new(color);
    tty.write(&format!("{} {question}", style.yellow_bold("?")));
    loop {
        let prompt = if count == 1 {
            "Run it now? [Y/n] ".to_owned()
        } else {
            format!("Run which? [1-{count}, Enter: 1, n: none] ")
        };
        let line = tty.ask(&prompt)?;
        let answer = line.trim().to_ascii_lowercase();
        match answer.as_str() {
            "" | "y" | "yes" => return Some(0),
            "n" | "no" => return None,
            _ => {
                if let Some(n) = answer
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=count).contains(n))
                {
                    return Some(n - 1);
                }
            }
        }
    }
}
