//! `acp-test-agent`: a deterministic ACP agent, a **test fixture** for the
//! integration tests of `acp` (not for end users).
//!
//! What it does in a turn depends on the first word of the prompt's text:
//!
//! | prompt | behaviour |
//! | ------ | --------- |
//! | `stream` | streams "Hello, world!" in four chunks |
//! | `thought` | two thought chunks, then "Thought about it." |
//! | `plan` | a three-entry plan, then the plan with progress, then "Planned." |
//! | `tool` | an edit tool call with a location and a diff, in progress, completed |
//! | `permission [KIND]` | a tool call of KIND (default `edit`), then a permission request; reports the outcome |
//! | `read PATH [LINE [LIMIT]]` | `fs/read_text_file`; replies with the content or the error |
//! | `write PATH TEXT…` | `fs/write_text_file`; replies "wrote PATH" or the error |
//! | `terminal [--limit N] CMD…` | runs `sh -c CMD` through `terminal/*`; reports exit code, truncation and output |
//! | `slow` | "tick N" every 100 ms for 30 s; honours `session/cancel` (stop reason `cancelled`) |
//! | `crash` | one chunk, two stderr lines, then exits with status 3 mid-turn |
//! | `refuse` / `max-tokens` | ends with `refusal` / `max_tokens` |
//! | `error` | answers the prompt with an internal error |
//! | `blocks` | describes the prompt's content blocks |
//! | `elicit` | asks for input with `elicitation/create`; reports the action |
//! | `url-elicit [URL]` | asks the user to visit URL (default `https://example.test/auth?x=1`) with a URL elicitation `elic-1`; reports the action, and after an accept sends `elicitation/complete` |
//! | `later N` | "see you later", ends the turn, and N×100 ms later sends "late news" outside any turn |
//! | `garbage` | writes a line that is not JSON to stdout, then "still here" |
//! | `stubborn` | "tick N" every 100 ms for 30 s, ignoring `session/cancel` |
//! | `bad-update` | writes a `session/update` whose content is not a content block, then "still here" |
//! | `huge N` | one message chunk of N `x` characters and a newline |
//! | `too-long` | writes a `session/update` line longer than 64 MiB, then "still here" |
//! | `hangup` | one chunk, then closes its stdout and blocks for 60 s (alive, but silent) |
//! | `slow-stream` | "The quick brown fox" word by word, then (at the gate) " jumps over the lazy dog." and "Second line." |
//! | `words N [MS]` | "w1 w2 … wN" and a newline, one chunk a word, MS ms apart (default 15); honours `session/cancel` |
//! | `silent` | nothing until the gate, then "done" |
//! | `usage-live` | a `usage_update` (1234 of 200000 tokens, 0.05 USD), then "done" at the gate |
//! | `retry` | retries forever: a warning notice, then `_meta.status` "Reconnecting... N/5" in a `session_info_update` every 200 ms; honours `session/cancel` |
//! | `markdown` | a heading, a table, a numbered list and a link, split mid-row |
//! | `run-permission CMD…` | an `execute` tool call `` `CMD` `` (`rawInput.command`), then a permission request; reports the outcome |
//! | `edit-permission FILE [long]` | an `edit` tool call for FILE in the cwd whose permission request carries the diff (200 changed lines with `long`); reports the outcome |
//! | `plan-live` | a three-entry plan, "Reading.", then (at the gate) the plan with progress and "Planned." |
//! | `tool-progress` | a `search` tool call pending, in progress, then (at the gate) completed with "3 matches" |
//! | `which-model` | "Running on MODEL", the session's model (`fast` or `smart`) |
//! | anything else | "You said: TEXT" |
//!
//! "The gate" is the file `ACP_TEST_AGENT_GATE` names: those turns wait
//! until it exists (see `scenes.rs`).
//!
//! Environment: `ACP_TEST_AGENT_LOG=FILE` appends each method received to
//! FILE (and `pid N` at `initialize`); `ACP_TEST_AGENT_REQUIRE_AUTH=1` makes
//! `session/new` fail with `auth_required` until `authenticate` with
//! `test-login`; `ACP_TEST_AGENT_PROTOCOL=N` answers `initialize` with
//! version N; `ACP_TEST_AGENT_EMBEDDED=1` advertises embedded context;
//! `ACP_TEST_AGENT_RESUME=1` advertises `session/resume`;
//! `ACP_TEST_AGENT_NO_LOAD=1` does not advertise `session/load`;
//! `ACP_TEST_AGENT_TERMINAL_AUTH=1` offers terminal auth even to a client that
//! did not advertise `auth.terminal`. `ACP_TEST_AGENT_AUTH=SHAPE` plays the
//! login shapes of real agents (`terminal`, `env-hint`, `error-data`: see
//! `auth.rs`); run with `--login MODE`, the program is the
//! terminal login. `ACP_TEST_AGENT_HANG_NEW=1` never answers `session/new`.
//!
//! `ACP_TEST_AGENT_EXTRAS=1` turns on the session extras: `session/new`
//! answers with the modes `ask` (current) and `auto` and the config options
//! `model` (a select: `fast` (current) or `smart`) and `web` (a boolean,
//! false), and is followed by an `available_commands_update` (`/review`,
//! `/test` with an input hint); `session/set_mode` sends a
//! `current_mode_update`; `session/set_config_option` answers every option
//! and sends a `config_option_update`; `session/list` is advertised and
//! answers two pages (`sess-a`, `sess-b`, then `sess-c`), in the directory
//! the request names (`/projects/demo` when it names none); every turn ends
//! with a `usage_update` (1000 tokens more per turn of 20000, cost 0.25 USD
//! per turn).
//!
//! `ACP_TEST_AGENT_MODELS=1` offers the session model selector (the unstable
//! `models`): `session/new`, `load` and `resume` answer with the models
//! `fast` and `smart`, the current one being the model the config option
//! `model` also shows; `session/set_model` switches it (an unknown id is
//! -32602) and, with the extras, sends a `config_option_update`; every
//! prompt result carries `usage` (120 tokens in and 30 out per turn).

