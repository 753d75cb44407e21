//! Protocol version 2 (a draft), beside version 1: every v2 wire type and
//! method (feature `v2`; the unstable surface with feature `v2-unstable`).
//!
//! The target is the v2 schema the `@agentclientprotocol/sdk` 2.4.0 npm
//! package ships (`schema/v2/schema.json`, `schema.unstable.json`); the tests
//! check every type and method against it as they check v1's. v1 lives at the
//! crate root and is not changed by this module: a connection speaks one
//! version, chosen at `initialize`, and uses one of the two type trees.
//!
//! # What changes from v1 (the types that carry it)
//! - `session/prompt` only acknowledges a prompt ([`PromptResponse`] carries the
//!   user message's [`MessageId`]); the turn's progress and end are
//!   [`StateUpdate`]s (`running`, `requires_action`, `idle` with its
//!   [`StopReason`]).
//! - Messages, tool calls, terminals and plans are upserted by id:
//!   [`UserMessage`]/[`AgentMessage`]/[`AgentThought`] replace a message's
//!   content, chunks append; [`ToolCallUpdate`] creates or patches a tool call
//!   (omitted field: unchanged, `null`: cleared, value: replaced);
//!   [`ToolCallContentChunk`] appends content; [`TerminalUpdate`] and
//!   [`TerminalOutputChunk`] carry an agent-owned display terminal. The patch
//!   fields are `Option<Option<T>>`: `None` omitted, `Some(None)` `null`.
//! - Structured file changes ([`Diff`]: [`DiffChange`]s plus an optional
//!   [`DiffPatch`]) replace v1's `oldText`/`newText`.
//! - Permission requests carry a `title`, a `description` and a
//!   [`RequestPermissionSubject`] (a tool call or a command).
//! - `initialize` uses `info` and `capabilities` on both sides, with object
//!   markers instead of booleans; auth is `auth/login` and `auth/logout`;
//!   `session/load` is `session/resume` with [`ReplayFrom`]; modes are config
//!   options; the client's `fs/*` and `terminal/*` methods are gone; MCP servers
//!   carry a `type`.
//! - Every enum and tagged union is open: an unknown value (a `_`-prefixed
//!   custom one, or a future one) decodes into `Other` and is written back
//!   unchanged, like v1's.
//!
//! # Example
//! ```
//! use acp_schema::v2::{PromptResponse, SessionUpdate, StopReason, UpdateSessionNotification};
//!
//! // `session/prompt` only acknowledges the prompt...
//! let ack = PromptResponse::new("msg_user_1");
//! // ...and an idle state update ends the work.
//! let idle = UpdateSessionNotification::new("sess_1", SessionUpdate::idle(StopReason::EndTurn));
//! assert_eq!(
//!     serde_json::to_string(&idle).unwrap(),
//!     r#"{"sessionId":"sess_1","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}"#
//! );
//! # let _ = ack;
//! ```
//!
//! # Which types are v1's
//! A v2 definition that is the same on the wire as a v1 one is the v1 Rust type,
//! re-exported here, so that `acp_schema::v2::X` names every v2 type. "The same
//! on the wire" is checked by a test (`tests/it/v2_schema.rs`): the two schema
//! definitions are equal, recursively, once what only validates (formats,
//! bounds) is set aside and the open-enum and unknown-variant branches every
//! type of this crate has anyway are implied. Three v1 types stand for v2
//! definitions that are narrower: [`RequestId`] (v2 has no `null` id),
//! [`Error`] and [`ErrorCode`] (v2 names -32022 and types two `data` shapes,
//! [`UnsupportedProtocolVersionErrorData`] and [`SessionNotFoundErrorData`]);
//! the runtime shares them between the versions. The elicitation modes
//! ([`ElicitationMode`] and what it holds) are v1's too: v1 decodes a schema's
//! `type` and `properties` with defaults where v2 requires them, and writes them
//! always. The corpus (`tests/corpus/v2/`) proves each of these on v2 examples.
//!
//! A method's params type names the method, so a v2 method whose params are
//! identical to v1's gets a transparent newtype over the v1 type
//! ([`DeleteSessionRequest`], [`CloseSessionRequest`],
//! [`CompleteElicitationNotification`], and the unstable ones): the same JSON,
//! a different method table.
//!
//! # Method tables
//! [`AGENT_METHODS`], [`CLIENT_METHODS`] and [`PROTOCOL_METHODS`] list the v2
//! methods one line each, checked against the v2 schema's `x-method`/`x-side`.
//! Their params types implement [`crate::Request`]/[`crate::Notification`]
//! with [`AgentSide`]/[`ClientSide`] of this module as the handling side, so a
//! runtime cannot send a v2 method on a v1 connection or the reverse. The
//! routing enums ([`ClientRequest`], …) decode `(method, params)` pairs as v1's
//! do. `$/cancel_request` is the same method in both versions
//! ([`crate::CancelRequestNotification`]).

