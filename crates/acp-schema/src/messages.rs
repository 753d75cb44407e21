//! Typed JSON-RPC envelopes: requests (`{id, method, params}`), notifications
//! (`{method, params}`) and responses (`{id, result}` or `{id, error}`), with
//! params and results decoded into the routing enums of [`crate::method`].
//!
//! They are the counterparts of the schema's `AgentRequest`, `ClientRequest`,
//! `AgentNotification`, `ClientNotification`, `AgentResponse` and `ClientResponse`
//! definitions, meant for tests and tools. The runtime crate `acp` has its own
//! zero-copy envelope and does not use these.

use crate::method::{AgentResponse, ClientResponse, MethodEnum, ParamsError};
use crate::{DecodeError, Error, RawJson, RawObject, RequestId};
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use std::fmt;

/// The marker `crate::util` uses to carry a nested field path inside a serde
/// error message (`MARK path<TAB>message`), so [`crate::decode`] reports
/// `params.sessionId` rather than a top-level error.
use crate::util::PATH_MARK;

/// A request: an id plus one of the methods of the routing enum `R`
/// (e.g. [`crate::ClientRequest`] for what a client sends).
#[derive(Debug, Clone, PartialEq)]
pub struct RequestMessage<R> {
    /// The id the response will echo.
    pub id: RequestId,
    /// The method and its typed params.
    pub request: R,
}

impl<R> RequestMessage<R> {
    /// A request with id `id`.
    pub fn new(id: impl Into<RequestId>, request: R) -> Self {
        RequestMessage {
            id: id.into(),
            request,
        }
    }
}

/// A notification: one of the methods of the routing enum `N`
/// (e.g. [`crate::AgentNotification`] for what an agent sends).
#[derive(Debug, Clone, PartialEq)]
pub struct NotificationMessage<N> {
    /// The method and its typed params.
    pub notification: N,
}

impl<N> NotificationMessage<N> {
    /// Wraps a notification.
    pub fn new(notification: N) -> Self {
        NotificationMessage { notification }
    }
}

/// A response to a request: the typed successful result or a JSON-RPC error.
///
/// The result's type depends on the method of the request it answers, which the
/// response does not carry: decode it with [`ResponseMessage::decode`].
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseMessage<R> {
    /// The id of the request this answers.
    pub id: RequestId,
    /// The result (`result`) or the error (`error`).
    pub result: Result<R, Error>,
}

/// A routing enum of successful results ([`AgentResponse`], [`ClientResponse`]),
/// decoded by the method of the request they answer.
pub trait ResultEnum: Sized + Serialize {
    /// Decodes `result` as the response type of `method`. Absent or `null` reads as `{}`.
    fn decode_result(method: &str, result: Option<&RawValue>) -> Result<Self, ParamsError>;
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

impl<R> ResponseMessage<R> {
    /// A successful response.
    pub fn ok(id: impl Into<RequestId>, result: R) -> Self {
        ResponseMessage {
            id: id.into(),
            result: Ok(result),
        }
    }

    /// An error response.
    pub fn err(id: impl Into<RequestId>, error: Error) -> Self {
        ResponseMessage {
            id: id.into(),
            result: Err(error),
        }
    }
}

impl<R: ResultEnum> ResponseMessage<R> {
    /// Decodes a response to a request of `method` from JSON text.
    ///
    /// An `error` member wins over `result`; errors name the field path
    /// (`result.stopReason`, `error.code`).
    pub fn decode(method: &str, json: &str) -> Result<Self, DecodeError> {
        let members: RawObject = crate::decode(json).map_err(|e| DecodeError {
            path: e.path,
            message: format!("expected a response object: {}", e.message),
        })?;
        let id = match members.get("id") {
            None => {
                return Err(DecodeError {
                    path: "id".to_string(),
                    message: "missing field `id`".to_string(),
                });
            }
            Some(raw) => crate::decode::<RequestId>(raw.get()).map_err(|e| prefixed("id", e))?,
        };
        if let Some(error) = members.get("error").filter(|e| !e.is_null()) {
            let error: Error = crate::decode(error.get()).map_err(|e| prefixed("error", e))?;
            return Ok(ResponseMessage {
                id,
                result: Err(error),
            });
        }
        let Some(raw) = members.get("result") else {
            return Err(DecodeError {
                path: String::new(),
                message: "a response needs `result` or `error`".to_string(),
            });
        };
        let result = R::decode_result(method, Some(raw.as_raw())).map_err(|e| match e {
            ParamsError::UnknownMethod(m) => DecodeError {
                path: String::new(),
                message: format!("unknown method `{m}`"),
            },
            ParamsError::Invalid(e) => prefixed("result", e),
        })?;
        Ok(ResponseMessage {
            id,
            result: Ok(result),
        })
    }

