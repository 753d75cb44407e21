//! The client side of the protocol as `acp` implements it: [`CliClient`].
//!
//! It renders session updates (plain text or JSON lines), answers
//! permission requests by a [`PermissionPolicy`], serves `fs/*` within a
//! [`Confinement`], runs `terminal/*` commands ([`Terminals`]) and declines
//! elicitations.

use crate::fs::{Confinement, read_text, write_text};
use crate::render::Renderer;
use crate::terminal::Terminals;
use crate::tty::Tty;
use acp::Client;
use acp::schema::*;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::watch;

/// How permission requests are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionPolicy {
    /// Allow everything (`--approve-all`).
    ApproveAll,
    /// Allow tool calls of kind `read` or `search`, deny the rest
    /// (`--approve-reads`).
    ApproveReads,
    /// Deny everything (`--deny-all`; the default without a terminal).
    DenyAll,
    /// Ask on the controlling terminal.
    Ask,
}

/// What the policy decided for one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Pick this allowing option.
    Allow(PermissionOption),
    /// Pick this rejecting option.
    Reject(PermissionOption),
    /// Answer `cancelled` (no fitting option, or the turn was cancelled).
    Cancel,
}

/// Picks the option that carries out `allow` (allow_once before
/// allow_always; reject_once before reject_always).
pub fn pick_option(options: &[PermissionOption], allow: bool) -> Decision {
    let order: [PermissionOptionKind; 2] = if allow {
        [
            PermissionOptionKind::AllowOnce,
            PermissionOptionKind::AllowAlways,
        ]
    } else {
        [
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways,
        ]
    };
    for kind in order {
        if let Some(option) = options.iter().find(|o| o.kind == kind) {
            return if allow {
                Decision::Allow(option.clone())
            } else {
                Decision::Reject(option.clone())
            };
        }
    }
    Decision::Cancel
}

/// Decides a request under a non-interactive policy; `None` for
/// [`PermissionPolicy::Ask`].
pub fn decide(
    policy: PermissionPolicy,
    kind: Option<&ToolKind>,
    options: &[PermissionOption],
) -> Option<Decision> {
    let allow = match policy {
        PermissionPolicy::ApproveAll => true,
        PermissionPolicy::ApproveReads => matches!(kind, Some(ToolKind::Read | ToolKind::Search)),
        PermissionPolicy::DenyAll => false,
        PermissionPolicy::Ask => return None,
    };
    Some(match pick_option(options, allow) {
        // An approving policy with no allow option still must not hang.
        Decision::Cancel if allow => pick_option(options, false),
        other => other,
    })
}

