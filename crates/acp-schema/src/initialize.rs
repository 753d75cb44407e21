//! Initialization: the first exchange of a connection, where both sides agree on
//! a protocol version and tell each other which optional features they support.
//!
//! Every capability has a documented default, so a peer that sends nothing still
//! decodes into a complete capability set, and this crate always writes the
//! defaulted fields out in full.

#[cfg(feature = "unstable-providers")]
use crate::ProvidersCapabilities;
#[cfg(feature = "unstable-session-fork")]
use crate::SessionForkCapabilities;
#[cfg(feature = "unstable-system-prompt")]
use crate::SessionSystemPromptCapabilities;
#[cfg(feature = "unstable-session-title")]
use crate::SessionTitleCapabilities;
#[cfg(feature = "unstable-subagents")]
use crate::SubagentCapabilities;
use crate::util::{feature_setter, setters, wire_struct};
use crate::{AuthMethod, Meta};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

/// The protocol version, a plain integer on the wire.
///
/// Only breaking changes bump it; additions are negotiated through capabilities.
/// Very old peers sent a version *string* (such as `"0.1.0"`); those decode as
/// version 0 so that the agent can answer with the version it supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct ProtocolVersion(pub u16);

impl ProtocolVersion {
    /// Version 0: the pre-release protocol (also what a string version decodes to).
    pub const V0: ProtocolVersion = ProtocolVersion(0);
    /// Version 1, the current stable protocol.
    pub const V1: ProtocolVersion = ProtocolVersion(1);
    /// Version 2, the draft that [`crate::v2`] types (feature `v2`).
    #[cfg(feature = "v2")]
    pub const V2: ProtocolVersion = ProtocolVersion(2);
    /// The newest version this crate speaks.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V1;

    /// The version number.
    pub fn get(self) -> u16 {
        self.0
    }
}

impl Default for ProtocolVersion {
    /// The newest version this crate speaks.
    fn default() -> Self {
        ProtocolVersion::LATEST
    }
}

impl From<u16> for ProtocolVersion {
    fn from(v: u16) -> Self {
        ProtocolVersion(v)
    }
}

impl From<ProtocolVersion> for u16 {
    fn from(v: ProtocolVersion) -> Self {
        v.0
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = ProtocolVersion;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a protocol version number from 0 to 65535")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ProtocolVersion, E> {
                u16::try_from(v)
                    .map(ProtocolVersion)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ProtocolVersion, E> {
                u16::try_from(v)
                    .map(ProtocolVersion)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<ProtocolVersion, E> {
                // Pre-1.0 peers sent a semver string: treat it as the pre-release protocol.
                Ok(ProtocolVersion::V0)
            }
        }
        d.deserialize_any(V)
    }
}