mod auth;
mod commands;
mod config;
mod content;
mod elicitation;
mod error;
mod initialize;
mod mcp;
mod method;
mod permission;
mod plan;
mod prompt;
#[cfg(feature = "v2-unstable")]
mod providers;
mod session;
mod state;
mod terminal;
mod tool_call;
mod update;

pub use auth::*;
pub use commands::*;
pub use config::*;
pub use content::*;
pub use elicitation::*;
pub use error::*;
pub use initialize::*;
pub use mcp::*;
pub use method::*;
pub use permission::*;
pub use plan::*;
pub use prompt::*;
#[cfg(feature = "v2-unstable")]
pub use providers::*;
pub use session::*;
pub use state::*;
pub use terminal::*;
pub use tool_call::*;
pub use update::*;

/// The v1 types that v2 uses unchanged (see the module docs).
pub use crate::{
    Annotations, AudioContent, AuthMethodId, BlobResourceContents, BooleanPropertySchema,
    CancelRequestNotification, CloseSessionResponse, CompactionId, CompactionStatus, Cost,
    DeleteSessionResponse, ElicitationCapabilities, ElicitationFormCapabilities,
    ElicitationFormMode, ElicitationId, ElicitationMode, ElicitationPropertySchema,
    ElicitationRequestScope, ElicitationSchema, ElicitationSchemaType, ElicitationScope,
    ElicitationSessionScope, ElicitationUrlCapabilities, ElicitationUrlMode, EmbeddedResource,
    EmbeddedResourceResource, EnumOption, EnvVariable, Error, ErrorCode, ExtNotification,
    ExtRequest, ExtResponse, HttpHeader, ImageContent, Implementation, IntegerPropertySchema,
    MessageId, Meta, MultiSelectItems, MultiSelectPropertySchema, Notice, NoticeSeverity,
    NumberPropertySchema, PermissionOption, PermissionOptionId, PermissionOptionKind,
    PlanEntryPriority, ProtocolVersion, RawJson, RawObject, RequestId, Role,
    SelectedPermissionOutcome, SessionAdditionalDirectoriesCapabilities, SessionConfigBoolean,
    SessionConfigGroupId, SessionConfigId, SessionConfigOptionCategory, SessionConfigSelectOption,
    SessionConfigValueId, SessionDeleteCapabilities, SessionId, SessionInfoUpdate, StringFormat,
    StringMultiSelectItems, StringPropertySchema, TagOnly, Terminal, TerminalExitStatus,
    TerminalId, TextContent, TextResourceContents, TitledMultiSelectItems, ToolCallId,
    ToolCallLocation, ToolKind, UsageUpdate,
};

/// The v1 unstable types that v2's unstable surface uses unchanged.
#[cfg(feature = "v2-unstable")]
pub use crate::{
    DisableProviderResponse, ListProvidersResponse, LlmProtocol, McpError, McpRequestId,
    McpServerAcp, McpServerAcpId, MessageMcpResponse, ProviderCurrentConfig, ProviderId,
    ProviderInfo, ProvidersCapabilities, SessionCancelCapabilities, SessionForkCapabilities,
    SessionSystemPromptCapabilities, SessionSystemPromptModeCapabilities,
    SessionSystemPromptOverrideCapabilities, SessionTitleCapabilities, SetProviderResponse,
    SetSessionTitleResponse, SubagentSessionCapabilities, SystemPromptMode, Usage,
};

/// An absolute file system path (v2 requires paths to be absolute; this crate
/// does not check it).
pub type AbsolutePath = String;

/// A MIME type (`text/plain`).
pub type MediaType = String;

/// Declares a v2 params type that is a v1 type on the wire: a transparent
/// newtype that derefs to the v1 type and converts both ways.
macro_rules! same_params {
    // With v1's constructor, taking the same arguments.
    ($(#[$attr:meta])* $name:ident => $v1:path, new($($arg:ident: $ty:ty),*)) => {
        $crate::v2::same_params!($(#[$attr])* $name => $v1);

        impl $name {
            /// The params, as v1's constructor of the same name makes them.
            #[allow(clippy::new_without_default)]
            pub fn new($($arg: impl Into<$ty>),*) -> Self {
                $name(<$v1>::new($($arg),*))
            }
        }
    };
    ($(#[$attr:meta])* $name:ident => $v1:path) => {
        $(#[$attr])*
        #[derive(Debug, Clone, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub $v1);

        impl ::std::ops::Deref for $name {
            type Target = $v1;
            fn deref(&self) -> &$v1 {
                &self.0
            }
        }

        impl ::std::ops::DerefMut for $name {
            fn deref_mut(&mut self) -> &mut $v1 {
                &mut self.0
            }
        }

        impl From<$v1> for $name {
            fn from(inner: $v1) -> Self {
                $name(inner)
            }
        }

        impl From<$name> for $v1 {
            fn from(outer: $name) -> Self {
                outer.0
            }
        }

        impl $crate::util::wire::Tolerant for $name {
            fn tolerant<'de, D: ::serde::Deserializer<'de>>(
                d: D,
            ) -> Result<Option<Self>, D::Error> {
                $crate::util::wire::tolerant_via_raw(d)
            }
        }
    };
}
pub(crate) use same_params;
