//! Session lifecycle: `session/new`, `load`, `resume`, `list`, `close` and
//! `delete`, backed by the [`Store`](crate::store::Store); and the journal of a
//! turn's updates, stored so that loading a session can replay it.
//!
//! Loading a session replays its history, then tells what a client shows of
//! it besides (resuming tells the same, without the history): its title
//! (`session_info_update`), its last `usage_update` (stored with the turn
//! that sent it, not replayed as it came) and the slash commands.

use super::settings::{Mode, Settings};
use super::{
    CodingAgent, Conversation, Session, invalid_params, lock, session_not_found, store_error,
};
use crate::config::ModelRef;
use crate::mcp::McpServers;
use crate::store::{StoredSession, now_ms, rfc3339};
use acp::schema::*;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

impl Session {
    /// A session in `cwd`, connected to its MCP servers (failures are kept to
    /// be shown at the first prompt). `usage` is its last `usage_update`, if
    /// any; the session's cost goes on from its cost.
    async fn open(
        cwd: PathBuf,
        additional_dirs: Vec<PathBuf>,
        settings: Settings,
        title: Option<String>,
        conversation: Conversation,
        usage: Option<UsageUpdate>,
        mcp_servers: &[McpServer],
    ) -> Arc<Session> {
        let (mcp, mcp_errors) = McpServers::connect(mcp_servers, &cwd).await;
        let cost = usage
            .as_ref()
            .and_then(|u| u.cost.as_ref())
            .filter(|c| c.currency == "USD" && c.amount.is_finite() && c.amount >= 0.0)
            .map(|c| c.amount);
        Arc::new(Session {
            mcp,
            mcp_errors: Mutex::new(mcp_errors),
            local: Arc::new(crate::tools::Local::new(&cwd, &additional_dirs)),
            cwd,
            additional_dirs,
            settings: Mutex::new(settings),
            journal: Mutex::new(Vec::new()),
            title: Mutex::new(title),
            history: tokio::sync::Mutex::new(conversation),
            cost: Mutex::new(cost),
            usage: Mutex::new(usage),
            turn_usage: Mutex::new(None),
            turn: Mutex::new(None),
            environment: tokio::sync::OnceCell::new(),
        })
    }

    /// Cancels the running turn, if any.
    fn cancel_turn(&self) {
        if let Some(turn) = lock(&self.turn).as_ref() {
            turn.cancel();
        }
    }
}

/// `cwd` as a path, which must be absolute.
fn absolute(cwd: &str) -> Result<PathBuf, Error> {
    let path = PathBuf::from(cwd);
    if path.is_absolute() {
        Ok(path)
    } else {
        Err(invalid_params("cwd must be an absolute path"))
    }
}

/// The additional directories, which must be absolute.
fn absolute_dirs(dirs: &[String]) -> Result<Vec<PathBuf>, Error> {
    dirs.iter()
        .map(|d| {
            let p = PathBuf::from(d);
            if p.is_absolute() {
                Ok(p)
            } else {
                Err(invalid_params(format!(
                    "additionalDirectories must be absolute paths: {d:?} is not"
                )))
            }
        })
        .collect()
}

impl CodingAgent {
    /// The model new sessions start with, or `auth_required` saying what to
    /// configure.
    fn default_model(&self) -> Result<ModelRef, Error> {
        self.config
            .model
            .clone()
            .map_err(|why| Error::new(ErrorCode::AUTH_REQUIRED, why.to_string()))
    }

    fn new_session_id(&self) -> SessionId {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let n = self.next_number();
        SessionId::new(format!("sess-{nanos:x}-{}-{n}", std::process::id()))
    }

    /// `session/new`.
    pub(super) async fn create_session(
        &self,
        args: NewSessionRequest,
    ) -> Result<NewSessionResponse, Error> {
        let model = self.default_model()?;
        let cwd = absolute(&args.cwd)?;
        let extra = args.additional_directories.clone().unwrap_or_default();
        let additional_dirs = absolute_dirs(&extra)?;
        let settings = Settings::new(Mode::Ask, model);
        let options = self.config_options(&settings);
        let id = self.new_session_id();
        self.store
            .create(StoredSession {
                id: id.to_string(),
                cwd: args.cwd.clone(),
                additional_dirs: extra,
                title: None,
                updated_at_ms: now_ms(),
                mode: settings.mode.id().into(),
                model: settings.model.id(),
            })
            .await
            .map_err(store_error)?;
        let conversation = Conversation {
            messages: Vec::new(),
            version: 0,
            stale: false,
            context_tokens: None,
        };
        let session = Session::open(
            cwd,
            additional_dirs,
            settings,
            None,
            conversation,
            None,
            &args.mcp_servers,
        )
        .await;
        lock(&self.sessions).insert(id.clone(), session);
        Ok(NewSessionResponse::new(id)
            .modes(Self::modes(Mode::Ask))
            .config_options(options))
    }

