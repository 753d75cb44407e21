//! `read_file`, `write_file` and `edit_file`. Files are read and written
//! through the client when it offers that (so unsaved buffers are seen),
//! otherwise on disk, atomically. Writes and edits are computed first as a
//! [`FileChange`], so the user can be shown the diff before allowing it.

use super::{AskError, ToolEnv, ToolInput, ToolOutcome, code_block, resolve, typed};
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

/// Most lines read at once when the model names no `limit` and the file
/// cannot be measured on disk first.
pub const DEFAULT_READ_LINES: u32 = 2000;

/// Most bytes of a file whose whole content `write_file` and `edit_file`
/// read (for the diff the user is shown).
pub const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;

/// Asks the client for `path` (from `line`, at most `limit` lines). Fails,
/// instead of waiting for ever, when the answer is over the connection's
/// size limit, or the turn is cancelled (see [`ToolEnv::ask`]).
async fn ask_client(
    env: &ToolEnv,
    path: &Path,
    line: Option<u32>,
    limit: Option<u32>,
) -> Result<String, String> {
    let mut req = ReadTextFileRequest::new(env.session_id.clone(), path.display().to_string());
    if let Some(l) = line {
        req = req.line(l);
    }
    if let Some(n) = limit {
        req = req.limit(n);
    }
    let answer = match env.editor() {
        Ok(conn) => env.ask(conn.read_text_file(req)).await,
        Err(e) => Err(e),
    };
    match answer {
        Ok(answer) => Ok(answer.content),
        Err(AskError::TooLong(e)) => Err(format!(
            "could not read {}: {e}; read fewer lines at a time with line and limit",
            path.display()
        )),
        Err(e) => Err(format!("could not read {}: {e}", path.display())),
    }
}

/// Reads a whole text file, through the client when it offers that. A file
/// on disk over [`MAX_EDIT_BYTES`] is refused before it is read.
pub async fn read_text(env: &ToolEnv, path: &Path) -> Result<String, String> {
    if let Ok(meta) = std::fs::metadata(path)
        && meta.is_file()
        && meta.len() > MAX_EDIT_BYTES
    {
        return Err(format!(
            "{} is {}, too large to change with write_file or edit_file (at most {}); \
             change it with a command instead",
            path.display(),
            mib(meta.len()),
            mib(MAX_EDIT_BYTES)
        ));
    }
    if env.client_read {
        ask_client(env, path, None, None).await
    } else {
        env.local
            .read(path, None, None)
            .await
            .map_err(|e| format!("could not read {}: {e}", path.display()))
    }
}

/// `bytes` in MiB, to one decimal.
pub(crate) fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// Which lines of a file `read_file` asks for.
#[derive(Debug, Clone, PartialEq)]
struct ReadPlan {
    line: Option<u32>,
    limit: Option<u32>,
    /// Set when fewer lines are asked for than the model wanted, so that
    /// the answer fits [`MAX_READ_BYTES`]: the file's line count.
    shortened: Option<u64>,
}