wire_struct! {
    /// The `initialize` request: the client's protocol version and capabilities.
    pub struct InitializeRequest {
        /// The newest protocol version the client supports.
        pub protocol_version: ProtocolVersion = "protocolVersion" (Req),
        /// What the client supports; always written, defaulted when missing or malformed.
        pub client_capabilities: ClientCapabilities = "clientCapabilities" (LenientVal),
        /// The client's name and version.
        pub client_info: Option<Implementation> = "clientInfo" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl InitializeRequest {
    /// An initialize request for `protocol_version` with default capabilities.
    pub fn new(protocol_version: impl Into<ProtocolVersion>) -> Self {
        InitializeRequest {
            protocol_version: protocol_version.into(),
            client_capabilities: ClientCapabilities::default(),
            client_info: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(InitializeRequest {
    set { client_capabilities: ClientCapabilities }
    opt { client_info: Implementation, meta: Meta }
});

wire_struct! {
    /// The response to `initialize`: the agreed version, the agent's capabilities and
    /// how a user can authenticate.
    pub struct InitializeResponse {
        /// The client's version if the agent supports it, otherwise the agent's newest one.
        pub protocol_version: ProtocolVersion = "protocolVersion" (Req),
        /// What the agent supports; always written, defaulted when missing or malformed.
        pub agent_capabilities: AgentCapabilities = "agentCapabilities" (LenientVal),
        /// The ways a user can authenticate; always written (possibly empty).
        pub auth_methods: Vec<AuthMethod> = "authMethods" (Items),
        /// The agent's name and version.
        pub agent_info: Option<Implementation> = "agentInfo" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl InitializeResponse {
    /// A response agreeing on `protocol_version`, with default capabilities and no auth methods.
    pub fn new(protocol_version: impl Into<ProtocolVersion>) -> Self {
        InitializeResponse {
            protocol_version: protocol_version.into(),
            agent_capabilities: AgentCapabilities::default(),
            auth_methods: Vec::new(),
            agent_info: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(InitializeResponse {
    set { agent_capabilities: AgentCapabilities, auth_methods: Vec<AuthMethod> }
    opt { agent_info: Implementation, meta: Meta }
});

wire_struct! {
    /// The name and version of a client or agent program.
    pub struct Implementation {
        /// A stable, machine-friendly name; shown when there is no `title`.
        pub name: String = "name" (Req),
        /// A name for display to people.
        pub title: Option<String> = "title" (Lenient),
        /// The program's version (`"1.0.0"`).
        pub version: String = "version" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl Implementation {
    /// The program `name` at `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            title: None,
            version: version.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(Implementation { opt { title: String, meta: Meta } });

wire_struct! {
    /// What the client supports, sent in `initialize`.
    ///
    /// The default is exactly the schema's: no file system access, no terminals, no
    /// terminal authentication, nothing else advertised.
    #[derive(Default)]
    pub struct ClientCapabilities {
        /// Which `fs/*` methods the agent may call.
        pub fs: FileSystemCapabilities = "fs" (LenientVal),
        /// Whether the agent may call every `terminal/*` method.
        pub terminal: bool = "terminal" (LenientVal),
        /// Session-related extensions the client understands.
        pub session: Option<ClientSessionCapabilities> = "session" (Lenient),
        /// Which kinds of authentication method the agent may offer.
        pub auth: AuthCapabilities = "auth" (LenientVal),
        /// Which elicitation modes the agent may use; absent means none.
        pub elicitation: Option<ElicitationCapabilities> = "elicitation" (Lenient),
        /// Present if the client can show child sessions.
        pub subagents: Option<SubagentCapabilities> = "subagents" (Lenient) if "unstable-subagents",
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ClientCapabilities {
    /// The default (minimal) client capabilities.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ClientCapabilities {
    set { fs: FileSystemCapabilities, terminal: bool, auth: AuthCapabilities }
    opt { session: ClientSessionCapabilities, elicitation: ElicitationCapabilities, meta: Meta }
});

wire_struct! {
    /// Which file system methods the client offers to the agent.
    #[derive(Default)]
    pub struct FileSystemCapabilities {
        /// Whether the agent may call `fs/read_text_file`.
        pub read_text_file: bool = "readTextFile" (LenientVal),
        /// Whether the agent may call `fs/write_text_file`.
        pub write_text_file: bool = "writeTextFile" (LenientVal),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl FileSystemCapabilities {
    /// Neither reading nor writing.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(FileSystemCapabilities {
    set { read_text_file: bool, write_text_file: bool }
    opt { meta: Meta }
});

/// The name of [`FileSystemCapabilities`] in schema v0.10 and earlier.
pub type FileSystemCapability = FileSystemCapabilities;

wire_struct! {
    /// Which authentication method kinds the client can carry out.
    #[derive(Default)]
    pub struct AuthCapabilities {
        /// Whether the client can run the agent in an interactive terminal for
        /// `terminal` auth methods.
        pub terminal: bool = "terminal" (LenientVal),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl AuthCapabilities {
    /// No optional authentication kinds.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(AuthCapabilities {
    set { terminal: bool }
    opt { meta: Meta }
});

wire_struct! {
    /// Session-related extensions the client understands.
    #[derive(Default)]
    pub struct ClientSessionCapabilities {
        /// Present (`{}`) if the client handles ID-addressed compaction updates.
        pub compaction: Option<CompactionCapabilities> = "compaction" (Lenient),
        /// Config option extensions the client understands.
        pub config_options: Option<SessionConfigOptionsCapabilities> = "configOptions" (Lenient),
        /// Present (`{}`) if the client can show `notice` updates to the user.
        pub notices: Option<NoticeCapabilities> = "notices" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ClientSessionCapabilities {
    /// Nothing advertised.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ClientSessionCapabilities {
    opt {
        compaction: CompactionCapabilities,
        config_options: SessionConfigOptionsCapabilities,
        notices: NoticeCapabilities,
        meta: Meta,
    }
});

wire_struct! {
    /// Which kinds of session config option the client can display.
    #[derive(Default)]
    pub struct SessionConfigOptionsCapabilities {
        /// Present (`{}`) if the client can display boolean options.
        pub boolean: Option<BooleanConfigOptionCapabilities> = "boolean" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionConfigOptionsCapabilities {
    /// Only the baseline (select) options.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(SessionConfigOptionsCapabilities { opt { boolean: BooleanConfigOptionCapabilities, meta: Meta } });

wire_struct! {
    /// Which elicitation modes the client supports.
    #[derive(Default)]
    pub struct ElicitationCapabilities {
        /// Present (`{}`) if the client can render form elicitations.
        pub form: Option<ElicitationFormCapabilities> = "form" (Lenient),
        /// Present (`{}`) if the client can send the user to a URL.
        pub url: Option<ElicitationUrlCapabilities> = "url" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ElicitationCapabilities {
    /// No mode advertised.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ElicitationCapabilities {
    opt {
        form: ElicitationFormCapabilities,
        url: ElicitationUrlCapabilities,
        meta: Meta,
    }
});

wire_struct! {
    /// What the agent supports, sent in the `initialize` response.
    ///
    /// The default is exactly the schema's: no `session/load`, text-only prompts,
    /// stdio MCP servers only, no optional session methods, no logout.
    #[derive(Default)]
    pub struct AgentCapabilities {
        /// Whether the agent supports `session/load`.
        pub load_session: bool = "loadSession" (LenientVal),
        /// Which content the agent accepts in prompts beyond text and resource links.
        pub prompt_capabilities: PromptCapabilities = "promptCapabilities" (LenientVal),
        /// Which MCP transports the agent can connect to besides stdio.
        pub mcp_capabilities: McpCapabilities = "mcpCapabilities" (LenientVal),
        /// Which optional session methods the agent supports.
        pub session_capabilities: SessionCapabilities = "sessionCapabilities" (LenientVal),
        /// Authentication-related features of the agent.
        pub auth: AgentAuthCapabilities = "auth" (LenientVal),
        /// Present if the agent supports the `providers/*` methods.
        pub providers: Option<ProvidersCapabilities> = "providers" (Lenient) if "unstable-providers",
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl AgentCapabilities {
    /// The default (minimal) agent capabilities.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(AgentCapabilities {
    set {
        load_session: bool,
        prompt_capabilities: PromptCapabilities,
        mcp_capabilities: McpCapabilities,
        session_capabilities: SessionCapabilities,
        auth: AgentAuthCapabilities,
    }
    opt { meta: Meta }
});

wire_struct! {
    /// Which content block types an agent accepts in prompts, beyond the mandatory
    /// text and resource links.
    #[derive(Default)]
    pub struct PromptCapabilities {
        /// Whether prompts may contain images.
        pub image: bool = "image" (LenientVal),
        /// Whether prompts may contain audio.
        pub audio: bool = "audio" (LenientVal),
        /// Whether prompts may contain embedded resources.
        pub embedded_context: bool = "embeddedContext" (LenientVal),
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
    set { image: bool, audio: bool, embedded_context: bool }
    opt { meta: Meta }
});

wire_struct! {
    /// Which MCP transports an agent supports besides stdio (which all must support).
    #[derive(Default)]
    pub struct McpCapabilities {
        /// Whether the agent can connect to MCP servers over HTTP.
        pub http: bool = "http" (LenientVal),
        /// Whether the agent can connect to MCP servers over SSE.
        pub sse: bool = "sse" (LenientVal),
        /// Whether the agent can use MCP servers the client provides over ACP
        /// (`None`: not said, which means no).
        pub acp: Option<bool> = "acp" (Lenient) if "unstable-mcp-over-acp",
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl McpCapabilities {
    /// Stdio only.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(McpCapabilities {
    set { http: bool, sse: bool }
    opt { meta: Meta }
});

wire_struct! {
    /// Optional session methods an agent supports. Each is `{}` when supported and
    /// absent (or `null`) when not.
    ///
    /// Every agent supports `session/new`, `session/prompt`, `session/cancel` and
    /// `session/update`; `session/load` is announced by
    /// [`AgentCapabilities::load_session`] instead.
    #[derive(Default)]
    pub struct SessionCapabilities {
        /// Present if the agent supports `session/list`.
        pub list: Option<SessionListCapabilities> = "list" (Lenient),
        /// Present if the agent supports `session/delete`.
        pub delete: Option<SessionDeleteCapabilities> = "delete" (Lenient),
        /// Present if the agent accepts `additionalDirectories` on session requests.
        pub additional_directories: Option<SessionAdditionalDirectoriesCapabilities> = "additionalDirectories" (Lenient),
        /// Present if the agent accepts `systemPrompt` on session requests.
        pub system_prompt: Option<SessionSystemPromptCapabilities> = "systemPrompt" (Lenient) if "unstable-system-prompt",
        /// Present if the agent supports `session/fork`.
        pub fork: Option<SessionForkCapabilities> = "fork" (Lenient) if "unstable-session-fork",
        /// Present if the agent supports `session/set_title`.
        pub title: Option<SessionTitleCapabilities> = "title" (Lenient) if "unstable-session-title",
        /// Present if the agent supports `session/resume`.
        pub resume: Option<SessionResumeCapabilities> = "resume" (Lenient),
        /// Present if the agent supports `session/close`.
        pub close: Option<SessionCloseCapabilities> = "close" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionCapabilities {
    /// No optional session methods.
    pub fn new() -> Self {
        Self::default()
    }
}

feature_setter!(
    "unstable-system-prompt",
    SessionCapabilities {
        system_prompt: SessionSystemPromptCapabilities
    }
);
feature_setter!(
    "unstable-session-fork",
    SessionCapabilities {
        fork: SessionForkCapabilities
    }
);
feature_setter!(
    "unstable-session-title",
    SessionCapabilities {
        title: SessionTitleCapabilities
    }
);
feature_setter!(
    "unstable-providers",
    AgentCapabilities {
        providers: ProvidersCapabilities
    }
);
feature_setter!("unstable-mcp-over-acp", McpCapabilities { acp: bool });
feature_setter!(
    "unstable-subagents",
    ClientCapabilities {
        subagents: SubagentCapabilities
    }
);

setters!(SessionCapabilities {
    opt {
        list: SessionListCapabilities,
        delete: SessionDeleteCapabilities,
        additional_directories: SessionAdditionalDirectoriesCapabilities,
        resume: SessionResumeCapabilities,
        close: SessionCloseCapabilities,
        meta: Meta,
    }
});

wire_struct! {
    /// Authentication-related features of an agent.
    #[derive(Default)]
    pub struct AgentAuthCapabilities {
        /// Present (`{}`) if the agent supports `logout`.
        pub logout: Option<LogoutCapabilities> = "logout" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl AgentAuthCapabilities {
    /// No optional authentication features.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(AgentAuthCapabilities { opt { logout: LogoutCapabilities, meta: Meta } });

/// Declares a capability marker: an object whose presence means "supported" and
/// whose only field is `_meta`.
macro_rules! marker_capability {
    ($(#[$attr:meta])* $name:ident) => {
        wire_struct! {
            $(#[$attr])*
            #[derive(Default)]
            pub struct $name {
                /// Extension metadata.
                pub meta: Option<Meta> = "_meta" (MetaField),
            }
        }

        impl $name {
            /// The marker, written as `{}`.
            pub fn new() -> Self {
                Self::default()
            }
        }

        setters!($name { opt { meta: Meta } });
    };
}

#[cfg(feature = "v2")]
pub(crate) use marker_capability;

marker_capability!(
    /// Marks support for `session/list`.
    SessionListCapabilities
);
marker_capability!(
    /// Marks support for `session/delete`.
    SessionDeleteCapabilities
);
marker_capability!(
    /// Marks support for `additionalDirectories` on session requests.
    SessionAdditionalDirectoriesCapabilities
);
marker_capability!(
    /// Marks support for `session/resume`.
    SessionResumeCapabilities
);
marker_capability!(
    /// Marks support for `session/close`.
    SessionCloseCapabilities
);
marker_capability!(
    /// Marks support for `logout`.
    LogoutCapabilities
);
marker_capability!(
    /// Marks that the client can display boolean config options.
    BooleanConfigOptionCapabilities
);
marker_capability!(
    /// Marks that the client can render form elicitations.
    ElicitationFormCapabilities
);
marker_capability!(
    /// Marks that the client can send the user to a URL for an elicitation.
    ElicitationUrlCapabilities
);

marker_capability!(
    /// Marks that the client can show live `notice` updates to the user. (The
    /// schema lists no fields here; `_meta` is kept like everywhere else.)
    NoticeCapabilities
);
marker_capability!(
    /// Marks that the client handles ID-addressed context compaction updates.
    /// (The schema lists no fields here; `_meta` is kept like everywhere else.)
    CompactionCapabilities
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn protocol_version_numbers_and_strings() {
        let v: ProtocolVersion = crate::decode("1").unwrap();
        assert_eq!(v, ProtocolVersion::V1);
        let v: ProtocolVersion = crate::decode("65535").unwrap();
        assert_eq!(v.get(), 65535);
        let v: ProtocolVersion = crate::decode(r#""0.1.0""#).unwrap();
        assert_eq!(v, ProtocolVersion::V0);
        assert!(crate::decode::<ProtocolVersion>("65536").is_err());
        assert!(crate::decode::<ProtocolVersion>("-1").is_err());
        assert!(crate::decode::<ProtocolVersion>("1.5").is_err());
        assert!(crate::decode::<ProtocolVersion>("null").is_err());
        assert_eq!(
            serde_json::to_string(&ProtocolVersion::LATEST).unwrap(),
            "1"
        );
        let req: InitializeRequest = crate::decode(r#"{"protocolVersion":"0.2.0"}"#).unwrap();
        assert_eq!(req.protocol_version, ProtocolVersion::V0);
    }

    #[test]
    fn initialize_request_defaults_are_written() {
        let req: InitializeRequest = crate::decode(r#"{"protocolVersion":1}"#).unwrap();
        assert_eq!(
            serde_json::to_value(&req).unwrap(),
            json!({
                "protocolVersion": 1,
                "clientCapabilities": {
                    "fs": {"readTextFile": false, "writeTextFile": false},
                    "terminal": false,
                    "auth": {"terminal": false}
                }
            })
        );
        // A malformed capability object falls back to the default.
        let bad: InitializeRequest =
            crate::decode(r#"{"protocolVersion":1,"clientCapabilities":7}"#).unwrap();
        assert_eq!(bad, req);
    }

    #[test]
    fn malformed_capabilities_fall_back() {
        let caps: ClientCapabilities = crate::decode(
            r#"{"fs":3,"terminal":"sometimes","session":[],"elicitation":[{}],"auth":[true]}"#,
        )
        .unwrap();
        assert_eq!(caps, ClientCapabilities::default());
        assert_eq!(
            serde_json::to_string(&caps).unwrap(),
            r#"{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"auth":{"terminal":false}}"#
        );
        let notices: NoticeCapabilities = crate::decode(r#"{"_meta":{"a":1}}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&notices).unwrap(),
            r#"{"_meta":{"a":1}}"#
        );
    }

    #[test]
    fn initialize_response_defaults_are_written() {
        let resp: InitializeResponse = crate::decode(r#"{"protocolVersion":1}"#).unwrap();
        assert_eq!(
            serde_json::to_value(&resp).unwrap(),
            json!({
                "protocolVersion": 1,
                "agentCapabilities": {
                    "loadSession": false,
                    "promptCapabilities": {"image": false, "audio": false, "embeddedContext": false},
                    "mcpCapabilities": {"http": false, "sse": false},
                    "sessionCapabilities": {},
                    "auth": {}
                },
                "authMethods": []
            })
        );
    }

    #[test]
    fn session_capability_markers() {
        let text = r#"{"list":{},"resume":null,"close":{"_meta":{"x":1}},"delete":5}"#;
        let caps: SessionCapabilities = crate::decode(text).unwrap();
        assert!(caps.list.is_some());
        assert!(caps.resume.is_none());
        assert!(caps.delete.is_none());
        assert_eq!(
            serde_json::to_string(&caps).unwrap(),
            r#"{"list":{},"close":{"_meta":{"x":1}}}"#
        );
        let client = ClientCapabilities::new().session(
            ClientSessionCapabilities::new()
                .notices(NoticeCapabilities::new())
                .compaction(CompactionCapabilities::new()),
        );
        let v = serde_json::to_value(&client).unwrap();
        assert_eq!(v["session"], json!({"compaction": {}, "notices": {}}));
    }
}
