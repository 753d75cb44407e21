//! The client side of the protocol as `acp` implements it: [`CliClient`].
//!
//! It renders session updates (plain text or JSON lines), answers
//! permission requests by a [`PermissionPolicy`] ([`crate::host::permission`]),
//! and serves `fs/*` and `terminal/*` through [`acp_host`] once the
//! [`Gate`] ([`crate::host::policy`]) lets a write or a command through. In chat it asks elicitations on the terminal (forms, and
//! links to open in a browser: [`crate::host::elicit`]); otherwise it declines
//! them.

pub mod elicit;
pub mod permission;
pub mod policy;

use crate::host::permission::{
    Asked, Decision, PermissionPolicy, Remembered, ask_on_tty, ask_permission, decide, pick_option,
};
use crate::host::policy::{Gate, Verdict, refused};
use crate::tty::Tty;
use crate::view::Renderer;
use acp::schema::*;
use acp::{Client, NotificationContext, RequestContext};
use acp_host::{Files, TerminalSettings, Terminals};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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
    renderer: Mutex<Renderer>,
    terminals: Terminals,
    gate: Gate,
    /// Every tool call seen, as its updates left it.
    tool_calls: Mutex<HashMap<ToolCallId, ToolCall>>,
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

/// Counts a question as reading the terminal while it lives.
struct Asking(Arc<Shared>);

impl Asking {
    fn start(shared: Arc<Shared>) -> Self {
        shared.asking.send_modify(|n| *n += 1);
        Asking(shared)
    }
}

impl Drop for Asking {
    fn drop(&mut self) {
        self.0.asking.send_modify(|n| *n -= 1);
    }
}

/// Chat: how often a running terminal's output is checked for new lines.
const LIVE_POLL: std::time::Duration = std::time::Duration::from_millis(100);

impl std::fmt::Debug for CliClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CliClient")
            .field("settings", &self.shared.settings)
            .finish_non_exhaustive()
    }
}

