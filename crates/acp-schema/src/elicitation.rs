//! Elicitation: the agent asks the user for structured input, either through a
//! form the client renders from a small JSON Schema or by sending the user to a
//! URL (`elicitation/create`, then `elicitation/complete` for URLs).
//!
//! Every elicitation is scoped either to a session (optionally a tool call in
//! it) or to a JSON-RPC request made outside any session; the scope's fields sit
//! next to the mode's fields on the wire.

use crate::util::{
    default_on_error, id_type, kind_of, meta, setters, skip_invalid_items_opt, string_enum,
    tagged_union,
};
use crate::{Meta, RequestId, SessionId, ToolCallId};
use serde::de::{Error as _, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::fmt;
use std::marker::PhantomData;

id_type!(
    /// Identifies a URL elicitation, so `elicitation/complete` can refer to it.
    ElicitationId
);

/// The `elicitation/create` request: ask the user for input (needs the matching
/// `elicitation` client capability).
///
/// On the wire the mode's fields (and its scope) sit next to `message`:
/// `{"message":…,"mode":"form","sessionId":…,"requestedSchema":{…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateElicitationRequest {
    /// What the user is asked for, in words.
    pub message: String,
    /// How the input is collected (`mode` and its fields, including the scope).
    #[serde(flatten)]
    pub mode: ElicitationMode,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl CreateElicitationRequest {
    /// Ask for input described by `message`, collected the way `mode` says.
    pub fn new(message: impl Into<String>, mode: impl Into<ElicitationMode>) -> Self {
        CreateElicitationRequest {
            message: message.into(),
            meta: None,
            mode: mode.into(),
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

/// A form elicitation: the client renders fields from `requestedSchema`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationFormMode {
    /// The fields to ask for.
    pub requested_schema: ElicitationSchema,
    /// What the elicitation belongs to (its fields sit next to `requestedSchema`).
    #[serde(flatten)]
    pub scope: ElicitationScope,
}

impl ElicitationFormMode {
    /// A form for `schema`, scoped to `scope`.
    pub fn new(scope: impl Into<ElicitationScope>, schema: ElicitationSchema) -> Self {
        ElicitationFormMode {
            requested_schema: schema,
            scope: scope.into(),
        }
    }
}

/// A URL elicitation: the user goes to a page (to sign in, pay, …) and the agent
/// reports completion with `elicitation/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationUrlMode {
    /// The elicitation's id, repeated in `elicitation/complete`.
    pub elicitation_id: ElicitationId,
    /// The page to send the user to.
    pub url: String,
    /// What the elicitation belongs to (its fields sit next to `url`).
    #[serde(flatten)]
    pub scope: ElicitationScope,
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

impl<'de> Deserialize<'de> for ElicitationScope {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = serde_json::Map::<String, Value>::deserialize(d)?;
        if map.contains_key("sessionId") {
            crate::util::nested(Value::Object(map)).map(ElicitationScope::Session)
        } else if map.contains_key("requestId") {
            crate::util::nested(Value::Object(map)).map(ElicitationScope::Request)
        } else {
            Err(D::Error::custom(
                "an elicitation needs either `sessionId` or `requestId`",
            ))
        }
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

/// An elicitation that belongs to a session, optionally to one of its tool calls
/// (for example an MCP server asking for input during that tool call).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationSessionScope {
    /// The session.
    pub session_id: SessionId,
    /// The tool call within the session, if any.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub tool_call_id: Option<ToolCallId>,
}

impl ElicitationSessionScope {
    /// Scoped to `session_id` as a whole.
    pub fn new(session_id: impl Into<SessionId>) -> Self {
        ElicitationSessionScope {
            session_id: session_id.into(),
            tool_call_id: None,
        }
    }
}

setters!(ElicitationSessionScope { opt { tool_call_id: ToolCallId } });

/// An elicitation that belongs to a JSON-RPC request made outside any session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationRequestScope {
    /// The id of the request being served.
    pub request_id: RequestId,
}

impl ElicitationRequestScope {
    /// Scoped to request `request_id`.
    pub fn new(request_id: impl Into<RequestId>) -> Self {
        ElicitationRequestScope {
            request_id: request_id.into(),
        }
    }
}

/// The result of `elicitation/create`: what the user did.
///
/// On the wire the action's fields sit next to `_meta`:
/// `{"action":"accept","content":{…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateElicitationResponse {
    /// The user's answer (`action` and its fields).
    #[serde(flatten)]
    pub action: ElicitationAction,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl CreateElicitationResponse {
    /// A response carrying `action`.
    pub fn new(action: impl Into<ElicitationAction>) -> Self {
        CreateElicitationResponse {
            meta: None,
            action: action.into(),
        }
    }

    /// The user accepted, providing `content` (for URL elicitations, usually none).
    pub fn accept(content: Option<OrderedMap<ElicitationContentValue>>) -> Self {
        Self::new(ElicitationAcceptAction { content })
    }

    /// The user declined.
    pub fn decline() -> Self {
        Self::new(ElicitationAction::Decline)
    }

    /// The elicitation was cancelled (dismissed, or the turn ended).
    pub fn cancel() -> Self {
        Self::new(ElicitationAction::Cancel)
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
        "decline" => Decline,
        /// The elicitation was dismissed without an answer.
        "cancel" => Cancel,
    }
}

impl From<ElicitationAcceptAction> for ElicitationAction {
    fn from(a: ElicitationAcceptAction) -> Self {
        ElicitationAction::Accept(a)
    }
}

/// The user's answers when accepting an elicitation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationAcceptAction {
    /// The answers, keyed by property name, matching the requested schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<OrderedMap<ElicitationContentValue>>,
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
        match Value::deserialize(d)? {
            Value::String(s) => Ok(ElicitationContentValue::String(s)),
            Value::Bool(b) => Ok(ElicitationContentValue::Boolean(b)),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Ok(ElicitationContentValue::Integer(i)),
                None => n
                    .as_f64()
                    .map(ElicitationContentValue::Number)
                    .ok_or_else(|| D::Error::custom("number out of range")),
            },
            items @ Value::Array(_) => {
                crate::util::nested(items).map(ElicitationContentValue::StringArray)
            }
            other => Err(D::Error::custom(format_args!(
                "expected a string, number, boolean or list of strings, found {}",
                kind_of(&other)
            ))),
        }
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

/// The `elicitation/complete` notification: a URL elicitation is done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompleteElicitationNotification {
    /// The URL elicitation that finished.
    pub elicitation_id: ElicitationId,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl CompleteElicitationNotification {
    /// Elicitation `elicitation_id` finished.
    pub fn new(elicitation_id: impl Into<ElicitationId>) -> Self {
        CompleteElicitationNotification {
            elicitation_id: elicitation_id.into(),
            meta: None,
        }
    }
}

setters!(CompleteElicitationNotification { opt { meta: Meta } });

/// The form of a form elicitation: a flat JSON Schema object whose properties
/// are primitive fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationSchema {
    /// Always `object`; always written.
    #[serde(rename = "type", default, deserialize_with = "default_on_error")]
    pub schema_type: ElicitationSchemaType,
    /// A title for the form.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub title: Option<String>,
    /// The fields, in display order; always written.
    #[serde(default)]
    pub properties: PropertyMap,
    /// Names of the fields the user must fill in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// What the form is for.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub description: Option<String>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl ElicitationSchema {
    /// An empty form.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the optional field `name`.
    #[must_use]
    pub fn property(
        mut self,
        name: impl Into<String>,
        schema: impl Into<ElicitationPropertySchema>,
    ) -> Self {
        self.properties.insert(name, schema);
        self
    }

    /// Adds (or replaces) the field `name` and lists it in `required`.
    #[must_use]
    pub fn required_property(
        mut self,
        name: impl Into<String>,
        schema: impl Into<ElicitationPropertySchema>,
    ) -> Self {
        let name = name.into();
        let required = self.required.get_or_insert_with(Vec::new);
        if !required.contains(&name) {
            required.push(name.clone());
        }
        self.properties.insert(name, schema);
        self
    }
}

