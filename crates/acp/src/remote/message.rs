//! Just enough of a JSON-RPC message to route it: its kind, id, method and
//! the session it names. The message itself is passed on as it came.

use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// What a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Request,
    Notification,
    Response,
}

/// The routing facts of one message.
#[derive(Debug)]
pub(crate) struct Inspected {
    pub kind: Kind,
    /// The id's JSON text, as a key (`1` and `"1"` differ).
    pub id: Option<String>,
    pub method: Option<String>,
    /// `params.sessionId`, if a string.
    pub params_session: Option<String>,
    /// `result.sessionId`, if a string.
    pub result_session: Option<String>,
    /// The client sends it again, not knowing whether it arrived (set by
    /// the server from the request, not by `inspect`).
    pub resent: bool,
}

#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct HasSession<'a> {
    #[serde(borrow, default, rename = "sessionId")]
    session_id: Option<Cow<'a, str>>,
}

fn session_of(raw: Option<&RawValue>) -> Option<String> {
    let raw = raw?;
    serde_json::from_str::<HasSession<'_>>(raw.get())
        .ok()?
        .session_id
        .map(Cow::into_owned)
}

/// Inspects one message; `None` when it is not a JSON object with either a
/// method or a result or error.
pub(crate) fn inspect(text: &[u8]) -> Option<Inspected> {
    let peek: Peek<'_> = serde_json::from_slice(text).ok()?;
    let id = peek.id.map(|raw| raw.get().trim().to_owned());
    let kind = match (&peek.method, &id) {
        (Some(_), Some(_)) => Kind::Request,
        (Some(_), None) => Kind::Notification,
        (None, _) if peek.result.is_some() || peek.error.is_some() => Kind::Response,
        (None, _) => return None,
    };
    Some(Inspected {
        kind,
        id,
        method: peek.method.map(Cow::into_owned),
        params_session: session_of(peek.params),
        result_session: session_of(peek.result),
        resent: false,
    })
}

/// Methods whose requests belong to a session, so their POST needs the
/// `Acp-Session-Id` header (the SDK's list).
pub(crate) fn is_session_scoped(method: &str) -> bool {
    matches!(
        method,
        "session/cancel"
            | "session/close"
            | "session/delete"
            | "session/fork"
            | "session/load"
            | "session/prompt"
            | "session/resume"
            | "session/set_config_option"
            | "session/set_mode"
            | "session/set_model"
    )
}

/// A JSON-RPC error response line (with its `\n`) for request `id` (its JSON
/// text, `null` if unknown). Written by hand so that its members keep their
/// order whatever features `serde_json` was built with.
pub(crate) fn error_line(id: Option<&str>, code: i32, message: &str) -> Vec<u8> {
    let message = serde_json::to_string(message).unwrap_or_else(|_| "\"\"".to_owned());
    let id = id.unwrap_or("null");
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":{code},\"message\":{message}}}}}\n"
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_ids_and_sessions() {
        let r = inspect(br#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#).unwrap();
        assert_eq!(r.kind, Kind::Request);
        assert_eq!(r.id.as_deref(), Some("7"));
        assert_eq!(r.params_session.as_deref(), Some("s1"));
        let n = inspect(
            br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"a\"b"}}"#,
        )
        .unwrap();
        assert_eq!(n.kind, Kind::Notification);
        assert_eq!(n.params_session.as_deref(), Some("a\"b"));
        let s = inspect(br#"{"jsonrpc":"2.0","id":"x","result":{"sessionId":"s2"}}"#).unwrap();
        assert_eq!((s.kind, s.id.as_deref()), (Kind::Response, Some("\"x\"")));
        assert_eq!(s.result_session.as_deref(), Some("s2"));
        assert!(inspect(b"[1]").is_none());
        assert!(inspect(b"{}").is_none());
        assert!(inspect(b"nope").is_none());
    }

    #[test]
    fn error_lines_keep_the_id() {
        assert_eq!(
            error_line(Some("\"a\""), -32603, "gone"),
            b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{\"code\":-32603,\"message\":\"gone\"}}\n"
        );
        assert_eq!(
            error_line(None, -32600, "x"),
            b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"x\"}}\n"
        );
    }
}
