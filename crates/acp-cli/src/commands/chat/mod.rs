//! `acp chat`: the interactive mode. A line editor (history, tab
//! completion of slash commands and `@` paths, multi-line input) alternates
//! with the agent's turns; during a turn the editor is inactive, the
//! transcript streams above a live area (the open line, running tool calls,
//! a status line with a spinner and the elapsed time) and what the user
//! types goes into the live area's input line, to be edited and sent after
//! the turn ([`crate::view::chat::output`], [`crate::view::chat::live`]). What the agent sends
//! between turns is printed above the prompt, which is then redrawn with
//! the half-typed line, so the two never write over each other.
//!
//! Each prompt is appended to the history as it is entered, so a hang-up
//! loses none; each session opened is recorded ([`crate::session::recent`]) for
//! `--continue`. When the agent crashes, the message says how to resume.
//!
//! With an agent given by URL, a broken connection is resumed by itself
//! (`[reconnecting…]`, then `[reconnected]`); when the server no longer has
//! it, the chat offers to open the session again on a new connection
//! (`reopen`).

use crate::cli::ChatArgs;
use crate::config::ChosenAgent;
use crate::exit::{self, Failure};
use crate::host::CliClient;
use crate::host::permission::PermissionPolicy;
use crate::session::mentions::prompt_blocks;
use crate::session::open::{How, OpenOptions, Opened};
use crate::session::turn::{self, Cancelled, TurnEnd};
use crate::session::{Interrupted, Session, Setup};
use crate::view::View;
use crate::view::chat::Transcript;
use crate::view::chat::output::ChatOutput;
use crate::view::{Commands, Store};
use acp::schema::*;
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::{Cmd, CompletionType, Editor, EventHandler, KeyCode, KeyEvent, Modifiers};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

mod commands;
mod input;
mod models;
mod reopen;
mod sessions;

use input::ChatHelper;
pub use input::{complete_command, complete_path, join_continued};