impl CliClient {
    /// A client rendering with `renderer`.
    pub fn new(settings: ClientSettings, renderer: Renderer) -> Self {
        CliClient {
            shared: Arc::new(Shared {
                terminals: Terminals::new(settings.terminal.clone()),
                gate: Gate::new(settings.policy, settings.protected.clone()),
                settings,
                renderer: Mutex::new(renderer),
                tool_calls: Mutex::new(HashMap::new()),
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

    /// Runs `f` with the renderer.
    pub fn with_renderer<T>(&self, f: impl FnOnce(&mut Renderer) -> T) -> T {
        f(&mut self
            .shared
            .renderer
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

    /// Chat: notes which terminals a tool call shows, shows their output
    /// as it arrives, and the rest once the call has finished.
    fn track_terminals(&self, update: &SessionUpdate) {
        let (id, content, status) = match update {
            SessionUpdate::ToolCall(call) => {
                (&call.tool_call_id, Some(&call.content), Some(&call.status))
            }
            SessionUpdate::ToolCallUpdate(u) => {
                (&u.tool_call_id, u.content.as_ref(), u.status.as_ref())
            }
            _ => return,
        };
        let mut map = self
            .shared
            .tool_terminals
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut new = Vec::new();
        for item in content.into_iter().flatten() {
            if let ToolCallContent::Terminal(t) = item {
                let list = map.entry(id.clone()).or_default();
                if !list.contains(&t.terminal_id) {
                    list.push(t.terminal_id.clone());
                    new.push(t.terminal_id.clone());
                }
            }
        }
        let done = if matches!(
            status,
            Some(ToolCallStatus::Completed | ToolCallStatus::Failed)
        ) {
            map.remove(id)
        } else {
            None
        };
        drop(map);
        for terminal in new {
            self.start_live(terminal);
        }
        for terminal in done.into_iter().flatten() {
            self.show_terminal(&terminal);
        }
    }

    /// Chat: starts showing the output of a terminal this client runs as
    /// it arrives, polling its buffer until the command exits or the
    /// terminal is shown in full ([`CliClient::show_terminal`]).
    fn start_live(&self, id: TerminalId) {
        {
            let mut live = self.live();
            if live.contains_key(&id) || self.shown().contains(&id) {
                return;
            }
            if self.shared.terminals.output_since(&id, 0, false).is_err() {
                return;
            }
            live.insert(id.clone(), 0);
            self.with_renderer(|r| {
                if let Some(t) = r.transcript() {
                    t.terminal_start(&id);
                }
            });
        }
        if !self.pump_live(&id) {
            return;
        }
        let client = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(LIVE_POLL).await;
                if !client.pump_live(&id) {
                    break;
                }
            }
        });
    }

    /// Chat: shows a live terminal's new complete lines; once the command
    /// has exited, the rest and how it ended. False when the terminal is
    /// no longer live.
    fn pump_live(&self, id: &TerminalId) -> bool {
        let mut live = self.live();
        let Some(from) = live.get(id).copied() else {
            return false;
        };
        match self.shared.terminals.output_since(id, from, false) {
            Ok((since, None)) => {
                if !since.text.is_empty() || since.skipped {
                    self.with_renderer(|r| {
                        if let Some(t) = r.transcript() {
                            t.terminal_lines(&since.text, since.skipped);
                        }
                    });
                }
                live.insert(id.clone(), since.next);
                true
            }
            _ => {
                live.remove(id);
                self.shown().insert(id.clone());
                self.finish_live(id, from);
                false
            }
        }
    }

    /// Chat: shows the rest of a live terminal's output and how it ended.
    fn finish_live(&self, id: &TerminalId, from: usize) {
        let (since, exit) = match self.shared.terminals.output_since(id, from, true) {
            Ok((since, exit)) => (Some(since), exit.as_ref().map(exit_text)),
            Err(_) => (None, None),
        };
        self.with_renderer(|r| {
            if let Some(t) = r.transcript() {
                if let Some(since) = since
                    && (!since.text.is_empty() || since.skipped)
                {
                    t.terminal_lines(&since.text, since.skipped);
                }
                t.terminal_end(exit.as_deref());
            }
        });
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<TerminalId, usize>> {
        self.shared
            .live_terminals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn shown(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<TerminalId>> {
        self.shared
            .shown_terminals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Chat: shows a terminal's output, once: the rest of it when it was
    /// shown live, else all of it.
    fn show_terminal(&self, id: &TerminalId) {
        {
            let mut live = self.live();
            if let Some(from) = live.remove(id) {
                self.shown().insert(id.clone());
                self.finish_live(id, from);
                return;
            }
        }
        if !self
            .shared
            .shown_terminals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone())
        {
            return;
        }
        if let Ok(output) = self.shared.terminals.output_of(id) {
            let exit = output.exit_status.as_ref().map(exit_text);
            self.with_renderer(|r| {
                r.terminal_output(id, &output.output, output.truncated, exit.as_deref())
            });
        }
    }

    fn remember_tool(&self, update: &SessionUpdate) {
        let mut calls = self
            .shared
            .tool_calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match update {
            SessionUpdate::ToolCall(call) => {
                calls.insert(call.tool_call_id.clone(), call.clone());
            }
            SessionUpdate::ToolCallUpdate(u) => {
                if let Some(call) = calls.get_mut(&u.tool_call_id) {
                    call.apply(u);
                }
            }
            _ => {}
        }
    }

    /// What a permission request is about: its tool call, completed by
    /// what earlier updates said of the call.
    fn asked(&self, call: &ToolCallUpdate) -> Asked {
        let calls = self
            .shared
            .tool_calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Asked::new(call, calls.get(&call.tool_call_id))
    }

    /// Chat: the "always" answers given so far.
    pub fn remembered(&self) -> Vec<Remembered> {
        self.shared
            .remembered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Chat: forgets the `index`th "always" answer (from 0); the one
    /// forgotten, if there was one.
    pub fn forget(&self, index: usize) -> Option<Remembered> {
        let mut list = self
            .shared
            .remembered
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        (index < list.len()).then(|| list.remove(index))
    }

    /// Chat: forgets every "always" answer.
    pub fn forget_all(&self) {
        self.shared
            .remembered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Chat: asks on the terminal, or answers from a remembered "always"
    /// choice for the same tool kind and scope (the exact command, paths or
    /// title).
    async fn ask_chat(&self, asked: Asked, options: Vec<PermissionOption>) -> Decision {
        let scope = asked.scope();
        let remembered = self
            .shared
            .remembered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|r| r.kind == asked.kind && r.scope == scope)
            .cloned();
        if let Some(remembered) = remembered {
            let order = if remembered.allow {
                [
                    PermissionOptionKind::AllowAlways,
                    PermissionOptionKind::AllowOnce,
                ]
            } else {
                [
                    PermissionOptionKind::RejectAlways,
                    PermissionOptionKind::RejectOnce,
                ]
            };
            if let Some(option) = order
                .iter()
                .find_map(|k| options.iter().find(|o| o.kind == *k))
            {
                self.with_renderer(|r| {
                    r.note(&format!(
                        "[permission] remembered: {remembered} (/permissions to revoke)"
                    ))
                });
                return if remembered.allow {
                    Decision::Allow(option.clone())
                } else {
                    Decision::Reject(option.clone())
                };
            }
        }
        let color = self.with_renderer(|r| r.color());
        let question = asked.clone();
        let decision = self
            .on_tty(pick_option(&options, false), move |tty| {
                ask_permission(tty, &question, &options, color)
            })
            .await
            .unwrap_or(Decision::Cancel);
        let chosen = match &decision {
            Decision::Allow(o) if o.kind == PermissionOptionKind::AllowAlways => Some(true),
            Decision::Reject(o) if o.kind == PermissionOptionKind::RejectAlways => Some(false),
            _ => None,
        };
        if let Some(allow) = chosen {
            let mut list = self
                .shared
                .remembered
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            list.retain(|r| !(r.kind == asked.kind && r.scope == scope));
            list.push(Remembered {
                kind: asked.kind.clone(),
                scope,
                allow,
            });
        }
        decision
    }

    /// Chat: asks a question on the terminal, from a blocking thread, on a
    /// line of its own. `no_tty` is the answer when the terminal cannot be
    /// opened. `None` when the turn is cancelled meanwhile (the question is
    /// abandoned) or the question failed.
    async fn on_tty<T: Send + 'static>(
        &self,
        no_tty: T,
        ask: impl FnOnce(&mut Tty) -> T + Send + 'static,
    ) -> Option<T> {
        let live = self.with_renderer(|r| {
            r.break_line();
            r.live_output()
        });
        let mut cancelled = self.shared.cancelled.subscribe();
        let abort = Arc::new(AtomicBool::new(false));
        let flag = abort.clone();
        let asking = Asking::start(self.shared.clone());
        let question = tokio::task::spawn_blocking(move || {
            let _asking = asking;
            // The question has the terminal while it reads, even after it
            // was abandoned: the live area and type-ahead step aside.
            if let Some(live) = &live {
                live.suspend();
            }
            let answer = match Tty::open(flag) {
                Some(mut tty) => ask(&mut tty),
                None => no_tty,
            };
            if let Some(live) = &live {
                live.resume();
            }
            answer
        });
        tokio::select! {
            answer = question => answer.ok(),
            _ = cancelled.wait_for(|c| *c) => {
                abort.store(true, Ordering::Relaxed);
                None
            }
        }
    }

    /// Chat: a URL elicitation. The link is shown and opened only with
    /// the user's consent, and only if it is http or https.
    async fn ask_link(
        &self,
        message: String,
        link: ElicitationUrlMode,
    ) -> CreateElicitationResponse {
        let shown = crate::host::elicit::printable(&link.url);
        if let Some(why) = crate::host::elicit::refuse_link(&link.url) {
            let note = format!(
                "[elicitation] declined: {} — {why}: {shown}",
                crate::host::elicit::printable(&message)
            );
            self.with_renderer(|r| r.note(&note));
            return CreateElicitationResponse::decline();
        }
        let color = self.with_renderer(|r| r.color());
        let (text, url) = (message.clone(), link.url.clone());
        let consent = self
            .on_tty(Some(false), move |tty| {
                crate::host::elicit::ask_url(tty, &text, &url, color)
            })
            .await
            .flatten();
        match consent {
            None => return CreateElicitationResponse::cancel(),
            Some(false) => return CreateElicitationResponse::decline(),
            Some(true) => {}
        }
        let note = match crate::host::elicit::open_url(&link.url) {
            Ok(program) => format!("[elicitation] asked {program} to open the link"),
            Err(why) => format!("[elicitation] {why}; open the link yourself: {shown}"),
        };
        self.with_renderer(|r| r.note(&note));
        self.shared
            .links
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(link.elicitation_id, message);
        CreateElicitationResponse::accept(None)
    }

    /// `acp exec`: asks on the terminal (no terminal: reject); a cancelled
    /// turn abandons the question.
    async fn ask(&self, title: String, options: Vec<PermissionOption>) -> Decision {
        let mut cancelled = self.shared.cancelled.subscribe();
        let abort = Arc::new(AtomicBool::new(false));
        let flag = abort.clone();
        let question = tokio::task::spawn_blocking(move || match Tty::open(flag) {
            Some(mut tty) => ask_on_tty(&mut tty, &title, &options),
            None => pick_option(&options, false),
        });
        tokio::select! {
            answer = question => answer.unwrap_or(Decision::Cancel),
            _ = cancelled.wait_for(|c| *c) => {
                abort.store(true, Ordering::Relaxed);
                Decision::Cancel
            }
        }
    }
}
impl CliClient {
    /// Carries out the gate's verdict: asks the user when it says so (in
    /// chat, or in `acp exec` on a terminal; refused without one).
    async fn permit(&self, verdict: Verdict, kind: ToolKind) -> Result<(), Error> {
        let question = match verdict {
            Verdict::Allow => return Ok(()),
            Verdict::Refuse(error) => {
                self.shared.denied.fetch_add(1, Ordering::Relaxed);
                self.with_renderer(|r| r.note(&format!("[refused] {}", error.message)));
                return Err(error);
            }
            Verdict::Ask(question) => question,
        };
        let options = vec![
            PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
        ];
        let title = format!("The agent wants to {question}");
        let decision = if *self.shared.cancelled.borrow() {
            Decision::Cancel
        } else if self.shared.settings.interactive {
            let color = self.with_renderer(|r| r.color());
            let asked = Asked {
                kind: Some(kind),
                title: title.clone(),
                ..Asked::default()
            };
            self.on_tty(pick_option(&options, false), move |tty| {
                ask_permission(tty, &asked, &options, color)
            })
            .await
            .unwrap_or(Decision::Cancel)
        } else {
            self.ask(title.clone(), options).await
        };
        self.with_renderer(|r| r.permission(&title, &decision));
        match decision {
            Decision::Allow(_) => Ok(()),
            _ => {
                self.shared.denied.fetch_add(1, Ordering::Relaxed);
                Err(refused(&question))
            }
        }
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
        self.with_renderer(|r| r.permission(&title, &decision));
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
                    let color = self.with_renderer(|r| r.color());
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
        self.with_renderer(|r| r.note(&format!("[elicitation] declined: {}", args.message)));
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
        self.with_renderer(|r| r.note(&note));
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
        self.remember_tool(&args.update);
        self.with_renderer(|r| r.update(&args));
        if self.shared.settings.interactive {
            self.track_terminals(&args.update);
        }
        Ok(())
    }
}

/// How a terminal's command ended, for the transcript.
fn exit_text(status: &TerminalExitStatus) -> String {
    match (status.exit_code, &status.signal) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        _ => "ended".to_owned(),
    }
}
