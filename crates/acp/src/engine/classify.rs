//! Parsing one incoming line into a request, notification or response
//! without copying its params.

use super::request::{IncomingTable, RequestState};
use super::{Handler, HandlerFuture, declined, lock};
use acp_schema::{Error, RequestId};
use futures::future::BoxFuture;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, Mutex};

/// What the fast path made of a line.
pub(super) enum Fast<'a> {
    /// A request, its params decoded into its handler's work.
    Request(Arc<RequestState>, Cow<'a, str>, HandlerFuture),
    /// A notification, its params decoded into its handler's work.
    Notification(Cow<'a, str>, BoxFuture<'static, ()>),
    /// A response with a result, still undecoded.
    Response(RequestId, &'a RawValue),
    /// Not for the fast path: classify the line the slow way.
    Declined,
}

/// The fast path, in one pass over the line: when `jsonrpc` and `method`
/// (and the `id` of a request) come before `params`, as every peer we know
/// writes them, the params are decoded by the handler of `method` as the
/// envelope is read; when `jsonrpc` and `id` come before `result`, the
/// result is kept as the raw JSON it is. Anything else, an error included,
/// is declined, and nothing decoded here has had an effect (the work is
/// dropped unpolled).
pub(super) fn classify_fast<'a, H: Handler>(
    line: &'a [u8],
    handler: &H,
    running: &Mutex<IncomingTable>,
) -> Fast<'a> {
    let mut de = serde_json::Deserializer::from_slice(line);
    let seed = EnvelopeSeed { handler, running };
    match seed
        .deserialize(&mut de)
        .and_then(|fast| de.end().map(|()| fast))
    {
        Ok(fast) => fast,
        Err(_) => Fast::Declined,
    }
}

struct EnvelopeSeed<'h, H> {
    handler: &'h H,
    running: &'h Mutex<IncomingTable>,
}

impl<'de, H: Handler> DeserializeSeed<'de> for EnvelopeSeed<'_, H> {
    type Value = Fast<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Fast<'de>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, H: Handler> Visitor<'de> for EnvelopeSeed<'_, H> {
    type Value = Fast<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fast<'de>, A::Error> {
        let mut version = false;
        let mut id: Option<RequestId> = None;
        let mut method: Option<Cow<'de, str>> = None;
        let mut fast = None;
        let mut result: Option<&'de RawValue> = None;
        while let Some(Text(key)) = map.next_key()? {
            match &*key {
                "jsonrpc" if !version => {
                    let Text(value) = map.next_value()?;
                    if value != "2.0" {
                        return Err(declined());
                    }
                    version = true;
                }
                "id" if id.is_none() && fast.is_none() && result.is_none() => {
                    id = Some(map.next_value()?)
                }
                "method" if method.is_none() && result.is_none() => {
                    method = Some(map.next_value::<Text<'de>>()?.0)
                }
                // A response: `id` first, and no `method` (the slow way
                // answers a message that has both, or `error` too).
                "result" if version && id.is_some() && method.is_none() && result.is_none() => {
                    result = Some(map.next_value()?);
                }
                "params" if fast.is_none() && result.is_none() => {
                    let (true, Some(name)) = (version, method.as_deref()) else {
                        return Err(declined());
                    };
                    fast = Some(match &id {
                        Some(id) => {
                            // A duplicate is refused before decoding (which
                            // has effects for a prompt): the slow way does it.
                            if lock(self.running).contains(id) {
                                return Err(declined());
                            }
                            let request = Arc::new(RequestState::new(id.clone()));
                            let work = map.next_value_seed(RequestSeed {
                                handler: self.handler,
                                method: name,
                                request: &request,
                            })?;
                            Ok((request, work))
                        }
                        None => Err(map.next_value_seed(NotificationSeed {
                            handler: self.handler,
                            method: name,
                        })?),
                    });
                }
                "result" | "error" | "jsonrpc" | "id" | "method" | "params" => {
                    return Err(declined());
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        match (method, fast, result, id) {
            (Some(method), Some(Ok((request, work))), None, _) => {
                Ok(Fast::Request(request, method, work))
            }
            (Some(method), Some(Err(work)), None, None) => Ok(Fast::Notification(method, work)),
            (None, None, Some(result), Some(id)) => Ok(Fast::Response(id, result)),
            _ => Err(declined()),
        }
    }
}

/// A string of the envelope (a key, the version, the method): borrowed from
/// the line unless it has escapes. serde's own `Cow<str>` always copies.
struct Text<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, s: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(s)))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

