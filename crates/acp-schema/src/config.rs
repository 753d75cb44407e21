//! Session config options: settings an agent exposes per session (model,
//! reasoning level, mode, any custom toggle), shown by the client as dropdowns or
//! switches and changed with `session/set_config_option`.

use crate::util::{
    default_on_error, id_type, meta, setters, skip_invalid_items, string_enum, tagged_union,
};
use crate::{Meta, SessionId};
use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

id_type!(
    /// Identifies a session config option.
    SessionConfigId
);

id_type!(
    /// Identifies one value of a select config option.
    SessionConfigValueId
);

id_type!(
    /// Identifies a group of values of a select config option.
    SessionConfigGroupId
);

/// A config option of a session and its current value.
///
/// The common fields sit next to the kind-specific ones on the wire:
/// `{"id":…,"name":…,"type":"select","currentValue":…,"options":[…]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionConfigOption {
    /// The option's id, used in `session/set_config_option`.
    pub id: SessionConfigId,
    /// A label to show the user.
    pub name: String,
    /// More detail to show the user.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub description: Option<String>,
    /// What the option is about, so clients can place or shortcut it (UX only).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub category: Option<SessionConfigOptionCategory>,
    /// The kind of control and its state (`type` plus its fields).
    #[serde(flatten)]
    pub kind: SessionConfigKind,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl SessionConfigOption {
    /// An option `id` labelled `name` of the given kind.
    pub fn new(
        id: impl Into<SessionConfigId>,
        name: impl Into<String>,
        kind: impl Into<SessionConfigKind>,
    ) -> Self {
        SessionConfigOption {
            id: id.into(),
            name: name.into(),
            description: None,
            category: None,
            meta: None,
            kind: kind.into(),
        }
    }

    /// A dropdown `id` labelled `name`, currently at `current`, offering `options`.
    pub fn select(
        id: impl Into<SessionConfigId>,
        name: impl Into<String>,
        current: impl Into<SessionConfigValueId>,
        options: impl Into<SessionConfigSelectOptions>,
    ) -> Self {
        Self::new(id, name, SessionConfigSelect::new(current, options))
    }

    /// An on/off switch `id` labelled `name`, currently `current`.
    pub fn boolean(id: impl Into<SessionConfigId>, name: impl Into<String>, current: bool) -> Self {
        Self::new(id, name, SessionConfigBoolean::new(current))
    }
}

setters!(SessionConfigOption {
    opt { description: String, category: SessionConfigOptionCategory, meta: Meta }
});

tagged_union! {
    /// The kind of a config option, tagged by `type`.
    pub enum SessionConfigKind: tag "type" {
        /// A dropdown with one selected value.
        "select" => Select(SessionConfigSelect),
        /// An on/off switch (clients advertise support with
        /// `session.configOptions.boolean`).
        "boolean" => Boolean(SessionConfigBoolean),
    }
}

impl From<SessionConfigSelect> for SessionConfigKind {
    fn from(s: SessionConfigSelect) -> Self {
        SessionConfigKind::Select(s)
    }
}

impl From<SessionConfigBoolean> for SessionConfigKind {
    fn from(b: SessionConfigBoolean) -> Self {
        SessionConfigKind::Boolean(b)
    }
}

/// The state of a dropdown option.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionConfigSelect {
    /// The selected value.
    pub current_value: SessionConfigValueId,
    /// The values to choose from, flat or grouped.
    pub options: SessionConfigSelectOptions,
}

impl SessionConfigSelect {
    /// Currently at `current_value`, offering `options`.
    pub fn new(
        current_value: impl Into<SessionConfigValueId>,
        options: impl Into<SessionConfigSelectOptions>,
    ) -> Self {
        SessionConfigSelect {
            current_value: current_value.into(),
            options: options.into(),
        }
    }
}

/// The state of an on/off option.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionConfigBoolean {
    /// Whether the switch is on.
    pub current_value: bool,
}

impl SessionConfigBoolean {
    /// Currently `current_value`.
    pub fn new(current_value: bool) -> Self {
        SessionConfigBoolean { current_value }
    }
}

/// One value a dropdown offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionConfigSelectOption {
    /// The value's id, sent back in `session/set_config_option`.
    pub value: SessionConfigValueId,
    /// A label to show the user.
    pub name: String,
    /// More detail to show the user.
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

