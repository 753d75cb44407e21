//! Every ACP method, declared once.
//!
//! Each method is a params type implementing [`Request`] (with its response type)
//! or [`Notification`], carrying the wire name and the side that handles it. The
//! tables [`AGENT_METHODS`], [`CLIENT_METHODS`] and [`PROTOCOL_METHODS`] list them,
//! one line each, and a test checks them against the official schema's `x-method`
//! and `x-side`. The same declaration generates the routing enums
//! ([`ClientRequest`], [`AgentResponse`], [`ClientNotification`] for the agent side;
//! [`AgentRequest`], [`ClientResponse`], [`AgentNotification`] for the client side),
//! which decode `(method, params)` pairs with the right type.
//!
//! The unstable methods of each enabled cargo feature (`unstable-session-fork`,
//! `unstable-providers`, …; see [`crate::unstable`]) are appended to the same
//! tables and enums, so a runtime that expands the tables gets them too.

use crate::ext::{ExtNotification, ExtRequest, ExtResponse};
use crate::{DecodeError, Error};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use std::fmt;

#[allow(clippy::wildcard_imports)]
use crate::*;

/// Which side of a connection handles a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// Handled by the agent (sent by the client).
    Agent,
    /// Handled by the client (sent by the agent).
    Client,
    /// Either side may send and handle it (`$/cancel_request`).
    Protocol,
}

impl Side {
    /// The schema's `x-side` spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Agent => "agent",
            Side::Client => "client",
            Side::Protocol => "protocol",
        }
    }
}

/// Whether a method expects a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MethodKind {
    /// A request, answered by a response.
    Request,
    /// A notification, never answered.
    Notification,
}

/// A side of a connection, as a type: who handles a method ([`Request::HandledBy`],
/// [`Notification::HandledBy`]), so that a runtime can accept a request only on
/// the connection that sends it toward that side.
///
/// Implemented by [`AgentSide`], [`ClientSide`] and [`EitherSide`]; sealed.
pub trait ConnectionSide: sealed::Sealed + Send + Sync + 'static {
    /// The side, as a value.
    const SIDE: Side;
    /// The side at the other end of the connection.
    type Peer: ConnectionSide;
}

/// The agent's side: handles what the client sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AgentSide {}

/// The client's side: handles what the agent sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientSide {}

/// Either side: a protocol-level method both may send and handle
/// (`$/cancel_request`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EitherSide {}

impl ConnectionSide for AgentSide {
    const SIDE: Side = Side::Agent;
    type Peer = ClientSide;
}

impl ConnectionSide for ClientSide {
    const SIDE: Side = Side::Client;
    type Peer = AgentSide;
}

impl ConnectionSide for EitherSide {
    const SIDE: Side = Side::Protocol;
    type Peer = EitherSide;
}

/// Keeps [`ConnectionSide`] to this crate's sides (the v2 module's
/// implement it too).
pub(crate) mod sealed {
    pub trait Sealed {}
    impl Sealed for super::AgentSide {}
    impl Sealed for super::ClientSide {}
    impl Sealed for super::EitherSide {}
}

/// One line of a method table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodInfo {
    /// The wire name (`"session/prompt"`).
    pub method: &'static str,
    /// Request or notification.
    pub kind: MethodKind,
    /// The side that handles it.
    pub handled_by: Side,
    /// The schema `$defs` name of the params type.
    pub params: &'static str,
    /// The schema `$defs` name of the response type (requests only).
    pub response: Option<&'static str>,
}

/// A request: its params type implements this, naming the response type.
pub trait Request: Serialize + DeserializeOwned + fmt::Debug + Send + Sync + 'static {
    /// What a successful response carries.
    type Response: Serialize + DeserializeOwned + fmt::Debug + Send + Sync + 'static;
    /// The wire name of the method.
    const METHOD: &'static str;
    /// The side that handles it, as a type.
    type HandledBy: ConnectionSide;
    /// The side that handles it.
    const HANDLED_BY: Side = <Self::HandledBy as ConnectionSide>::SIDE;
}

