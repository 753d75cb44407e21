//! Elicitation: the agent asks the user for structured input, either through a
//! form the client renders from a small JSON Schema or by sending the user to a
//! URL (`elicitation/create`, then `elicitation/complete` for URLs).
//!
//! Every elicitation is scoped either to a session (optionally a tool call in
//! it) or to a JSON-RPC request made outside any session; the scope's fields sit
//! next to the mode's fields on the wire.

mod form;
pub use form::*;

use crate::util::wire::{Entries, Flat};
use crate::util::{id_type, setters, tagged_union, wire_struct};
use crate::{Meta, OrderedMap, RequestId, SessionId, TagOnly, ToolCallId};
use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

id_type!(
    /// Identifies a URL elicitation, so `elicitation/complete` can refer to it.
    ElicitationId
);

wire_struct! {
    /// The `elicitation/create` request: ask the user for input (needs the matching
    /// `elicitation` client capability).
    ///
    /// On the wire the mode's fields (and its scope) sit next to `message`:
    /// `{"message":…,"mode":"form","sessionId":…,"requestedSchema":{…}}`.
    pub struct CreateElicitationRequest {
        /// What the user is asked for, in words.
        pub message: String = "message" (Req),
        /// How the input is collected (`mode` and its fields, including the scope).
        pub mode: ElicitationMode = "" (Flatten),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl CreateElicitationRequest {
    /// Ask for input described by `message`, collected the way `mode` says.
    pub fn new(message: impl Into<String>, mode: impl Into<ElicitationMode>) -> Self {
        CreateElicitationRequest {
            message: message.into(),
            meta: None,
            mode: mode.into(),
            extra: Default::default(),
        }
    }

    /// Ask the user to fill in a form built from `schema`.
    pub fn form(
        message: impl Into<String>,
        scope: impl Into<ElicitationScope>,
        schema: ElicitationSchema,
    ) -> Self {
        Self::new(message, ElicitationFormMode::new(scope, schema))
    }

    /// Send the user to `url`; the agent later sends `elicitation/complete` with `id`.
    pub fn url(
        message: impl Into<String>,
        scope: impl Into<ElicitationScope>,
        id: impl Into<ElicitationId>,
        url: impl Into<String>,
    ) -> Self {
        Self::new(message, ElicitationUrlMode::new(scope, id, url))
    }
}

setters!(CreateElicitationRequest { opt { meta: Meta } });

tagged_union! {
    /// How an elicitation collects input, tagged by `mode`. A client must not
    /// treat an unknown mode as a known one, and should keep it intact when
    /// storing or forwarding it.
    pub enum ElicitationMode: tag "mode" {
        /// The client renders a form (needs `elicitation.form`).
        "form" => Form(ElicitationFormMode),
        /// The client sends the user to a URL (needs `elicitation.url`).
        "url" => Url(ElicitationUrlMode),
    }
}

impl From<ElicitationFormMode> for ElicitationMode {
    fn from(m: ElicitationFormMode) -> Self {
        ElicitationMode::Form(m)
    }
}

impl From<ElicitationUrlMode> for ElicitationMode {
    fn from(m: ElicitationUrlMode) -> Self {
        ElicitationMode::Url(m)
    }
}

wire_struct! {
    /// A form elicitation: the client renders fields from `requestedSchema`.
    pub struct ElicitationFormMode {
        /// The fields to ask for.
        pub requested_schema: ElicitationSchema = "requestedSchema" (Req),
        /// What the elicitation belongs to (its fields sit next to `requestedSchema`).
        pub scope: ElicitationScope = "" (Flatten),
    }
}

impl ElicitationFormMode {
    /// A form for `schema`, scoped to `scope`.
    pub fn new(scope: impl Into<ElicitationScope>, schema: ElicitationSchema) -> Self {
        ElicitationFormMode {
            requested_schema: schema,
            scope: scope.into(),
            extra: Default::default(),
        }
    }
}

wire_struct! {
    /// A URL elicitation: the user goes to a page (to sign in, pay, …) and the agent
    /// reports completion with `elicitation/complete`.
    pub struct ElicitationUrlMode {
        /// The elicitation's id, repeated in `elicitation/complete`.
        pub elicitation_id: ElicitationId = "elicitationId" (Req),
        /// The page to send the user to.
        pub url: String = "url" (Req),
        /// What the elicitation belongs to (its fields sit next to `url`).
        pub scope: ElicitationScope = "" (Flatten),
    }
}

impl ElicitationUrlMode {
    /// Send the user to `url`, as elicitation `id`, scoped to `scope`.
    pub fn new(
        scope: impl Into<ElicitationScope>,
        id: impl Into<ElicitationId>,
        url: impl Into<String>,
    ) -> Self {
        ElicitationUrlMode {
            elicitation_id: id.into(),
            url: url.into(),
            scope: scope.into(),
            extra: Default::default(),
        }
    }
}

/// What an elicitation belongs to: a session, or a request outside any session.
/// Told apart by which of `sessionId` and `requestId` is present (`sessionId`
/// wins if both are).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ElicitationScope {
    /// Belongs to a session, maybe to one tool call in it.
    Session(ElicitationSessionScope),
    /// Belongs to a JSON-RPC request (for example during authentication).
    Request(ElicitationRequestScope),
}

impl Flat for ElicitationScope {
    fn take<E: serde::de::Error>(rest: &mut Entries) -> Result<Self, E> {
        if rest.iter().any(|(k, _)| k == "sessionId") {
            ElicitationSessionScope::take(rest).map(ElicitationScope::Session)
        } else if rest.iter().any(|(k, _)| k == "requestId") {
            ElicitationRequestScope::take(rest).map(ElicitationScope::Request)
        } else {
            Err(E::custom(
                "an elicitation needs either `sessionId` or `requestId`",
            ))
        }
    }

    fn write_flat<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        match self {
            ElicitationScope::Session(s) => s.write_flat(map),
            ElicitationScope::Request(r) => r.write_flat(map),
        }
    }
}

