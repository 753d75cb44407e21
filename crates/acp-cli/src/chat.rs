//! `acp chat`: the interactive mode. A line editor (history, tab
//! completion of slash commands and `@` paths, multi-line input) alternates
//! with the agent's turns; during a turn the editor is inactive, the
//! transcript streams above a live area (the open line, running tool calls,
//! a status line with a spinner and the elapsed time) and what the user
//! types goes into the live area's input line, to be edited and sent after
//! the turn ([`crate::output`], [`crate::console`]). What the agent sends
//! between turns is printed above the prompt, which is then redrawn with
//! the half-typed line, so the two never write over each other.
//!
//! Each prompt is appended to the history as it is entered, so a hang-up
//! loses none; each session opened is recorded ([`crate::recent`]) for
//! `--continue`. When the agent crashes, the message says how to resume.

use crate::cli::ChatArgs;
use crate::client::CliClient;
use crate::config::ChosenAgent;
use crate::exec::{Interrupted, Session, Setup, spawn_agent, watch_interrupts};
use crate::exit::{self, Failure};
use crate::mentions::prompt_blocks;
use crate::open::{How, OpenOptions, Opened, describe_value, parse_config_value};
use crate::output::ChatOutput;
use crate::permission::PermissionPolicy;
use crate::render::Renderer;
use crate::transcript::{Commands, Transcript};
use crate::turn::{self, Cancelled, TurnEnd};
use acp::schema::*;
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::validate::{ValidationContext, ValidationResult};
use rustyline::{Cmd, CompletionType, Editor, EventHandler, KeyCode, KeyEvent, Modifiers};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::PoisonError;
use std::time::Duration;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::watch;

mod models;

/// The built-in slash commands and what they do.
pub const BUILTINS: &[(&str, &str)] = &[
    ("help", "list the commands"),
    ("mode", "[ID] list the session modes, or switch to one"),
    (
        "config",
        "[ID [VALUE]] list the config options, or set one (a boolean without VALUE is toggled)",
    ),
    ("model", "[ID] list the models, or switch to one"),
    ("sessions", "list the agent's sessions"),
    ("load", "ID load a session (its history is replayed)"),
    (
        "permissions",
        "[revoke N|all] list the \"always\" answers given in this chat, or revoke one",
    ),
    ("quit", "end the chat (like Ctrl-D)"),
];

/// The most pages of `session/list` that `/sessions` fetches.
pub const MAX_SESSION_PAGES: usize = 20;

/// Whether to colour: standard output is a terminal and NO_COLOR is unset.
pub fn use_color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// acp's state directory: `<state dir>/acp` (the data dir where there is
/// no state dir).
pub fn state_dir() -> Option<PathBuf> {
    dirs::state_dir()
        .or_else(dirs::data_dir)
        .map(|dir| dir.join("acp"))
}

/// Where the prompt history is kept: `<state dir>/acp/history`.
pub fn history_path() -> Option<PathBuf> {
    state_dir().map(|dir| dir.join("history"))
}

/// Resolves once the terminal hung up (SIGHUP) or acp was told to stop
/// (SIGTERM).
fn watch_hangups() -> Result<watch::Receiver<bool>, Failure> {
    let cannot = |e: std::io::Error| Failure::agent(format!("cannot watch for hang-ups: {e}"));
    let mut hup = signal(SignalKind::hangup()).map_err(cannot)?;
    let mut term = signal(SignalKind::terminate()).map_err(cannot)?;
    let (tx, rx) = watch::channel(false);
    tokio::spawn(async move {
        tokio::select! {
            _ = hup.recv() => {}
            _ = term.recv() => {}
        }
        let _ = tx.send(true);
    });
    Ok(rx)
}