use acp::schema::*;
use acp::{Agent, AgentSideConnection, NotificationContext, RequestContext, Transport};
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

mod auth;
mod scenes;
mod turn;

struct TestAgent {
    conn: AgentSideConnection,
    sessions: AtomicU64,
    authenticated: AtomicBool,
    cwds: Mutex<std::collections::HashMap<SessionId, String>>,
    extras: Mutex<Extras>,
}

/// The state of the session extras (`ACP_TEST_AGENT_EXTRAS=1`), shared by
/// every session of the process.
struct Extras {
    mode: String,
    model: String,
    web: bool,
    turns: u64,
}

impl Default for Extras {
    fn default() -> Self {
        Extras {
            mode: "ask".to_owned(),
            model: "fast".to_owned(),
            web: false,
            turns: 0,
        }
    }
}

impl Extras {
    fn modes(&self) -> SessionModeState {
        SessionModeState::new(
            self.mode.as_str(),
            vec![
                SessionMode::new("ask", "Ask").description("Asks before every edit"),
                SessionMode::new("auto", "Auto").description("Edits without asking"),
            ],
        )
    }

    fn config_options(&self) -> Vec<SessionConfigOption> {
        vec![
            SessionConfigOption::select(
                "model",
                "Model",
                self.model.as_str(),
                vec![
                    SessionConfigSelectOption::new("fast", "Fast model"),
                    SessionConfigSelectOption::new("smart", "Smart model"),
                ],
            ),
            SessionConfigOption::boolean("web", "Web search", self.web),
        ]
    }
}

/// A line longer than the client's 64 MiB limit.
const TOO_LONG: usize = 64 * 1024 * 1024 + 16;

fn models_on() -> bool {
    env_flag("ACP_TEST_AGENT_MODELS")
}

/// The session model selector (`ACP_TEST_AGENT_MODELS=1`), with `current`
/// in use.
fn models_state(current: &str) -> Option<SessionModelState> {
    models_on().then(|| {
        SessionModelState::new(
            current,
            vec![
                ModelInfo::new("fast", "Fast model").description("Quick answers"),
                ModelInfo::new("smart", "Smart model"),
            ],
        )
    })
}