impl<'de> Deserialize<'de> for ElicitationScope {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut rest = crate::RawObject::deserialize(d)?.into_vec();
        Self::take(&mut rest)
    }
}

impl From<ElicitationSessionScope> for ElicitationScope {
    fn from(s: ElicitationSessionScope) -> Self {
        ElicitationScope::Session(s)
    }
}

impl From<ElicitationRequestScope> for ElicitationScope {
    fn from(s: ElicitationRequestScope) -> Self {
        ElicitationScope::Request(s)
    }
}

impl From<SessionId> for ElicitationScope {
    fn from(id: SessionId) -> Self {
        ElicitationScope::Session(ElicitationSessionScope::new(id))
    }
}

impl From<RequestId> for ElicitationScope {
    fn from(id: RequestId) -> Self {
        ElicitationScope::Request(ElicitationRequestScope::new(id))
    }
}

wire_struct! {
    /// An elicitation that belongs to a session, optionally to one of its tool calls
    /// (for example an MCP server asking for input during that tool call).
    pub struct ElicitationSessionScope {
        /// The session.
        pub session_id: SessionId = "sessionId" (Req),
        /// The tool call within the session, if any.
        pub tool_call_id: Option<ToolCallId> = "toolCallId" (Lenient),
    }
}

impl ElicitationSessionScope {
    /// Scoped to `session_id` as a whole.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        ElicitationSessionScope {
            session_id: session_id.into(),
            tool_call_id: None,
            extra: Default::default(),
        }
    }
}

setters!(ElicitationSessionScope { opt { tool_call_id: ToolCallId } });

wire_struct! {
    /// An elicitation that belongs to a JSON-RPC request made outside any session.
    pub struct ElicitationRequestScope {
        /// The id of the request being served.
        pub request_id: RequestId = "requestId" (Req),
    }
}

impl ElicitationRequestScope {
    /// Scoped to request `request_id`.
    pub fn new(request_id: impl Into<RequestId>) -> Self {
        ElicitationRequestScope {
            request_id: request_id.into(),
            extra: Default::default(),
        }
    }
}

