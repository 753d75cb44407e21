//! The client side of the protocol as `acp` implements it: [`CliClient`].
//!
//! It renders session updates (plain text or JSON lines), answers
//! permission requests by a [`PermissionPolicy`], serves `fs/*` within a
//! [`Confinement`], runs `terminal/*` commands ([`Terminals`]) and declines
//! elicitations.

use crate::fs::{Confinement, read_text, write_text};
use crate::render::Renderer;
use crate::terminal::Terminals;
use acp::Client;
use acp::schema::*;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
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
        [PermissionOptionKind::AllowOnce, PermissionOptionKind::AllowAlways]
    } else {
        [PermissionOptionKind::RejectOnce, PermissionOptionKind::RejectAlways]
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
pub fn decide(policy: PermissionPolicy, kind: Option<&ToolKind>, options: &[PermissionOption]) -> Option<Decision> {
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
}

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
            }),
        }
    }

    /// Runs `f` with the renderer.
    pub fn with_renderer<T>(&self, f: impl FnOnce(&mut Renderer) -> T) -> T {
        f(&mut self.shared.renderer.lock().unwrap_or_else(PoisonError::into_inner))
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

    /// Kills every terminal command still running.
    pub fn shutdown(&self) {
        self.shared.terminals.kill_all();
    }

    fn remember_tool(&self, update: &SessionUpdate) {
        let mut kinds = self.shared.tool_kinds.lock().unwrap_or_else(PoisonError::into_inner);
        match update {
            SessionUpdate::ToolCall(call) => {
                kinds.insert(call.tool_call_id.clone(), (call.kind.clone(), call.title.clone()));
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
        let kinds = self.shared.tool_kinds.lock().unwrap_or_else(PoisonError::into_inner);
        let known = kinds.get(&call.tool_call_id);
        let kind = call.kind.clone().or_else(|| known.map(|k| k.0.clone()));
        let title = call
            .title
            .clone()
            .or_else(|| known.map(|k| k.1.clone()))
            .unwrap_or_else(|| call.tool_call_id.to_string());
        (kind, title)
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

/// Asks on `/dev/tty`; anything unreadable counts as a rejection.
fn ask_on_tty(title: &str, options: &[PermissionOption]) -> Decision {
    use std::io::{BufRead, Write};
    let Ok(tty) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty") else {
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
    async fn request_permission(&self, args: RequestPermissionRequest) -> Result<RequestPermissionResponse, Error> {
        let (kind, title) = self.tool_of(&args.tool_call);
        let decision = if *self.shared.cancelled.borrow() {
            Decision::Cancel
        } else {
            match decide(self.shared.settings.policy, kind.as_ref(), &args.options) {
                Some(decision) => decision,
                None => self.ask(title.clone(), args.options.clone()).await,
            }
        };
        if !matches!(decision, Decision::Allow(_)) {
            self.shared.denied.fetch_add(1, Ordering::Relaxed);
        }
        self.with_renderer(|r| r.permission(&title, &decision));
        Ok(match decision {
            Decision::Allow(o) | Decision::Reject(o) => RequestPermissionResponse::selected(o.option_id),
            Decision::Cancel => RequestPermissionResponse::cancelled(),
        })
    }

    async fn read_text_file(&self, args: ReadTextFileRequest) -> Result<ReadTextFileResponse, Error> {
        let path = self.shared.settings.confinement.check(&args.path)?;
        let (line, limit) = (args.line, args.limit);
        let content = tokio::task::spawn_blocking(move || read_text(&path, line, limit))
            .await
            .map_err(|e| Error::new(ErrorCode::INTERNAL_ERROR, e.to_string()))??;
        Ok(ReadTextFileResponse::new(content))
    }

    async fn write_text_file(&self, args: WriteTextFileRequest) -> Result<WriteTextFileResponse, Error> {
        let path = self.shared.settings.confinement.check(&args.path)?;
        let content = args.content;
        tokio::task::spawn_blocking(move || write_text(&path, &content))
            .await
            .map_err(|e| Error::new(ErrorCode::INTERNAL_ERROR, e.to_string()))??;
        Ok(WriteTextFileResponse::new())
    }

    async fn create_terminal(&self, args: CreateTerminalRequest) -> Result<CreateTerminalResponse, Error> {
        let id = self.shared.terminals.create(&args, &self.shared.settings.cwd)?;
        Ok(CreateTerminalResponse::new(id))
    }

    async fn terminal_output(&self, args: TerminalOutputRequest) -> Result<TerminalOutputResponse, Error> {
        self.shared.terminals.output(&args.terminal_id)
    }

    async fn wait_for_terminal_exit(&self, args: WaitForTerminalExitRequest) -> Result<WaitForTerminalExitResponse, Error> {
        Ok(self.shared.terminals.wait_for_exit(&args.terminal_id).await?.into())
    }

    async fn kill_terminal(&self, args: KillTerminalRequest) -> Result<KillTerminalResponse, Error> {
        self.shared.terminals.kill(&args.terminal_id)?;
        Ok(KillTerminalResponse::new())
    }

    async fn release_terminal(&self, args: ReleaseTerminalRequest) -> Result<ReleaseTerminalResponse, Error> {
        self.shared.terminals.release(&args.terminal_id)?;
        Ok(ReleaseTerminalResponse::new())
    }

    async fn create_elicitation(&self, args: CreateElicitationRequest) -> Result<CreateElicitationResponse, Error> {
        self.with_renderer(|r| r.note(&format!("[elicitation] declined: {}", args.message)));
        Ok(CreateElicitationResponse::decline())
    }

    async fn session_notification(&self, args: SessionNotification) -> Result<(), Error> {
        self.remember_tool(&args.update);
        self.with_renderer(|r| r.update(&args));
        Ok(())
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
        assert_eq!(id(decide(PermissionPolicy::ApproveAll, None, &o)), "allow once");
        assert_eq!(id(decide(PermissionPolicy::DenyAll, None, &o)), "reject no");
        assert_eq!(id(decide(PermissionPolicy::ApproveReads, Some(&ToolKind::Read), &o)), "allow once");
        assert_eq!(id(decide(PermissionPolicy::ApproveReads, Some(&ToolKind::Search), &o)), "allow once");
        assert_eq!(id(decide(PermissionPolicy::ApproveReads, Some(&ToolKind::Edit), &o)), "reject no");
        assert_eq!(id(decide(PermissionPolicy::ApproveReads, None, &o)), "reject no");
        assert!(decide(PermissionPolicy::Ask, None, &o).is_none());
        let only_always = vec![o[0].clone(), o[2].clone()];
        assert_eq!(id(decide(PermissionPolicy::ApproveAll, None, &only_always)), "allow always");
        assert_eq!(id(decide(PermissionPolicy::DenyAll, None, &only_always)), "reject never");
        let only_allow = vec![o[1].clone()];
        assert_eq!(id(decide(PermissionPolicy::DenyAll, None, &only_allow)), "cancel");
        let only_reject = vec![o[3].clone()];
        assert_eq!(id(decide(PermissionPolicy::ApproveAll, None, &only_reject)), "reject no");
    }
}
