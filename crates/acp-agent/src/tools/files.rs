//! `read_file`, `write_file` and `edit_file`. Files are read and written
//! through the client when it offers that (so unsaved buffers are seen),
//! otherwise on disk, atomically. Writes and edits are computed first as a
//! [`FileChange`], so the user can be shown the diff before allowing it.

use super::{ToolEnv, ToolInput, ToolOutcome, code_block, resolve, typed};
use crate::llm::{ToolSpec, truncate};
use acp::schema::*;
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Most bytes of a file returned to the model.
pub const MAX_READ_BYTES: usize = 256 * 1024;

pub(super) fn read_spec() -> ToolSpec {
    ToolSpec {
        name: "read_file".into(),
        description: "Read a text file. Paths are relative to the session's working directory. Optionally start at a 1-based line and read a limited number of lines.".into(),
        parameters: json!({"type": "object", "properties": {
            "path": {"type": "string", "description": "File path"},
            "line": {"type": "integer", "description": "1-based line to start at"},
            "limit": {"type": "integer", "description": "Most lines to read"}
        }, "required": ["path"]}),
    }
}

pub(super) fn change_specs() -> [ToolSpec; 2] {
    [
        ToolSpec {
            name: "write_file".into(),
            description: "Create or overwrite a text file with the given content.".into(),
            parameters: json!({"type": "object", "properties": {
                "path": {"type": "string"},
                "content": {"type": "string"}
            }, "required": ["path", "content"]}),
        },
        ToolSpec {
            name: "edit_file".into(),
            description: "Replace text in a file. old_string must occur exactly once unless replace_all is true; include enough surrounding context to make it unique.".into(),
            parameters: json!({"type": "object", "properties": {
                "path": {"type": "string"},
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
                "replace_all": {"type": "boolean"}
            }, "required": ["path", "old_string", "new_string"]}),
        },
    ]
}

#[derive(Deserialize)]
struct PathArgs {
    path: String,
    line: Option<u32>,
    limit: Option<u32>,
}

#[derive(Deserialize)]
struct WriteArgs {
    path: String,
    content: String,
}