impl SessionConfigSelectOption {
    /// Value `value` labelled `name`.
    pub fn new(value: impl Into<SessionConfigValueId>, name: impl Into<String>) -> Self {
        SessionConfigSelectOption {
            value: value.into(),
            name: name.into(),
            description: None,
            meta: None,
        }
    }
}

setters!(SessionConfigSelectOption { opt { description: String, meta: Meta } });

/// A labelled group of dropdown values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SessionConfigSelectGroup {
    /// The group's id.
    pub group: SessionConfigGroupId,
    /// A header to show the user.
    pub name: String,
    /// The values in the group (malformed ones are dropped).
    #[serde(deserialize_with = "skip_invalid_items")]
    pub options: Vec<SessionConfigSelectOption>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl SessionConfigSelectGroup {
    /// Group `group` headed `name`, holding `options`.
    pub fn new(
        group: impl Into<SessionConfigGroupId>,
        name: impl Into<String>,
        options: impl Into<Vec<SessionConfigSelectOption>>,
    ) -> Self {
        SessionConfigSelectGroup {
            group: group.into(),
            name: name.into(),
            options: options.into(),
            meta: None,
        }
    }
}

setters!(SessionConfigSelectGroup { opt { meta: Meta } });

/// The values of a dropdown: a flat list, or a list of groups. On the wire both
/// are arrays; the items tell them apart (groups have a `group` key). An empty
/// array is a flat list.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum SessionConfigSelectOptions {
    /// A flat list of values.
    Ungrouped(Vec<SessionConfigSelectOption>),
    /// Values under group headers.
    Grouped(Vec<SessionConfigSelectGroup>),
}

impl SessionConfigSelectOptions {
    /// Every value, in order, whether grouped or not.
    pub fn iter(&self) -> impl Iterator<Item = &SessionConfigSelectOption> {
        let (flat, groups): (&[SessionConfigSelectOption], &[SessionConfigSelectGroup]) = match self
        {
            SessionConfigSelectOptions::Ungrouped(v) => (v, &[]),
            SessionConfigSelectOptions::Grouped(g) => (&[], g),
        };
        flat.iter()
            .chain(groups.iter().flat_map(|g| g.options.iter()))
    }
}

impl<'de> Deserialize<'de> for SessionConfigSelectOptions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items = Vec::<Value>::deserialize(d)?;
        let grouped = items
            .first()
            .and_then(Value::as_object)
            .is_some_and(|first| first.contains_key("group"));
        if grouped {
            crate::util::nested(Value::Array(items)).map(SessionConfigSelectOptions::Grouped)
        } else {
            crate::util::nested(Value::Array(items)).map(SessionConfigSelectOptions::Ungrouped)
        }
    }
}

impl From<Vec<SessionConfigSelectOption>> for SessionConfigSelectOptions {
    fn from(v: Vec<SessionConfigSelectOption>) -> Self {
        SessionConfigSelectOptions::Ungrouped(v)
    }
}

impl From<Vec<SessionConfigSelectGroup>> for SessionConfigSelectOptions {
    fn from(v: Vec<SessionConfigSelectGroup>) -> Self {
        SessionConfigSelectOptions::Grouped(v)
    }
}

string_enum! {
    /// What a config option is about, for UX only. Names starting with `_` are
    /// free for custom categories.
    pub enum SessionConfigOptionCategory {
        /// Picks the session mode.
        "mode" => Mode,
        /// Picks the model.
        "model" => Model,
        /// Tunes the model (temperature, context size, …).
        "model_config" => ModelConfig,
        /// Picks the thinking / reasoning level.
        "thought_level" => ThoughtLevel,
    }
}

/// The `session/set_config_option` request: change one config option.
///
/// The value sits next to the ids on the wire: `{"sessionId":…,"configId":…,
/// "value":"fast"}` for a select option, or `{…,"type":"boolean","value":true}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SetSessionConfigOptionRequest {
    /// The session to change.
    pub session_id: SessionId,
    /// The option to change.
    pub config_id: SessionConfigId,
    /// The new value (`value`, and `type` for a boolean).
    #[serde(flatten)]
    pub value: SessionConfigValue,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl SetSessionConfigOptionRequest {
    /// Set option `config_id` of `session_id` to `value` (a `bool` or a value id).
    pub fn new(
        session_id: impl Into<SessionId>,
        config_id: impl Into<SessionConfigId>,
        value: impl Into<SessionConfigValue>,
    ) -> Self {
        SetSessionConfigOptionRequest {
            session_id: session_id.into(),
            config_id: config_id.into(),
            meta: None,
            value: value.into(),
        }
    }
}

