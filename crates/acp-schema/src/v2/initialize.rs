//! Initialization in v2: both sides send `info` (required) and `capabilities`,
//! and every support marker is an object (`{}`: supported; absent or `null`:
//! not), so a capability can grow fields without another version.

use super::AuthMethod;
use crate::initialize::marker_capability;
use crate::util::{setters, wire_struct};
use crate::{
    ElicitationCapabilities, Implementation, Meta, ProtocolVersion,
    SessionAdditionalDirectoriesCapabilities, SessionDeleteCapabilities,
};
#[cfg(feature = "v2-unstable")]
use crate::{
    ProvidersCapabilities, SessionForkCapabilities, SessionSystemPromptCapabilities,
    SessionTitleCapabilities,
};

wire_struct! {
    /// The `initialize` request: the newest version the client speaks, who it
    /// is and what it supports.
    pub struct InitializeRequest {
        /// The newest protocol version the client speaks.
        pub protocol_version: ProtocolVersion = "protocolVersion" (Req),
        /// The client's name and version.
        pub info: Implementation = "info" (Req),
        /// What the client supports.
        pub capabilities: ClientCapabilities = "capabilities" (LenientVal),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl InitializeRequest {
    /// Asks for version 2 for the client `info`, with no capabilities.
    pub fn new(info: Implementation) -> Self {
        InitializeRequest {
            protocol_version: ProtocolVersion::V2,
            info,
            capabilities: ClientCapabilities::default(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(InitializeRequest {
    set { protocol_version: ProtocolVersion, capabilities: ClientCapabilities }
    opt { meta: Meta }
});

wire_struct! {
    /// The `initialize` result: the version the connection speaks, the agent's
    /// info, capabilities and authentication methods.
    pub struct InitializeResponse {
        /// The version the agent chose: the client's if it speaks it, else the
        /// newest it speaks below it.
        pub protocol_version: ProtocolVersion = "protocolVersion" (Req),
        /// The agent's name and version.
        pub info: Implementation = "info" (Req),
        /// What the agent supports.
        pub capabilities: AgentCapabilities = "capabilities" (LenientVal),
        /// How a user can log in; non-empty means the agent implements
        /// `auth/login` and `auth/logout` (omitted when empty).
        pub auth_methods: Vec<AuthMethod> = "authMethods" (ItemsNonEmpty),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl InitializeResponse {
    /// Version 2 for the agent `info`, with no capabilities.
    pub fn new(info: Implementation) -> Self {
        InitializeResponse {
            protocol_version: ProtocolVersion::V2,
            info,
            capabilities: AgentCapabilities::default(),
            auth_methods: Vec::new(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(InitializeResponse {
    set {
        protocol_version: ProtocolVersion,
        capabilities: AgentCapabilities,
        auth_methods: Vec<AuthMethod>,
    }
    opt { meta: Meta }
});

wire_struct! {
    /// What a client supports. Stable v2 defines no client capability beyond
    /// authentication and elicitation.
    #[derive(Default)]
    pub struct ClientCapabilities {
        /// Authentication the client can help with.
        pub auth: Option<ClientAuthCapabilities> = "auth" (Lenient),
        /// The elicitation modes the client can show.
        pub elicitation: Option<ElicitationCapabilities> = "elicitation" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ClientCapabilities {
    /// Nothing.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ClientCapabilities {
    opt { auth: ClientAuthCapabilities, elicitation: ElicitationCapabilities, meta: Meta }
});

wire_struct! {
    /// Authentication a client can help with.
    #[derive(Default)]
    pub struct ClientAuthCapabilities {
        /// Present if the client can run `terminal` auth methods.
        pub terminal: Option<TerminalAuthCapabilities> = "terminal" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ClientAuthCapabilities {
    /// Nothing.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ClientAuthCapabilities { opt { terminal: TerminalAuthCapabilities, meta: Meta } });

marker_capability!(
    /// Marks a client that can run an auth method of type `terminal`.
    TerminalAuthCapabilities
);

wire_struct! {
    /// What an agent supports.
    #[derive(Default)]
    pub struct AgentCapabilities {
        /// Present if the agent does session-based prompting; it then implements
        /// `session/new`, `session/list`, `session/resume`, `session/close`,
        /// `session/prompt`, `session/cancel` and sends `session/update`.
        pub session: Option<SessionCapabilities> = "session" (Lenient),
        /// Authentication extensions.
        pub auth: Option<AgentAuthCapabilities> = "auth" (Lenient),
        /// Present if the agent supports `providers/*` (feature `v2-unstable`).
        pub providers: Option<ProvidersCapabilities> = "providers" (Lenient) if "v2-unstable",
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl AgentCapabilities {
    /// Nothing (no session support at all).
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(AgentCapabilities {
    opt { session: SessionCapabilities, auth: AgentAuthCapabilities, meta: Meta }
});

crate::util::feature_setter!(
    "v2-unstable",
    AgentCapabilities {
        providers: ProvidersCapabilities
    }
);

wire_struct! {
    /// The session features of an agent beyond the baseline methods.
    #[derive(Default)]
    pub struct SessionCapabilities {
        /// Content prompts may hold beyond text and resource links.
        pub prompt: Option<PromptCapabilities> = "prompt" (Lenient),
        /// MCP transports the agent can connect to.
        pub mcp: Option<McpCapabilities> = "mcp" (Lenient),
        /// Present if the agent supports `session/delete`.
        pub delete: Option<SessionDeleteCapabilities> = "delete" (Lenient),
        /// Present if session requests may carry `additionalDirectories`.
        pub additional_directories: Option<SessionAdditionalDirectoriesCapabilities> = "additionalDirectories" (Lenient),
        /// System prompt instructions on session requests (feature `v2-unstable`).
        pub system_prompt: Option<SessionSystemPromptCapabilities> = "systemPrompt" (Lenient) if "v2-unstable",
        /// Present if the agent supports `session/fork` (feature `v2-unstable`).
        pub fork: Option<SessionForkCapabilities> = "fork" (Lenient) if "v2-unstable",
        /// Present if the agent supports `session/archive` and `session/unarchive`
        /// (feature `v2-unstable`).
        pub archive: Option<SessionArchiveCapabilities> = "archive" (Lenient) if "v2-unstable",
        /// Present if the agent supports `session/status` (feature `v2-unstable`).
        pub status: Option<SessionStatusCapabilities> = "status" (Lenient) if "v2-unstable",
        /// Present if the agent supports `session/set_title` (feature `v2-unstable`).
        pub title: Option<SessionTitleCapabilities> = "title" (Lenient) if "v2-unstable",
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionCapabilities {
    /// The baseline: text and resource-link prompts, no MCP transport, no
    /// optional method.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(SessionCapabilities {
    opt {
        prompt: PromptCapabilities,
        mcp: McpCapabilities,
        delete: SessionDeleteCapabilities,
        additional_directories: SessionAdditionalDirectoriesCapabilities,
        meta: Meta,
    }
});

crate::util::feature_setter!(
    "v2-unstable",
    SessionCapabilities {
        system_prompt: SessionSystemPromptCapabilities,
        fork: SessionForkCapabilities,
        archive: SessionArchiveCapabilities,
        status: SessionStatusCapabilities,
        title: SessionTitleCapabilities,
    }
);

wire_struct! {
    /// Content a prompt may hold beyond text and resource links.
    #[derive(Default)]
    pub struct PromptCapabilities {
        /// Present if prompts may hold images.
        pub image: Option<PromptImageCapabilities> = "image" (Lenient),
        /// Present if prompts may hold audio.
        pub audio: Option<PromptAudioCapabilities> = "audio" (Lenient),
        /// Present if prompts may hold embedded resources.
        pub embedded_context: Option<PromptEmbeddedContextCapabilities> = "embeddedContext" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl PromptCapabilities {
    /// Text and resource links only.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(PromptCapabilities {
    opt {
        image: PromptImageCapabilities,
        audio: PromptAudioCapabilities,
        embedded_context: PromptEmbeddedContextCapabilities,
        meta: Meta,
    }
});

marker_capability!(
    /// Marks prompts that may hold images.
    PromptImageCapabilities
);
marker_capability!(
    /// Marks prompts that may hold audio.
    PromptAudioCapabilities
);
marker_capability!(
    /// Marks prompts that may hold embedded resources.
    PromptEmbeddedContextCapabilities
);

wire_struct! {
    /// The MCP transports an agent can connect to (v2 has no SSE).
    #[derive(Default)]
    pub struct McpCapabilities {
        /// Present if the agent can start stdio MCP servers.
        pub stdio: Option<McpStdioCapabilities> = "stdio" (Lenient),
        /// Present if the agent can connect to HTTP MCP servers.
        pub http: Option<McpHttpCapabilities> = "http" (Lenient),
        /// Present if the agent can use MCP servers the client provides over
        /// ACP (feature `v2-unstable`).
        pub acp: Option<McpAcpCapabilities> = "acp" (Lenient) if "v2-unstable",
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl McpCapabilities {
    /// No MCP transport.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(McpCapabilities { opt { stdio: McpStdioCapabilities, http: McpHttpCapabilities, meta: Meta } });

crate::util::feature_setter!(
    "v2-unstable",
    McpCapabilities {
        acp: McpAcpCapabilities
    }
);

marker_capability!(
    /// Marks an agent that can start stdio MCP servers.
    McpStdioCapabilities
);
marker_capability!(
    /// Marks an agent that can connect to HTTP MCP servers.
    McpHttpCapabilities
);

wire_struct! {
    /// Authentication extensions of an agent (whether it has `auth/login` is
    /// said by a non-empty `authMethods`, not here).
    #[derive(Default)]
    pub struct AgentAuthCapabilities {
        /// Present if the agent supports `auth/status` (feature `v2-unstable`).
        pub status: Option<AuthStatusCapabilities> = "status" (Lenient) if "v2-unstable",
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl AgentAuthCapabilities {
    /// Nothing.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(AgentAuthCapabilities { opt { meta: Meta } });

crate::util::feature_setter!(
    "v2-unstable",
    AgentAuthCapabilities {
        status: AuthStatusCapabilities
    }
);

#[cfg(feature = "v2-unstable")]
marker_capability!(
    /// Marks an agent that can use MCP servers the client provides over ACP
    /// (feature `v2-unstable`).
    McpAcpCapabilities
);
#[cfg(feature = "v2-unstable")]
marker_capability!(
    /// Marks support for `session/archive` and `session/unarchive` (feature
    /// `v2-unstable`).
    SessionArchiveCapabilities
);
#[cfg(feature = "v2-unstable")]
marker_capability!(
    /// Marks support for `session/status` (feature `v2-unstable`).
    SessionStatusCapabilities
);
#[cfg(feature = "v2-unstable")]
marker_capability!(
    /// Marks support for `auth/status` (feature `v2-unstable`).
    AuthStatusCapabilities
);