async fn hung_up(hangup: &mut watch::Receiver<bool>) {
    if hangup.wait_for(|h| *h).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Runs `acp chat` and returns the exit code.
pub async fn run(agent: ChosenAgent, mut args: ChatArgs) -> Result<u8, Failure> {
    let mut setup = Setup::new(&args.session, PermissionPolicy::Ask)?;
    setup.interactive = true;
    let cwd_text = setup.cwd.to_string_lossy().into_owned();
    let recent_path = crate::recent::path();
    if args.resume_last {
        let list = recent_path
            .as_deref()
            .map(crate::recent::read)
            .unwrap_or_default();
        let Some(last) = crate::recent::last(&list, &cwd_text, &agent.label) else {
            return Err(Failure::usage(format!(
                "--continue: acp has had no session with {} in {cwd_text}; start one with acp chat",
                agent.label
            )));
        };
        args.session.session = Some(last.session_id);
    }
    let commands = Commands::default();
    let output = ChatOutput::default();
    let client = CliClient::new(
        setup.settings(true),
        Renderer::chat(use_color(), commands.clone(), Box::new(output.writer())),
    );
    let mut interrupts = watch_interrupts()?;
    let hangup = watch_hangups()?;
    let label = agent.label.clone();
    let flag = agent.flag.clone();
    client.with_renderer(|r| {
        if let Some(t) = r.transcript() {
            t.set_live(output.clone());
        }
    });
    let restart = agent.clone();
    let process = spawn_agent(agent, &setup.cwd, &client, args.session.verbose)?;
    let mut session = Session::new(client.clone(), process).restartable(
        restart,
        &setup.cwd,
        args.session.verbose,
    );
    let capabilities = crate::auth::advertise(client.capabilities())
        .elicitation(
            ElicitationCapabilities::new()
                .form(ElicitationFormCapabilities::new())
                .url(ElicitationUrlCapabilities::new()),
        )
        .session(ClientSessionCapabilities::new().config_options(
            SessionConfigOptionsCapabilities::new().boolean(BooleanConfigOptionCapabilities::new()),
        ));
    let options = OpenOptions {
        show_replay: true,
        prefer_load: true,
    };
    let result = match session
        .open(
            &mut interrupts,
            &args.session,
            &setup,
            capabilities,
            options,
        )
        .await
    {
        Ok(opened) => {
            let mut chat = Chat {
                session: &mut session,
                opened,
                setup: &setup,
                interrupts: &mut interrupts,
                hangup,
                commands,
                output,
                typed: String::new(),
                label: label.clone(),
                recent: recent_path,
            };
            chat.adopt_state();
            chat.remember_session();
            let resumed = chat.opened.how == How::Resumed;
            chat.transcript(|t| {
                if resumed {
                    t.note(
                        "[session] resumed: the agent keeps the conversation but does not \
                         replay it",
                    );
                }
                t.note(&format!(
                    "acp chat with {label}, session {}. /help lists commands; Ctrl-D quits.",
                    chat.opened.session_id
                ));
                t.note(setup.policy_state());
                t.note(&setup.sandbox_state);
            });
            let result = chat.repl().await;
            let id = chat.opened.session_id.clone();
            let can_resume = chat.opened.caps.load_session
                || chat.opened.caps.session_capabilities.resume.is_some();
            result.map_err(|mut failure| {
                if failure.code == exit::AGENT_CRASHED && can_resume {
                    failure.message.push_str(&resume_hint(&flag, &id));
                }
                failure
            })
        }
        Err(failure) => Err(failure),
    };
    session.close().await;
    result
}

/// How to get back to session `id` after a crash.
pub fn resume_hint(flag: &str, id: &SessionId) -> String {
    let mut command = String::from("acp chat");
    if !flag.is_empty() {
        command.push(' ');
        command.push_str(flag);
    }
    format!(
        "\nTo resume the session: {command} --session {id}  (or {command} --continue in this directory)"
    )
}

struct Chat<'a> {
    session: &'a mut Session,
    opened: Opened,
    setup: &'a Setup,
    interrupts: &'a mut Signal,
    /// Set once the terminal hung up or acp was told to stop.
    hangup: watch::Receiver<bool>,
    commands: Commands,
    output: ChatOutput,
    /// What was typed during the last turn, for the next prompt.
    typed: String,
    /// The agent, as named in messages (and in the sessions' record).
    label: String,
    /// Where the sessions opened are recorded.
    recent: Option<PathBuf>,
}