setters!(SetSessionConfigOptionRequest { opt { meta: Meta } });

/// A new value for a config option.
///
/// On the wire `{"type":"boolean","value":true}` is a boolean and `{"value":"id"}`
/// (no `type`) is a value id. An unknown `type` with a string `value` also reads
/// as a value id (and is written back without `type`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SessionConfigValue {
    /// A value of a select option.
    ValueId(SessionConfigValueId),
    /// A value of a boolean option.
    Boolean(bool),
}

impl From<bool> for SessionConfigValue {
    fn from(b: bool) -> Self {
        SessionConfigValue::Boolean(b)
    }
}

impl From<&str> for SessionConfigValue {
    fn from(s: &str) -> Self {
        SessionConfigValue::ValueId(s.into())
    }
}

impl From<String> for SessionConfigValue {
    fn from(s: String) -> Self {
        SessionConfigValue::ValueId(s.into())
    }
}

impl From<SessionConfigValueId> for SessionConfigValue {
    fn from(id: SessionConfigValueId) -> Self {
        SessionConfigValue::ValueId(id)
    }
}

impl Serialize for SessionConfigValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SessionConfigValue::ValueId(id) => {
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry("value", id)?;
                map.end()
            }
            SessionConfigValue::Boolean(b) => {
                let mut map = s.serialize_map(Some(2))?;
                map.serialize_entry("type", "boolean")?;
                map.serialize_entry("value", b)?;
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for SessionConfigValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct BoolValue {
            value: bool,
        }
        #[derive(Deserialize)]
        struct IdValue {
            value: SessionConfigValueId,
        }
        let map = serde_json::Map::<String, Value>::deserialize(d)?;
        let tag = crate::util::take_tag::<D::Error>(&map, "type")?;
        if !map.contains_key("value") {
            return Err(D::Error::missing_field("value"));
        }
        match tag.as_deref() {
            Some("boolean") => crate::util::nested::<BoolValue, D::Error>(Value::Object(map))
                .map(|v| SessionConfigValue::Boolean(v.value)),
            _ => crate::util::nested::<IdValue, D::Error>(Value::Object(map))
                .map(|v| SessionConfigValue::ValueId(v.value)),
        }
    }
}

/// The result of `session/set_config_option`: every option with its value now
/// (changing one may change others).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SetSessionConfigOptionResponse {
    /// All of the session's config options (malformed ones are dropped).
    #[serde(deserialize_with = "skip_invalid_items")]
    pub config_options: Vec<SessionConfigOption>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl SetSessionConfigOptionResponse {
    /// The full option list after the change.
    pub fn new(config_options: impl Into<Vec<SessionConfigOption>>) -> Self {
        SetSessionConfigOptionResponse {
            config_options: config_options.into(),
            meta: None,
        }
    }
}