    /// Opens a stored session for `session/load` or `session/resume`;
    /// `additional` replaces the stored additional directories when given.
    async fn open_stored(
        &self,
        id: &SessionId,
        cwd: &str,
        additional: Option<&[String]>,
        mcp_servers: &[McpServer],
    ) -> Result<Arc<Session>, Error> {
        let stored = self
            .store
            .get(id.as_str())
            .await
            .map_err(store_error)?
            .ok_or_else(|| session_not_found(id))?;
        let cwd = absolute(if cwd.is_empty() { &stored.cwd } else { cwd })?;
        let additional_dirs = absolute_dirs(additional.unwrap_or(&stored.additional_dirs))?;
        let model = match ModelRef::parse(&stored.model) {
            Ok(m) if self.config.provider(m.provider).is_some() => m,
            _ => self.default_model()?,
        };
        let stored_conversation = self
            .store
            .conversation(id.as_str())
            .await
            .map_err(store_error)?;
        // The last usage shown, else the conversation's size as stored.
        let usage = self
            .store
            .last_usage(id.as_str())
            .await
            .map_err(store_error)?
            .or_else(|| {
                let used = stored_conversation.context_tokens?;
                Some(UsageUpdate::new(used, self.config.context_window))
            });
        let conversation = Conversation {
            messages: stored_conversation.messages,
            version: stored_conversation.version,
            stale: false,
            context_tokens: stored_conversation.context_tokens,
        };
        let mode = Mode::from_id(&stored.mode).unwrap_or(Mode::Ask);
        let session = Session::open(
            cwd,
            additional_dirs,
            Settings::new(mode, model),
            stored.title,
            conversation,
            usage,
            mcp_servers,
        )
        .await;
        lock(&self.sessions).insert(id.clone(), session.clone());
        Ok(session)
    }

    /// `session/load`: replays the stored updates before answering.
    pub(super) async fn load_stored_session(
        &self,
        args: LoadSessionRequest,
    ) -> Result<LoadSessionResponse, Error> {
        // Loading an open session again takes it from the store afresh.
        if let Some(open) = lock(&self.sessions).remove(&args.session_id) {
            open.cancel_turn();
        }
        let session = self
            .open_stored(
                &args.session_id,
                &args.cwd,
                args.additional_directories.as_deref(),
                &args.mcp_servers,
            )
            .await?;
        let updates = self
            .store
            .updates(args.session_id.as_str())
            .await
            .map_err(store_error)?;
        // The usage shown along the way is not replayed: only the last one,
        // after the history.
        for update in updates
            .into_iter()
            .filter(|u| !matches!(u, SessionUpdate::UsageUpdate(_)))
        {
            self.out
                .update(&args.session_id, update)
                .await
                .map_err(super::internal)?;
        }
        self.announce_state(&args.session_id, &session).await;
        self.announce_commands(&args.session_id).await;
        let (modes, options) = self.settings_state(&session);
        Ok(LoadSessionResponse::new()
            .modes(modes)
            .config_options(options))
    }

    /// `session/resume`: like load, without the replay.
    pub(super) async fn resume_stored_session(
        &self,
        args: ResumeSessionRequest,
    ) -> Result<ResumeSessionResponse, Error> {
        let existing = lock(&self.sessions).get(&args.session_id).cloned();
        let session = match existing {
            Some(s) => s,
            None => {
                let servers = args.mcp_servers.clone().unwrap_or_default();
                self.open_stored(
                    &args.session_id,
                    &args.cwd,
                    args.additional_directories.as_deref(),
                    &servers,
                )
                .await?
            }
        };
        self.announce_state(&args.session_id, &session).await;
        self.announce_commands(&args.session_id).await;
        let (modes, options) = self.settings_state(&session);
        Ok(ResumeSessionResponse::new()
            .modes(modes)
            .config_options(options))
    }

    /// Tells the client what it shows of a session it opens by `session/load`
    /// or `session/resume`, before the next prompt: the title (a
    /// `session_info_update`) and the last usage (a `usage_update`: context
    /// used, of the window configured now, and the cost so far).
    async fn announce_state(&self, session_id: &SessionId, session: &Session) {
        let title = lock(&session.title).clone();
        if let Some(title) = title {
            self.send(session_id, SessionInfoUpdate::new().title(title))
                .await;
        }
        let usage = lock(&session.usage).clone();
        if let Some(mut usage) = usage {
            usage.size = self.config.context_window;
            self.send(session_id, usage).await;
        }
    }

    /// `session/list`: stored sessions, most recent first, paged.
    pub(super) async fn list_stored_sessions(
        &self,
        args: ListSessionsRequest,
    ) -> Result<ListSessionsResponse, Error> {
        let offset = match &args.cursor {
            None => 0,
            Some(c) => c
                .parse::<usize>()
                .map_err(|_| invalid_params("invalid cursor"))?,
        };
        let (rows, next) = self
            .store
            .list(args.cwd.clone(), offset)
            .await
            .map_err(store_error)?;
        let sessions: Vec<SessionInfo> = rows
            .into_iter()
            .map(|r| {
                let mut info = SessionInfo::new(r.id, r.cwd).updated_at(rfc3339(r.updated_at_ms));
                if let Some(t) = r.title {
                    info = info.title(t);
                }
                if !r.additional_dirs.is_empty() {
                    info = info.additional_directories(r.additional_dirs);
                }
                info
            })
            .collect();
        let mut resp = ListSessionsResponse::new(sessions);
        if let Some(n) = next {
            resp = resp.next_cursor(n.to_string());
        }
        Ok(resp)
    }

