//! The tools the model can call: their schemas, how each is described to the
//! client, and how each runs (through the client when it offers file system or
//! terminal access, locally otherwise).

use crate::llm::{ToolSpec, truncate};
use acp::AgentSideConnection;
use acp::CancellationToken;
use acp::schema::*;
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Most bytes of a file returned to the model.
pub const MAX_READ_BYTES: usize = 256 * 1024;
/// Most bytes of command output kept (the tail is kept).
pub const MAX_COMMAND_OUTPUT: usize = 64 * 1024;
/// Most entries a listing returns.
pub const MAX_LIST_ENTRIES: usize = 1000;
/// Most matches a grep returns.
pub const MAX_GREP_MATCHES: usize = 300;
/// Default time limit of a command, in seconds.
pub const DEFAULT_COMMAND_TIMEOUT: u64 = 600;

/// The tools offered to the model. `read_only` leaves out those that change
/// files or run commands.
pub fn specs(read_only: bool) -> Vec<ToolSpec> {
    let mut out = vec![
        ToolSpec {
            name: "read_file".into(),
            description: "Read a text file. Paths are relative to the session's working directory. Optionally start at a 1-based line and read a limited number of lines.".into(),
            parameters: json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "File path"},
                "line": {"type": "integer", "description": "1-based line to start at"},
                "limit": {"type": "integer", "description": "Most lines to read"}
            }, "required": ["path"]}),
        },
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
        ToolSpec {
            name: "update_plan".into(),
            description: "Record the plan for the task as a todo list, replacing the previous one. Use it for multi-step work and keep statuses current.".into(),
            parameters: json!({"type": "object", "properties": {
                "entries": {"type": "array", "items": {"type": "object", "properties": {
                    "content": {"type": "string"},
                    "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                    "priority": {"type": "string", "enum": ["high", "medium", "low"]}
                }, "required": ["content", "status"]}}
            }, "required": ["entries"]}),
        },
    ];
    if !read_only {
        out.extend([
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
            ToolSpec {
                name: "run_command".into(),
                description: "Run a shell command (sh -c) in the working directory and return its exit status and output.".into(),
                parameters: json!({"type": "object", "properties": {
                    "command": {"type": "string"},
                    "timeout_secs": {"type": "integer", "description": "Time limit, default 600"}
                }, "required": ["command"]}),
            },
        ]);
    }
    out
}

/// Parsed arguments of a tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolInput {
    /// `read_file`.
    ReadFile {
        /// Absolute path.
        path: PathBuf,
        /// 1-based first line.
        line: Option<u32>,
        /// Most lines.
        limit: Option<u32>,
    },
    /// `write_file`.
    WriteFile {
        /// Absolute path.
        path: PathBuf,
        /// The new content.
        content: String,
    },
    /// `edit_file`.
    EditFile {
        /// Absolute path.
        path: PathBuf,
        /// Text to find.
        old_string: String,
        /// Replacement.
        new_string: String,
        /// Replace every occurrence.
        replace_all: bool,
    },
    /// `list_files`.
    ListFiles {
        /// Absolute directory.
        path: PathBuf,
        /// Glob filter.
        glob: Option<String>,
    },
    /// `grep`.
    Grep {
        /// The regex.
        pattern: String,
        /// Absolute file or directory.
        path: PathBuf,
        /// Glob filter.
        glob: Option<String>,
        /// Ignore case.
        case_insensitive: bool,
    },
    /// `run_command`.
    RunCommand {
        /// The shell command line.
        command: String,
        /// Time limit in seconds.
        timeout_secs: u64,
    },
    /// `update_plan`.
    UpdatePlan {
        /// The new plan.
        entries: Vec<PlanEntry>,
    },
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

#[derive(Deserialize)]
struct CommandArgs {
    command: String,
    timeout_secs: Option<u64>,
}

#[derive(Deserialize)]
struct PlanArgs {
    entries: Vec<PlanItem>,
}