/// Plans a read of `path` from `line`, at most `limit` lines, so that the
/// answer stays within [`MAX_READ_BYTES`] where that can be known: a file on
/// disk larger than that is measured first, and only the lines that fit are
/// asked for (at least one). A line longer than half of `message_limit`
/// could not come back in one message and is refused. A file that is not on
/// disk (only in the editor) is read at most [`DEFAULT_READ_LINES`] lines
/// at a time.
fn plan_read(
    path: &Path,
    line: Option<u32>,
    limit: Option<u32>,
    message_limit: usize,
) -> Result<ReadPlan, String> {
    use std::io::BufRead;
    let bounded = ReadPlan {
        line,
        limit: Some(limit.unwrap_or(DEFAULT_READ_LINES)),
        shortened: None,
    };
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(bounded);
    };
    if !meta.is_file() {
        return Ok(bounded);
    }
    if meta.len() <= MAX_READ_BYTES as u64 {
        return Ok(ReadPlan {
            line,
            limit,
            shortened: None,
        });
    }
    let Ok(file) = std::fs::File::open(path) else {
        return Ok(bounded);
    };
    let mut reader = std::io::BufReader::with_capacity(256 * 1024, file);
    let first = u64::from(line.unwrap_or(1).max(1));
    let wanted = limit.map_or(u64::MAX, u64::from);
    // Line numbers and lengths, streamed: a line is never held whole.
    let (mut current, mut current_len) = (1u64, 0u64);
    let (mut taken, mut taken_bytes) = (0u64, 0u64);
    let mut full = false;
    let mut end_line = |number: u64, len: u64| -> Result<(), String> {
        if number < first || full || taken >= wanted {
            return Ok(());
        }
        if taken == 0 && len > (message_limit / 2) as u64 {
            return Err(format!(
                "line {number} of {} is {}, longer than can be read in one message; \
                 search it with grep, or look at part of it with a command (for example head -c)",
                path.display(),
                mib(len)
            ));
        }
        if taken > 0 && taken_bytes + len > MAX_READ_BYTES as u64 {
            full = true;
            return Ok(());
        }
        taken += 1;
        taken_bytes += len;
        Ok(())
    };
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(_) => return Ok(bounded),
        };
        if buf.is_empty() {
            if current_len > 0 {
                end_line(current, current_len)?;
            } else {
                current -= 1;
            }
            break;
        }
        let n = buf.len();
        let mut rest = buf;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            end_line(current, current_len + i as u64 + 1)?;
            current += 1;
            current_len = 0;
            rest = &rest[i + 1..];
        }
        current_len += rest.len() as u64;
        reader.consume(n);
    }
    let total = current;
    let asked_all = taken >= wanted || first + taken > total;
    Ok(ReadPlan {
        line: Some(first as u32),
        limit: Some(taken.max(1).min(u64::from(u32::MAX)) as u32),
        shortened: (!asked_all).then_some(total),
    })
}

async fn write_text(env: &ToolEnv, path: &Path, content: &str) -> Result<(), String> {
    if env.client_write {
        let req =
            WriteTextFileRequest::new(env.session_id.clone(), path.display().to_string(), content);
        let answer = match env.editor() {
            Ok(conn) => env.ask(conn.write_text_file(req)).await,
            Err(e) => Err(e),
        };
        answer
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
    let plan = {
        let (path, message_limit) = (path.to_path_buf(), env.dropped.limit());
        tokio::task::spawn_blocking(move || plan_read(&path, line, limit, message_limit))
            .await
            .unwrap_or_else(|e| Err(e.to_string()))
    };
    let plan = match plan {
        Ok(plan) => plan,
        Err(e) => return ToolOutcome::fail(e),
    };
    let text = if env.client_read {
        ask_client(env, path, plan.line, plan.limit).await
    } else {
        env.local
            .read(path, plan.line, plan.limit)
            .await
            .map_err(|e| format!("could not read {}: {e}", path.display()))
    };
    let text = match text {
        Ok(text) => text,
        Err(e) => return ToolOutcome::fail(e),
    };
    let first = plan.line.unwrap_or(1);
    let for_model = if text.len() > MAX_READ_BYTES {
        let cut = truncate(&text, MAX_READ_BYTES);
        match cut.rfind('\n') {
            Some(i) => {
                let shown = &cut[..=i];
                let next = u64::from(first) + shown.matches('\n').count() as u64;
                format!(
                    "{shown}\n[cut at {} KiB of {} bytes; read on with line={next}]",
                    MAX_READ_BYTES / 1024,
                    text.len()
                )
            }
            None => format!(
                "{cut}\n[line {first} alone is {} bytes, more than {} KiB: only its start is \
                 shown; search it with grep]",
                text.len(),
                MAX_READ_BYTES / 1024
            ),
        }
    } else if let Some(total) = plan.shortened {
        let shown = text.split_inclusive('\n').count() as u64;
        let last = u64::from(first) + shown.saturating_sub(1);
        format!(
            "{text}\n[lines {first}–{last} of {total}, to stay within {} KiB; read on with line={}]",
            MAX_READ_BYTES / 1024,
            last + 1
        )
    } else if limit.is_none()
        && plan.limit == Some(DEFAULT_READ_LINES)
        && text.split_inclusive('\n').count() as u64 >= u64::from(DEFAULT_READ_LINES)
    {
        let last = u64::from(first) + u64::from(DEFAULT_READ_LINES) - 1;
        format!(
            "{text}\n[lines {first}–{last}; there may be more: read on with line={}]",
            last + 1
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