#[derive(Deserialize)]
struct EditArgs {
    path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

/// Parses the arguments of `read_file`, `write_file` or `edit_file` (`name`).
pub(super) fn parse(name: &str, value: Value, cwd: &Path) -> Result<ToolInput, String> {
    Ok(match name {
        "write_file" => {
            let a: WriteArgs = typed(value, name)?;
            ToolInput::WriteFile {
                path: resolve(cwd, &a.path),
                content: a.content,
            }
        }
        "edit_file" => {
            let a: EditArgs = typed(value, name)?;
            if a.old_string.is_empty() {
                return Err("old_string must not be empty; use write_file to create a file".into());
            }
            ToolInput::EditFile {
                path: resolve(cwd, &a.path),
                old_string: a.old_string,
                new_string: a.new_string,
                replace_all: a.replace_all,
            }
        }
        _ => {
            let a: PathArgs = typed(value, name)?;
            ToolInput::ReadFile {
                path: resolve(cwd, &a.path),
                line: a.line,
                limit: a.limit,
            }
        }
    })
}

/// Reads a whole text file, through the client when it offers that.
pub async fn read_text(env: &ToolEnv, path: &Path) -> Result<String, String> {
    if env.client_read {
        let req = ReadTextFileRequest::new(env.session_id.clone(), path.display().to_string());
        env.conn
            .read_text_file(req)
            .await
            .map(|r| r.content)
            .map_err(|e| format!("could not read {}: {e}", path.display()))
    } else {
        env.local
            .read(path, None, None)
            .await
            .map_err(|e| format!("could not read {}: {e}", path.display()))
    }
}

async fn write_text(env: &ToolEnv, path: &Path, content: &str) -> Result<(), String> {
    if env.client_write {
        let req =
            WriteTextFileRequest::new(env.session_id.clone(), path.display().to_string(), content);
        env.conn
            .write_text_file(req)
            .await
            .map(|_| ())
            .map_err(|e| format!("could not write {}: {e}", path.display()))
    } else {
        env.local
            .write(path, content)
            .await
            .map_err(|e| format!("could not write: {e}"))
    }
}

/// A change to a file, computed before asking permission.
#[derive(Debug, Clone, PartialEq)]
pub struct FileChange {
    /// The file.
    pub path: PathBuf,
    /// Its content before (`None`: a new file).
    pub old: Option<String>,
    /// Its content after.
    pub new: String,
}

impl FileChange {
    /// The change as diff content for the client.
    pub fn diff(&self) -> ToolCallContent {
        ToolCallContent::from(Diff::new(
            self.path.display().to_string(),
            self.old.clone(),
            self.new.clone(),
        ))
    }
}

/// Computes what `write_file` or `edit_file` would do.
pub async fn plan_change(env: &ToolEnv, input: &ToolInput) -> Result<FileChange, String> {
    match input {
        ToolInput::WriteFile { path, content } => {
            let old = if path.is_file() {
                Some(read_text(env, path).await?)
            } else if path.is_dir() {
                return Err(format!("{} is a directory", path.display()));
            } else {
                None
            };
            Ok(FileChange {
                path: path.clone(),
                old,
                new: content.clone(),
            })
        }
        ToolInput::EditFile {
            path,
            old_string,
            new_string,
            replace_all,
        } => {
            let old = read_text(env, path).await?;
            let count = old.matches(old_string.as_str()).count();
            let new = match (count, replace_all) {
                (0, _) => {
                    return Err(format!(
                        "old_string was not found in {}; read the file and copy the text exactly",
                        path.display()
                    ));
                }
                (1, _) | (_, true) => old.replace(old_string.as_str(), new_string),
                (n, false) => {
                    return Err(format!(
                        "old_string occurs {n} times in {}; add context to make it unique or set replace_all",
                        path.display()
                    ));
                }
            };
            Ok(FileChange {
                path: path.clone(),
                old: Some(old),
                new,
            })
        }
        _ => Err("not a file change".into()),
    }
}

/// Applies a planned change.
pub async fn apply_change(env: &ToolEnv, change: &FileChange) -> ToolOutcome {
    match write_text(env, &change.path, &change.new).await {
        Ok(()) => ToolOutcome {
            ok: true,
            for_model: match &change.old {
                None => format!(
                    "Created {} ({} bytes).",
                    change.path.display(),
                    change.new.len()
                ),
                Some(_) => format!("Updated {}.", change.path.display()),
            },
            content: vec![change.diff()],
            cancelled: false,
        },
        Err(e) => ToolOutcome::fail(e),
    }
}

pub(super) async fn read_file(
    env: &ToolEnv,
    path: &Path,
    line: Option<u32>,
    limit: Option<u32>,
) -> ToolOutcome {
    let text = if env.client_read {
        let mut req = ReadTextFileRequest::new(env.session_id.clone(), path.display().to_string());
        if let Some(l) = line {
            req = req.line(l);
        }
        if let Some(n) = limit {
            req = req.limit(n);
        }
        match env.conn.read_text_file(req).await {
            Ok(r) => r.content,
            Err(e) => return ToolOutcome::fail(format!("could not read {}: {e}", path.display())),
        }
    } else {
        match env.local.read(path, line, limit).await {
            Ok(text) => text,
            Err(e) => return ToolOutcome::fail(format!("could not read {}: {e}", path.display())),
        }
    };
    let for_model = if text.len() > MAX_READ_BYTES {
        format!(
            "{}\n[truncated: the file is {} bytes; read it in parts with line and limit]",
            truncate(&text, MAX_READ_BYTES),
            text.len()
        )
    } else {
        text
    };
    ToolOutcome {
        ok: true,
        content: vec![code_block(&for_model, 8000)],
        for_model,
        cancelled: false,
    }
}