struct RequestSeed<'h, H> {
    handler: &'h H,
    method: &'h str,
    request: &'h Arc<RequestState>,
}

impl<'de, H: Handler> DeserializeSeed<'de> for RequestSeed<'_, H> {
    type Value = HandlerFuture;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<HandlerFuture, D::Error> {
        self.handler.prepare_request(self.method, d, self.request)
    }
}

struct NotificationSeed<'h, H> {
    handler: &'h H,
    method: &'h str,
}

impl<'de, H: Handler> DeserializeSeed<'de> for NotificationSeed<'_, H> {
    type Value = BoxFuture<'static, ()>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.handler.prepare_notification(self.method, d)
    }
}

/// The envelope of any incoming message; params and results stay borrowed.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "present")]
    id: Option<RequestId>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present_raw")]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<Error>,
}

/// A present `"id": null` is `Some(RequestId::Null)`, unlike an absent id.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RequestId>, D::Error> {
    RequestId::deserialize(d).map(Some)
}

/// A present `"result": null` is `Some("null")`, unlike an absent result.
fn present_raw<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// What the reader makes of one line.
pub(super) enum Incoming<'a> {
    Request(RequestId, Cow<'a, str>, Option<&'a RawValue>),
    Notification(Cow<'a, str>, Option<&'a RawValue>),
    Response(RequestId, Result<&'a RawValue, Error>),
    /// Not JSON: answer -32700.
    Unparsable(String),
    /// JSON, but not a message: answer -32600 (with the id, when one could be read).
    Invalid(Option<RequestId>, String),
    /// Shaped like a response (no `method`), but malformed: fail the pending request.
    BadResponse(RequestId, String),
}

pub(super) fn classify(line: &[u8]) -> Incoming<'_> {
    // Only an object is a message. Serde would also read an array into the
    // envelope, by position: `["2.0",7,"logout"]` must not run as a request.
    if line.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return match serde_json::from_slice::<serde::de::IgnoredAny>(line) {
            Ok(_) => Incoming::Invalid(None, "a message must be a JSON object".into()),
            Err(e) => Incoming::Unparsable(strip_position(&e.to_string())),
        };
    }
    let env: Envelope<'_> = match serde_json::from_slice(line) {
        Ok(env) => env,
        Err(e) if e.is_data() => {
            // Valid JSON of the wrong shape: try to recover an id to answer.
            let value = serde_json::from_slice::<serde_json::Value>(line).ok();
            let get = |key: &str| value.as_ref().and_then(|v| v.get(key));
            let id = get("id").and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
            let msg = strip_position(&e.to_string());
            let response_like =
                get("method").is_none() && (get("result").is_some() || get("error").is_some());
            return match id {
                Some(id) if response_like => Incoming::BadResponse(id, msg),
                id => Incoming::Invalid(id, msg),
            };
        }
        Err(e) => {
            // Valid JSON that still cannot be read: a number too large for
            // any number type (an id of `1e400`). A bad message, not bad JSON.
            let msg = strip_position(&e.to_string());
            if msg == "number out of range"
                && serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok()
            {
                return Incoming::Invalid(None, format!("the message cannot be read: {msg}"));
            }
            return Incoming::Unparsable(msg);
        }
    };
    // A malformed response is never answered: its id is one of ours, and an
    // error reply carrying it would read as the answer to the peer's own request.
    let response_like = env.method.is_none() && (env.result.is_some() || env.error.is_some());
    if env.jsonrpc.as_deref() != Some("2.0") {
        let msg = "`jsonrpc` must be \"2.0\"".to_string();
        return match env.id {
            Some(id) if response_like => Incoming::BadResponse(id, msg),
            id => Incoming::Invalid(id, msg),
        };
    }
    match (env.method, env.id, env.result, env.error) {
        (Some(method), Some(id), None, None) => Incoming::Request(id, method, env.params),
        (Some(method), None, None, None) => Incoming::Notification(method, env.params),
        (None, Some(id), Some(result), None) => Incoming::Response(id, Ok(result)),
        (None, Some(id), None, Some(error)) => Incoming::Response(id, Err(error)),
        (None, Some(id), Some(_), Some(_)) => Incoming::BadResponse(
            id,
            "a response has either `result` or `error`, not both".into(),
        ),
        (Some(_), id, _, _) => Incoming::Invalid(id, "a request has no `result` or `error`".into()),
        (None, id, None, None) => Incoming::Invalid(
            id,
            "not a request, notification or response: no `method`, `result` or `error`".into(),
        ),
        (None, None, _, _) => Incoming::Invalid(None, "a response needs an `id`".into()),
    }
}

fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}