/// What the loop does after a line.
enum Next {
    Continue,
    Quit,
}

impl Chat<'_> {
    fn client(&self) -> &CliClient {
        &self.session.client
    }

    fn transcript<T>(&self, f: impl FnOnce(&mut Transcript) -> T) -> T {
        self.client()
            .with_renderer(|r| f(r.transcript().expect("the chat renderer has a transcript")))
    }

    fn say(&self, text: &str) {
        self.transcript(|t| t.line(text));
    }

    /// Records the open session for `--continue` (a failure is a note).
    fn remember_session(&self) {
        let Some(path) = &self.recent else { return };
        let entry = crate::recent::Recent {
            cwd: self.setup.cwd.to_string_lossy().into_owned(),
            agent: self.label.clone(),
            session_id: self.opened.session_id.to_string(),
            at: crate::recent::now(),
        };
        if let Err(e) = crate::recent::record(path, entry) {
            self.transcript(|t| {
                t.note(&format!(
                    "[warning] cannot record the session in {}: {e}",
                    path.display()
                ))
            });
        }
    }

    /// Takes the modes and config options of the session response.
    fn adopt_state(&mut self) {
        let modes = self.opened.modes.take();
        let options = self.opened.config_options.take();
        let models = self.opened.models.take();
        self.transcript(|t| {
            t.models = models;
            if let Some(modes) = modes {
                t.current_mode = Some(modes.current_mode_id);
                t.modes = modes.available_modes;
            }
            if let Some(options) = options {
                t.config_options = options;
            }
        });
    }

    async fn repl(&mut self) -> Result<u8, Failure> {
        let config = rustyline::Config::builder()
            .auto_add_history(false)
            .completion_type(CompletionType::List)
            .build();
        let mut editor: Editor<ChatHelper, DefaultHistory> = Editor::with_config(config)
            .map_err(|e| Failure::agent(format!("cannot start the line editor: {e}")))?;
        let mut roots = vec![self.setup.cwd.clone()];
        roots.extend(self.setup.add_dirs.iter().cloned());
        editor.set_helper(Some(ChatHelper {
            commands: self.commands.clone(),
            roots,
        }));
        // Alt-Enter inserts a line break (Enter after a trailing backslash
        // too: see the validator).
        editor.bind_sequence(
            KeyEvent(KeyCode::Enter, Modifiers::ALT),
            EventHandler::Simple(Cmd::Newline),
        );
        let history = history_path();
        if let Some(path) = &history {
            let _ = editor.load_history(path);
        }
        // Fails without a terminal; the transcript then always goes to
        // standard output.
        if let Ok(printer) = editor.create_external_printer() {
            self.output.attach(printer);
        }
        let mut editor = Some(editor);
        let mut history_failed = false;
        loop {
            let mut ed = editor.take().expect("the editor is back after each line");
            // A question abandoned by a cancelled turn may still be reading.
            self.client().terminal_free().await;
            if *self.hangup.borrow() {
                break Ok(exit::HANGUP);
            }
            self.output.set_editing(true);
            let typed = std::mem::take(&mut self.typed);
            let read = tokio::task::spawn_blocking(move || {
                let line = ed.readline_with_initial("> ", (&typed, ""));
                (ed, line)
            });
            let read = tokio::select! {
                read = read => read,
                _ = hung_up(&mut self.hangup) => {
                    self.output.set_editing(false);
                    break Ok(exit::HANGUP);
                }
            };
            self.output.set_editing(false);
            let (ed, line) =
                read.map_err(|e| Failure::agent(format!("the line editor failed: {e}")))?;
            editor = Some(ed);
            let line = match line {
                Ok(line) => line,
                Err(ReadlineError::Interrupted) => continue,
                Err(_) if *self.hangup.borrow() => break Ok(exit::HANGUP),
                Err(ReadlineError::Eof) => break Ok(exit::OK),
                Err(e) => break Err(Failure::agent(format!("cannot read a line: {e}"))),
            };
            let line = join_continued(&line);
            let text = line.trim();
            if text.is_empty() {
                continue;
            }
            if let (Some(ed), Some(path)) = (editor.as_mut(), &history) {
                let _ = ed.add_history_entry(text);
                // Written at once, so a hang-up or a crash loses nothing.
                if let Some(dir) = path.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                if let Err(e) = ed.append_history(path)
                    && !history_failed
                {
                    history_failed = true;
                    self.error(&format!(
                        "cannot write the history to {}: {e}",
                        path.display()
                    ));
                }
            }
            let next = if let Some(command) = text.strip_prefix('/') {
                self.command(command).await
            } else {
                self.turn(text).await
            };
            match next {
                Ok(Next::Continue) => {}
                Ok(Next::Quit) => break Ok(exit::OK),
                Err(failure) => break Err(failure),
            }
        }
    }

    /// One prompt turn. Ctrl-C cancels it; a second Ctrl-C, or the agent
    /// not ending the turn within [`CANCEL_GRACE`], kills the agent.
    async fn turn(&mut self, text: &str) -> Result<Next, Failure> {
        // A Ctrl-C typed while no turn ran (when the line editor could not
        // take the terminal over) must not cancel this turn.
        while let Ok(Some(())) = tokio::time::timeout(Duration::ZERO, self.interrupts.recv()).await
        {
        }
        let client = self.client().clone();
        client.begin_turn();
        let live = LiveTurn::begin(&self.output, use_color());
        let conn = self.opened.conn.clone();
        let session_id = self.opened.session_id.clone();
        let blocks = prompt_blocks(
            text,
            &self.setup.cwd,
            self.opened.caps.prompt_capabilities.embedded_context,
        );
        let limits = turn::Limits {
            timeout: self.setup.timeout,
        };
        let end = tokio::select! {
            end = turn::run(
                self.session,
                &conn,
                &session_id,
                blocks,
                self.interrupts,
                limits,
            ) => Some(end),
            _ = hung_up(&mut self.hangup) => None,
        };
        client.with_renderer(|r| {
            if let Some(t) = r.transcript() {
                t.end_turn();
            }
        });
        self.typed = live.end();
        client.end_turn();
        let Some(end) = end else {
            return Err(Failure::new(
                exit::HANGUP,
                "the terminal hung up (or acp was told to stop) during a turn",
            ));
        };
        match end {
            TurnEnd::Answered {
                response,
                cancelled,
            } => {
                self.transcript(|t| t.turn_usage = response.usage.clone());
                client.with_renderer(|r| r.finish(&session_id, &response.stop_reason));
                if cancelled == Some(Cancelled::TimedOut) {
                    let failure =
                        turn::timeout_failure(self.setup.timeout.unwrap_or_default(), false);
                    self.error(&failure.message);
                }
            }
            TurnEnd::Fatal(failure) => return Err(failure),
            TurnEnd::Failed(failure) => {
                client.with_renderer(|r| r.break_line());
                self.error(&failure.message);
            }
        }
        Ok(Next::Continue)
    }

    fn error(&self, message: &str) {
        let text = self.transcript(|t| t.style().red(&format!("error: {message}")));
        self.say(&text);
    }

    /// Awaits a request made between turns; Ctrl-C abandons it. A dead
    /// agent ends the chat.
    async fn request<T>(
        &mut self,
        method: &str,
        call: impl Future<Output = Result<T, acp::ConnectionError>>,
    ) -> Result<Option<T>, Failure> {
        match self.session.step(method, self.interrupts, call).await {
            Ok(value) => Ok(Some(value)),
            Err(Interrupted::Failed(failure)) if failure.code == exit::AGENT_CRASHED => {
                Err(failure)
            }
            Err(Interrupted::Failed(failure)) => {
                self.error(&failure.message);
                Ok(None)
            }
        }
    }

    async fn command(&mut self, line: &str) -> Result<Next, Failure> {
        let mut words = line.split_whitespace();
        let name = words.next().unwrap_or("");
        let rest: Vec<&str> = words.collect();
        match name {
            "quit" | "exit" => return Ok(Next::Quit),
            "help" => self.help(),
            "mode" => self.mode(rest.first().copied()).await?,
            "config" => self.config(&rest).await?,
            "model" => self.model(&rest).await?,
            "sessions" => self.sessions().await?,
            "permissions" => self.permissions(&rest),
            "load" => match rest.first() {
                Some(id) => self.load(id).await?,
                None => self.error("usage: /load SESSION-ID"),
            },
            _ => {
                let known = self
                    .commands
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .iter()
                    .any(|c| c.name == name);
                if known {
                    // Agent commands travel as ordinary prompt text.
                    return self.turn(&format!("/{line}")).await;
                }
                self.error(&format!(
                    "unknown command /{name}; /help lists the commands"
                ));
            }
        }
        Ok(Next::Continue)
    }

    /// `/permissions`: the "always" answers, numbered; `revoke N` or
    /// `revoke all` forgets them.
    fn permissions(&self, args: &[&str]) {
        let client = self.client().clone();
        match args {
            [] => {
                let list = client.remembered();
                if list.is_empty() {
                    self.say("No \"always\" answers in this chat.");
                    return;
                }
                let mut text = String::from("Remembered answers:");
                for (i, r) in list.iter().enumerate() {
                    text.push_str(&format!("\n  {}) {r}", i + 1));
                }
                text.push_str("\n/permissions revoke N forgets one.");
                self.say(&text);
            }
            ["revoke" | "forget", "all"] => {
                client.forget_all();
                self.say("Forgot every \"always\" answer.");
            }
            ["revoke" | "forget", n] => {
                match n.parse::<usize>().ok().and_then(|n| n.checked_sub(1)) {
                    Some(i) => match client.forget(i) {
                        Some(r) => self.say(&format!("Forgot: {r}")),
                        None => self.error(&format!("no answer {n}; /permissions lists them")),
                    },
                    None => self.error("usage: /permissions revoke N|all"),
                }
            }
            _ => self.error("usage: /permissions, or /permissions revoke N|all"),
        }
    }

    fn help(&self) {
        let style = self.transcript(|t| t.style());
        let mut text = style.bold("Commands:");
        for (name, what) in BUILTINS {
            text.push_str(&format!("\n  /{name:<10} {what}"));
        }
        let agent = self
            .commands
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if !agent.is_empty() {
            text.push_str(&format!("\n{}", style.bold("The agent's commands:")));
            for command in agent {
                let hint = match &command.input {
                    Some(AvailableCommandInput::Unstructured(u)) => format!(" {}", u.hint),
                    _ => String::new(),
                };
                text.push_str(&format!(
                    "\n  /{}{hint}  {}",
                    command.name,
                    style.dim(&command.description)
                ));
            }
        }
        text.push_str(&format!(
            "\n{}\n  Tab completes commands and @paths; Up/Down walk the history; Alt-Enter, or \
             Enter after a trailing \\, starts a new line; what you type during a turn waits \
             in the input line until the turn ends; Ctrl-C cancels a turn (twice: kills the \
             agent) or clears the line; Ctrl-D quits.",
            style.bold("Keys:")
        ));
        self.say(&text);
    }

    async fn mode(&mut self, id: Option<&str>) -> Result<(), Failure> {
        let (modes, current) = self.transcript(|t| (t.modes.clone(), t.current_mode.clone()));
        let Some(id) = id else {
            if modes.is_empty() {
                self.say("The agent offers no session modes.");
                return Ok(());
            }
            let mut text = String::from("Modes:");
            for mode in &modes {
                let mark = if current.as_ref() == Some(&mode.id) {
                    "*"
                } else {
                    " "
                };
                text.push_str(&format!("\n {mark} {}  {}", mode.id, mode.name));
                if let Some(d) = &mode.description {
                    text.push_str(&format!(" — {d}"));
                }
            }
            self.say(&text);
            return Ok(());
        };
        if !modes.is_empty() && !modes.iter().any(|m| m.id.to_string() == id) {
            let ids: Vec<String> = modes.iter().map(|m| m.id.to_string()).collect();
            self.error(&format!("no mode {id}; the modes are {}", ids.join(", ")));
            return Ok(());
        }
        let conn = self.opened.conn.clone();
        let request = SetSessionModeRequest::new(self.opened.session_id.clone(), id);
        if self
            .request("session/set_mode", conn.set_session_mode(request))
            .await?
            .is_some()
        {
            self.transcript(|t| t.current_mode = Some(SessionModeId::new(id)));
            self.say(&format!("Mode: {id}"));
        }
        Ok(())
    }

    async fn config(&mut self, args: &[&str]) -> Result<(), Failure> {
        let options = self.transcript(|t| t.config_options.clone());
        match args {
            [] => {
                if options.is_empty() {
                    self.say("The agent offers no config options.");
                    return Ok(());
                }
                let mut text = String::from("Config options:");
                for option in &options {
                    text.push_str(&format!(
                        "\n  {} ({}): {}",
                        option.id,
                        option.name,
                        describe_value(option)
                    ));
                }
                self.say(&text);
            }
            [id] | [id, _] => {
                let Some(option) = options.iter().find(|o| o.id.to_string() == *id) else {
                    self.error(&format!("no config option {id}; /config lists them"));
                    return Ok(());
                };
                let value = match (args.get(1), &option.kind) {
                    (Some(text), _) => parse_config_value(option, text),
                    // A boolean option alone is toggled.
                    (None, SessionConfigKind::Boolean(b)) => Ok((!b.current_value).into()),
                    (None, _) => {
                        self.say(&format!("{id}: {}", describe_value(option)));
                        return Ok(());
                    }
                };
                let value = match value {
                    Ok(value) => value,
                    Err(why) => {
                        self.error(&why);
                        return Ok(());
                    }
                };
                let conn = self.opened.conn.clone();
                let request = SetSessionConfigOptionRequest::new(
                    self.opened.session_id.clone(),
                    option.id.clone(),
                    value,
                );
                if let Some(response) = self
                    .request(
                        "session/set_config_option",
                        conn.set_session_config_option(request),
                    )
                    .await?
                {
                    let now = response
                        .config_options
                        .iter()
                        .find(|o| o.id == option.id)
                        .map(describe_value)
                        .unwrap_or_default();
                    self.transcript(|t| t.config_options = response.config_options);
                    self.say(&format!("{id}: {now}"));
                }
            }
            _ => self.error(
                "usage: /config, /config ID (shows it; toggles a boolean), or /config ID VALUE",
            ),
        }
        Ok(())
    }

    /// Lists the agent's sessions, following `nextCursor` from page to
    /// page (at most [`MAX_SESSION_PAGES`] pages; a cursor seen before ends
    /// the listing).
    async fn sessions(&mut self) -> Result<(), Failure> {
        if self.opened.caps.session_capabilities.list.is_none() {
            self.error("the agent does not list sessions");
            return Ok(());
        }
        let conn = self.opened.conn.clone();
        let mut sessions = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        let mut more = false;
        for page in 0.. {
            if page == MAX_SESSION_PAGES {
                more = true;
                break;
            }
            let mut request = ListSessionsRequest::new();
            if let Some(cursor) = &cursor {
                request = request.cursor(cursor.clone());
            }
            let Some(response) = self
                .request("session/list", conn.list_sessions(request))
                .await?
            else {
                if sessions.is_empty() {
                    return Ok(());
                }
                more = true;
                break;
            };
            sessions.extend(response.sessions);
            match response.next_cursor {
                Some(next) if seen.insert(next.clone()) => cursor = Some(next),
                _ => break,
            }
        }
        if sessions.is_empty() {
            self.say("No sessions.");
            return Ok(());
        }
        let mut text = String::from("Sessions:");
        for info in &sessions {
            let mark = if info.session_id == self.opened.session_id {
                "*"
            } else {
                " "
            };
            text.push_str(&format!("\n {mark} {}", info.session_id));
            if let Some(title) = &info.title {
                text.push_str(&format!("  {title}"));
            }
            if let Some(at) = &info.updated_at {
                text.push_str(&format!("  ({at})"));
            }
            text.push_str(&format!("  {}", info.cwd));
        }
        if more {
            text.push_str("\n  (more sessions not shown)");
        }
        self.say(&text);
        Ok(())
    }

    async fn load(&mut self, id: &str) -> Result<(), Failure> {
        if !self.opened.caps.load_session {
            self.error("the agent cannot load sessions");
            return Ok(());
        }
        let conn = self.opened.conn.clone();
        let mut request =
            LoadSessionRequest::new(id, self.setup.cwd.to_string_lossy().into_owned());
        if !self.setup.add_dirs.is_empty()
            && self
                .opened
                .caps
                .session_capabilities
                .additional_directories
                .is_some()
        {
            request = request.additional_directories(
                self.setup
                    .add_dirs
                    .iter()
                    .map(|d| d.to_string_lossy().into_owned())
                    .collect::<Vec<_>>(),
            );
        }
        self.say(&format!("Loading session {id}…"));
        if let Some(response) = self
            .request("session/load", conn.load_session(request))
            .await?
        {
            self.opened.session_id = SessionId::new(id);
            self.opened.modes = response.modes;
            self.opened.config_options = response.config_options;
            self.opened.models = response.models;
            self.adopt_state();
            self.remember_session();
            self.transcript(|t| t.note(&format!("[session] {id}")));
        }
        Ok(())
    }
}

