//! Every v2 method, declared once: the tables, the two sides of a v2
//! connection, and the routing enums (see [`crate::method`] for how v1 does
//! the same; the expansion is shared).

use crate::ext::{ExtNotification, ExtRequest, ExtResponse};
use crate::messages::ResultEnum;
use crate::method::{
    ConnectionSide, MethodEnum, MethodInfo, MethodKind, Notification, ParamsError, Request, Side,
    decode_params, decode_result, methods, raw_or_empty,
};
use serde::Serialize;
use serde_json::value::RawValue;

#[allow(clippy::wildcard_imports)]
use super::*;

/// The agent's side of a v2 connection: handles what a v2 client sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AgentSide {}

/// The client's side of a v2 connection: handles what a v2 agent sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientSide {}

impl crate::method::sealed::Sealed for AgentSide {}
impl crate::method::sealed::Sealed for ClientSide {}

impl ConnectionSide for AgentSide {
    const SIDE: Side = Side::Agent;
    type Peer = ClientSide;
}

impl ConnectionSide for ClientSide {
    const SIDE: Side = Side::Client;
    type Peer = AgentSide;
}

/// The methods a v2 agent handles, declared once: invokes the macro named by
/// its argument with the whole table (like [`agent_methods!`](crate::agent_methods)
/// for v1; the runtime expands it into its v2 `Agent` trait). Expand it where
/// `acp_schema::v2`'s types are in scope.
#[doc(hidden)]
#[macro_export]
macro_rules! v2_agent_methods {
    ($($callback:tt)+) => {
        $crate::__v2_agent_methods_unstable! {
            [$($callback)+]
            {
                /// `initialize`: negotiates the protocol version and exchanges
                /// `info` and `capabilities`. The first request of a connection.
                Initialize initialize = "initialize": InitializeRequest => InitializeResponse,
                /// `auth/login`: logs in with one of the advertised auth methods.
                LoginAuth login = "auth/login": LoginAuthRequest => LoginAuthResponse,
                /// `auth/logout`: ends the authenticated state.
                LogoutAuth logout = "auth/logout": LogoutAuthRequest => LogoutAuthResponse,
                /// `session/new`: creates a session in a working directory.
                NewSession new_session = "session/new": NewSessionRequest => NewSessionResponse,
                /// `session/list`: lists the agent's sessions, a page at a time.
                ListSessions list_sessions = "session/list": ListSessionsRequest => ListSessionsResponse,
                /// `session/delete`: deletes a session for good (when the agent
                /// advertises `session.delete`).
                DeleteSession delete_session = "session/delete": DeleteSessionRequest => DeleteSessionResponse,
                /// `session/resume`: reattaches to a session, first replaying its
                /// history when `replayFrom` asks for it (v1's `session/load`).
                ResumeSession resume_session = "session/resume": ResumeSessionRequest => ResumeSessionResponse,
                /// `session/close`: closes a session, cancelling its work.
                CloseSession close_session = "session/close": CloseSessionRequest => CloseSessionResponse,
                /// `tool_call/cancel`: stops one tool call that advertised
                /// `capabilities.cancel`.
                CancelToolCall cancel_tool_call = "tool_call/cancel": CancelToolCallRequest => CancelToolCallResponse,
                /// `terminal/cancel`: stops the command of one display terminal
                /// that advertised `capabilities.cancel`.
                CancelTerminal cancel_terminal = "terminal/cancel": CancelTerminalRequest => CancelTerminalResponse,
                /// `session/set_config_option`: changes one config option; the
                /// answer carries all of them.
                SetSessionConfigOption set_session_config_option = "session/set_config_option": SetSessionConfigOptionRequest => SetSessionConfigOptionResponse,
                /// `session/prompt`: sends a user message. The agent answers as
                /// soon as it accepted it, with the message's id; the work it
                /// starts is reported by `session/update`s and ends with an idle
                /// `state_update`.
                Prompt prompt = "session/prompt": PromptRequest => PromptResponse,
            }
            {
                /// `session/cancel`: cancels the session's foreground work, which
                /// still ends with an idle `state_update` (stop reason
                /// `cancelled`).
                Cancel cancel = "session/cancel": CancelSessionNotification,
            }
        }
    };
}