/// Settings of a [`CliClient`].
#[derive(Debug, Clone)]
pub struct ClientSettings {
    /// How to answer permission requests.
    pub policy: PermissionPolicy,
    /// Which paths `fs/*` may touch.
    pub confinement: Confinement,
    /// The default working directory of terminals.
    pub cwd: PathBuf,
    /// `acp chat`: permission questions remember "always" answers per tool
    /// kind, elicitations are asked as forms, terminal output is shown.
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
    tool_kinds: Mutex<HashMap<ToolCallId, (ToolKind, String)>>,
    denied: AtomicUsize,
    cancelled: watch::Sender<bool>,
    /// Set when the agent sent a message over the size limit: the run stops,
    /// and nothing the agent sends after it is shown.
    overlong: watch::Sender<bool>,
    /// Chat: "always" answers by tool kind (true: allow).
    remembered: Mutex<HashMap<Option<ToolKind>, bool>>,
    /// Chat: terminals by tool call, and terminals whose output was shown.
    tool_terminals: Mutex<HashMap<ToolCallId, Vec<TerminalId>>>,
    shown_terminals: Mutex<std::collections::HashSet<TerminalId>>,
    /// Chat: terminals whose output is shown as it arrives, with the
    /// offset of the output shown so far.
    live_terminals: Mutex<HashMap<TerminalId, usize>>,
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
                settings,
                renderer: Mutex::new(renderer),
                terminals: Terminals::default(),
                tool_kinds: Mutex::new(HashMap::new()),
                denied: AtomicUsize::new(0),
                cancelled: watch::Sender::new(false),
                overlong: watch::Sender::new(false),
                remembered: Mutex::new(HashMap::new()),
                tool_terminals: Mutex::new(HashMap::new()),
                shown_terminals: Mutex::new(Default::default()),
                live_terminals: Mutex::new(HashMap::new()),
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
    }

    /// Kills every terminal command still running.
    pub fn shutdown(&self) {
        self.shared.terminals.kill_all();
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
        if let Ok(output) = self.shared.terminals.output(id) {
            let exit = output.exit_status.as_ref().map(exit_text);
            self.with_renderer(|r| {
                r.terminal_output(id, &output.output, output.truncated, exit.as_deref())
            });
        }
    }

    fn remember_tool(&self, update: &SessionUpdate) {
        let mut kinds = self
            .shared
            .tool_kinds
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match update {
            SessionUpdate::ToolCall(call) => {
                kinds.insert(
                    call.tool_call_id.clone(),
                    (call.kind.clone(), call.title.clone()),
                );
            }
            SessionUpdate::ToolCallUpdate(u) => {
                if let Some(entry) = kinds.get_mut(&u.tool_call_id) {
                    if let Some(kind) = &u.kind {
                        entry.0 = kind.clone();
                    }
                    if let Some(title) = &u.title {
                        entry.1 = title.clone();
                    }
                }
            }
            _ => {}
        }
    }

    /// The kind and title of the tool call a permission request is about.
    fn tool_of(&self, call: &ToolCallUpdate) -> (Option<ToolKind>, String) {
        let kinds = self
            .shared
            .tool_kinds
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let known = kinds.get(&call.tool_call_id);
        let kind = call.kind.clone().or_else(|| known.map(|k| k.0.clone()));
        let title = call
            .title
            .clone()
            .or_else(|| known.map(|k| k.1.clone()))
            .unwrap_or_else(|| call.tool_call_id.to_string());
        (kind, title)
    }

    /// Chat: asks on the terminal, or answers from a remembered "always"
    /// choice for the same tool kind.
    async fn ask_chat(
        &self,
        kind: Option<ToolKind>,
        title: String,
        options: Vec<PermissionOption>,
    ) -> Decision {
        let remembered = self
            .shared
            .remembered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&kind)
            .copied();
        if let Some(allow) = remembered {
            let order = if allow {
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
                let kind_name = kind
                    .as_ref()
                    .map_or("unknown".to_owned(), |k| k.to_string());
                self.with_renderer(|r| {
                    r.note(&format!("[permission] remembered for {kind_name} tools"))
                });
                return if allow {
                    Decision::Allow(option.clone())
                } else {
                    Decision::Reject(option.clone())
                };
            }
        }
        self.with_renderer(|r| r.break_line());
        let mut cancelled = self.shared.cancelled.subscribe();
        let abort = Arc::new(AtomicBool::new(false));
        let flag = abort.clone();
        let color = self.with_renderer(|r| r.color());
        let kind_text = kind.as_ref().map(|k| k.to_string());
        let question = tokio::task::spawn_blocking(move || {
            let Some(mut tty) = Tty::open(flag) else {
                return pick_option(&options, false);
            };
            ask_permission(&mut tty, &title, kind_text.as_deref(), &options, color)
        });
        let decision = tokio::select! {
            answer = question => answer.unwrap_or(Decision::Cancel),
            _ = cancelled.wait_for(|c| *c) => {
                abort.store(true, Ordering::Relaxed);
                Decision::Cancel
            }
        };
        let chosen = match &decision {
            Decision::Allow(o) if o.kind == PermissionOptionKind::AllowAlways => Some(true),
            Decision::Reject(o) if o.kind == PermissionOptionKind::RejectAlways => Some(false),
            _ => None,
        };
        if let Some(allow) = chosen {
            self.shared
                .remembered
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(kind, allow);
        }
        decision
    }

    async fn ask(&self, title: String, options: Vec<PermissionOption>) -> Decision {
        let mut cancelled = self.shared.cancelled.subscribe();
        let question = tokio::task::spawn_blocking(move || ask_on_tty(&title, &options));
        tokio::select! {
            answer = question => answer.unwrap_or(Decision::Cancel),
            _ = cancelled.wait_for(|c| *c) => Decision::Cancel,
        }
    }
}