    /// `session/close`: cancels its turn and forgets the open session (the
    /// stored one stays).
    pub(super) async fn close_open_session(
        &self,
        args: CloseSessionRequest,
    ) -> Result<CloseSessionResponse, Error> {
        let open = lock(&self.sessions).remove(&args.session_id);
        let was_open = open.is_some();
        if let Some(session) = open {
            session.cancel_turn();
        }
        if !was_open {
            let stored = self
                .store
                .get(args.session_id.as_str())
                .await
                .map_err(store_error)?
                .is_some();
            if !stored {
                return Err(session_not_found(&args.session_id));
            }
        }
        Ok(CloseSessionResponse::new())
    }

    /// `session/delete`: closes the session and removes it from the store.
    /// Deleting a session that is not there (never was, or deleted already)
    /// succeeds too, as the spec asks: the client wanted it gone, and it is.
    pub(super) async fn delete_stored_session(
        &self,
        args: DeleteSessionRequest,
    ) -> Result<DeleteSessionResponse, Error> {
        if let Some(session) = lock(&self.sessions).remove(&args.session_id) {
            session.cancel_turn();
        }
        self.store
            .delete(args.session_id.as_str())
            .await
            .map_err(store_error)?;
        Ok(DeleteSessionResponse::new())
    }
}

/// A title from the first prompt: its first non-empty line, shortened.
pub(super) fn make_title(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(crate::llm::truncate(line, 80))
}

/// Adds `update` to a turn's journal if it belongs in the replayed history,
/// merging it into the previous entry where possible so that streamed pieces
/// are stored as whole messages.
pub(super) fn journal(entries: &mut Vec<SessionUpdate>, update: &SessionUpdate) {
    match (entries.last_mut(), update) {
        (Some(SessionUpdate::AgentMessageChunk(prev)), SessionUpdate::AgentMessageChunk(new))
        | (Some(SessionUpdate::AgentThoughtChunk(prev)), SessionUpdate::AgentThoughtChunk(new)) => {
            if let (ContentBlock::Text(a), ContentBlock::Text(b)) =
                (&mut prev.content, &new.content)
            {
                a.text.push_str(&b.text);
                return;
            }
        }
        (Some(SessionUpdate::ToolCallUpdate(prev)), SessionUpdate::ToolCallUpdate(new))
            if prev.tool_call_id == new.tool_call_id =>
        {
            merge_update(prev, new);
            return;
        }
        (Some(SessionUpdate::UsageUpdate(prev)), SessionUpdate::UsageUpdate(new)) => {
            *prev = new.clone();
            return;
        }
        _ => {}
    }
    match update {
        SessionUpdate::UserMessageChunk(_)
        | SessionUpdate::AgentMessageChunk(_)
        | SessionUpdate::AgentThoughtChunk(_)
        | SessionUpdate::ToolCall(_)
        | SessionUpdate::ToolCallUpdate(_)
        | SessionUpdate::Plan(_)
        // Stored so that loading the session shows its last usage (it is
        // not replayed as it came).
        | SessionUpdate::UsageUpdate(_) => entries.push(update.clone()),
        _ => {}
    }
}

fn merge_update(prev: &mut ToolCallUpdate, new: &ToolCallUpdate) {
    macro_rules! take {
        ($($f:ident),*) => {$(
            if new.$f.is_some() {
                prev.$f = new.$f.clone();
            }
        )*};
    }
    take!(
        kind, status, title, name, content, locations, raw_input, raw_output, meta
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_merges_streamed_pieces() {
        let mut j = Vec::new();
        journal(&mut j, &SessionUpdate::agent_message("a"));
        journal(&mut j, &SessionUpdate::agent_message("b"));
        journal(&mut j, &UsageUpdate::new(1, 2).into());
        journal(&mut j, &UsageUpdate::new(3, 4).into());
        journal(&mut j, &CurrentModeUpdate::new("ask").into());
        journal(
            &mut j,
            &ToolCallUpdate::new("t")
                .status(ToolCallStatus::InProgress)
                .into(),
        );
        journal(
            &mut j,
            &ToolCallUpdate::new("t").content(vec!["out".into()]).into(),
        );
        assert_eq!(j.len(), 3);
        assert_eq!(j[0], SessionUpdate::agent_message("ab"));
        assert_eq!(j[1], UsageUpdate::new(3, 4).into(), "the last usage only");
        let SessionUpdate::ToolCallUpdate(u) = &j[2] else {
            panic!()
        };
        assert_eq!(u.status, Some(ToolCallStatus::InProgress));
        assert!(u.content.is_some());
    }
}
