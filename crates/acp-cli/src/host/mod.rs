//! The client side of the protocol as `acp` implements it: [`CliClient`],
//! what the agent may do on this machine and how acp answers it.
//!
//! It shows session updates through its [`View`] (which keeps what they
//! said: [`crate::view::Store`]), answers permission requests by a
//! [`PermissionPolicy`] ([`permission`]; the questions on the terminal are
//! in `ask.rs`), and serves `fs/*` and `terminal/*` through [`acp_host`]
//! once the [`Gate`] ([`policy`]) lets a write or a command through. In
//! chat it asks elicitations on the terminal (forms, and links to open in a
//! browser: [`elicit`]), otherwise it declines them; and it shows the
//! output of the agent's terminals (`terminals.rs`).
//!
//! It uses [`crate::view`] and the leaf helpers; the session above owns it.

mod ask;
pub mod elicit;
pub mod permission;
pub mod policy;
mod terminals;

use crate::host::permission::{Decision, PermissionPolicy, Remembered, decide, decision_note};
use crate::host::policy::Gate;
use crate::view::View;
use acp::schema::*;
use acp::{Client, NotificationContext, RequestContext};
use acp_host::{Files, TerminalSettings, Terminals};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::watch;

/// Settings of a [`CliClient`].
#[derive(Debug, Clone)]
pub struct ClientSettings {
    /// How to answer permission requests (and what may be written and run).
    pub policy: PermissionPolicy,
    /// `fs/*`: the roots and the message size.
    pub files: Files,
    /// `terminal/*`: the roots, the sandbox, the supervisor.
    pub terminal: TerminalSettings,
    /// Directories whose files always need a permission naming them (acp's
    /// config), besides `.git` internals.
    pub protected: Vec<PathBuf>,
    /// `acp chat`: permission questions remember "always" answers per tool
    /// kind, elicitations are asked (forms, links to open), terminal output
    /// is shown.
    pub interactive: bool,
}

/// The `Client` implementation of `acp`. Cheap to clone; clones share state.
#[derive(Clone)]
pub struct CliClient {
    shared: Arc<Shared>,
}

struct Shared {
    settings: ClientSettings,
    /// How the session is shown, and the store of what its updates said.
    view: Mutex<View>,
    terminals: Terminals,
    gate: Gate,
    denied: AtomicUsize,
    cancelled: watch::Sender<bool>,
    /// Set when the agent sent a message over the size limit: the run stops,
    /// and nothing the agent sends after it is shown.
    overlong: watch::Sender<bool>,
    /// Chat: "always" answers, each for a tool kind and a scope.
    remembered: Mutex<Vec<Remembered>>,
    /// Chat: terminals by tool call, and terminals whose output was shown.
    tool_terminals: Mutex<HashMap<ToolCallId, Vec<TerminalId>>>,
    shown_terminals: Mutex<std::collections::HashSet<TerminalId>>,
    /// Chat: terminals whose output is shown as it arrives, with the
    /// offset of the output shown so far.
    live_terminals: Mutex<HashMap<TerminalId, usize>>,
    /// Chat: the messages of the URL elicitations the user accepted, until
    /// the agent reports them complete.
    links: Mutex<HashMap<ElicitationId, String>>,
    /// Chat: how many questions still read the terminal. One abandoned
    /// when its turn was cancelled stops within [`crate::tty::Tty::ask`]'s
    /// poll interval; until then it would take lines typed at the prompt.
    asking: watch::Sender<usize>,
}

impl std::fmt::Debug for CliClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CliClient")
            .field("settings", &self.shared.settings)
            .finish_non_exhaustive()
    }
}

impl CliClient {
    /// A client showing the session with `view`.
    pub fn new(settings: ClientSettings, view: View) -> Self {
        CliClient {
            shared: Arc::new(Shared {
                terminals: Terminals::new(settings.terminal.clone()),
                gate: Gate::new(settings.policy, settings.protected.clone()),
                settings,
                view: Mutex::new(view),
                denied: AtomicUsize::new(0),
                cancelled: watch::Sender::new(false),
                overlong: watch::Sender::new(false),
                remembered: Mutex::new(Vec::new()),
                tool_terminals: Mutex::new(HashMap::new()),
                shown_terminals: Mutex::new(Default::default()),
                live_terminals: Mutex::new(HashMap::new()),
                links: Mutex::new(HashMap::new()),
                asking: watch::Sender::new(0),
            }),
        }
    }