setters!(ElicitationSchema {
    set { properties: PropertyMap }
    opt { title: String, required: Vec<String>, description: String, meta: Meta }
});

string_enum! {
    /// The `type` of an elicitation schema; only `object` exists (the default).
    #[derive(Default)]
    pub enum ElicitationSchemaType {
        /// An object schema.
        #[default]
        "object" => Object,
    }
}

/// The fields of a form, keyed by name, in display order.
pub type PropertyMap = OrderedMap<ElicitationPropertySchema>;

/// A JSON object with values of one type that keeps its keys in the order they
/// were received or inserted (form fields are shown in this order). A key that
/// occurs twice keeps its first position and its last value.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderedMap<V>(pub Vec<(String, V)>);

impl<V> Default for OrderedMap<V> {
    fn default() -> Self {
        OrderedMap(Vec::new())
    }
}

impl<V> OrderedMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Replaces the value under `key` in place, or appends the entry.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<V>) {
        let key = key.into();
        let value = value.into();
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }

    /// Removes and returns the value under `key`, keeping the others in order.
    pub fn remove(&mut self, key: &str) -> Option<V> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(i).1)
    }

    /// The entries in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<V, K: Into<String>, W: Into<V>> FromIterator<(K, W)> for OrderedMap<V> {
    fn from_iter<I: IntoIterator<Item = (K, W)>>(iter: I) -> Self {
        let mut map = OrderedMap::new();
        for (k, v) in iter {
            map.insert(k, v);
        }
        map
    }
}

