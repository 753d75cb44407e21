//! Elicitation in v2: the same request as v1 (its modes and scopes are v1's
//! types), and an answer whose values may be any JSON.

use super::same_params;
use crate::util::{setters, tagged_union, wire_struct};
use crate::{ElicitationMode, Meta, OrderedMap, RawJson, TagOnly};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

wire_struct! {
    /// Params of `elicitation/create`: ask the user for input (needs the matching
    /// `elicitation` client capability). The mode's fields and its scope sit
    /// next to `message`.
    pub struct CreateElicitationRequest {
        /// What the user is asked for, in words.
        pub message: String = "message" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
        /// How the input is collected (`mode` and its fields, with the scope).
        pub mode: ElicitationMode = "" (Flatten),
    }
}

impl CreateElicitationRequest {
    /// Asks for input described by `message`, collected the way `mode` says.
    pub fn new(message: impl Into<String>, mode: impl Into<ElicitationMode>) -> Self {
        CreateElicitationRequest {
            message: message.into(),
            meta: None,
            mode: mode.into(),
            extra: Default::default(),
        }
    }
}

setters!(CreateElicitationRequest { opt { meta: Meta } });

wire_struct! {
    /// The result of `elicitation/create`: what the user did. The action's
    /// fields sit next to `_meta`.
    pub struct CreateElicitationResponse {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
        /// The user's answer (`action` and its fields).
        pub action: ElicitationAction = "" (Flatten),
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

    /// The user accepted, giving `content` (none for a URL elicitation).
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

    /// The elicitation was dismissed without an answer.
    pub fn cancel() -> Self {
        Self::new(ElicitationAction::Cancel(TagOnly::new()))
    }
}

setters!(CreateElicitationResponse { opt { meta: Meta } });

tagged_union! {
    /// What the user did with an elicitation, tagged by `action`. An agent must
    /// not take an action it does not know for a known one.
    pub enum ElicitationAction: tag "action" {
        /// The user accepted and (for forms) filled in the fields.
        "accept" => Accept(ElicitationAcceptAction),
        /// The user said no.
        "decline" => Decline(TagOnly),
        /// The elicitation was dismissed.
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
        /// The answers by property name.
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

/// One answer of an accepted form: a string, an integer, a number, a boolean,
/// a list of strings, or (v2 allows it) any other JSON value, kept as received.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitationContentValue {
    /// A string answer.
    String(String),
    /// An integer answer.
    Integer(i64),
    /// A non-integer (or out-of-range integer) number.
    Number(f64),
    /// A yes/no answer.
    Boolean(bool),
    /// The choices of a multi-select.
    StringArray(Vec<String>),
    /// Any other value (`null`, an object, a mixed list), kept as received.
    Other(RawJson),
}

impl Serialize for ElicitationContentValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ElicitationContentValue::String(v) => v.serialize(s),
            ElicitationContentValue::Integer(v) => v.serialize(s),
            ElicitationContentValue::Number(v) => v.serialize(s),
            ElicitationContentValue::Boolean(v) => v.serialize(s),
            ElicitationContentValue::StringArray(v) => v.serialize(s),
            ElicitationContentValue::Other(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ElicitationContentValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawJson::deserialize(d)?;
        let text = raw.get();
        let value = match text.as_bytes().first() {
            Some(b'"') => raw.decode().ok().map(ElicitationContentValue::String),
            Some(b't' | b'f') => raw.decode().ok().map(ElicitationContentValue::Boolean),
            Some(b'[') => raw.decode().ok().map(ElicitationContentValue::StringArray),
            Some(b'-' | b'0'..=b'9') => raw
                .decode::<i64>()
                .map(ElicitationContentValue::Integer)
                .or_else(|_| raw.decode::<f64>().map(ElicitationContentValue::Number))
                .ok(),
            _ => None,
        };
        Ok(value.unwrap_or(ElicitationContentValue::Other(raw)))
    }
}

impl crate::util::wire::Tolerant for ElicitationContentValue {
    fn tolerant<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        Self::deserialize(d).map(Some)
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
    fn from(n: i64) -> Self {
        ElicitationContentValue::Integer(n)
    }
}

impl From<f64> for ElicitationContentValue {
    fn from(n: f64) -> Self {
        ElicitationContentValue::Number(n)
    }
}

impl From<bool> for ElicitationContentValue {
    fn from(b: bool) -> Self {
        ElicitationContentValue::Boolean(b)
    }
}

impl From<Vec<String>> for ElicitationContentValue {
    fn from(items: Vec<String>) -> Self {
        ElicitationContentValue::StringArray(items)
    }
}

same_params!(
    /// Params of `elicitation/complete`: v1's, unchanged (tells the client that
    /// a URL elicitation has finished).
    CompleteElicitationNotification => crate::CompleteElicitationNotification, new(elicitation_id: crate::ElicitationId)
);