    /// Runs `f` with the view (and its store).
    pub fn with_view<T>(&self, f: impl FnOnce(&mut View) -> T) -> T {
        f(&mut self
            .shared
            .view
            .lock()
            .unwrap_or_else(PoisonError::into_inner))
    }

    /// How many permission requests were denied so far.
    pub fn denied_count(&self) -> usize {
        self.shared.denied.load(Ordering::Relaxed)
    }

    /// Marks the turn cancelled: pending and later permission requests are
    /// answered `cancelled`.
    pub fn mark_cancelled(&self) {
        self.shared.cancelled.send_replace(true);
    }

    /// Notes that the agent sent a message over the size limit. Called in
    /// order with the session updates, so none sent after it is shown.
    pub fn mark_overlong(&self) {
        self.shared.overlong.send_replace(true);
    }

    /// Resolves once the agent has sent a message over the size limit.
    pub fn overlong(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut flag = self.shared.overlong.subscribe();
        async move {
            let _ = flag.wait_for(|v| *v).await;
        }
    }

    /// Starts a new turn (chat): clears the cancelled mark and the count of
    /// denied requests.
    pub fn begin_turn(&self) {
        self.shared.cancelled.send_replace(false);
        self.shared.denied.store(0, Ordering::Relaxed);
        self.shared.gate.end_turn();
    }

    /// Ends a turn (chat): what was granted in it no longer counts.
    pub fn end_turn(&self) {
        self.shared.gate.end_turn();
    }

    /// Removes the temporary files killed writers left in the session's
    /// directories.
    pub fn sweep(&self) -> impl Future<Output = acp_host::Sweep> + Send + 'static {
        let files = self.shared.settings.files.clone();
        async move { files.sweep().await }
    }

    /// The gate in front of writes and terminals.
    pub fn gate(&self) -> &Gate {
        &self.shared.gate
    }

    /// The `fs` and `terminal` capabilities this client offers: writes and
    /// terminals only where the policy allows them.
    pub fn capabilities(&self) -> ClientCapabilities {
        let gate = &self.shared.gate;
        ClientCapabilities::new()
            .fs(FileSystemCapabilities::new()
                .read_text_file(true)
                .write_text_file(gate.offers_writes()))
            .terminal(gate.offers_terminals())
    }

    /// Resolves once no question reads the terminal any more (chat: the
    /// line editor must not start before, or the two would split the
    /// user's input).
    pub fn terminal_free(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut asking = self.shared.asking.subscribe();
        async move {
            let _ = asking.wait_for(|n| *n == 0).await;
        }
    }

    /// Kills every terminal command still running, with all descendants.
    pub async fn shutdown(&self) {
        self.shared.terminals.shutdown().await;
    }
}