wire_struct! {
    /// The result of `elicitation/create`: what the user did.
    ///
    /// On the wire the action's fields sit next to `_meta`:
    /// `{"action":"accept","content":{…}}`.
    pub struct CreateElicitationResponse {
        /// The user's answer (`action` and its fields).
        pub action: ElicitationAction = "" (Flatten),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl CreateElicitationResponse {
    /// A response carrying `action`.
    pub fn new(action: impl Into<ElicitationAction>) -> Self {
        CreateElicitationResponse {
            meta: None,
            action: action.into(),
            extra: Default::default(),
        }
    }

    /// The user accepted, providing `content` (for URL elicitations, usually none).
    pub fn accept(content: Option<OrderedMap<ElicitationContentValue>>) -> Self {
        Self::new(ElicitationAcceptAction {
            content,
            extra: Default::default(),
        })
    }

    /// The user declined.
    pub fn decline() -> Self {
        Self::new(ElicitationAction::Decline(TagOnly::new()))
    }

    /// The elicitation was cancelled (dismissed, or the turn ended).
    pub fn cancel() -> Self {
        Self::new(ElicitationAction::Cancel(TagOnly::new()))
    }
}

setters!(CreateElicitationResponse { opt { meta: Meta } });

tagged_union! {
    /// What the user did with an elicitation, tagged by `action`. An agent must not
    /// treat an unknown action as a known one.
    pub enum ElicitationAction: tag "action" {
        /// The user accepted and (for forms) filled in the fields.
        "accept" => Accept(ElicitationAcceptAction),
        /// The user said no.
        "decline" => Decline(TagOnly),
        /// The elicitation was dismissed without an answer.
        "cancel" => Cancel(TagOnly),
    }
}

impl From<ElicitationAcceptAction> for ElicitationAction {
    fn from(a: ElicitationAcceptAction) -> Self {
        ElicitationAction::Accept(a)
    }
}

wire_struct! {
    /// The user's answers when accepting an elicitation.
    #[derive(Default)]
    pub struct ElicitationAcceptAction {
        /// The answers, keyed by property name, matching the requested schema.
        pub content: Option<OrderedMap<ElicitationContentValue>> = "content" (Opt),
    }
}

impl ElicitationAcceptAction {
    /// Accepted without content.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ElicitationAcceptAction { opt { content: OrderedMap<ElicitationContentValue> } });

/// One answer in an accepted form: a string, an integer, a number, a boolean or
/// a list of strings (multi-select), told apart by JSON type.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ElicitationContentValue {
    /// A string answer (text, a single-select choice, a date, …).
    String(String),
    /// An integer answer.
    Integer(i64),
    /// A non-integer (or out-of-range integer) number.
    Number(f64),
    /// A yes/no answer.
    Boolean(bool),
    /// The choices of a multi-select.
    StringArray(Vec<String>),
}

impl<'de> Deserialize<'de> for ElicitationContentValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl V {
            fn wrong<E: serde::de::Error>(found: &str) -> Result<ElicitationContentValue, E> {
                Err(E::custom(format_args!(
                    "expected a string, number, boolean or list of strings, found {found}"
                )))
            }
        }
        impl<'de> Visitor<'de> for V {
            type Value = ElicitationContentValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, number, boolean or list of strings")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(ElicitationContentValue::String(s.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Self::Value, E> {
                Ok(ElicitationContentValue::String(s))
            }
            fn visit_bool<E: serde::de::Error>(self, b: bool) -> Result<Self::Value, E> {
                Ok(ElicitationContentValue::Boolean(b))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Self::Value, E> {
                Ok(ElicitationContentValue::Integer(n))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Self::Value, E> {
                Ok(match i64::try_from(n) {
                    Ok(i) => ElicitationContentValue::Integer(i),
                    Err(_) => ElicitationContentValue::Number(n as f64),
                })
            }
            fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Self::Value, E> {
                Ok(ElicitationContentValue::Number(n))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<String>()? {
                    items.push(item);
                }
                Ok(ElicitationContentValue::StringArray(items))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                V::wrong("null")
            }
            fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
                V::wrong("an object")
            }
        }
        d.deserialize_any(V)
    }
}