/// Chat: the permission question, with numbered options and their kinds.
fn ask_permission(
    tty: &mut Tty,
    title: &str,
    kind: Option<&str>,
    options: &[PermissionOption],
    color: bool,
) -> Decision {
    let style = crate::style::Style::new(color);
    let kind = kind.map(|k| format!(" ({k})")).unwrap_or_default();
    let mut text = format!("{} {title}{kind}\n", style.yellow_bold("? Permission:"));
    for (i, option) in options.iter().enumerate() {
        text.push_str(&format!(
            "  {}) {} {}\n",
            i + 1,
            option.name,
            style.dim(&format!("[{}]", option.kind))
        ));
    }
    tty.write(&text);
    loop {
        let Some(line) = tty.ask(&format!("Choose 1-{}: ", options.len())) else {
            tty.write("\n");
            return Decision::Cancel;
        };
        if let Some(option) = line
            .trim()
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| options.get(i))
        {
            return match option.kind {
                PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways => {
                    Decision::Allow(option.clone())
                }
                _ => Decision::Reject(option.clone()),
            };
        }
    }
}

/// Asks on `/dev/tty`; anything unreadable counts as a rejection.
fn ask_on_tty(title: &str, options: &[PermissionOption]) -> Decision {
    use std::io::{BufRead, Write};
    let Ok(tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return pick_option(options, false);
    };
    let mut out = match tty.try_clone() {
        Ok(out) => out,
        Err(_) => return pick_option(options, false),
    };
    let mut input = std::io::BufReader::new(tty);
    loop {
        let _ = writeln!(out, "The agent asks permission: {title}");
        for (i, option) in options.iter().enumerate() {
            let _ = writeln!(out, "  {}) {} [{}]", i + 1, option.name, option.kind);
        }
        let _ = write!(out, "Choose 1-{}: ", options.len());
        let _ = out.flush();
        let mut line = String::new();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => return pick_option(options, false),
            Ok(_) => {}
        }
        if let Some(option) = line
            .trim()
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| options.get(i))
        {
            return match option.kind {
                PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways => {
                    Decision::Allow(option.clone())
                }
                _ => Decision::Reject(option.clone()),
            };
        }
    }
}

