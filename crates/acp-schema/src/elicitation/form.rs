//! The form of a form elicitation: a flat JSON Schema whose properties are
//! primitive fields (text, numbers, booleans, single and multiple choice).

use crate::util::{
    default_on_error, meta, setters, skip_invalid_items_opt, string_enum, tagged_union,
};
use crate::{Meta, OrderedMap};
use serde::{Deserialize, Serialize};

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
