//! Content blocks of v2: v1's five block types, with a resource link that may
//! carry icons. Text, image, audio and embedded resources are v1's types.

use super::MediaType;
use crate::util::{setters, string_enum, tagged_union, wire_struct};
use crate::{Annotations, AudioContent, EmbeddedResource, ImageContent, Meta, TextContent};

tagged_union! {
    /// A piece of displayable content, tagged by `type`. An unknown type (a
    /// `_`-prefixed custom one, or a future one) is kept in `Other`.
    pub enum ContentBlock: tag "type" {
        /// Plain or Markdown text.
        "text" => Text(TextContent),
        /// An image (needs `session.prompt.image` in prompts).
        "image" => Image(ImageContent),
        /// Audio (needs `session.prompt.audio` in prompts).
        "audio" => Audio(AudioContent),
        /// A link to a resource the agent can read.
        "resource_link" => ResourceLink(ResourceLink),
        /// A resource's contents, embedded (needs `session.prompt.embeddedContext`
        /// in prompts).
        "resource" => Resource(EmbeddedResource),
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

wire_struct! {
    /// A link to a resource the agent can access.
    pub struct ResourceLink {
        /// A name for the resource.
        pub name: String = "name" (Req),
        /// Where the resource is (`file:///…`).
        pub uri: String = "uri" (Req),
        /// A human-readable title.
        pub title: Option<String> = "title" (Lenient),
        /// What the resource is.
        pub description: Option<String> = "description" (Lenient),
        /// Icons a client may show for it.
        pub icons: Option<Vec<Icon>> = "icons" (ItemsOpt),
        /// The resource's MIME type.
        pub mime_type: Option<MediaType> = "mimeType" (Lenient),
        /// Its size in bytes.
        pub size: Option<u64> = "size" (Lenient),
        /// Hints for how clients use or display this content.
        pub annotations: Option<Annotations> = "annotations" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ResourceLink {
    /// A link named `name` to `uri`.
    pub fn new(name: impl Into<String>, uri: impl Into<String>) -> Self {
        ResourceLink {
            name: name.into(),
            uri: uri.into(),
            title: None,
            description: None,
            icons: None,
            mime_type: None,
            size: None,
            annotations: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(ResourceLink {
    opt {
        title: String,
        description: String,
        icons: Vec<Icon>,
        mime_type: MediaType,
        size: u64,
        annotations: Annotations,
        meta: Meta,
    }
});

wire_struct! {
    /// An icon for a resource.
    pub struct Icon {
        /// Where the image is (an `https:` or `data:` URI).
        pub src: String = "src" (Req),
        /// The image's MIME type.
        pub mime_type: Option<MediaType> = "mimeType" (Lenient),
        /// The sizes it suits (`48x48`, `any`).
        pub sizes: Option<Vec<String>> = "sizes" (ItemsOpt),
        /// The theme it is drawn for.
        pub theme: Option<IconTheme> = "theme" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl Icon {
    /// The icon at `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: None,
            theme: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(Icon { opt { mime_type: MediaType, sizes: Vec<String>, theme: IconTheme, meta: Meta } });

string_enum! {
    /// The colour theme an icon is drawn for.
    pub enum IconTheme {
        /// For light backgrounds.
        "light" => Light,
        /// For dark backgrounds.
        "dark" => Dark,
    }
}