/// The live area of one turn: started with the turn (with a ticker that
/// moves the spinner), ended with it, and ended on drop too, so that the
/// terminal gets its settings back whatever happens.
struct LiveTurn {
    output: ChatOutput,
    ticker: tokio::task::JoinHandle<()>,
    ended: bool,
}

/// How often the spinner moves.
const TICK: Duration = Duration::from_millis(100);

impl LiveTurn {
    fn begin(output: &ChatOutput, color: bool) -> LiveTurn {
        output.begin_turn(color, String::new());
        let ticking = output.clone();
        let ticker = tokio::spawn(async move {
            loop {
                tokio::time::sleep(TICK).await;
                ticking.tick();
            }
        });
        LiveTurn {
            output: output.clone(),
            ticker,
            ended: false,
        }
    }

    /// Ends the live area; what was typed ahead.
    fn end(mut self) -> String {
        self.ended = true;
        self.ticker.abort();
        self.output.end_turn()
    }
}

impl Drop for LiveTurn {
    fn drop(&mut self) {
        if !self.ended {
            self.ticker.abort();
            self.output.end_turn();
        }
    }
}

/// A line as typed, with each backslash that ended a line (Enter after a
/// trailing `\`) removed.
pub fn join_continued(line: &str) -> String {
    line.replace("\\\n", "\n")
}