impl Client for CliClient {
    async fn request_permission(
        &self,
        args: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, Error> {
        let (kind, title) = self.tool_of(&args.tool_call);
        let decision = if *self.shared.cancelled.borrow() {
            Decision::Cancel
        } else {
            match decide(self.shared.settings.policy, kind.as_ref(), &args.options) {
                Some(decision) => decision,
                None if self.shared.settings.interactive => {
                    self.ask_chat(kind.clone(), title.clone(), args.options.clone())
                        .await
                }
                None => self.ask(title.clone(), args.options.clone()).await,
            }
        };
        if !matches!(decision, Decision::Allow(_)) {
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
    ) -> Result<ReadTextFileResponse, Error> {
        let path = self.shared.settings.confinement.check(&args.path)?;
        let (line, limit) = (args.line, args.limit);
        let content = tokio::task::spawn_blocking(move || read_text(&path, line, limit))
            .await
            .map_err(|e| Error::new(ErrorCode::INTERNAL_ERROR, e.to_string()))??;
        Ok(ReadTextFileResponse::new(content))
    }

    async fn write_text_file(
        &self,
        args: WriteTextFileRequest,
    ) -> Result<WriteTextFileResponse, Error> {
        let path = self.shared.settings.confinement.check(&args.path)?;
        let content = args.content;
        tokio::task::spawn_blocking(move || write_text(&path, &content))
            .await
            .map_err(|e| Error::new(ErrorCode::INTERNAL_ERROR, e.to_string()))??;
        Ok(WriteTextFileResponse::new())
    }

    async fn create_terminal(
        &self,
        args: CreateTerminalRequest,
    ) -> Result<CreateTerminalResponse, Error> {
        let id = self
            .shared
            .terminals
            .create(&args, &self.shared.settings.cwd)?;
        Ok(CreateTerminalResponse::new(id))
    }

    async fn terminal_output(
        &self,
        args: TerminalOutputRequest,
    ) -> Result<TerminalOutputResponse, Error> {
        self.shared.terminals.output(&args.terminal_id)
    }

    async fn wait_for_terminal_exit(
        &self,
        args: WaitForTerminalExitRequest,
    ) -> Result<WaitForTerminalExitResponse, Error> {
        Ok(self
            .shared
            .terminals
            .wait_for_exit(&args.terminal_id)
            .await?
            .into())
    }

    async fn kill_terminal(
        &self,
        args: KillTerminalRequest,
    ) -> Result<KillTerminalResponse, Error> {
        self.shared.terminals.kill(&args.terminal_id)?;
        Ok(KillTerminalResponse::new())
    }

    async fn release_terminal(
        &self,
        args: ReleaseTerminalRequest,
    ) -> Result<ReleaseTerminalResponse, Error> {
        if self.shared.settings.interactive {
            self.show_terminal(&args.terminal_id);
        }
        self.shared.terminals.release(&args.terminal_id)?;
        Ok(ReleaseTerminalResponse::new())
    }

    async fn create_elicitation(
        &self,
        args: CreateElicitationRequest,
    ) -> Result<CreateElicitationResponse, Error> {
        if self.shared.settings.interactive
            && let ElicitationMode::Form(form) = &args.mode
        {
            self.with_renderer(|r| r.break_line());
            let mut cancelled = self.shared.cancelled.subscribe();
            let abort = Arc::new(AtomicBool::new(false));
            let flag = abort.clone();
            let (message, schema) = (args.message.clone(), form.requested_schema.clone());
            let color = self.with_renderer(|r| r.color());
            let form = tokio::task::spawn_blocking(move || match Tty::open(flag) {
                Some(mut tty) => crate::elicit::ask_form(&mut tty, &message, &schema, color),
                None => CreateElicitationResponse::decline(),
            });
            let response = tokio::select! {
                answer = form => answer.unwrap_or_else(|_| CreateElicitationResponse::cancel()),
                _ = cancelled.wait_for(|c| *c) => {
                    abort.store(true, Ordering::Relaxed);
                    CreateElicitationResponse::cancel()
                }
            };
            return Ok(response);
        }
        self.with_renderer(|r| r.note(&format!("[elicitation] declined: {}", args.message)));
        Ok(CreateElicitationResponse::decline())
    }

    async fn session_notification(&self, args: SessionNotification) -> Result<(), Error> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Vec<PermissionOption> {
        vec![
            PermissionOption::new("always", "Always", PermissionOptionKind::AllowAlways),
            PermissionOption::new("once", "Once", PermissionOptionKind::AllowOnce),
            PermissionOption::new("never", "Never", PermissionOptionKind::RejectAlways),
            PermissionOption::new("no", "No", PermissionOptionKind::RejectOnce),
        ]
    }

    fn id(d: Option<Decision>) -> String {
        match d.unwrap() {
            Decision::Allow(o) => format!("allow {}", o.option_id),
            Decision::Reject(o) => format!("reject {}", o.option_id),
            Decision::Cancel => "cancel".to_owned(),
        }
    }

    #[test]
    fn policies_pick_matching_kinds() {
        let o = options();
        assert_eq!(
            id(decide(PermissionPolicy::ApproveAll, None, &o)),
            "allow once"
        );
        assert_eq!(id(decide(PermissionPolicy::DenyAll, None, &o)), "reject no");
        assert_eq!(
            id(decide(
                PermissionPolicy::ApproveReads,
                Some(&ToolKind::Read),
                &o
            )),
            "allow once"
        );
        assert_eq!(
            id(decide(
                PermissionPolicy::ApproveReads,
                Some(&ToolKind::Search),
                &o
            )),
            "allow once"
        );
        assert_eq!(
            id(decide(
                PermissionPolicy::ApproveReads,
                Some(&ToolKind::Edit),
                &o
            )),
            "reject no"
        );
        assert_eq!(
            id(decide(PermissionPolicy::ApproveReads, None, &o)),
            "reject no"
        );
        assert!(decide(PermissionPolicy::Ask, None, &o).is_none());
        let only_always = vec![o[0].clone(), o[2].clone()];
        assert_eq!(
            id(decide(PermissionPolicy::ApproveAll, None, &only_always)),
            "allow always"
        );
        assert_eq!(
            id(decide(PermissionPolicy::DenyAll, None, &only_always)),
            "reject never"
        );
        let only_allow = vec![o[1].clone()];
        assert_eq!(
            id(decide(PermissionPolicy::DenyAll, None, &only_allow)),
            "cancel"
        );
        let only_reject = vec![o[3].clone()];
        assert_eq!(
            id(decide(PermissionPolicy::ApproveAll, None, &only_reject)),
            "reject no"
        );
    }
}