#[derive(Deserialize)]
struct PlanItem {
    content: String,
    status: String,
    priority: Option<String>,
}

/// `p` made absolute against `cwd`, with `.` and `..` resolved lexically.
pub fn resolve(cwd: &Path, p: &str) -> PathBuf {
    let joined = if Path::new(p).is_absolute() {
        PathBuf::from(p)
    } else {
        cwd.join(p)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

impl ToolInput {
    /// Parses the model's JSON arguments for tool `name`.
    pub fn parse(name: &str, arguments: &str, cwd: &Path) -> Result<ToolInput, String> {
        let args = if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        };
        let value: Value = serde_json::from_str(args).map_err(|e| {
            format!(
                "the arguments are not valid JSON ({e}): {}",
                truncate(args, 300)
            )
        })?;
        fn typed<T: serde::de::DeserializeOwned>(v: Value, name: &str) -> Result<T, String> {
            serde_json::from_value(v).map_err(|e| format!("invalid arguments for {name}: {e}"))
        }
        Ok(match name {
            "read_file" => {
                let a: PathArgs = typed(value, name)?;
                ToolInput::ReadFile {
                    path: resolve(cwd, &a.path),
                    line: a.line,
                    limit: a.limit,
                }
            }
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
                    return Err(
                        "old_string must not be empty; use write_file to create a file".into(),
                    );
                }
                ToolInput::EditFile {
                    path: resolve(cwd, &a.path),
                    old_string: a.old_string,
                    new_string: a.new_string,
                    replace_all: a.replace_all,
                }
            }
            "list_files" => {
                let a: ListArgs = typed(value, name)?;
                ToolInput::ListFiles {
                    path: resolve(cwd, a.path.as_deref().unwrap_or(".")),
                    glob: a.glob.filter(|g| !g.is_empty()),
                }
            }
            "grep" => {
                let a: GrepArgs = typed(value, name)?;
                ToolInput::Grep {
                    pattern: a.pattern,
                    path: resolve(cwd, a.path.as_deref().unwrap_or(".")),
                    glob: a.glob.filter(|g| !g.is_empty()),
                    case_insensitive: a.case_insensitive,
                }
            }
            "run_command" => {
                let a: CommandArgs = typed(value, name)?;
                if a.command.trim().is_empty() {
                    return Err("command must not be empty".into());
                }
                ToolInput::RunCommand {
                    command: a.command,
                    timeout_secs: a
                        .timeout_secs
                        .filter(|t| *t > 0)
                        .unwrap_or(DEFAULT_COMMAND_TIMEOUT),
                }
            }
            "update_plan" => {
                let a: PlanArgs = typed(value, name)?;
                let entries = a
                    .entries
                    .into_iter()
                    .map(|e| {
                        let status = match e.status.as_str() {
                            "in_progress" => PlanEntryStatus::InProgress,
                            "completed" | "done" => PlanEntryStatus::Completed,
                            _ => PlanEntryStatus::Pending,
                        };
                        let priority = match e.priority.as_deref() {
                            Some("high") => PlanEntryPriority::High,
                            Some("low") => PlanEntryPriority::Low,
                            _ => PlanEntryPriority::Medium,
                        };
                        PlanEntry::new(e.content, priority, status)
                    })
                    .collect();
                ToolInput::UpdatePlan { entries }
            }
            other => return Err(format!("there is no tool named {other:?}")),
        })
    }

    /// Whether the tool changes files or runs commands (needs permission, and
    /// is refused in read-only mode).
    pub fn is_mutating(&self) -> bool {
        matches!(
            self,
            ToolInput::WriteFile { .. } | ToolInput::EditFile { .. } | ToolInput::RunCommand { .. }
        )
    }

    /// The tool's kind for the client.
    pub fn kind(&self) -> ToolKind {
        match self {
            ToolInput::ReadFile { .. } => ToolKind::Read,
            ToolInput::WriteFile { .. } | ToolInput::EditFile { .. } => ToolKind::Edit,
            ToolInput::ListFiles { .. } | ToolInput::Grep { .. } => ToolKind::Search,
            ToolInput::RunCommand { .. } => ToolKind::Execute,
            ToolInput::UpdatePlan { .. } => ToolKind::Think,
        }
    }

    /// A short title for the client, with paths shown relative to `cwd`.
    pub fn title(&self, cwd: &Path) -> String {
        let rel = |p: &Path| display_path(p, cwd);
        match self {
            ToolInput::ReadFile { path, line, limit } => match (line, limit) {
                (Some(l), Some(n)) => {
                    format!("Read {} (lines {l}–{})", rel(path), l + n.saturating_sub(1))
                }
                (Some(l), None) => format!("Read {} (from line {l})", rel(path)),
                _ => format!("Read {}", rel(path)),
            },
            ToolInput::WriteFile { path, .. } => format!("Write {}", rel(path)),
            ToolInput::EditFile { path, .. } => format!("Edit {}", rel(path)),
            ToolInput::ListFiles { path, glob } => match glob {
                Some(g) => format!("List {g} in {}", rel(path)),
                None => format!("List {}", rel(path)),
            },
            ToolInput::Grep { pattern, path, .. } => format!("Search {pattern:?} in {}", rel(path)),
            ToolInput::RunCommand { command, .. } => format!("Run `{}`", truncate(command, 120)),
            ToolInput::UpdatePlan { .. } => "Update plan".into(),
        }
    }

    /// The places the tool touches.
    pub fn locations(&self) -> Vec<ToolCallLocation> {
        match self {
            ToolInput::ReadFile { path, line, .. } => {
                let mut loc = ToolCallLocation::new(path.display().to_string());
                if let Some(l) = line {
                    loc = loc.line(*l);
                }
                vec![loc]
            }
            ToolInput::WriteFile { path, .. }
            | ToolInput::EditFile { path, .. }
            | ToolInput::ListFiles { path, .. }
            | ToolInput::Grep { path, .. } => {
                vec![ToolCallLocation::new(path.display().to_string())]
            }
            ToolInput::RunCommand { .. } | ToolInput::UpdatePlan { .. } => vec![],
        }
    }
}

