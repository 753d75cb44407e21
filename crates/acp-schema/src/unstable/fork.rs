//! Forking sessions (`unstable-session-fork`): `session/fork` starts a new
//! session from the context of an existing one, and `sessionCapabilities.fork`
//! says the agent can.

#[cfg(feature = "unstable-session-model")]
use crate::SessionModelState;
#[cfg(feature = "unstable-system-prompt")]
use crate::SystemPrompt;
use crate::util::{setters, wire_struct};
use crate::{McpServer, Meta, SessionConfigOption, SessionId, SessionModeState};

wire_struct! {
    /// Marks support for `session/fork`.
    #[derive(Default)]
    pub struct SessionForkCapabilities {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionForkCapabilities {
    /// The marker, written as `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(SessionForkCapabilities { opt { meta: Meta } });

wire_struct! {
    /// The `session/fork` request: a new session that starts from the context
    /// of `sessionId` (needs `sessionCapabilities.fork`).
    pub struct ForkSessionRequest {
        /// The session to fork.
        pub session_id: SessionId = "sessionId" (Req),
        /// The new session's working directory (absolute).
        pub cwd: String = "cwd" (Req),
        /// Extra workspace roots (absolute) of the new session (`null` reads as none).
        pub additional_directories: Vec<String> = "additionalDirectories" (NullDfltNonEmpty),
        /// MCP servers the agent should connect to (`null` reads as none).
        pub mcp_servers: Vec<McpServer> = "mcpServers" (NullDfltNonEmpty),
        /// Instructions for the new session (needs `sessionCapabilities.systemPrompt`).
        pub system_prompt: Option<SystemPrompt> = "systemPrompt" (Opt) if "unstable-system-prompt",
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ForkSessionRequest {
    /// Fork `session_id` into a new session working in `cwd`.
    pub fn new(session_id: impl Into<SessionId>, cwd: impl Into<String>) -> Self {
        ForkSessionRequest {
            session_id: session_id.into(),
            cwd: cwd.into(),
            additional_directories: Vec::new(),
            mcp_servers: Vec::new(),
            #[cfg(feature = "unstable-system-prompt")]
            system_prompt: None,
            meta: None,
            extra: Default::default(),
        }
    }

    /// Sets `systemPrompt`.
    #[cfg(feature = "unstable-system-prompt")]
    #[must_use]
    pub fn system_prompt(mut self, system_prompt: impl Into<SystemPrompt>) -> Self {
        self.system_prompt = Some(system_prompt.into());
        self
    }
}

setters!(ForkSessionRequest {
    set { additional_directories: Vec<String>, mcp_servers: Vec<McpServer> }
    opt { meta: Meta }
});

wire_struct! {
    /// The result of `session/fork`: the new session.
    pub struct ForkSessionResponse {
        /// The new session's id.
        pub session_id: SessionId = "sessionId" (Req),
        /// The available modes and the current one, if the agent has modes.
        pub modes: Option<SessionModeState> = "modes" (Lenient),
        /// The models and the current one, if the agent offers a choice.
        pub models: Option<SessionModelState> = "models" (Lenient) if "unstable-session-model",
        /// The session's config options and their values, if the agent has any.
        pub config_options: Option<Vec<SessionConfigOption>> = "configOptions" (ItemsOpt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ForkSessionResponse {
    /// The fork is session `session_id`.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        ForkSessionResponse {
            session_id: session_id.into(),
            modes: None,
            #[cfg(feature = "unstable-session-model")]
            models: None,
            config_options: None,
            meta: None,
            extra: Default::default(),
        }
    }

    /// Sets `models`.
    #[cfg(feature = "unstable-session-model")]
    #[must_use]
    pub fn models(mut self, models: impl Into<SessionModelState>) -> Self {
        self.models = Some(models.into());
        self
    }
}

setters!(ForkSessionResponse {
    opt { modes: SessionModeState, config_options: Vec<SessionConfigOption>, meta: Meta }
});