fn extras_on() -> bool {
    env_flag("ACP_TEST_AGENT_EXTRAS")
}

/// Writes one raw line to stdout, bypassing the connection.
fn write_raw(line: &[u8]) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(line);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

fn log(event: &str) {
    if let Some(path) = std::env::var_os("ACP_TEST_AGENT_LOG")
        && let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        let _ = writeln!(file, "{event}");
    }
}

impl TestAgent {
    async fn send(
        &self,
        session: &SessionId,
        update: impl Into<SessionUpdate>,
    ) -> Result<(), Error> {
        self.conn
            .session_notification(SessionNotification::new(session.clone(), update))
            .await?;
        Ok(())
    }

    async fn say(&self, session: &SessionId, text: &str) -> Result<(), Error> {
        self.send(session, SessionUpdate::agent_message(text)).await
    }

    fn cwd(&self, session: &SessionId) -> String {
        self.cwds
            .lock()
            .unwrap()
            .get(session)
            .cloned()
            .unwrap_or_default()
    }
}

fn action_name(action: &ElicitationAction) -> &'static str {
    match action {
        ElicitationAction::Accept(_) => "accept",
        ElicitationAction::Decline(_) => "decline",
        ElicitationAction::Cancel(_) => "cancel",
        _ => "other",
    }
}

fn describe(e: &acp::ConnectionError) -> String {
    match e.remote() {
        Some(err) => err.message.clone(),
        None => e.to_string(),
    }
}

