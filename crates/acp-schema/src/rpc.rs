//! JSON-RPC 2.0 building blocks shared by every method: request ids, error codes
//! and the error object.
//!
//! The message envelopes themselves (framing, `jsonrpc: "2.0"`, matching responses
//! to requests) belong to the runtime crate `acp`; see also [`crate::messages`] for
//! typed envelopes used in tests and tools.

use crate::RawJson;
use crate::util::wire_struct;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// A JSON-RPC request id: `null`, an integer or a string, echoed back with its type.
///
/// `Display` keeps `92` and `"92"` apart.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(untagged)]
pub enum RequestId {
    /// The `null` id (discouraged; used in responses to unparsable requests).
    Null,
    /// An integer id.
    Number(i64),
    /// A string id.
    Str(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Null => f.write_str("null"),
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::Str(s) => write!(f, "{s:?}"),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("null, an integer or a string")
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<RequestId, E> {
                Ok(RequestId::Null)
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<RequestId, E> {
                Ok(RequestId::Null)
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(n))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<RequestId, E> {
                i64::try_from(n)
                    .map(RequestId::Number)
                    .map_err(|_| E::custom("request id is out of the 64-bit integer range"))
            }
            fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<RequestId, E> {
                // A JSON parser hands over `-0`, `1e2` or an integer too large
                // for 64 bits as a float: an integral value is an integer id
                // if it fits, whatever its notation.
                const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
                if n.fract() != 0.0 || !n.is_finite() {
                    Err(E::custom("request id must be an integer, not a fraction"))
                } else if (-LIMIT..LIMIT).contains(&n) {
                    Ok(RequestId::Number(n as i64))
                } else {
                    Err(E::custom("request id is out of the 64-bit integer range"))
                }
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<RequestId, E> {
                Ok(RequestId::Str(s.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::Str(s.to_string())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::Str(s)
    }
}

/// A JSON-RPC error code: an open set of integers with named constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// -32700: the message was not valid JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// -32600: the JSON is not a valid request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// -32601: the method does not exist or is not available.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// -32602: the parameters do not fit the method.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// -32603: an internal error of the handler.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// -32000: authentication is required before this operation.
    pub const AUTH_REQUIRED: ErrorCode = ErrorCode(-32000);
    /// -32002: a resource (a session, a file) was not found.
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// -32800: the request was cancelled (`$/cancel_request`, shutdown).
    pub const REQUEST_CANCELLED: ErrorCode = ErrorCode(-32800);
    /// -32022: the agent supports no protocol version at or below the one the
    /// client asked for (protocol v2; feature `v2`).
    #[cfg(feature = "v2")]
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);

    /// The name of a known code (`"auth_required"`), or `None`.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            ErrorCode::PARSE_ERROR => "parse_error",
            ErrorCode::INVALID_REQUEST => "invalid_request",
            ErrorCode::METHOD_NOT_FOUND => "method_not_found",
            ErrorCode::INVALID_PARAMS => "invalid_params",
            ErrorCode::INTERNAL_ERROR => "internal_error",
            ErrorCode::AUTH_REQUIRED => "auth_required",
            ErrorCode::RESOURCE_NOT_FOUND => "resource_not_found",
            ErrorCode::REQUEST_CANCELLED => "request_cancelled",
            #[cfg(feature = "v2")]
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => "unsupported_protocol_version",
            _ => return None,
        })
    }

    /// The standard message for a known code.
    pub fn default_message(self) -> &'static str {
        match self {
            ErrorCode::PARSE_ERROR => "Parse error",
            ErrorCode::INVALID_REQUEST => "Invalid request",
            ErrorCode::METHOD_NOT_FOUND => "Method not found",
            ErrorCode::INVALID_PARAMS => "Invalid params",
            ErrorCode::INTERNAL_ERROR => "Internal error",
            ErrorCode::AUTH_REQUIRED => "Authentication required",
            ErrorCode::RESOURCE_NOT_FOUND => "Resource not found",
            ErrorCode::REQUEST_CANCELLED => "Request cancelled",
            #[cfg(feature = "v2")]
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => "Unsupported protocol version",
            _ => "Error",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{} ({name})", self.0),
            None => write!(f, "{}", self.0),
        }
    }
}