impl Client for CliClient {
    async fn request_permission(
        &self,
        args: RequestPermissionRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<RequestPermissionResponse, Error> {
        let asked = self.asked(&args.tool_call);
        let (kind, title) = (asked.kind.clone(), asked.title.clone());
        let paths = asked.paths.clone();
        let decision = if *self.shared.cancelled.borrow() {
            Decision::Cancel
        } else {
            match decide(self.shared.settings.policy, kind.as_ref(), &args.options) {
                Some(decision) => decision,
                None if self.shared.settings.interactive => {
                    self.ask_chat(asked, args.options.clone()).await
                }
                None => self.ask(title.clone(), args.options.clone()).await,
            }
        };
        if matches!(decision, Decision::Allow(_)) {
            let roots = self.shared.settings.files.roots();
            let paths = paths.iter().filter_map(|p| roots.resolve(p).ok()).collect();
            self.shared
                .gate
                .grant(args.session_id.clone(), kind.clone(), paths);
        } else {
            self.shared.denied.fetch_add(1, Ordering::Relaxed);
        }
        self.with_view(|v| v.note(&decision_note(&title, &decision)));
        Ok(match decision {
            Decision::Allow(o) | Decision::Reject(o) => {
                RequestPermissionResponse::selected(o.option_id)
            }
            Decision::Cancel => RequestPermissionResponse::cancelled(),
        })
    }

    async fn read_text_file(
        &self,
        args: ReadTextFileRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<ReadTextFileResponse, Error> {
        self.shared.settings.files.read_text_file(args).await
    }

    async fn write_text_file(
        &self,
        args: WriteTextFileRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<WriteTextFileResponse, Error> {
        let files = &self.shared.settings.files;
        let path = files.roots().resolve(&args.path)?;
        let verdict = self.shared.gate.check_write(&args.session_id, &path);
        self.permit(verdict, ToolKind::Edit).await?;
        files.write_resolved(path, args.content).await?;
        Ok(WriteTextFileResponse::new())
    }

    async fn create_terminal(
        &self,
        args: CreateTerminalRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<CreateTerminalResponse, Error> {
        let line = std::iter::once(args.command.as_str())
            .chain(args.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        let verdict = self.shared.gate.check_terminal(&args.session_id, &line);
        self.permit(verdict, ToolKind::Execute).await?;
        self.shared.terminals.create(args).await
    }

    async fn terminal_output(
        &self,
        args: TerminalOutputRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<TerminalOutputResponse, Error> {
        self.shared.terminals.output(&args)
    }

    async fn wait_for_terminal_exit(
        &self,
        args: WaitForTerminalExitRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<WaitForTerminalExitResponse, Error> {
        self.shared.terminals.wait_for_exit(args).await
    }

    async fn kill_terminal(
        &self,
        args: KillTerminalRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<KillTerminalResponse, Error> {
        self.shared.terminals.kill(args).await
    }

    async fn release_terminal(
        &self,
        args: ReleaseTerminalRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<ReleaseTerminalResponse, Error> {
        if self.shared.settings.interactive {
            self.show_terminal(&args.terminal_id);
        }
        self.shared.terminals.release(args).await
    }

    async fn create_elicitation(
        &self,
        args: CreateElicitationRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<CreateElicitationResponse, Error> {
        if self.shared.settings.interactive {
            match args.mode {
                ElicitationMode::Form(form) => {
                    let color = self.with_view(|v| v.color());
                    let (message, schema) = (args.message, form.requested_schema);
                    let response = self
                        .on_tty(CreateElicitationResponse::decline(), move |tty| {
                            crate::host::elicit::ask_form(tty, &message, &schema, color)
                        })
                        .await;
                    return Ok(response.unwrap_or_else(CreateElicitationResponse::cancel));
                }
                ElicitationMode::Url(link) => return Ok(self.ask_link(args.message, link).await),
                _ => {}
            }
        }
        self.with_view(|v| v.note(&format!("[elicitation] declined: {}", args.message)));
        Ok(CreateElicitationResponse::decline())
    }

    async fn complete_elicitation(
        &self,
        args: CompleteElicitationNotification,
        _cx: NotificationContext<ClientSide>,
    ) -> Result<(), Error> {
        if *self.shared.overlong.borrow() {
            return Ok(());
        }
        let message = self
            .shared
            .links
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&args.elicitation_id);
        let what = message.unwrap_or_else(|| args.elicitation_id.to_string());
        let note = format!(
            "[elicitation] completed: {}",
            crate::host::elicit::printable(&what)
        );
        self.with_view(|v| v.note(&note));
        Ok(())
    }

    async fn session_notification(
        &self,
        args: SessionNotification,
        _cx: NotificationContext<ClientSide>,
    ) -> Result<(), Error> {
        if *self.shared.overlong.borrow() {
            return Ok(());
        }
        self.with_view(|v| v.update(&args));
        if self.shared.settings.interactive {
            self.track_terminals(&args.update);
        }
        Ok(())
    }
}
