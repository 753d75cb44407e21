//! Session config options in v2: v1's, with `configId`/`groupId` for the ids,
//! and a set request whose value always carries its `type`. Modes are config
//! options of category `mode` (v2 has no `session/set_mode`).

use crate::util::wire::nested_at;
use crate::util::{setters, tagged_union, wire_struct};
use crate::{
    Meta, RawJson, SessionConfigBoolean, SessionConfigGroupId, SessionConfigId,
    SessionConfigOptionCategory, SessionConfigSelectOption, SessionConfigValueId, SessionId,
};
use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

wire_struct! {
    /// A config option of a session and its current value. The kind's fields
    /// sit next to the common ones.
    pub struct SessionConfigOption {
        /// The option's id, used in `session/set_config_option`.
        pub config_id: SessionConfigId = "configId" (Req),
        /// A label to show the user.
        pub name: String = "name" (Req),
        /// More detail to show the user.
        pub description: Option<String> = "description" (Lenient),
        /// What the option is about (UX only; clients tolerate unknown ones).
        pub category: Option<SessionConfigOptionCategory> = "category" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
        /// The kind of control and its state (`type` and its fields).
        pub kind: SessionConfigKind = "" (Flatten),
    }
}

impl SessionConfigOption {
    /// An option `config_id` labelled `name` of the given kind.
    pub fn new(
        config_id: impl Into<SessionConfigId>,
        name: impl Into<String>,
        kind: impl Into<SessionConfigKind>,
    ) -> Self {
        SessionConfigOption {
            config_id: config_id.into(),
            name: name.into(),
            description: None,
            category: None,
            meta: None,
            kind: kind.into(),
            extra: Default::default(),
        }
    }

    /// A dropdown `config_id` labelled `name`, at `current`, offering `options`.
    pub fn select(
        config_id: impl Into<SessionConfigId>,
        name: impl Into<String>,
        current: impl Into<SessionConfigValueId>,
        options: impl Into<SessionConfigSelectOptions>,
    ) -> Self {
        Self::new(config_id, name, SessionConfigSelect::new(current, options))
    }

    /// A switch `config_id` labelled `name`, currently `current`.
    pub fn boolean(
        config_id: impl Into<SessionConfigId>,
        name: impl Into<String>,
        current: bool,
    ) -> Self {
        Self::new(config_id, name, SessionConfigBoolean::new(current))
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
        /// An on/off switch.
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
    /// At `current_value`, offering `options`.
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
    /// A labelled group of dropdown values.
    pub struct SessionConfigSelectGroup {
        /// The group's id.
        pub group_id: SessionConfigGroupId = "groupId" (Req),
        /// A label to show the user.
        pub name: String = "name" (Req),
        /// The values in the group.
        pub options: Vec<SessionConfigSelectOption> = "options" (Items),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionConfigSelectGroup {
    /// The group `group_id` labelled `name`, holding `options`.
    pub fn new(
        group_id: impl Into<SessionConfigGroupId>,
        name: impl Into<String>,
        options: Vec<SessionConfigSelectOption>,
    ) -> Self {
        SessionConfigSelectGroup {
            group_id: group_id.into(),
            name: name.into(),
            options,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(SessionConfigSelectGroup { opt { meta: Meta } });

/// The values of a dropdown: a flat list, or a list of groups. Both are arrays
/// on the wire; the first item tells them apart (a group has `groupId`). An
/// empty array is a flat list.
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
    /// Every value, in order, grouped or not.
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
                let Some(first) = seq.next_element::<RawJson>()? else {
                    return Ok(SessionConfigSelectOptions::Ungrouped(Vec::new()));
                };
                let grouped = first.is_object()
                    && first
                        .decode::<crate::RawObject>()
                        .is_ok_and(|o| o.contains_key("groupId"));
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

wire_struct! {
    /// Params of `session/set_config_option`: change one option. The value's
    /// `type` and `value` sit next to the ids.
    pub struct SetSessionConfigOptionRequest {
        /// The session.
        pub session_id: SessionId = "sessionId" (Req),
        /// The option.
        pub config_id: SessionConfigId = "configId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
        /// The new value (`type` and `value`).
        pub value: SessionConfigValue = "" (Flatten),
    }
}

impl SetSessionConfigOptionRequest {
    /// Sets option `config_id` of `session_id` to `value` (a value id or a `bool`).
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

tagged_union! {
    /// The new value of a config option, tagged by `type`.
    pub enum SessionConfigValue: tag "type" {
        /// A value id of a dropdown.
        "id" => Id(SessionConfigIdValue),
        /// The state of a switch.
        "boolean" => Boolean(SessionConfigBooleanValue),
    }
}

impl From<SessionConfigValueId> for SessionConfigValue {
    fn from(id: SessionConfigValueId) -> Self {
        SessionConfigValue::Id(SessionConfigIdValue::new(id))
    }
}

impl From<&str> for SessionConfigValue {
    fn from(id: &str) -> Self {
        SessionConfigValue::from(SessionConfigValueId::new(id))
    }
}

impl From<bool> for SessionConfigValue {
    fn from(on: bool) -> Self {
        SessionConfigValue::Boolean(SessionConfigBooleanValue::new(on))
    }
}

wire_struct! {
    /// A dropdown's new value.
    pub struct SessionConfigIdValue {
        /// The value id.
        pub value: SessionConfigValueId = "value" (Req),
    }
}

impl SessionConfigIdValue {
    /// The value `value`.
    pub fn new(value: impl Into<SessionConfigValueId>) -> Self {
        SessionConfigIdValue {
            value: value.into(),
            extra: Default::default(),
        }
    }
}

wire_struct! {
    /// A switch's new state.
    pub struct SessionConfigBooleanValue {
        /// On or off.
        pub value: bool = "value" (Req),
    }
}

impl SessionConfigBooleanValue {
    /// On (`true`) or off.
    pub fn new(value: bool) -> Self {
        SessionConfigBooleanValue {
            value,
            extra: Default::default(),
        }
    }
}

wire_struct! {
    /// The result of `session/set_config_option`: every option, since one
    /// change may change others.
    pub struct SetSessionConfigOptionResponse {
        /// All of the session's options.
        pub config_options: Vec<SessionConfigOption> = "configOptions" (ItemsReq),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SetSessionConfigOptionResponse {
    /// All the options, `config_options`.
    pub fn new(config_options: Vec<SessionConfigOption>) -> Self {
        SetSessionConfigOptionResponse {
            config_options,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(SetSessionConfigOptionResponse { opt { meta: Meta } });