impl<V> IntoIterator for OrderedMap<V> {
    type Item = (String, V);
    type IntoIter = std::vec::IntoIter<(String, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<V: Serialize> Serialize for OrderedMap<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for OrderedMap<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Vis<V>(PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Vis<V> {
            type Value = OrderedMap<V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<OrderedMap<V>, A::Error> {
                let mut map =
                    OrderedMap(Vec::with_capacity(access.size_hint().unwrap_or(0).min(64)));
                while let Some(key) = access.next_key::<String>()? {
                    let value = access.next_value::<V>()?;
                    match map.0.iter_mut().find(|(k, _)| *k == key) {
                        Some(slot) => slot.1 = value,
                        None => map.0.push((key, value)),
                    }
                }
                Ok(map)
            }
        }
        d.deserialize_map(Vis(PhantomData))
    }
}

tagged_union! {
    /// One form field, tagged by its JSON Schema `type`. A single-select is a
    /// `string` with `enum` or `oneOf`; a multi-select is an `array`.
    pub enum ElicitationPropertySchema: tag "type" {
        /// A text field, or a single-select when `enum`/`oneOf` is set.
        "string" => String(StringPropertySchema),
        /// A floating-point number field.
        "number" => Number(NumberPropertySchema),
        /// An integer field.
        "integer" => Integer(IntegerPropertySchema),
        /// A checkbox.
        "boolean" => Boolean(BooleanPropertySchema),
        /// A multi-select.
        "array" => Array(MultiSelectPropertySchema),
    }
}

impl From<StringPropertySchema> for ElicitationPropertySchema {
    fn from(s: StringPropertySchema) -> Self {
        ElicitationPropertySchema::String(s)
    }
}

impl From<NumberPropertySchema> for ElicitationPropertySchema {
    fn from(s: NumberPropertySchema) -> Self {
        ElicitationPropertySchema::Number(s)
    }
}

impl From<IntegerPropertySchema> for ElicitationPropertySchema {
    fn from(s: IntegerPropertySchema) -> Self {
        ElicitationPropertySchema::Integer(s)
    }
}

impl From<BooleanPropertySchema> for ElicitationPropertySchema {
    fn from(s: BooleanPropertySchema) -> Self {
        ElicitationPropertySchema::Boolean(s)
    }
}

impl From<MultiSelectPropertySchema> for ElicitationPropertySchema {
    fn from(s: MultiSelectPropertySchema) -> Self {
        ElicitationPropertySchema::Array(s)
    }
}

/// A text field, or a single-select when `enum` or `oneOf` is set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StringPropertySchema {
    /// The field's label.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub title: Option<String>,
    /// Help text for the field.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub description: Option<String>,
    /// The shortest allowed answer, in characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u32>,
    /// The longest allowed answer, in characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u32>,
    /// A regular expression the answer must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// A format the answer must have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// The pre-filled answer.
    #[serde(
        rename = "default",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub default_value: Option<String>,
    /// The choices of a single-select, without labels.
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<String>>,
    /// The choices of a single-select, with labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_of: Option<Vec<EnumOption>>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl StringPropertySchema {
    /// A free text field.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(StringPropertySchema {
    opt {
        title: String,
        description: String,
        min_length: u32,
        max_length: u32,
        pattern: String,
        format: StringFormat,
        default_value: String,
        enum_values: Vec<String>,
        one_of: Vec<EnumOption>,
        meta: Meta,
    }
});

/// A floating-point number field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NumberPropertySchema {
    /// The field's label.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub title: Option<String>,
    /// Help text for the field.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub description: Option<String>,
    /// The smallest allowed value (inclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    /// The largest allowed value (inclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// The pre-filled value.
    #[serde(
        rename = "default",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub default_value: Option<f64>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl NumberPropertySchema {
    /// An unbounded number field.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(NumberPropertySchema {
    opt {
        title: String,
        description: String,
        minimum: f64,
        maximum: f64,
        default_value: f64,
        meta: Meta,
    }
});