impl From<i32> for ErrorCode {
    fn from(code: i32) -> Self {
        ErrorCode(code)
    }
}

wire_struct! {
    /// The JSON-RPC error object.
    pub struct Error {
        /// What kind of error this is.
        pub code: ErrorCode = "code" (Req),
        /// A short, single-sentence description.
        pub message: String = "message" (Req),
        /// Anything else that helps: a field path, a list of auth methods, …
        /// (kept as the exact JSON received).
        pub data: Option<RawJson> = "data" (Lenient),
    }
}

impl Error {
    /// An error with a code and a message.
    pub fn new(code: impl Into<ErrorCode>, message: impl Into<String>) -> Self {
        Error {
            code: code.into(),
            message: message.into(),
            data: None,
            extra: Default::default(),
        }
    }

    /// Attaches `data`.
    #[must_use]
    pub fn data(mut self, data: impl Into<Value>) -> Self {
        self.data = Some(RawJson::from(data.into()));
        self
    }

    /// Attaches `data` given as raw JSON.
    #[must_use]
    pub fn data_raw(mut self, data: RawJson) -> Self {
        self.data = Some(data);
        self
    }

    fn standard(code: ErrorCode) -> Self {
        Error::new(code, code.default_message())
    }

    /// -32700 Parse error.
    pub fn parse_error() -> Self {
        Self::standard(ErrorCode::PARSE_ERROR)
    }
    /// -32600 Invalid request.
    pub fn invalid_request() -> Self {
        Self::standard(ErrorCode::INVALID_REQUEST)
    }
    /// -32601 Method not found.
    pub fn method_not_found() -> Self {
        Self::standard(ErrorCode::METHOD_NOT_FOUND)
    }
    /// -32602 Invalid params.
    pub fn invalid_params() -> Self {
        Self::standard(ErrorCode::INVALID_PARAMS)
    }
    /// -32603 Internal error.
    pub fn internal_error() -> Self {
        Self::standard(ErrorCode::INTERNAL_ERROR)
    }
    /// -32000 Authentication required.
    pub fn auth_required() -> Self {
        Self::standard(ErrorCode::AUTH_REQUIRED)
    }
    /// -32002 Resource not found; `uri` names it in `data`.
    pub fn resource_not_found(uri: Option<String>) -> Self {
        let err = Self::standard(ErrorCode::RESOURCE_NOT_FOUND);
        match uri {
            Some(uri) => err.data(serde_json::json!({ "uri": uri })),
            None => err,
        }
    }
    /// -32800 Request cancelled.
    pub fn request_cancelled() -> Self {
        Self::standard(ErrorCode::REQUEST_CANCELLED)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code.0)?;
        if let Some(data) = &self.data {
            write!(f, ": {data}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

impl From<crate::DecodeError> for Error {
    /// Bad params: -32602 with the field path and serde's message in `data`.
    fn from(err: crate::DecodeError) -> Self {
        /// `{"path": …, "message": …}`, in that order.
        #[derive(Serialize)]
        struct Data<'a> {
            path: &'a str,
            message: &'a str,
        }
        let data = Data {
            path: &err.path,
            message: &err.message,
        };
        match RawJson::encode(&data) {
            Ok(raw) => Error::invalid_params().data_raw(raw),
            Err(_) => Error::invalid_params(),
        }
    }
}

wire_struct! {
    /// `$/cancel_request`: either side asks the other to stop working on a request.
    ///
    /// The receiver may ignore it; a request it does cancel is answered with
    /// [`ErrorCode::REQUEST_CANCELLED`].
    pub struct CancelRequestNotification {
        /// The id of the request to cancel.
        pub request_id: RequestId = "requestId" (Req),
        /// Extension metadata.
        pub meta: Option<crate::Meta> = "_meta" (MetaField),
    }
}

impl CancelRequestNotification {
    /// Cancels the request `request_id`.
    pub fn new(request_id: impl Into<RequestId>) -> Self {
        CancelRequestNotification {
            request_id: request_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

crate::util::setters!(CancelRequestNotification { opt { meta: crate::Meta } });
