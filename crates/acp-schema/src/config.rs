//! Session config options: settings an agent exposes per session (model,
//! reasoning level, mode, any custom toggle), shown by the client as dropdowns or
//! switches and changed with `session/set_config_option`.

use crate::util::wire::{Entries, Flat, TagValue, marked, nested_at};
use crate::util::{id_type, setters, string_enum, tagged_union, wire_struct};
use crate::{Meta, RawJson, SessionId};
use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

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

wire_struct! {
    /// A config option of a session and its current value.
    ///
    /// The common fields sit next to the kind-specific ones on the wire:
    /// `{"id":…,"name":…,"type":"select","currentValue":…,"options":[…]}`.
    pub struct SessionConfigOption {
        /// The option's id, used in `session/set_config_option`.
        pub id: SessionConfigId = "id" (Req),
        /// A label to show the user.
        pub name: String = "name" (Req),
        /// More detail to show the user.
        pub description: Option<String> = "description" (Lenient),
        /// What the option is about, so clients can place or shortcut it (UX only).
        pub category: Option<SessionConfigOptionCategory> = "category" (Lenient),
        /// The kind of control and its state (`type` plus its fields).
        pub kind: SessionConfigKind = "" (Flatten),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
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
            extra: Default::default(),
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

wire_struct! {
    /// The state of a dropdown option.
    pub struct SessionConfigSelect {
        /// The selected value.
        pub current_value: SessionConfigValueId = "currentValue" (Req),
        /// The values to choose from, flat or grouped.
        pub options: SessionConfigSelectOptions = "options" (Req),
    }
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
            extra: Default::default(),
        }
    }
}

wire_struct! {
    /// The state of an on/off option.
    pub struct SessionConfigBoolean {
        /// Whether the switch is on.
        pub current_value: bool = "currentValue" (Req),
    }
}

impl SessionConfigBoolean {
    /// Currently `current_value`.
    pub fn new(current_value: bool) -> Self {
        SessionConfigBoolean {
            current_value,
            extra: Default::default(),
        }
    }
}

wire_struct! {
    /// One value a dropdown offers.
    pub struct SessionConfigSelectOption {
        /// The value's id, sent back in `session/set_config_option`.
        pub value: SessionConfigValueId = "value" (Req),
        /// A label to show the user.
        pub name: String = "name" (Req),
        /// More detail to show the user.
        pub description: Option<String> = "description" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionConfigSelectOption {
    /// Value `value` labelled `name`.
    pub fn new(value: impl Into<SessionConfigValueId>, name: impl Into<String>) -> Self {
        SessionConfigSelectOption {
            value: value.into(),
            name: name.into(),
            description: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(SessionConfigSelectOption { opt { description: String, meta: Meta } });

wire_struct! {
    /// A labelled group of dropdown values.
    pub struct SessionConfigSelectGroup {
        /// The group's id.
        pub group: SessionConfigGroupId = "group" (Req),
        /// A header to show the user.
        pub name: String = "name" (Req),
        /// The values in the group (malformed ones are dropped).
        pub options: Vec<SessionConfigSelectOption> = "options" (ItemsReq),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
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
            extra: Default::default(),
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
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SessionConfigSelectOptions;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<SessionConfigSelectOptions, A::Error> {
                // The first item tells the two apart: groups have a `group` key.
                let Some(first) = seq.next_element::<RawJson>()? else {
                    return Ok(SessionConfigSelectOptions::Ungrouped(Vec::new()));
                };
                let grouped = first.is_object()
                    && first
                        .decode::<crate::RawObject>()
                        .is_ok_and(|o| o.contains_key("group"));
                if grouped {
                    let mut items = vec![nested_at("[0]", first.get())?];
                    while let Some(item) = seq.next_element()? {
                        items.push(item);
                    }
                    Ok(SessionConfigSelectOptions::Grouped(items))
                } else {
                    let mut items = vec![nested_at("[0]", first.get())?];
                    while let Some(item) = seq.next_element()? {
                        items.push(item);
                    }
                    Ok(SessionConfigSelectOptions::Ungrouped(items))
                }
            }
        }
        d.deserialize_seq(V)
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

wire_struct! {
    /// The `session/set_config_option` request: change one config option.
    ///
    /// The value sits next to the ids on the wire: `{"sessionId":…,"configId":…,
    /// "value":"fast"}` for a select option, or `{…,"type":"boolean","value":true}`.
    pub struct SetSessionConfigOptionRequest {
        /// The session to change.
        pub session_id: SessionId = "sessionId" (Req),
        /// The option to change.
        pub config_id: SessionConfigId = "configId" (Req),
        /// The new value (`value`, and `type` for a boolean).
        pub value: SessionConfigValue = "" (Flatten),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
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
            extra: Default::default(),
        }
    }
}

setters!(SetSessionConfigOptionRequest { opt { meta: Meta } });

/// A new value for a config option.
///
/// On the wire `{"type":"boolean","value":true}` is a boolean and `{"value":"id"}`
/// (no `type`) is a value id. An unknown `type` with a string `value` also reads
/// as a value id; the unknown `type` is kept with the request's other unknown
/// members and written back.
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

impl Flat for SessionConfigValue {
    fn take<E: serde::de::Error>(rest: &mut Entries) -> Result<Self, E> {
        let tag = match rest.iter().position(|(k, _)| k == "type") {
            None => None,
            Some(i) => {
                let mut de = serde_json::Deserializer::from_str(rest[i].1.get());
                match TagValue::deserialize(&mut de) {
                    Ok(TagValue::Str(s)) => Some(s.as_str().to_owned()),
                    Ok(TagValue::Null) => None,
                    Err(e) => return Err(marked("type", &e.to_string())),
                }
            }
        };
        let Some(at) = rest.iter().position(|(k, _)| k == "value") else {
            return Err(E::missing_field("value"));
        };
        let value = if tag.as_deref() == Some("boolean") {
            SessionConfigValue::Boolean(nested_at("value", rest[at].1.get())?)
        } else {
            SessionConfigValue::ValueId(nested_at("value", rest[at].1.get())?)
        };
        // `value` is ours; so is `type` when it is `boolean` or `null`. An
        // unknown `type` stays with the struct's other unknown members.
        let drop_type = matches!(tag.as_deref(), None | Some("boolean"));
        rest.retain(|(k, _)| k != "value" && !(drop_type && k == "type"));
        Ok(value)
    }

    fn write_flat<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        match self {
            SessionConfigValue::ValueId(id) => map.serialize_entry("value", id),
            SessionConfigValue::Boolean(b) => {
                map.serialize_entry("type", "boolean")?;
                map.serialize_entry("value", b)
            }
        }
    }
}

impl Serialize for SessionConfigValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        self.write_flat(&mut map)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for SessionConfigValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut rest = crate::RawObject::deserialize(d)?.into_vec();
        Self::take(&mut rest)
    }
}

wire_struct! {
    /// The result of `session/set_config_option`: every option with its value now
    /// (changing one may change others).
    pub struct SetSessionConfigOptionResponse {
        /// All of the session's config options (malformed ones are dropped).
        pub config_options: Vec<SessionConfigOption> = "configOptions" (ItemsReq),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SetSessionConfigOptionResponse {
    /// The full option list after the change.
    pub fn new(config_options: impl Into<Vec<SessionConfigOption>>) -> Self {
        SetSessionConfigOptionResponse {
            config_options: config_options.into(),
            meta: None,
            extra: Default::default(),
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