/// The built-in slash commands and what they do.
pub const BUILTINS: &[(&str, &str)] = &[
    ("help", "list the commands"),
    ("mode", "[ID] list the session modes, or switch to one"),
    (
        "config",
        "[ID [VALUE]] list the config options, or set one (a boolean without VALUE is toggled)",
    ),
    ("model", "[ID] list the models, or switch to one"),
    (
        "sessions",
        "[N] this directory's sessions (title, age, prompts); choose one by number to open it",
    ),
    (
        "load",
        "ID load a session (its history is replayed), or resume it; a unique prefix will do",
    ),
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
    let recent_path = crate::session::recent::path();
    if args.resume_last {
        let list = recent_path
            .as_deref()
            .map(crate::session::recent::read)
            .unwrap_or_default();
        let Some(last) = crate::session::recent::last(&list, &cwd_text, &agent.label) else {
            return Err(Failure::usage(format!(
                "--continue: acp has had no session with {} in {cwd_text}; start one with acp chat",
                agent.label
            )));
        };
        args.session.session = Some(last.session_id);
    }
    let commands = Commands::default();
    let output = ChatOutput::default();
    let mut view = View::chat(use_color(), commands.clone(), Box::new(output.writer()));
    if let Some(t) = view.transcript() {
        t.set_live(output.clone());
    }
    let client = CliClient::new(setup.settings(true), view);
    let hangup = watch_hangups()?;
    let label = agent.label.clone();
    let flag = agent.flag.clone();
    let mut session = Session::start(agent, &setup, client, args.session.verbose)?;
    let capabilities = crate::session::auth::advertise(session.client.capabilities())
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
        .open(&args.session, &setup, capabilities.clone(), options)
        .await
    {
        Ok(opened) => {
            let mut chat = Chat {
                session: &mut session,
                opened,
                setup: &setup,
                hangup,
                commands,
                output,
                typed: String::new(),
                label: label.clone(),
                recent: recent_path,
                capabilities,
            };
            chat.adopt_state();
            chat.remember_session();
            let resumed = chat.opened.how == How::Resumed;
            chat.transcript(|t| {
                if resumed {
                    t.note(sessions::RESUMED_NOTE);
                }
                // The hint gets a line of its own, so a long agent command
                // wraps on its line and the hint always reads whole.
                t.note(&format!(
                    "acp chat with {label}, session {}.",
                    chat.opened.session_id
                ));
                t.note("/help lists commands; Ctrl-D quits.");
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
    /// What acp told the agent it can do, to tell it again on a new
    /// connection.
    capabilities: ClientCapabilities,
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
            .with_view(|v| f(v.transcript().expect("the chat view has a transcript")))
    }

    /// Runs `f` with the store of what the session's updates said.
    fn store<T>(&self, f: impl FnOnce(&mut Store) -> T) -> T {
        self.client().with_view(|v| f(v.store_mut()))
    }

    fn say(&self, text: &str) {
        self.transcript(|t| t.say(text));
    }

    /// Records the open session for `--continue` (a failure is a note).
    fn remember_session(&self) {
        let Some(path) = &self.recent else { return };
        let entry = crate::session::recent::Recent {
            cwd: self.setup.cwd.to_string_lossy().into_owned(),
            agent: self.label.clone(),
            session_id: self.opened.session_id.to_string(),
            at: crate::session::recent::now(),
            prompts: 0,
            title: None,
        };
        if let Err(e) = crate::session::recent::record(path, entry) {
            self.transcript(|t| {
                t.note(&format!(
                    "[warning] cannot record the session in {}: {e}",
                    path.display()
                ))
            });
        }
    }

    /// Counts a prompt sent in the session, for `/sessions` (a failure was
    /// said when the session was recorded, so it is not repeated).
    fn count_prompt(&self, text: &str) {
        let Some(path) = &self.recent else { return };
        let entry = crate::session::recent::Recent {
            cwd: self.setup.cwd.to_string_lossy().into_owned(),
            agent: self.label.clone(),
            session_id: self.opened.session_id.to_string(),
            at: crate::session::recent::now(),
            prompts: 0,
            title: None,
        };
        let _ = crate::session::recent::prompted(path, entry, text);
    }

    /// Takes the modes and config options of the session response.
    fn adopt_state(&mut self) {
        let modes = self.opened.modes.take();
        let options = self.opened.config_options.take();
        let models = self.opened.models.take();
        self.store(|s| s.adopt(modes, options, models));
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
        // Alt-Enter and Ctrl-J insert a line break (Enter after a trailing
        // backslash too: see the validator).
        for key in [
            KeyEvent(KeyCode::Enter, Modifiers::ALT),
            KeyEvent(KeyCode::Char('J'), Modifiers::CTRL),
        ] {
            editor.bind_sequence(key, EventHandler::Simple(Cmd::Newline));
        }
        let history = crate::config::paths::history_path();
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
        self.session.forget_interrupts().await;
        self.count_prompt(text);
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
                limits,
            ) => Some(end),
            _ = hung_up(&mut self.hangup) => None,
        };
        client.with_view(|v| v.end_turn());
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
                client.with_view(|v| v.finish(&session_id, &response));
                if cancelled == Some(Cancelled::TimedOut) {
                    let failure =
                        turn::timeout_failure(self.setup.timeout.unwrap_or_default(), false);
                    self.error(&failure.message);
                }
            }
            TurnEnd::Fatal(failure) if self.session.remote() => {
                return self.offer_reopen(failure).await;
            }
            TurnEnd::Fatal(failure) => return Err(failure),
            TurnEnd::Failed(failure) => {
                client.with_view(|v| v.break_line());
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
        match self.session.step(method, call).await {
            Ok(value) => Ok(Some(value)),
            // The session opened again (on a new connection) did not get
            // this request: it is abandoned.
            Err(Interrupted::Failed(failure))
                if failure.code == exit::AGENT_CRASHED && self.session.remote() =>
            {
                self.offer_reopen(failure).await.map(|_| None)
            }
            Err(Interrupted::Failed(failure)) if failure.code == exit::AGENT_CRASHED => {
                Err(failure)
            }
            Err(Interrupted::Failed(failure)) => {
                self.error(&failure.message);
                Ok(None)
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::choices::parse_config_value;

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
