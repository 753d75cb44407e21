//! Content blocks: what prompts, agent messages and tool results are made of.
//!
//! The shapes follow MCP's, so an agent can forward MCP tool output unchanged.
//! A block of a type this version does not know decodes into
//! [`ContentBlock::Other`] and re-encodes unchanged.

use crate::Meta;
use crate::util::wire::{Fields, Key};
use crate::util::{setters, string_enum, tagged_union, wire_struct};
use serde::de::{Error as _, MapAccess};
use serde::ser::SerializeMap;

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

wire_struct! {
    /// Text content, plain or Markdown.
    pub struct TextContent {
        /// Hints for how clients use or display this content.
        pub annotations: Option<Annotations> = "annotations" (Lenient),
        /// The text.
        pub text: String = "text" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl TextContent {
    /// Text content with no annotations.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent {
            annotations: None,
            text: text.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(TextContent { opt { annotations: Annotations, meta: Meta } });

wire_struct! {
    /// An image, base64-encoded.
    pub struct ImageContent {
        /// Hints for how clients use or display this content.
        pub annotations: Option<Annotations> = "annotations" (Lenient),
        /// The image bytes, base64-encoded.
        pub data: String = "data" (Req),
        /// The image's MIME type (`image/png`).
        pub mime_type: String = "mimeType" (Req),
        /// Where the image came from, if anywhere.
        pub uri: Option<String> = "uri" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
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
            extra: Default::default(),
        }
    }
}

setters!(ImageContent { opt { annotations: Annotations, uri: String, meta: Meta } });

wire_struct! {
    /// Audio, base64-encoded.
    pub struct AudioContent {
        /// Hints for how clients use or display this content.
        pub annotations: Option<Annotations> = "annotations" (Lenient),
        /// The audio bytes, base64-encoded.
        pub data: String = "data" (Req),
        /// The audio's MIME type (`audio/wav`).
        pub mime_type: String = "mimeType" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl AudioContent {
    /// Audio from base64 `data` of type `mime_type`.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        AudioContent {
            annotations: None,
            data: data.into(),
            mime_type: mime_type.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(AudioContent { opt { annotations: Annotations, meta: Meta } });

wire_struct! {
    /// A link to a resource the agent can access.
    pub struct ResourceLink {
        /// Hints for how clients use or display this content.
        pub annotations: Option<Annotations> = "annotations" (Lenient),
        /// What the resource is.
        pub description: Option<String> = "description" (Lenient),
        /// The resource's MIME type.
        pub mime_type: Option<String> = "mimeType" (Lenient),
        /// A name for the resource.
        pub name: String = "name" (Req),
        /// Its size in bytes.
        pub size: Option<i64> = "size" (Lenient),
        /// A human-readable title.
        pub title: Option<String> = "title" (Lenient),
        /// Where the resource is (`file:///…`).
        pub uri: String = "uri" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
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
            extra: Default::default(),
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

wire_struct! {
    /// A resource's contents embedded in a message.
    pub struct EmbeddedResource {
        /// Hints for how clients use or display this content.
        pub annotations: Option<Annotations> = "annotations" (Lenient),
        /// The contents: text or a base64 blob.
        pub resource: EmbeddedResourceResource = "resource" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl EmbeddedResource {
    /// Embeds `resource`.
    pub fn new(resource: impl Into<EmbeddedResourceResource>) -> Self {
        EmbeddedResource {
            annotations: None,
            resource: resource.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(EmbeddedResource { opt { annotations: Annotations, meta: Meta } });

/// The contents of an embedded resource: text or a blob, told apart by which of
/// `text` and `blob` is present.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EmbeddedResourceResource {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents, base64-encoded.
    Blob(BlobResourceContents),
}

impl Fields for EmbeddedResourceResource {
    const EXPECTING: &'static str = "a map";

    fn from_map<'de, A: MapAccess<'de>>(
        mut pending: crate::util::wire::Entries,
        next: Option<Key<'de>>,
        mut map: A,
    ) -> Result<Self, A::Error> {
        // The members before `text` or `blob` are kept and replayed; the
        // deciding member and the rest are read straight from the map.
        let text = |k: &str| k == "text";
        let blob = |k: &str| k == "blob";
        if pending.iter().any(|(k, _)| text(k)) {
            return TextResourceContents::from_map(pending, next, map).map(Self::Text);
        }
        if pending.iter().any(|(k, _)| blob(k)) {
            return BlobResourceContents::from_map(pending, next, map).map(Self::Blob);
        }
        let mut next = next;
        loop {
            let key = match next.take() {
                Some(key) => key,
                None => match map.next_key::<Key<'de>>()? {
                    Some(key) => key,
                    None => {
                        return Err(A::Error::custom("a resource needs either `text` or `blob`"));
                    }
                },
            };
            if text(key.as_str()) {
                return TextResourceContents::from_map(pending, Some(key), map).map(Self::Text);
            }
            if blob(key.as_str()) {
                return BlobResourceContents::from_map(pending, Some(key), map).map(Self::Blob);
            }
            let value = map.next_value::<crate::RawJson>()?;
            pending.push((key.as_str().to_owned(), value));
        }
    }

    fn write_fields<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        match self {
            Self::Text(t) => t.write_fields(map),
            Self::Blob(b) => b.write_fields(map),
        }
    }
}

crate::util::wire::object_impls!(EmbeddedResourceResource);

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

wire_struct! {
    /// The text contents of a resource.
    pub struct TextResourceContents {
        /// The resource's MIME type.
        pub mime_type: Option<String> = "mimeType" (Lenient),
        /// The text.
        pub text: String = "text" (Req),
        /// Where the resource is.
        pub uri: String = "uri" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl TextResourceContents {
    /// The text of the resource at `uri`.
    pub fn new(text: impl Into<String>, uri: impl Into<String>) -> Self {
        TextResourceContents {
            mime_type: None,
            text: text.into(),
            uri: uri.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(TextResourceContents { opt { mime_type: String, meta: Meta } });

wire_struct! {
    /// The binary contents of a resource.
    pub struct BlobResourceContents {
        /// The bytes, base64-encoded.
        pub blob: String = "blob" (Req),
        /// The resource's MIME type.
        pub mime_type: Option<String> = "mimeType" (Lenient),
        /// Where the resource is.
        pub uri: String = "uri" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl BlobResourceContents {
    /// The base64 `blob` of the resource at `uri`.
    pub fn new(blob: impl Into<String>, uri: impl Into<String>) -> Self {
        BlobResourceContents {
            blob: blob.into(),
            mime_type: None,
            uri: uri.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(BlobResourceContents { opt { mime_type: String, meta: Meta } });

wire_struct! {
    /// Hints for how a client uses or displays content.
    #[derive(Default)]
    pub struct Annotations {
        /// Who the content is for.
        pub audience: Option<Vec<Role>> = "audience" (ItemsOpt),
        /// When the content last changed (ISO 8601).
        pub last_modified: Option<String> = "lastModified" (Lenient),
        /// How important the content is, from 0 (least) to 1 (most).
        pub priority: Option<f64> = "priority" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
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