/// `p` relative to `cwd` when inside it, else absolute.
pub fn display_path(p: &Path, cwd: &Path) -> String {
    match p.strip_prefix(cwd) {
        Ok(r) if r.as_os_str().is_empty() => ".".into(),
        Ok(r) => r.display().to_string(),
        Err(_) => p.display().to_string(),
    }
}

/// What the tools may use of the client and the session.
#[derive(Clone)]
pub struct ToolEnv {
    /// The connection to the client.
    pub conn: AgentSideConnection,
    /// The session the call belongs to.
    pub session_id: SessionId,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// Read files through the client.
    pub client_read: bool,
    /// Write files through the client.
    pub client_write: bool,
    /// Run commands in client terminals.
    pub client_terminal: bool,
    /// Cancelled when the turn is cancelled.
    pub cancel: CancellationToken,
}

/// The result of running a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    /// Whether it succeeded.
    pub ok: bool,
    /// What the model is told.
    pub for_model: String,
    /// What the client shows in the tool call.
    pub content: Vec<ToolCallContent>,
    /// Whether it stopped because the turn was cancelled.
    pub cancelled: bool,
}

impl ToolOutcome {
    /// A failure with `message`, for the model and the user alike.
    pub fn fail(message: impl Into<String>) -> Self {
        let message = message.into();
        ToolOutcome {
            ok: false,
            for_model: format!("Error: {message}"),
            content: vec![ToolCallContent::from(message)],
            cancelled: false,
        }
    }

