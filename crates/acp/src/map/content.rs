//! Content blocks between the versions: the same five kinds; a v2 resource
//! link may carry icons, which v1 has no place for (dropped), and a size is
//! signed in v1 and unsigned in v2 (a negative v1 size is dropped).

use acp_schema::{self as v1, v2};

/// A v1 content block as v2's (nothing lost but a negative resource link
/// size).
pub fn block_to_v2(block: v1::ContentBlock) -> v2::ContentBlock {
    match block {
        v1::ContentBlock::Text(t) => v2::ContentBlock::Text(t),
        v1::ContentBlock::Image(i) => v2::ContentBlock::Image(i),
        v1::ContentBlock::Audio(a) => v2::ContentBlock::Audio(a),
        v1::ContentBlock::Resource(r) => v2::ContentBlock::Resource(r),
        v1::ContentBlock::ResourceLink(l) => {
            let mut out = v2::ResourceLink::new(l.name, l.uri);
            out.title = l.title;
            out.description = l.description;
            out.mime_type = l.mime_type;
            out.size = l.size.and_then(|s| u64::try_from(s).ok());
            out.annotations = l.annotations;
            out.meta = l.meta;
            out.extra = l.extra;
            v2::ContentBlock::ResourceLink(out)
        }
        v1::ContentBlock::Other(raw) => v2::ContentBlock::Other(raw),
        other => v2::ContentBlock::Other(raw_object(&other)),
    }
}

/// A v2 content block as v1's (a resource link loses its icons, and a size
/// too large for v1).
pub fn block_to_v1(block: v2::ContentBlock) -> v1::ContentBlock {
    match block {
        v2::ContentBlock::Text(t) => v1::ContentBlock::Text(t),
        v2::ContentBlock::Image(i) => v1::ContentBlock::Image(i),
        v2::ContentBlock::Audio(a) => v1::ContentBlock::Audio(a),
        v2::ContentBlock::Resource(r) => v1::ContentBlock::Resource(r),
        v2::ContentBlock::ResourceLink(l) => {
            let mut out = v1::ResourceLink::new(l.name, l.uri);
            out.title = l.title;
            out.description = l.description;
            out.mime_type = l.mime_type;
            out.size = l.size.and_then(|s| i64::try_from(s).ok());
            out.annotations = l.annotations;
            out.meta = l.meta;
            out.extra = l.extra;
            v1::ContentBlock::ResourceLink(out)
        }
        v2::ContentBlock::Other(raw) => v1::ContentBlock::Other(raw),
        other => v1::ContentBlock::Other(raw_object(&other)),
    }
}

/// Blocks as v2's.
pub(crate) fn blocks_to_v2(blocks: Vec<v1::ContentBlock>) -> Vec<v2::ContentBlock> {
    blocks.into_iter().map(block_to_v2).collect()
}

/// Blocks as v1's.
pub(crate) fn blocks_to_v1(blocks: Vec<v2::ContentBlock>) -> Vec<v1::ContentBlock> {
    blocks.into_iter().map(block_to_v1).collect()
}

/// Any value as the members of a JSON object (for a variant kept raw).
pub(crate) fn raw_object(value: &impl serde::Serialize) -> v1::RawObject {
    serde_json::to_string(value)
        .ok()
        .and_then(|text| acp_schema::decode(&text).ok())
        .unwrap_or_default()
}