/// A notification: its params type implements this.
pub trait Notification: Serialize + DeserializeOwned + fmt::Debug + Send + Sync + 'static {
    /// The wire name of the method.
    const METHOD: &'static str;
    /// The side that handles it, as a type.
    type HandledBy: ConnectionSide;
    /// The side that handles it.
    const HANDLED_BY: Side = <Self::HandledBy as ConnectionSide>::SIDE;
}

/// Why `(method, params)` could not be decoded into a routing enum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamsError {
    /// No method of this name is handled here (and it is not an `_` extension).
    UnknownMethod(String),
    /// The params do not fit the method's type.
    Invalid(DecodeError),
}

impl fmt::Display for ParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamsError::UnknownMethod(m) => write!(f, "unknown method `{m}`"),
            ParamsError::Invalid(e) => write!(f, "invalid params: {e}"),
        }
    }
}

impl std::error::Error for ParamsError {}

impl From<ParamsError> for Error {
    /// -32601 for an unknown method, -32602 (with the field path) for bad params.
    fn from(err: ParamsError) -> Self {
        match err {
            ParamsError::UnknownMethod(method) => {
                Error::method_not_found().data(serde_json::json!({ "method": method }))
            }
            ParamsError::Invalid(e) => e.into(),
        }
    }
}

/// A routing enum: a value of one of several methods, decoded by method name.
pub trait MethodEnum: Sized + Serialize {
    /// The wire method name of this value.
    fn method(&self) -> &str;
    /// Decodes `params` as the type of `method`. Absent or `null` params read as `{}`.
    fn decode(method: &str, params: Option<&RawValue>) -> Result<Self, ParamsError>;
}

/// Params text to decode: absent or `null` means `{}` (so a type whose fields are
/// all optional accepts a missing `params`).
pub fn params_text(params: Option<&RawValue>) -> &str {
    match params {
        Some(raw) if raw.get().trim() != "null" => raw.get(),
        _ => "{}",
    }
}

/// Decodes a method's `params`: absent or `null` read as `{}`, and anything
/// but an object is refused (ACP's params are always objects; serde would
/// otherwise read an array into a struct by position).
pub fn decode_params<T: DeserializeOwned>(params: Option<&RawValue>) -> Result<T, ParamsError> {
    let text = params_text(params);
    let found = match text.trim_start().as_bytes().first() {
        Some(b'{') => None,
        Some(b'[') => Some("an array"),
        Some(b'"') => Some("a string"),
        Some(b't' | b'f') => Some("a boolean"),
        _ => Some("a number"),
    };
    if let Some(found) = found {
        return Err(ParamsError::Invalid(DecodeError {
            path: String::new(),
            message: format!("params must be a JSON object, not {found}"),
        }));
    }
    crate::decode(text).map_err(ParamsError::Invalid)
}

/// Decodes a successful `result`: absent or `null` read as `{}`.
pub(crate) fn decode_result<T: DeserializeOwned>(
    result: Option<&RawValue>,
) -> Result<T, ParamsError> {
    crate::decode(params_text(result)).map_err(ParamsError::Invalid)
}

pub(crate) fn raw_or_empty(params: Option<&RawValue>) -> Box<RawValue> {
    match params {
        Some(raw) => raw.to_owned(),
        None => RawValue::from_string("{}".to_string()).expect("`{}` is valid JSON"),
    }
}

