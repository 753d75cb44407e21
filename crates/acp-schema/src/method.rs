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
//! Unstable methods will get their own tables behind one cargo feature per area
//! (`unstable-fork`, `unstable-providers`, …), appended to these enums.

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
    /// The side that handles it.
    const HANDLED_BY: Side;
}

/// A notification: its params type implements this.
pub trait Notification: Serialize + DeserializeOwned + fmt::Debug + Send + Sync + 'static {
    /// The wire name of the method.
    const METHOD: &'static str;
    /// The side that handles it.
    const HANDLED_BY: Side;
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

fn decode_params<T: DeserializeOwned>(params: Option<&RawValue>) -> Result<T, ParamsError> {
    crate::decode(params_text(params)).map_err(ParamsError::Invalid)
}

fn raw_or_empty(params: Option<&RawValue>) -> Box<RawValue> {
    match params {
        Some(raw) => raw.to_owned(),
        None => RawValue::from_string("{}".to_string()).expect("`{}` is valid JSON"),
    }
}

macro_rules! methods {
    (
        $(#[$tdoc:meta])*
        table $table:ident handled_by $side:ident;
        $(#[$rdoc:meta])*
        requests $req:ident;
        $(#[$sdoc:meta])*
        responses $resp:ident {
            $( $(#[$vdoc:meta])* $variant:ident = $method:literal : $params:ident => $response:ident, )*
        }
        $(#[$ndoc:meta])*
        notifications $notif:ident {
            $( $(#[$nvdoc:meta])* $nvariant:ident = $nmethod:literal : $nparams:ident, )*
        }
    ) => {
        $(
            impl Request for $params {
                type Response = $response;
                const METHOD: &'static str = $method;
                const HANDLED_BY: Side = Side::$side;
            }
        )*
        $(
            impl Notification for $nparams {
                const METHOD: &'static str = $nmethod;
                const HANDLED_BY: Side = Side::$side;
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
                    $( $method => decode_params(result).map($resp::$variant), )*
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

methods! {
    /// Methods the agent handles: requests and notifications sent by the client.
    table AGENT_METHODS handled_by Agent;
    /// Every request a client sends (the agent handles it).
    requests ClientRequest;
    /// Every successful response an agent sends.
    responses AgentResponse {
        /// `initialize`: negotiate the protocol version and capabilities.
        Initialize = "initialize": InitializeRequest => InitializeResponse,
        /// `authenticate`: authenticate with one of the advertised methods.
        Authenticate = "authenticate": AuthenticateRequest => AuthenticateResponse,
        /// `logout`: end the authenticated state.
        Logout = "logout": LogoutRequest => LogoutResponse,
        /// `session/new`: create a session.
        NewSession = "session/new": NewSessionRequest => NewSessionResponse,
        /// `session/load`: load a session, replaying its history.
        LoadSession = "session/load": LoadSessionRequest => LoadSessionResponse,
        /// `session/list`: list known sessions.
        ListSessions = "session/list": ListSessionsRequest => ListSessionsResponse,
        /// `session/delete`: delete a session.
        DeleteSession = "session/delete": DeleteSessionRequest => DeleteSessionResponse,
        /// `session/resume`: resume a session without replaying history.
        ResumeSession = "session/resume": ResumeSessionRequest => ResumeSessionResponse,
        /// `session/close`: close a session and free its resources.
        CloseSession = "session/close": CloseSessionRequest => CloseSessionResponse,
        /// `session/set_mode`: switch the session mode.
        SetSessionMode = "session/set_mode": SetSessionModeRequest => SetSessionModeResponse,
        /// `session/set_config_option`: set a session config option.
        SetSessionConfigOption = "session/set_config_option": SetSessionConfigOptionRequest => SetSessionConfigOptionResponse,
        /// `session/prompt`: run one prompt turn.
        Prompt = "session/prompt": PromptRequest => PromptResponse,
    }
    /// Every notification a client sends (the agent handles it).
    notifications ClientNotification {
        /// `session/cancel`: cancel the session's prompt turn.
        Cancel = "session/cancel": CancelNotification,
    }
}

methods! {
    /// Methods the client handles: requests and notifications sent by the agent.
    table CLIENT_METHODS handled_by Client;
    /// Every request an agent sends (the client handles it).
    requests AgentRequest;
    /// Every successful response a client sends.
    responses ClientResponse {
        /// `session/request_permission`: ask the user to allow a tool call.
        RequestPermission = "session/request_permission": RequestPermissionRequest => RequestPermissionResponse,
        /// `fs/read_text_file`: read a text file through the client.
        ReadTextFile = "fs/read_text_file": ReadTextFileRequest => ReadTextFileResponse,
        /// `fs/write_text_file`: write a text file through the client.
        WriteTextFile = "fs/write_text_file": WriteTextFileRequest => WriteTextFileResponse,
        /// `terminal/create`: start a command in a new terminal.
        CreateTerminal = "terminal/create": CreateTerminalRequest => CreateTerminalResponse,
        /// `terminal/output`: read a terminal's output so far.
        TerminalOutput = "terminal/output": TerminalOutputRequest => TerminalOutputResponse,
        /// `terminal/wait_for_exit`: wait for a terminal's command to exit.
        WaitForTerminalExit = "terminal/wait_for_exit": WaitForTerminalExitRequest => WaitForTerminalExitResponse,
        /// `terminal/kill`: kill a terminal's command, keeping the terminal.
        KillTerminal = "terminal/kill": KillTerminalRequest => KillTerminalResponse,
        /// `terminal/release`: kill (if running) and release a terminal.
        ReleaseTerminal = "terminal/release": ReleaseTerminalRequest => ReleaseTerminalResponse,
        /// `elicitation/create`: ask the user for structured input.
        CreateElicitation = "elicitation/create": CreateElicitationRequest => CreateElicitationResponse,
    }
    /// Every notification an agent sends (the client handles it).
    notifications AgentNotification {
        /// `session/update`: stream progress of a session.
        SessionUpdate = "session/update": SessionNotification,
        /// `elicitation/complete`: a URL elicitation finished.
        CompleteElicitation = "elicitation/complete": CompleteElicitationNotification,
    }
}

impl Notification for CancelRequestNotification {
    const METHOD: &'static str = "$/cancel_request";
    const HANDLED_BY: Side = Side::Protocol;
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