/// Tab completion of slash commands (built-in and the agent's) and of
/// `@` paths under the session's directories.
struct ChatHelper {
    commands: Commands,
    /// The session's directory, then the added ones.
    roots: Vec<PathBuf>,
}

impl ChatHelper {
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = BUILTINS.iter().map(|(n, _)| (*n).to_owned()).collect();
        names.extend(
            self.commands
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .map(|c| c.name.clone()),
        );
        names.sort();
        names.dedup();
        names
    }
}

/// The completions of `line` up to `pos`: command names when the line is a
/// slash followed by a partial name.
pub fn complete_command(names: &[String], line: &str, pos: usize) -> Vec<String> {
    let before = &line[..pos];
    match before.strip_prefix('/') {
        Some(partial) if !partial.contains(char::is_whitespace) => names
            .iter()
            .filter(|n| n.starts_with(partial))
            .map(|n| format!("/{n} "))
            .collect(),
        _ => Vec::new(),
    }
}

/// The completions of an `@` path ending at `pos`: where the word starts
/// and the candidates (display, replacement). Paths are relative to the
/// first root where the directory part exists, or absolute; hidden files
/// only when the name typed starts with a dot; directories end with `/`.
pub fn complete_path(roots: &[PathBuf], line: &str, pos: usize) -> Option<(usize, Vec<Pair>)> {
    let before = &line[..pos];
    let start = before.rfind(char::is_whitespace).map_or(0, |i| {
        i + before[i..].chars().next().map_or(1, char::len_utf8)
    });
    let partial = before[start..].strip_prefix('@')?;
    let (dir_part, name_part) = match partial.rfind('/') {
        Some(i) => (&partial[..=i], &partial[i + 1..]),
        None => ("", partial),
    };
    let dir = if Path::new(dir_part).is_absolute() {
        PathBuf::from(dir_part)
    } else {
        roots
            .iter()
            .map(|r| r.join(dir_part))
            .find(|d| d.is_dir())?
    };
    let mut pairs: Vec<Pair> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            if !name.starts_with(name_part)
                || (name.starts_with('.') && !name_part.starts_with('.'))
            {
                return None;
            }
            let is_dir = entry.path().is_dir();
            let shown = if is_dir { format!("{name}/") } else { name };
            let replacement = if is_dir {
                format!("@{dir_part}{shown}")
            } else {
                format!("@{dir_part}{shown} ")
            };
            Some(Pair {
                display: shown,
                replacement,
            })
        })
        .collect();
    pairs.sort_by(|a, b| a.display.cmp(&b.display));
    Some((start, pairs))
}