    fn cancelled() -> Self {
        ToolOutcome {
            ok: false,
            for_model: "The user cancelled this tool call.".into(),
            content: vec![],
            cancelled: true,
        }
    }
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
        let bytes = tokio::fs::read(path)
            .await
            .map_err(|e| format!("could not read {}: {e}", path.display()))?;
        String::from_utf8(bytes).map_err(|_| format!("{} is not a UTF-8 text file", path.display()))
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
        let path = path.to_path_buf();
        let content = content.to_string();
        tokio::task::spawn_blocking(move || atomic_write(&path, content.as_bytes()))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("could not write: {e}"))
    }
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, then a
/// rename. Keeps an existing file's permissions; creates missing directories.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().ok_or_else(|| {
        std::io::Error::other(format!("{} has no parent directory", path.display()))
    })?;
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(
        ".{name}.acp-agent-{}-{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        std::fs::write(&tmp, bytes)?;
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
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

/// Runs a tool that needs no file change plan (read, list, grep, command).
/// `progress` receives live content of long-running tools.
pub async fn run(env: &ToolEnv, input: &ToolInput, call_id: &ToolCallId) -> ToolOutcome {
    match input {
        ToolInput::ReadFile { path, line, limit } => read_file(env, path, *line, *limit).await,
        ToolInput::ListFiles { path, glob } => {
            let (path, glob, cwd) = (path.clone(), glob.clone(), env.cwd.clone());
            blocking(move || list_files(&path, glob.as_deref(), &cwd)).await
        }
        ToolInput::Grep {
            pattern,
            path,
            glob,
            case_insensitive,
        } => {
            let (pattern, path, glob, ci, cwd) = (
                pattern.clone(),
                path.clone(),
                glob.clone(),
                *case_insensitive,
                env.cwd.clone(),
            );
            blocking(move || grep(&pattern, &path, glob.as_deref(), ci, &cwd)).await
        }
        ToolInput::RunCommand {
            command,
            timeout_secs,
        } => {
            let timeout = Duration::from_secs(*timeout_secs);
            if env.client_terminal {
                run_in_client_terminal(env, command, timeout, call_id).await
            } else {
                run_locally(env, command, timeout, call_id).await
            }
        }
        ToolInput::WriteFile { .. } | ToolInput::EditFile { .. } => {
            match plan_change(env, input).await {
                Ok(change) => apply_change(env, &change).await,
                Err(e) => ToolOutcome::fail(e),
            }
        }
        ToolInput::UpdatePlan { .. } => ToolOutcome::fail("update_plan is handled by the agent"),
    }
}

async fn blocking(f: impl FnOnce() -> Result<String, String> + Send + 'static) -> ToolOutcome {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(text)) => ToolOutcome {
            ok: true,
            for_model: text.clone(),
            content: vec![ToolCallContent::from(format!(
                "```\n{}\n```",
                truncate(&text, 8000)
            ))],
            cancelled: false,
        },
        Ok(Err(e)) => ToolOutcome::fail(e),
        Err(e) => ToolOutcome::fail(format!("the tool crashed: {e}")),
    }
}