#[cfg(feature = "v2-unstable")]
#[doc(hidden)]
#[macro_export]
macro_rules! __v2_agent_methods_unstable {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $crate::__v2_agent_methods_done! { [$($cb)+] {
            $($r)*
            /// `providers/list`: the LLM providers the agent can use (feature
            /// `v2-unstable`).
            ListProviders list_providers = "providers/list": ListProvidersRequest => ListProvidersResponse,
            /// `providers/set`: configures one provider (feature `v2-unstable`).
            SetProvider set_provider = "providers/set": SetProviderRequest => SetProviderResponse,
            /// `providers/disable`: stops using one provider (feature `v2-unstable`).
            DisableProvider disable_provider = "providers/disable": DisableProviderRequest => DisableProviderResponse,
            /// `auth/status`: whether the user is logged in (feature `v2-unstable`).
            AuthStatus auth_status = "auth/status": AuthStatusRequest => AuthStatusResponse,
            /// `session/fork`: a new session with the context of an existing one
            /// (feature `v2-unstable`).
            ForkSession fork_session = "session/fork": ForkSessionRequest => ForkSessionResponse,
            /// `session/archive`: hides a session from the default list (feature
            /// `v2-unstable`).
            ArchiveSession archive_session = "session/archive": ArchiveSessionRequest => ArchiveSessionResponse,
            /// `session/unarchive` (feature `v2-unstable`).
            UnarchiveSession unarchive_session = "session/unarchive": UnarchiveSessionRequest => UnarchiveSessionResponse,
            /// `session/status`: a session's state (feature `v2-unstable`).
            SessionStatus session_status = "session/status": SessionStatusRequest => SessionStatusResponse,
            /// `session/set_title`: gives a session a title (feature `v2-unstable`).
            SetSessionTitle set_session_title = "session/set_title": SetSessionTitleRequest => SetSessionTitleResponse,
        } {
            $($n)*
            /// `mcp/message`: an MCP notification from a server the client
            /// provides over ACP (feature `v2-unstable`).
            McpMessage mcp_message = "mcp/message": MessageMcpNotification,
        } }
    };
}
#[cfg(not(feature = "v2-unstable"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __v2_agent_methods_unstable {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $crate::__v2_agent_methods_done! { [$($cb)+] { $($r)* } { $($n)* } }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __v2_agent_methods_done {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $($cb)+ ! {
            /// Methods a v2 agent handles: requests and notifications a v2 client sends.
            table AGENT_METHODS handled_by AgentSide Agent;
            /// Every request a v2 client sends (the agent handles it).
            requests ClientRequest;
            /// Every successful response a v2 agent sends.
            responses AgentResponse { $($r)* }
            /// Every notification a v2 client sends (the agent handles it).
            notifications ClientNotification { $($n)* }
        }
    };
}

/// The methods a v2 client handles, declared once; see
/// [`v2_agent_methods!`](crate::v2_agent_methods).
#[doc(hidden)]
#[macro_export]
macro_rules! v2_client_methods {
    ($($callback:tt)+) => {
        $crate::__v2_client_methods_unstable! {
            [$($callback)+]
            {
                /// `session/request_permission`: asks the user to choose one of
                /// the options. After a `session/cancel`, a client answers the
                /// pending ones with the cancelled outcome.
                RequestPermission request_permission = "session/request_permission": RequestPermissionRequest => RequestPermissionResponse,
                /// `elicitation/create`: asks the user for structured input (a
                /// form) or to visit a URL (when the client advertises
                /// `elicitation`).
                CreateElicitation create_elicitation = "elicitation/create": CreateElicitationRequest => CreateElicitationResponse,
            }
            {
                /// `session/update`: a session's progress: messages, tool calls,
                /// terminals, plans, state.
                SessionUpdate session_update = "session/update": UpdateSessionNotification,
                /// `elicitation/complete`: a URL elicitation has finished.
                CompleteElicitation complete_elicitation = "elicitation/complete": CompleteElicitationNotification,
            }
        }
    };
}

#[cfg(feature = "v2-unstable")]
#[doc(hidden)]
#[macro_export]
macro_rules! __v2_client_methods_unstable {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $crate::__v2_client_methods_done! { [$($cb)+] {
            $($r)*
            /// `mcp/message`: one MCP request for a server the client provides
            /// over ACP (feature `v2-unstable`).
            McpMessage mcp_message = "mcp/message": MessageMcpRequest => MessageMcpResponse,
        } {
            $($n)*
            /// `auth/status_update`: the agent's authentication state changed
            /// (feature `v2-unstable`).
            AuthStatusUpdate auth_status_update = "auth/status_update": AuthStatusUpdateNotification,
        } }
    };
}
#[cfg(not(feature = "v2-unstable"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __v2_client_methods_unstable {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $crate::__v2_client_methods_done! { [$($cb)+] { $($r)* } { $($n)* } }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __v2_client_methods_done {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $($cb)+ ! {
            /// Methods a v2 client handles: requests and notifications a v2 agent sends.
            table CLIENT_METHODS handled_by ClientSide Client;
            /// Every request a v2 agent sends (the client handles it).
            requests AgentRequest;
            /// Every successful response a v2 client sends.
            responses ClientResponse { $($r)* }
            /// Every notification a v2 agent sends (the client handles it).
            notifications AgentNotification { $($n)* }
        }
    };
}

crate::v2_agent_methods!(methods);
crate::v2_client_methods!(methods);

/// Methods either side of a v2 connection may send and handle: the same
/// `$/cancel_request` as v1.
pub const PROTOCOL_METHODS: &[MethodInfo] = crate::method::PROTOCOL_METHODS;

/// Looks a v2 method up in every v2 table.
pub fn method_info(method: &str) -> Option<&'static MethodInfo> {
    AGENT_METHODS
        .iter()
        .chain(CLIENT_METHODS)
        .chain(PROTOCOL_METHODS)
        .find(|m| m.method == method)
}

impl ResultEnum for AgentResponse {
    fn decode_result(method: &str, result: Option<&RawValue>) -> Result<Self, ParamsError> {
        AgentResponse::decode(method, result)
    }
}

impl ResultEnum for ClientResponse {
    fn decode_result(method: &str, result: Option<&RawValue>) -> Result<Self, ParamsError> {
        ClientResponse::decode(method, result)
    }
}