impl From<&str> for ElicitationContentValue {
    fn from(s: &str) -> Self {
        ElicitationContentValue::String(s.to_string())
    }
}

impl From<String> for ElicitationContentValue {
    fn from(s: String) -> Self {
        ElicitationContentValue::String(s)
    }
}

impl From<i64> for ElicitationContentValue {
    fn from(i: i64) -> Self {
        ElicitationContentValue::Integer(i)
    }
}

impl From<f64> for ElicitationContentValue {
    fn from(x: f64) -> Self {
        ElicitationContentValue::Number(x)
    }
}

impl From<bool> for ElicitationContentValue {
    fn from(b: bool) -> Self {
        ElicitationContentValue::Boolean(b)
    }
}

impl From<Vec<String>> for ElicitationContentValue {
    fn from(v: Vec<String>) -> Self {
        ElicitationContentValue::StringArray(v)
    }
}

wire_struct! {
    /// The `elicitation/complete` notification: a URL elicitation is done.
    pub struct CompleteElicitationNotification {
        /// The URL elicitation that finished.
        pub elicitation_id: ElicitationId = "elicitationId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl CompleteElicitationNotification {
    /// Elicitation `elicitation_id` finished.
    pub fn new(elicitation_id: impl Into<ElicitationId>) -> Self {
        CompleteElicitationNotification {
            elicitation_id: elicitation_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(CompleteElicitationNotification { opt { meta: Meta } });

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: Serialize + serde::de::DeserializeOwned + std::fmt::Debug>(text: &str) -> T {
        let v: T = crate::decode(text).unwrap();
        assert_eq!(serde_json::to_string(&v).unwrap(), text);
        v
    }

    #[test]
    fn form_request_round_trips_with_scope_and_order() {
        let text = r#"{"message":"Who are you?","mode":"form","requestedSchema":{"type":"object","properties":{"zname":{"type":"string","title":"Name","minLength":1},"age":{"type":"integer","minimum":0},"color":{"type":"string","oneOf":[{"const":"r","title":"Red"}]},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]},"default":["a"]},"picks":{"type":"array","items":{"anyOf":[{"const":"x","title":"X"}]}},"ok":{"type":"boolean","default":true},"ratio":{"type":"number","maximum":1.5},"rating":{"type":"_stars","max":5}},"required":["zname"]},"sessionId":"s1","toolCallId":"tc1"}"#;
        let req: CreateElicitationRequest = round_trip(text);
        let ElicitationMode::Form(form) = &req.mode else {
            panic!("not a form: {req:?}")
        };
        assert_eq!(
            form.scope,
            ElicitationScope::Session(ElicitationSessionScope::new("s1").tool_call_id("tc1"))
        );
        let names: Vec<&str> = form
            .requested_schema
            .properties
            .iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(
            names,
            [
                "zname", "age", "color", "tags", "picks", "ok", "ratio", "rating"
            ]
        );
        assert!(matches!(
            form.requested_schema.properties.get("picks"),
            Some(ElicitationPropertySchema::Array(
                MultiSelectPropertySchema {
                    items: MultiSelectItems::Titled(_),
                    ..
                }
            ))
        ));
        assert!(matches!(
            form.requested_schema.properties.get("rating"),
            Some(ElicitationPropertySchema::Other(_))
        ));

        let built = CreateElicitationRequest::form(
            "Who are you?",
            SessionId::new("s1"),
            ElicitationSchema::new()
                .required_property("zname", StringPropertySchema::new().title("Name"))
                .property("ok", BooleanPropertySchema::new().default_value(true)),
        );
        assert_eq!(
            serde_json::to_string(&built).unwrap(),
            r#"{"message":"Who are you?","mode":"form","requestedSchema":{"type":"object","properties":{"zname":{"type":"string","title":"Name"},"ok":{"type":"boolean","default":true}},"required":["zname"]},"sessionId":"s1"}"#
        );
    }

    #[test]
    fn url_and_unknown_modes() {
        let text = r#"{"message":"Sign in","mode":"url","elicitationId":"e1","url":"https://example.com/login","requestId":7,"_meta":{"a":1}}"#;
        let req: CreateElicitationRequest = round_trip(text);
        assert_eq!(
            req.mode,
            ElicitationMode::Url(ElicitationUrlMode::new(
                RequestId::Number(7),
                "e1",
                "https://example.com/login"
            ))
        );

        let other = r#"{"message":"Pay","mode":"_payment","sessionId":"s","amount":3}"#;
        let req: CreateElicitationRequest = round_trip(other);
        assert!(matches!(req.mode, ElicitationMode::Other(_)));

        let err = crate::decode::<CreateElicitationRequest>(
            r#"{"message":"m","mode":"url","elicitationId":"e","url":"u"}"#,
        )
        .unwrap_err();
        assert!(err.message.contains("sessionId"), "{err}");
        let err = crate::decode::<CreateElicitationRequest>(
            r#"{"message":"m","mode":"form","sessionId":"s","requestedSchema":{"properties":{"a":{"type":"string","minLength":-1}}}}"#,
        )
        .unwrap_err();
        assert_eq!(err.path, "requestedSchema.properties.a.minLength", "{err}");
    }

    #[test]
    fn schema_defaults() {
        let s: ElicitationSchema = crate::decode(r#"{"type":"weird"}"#).unwrap();
        assert_eq!(s.schema_type, ElicitationSchemaType::Other("weird".into()));
        let s: ElicitationSchema = crate::decode(r#"{"type":5}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"type":"object","properties":{}}"#
        );
    }

    #[test]
    fn responses() {
        let text = r#"{"action":"accept","content":{"name":"Ada","age":30,"ok":true,"ratio":0.5,"tags":["a","b"]}}"#;
        let resp: CreateElicitationResponse = round_trip(text);
        let ElicitationAction::Accept(accept) = &resp.action else {
            panic!("not accept: {resp:?}")
        };
        let content = accept.content.as_ref().unwrap();
        assert_eq!(
            content.keys().collect::<Vec<_>>(),
            ["name", "age", "ok", "ratio", "tags"]
        );
        assert_eq!(
            content.get("age"),
            Some(&ElicitationContentValue::Integer(30))
        );
        assert_eq!(
            content.get("ratio"),
            Some(&ElicitationContentValue::Number(0.5))
        );
        assert_eq!(
            content.get("tags"),
            Some(&ElicitationContentValue::StringArray(vec![
                "a".into(),
                "b".into()
            ]))
        );

        let big: ElicitationContentValue = crate::decode("18446744073709551615").unwrap();
        assert!(matches!(big, ElicitationContentValue::Number(_)));

        let resp: CreateElicitationResponse = round_trip(r#"{"action":"decline","_meta":{"x":1}}"#);
        assert!(matches!(resp.action, ElicitationAction::Decline(_)));
        assert_eq!(
            serde_json::to_string(&CreateElicitationResponse::cancel()).unwrap(),
            r#"{"action":"cancel"}"#
        );
        assert_eq!(
            serde_json::to_string(&CreateElicitationResponse::accept(None)).unwrap(),
            r#"{"action":"accept"}"#
        );
        let other: CreateElicitationResponse = round_trip(r#"{"action":"_later","when":"soon"}"#);
        assert!(matches!(other.action, ElicitationAction::Other(_)));

        let err = crate::decode::<CreateElicitationResponse>(
            r#"{"action":"accept","content":{"tags":["a",1]}}"#,
        )
        .unwrap_err();
        assert_eq!(err.path, "content.tags[1]", "{err}");
        assert!(
            crate::decode::<CreateElicitationResponse>(
                r#"{"action":"accept","content":{"x":null}}"#
            )
            .is_err()
        );
        assert!(crate::decode::<CreateElicitationResponse>(r#"{}"#).is_err());
    }
}
