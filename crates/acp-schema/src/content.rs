//! Content blocks: what prompts, agent messages and tool results are made of.
//!
//! The shapes follow MCP's, so an agent can forward MCP tool output unchanged.
//! A block of a type this version does not know decodes into
//! [`ContentBlock::Other`] and re-encodes unchanged.

use crate::Meta;
use crate::util::{
    default_on_error, meta, setters, skip_invalid_items_opt, string_enum, tagged_union,
};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

tagged_union! {
    /// A piece of displayable content: text, an image, audio, a resource link or
    /// an embedded resource. Tagged by `type`.
    pub enum ContentBlock: tag "type" {
        /// Plain or Markdown text. Every agent must accept it in prompts.
        "text" => Text(TextContent),
        /// An image (needs the `image` prompt capability in prompts).
        "image" => Image(ImageContent),
        /// Audio (needs the `audio` prompt capability in prompts).
        "audio" => Audio(AudioContent),
        /// A link to a resource the agent can read. Every agent must accept it in prompts.
        "resource_link" => ResourceLink(ResourceLink),
        /// A resource's contents, embedded (needs the `embeddedContext` prompt capability).
        "resource" => Resource(EmbeddedResource),
    }
}

impl From<&str> for ContentBlock {
    fn from(text: &str) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }
}

impl From<String> for ContentBlock {
    fn from(text: String) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }
}

impl From<TextContent> for ContentBlock {
    fn from(c: TextContent) -> Self {
        ContentBlock::Text(c)
    }
}

impl From<ImageContent> for ContentBlock {
    fn from(c: ImageContent) -> Self {
        ContentBlock::Image(c)
    }
}

impl From<AudioContent> for ContentBlock {
    fn from(c: AudioContent) -> Self {
        ContentBlock::Audio(c)
    }
}

impl From<ResourceLink> for ContentBlock {
    fn from(c: ResourceLink) -> Self {
        ContentBlock::ResourceLink(c)
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(c: EmbeddedResource) -> Self {
        ContentBlock::Resource(c)
    }
}

impl ContentBlock {
    /// The text of a text block, or `None` for any other block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

/// Text content, plain or Markdown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TextContent {
    /// Hints for how clients use or display this content.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub annotations: Option<Annotations>,
    /// The text.
    pub text: String,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl TextContent {
    /// Text content with no annotations.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent {
            annotations: None,
            text: text.into(),
            meta: None,
        }
    }
}

setters!(TextContent { opt { annotations: Annotations, meta: Meta } });

/// An image, base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ImageContent {
    /// Hints for how clients use or display this content.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub annotations: Option<Annotations>,
    /// The image bytes, base64-encoded.
    pub data: String,
    /// The image's MIME type (`image/png`).
    pub mime_type: String,
    /// Where the image came from, if anywhere.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub uri: Option<String>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl ImageContent {
    /// An image from base64 `data` of type `mime_type`.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ImageContent {
            annotations: None,
            data: data.into(),
            mime_type: mime_type.into(),
            uri: None,
            meta: None,
        }
    }
}

setters!(ImageContent { opt { annotations: Annotations, uri: String, meta: Meta } });

/// Audio, base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AudioContent {
    /// Hints for how clients use or display this content.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub annotations: Option<Annotations>,
    /// The audio bytes, base64-encoded.
    pub data: String,
    /// The audio's MIME type (`audio/wav`).
    pub mime_type: String,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl AudioContent {
    /// Audio from base64 `data` of type `mime_type`.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        AudioContent {
            annotations: None,
            data: data.into(),
            mime_type: mime_type.into(),
            meta: None,
        }
    }
}

setters!(AudioContent { opt { annotations: Annotations, meta: Meta } });

/// A link to a resource the agent can access.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceLink {
    /// Hints for how clients use or display this content.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub annotations: Option<Annotations>,
    /// What the resource is.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub description: Option<String>,
    /// The resource's MIME type.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub mime_type: Option<String>,
    /// A name for the resource.
    pub name: String,
    /// Its size in bytes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub size: Option<i64>,
    /// A human-readable title.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub title: Option<String>,
    /// Where the resource is (`file:///…`).
    pub uri: String,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl ResourceLink {
    /// A link named `name` to `uri`.
    pub fn new(name: impl Into<String>, uri: impl Into<String>) -> Self {
        ResourceLink {
            annotations: None,
            description: None,
            mime_type: None,
            name: name.into(),
            size: None,
            title: None,
            uri: uri.into(),
            meta: None,
        }
    }
}

