//! `list_files` and `grep`: walking the project as git would (respecting
//! `.gitignore` and hidden files), optionally filtered by a glob.

use super::{ToolInput, display_path, resolve, typed};
use crate::llm::{ToolSpec, truncate};
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::Path;

/// Most entries a listing returns.
pub const MAX_LIST_ENTRIES: usize = 1000;
/// Most matches a grep returns.
pub const MAX_GREP_MATCHES: usize = 300;

pub(super) fn specs() -> [ToolSpec; 2] {
    [
        ToolSpec {
            name: "list_files".into(),
            description: "List files under a directory (recursively, respecting .gitignore), optionally filtered by a glob such as **/*.rs.".into(),
            parameters: json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "Directory, default the working directory"},
                "glob": {"type": "string", "description": "Glob the relative paths must match"}
            }}),
        },
        ToolSpec {
            name: "grep".into(),
            description: "Search file contents with a regular expression (recursively, respecting .gitignore). Returns path:line: text for each match.".into(),
            parameters: json!({"type": "object", "properties": {
                "pattern": {"type": "string", "description": "Regular expression (Rust regex syntax)"},
                "path": {"type": "string", "description": "File or directory to search, default the working directory"},
                "glob": {"type": "string", "description": "Only search files whose relative path matches this glob"},
                "case_insensitive": {"type": "boolean"}
            }, "required": ["pattern"]}),
        },
    ]
}

#[derive(Deserialize)]
struct ListArgs {
    path: Option<String>,
    glob: Option<String>,
}

#[derive(Deserialize)]
struct GrepArgs {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    #[serde(default)]
    case_insensitive: bool,
}

/// Parses the arguments of `list_files` or `grep` (`name`).
pub(super) fn parse(name: &str, value: Value, cwd: &Path) -> Result<ToolInput, String> {
    Ok(if name == "grep" {
        let a: GrepArgs = typed(value, name)?;
        ToolInput::Grep {
            pattern: a.pattern,
            path: resolve(cwd, a.path.as_deref().unwrap_or(".")),
            glob: a.glob.filter(|g| !g.is_empty()),
            case_insensitive: a.case_insensitive,
        }
    } else {
        let a: ListArgs = typed(value, name)?;
        ToolInput::ListFiles {
            path: resolve(cwd, a.path.as_deref().unwrap_or(".")),
            glob: a.glob.filter(|g| !g.is_empty()),
        }
    })
}

fn walker(path: &Path) -> ignore::Walk {
    ignore::WalkBuilder::new(path)
        .require_git(false)
        .hidden(true)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build()
}

fn glob_matcher(glob: Option<&str>) -> Result<Option<globset::GlobMatcher>, String> {
    glob.map(|g| {
        globset::GlobBuilder::new(g)
            .literal_separator(false)
            .build()
            .map(|g| g.compile_matcher())
            .map_err(|e| format!("invalid glob {g:?}: {e}"))
    })
    .transpose()
}

/// Lists files under `dir`, respecting ignore files.
pub fn list_files(dir: &Path, glob: Option<&str>, cwd: &Path) -> Result<String, String> {
    if !dir.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    let matcher = glob_matcher(glob)?;
    let mut out = Vec::new();
    let mut more = false;
    for entry in walker(dir).flatten() {
        if entry.depth() == 0 || !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        if let Some(m) = &matcher
            && !m.is_match(rel)
        {
            continue;
        }
        if out.len() >= MAX_LIST_ENTRIES {
            more = true;
            break;
        }
        out.push(display_path(entry.path(), cwd));
    }
    let mut text = if out.is_empty() {
        "No files found.".to_string()
    } else {
        out.join("\n")
    };
    if more {
        text.push_str(&format!(
            "\n[listing stopped at {MAX_LIST_ENTRIES} entries]"
        ));
    }
    Ok(text)
}

/// Searches files under `path` for `pattern`.
pub fn grep(
    pattern: &str,
    path: &Path,
    glob: Option<&str>,
    case_insensitive: bool,
    cwd: &Path,
) -> Result<String, String> {
    let re = regex::RegexBuilder::new(pattern)
        .case_insensitive(case_insensitive)
        .build()
        .map_err(|e| format!("invalid regular expression: {e}"))?;
    let matcher = glob_matcher(glob)?;
    if !path.exists() {
        return Err(format!("{} does not exist", path.display()));
    }
    let mut out = Vec::new();
    'files: for entry in walker(path).flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let rel = entry.path().strip_prefix(path).unwrap_or(entry.path());
        if let Some(m) = &matcher
            && entry.depth() > 0
            && !m.is_match(rel)
        {
            continue;
        }
        if entry
            .metadata()
            .map(|m| m.len() > 4 * 1024 * 1024)
            .unwrap_or(true)
        {
            continue;
        }
        let Ok(bytes) = std::fs::read(entry.path()) else {
            continue;
        };
        if bytes[..bytes.len().min(8192)].contains(&0) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        for (i, line) in text.lines().enumerate() {
            if re.is_match(line) {
                if out.len() >= MAX_GREP_MATCHES {
                    out.push(format!("[stopped at {MAX_GREP_MATCHES} matches]"));
                    break 'files;
                }
                out.push(format!(
                    "{}:{}: {}",
                    display_path(entry.path(), cwd),
                    i + 1,
                    truncate(line, 300)
                ));
            }
        }
    }
    Ok(if out.is_empty() {
        "No matches.".into()
    } else {
        out.join("\n")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_and_grep_respect_gitignore() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}\n// TODO fix\n").unwrap();
        std::fs::write(root.join("target/out.rs"), "// TODO ignored\n").unwrap();
        let listing = list_files(root, None, root).unwrap();
        assert!(
            listing.contains("src/main.rs") && !listing.contains("target"),
            "{listing}"
        );
        let only_rs = list_files(root, Some("**/*.toml"), root).unwrap();
        assert_eq!(only_rs, "No files found.");
        let hits = grep("TODO", root, None, false, root).unwrap();
        assert_eq!(hits, "src/main.rs:2: // TODO fix");
        assert!(grep("(", root, None, false, root).is_err());
    }
}