async fn read_file(
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
        let whole = match read_text(env, path).await {
            Ok(t) => t,
            Err(e) => return ToolOutcome::fail(e),
        };
        if line.is_some() || limit.is_some() {
            let skip = line.unwrap_or(1).saturating_sub(1) as usize;
            let take = limit.map(|n| n as usize).unwrap_or(usize::MAX);
            whole
                .split_inclusive('\n')
                .skip(skip)
                .take(take)
                .collect::<String>()
        } else {
            whole
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
        content: vec![ToolCallContent::from(format!(
            "```\n{}\n```",
            truncate(&for_model, 8000)
        ))],
        for_model,
        cancelled: false,
    }
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

fn command_report(exit: &str, output: &str, truncated: bool) -> String {
    let mut s = format!("{exit}\n");
    if truncated {
        s.push_str("[output truncated; showing the end]\n");
    }
    if output.is_empty() {
        s.push_str("(no output)");
    } else {
        s.push_str(output);
    }
    s
}

async fn run_in_client_terminal(
    env: &ToolEnv,
    command: &str,
    timeout: Duration,
    call_id: &ToolCallId,
) -> ToolOutcome {
    let req = CreateTerminalRequest::new(env.session_id.clone(), "sh")
        .args(vec!["-c".to_string(), command.to_string()])
        .cwd(env.cwd.display().to_string())
        .output_byte_limit(MAX_COMMAND_OUTPUT as u64);
    let terminal_id = match env.conn.create_terminal(req).await {
        Ok(r) => r.terminal_id,
        Err(e) => {
            return ToolOutcome::fail(format!("could not start the command in a terminal: {e}"));
        }
    };
    let embed = vec![ToolCallContent::Terminal(Terminal::new(
        terminal_id.clone(),
    ))];
    let _ = env
        .conn
        .session_notification(SessionNotification::new(
            env.session_id.clone(),
            ToolCallUpdate::new(call_id.clone()).content(embed.clone()),
        ))
        .await;
    let wait = env
        .conn
        .wait_for_terminal_exit(WaitForTerminalExitRequest::new(
            env.session_id.clone(),
            terminal_id.clone(),
        ));
    let mut note = None;
    let mut cancelled = false;
    let exit = tokio::select! {
        r = wait => r.ok().map(|r| r.exit_status()),
        _ = env.cancel.cancelled() => { cancelled = true; None }
        _ = tokio::time::sleep(timeout) => { note = Some(format!("The command timed out after {}s and was killed.", timeout.as_secs())); None }
    };
    if exit.is_none() {
        let _ = env
            .conn
            .kill_terminal(KillTerminalRequest::new(
                env.session_id.clone(),
                terminal_id.clone(),
            ))
            .await;
    }
    let output = env
        .conn
        .terminal_output(TerminalOutputRequest::new(
            env.session_id.clone(),
            terminal_id.clone(),
        ))
        .await;
    let _ = env
        .conn
        .release_terminal(ReleaseTerminalRequest::new(
            env.session_id.clone(),
            terminal_id,
        ))
        .await;
    if cancelled {
        let mut o = ToolOutcome::cancelled();
        o.content = embed;
        return o;
    }
    let (text, truncated, status) = match output {
        Ok(o) => (o.output, o.truncated, o.exit_status),
        Err(e) => return ToolOutcome::fail(format!("could not read the terminal output: {e}")),
    };
    let status = exit.or(status);
    let (ok, exit_line) = describe_exit(status.as_ref(), note);
    ToolOutcome {
        ok,
        for_model: command_report(&exit_line, &text, truncated),
        content: embed,
        cancelled: false,
    }
}

fn describe_exit(status: Option<&TerminalExitStatus>, note: Option<String>) -> (bool, String) {
    if let Some(n) = note {
        return (false, n);
    }
    match status {
        Some(TerminalExitStatus {
            exit_code: Some(c), ..
        }) => (*c == 0, format!("Exit code: {c}")),
        Some(TerminalExitStatus {
            signal: Some(s), ..
        }) => (false, format!("Killed by signal {s}")),
        _ => (false, "The command ended with an unknown status.".into()),
    }
}

/// Output kept from a local command: the last [`MAX_COMMAND_OUTPUT`] bytes.
#[derive(Default)]
struct Tail {
    bytes: Vec<u8>,
    truncated: bool,
    changed: bool,
}

impl Tail {
    fn push(&mut self, b: &[u8]) {
        self.bytes.extend_from_slice(b);
        if self.bytes.len() > MAX_COMMAND_OUTPUT {
            let cut = self.bytes.len() - MAX_COMMAND_OUTPUT;
            self.bytes.drain(..cut);
            self.truncated = true;
        }
        self.changed = true;
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

async fn run_locally(
    env: &ToolEnv,
    command: &str,
    timeout: Duration,
    call_id: &ToolCallId,
) -> ToolOutcome {
    use tokio::io::AsyncReadExt;
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(&env.cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return ToolOutcome::fail(format!("could not start sh: {e}")),
    };
    let pgid = child.id();
    let tail = Arc::new(std::sync::Mutex::new(Tail::default()));
    let mut readers = Vec::new();
    for pipe in [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
    ]
    .into_iter()
    .flatten()
    {
        let tail = tail.clone();
        readers.push(tokio::spawn(async move {
            let mut pipe = pipe;
            let mut buf = [0u8; 8192];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                tail.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(&buf[..n]);
            }
        }));
    }
    let kill_group = || {
        if let Some(pid) = pgid {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    };
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut ticker = tokio::time::interval(Duration::from_millis(250));
    let mut note = None;
    let status = loop {
        tokio::select! {
            s = child.wait() => break s.ok(),
            _ = env.cancel.cancelled() => {
                kill_group();
                let _ = child.wait().await;
                for r in &readers { r.abort(); }
                return ToolOutcome::cancelled();
            }
            _ = &mut deadline => {
                kill_group();
                note = Some(format!("The command timed out after {}s and was killed.", timeout.as_secs()));
                break child.wait().await.ok();
            }
            _ = ticker.tick() => {
                let update = {
                    let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                    if t.changed { t.changed = false; Some(t.text()) } else { None }
                };
                if let Some(text) = update {
                    let _ = env.conn.session_notification(SessionNotification::new(
                        env.session_id.clone(),
                        ToolCallUpdate::new(call_id.clone())
                            .content(vec![ToolCallContent::from(format!("```\n{text}\n```"))]),
                    )).await;
                }
            }
        }
    };
    // Background processes may keep the pipes open: give the readers a moment.
    kill_group();
    for r in readers {
        let _ = tokio::time::timeout(Duration::from_secs(2), r).await;
    }
    let t = tail.lock().unwrap_or_else(|p| p.into_inner());
    let text = t.text();
    let exit = status.map(|s| {
        use std::os::unix::process::ExitStatusExt;
        match (s.code(), s.signal()) {
            (Some(c), _) => TerminalExitStatus::exited(c as u32),
            (None, Some(sig)) => TerminalExitStatus::signaled(format!("{sig}")),
            _ => TerminalExitStatus::default(),
        }
    });
    let (ok, exit_line) = describe_exit(exit.as_ref(), note);
    let report = command_report(&exit_line, &text, t.truncated);
    ToolOutcome {
        ok,
        content: vec![ToolCallContent::from(format!(
            "```\n{}\n```",
            truncate(&report, 16000)
        ))],
        for_model: report,
        cancelled: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relative_paths_against_cwd() {
        let cwd = Path::new("/w/proj");
        assert_eq!(resolve(cwd, "src/a.rs"), PathBuf::from("/w/proj/src/a.rs"));
        assert_eq!(resolve(cwd, "./x/../b"), PathBuf::from("/w/proj/b"));
        assert_eq!(resolve(cwd, "/etc/hosts"), PathBuf::from("/etc/hosts"));
    }

    #[test]
    fn parse_errors_are_messages() {
        let cwd = Path::new("/w");
        assert!(
            ToolInput::parse("read_file", "{\"path\":", cwd)
                .unwrap_err()
                .contains("not valid JSON")
        );
        assert!(
            ToolInput::parse("nope", "{}", cwd)
                .unwrap_err()
                .contains("no tool named")
        );
        assert!(
            ToolInput::parse("edit_file", "{\"path\":\"a\"}", cwd)
                .unwrap_err()
                .contains("invalid arguments")
        );
        let i = ToolInput::parse("run_command", "{\"command\":\"ls\"}", cwd).unwrap();
        assert!(i.is_mutating());
        assert_eq!(i.kind(), ToolKind::Execute);
        assert_eq!(i.title(cwd), "Run `ls`");
    }

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

    #[test]
    fn atomic_write_replaces_and_creates() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/f.txt");
        atomic_write(&p, b"one").unwrap();
        atomic_write(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("sub")).unwrap().collect();
        assert_eq!(leftovers.len(), 1);
    }
}
