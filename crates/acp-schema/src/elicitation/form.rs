//! The form of a form elicitation: a flat JSON Schema whose properties are
//! primitive fields (text, numbers, booleans, single and multiple choice).

use crate::util::{setters, string_enum, tagged_union, wire_struct};
use crate::{Meta, OrderedMap};

wire_struct! {
    /// The form of a form elicitation: a flat JSON Schema object whose properties
    /// are primitive fields.
    #[derive(Default)]
    pub struct ElicitationSchema {
        /// Always `object`; always written.
        pub schema_type: ElicitationSchemaType = "type" (LenientVal),
        /// A title for the form.
        pub title: Option<String> = "title" (Lenient),
        /// The fields, in display order; always written.
        pub properties: PropertyMap = "properties" (Dflt),
        /// Names of the fields the user must fill in.
        pub required: Option<Vec<String>> = "required" (Opt),
        /// What the form is for.
        pub description: Option<String> = "description" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
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

wire_struct! {
    /// A text field, or a single-select when `enum` or `oneOf` is set.
    #[derive(Default)]
    pub struct StringPropertySchema {
        /// The field's label.
        pub title: Option<String> = "title" (Lenient),
        /// Help text for the field.
        pub description: Option<String> = "description" (Lenient),
        /// The shortest allowed answer, in characters.
        pub min_length: Option<u32> = "minLength" (Opt),
        /// The longest allowed answer, in characters.
        pub max_length: Option<u32> = "maxLength" (Opt),
        /// A regular expression the answer must match.
        pub pattern: Option<String> = "pattern" (Opt),
        /// A format the answer must have.
        pub format: Option<StringFormat> = "format" (Opt),
        /// The pre-filled answer.
        pub default_value: Option<String> = "default" (Lenient),
        /// The choices of a single-select, without labels.
        pub enum_values: Option<Vec<String>> = "enum" (Opt),
        /// The choices of a single-select, with labels.
        pub one_of: Option<Vec<EnumOption>> = "oneOf" (Opt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
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

wire_struct! {
    /// A floating-point number field.
    #[derive(Default)]
    pub struct NumberPropertySchema {
        /// The field's label.
        pub title: Option<String> = "title" (Lenient),
        /// Help text for the field.
        pub description: Option<String> = "description" (Lenient),
        /// The smallest allowed value (inclusive).
        pub minimum: Option<f64> = "minimum" (Opt),
        /// The largest allowed value (inclusive).
        pub maximum: Option<f64> = "maximum" (Opt),
        /// The pre-filled value.
        pub default_value: Option<f64> = "default" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
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

wire_struct! {
    /// An integer field.
    #[derive(Default)]
    pub struct IntegerPropertySchema {
        /// The field's label.
        pub title: Option<String> = "title" (Lenient),
        /// Help text for the field.
        pub description: Option<String> = "description" (Lenient),
        /// The smallest allowed value (inclusive).
        pub minimum: Option<i64> = "minimum" (Opt),
        /// The largest allowed value (inclusive).
        pub maximum: Option<i64> = "maximum" (Opt),
        /// The pre-filled value.
        pub default_value: Option<i64> = "default" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
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

wire_struct! {
    /// A checkbox.
    #[derive(Default)]
    pub struct BooleanPropertySchema {
        /// The field's label.
        pub title: Option<String> = "title" (Lenient),
        /// Help text for the field.
        pub description: Option<String> = "description" (Lenient),
        /// The pre-filled value.
        pub default_value: Option<bool> = "default" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
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

wire_struct! {
    /// A multi-select field (`type: "array"`).
    pub struct MultiSelectPropertySchema {
        /// The field's label.
        pub title: Option<String> = "title" (Lenient),
        /// Help text for the field.
        pub description: Option<String> = "description" (Lenient),
        /// The fewest choices the user must pick.
        pub min_items: Option<u64> = "minItems" (Opt),
        /// The most choices the user may pick.
        pub max_items: Option<u64> = "maxItems" (Opt),
        /// The choices.
        pub items: MultiSelectItems = "items" (Req),
        /// The pre-selected choices.
        pub default_value: Option<Vec<String>> = "default" (ItemsOpt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
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
            extra: Default::default(),
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

wire_struct! {
    /// Plain string choices of a multi-select.
    pub struct StringMultiSelectItems {
        /// The choices.
        pub enum_values: Vec<String> = "enum" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl StringMultiSelectItems {
    /// The choices `enum_values`.
    pub fn new(enum_values: impl Into<Vec<String>>) -> Self {
        StringMultiSelectItems {
            enum_values: enum_values.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(StringMultiSelectItems { opt { meta: Meta } });

wire_struct! {
    /// Labelled choices of a multi-select.
    pub struct TitledMultiSelectItems {
        /// The choices.
        pub any_of: Vec<EnumOption> = "anyOf" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl TitledMultiSelectItems {
    /// The choices `any_of`.
    pub fn new(any_of: impl Into<Vec<EnumOption>>) -> Self {
        TitledMultiSelectItems {
            any_of: any_of.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(TitledMultiSelectItems { opt { meta: Meta } });

wire_struct! {
    /// A labelled choice: the value sent back (`const`) and the label shown (`title`).
    pub struct EnumOption {
        /// The value sent back when this choice is picked.
        pub value: String = "const" (Req),
        /// The label to show.
        pub title: String = "title" (Req),
        /// Help text for the choice.
        pub description: Option<String> = "description" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl EnumOption {
    /// Choice `value` labelled `title`.
    pub fn new(value: impl Into<String>, title: impl Into<String>) -> Self {
        EnumOption {
            value: value.into(),
            title: title.into(),
            description: None,
            meta: None,
            extra: Default::default(),
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