impl Completer for ChatHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        if let Some(found) = complete_path(&self.roots, line, pos) {
            return Ok(found);
        }
        let pairs = complete_command(&self.names(), line, pos)
            .into_iter()
            .map(|c| Pair {
                display: c.trim_end().to_owned(),
                replacement: c,
            })
            .collect();
        Ok((0, pairs))
    }
}

impl rustyline::hint::Hinter for ChatHelper {
    type Hint = String;
}
impl rustyline::highlight::Highlighter for ChatHelper {}
/// Enter after a trailing backslash goes on to a new line.
impl rustyline::validate::Validator for ChatHelper {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        Ok(if ctx.input().ends_with('\\') {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
    }
}
impl rustyline::Helper for ChatHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes_slash_commands() {
        let names = vec!["help".to_owned(), "load".to_owned(), "lint".to_owned()];
        assert_eq!(complete_command(&names, "/l", 2), vec!["/load ", "/lint "]);
        assert_eq!(complete_command(&names, "/he", 3), vec!["/help "]);
        assert!(complete_command(&names, "hello", 5).is_empty());
        assert!(complete_command(&names, "/load x", 7).is_empty());
    }

    #[test]
    fn completes_paths_after_an_at() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "").unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
        std::fs::write(dir.path().join("README.md"), "").unwrap();
        std::fs::write(dir.path().join(".hidden"), "").unwrap();
        let roots = vec![dir.path().to_path_buf()];
        let names = |line: &str| {
            let (start, pairs) = complete_path(&roots, line, line.len()).unwrap();
            (
                start,
                pairs.into_iter().map(|p| p.replacement).collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            names("look at @"),
            (8, vec!["@README.md ".into(), "@src/".into()])
        );
        assert_eq!(
            names("@src/"),
            (0, vec!["@src/lib.rs ".into(), "@src/main.rs ".into()])
        );
        assert_eq!(names("x @src/m"), (2, vec!["@src/main.rs ".into()]));
        assert_eq!(names("@."), (0, vec!["@.hidden ".into()]));
        assert!(complete_path(&roots, "no at", 5).is_none());
        assert!(complete_path(&roots, "@nosuchdir/x", 12).is_none());
    }

    #[test]
    fn trailing_backslashes_join_lines() {
        assert_eq!(join_continued("line A\\\nline B"), "line A\nline B");
        assert_eq!(join_continued("a \\ b"), "a \\ b");
    }

    #[test]
    fn the_crash_hint_names_the_session() {
        let hint = resume_hint("--agent claude", &SessionId::new("s-1"));
        assert!(
            hint.contains("acp chat --agent claude --session s-1"),
            "{hint}"
        );
        assert!(
            hint.contains("acp chat --agent claude --continue"),
            "{hint}"
        );
    }

    #[test]
    fn config_values() {
        let option = SessionConfigOption::boolean("fast", "Fast", false);
        assert_eq!(
            parse_config_value(&option, "on"),
            Ok(SessionConfigValue::Boolean(true))
        );
        assert!(parse_config_value(&option, "maybe").is_err());
    }
}