setters!(ResourceLink {
    opt {
        annotations: Annotations,
        description: String,
        mime_type: String,
        size: i64,
        title: String,
        meta: Meta,
    }
});

/// A resource's contents embedded in a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// Hints for how clients use or display this content.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub annotations: Option<Annotations>,
    /// The contents: text or a base64 blob.
    pub resource: EmbeddedResourceResource,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl EmbeddedResource {
    /// Embeds `resource`.
    pub fn new(resource: impl Into<EmbeddedResourceResource>) -> Self {
        EmbeddedResource {
            annotations: None,
            resource: resource.into(),
            meta: None,
        }
    }
}

setters!(EmbeddedResource { opt { annotations: Annotations, meta: Meta } });

/// The contents of an embedded resource: text or a blob, told apart by which of
/// `text` and `blob` is present.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum EmbeddedResourceResource {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents, base64-encoded.
    Blob(BlobResourceContents),
}

impl<'de> Deserialize<'de> for EmbeddedResourceResource {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = serde_json::Map::<String, Value>::deserialize(d)?;
        if map.contains_key("text") {
            crate::util::nested(Value::Object(map)).map(EmbeddedResourceResource::Text)
        } else if map.contains_key("blob") {
            crate::util::nested(Value::Object(map)).map(EmbeddedResourceResource::Blob)
        } else {
            Err(serde::de::Error::custom(
                "a resource needs either `text` or `blob`",
            ))
        }
    }
}

impl From<TextResourceContents> for EmbeddedResourceResource {
    fn from(c: TextResourceContents) -> Self {
        EmbeddedResourceResource::Text(c)
    }
}

impl From<BlobResourceContents> for EmbeddedResourceResource {
    fn from(c: BlobResourceContents) -> Self {
        EmbeddedResourceResource::Blob(c)
    }
}

/// The text contents of a resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TextResourceContents {
    /// The resource's MIME type.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Where the resource is.
    pub uri: String,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl TextResourceContents {
    /// The text of the resource at `uri`.
    pub fn new(text: impl Into<String>, uri: impl Into<String>) -> Self {
        TextResourceContents {
            mime_type: None,
            text: text.into(),
            uri: uri.into(),
            meta: None,
        }
    }
}

setters!(TextResourceContents { opt { mime_type: String, meta: Meta } });

/// The binary contents of a resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BlobResourceContents {
    /// The bytes, base64-encoded.
    pub blob: String,
    /// The resource's MIME type.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub mime_type: Option<String>,
    /// Where the resource is.
    pub uri: String,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl BlobResourceContents {
    /// The base64 `blob` of the resource at `uri`.
    pub fn new(blob: impl Into<String>, uri: impl Into<String>) -> Self {
        BlobResourceContents {
            blob: blob.into(),
            mime_type: None,
            uri: uri.into(),
            meta: None,
        }
    }
}

setters!(BlobResourceContents { opt { mime_type: String, meta: Meta } });

/// Hints for how a client uses or displays content.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Annotations {
    /// Who the content is for.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "skip_invalid_items_opt"
    )]
    pub audience: Option<Vec<Role>>,
    /// When the content last changed (ISO 8601).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub last_modified: Option<String>,
    /// How important the content is, from 0 (least) to 1 (most).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "default_on_error"
    )]
    pub priority: Option<f64>,
    /// Extension metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "meta"
    )]
    pub meta: Option<Meta>,
}

impl Annotations {
    /// No annotations.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(Annotations {
    opt {
        audience: Vec<Role>,
        last_modified: String,
        priority: f64,
        meta: Meta,
    }
});

string_enum! {
    /// Who a message or piece of content is from or for.
    pub enum Role {
        /// The assistant (the agent's model).
        "assistant" => Assistant,
        /// The user.
        "user" => User,
    }
}
