//! Turning a prompt with `@path` mentions into content blocks.
//!
//! The prompt's text is sent as it is, in one text block. Every `@path`
//! (at the start or after whitespace) that names an existing file or
//! directory, relative to the session's cwd or absolute, adds one block:
//! an embedded `resource` with the file's text when the agent accepts
//! embedded context and the file is UTF-8 text of at most 1 MiB, otherwise
//! a `resource_link`. Trailing punctuation (`.,;:!?)`) is not part of a path
//! unless a file by that name exists.

use acp::schema::{ContentBlock, EmbeddedResource, ResourceLink, TextResourceContents};
use std::path::{Path, PathBuf};

/// The largest file embedded as text.
const MAX_EMBED: u64 = 1024 * 1024;

/// The blocks of a prompt: its text, then one block per mentioned file.
pub fn prompt_blocks(text: &str, cwd: &Path, embed: bool) -> Vec<ContentBlock> {
    let mut blocks = vec![ContentBlock::from(text)];
    let mut seen = Vec::new();
    for path in mentions(text, cwd) {
        if seen.contains(&path) {
            continue;
        }
        blocks.push(block_for(&path, embed));
        seen.push(path);
    }
    blocks
}

/// The existing paths mentioned with `@` in `text`.
pub fn mentions(text: &str, cwd: &Path) -> Vec<PathBuf> {
    text.split_whitespace()
        .filter_map(|word| word.strip_prefix('@'))
        .filter_map(|mut word| {
            loop {
                if word.is_empty() {
                    return None;
                }
                let path = cwd.join(word);
                if path.exists() {
                    return Some(path);
                }
                word = word.strip_suffix(['.', ',', ';', ':', '!', '?', ')'])?;
            }
        })
        .collect()
}

/// A `file://` URI for an absolute path.
pub fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        if byte.is_ascii_alphanumeric() || b"/-_.~".contains(&byte) {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

fn block_for(path: &Path, embed: bool) -> ContentBlock {
    let uri = file_uri(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let meta = std::fs::metadata(path).ok();
    if embed
        && meta
            .as_ref()
            .is_some_and(|m| m.is_file() && m.len() <= MAX_EMBED)
        && let Ok(text) = std::fs::read_to_string(path)
    {
        return ContentBlock::Resource(EmbeddedResource::new(TextResourceContents::new(text, uri)));
    }
    let mut link = ResourceLink::new(name, uri);
    if let Some(m) = meta.filter(|m| m.is_file()) {
        link.size = i64::try_from(m.len()).ok();
    }
    ContentBlock::ResourceLink(link)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_mentions_and_builds_blocks() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a b.txt"), "x").unwrap();
        std::fs::write(dir.path().join("notes.md"), "hello").unwrap();
        let found = mentions("see @notes.md, and @missing and @notes.md", dir.path());
        assert_eq!(
            found,
            [dir.path().join("notes.md"), dir.path().join("notes.md")]
        );
        let blocks = prompt_blocks("look at @notes.md.", dir.path(), false);
        assert_eq!(blocks.len(), 2);
        let ContentBlock::ResourceLink(link) = &blocks[1] else {
            panic!("{blocks:?}")
        };
        assert_eq!(link.name, "notes.md");
        assert_eq!(link.size, Some(5));
        assert!(link.uri.starts_with("file:///") && link.uri.ends_with("/notes.md"));
        let blocks = prompt_blocks("@notes.md", dir.path(), true);
        assert!(
            matches!(&blocks[1], ContentBlock::Resource(_)),
            "{blocks:?}"
        );
        assert_eq!(file_uri(Path::new("/a b/é")), "file:///a%20b/%C3%A9");
    }
}