/// An integer field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct IntegerPropertySchema {
    /// The field's label.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub title: Option<String>,
    /// Help text for the field.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub description: Option<String>,
    /// The smallest allowed value (inclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<i64>,
    /// The largest allowed value (inclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<i64>,
    /// The pre-filled value.
    #[serde(
        rename = "default",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub default_value: Option<i64>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl IntegerPropertySchema {
    /// An unbounded integer field.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(IntegerPropertySchema {
    opt {
        title: String,
        description: String,
        minimum: i64,
        maximum: i64,
        default_value: i64,
        meta: Meta,
    }
});

/// A checkbox.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BooleanPropertySchema {
    /// The field's label.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub title: Option<String>,
    /// Help text for the field.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub description: Option<String>,
    /// The pre-filled value.
    #[serde(
        rename = "default",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub default_value: Option<bool>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl BooleanPropertySchema {
    /// A checkbox without a pre-filled value.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(BooleanPropertySchema {
    opt { title: String, description: String, default_value: bool, meta: Meta }
});

/// A multi-select field (`type: "array"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MultiSelectPropertySchema {
    /// The field's label.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub title: Option<String>,
    /// Help text for the field.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub description: Option<String>,
    /// The fewest choices the user must pick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// The most choices the user may pick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: MultiSelectItems,
    /// The pre-selected choices.
    #[serde(
        rename = "default",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "skip_invalid_items_opt"
    )]
    pub default_value: Option<Vec<String>>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl MultiSelectPropertySchema {
    /// A multi-select offering `items`.
    pub fn new(items: impl Into<MultiSelectItems>) -> Self {
        MultiSelectPropertySchema {
            title: None,
            description: None,
            min_items: None,
            max_items: None,
            items: items.into(),
            default_value: None,
            meta: None,
        }
    }
}

setters!(MultiSelectPropertySchema {
    opt {
        title: String,
        description: String,
        min_items: u64,
        max_items: u64,
        default_value: Vec<String>,
        meta: Meta,
    }
});

tagged_union! {
    /// The choices of a multi-select: plain strings (`type: "string"` with `enum`)
    /// or labelled options (no `type`, with `anyOf`).
    pub enum MultiSelectItems: tag "type" {
        /// Plain string choices.
        "string" => String(StringMultiSelectItems),
    }
    default
    /// Labelled choices (written without a `type`, as in MCP).
    Titled(TitledMultiSelectItems)
}

impl From<StringMultiSelectItems> for MultiSelectItems {
    fn from(i: StringMultiSelectItems) -> Self {
        MultiSelectItems::String(i)
    }
}

impl From<TitledMultiSelectItems> for MultiSelectItems {
    fn from(i: TitledMultiSelectItems) -> Self {
        MultiSelectItems::Titled(i)
    }
}

/// Plain string choices of a multi-select.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StringMultiSelectItems {
    /// The choices.
    #[serde(rename = "enum")]
    pub enum_values: Vec<String>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl StringMultiSelectItems {
    /// The choices `enum_values`.
    pub fn new(enum_values: impl Into<Vec<String>>) -> Self {
        StringMultiSelectItems {
            enum_values: enum_values.into(),
            meta: None,
        }
    }
}

setters!(StringMultiSelectItems { opt { meta: Meta } });

/// Labelled choices of a multi-select.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledMultiSelectItems {
    /// The choices.
    pub any_of: Vec<EnumOption>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl TitledMultiSelectItems {
    /// The choices `any_of`.
    pub fn new(any_of: impl Into<Vec<EnumOption>>) -> Self {
        TitledMultiSelectItems {
            any_of: any_of.into(),
            meta: None,
        }
    }
}

setters!(TitledMultiSelectItems { opt { meta: Meta } });

/// A labelled choice: the value sent back (`const`) and the label shown (`title`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EnumOption {
    /// The value sent back when this choice is picked.
    #[serde(rename = "const")]
    pub value: String,
    /// The label to show.
    pub title: String,
    /// Help text for the choice.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub description: Option<String>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl EnumOption {
    /// Choice `value` labelled `title`.
    pub fn new(value: impl Into<String>, title: impl Into<String>) -> Self {
        EnumOption {
            value: value.into(),
            title: title.into(),
            description: None,
            meta: None,
        }
    }
}

setters!(EnumOption { opt { description: String, meta: Meta } });

string_enum! {
    /// A format a string field's answer must have.
    pub enum StringFormat {
        /// An email address.
        "email" => Email,
        /// A URI.
        "uri" => Uri,
        /// A date (`YYYY-MM-DD`).
        "date" => Date,
        /// A date and time (ISO 8601).
        "date-time" => DateTime,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: Serialize + serde::de::DeserializeOwned + fmt::Debug>(text: &str) -> T {
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
        assert_eq!(resp.action, ElicitationAction::Decline);
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