    /// Decodes a response to a request of `method` from a parsed JSON value.
    pub fn decode_value(method: &str, value: Value) -> Result<Self, DecodeError> {
        Self::decode(method, &value.to_string())
    }
}

impl<R: Serialize> Serialize for ResponseMessage<R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("id", &self.id)?;
        match &self.result {
            Ok(result) => map.serialize_entry("result", result)?,
            Err(error) => map.serialize_entry("error", error)?,
        }
        map.end()
    }
}

impl<R: MethodEnum> Serialize for RequestMessage<R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("method", self.request.method())?;
        map.serialize_entry("params", &self.request)?;
        map.end()
    }
}

impl<'de, R: MethodEnum> Deserialize<'de> for RequestMessage<R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let env = d.deserialize_map(EnvelopeVisitor)?;
        let id = env
            .id
            .ok_or_else(|| <D::Error as serde::de::Error>::missing_field("id"))?;
        let method = env
            .method
            .ok_or_else(|| <D::Error as serde::de::Error>::missing_field("method"))?;
        let request = R::decode(&method, env.params.as_ref().map(RawJson::as_raw))
            .map_err(params_error::<D::Error>)?;
        Ok(RequestMessage { id, request })
    }
}

impl<N: MethodEnum> Serialize for NotificationMessage<N> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("method", self.notification.method())?;
        map.serialize_entry("params", &self.notification)?;
        map.end()
    }
}

impl<'de, N: MethodEnum> Deserialize<'de> for NotificationMessage<N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let env = d.deserialize_map(EnvelopeVisitor)?;
        let method = env
            .method
            .ok_or_else(|| <D::Error as serde::de::Error>::missing_field("method"))?;
        let notification = N::decode(&method, env.params.as_ref().map(RawJson::as_raw))
            .map_err(params_error::<D::Error>)?;
        Ok(NotificationMessage { notification })
    }
}

/// The members of a request or notification the envelopes read; `params` stays raw.
struct Envelope {
    id: Option<RequestId>,
    method: Option<String>,
    params: Option<RawJson>,
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope, A::Error> {
        let mut env = Envelope {
            id: None,
            method: None,
            params: None,
        };
        while let Some(key) = map.next_key::<crate::util::wire::Key<'de>>()? {
            match key.as_str() {
                "id" => env.id = Some(map.next_value()?),
                "method" => env.method = Some(map.next_value()?),
                "params" => env.params = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(env)
    }
}

/// An error at `path`, in the form [`crate::decode`] splices into its field path.
fn marked<E: serde::de::Error>(path: &str, message: &str) -> E {
    E::custom(format_args!("{PATH_MARK}{path}\t{message}"))
}

fn params_error<E: serde::de::Error>(err: ParamsError) -> E {
    match err {
        ParamsError::UnknownMethod(m) => marked("method", &format!("unknown method `{m}`")),
        ParamsError::Invalid(e) => {
            let inner = prefixed("params", e);
            marked(&inner.path, &inner.message)
        }
    }
}

/// `err` with `prefix` put in front of its path.
fn prefixed(prefix: &str, err: DecodeError) -> DecodeError {
    let path = if err.path.is_empty() {
        prefix.to_string()
    } else if err.path.starts_with('[') {
        format!("{prefix}{}", err.path)
    } else {
        format!("{prefix}.{}", err.path)
    };
    DecodeError {
        path,
        message: err.message,
    }
}