impl Agent for TestAgent {
    async fn initialize(
        &self,
        request: InitializeRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<InitializeResponse, Error> {
        log("initialize");
        log(&format!("pid {}", std::process::id()));
        let version = std::env::var("ACP_TEST_AGENT_PROTOCOL")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(ProtocolVersion)
            .unwrap_or(ProtocolVersion::V1);
        let mut session_caps = SessionCapabilities::new();
        if env_flag("ACP_TEST_AGENT_RESUME") {
            session_caps = session_caps.resume(SessionResumeCapabilities::new());
        }
        if extras_on() {
            session_caps = session_caps.list(SessionListCapabilities::new());
        }
        let caps = AgentCapabilities::new()
            .load_session(!env_flag("ACP_TEST_AGENT_NO_LOAD"))
            .prompt_capabilities(
                PromptCapabilities::new().embedded_context(env_flag("ACP_TEST_AGENT_EMBEDDED")),
            )
            .session_capabilities(session_caps);
        let mut methods = vec![AuthMethod::from(
            AuthMethodAgent::new("test-login", "Test login").description("Logs in a test user"),
        )];
        // Terminal auth may only be offered to clients that can run it;
        // ACP_TEST_AGENT_TERMINAL_AUTH=1 plays an agent that offers it anyway.
        if request.client_capabilities.auth.terminal || env_flag("ACP_TEST_AGENT_TERMINAL_AUTH") {
            methods.push(AuthMethod::from(
                AuthMethodTerminal::new("tui-login", "Terminal login")
                    .args(vec!["--login".to_owned()]),
            ));
        }
        if let Some(shape) = auth::shape() {
            methods = auth::methods(shape, &request.client_capabilities);
        }
        Ok(InitializeResponse::new(version)
            .agent_capabilities(caps)
            .auth_methods(methods)
            .agent_info(Implementation::new("acp-test-agent", "0.1.0")))
    }

    async fn authenticate(
        &self,
        req: AuthenticateRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<AuthenticateResponse, Error> {
        log(&format!("authenticate {}", req.method_id));
        if let Some(shape) = auth::shape() {
            let done = auth::authenticate(shape, req.method_id.as_str())?;
            self.authenticated.store(done, Ordering::Relaxed);
            return Ok(AuthenticateResponse::new());
        }
        if req.method_id.as_str() != "test-login" {
            return Err(Error::new(ErrorCode::INVALID_PARAMS, "unknown auth method"));
        }
        self.authenticated.store(true, Ordering::Relaxed);
        Ok(AuthenticateResponse::new())
    }

    async fn new_session(
        &self,
        req: NewSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<NewSessionResponse, Error> {
        log("session/new");
        if env_flag("ACP_TEST_AGENT_REQUIRE_AUTH") && !self.authenticated.load(Ordering::Relaxed) {
            return Err(Error::auth_required());
        }
        if let Some(shape) = auth::shape() {
            auth::check_session(shape, self.authenticated.load(Ordering::Relaxed))?;
        }
        if env_flag("ACP_TEST_AGENT_HANG_NEW") {
            std::future::pending::<()>().await;
        }
        let id = SessionId::new(format!(
            "sess-{}",
            self.sessions.fetch_add(1, Ordering::Relaxed) + 1
        ));
        self.cwds.lock().unwrap().insert(id.clone(), req.cwd);
        let models = models_state(&self.extras.lock().unwrap().model);
        if !extras_on() {
            let mut response = NewSessionResponse::new(id);
            response.models = models;
            return Ok(response);
        }
        // The commands follow the answer, as the protocol has it.
        let conn = self.conn.clone();
        let session = id.clone();
        tokio::spawn(async move {
            let commands = vec![
                AvailableCommand::new("review", "Review the changes"),
                AvailableCommand::new("test", "Run the tests")
                    .input(UnstructuredCommandInput::new("which tests")),
            ];
            let update =
                SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands));
            let _ = conn
                .session_notification(SessionNotification::new(session, update))
                .await;
        });
        let extras = self.extras.lock().unwrap();
        let mut response = NewSessionResponse::new(id)
            .modes(extras.modes())
            .config_options(extras.config_options());
        response.models = models;
        Ok(response)
    }

    async fn list_sessions(
        &self,
        req: ListSessionsRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<ListSessionsResponse, Error> {
        log(&format!(
            "session/list {}",
            req.cursor.as_deref().unwrap_or("-")
        ));
        if !extras_on() {
            return Err(Error::method_not_found());
        }
        // The canned sessions are in the directory asked about.
        let cwd = req.cwd.as_deref().unwrap_or("/projects/demo");
        Ok(match req.cursor.as_deref() {
            None => ListSessionsResponse::new(vec![
                SessionInfo::new("sess-a", cwd)
                    .title("Fix the parser")
                    .updated_at("2025-01-02T03:04:05Z"),
                SessionInfo::new("sess-b", cwd).title("Write docs"),
            ])
            .next_cursor("page-2"),
            Some("page-2") => ListSessionsResponse::new(vec![
                SessionInfo::new("sess-c", cwd).title("Old experiment"),
            ]),
            Some(_) => return Err(Error::new(ErrorCode::INVALID_PARAMS, "unknown cursor")),
        })
    }

    async fn set_session_mode(
        &self,
        req: SetSessionModeRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<SetSessionModeResponse, Error> {
        log(&format!("session/set_mode {}", req.mode_id));
        let id = req.mode_id.to_string();
        if !extras_on() || !["ask", "auto"].contains(&id.as_str()) {
            return Err(Error::new(ErrorCode::INVALID_PARAMS, "unknown mode"));
        }
        self.extras.lock().unwrap().mode = id.clone();
        let update = SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(id));
        self.send(&req.session_id, update).await?;
        Ok(SetSessionModeResponse::default())
    }

    async fn set_session_config_option(
        &self,
        req: SetSessionConfigOptionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        let value = match &req.value {
            SessionConfigValue::ValueId(v) => v.to_string(),
            SessionConfigValue::Boolean(b) => b.to_string(),
            _ => "?".to_owned(),
        };
        log(&format!(
            "session/set_config_option {} {value}",
            req.config_id
        ));
        let options = {
            let mut extras = self.extras.lock().unwrap();
            match (req.config_id.to_string().as_str(), &req.value) {
                ("model", SessionConfigValue::ValueId(v))
                    if ["fast", "smart"].contains(&v.to_string().as_str()) =>
                {
                    extras.model = v.to_string();
                }
                ("web", SessionConfigValue::Boolean(b)) => extras.web = *b,
                _ => return Err(Error::new(ErrorCode::INVALID_PARAMS, "bad config option")),
            }
            extras.config_options()
        };
        let update = SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(options.clone()));
        self.send(&req.session_id, update).await?;
        Ok(SetSessionConfigOptionResponse::new(options))
    }

    async fn load_session(
        &self,
        req: LoadSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<LoadSessionResponse, Error> {
        log(&format!("session/load {}", req.session_id));
        self.cwds
            .lock()
            .unwrap()
            .insert(req.session_id.clone(), req.cwd);
        let s = &req.session_id;
        self.send(s, SessionUpdate::user_message("earlier question"))
            .await?;
        self.say(s, "earlier answer\n").await?;
        let call = ToolCall::new("old-read", "Read notes.txt")
            .kind(ToolKind::Read)
            .status(ToolCallStatus::Completed)
            .locations(vec![ToolCallLocation::new("notes.txt")]);
        self.send(s, SessionUpdate::ToolCall(call)).await?;
        let mut response = LoadSessionResponse::new();
        response.models = models_state(&self.extras.lock().unwrap().model);
        Ok(response)
    }

    async fn resume_session(
        &self,
        req: ResumeSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<ResumeSessionResponse, Error> {
        log(&format!("session/resume {}", req.session_id));
        self.cwds
            .lock()
            .unwrap()
            .insert(req.session_id.clone(), req.cwd);
        let mut response = ResumeSessionResponse::new();
        response.models = models_state(&self.extras.lock().unwrap().model);
        Ok(response)
    }

    async fn prompt(
        &self,
        req: PromptRequest,
        cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        log("session/prompt");
        if !self.cwds.lock().unwrap().contains_key(&req.session_id) {
            return Err(Error::resource_not_found(None)
                .data(format!("no session {} on this agent", req.session_id)));
        }
        let stop = self.turn(&req.session_id, &req, &cx.cancellation()).await?;
        if extras_on() {
            let turns = {
                let mut extras = self.extras.lock().unwrap();
                extras.turns += 1;
                extras.turns
            };
            let usage =
                UsageUpdate::new(1000 * turns, 20_000).cost(Cost::new(0.25 * turns as f64, "USD"));
            self.send(&req.session_id, SessionUpdate::UsageUpdate(usage))
                .await?;
        }
        log(&format!("stop {stop}"));
        let mut response = PromptResponse::new(stop);
        response.usage = models_on().then(|| Usage::new(150, 120, 30));
        Ok(response)
    }

    async fn set_session_model(
        &self,
        req: SetSessionModelRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<SetSessionModelResponse, Error> {
        log(&format!("session/set_model {}", req.model_id));
        let id = req.model_id.to_string();
        if !models_on() || !["fast", "smart"].contains(&id.as_str()) {
            return Err(Error::new(ErrorCode::INVALID_PARAMS, "unknown model"));
        }
        let options = {
            let mut extras = self.extras.lock().unwrap();
            extras.model = id;
            extras.config_options()
        };
        if extras_on() {
            let update = ConfigOptionUpdate::new(options);
            self.send(&req.session_id, SessionUpdate::ConfigOptionUpdate(update))
                .await?;
        }
        Ok(SetSessionModelResponse::new())
    }

    async fn cancel(
        &self,
        _: CancelNotification,
        _cx: NotificationContext<AgentSide>,
    ) -> Result<(), Error> {
        log("session/cancel");
        Ok(())
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--login") {
        auth::login_main(&args);
    }
    serve();
}

#[tokio::main(flavor = "current_thread")]
async fn serve() {
    let result = AgentSideConnection::serve(Transport::stdio(), |conn| TestAgent {
        conn,
        sessions: AtomicU64::new(0),
        authenticated: AtomicBool::new(false),
        cwds: Mutex::new(Default::default()),
        extras: Mutex::new(Extras::default()),
    })
    .await;
    if HUNG_UP.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_secs(60));
    }
    if let Err(e) = result {
        eprintln!("acp-test-agent: {e}");
        std::process::exit(1);
    }
}

/// Set by `hangup`: the agent closed its connection but stays alive.
static HUNG_UP: AtomicBool = AtomicBool::new(false);