setters!(SetSessionConfigOptionResponse { opt { meta: Meta } });

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: Serialize + serde::de::DeserializeOwned + std::fmt::Debug + PartialEq>(
        text: &str,
    ) -> T {
        let v: T = crate::decode(text).unwrap();
        assert_eq!(serde_json::to_string(&v).unwrap(), text);
        v
    }

    #[test]
    fn select_option_flat_and_grouped() {
        let flat = r#"{"id":"model","name":"Model","category":"model","type":"select","currentValue":"fast","options":[{"value":"fast","name":"Fast"},{"value":"smart","name":"Smart","description":"Slower"}]}"#;
        let o: SessionConfigOption = round_trip(flat);
        let SessionConfigKind::Select(s) = &o.kind else {
            panic!("not a select: {o:?}")
        };
        assert!(matches!(
            s.options,
            SessionConfigSelectOptions::Ungrouped(_)
        ));
        assert_eq!(o.category, Some(SessionConfigOptionCategory::Model));
        assert_eq!(
            o,
            SessionConfigOption::select(
                "model",
                "Model",
                "fast",
                vec![
                    SessionConfigSelectOption::new("fast", "Fast"),
                    SessionConfigSelectOption::new("smart", "Smart").description("Slower"),
                ],
            )
            .category(SessionConfigOptionCategory::Model)
        );

        let grouped = r#"{"id":"m","name":"M","type":"select","currentValue":"a","options":[{"group":"g1","name":"One","options":[{"value":"a","name":"A"}]},{"group":"g2","name":"Two","options":[]}]}"#;
        let o: SessionConfigOption = round_trip(grouped);
        let SessionConfigKind::Select(s) = &o.kind else {
            panic!("not a select: {o:?}")
        };
        assert!(matches!(s.options, SessionConfigSelectOptions::Grouped(_)));
        assert_eq!(s.options.iter().count(), 1);

        let empty = r#"{"id":"m","name":"M","type":"select","currentValue":"a","options":[]}"#;
        let o: SessionConfigOption = round_trip(empty);
        assert!(matches!(
            o.kind,
            SessionConfigKind::Select(SessionConfigSelect {
                options: SessionConfigSelectOptions::Ungrouped(_),
                ..
            })
        ));
    }

    #[test]
    fn boolean_and_unknown_kinds() {
        let b = r#"{"id":"web","name":"Web search","type":"boolean","currentValue":true,"_meta":{"k":1}}"#;
        let o: SessionConfigOption = round_trip(b);
        assert_eq!(
            o,
            SessionConfigOption::boolean("web", "Web search", true)
                .meta(serde_json::from_str::<Meta>(r#"{"k":1}"#).unwrap())
        );

        let other =
            r#"{"id":"t","name":"Temp","type":"_slider","min":0,"max":2,"currentValue":0.7}"#;
        let o: SessionConfigOption = round_trip(other);
        let SessionConfigKind::Other(map) = &o.kind else {
            panic!("not other: {o:?}")
        };
        assert_eq!(map.len(), 4);

        let err = crate::decode::<SessionConfigOption>(r#"{"id":"x","name":"X"}"#).unwrap_err();
        assert!(err.message.contains("type"), "{err}");
        let err = crate::decode::<SessionConfigOption>(
            r#"{"id":"x","name":"X","type":"boolean","currentValue":"yes"}"#,
        )
        .unwrap_err();
        assert_eq!(err.path, "currentValue", "{err}");
    }

    #[test]
    fn set_config_option_values() {
        let id = r#"{"sessionId":"s","configId":"model","value":"fast"}"#;
        let r: SetSessionConfigOptionRequest = round_trip(id);
        assert_eq!(r, SetSessionConfigOptionRequest::new("s", "model", "fast"));

        let b = r#"{"sessionId":"s","configId":"web","type":"boolean","value":false}"#;
        let r: SetSessionConfigOptionRequest = round_trip(b);
        assert_eq!(r, SetSessionConfigOptionRequest::new("s", "web", false));

        let unknown: SetSessionConfigOptionRequest =
            crate::decode(r#"{"sessionId":"s","configId":"c","type":"_x","value":"v"}"#).unwrap();
        assert_eq!(unknown.value, SessionConfigValue::from("v"));

        for bad in [
            r#"{"sessionId":"s","configId":"c","type":"boolean","value":"yes"}"#,
            r#"{"sessionId":"s","configId":"c","value":3}"#,
            r#"{"sessionId":"s","configId":"c","type":"_x","value":[1]}"#,
        ] {
            let err = crate::decode::<SetSessionConfigOptionRequest>(bad).unwrap_err();
            assert_eq!(err.path, "value", "{bad}: {err}");
        }
        let err =
            crate::decode::<SetSessionConfigOptionRequest>(r#"{"sessionId":"s","configId":"c"}"#)
                .unwrap_err();
        assert!(err.message.contains("value"), "{err}");
    }

    #[test]
    fn select_options_error_paths() {
        let err = crate::decode::<SessionConfigSelectOptions>(
            r#"[{"value":"a","name":"A"},{"value":"b"}]"#,
        )
        .unwrap_err();
        assert!(err.path.starts_with("[1]"), "{err:?}");
    }
}