/// Expands one side's method table (see [`agent_methods!`](crate::agent_methods)):
/// the `Request`/`Notification` impls, the `MethodInfo` table and the routing enums.
macro_rules! methods {
    (
        $(#[$tdoc:meta])*
        table $table:ident handled_by $role:ident $side:ident;
        $(#[$rdoc:meta])*
        requests $req:ident;
        $(#[$sdoc:meta])*
        responses $resp:ident {
            $( $(#[$vdoc:meta])* $variant:ident $fname:ident = $method:literal : $params:ident => $response:ident, )*
        }
        $(#[$ndoc:meta])*
        notifications $notif:ident {
            $( $(#[$nvdoc:meta])* $nvariant:ident $nfname:ident = $nmethod:literal : $nparams:ident, )*
        }
    ) => {
        $(
            impl Request for $params {
                type Response = $response;
                const METHOD: &'static str = $method;
                type HandledBy = $role;
            }
        )*
        $(
            impl Notification for $nparams {
                const METHOD: &'static str = $nmethod;
                type HandledBy = $role;
            }
        )*

        $(#[$tdoc])*
        pub const $table: &[MethodInfo] = &[
            $( MethodInfo {
                method: $method,
                kind: MethodKind::Request,
                handled_by: Side::$side,
                params: stringify!($params),
                response: Some(stringify!($response)),
            }, )*
            $( MethodInfo {
                method: $nmethod,
                kind: MethodKind::Notification,
                handled_by: Side::$side,
                params: stringify!($nparams),
                response: None,
            }, )*
        ];

        $(#[$rdoc])*
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[serde(untagged)]
        #[non_exhaustive]
        #[allow(clippy::large_enum_variant)] // built once per message and moved, never stored in bulk
        pub enum $req {
            $( $(#[$vdoc])* $variant($params), )*
            /// An `_`-prefixed extension request.
            Ext(ExtRequest),
        }

        impl MethodEnum for $req {
            fn method(&self) -> &str {
                match self {
                    $( $req::$variant(_) => $method, )*
                    $req::Ext(ext) => &ext.method,
                }
            }

            fn decode(method: &str, params: Option<&RawValue>) -> Result<Self, ParamsError> {
                match method {
                    $( $method => decode_params(params).map($req::$variant), )*
                    m if m.starts_with('_') => Ok($req::Ext(ExtRequest {
                        method: m.into(),
                        params: raw_or_empty(params),
                    })),
                    m => Err(ParamsError::UnknownMethod(m.to_string())),
                }
            }
        }

        $(#[$sdoc])*
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[serde(untagged)]
        #[non_exhaustive]
        #[allow(clippy::large_enum_variant)] // built once per message and moved, never stored in bulk
        pub enum $resp {
            $( #[doc = concat!("The result of `", $method, "`.")] $variant($response), )*
            /// The result of an `_`-prefixed extension request.
            Ext(ExtResponse),
        }

        impl $resp {
            /// Decodes a successful `result` of the request `method`.
            pub fn decode(method: &str, result: Option<&RawValue>) -> Result<Self, ParamsError> {
                match method {
                    $( $method => decode_result(result).map($resp::$variant), )*
                    m if m.starts_with('_') => Ok($resp::Ext(ExtResponse(
                        result.map(|r| r.to_owned()).unwrap_or_else(|| {
                            RawValue::from_string("null".to_string()).expect("`null` is valid JSON")
                        }),
                    ))),
                    m => Err(ParamsError::UnknownMethod(m.to_string())),
                }
            }
        }

        $(#[$ndoc])*
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[serde(untagged)]
        #[non_exhaustive]
        #[allow(clippy::large_enum_variant)] // built once per message and moved, never stored in bulk
        pub enum $notif {
            $( $(#[$nvdoc])* $nvariant($nparams), )*
            /// An `_`-prefixed extension notification.
            Ext(ExtNotification),
        }

        impl MethodEnum for $notif {
            fn method(&self) -> &str {
                match self {
                    $( $notif::$nvariant(_) => $nmethod, )*
                    $notif::Ext(ext) => &ext.method,
                }
            }

            fn decode(method: &str, params: Option<&RawValue>) -> Result<Self, ParamsError> {
                match method {
                    $( $nmethod => decode_params(params).map($notif::$nvariant), )*
                    m if m.starts_with('_') => Ok($notif::Ext(ExtNotification {
                        method: m.into(),
                        params: raw_or_empty(params),
                    })),
                    m => Err(ParamsError::UnknownMethod(m.to_string())),
                }
            }
        }
    };
}

/// The methods the agent handles, declared once: invokes the macro named by
/// its argument with the whole table.
///
/// Each line is `Variant handler_name = "wire/method": Params => Response`
/// (requests) or `Variant handler_name = "wire/method": Params`
/// (notifications), with its documentation. This crate expands it into the
/// [`Request`]/[`Notification`] impls, [`AGENT_METHODS`] and the routing
/// enums; the `acp` runtime expands the same table into its `Agent` trait, its
/// dispatch and the client's typed calls, so that a method is written here
/// and nowhere else. The types are named without a path: expand it where
/// `acp_schema`'s types are in scope.
#[doc(hidden)]
#[macro_export]
macro_rules! agent_methods {
    ($($callback:tt)+) => {
        $crate::__agent_methods_session_model! {
            [$($callback)+]
            {
                /// `initialize`: negotiates the protocol version and exchanges
                /// capabilities and implementation info. The first request of a
                /// connection.
                Initialize initialize = "initialize": InitializeRequest => InitializeResponse,
                /// `authenticate`: authenticates with one of the methods the agent
                /// listed in its `initialize` response.
                Authenticate authenticate = "authenticate": AuthenticateRequest => AuthenticateResponse,
                /// `logout`: ends the authenticated state (when the agent
                /// advertises `auth.logout`).
                Logout logout = "logout": LogoutRequest => LogoutResponse,
                /// `session/new`: creates a session in a working directory, with
                /// the MCP servers the agent should connect to.
                NewSession new_session = "session/new": NewSessionRequest => NewSessionResponse,
                /// `session/load`: loads a saved session (when the agent advertises
                /// `loadSession`). The agent replays the session's history as
                /// `session/update` notifications before it answers.
                LoadSession load_session = "session/load": LoadSessionRequest => LoadSessionResponse,
                /// `session/list`: lists the agent's sessions, a page at a time
                /// (when it advertises `sessionCapabilities.list`).
                ListSessions list_sessions = "session/list": ListSessionsRequest => ListSessionsResponse,
                /// `session/delete`: deletes a session for good (when the agent
                /// advertises `sessionCapabilities.delete`).
                DeleteSession delete_session = "session/delete": DeleteSessionRequest => DeleteSessionResponse,
                /// `session/resume`: resumes a session without replaying its
                /// history (when the agent advertises `sessionCapabilities.resume`).
                ResumeSession resume_session = "session/resume": ResumeSessionRequest => ResumeSessionResponse,
                /// `session/close`: closes a session and frees its resources (when
                /// the agent advertises `sessionCapabilities.close`).
                CloseSession close_session = "session/close": CloseSessionRequest => CloseSessionResponse,
                /// `session/set_mode`: switches the session to one of the modes
                /// the agent offered.
                SetSessionMode set_session_mode = "session/set_mode": SetSessionModeRequest => SetSessionModeResponse,
                /// `session/set_config_option`: changes one of the session's
                /// config options; the answer carries all of them.
                SetSessionConfigOption set_session_config_option = "session/set_config_option": SetSessionConfigOptionRequest => SetSessionConfigOptionResponse,
                /// `session/prompt`: runs one prompt turn. The agent streams its
                /// progress as `session/update` notifications and answers with the
                /// turn's stop reason once it is over; after a `session/cancel` it
                /// still answers, with `cancelled`.
                Prompt prompt = "session/prompt": PromptRequest => PromptResponse,
            }
            {
                /// `session/cancel`: cancels the session's prompt turn. The turn
                /// still ends with a prompt response (stop reason `cancelled`).
                Cancel cancel = "session/cancel": CancelNotification,
            }
        }
    };
}

// The unstable methods of the agent's table: each stage appends its lines
// when its feature is on, then hands the table to the next. (The stages are
// macros of this crate, so the features decide here, not in the crate that
// expands the table.)

#[cfg(feature = "unstable-session-model")]
#[doc(hidden)]
#[macro_export]
macro_rules! __agent_methods_session_model {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $crate::__agent_methods_session_fork! { [$($cb)+] {
            $($r)*
            /// `session/set_model`: switches the session to one of the models
            /// the agent offered in `models` (feature `unstable-session-model`).
            SetSessionModel set_session_model = "session/set_model": SetSessionModelRequest => SetSessionModelResponse,
        } { $($n)* } }
    };
}
#[cfg(not(feature = "unstable-session-model"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __agent_methods_session_model {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $crate::__agent_methods_session_fork! { [$($cb)+] { $($r)* } { $($n)* } }
    };
}

#[cfg(feature = "unstable-session-fork")]
#[doc(hidden)]
#[macro_export]
macro_rules! __agent_methods_session_fork {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $crate::__agent_methods_session_title! { [$($cb)+] {
            $($r)*
            /// `session/fork`: starts a new session from the context of an
            /// existing one (when the agent advertises `sessionCapabilities.fork`;
            /// feature `unstable-session-fork`).
            ForkSession fork_session = "session/fork": ForkSessionRequest => ForkSessionResponse,
        } { $($n)* } }
    };
}
#[cfg(not(feature = "unstable-session-fork"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __agent_methods_session_fork {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $crate::__agent_methods_session_title! { [$($cb)+] { $($r)* } { $($n)* } }
    };
}

#[cfg(feature = "unstable-session-title")]
#[doc(hidden)]
#[macro_export]
macro_rules! __agent_methods_session_title {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $crate::__agent_methods_providers! { [$($cb)+] {
            $($r)*
            /// `session/set_title`: gives a session the title the user chose
            /// (when the agent advertises `sessionCapabilities.title`; feature
            /// `unstable-session-title`).
            SetSessionTitle set_session_title = "session/set_title": SetSessionTitleRequest => SetSessionTitleResponse,
        } { $($n)* } }
    };
}
#[cfg(not(feature = "unstable-session-title"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __agent_methods_session_title {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $crate::__agent_methods_providers! { [$($cb)+] { $($r)* } { $($n)* } }
    };
}

#[cfg(feature = "unstable-providers")]
#[doc(hidden)]
#[macro_export]
macro_rules! __agent_methods_providers {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $crate::__agent_methods_mcp_over_acp! { [$($cb)+] {
            $($r)*
            /// `providers/list`: the LLM providers the agent can be configured
            /// with (when it advertises `providers`; feature `unstable-providers`).
            ListProviders list_providers = "providers/list": ListProvidersRequest => ListProvidersResponse,
            /// `providers/set`: replaces the whole configuration of one provider
            /// (feature `unstable-providers`).
            SetProvider set_provider = "providers/set": SetProviderRequest => SetProviderResponse,
            /// `providers/disable`: stops using one provider (feature
            /// `unstable-providers`).
            DisableProvider disable_provider = "providers/disable": DisableProviderRequest => DisableProviderResponse,
        } { $($n)* } }
    };
}
#[cfg(not(feature = "unstable-providers"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __agent_methods_providers {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $crate::__agent_methods_mcp_over_acp! { [$($cb)+] { $($r)* } { $($n)* } }
    };
}

#[cfg(feature = "unstable-mcp-over-acp")]
#[doc(hidden)]
#[macro_export]
macro_rules! __agent_methods_mcp_over_acp {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $crate::__agent_methods_done! { [$($cb)+] { $($r)* } {
            $($n)*
            /// `mcp/message`: an MCP notification from a server the client
            /// provides over ACP, for an MCP request in flight (feature
            /// `unstable-mcp-over-acp`).
            McpMessage mcp_message = "mcp/message": MessageMcpNotification,
        } }
    };
}
#[cfg(not(feature = "unstable-mcp-over-acp"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __agent_methods_mcp_over_acp {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $crate::__agent_methods_done! { [$($cb)+] { $($r)* } { $($n)* } }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __agent_methods_done {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $($cb)+ ! {
            /// Methods the agent handles: requests and notifications sent by the client.
            table AGENT_METHODS handled_by AgentSide Agent;
            /// Every request a client sends (the agent handles it).
            requests ClientRequest;
            /// Every successful response an agent sends.
            responses AgentResponse { $($r)* }
            /// Every notification a client sends (the agent handles it).
            notifications ClientNotification { $($n)* }
        }
    };
}

/// The methods the client handles, declared once; see
/// [`agent_methods!`](crate::agent_methods).
#[doc(hidden)]
#[macro_export]
macro_rules! client_methods {
    ($($callback:tt)+) => {
        $crate::__client_methods_mcp_over_acp! {
            [$($callback)+]
            {
                /// `session/request_permission`: asks the user to allow a tool
                /// call, offering the agent's options. After a `session/cancel`,
                /// a client answers the turn's pending ones with the cancelled
                /// outcome.
                RequestPermission request_permission = "session/request_permission": RequestPermissionRequest => RequestPermissionResponse,
                /// `fs/read_text_file`: reads a text file (when the client
                /// advertises `fs.readTextFile`), from 1-based `line`, at most
                /// `limit` lines.
                ReadTextFile read_text_file = "fs/read_text_file": ReadTextFileRequest => ReadTextFileResponse,
                /// `fs/write_text_file`: writes a text file (when the client
                /// advertises `fs.writeTextFile`), creating it if needed.
                WriteTextFile write_text_file = "fs/write_text_file": WriteTextFileRequest => WriteTextFileResponse,
                /// `terminal/create`: starts a command in a new terminal (when the
                /// client advertises `terminal`) and answers with its id at once.
                CreateTerminal create_terminal = "terminal/create": CreateTerminalRequest => CreateTerminalResponse,
                /// `terminal/output`: the terminal's output so far, and its exit
                /// status once it has exited.
                TerminalOutput terminal_output = "terminal/output": TerminalOutputRequest => TerminalOutputResponse,
                /// `terminal/wait_for_exit`: waits until the terminal's command
                /// exits and answers with its exit status.
                WaitForTerminalExit wait_for_terminal_exit = "terminal/wait_for_exit": WaitForTerminalExitRequest => WaitForTerminalExitResponse,
                /// `terminal/kill`: kills the terminal's command, keeping the
                /// terminal and its output.
                KillTerminal kill_terminal = "terminal/kill": KillTerminalRequest => KillTerminalResponse,
                /// `terminal/release`: kills the command if it still runs and
                /// releases the terminal; its id is no longer valid.
                ReleaseTerminal release_terminal = "terminal/release": ReleaseTerminalRequest => ReleaseTerminalResponse,
                /// `elicitation/create`: asks the user for structured input (a
                /// form) or to visit a URL (when the client advertises
                /// `elicitation`).
                CreateElicitation create_elicitation = "elicitation/create": CreateElicitationRequest => CreateElicitationResponse,
            }
            {
                /// `session/update`: streams a session's progress: message and
                /// thought chunks, tool calls, plans, mode and config changes.
                SessionUpdate session_notification = "session/update": SessionNotification,
                /// `elicitation/complete`: tells the client that a URL elicitation
                /// it was asked for has finished.
                CompleteElicitation complete_elicitation = "elicitation/complete": CompleteElicitationNotification,
            }
        }
    };
}

// The unstable methods of the client's table, as for the agent's.

#[cfg(feature = "unstable-mcp-over-acp")]
#[doc(hidden)]
#[macro_export]
macro_rules! __client_methods_mcp_over_acp {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $crate::__client_methods_done! { [$($cb)+] {
            $($r)*
            /// `mcp/message`: one MCP request for a server the client provides
            /// over ACP; the answer carries the MCP result or error (feature
            /// `unstable-mcp-over-acp`).
            McpMessage mcp_message = "mcp/message": MessageMcpRequest => MessageMcpResponse,
        } { $($n)* } }
    };
}
#[cfg(not(feature = "unstable-mcp-over-acp"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __client_methods_mcp_over_acp {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $crate::__client_methods_done! { [$($cb)+] { $($r)* } { $($n)* } }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __client_methods_done {
    ([$($cb:tt)+] { $($r:tt)* } { $($n:tt)* }) => {
        $($cb)+ ! {
            /// Methods the client handles: requests and notifications sent by the agent.
            table CLIENT_METHODS handled_by ClientSide Client;
            /// Every request an agent sends (the client handles it).
            requests AgentRequest;
            /// Every successful response a client sends.
            responses ClientResponse { $($r)* }
            /// Every notification an agent sends (the client handles it).
            notifications AgentNotification { $($n)* }
        }
    };
}

#[cfg(feature = "v2")]
pub(crate) use methods;

agent_methods!(methods);
client_methods!(methods);

impl Notification for CancelRequestNotification {
    const METHOD: &'static str = "$/cancel_request";
    type HandledBy = EitherSide;
}

/// Methods either side may send and handle.
pub const PROTOCOL_METHODS: &[MethodInfo] = &[MethodInfo {
    method: CancelRequestNotification::METHOD,
    kind: MethodKind::Notification,
    handled_by: Side::Protocol,
    params: "CancelRequestNotification",
    response: None,
}];

/// Looks a method up in every table.
pub fn method_info(method: &str) -> Option<&'static MethodInfo> {
    AGENT_METHODS
        .iter()
        .chain(CLIENT_METHODS)
        .chain(PROTOCOL_METHODS)
        .find(|m| m.method == method)
}
