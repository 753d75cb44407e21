//! The tools the model can call: their schemas, how each is described to the
//! client, and how each runs (through the client when it offers file system or
//! terminal access, locally otherwise: always locally, through `acp-host`,
//! for a v2 client, which has no file system or terminal methods).
//!
//! This module holds what all tools share: the parsed call ([`ToolInput`]),
//! what a tool may use ([`ToolEnv`]), its result ([`ToolOutcome`]) and the
//! dispatch. Each family lives in its own module: [`files`] (read, write,
//! edit), [`search`] (list, grep), [`shell`] (commands) and `plan`.

pub mod files;
pub mod local;
mod plan;
pub mod search;
pub mod shell;

pub use files::{
    DEFAULT_READ_LINES, FileChange, MAX_READ_BYTES, apply_change, plan_change, read_text,
};
pub use local::Local;
pub use search::{MAX_GREP_MATCHES, MAX_LIST_ENTRIES, grep, list_files};
pub use shell::{DEFAULT_COMMAND_TIMEOUT, MAX_COMMAND_OUTPUT};

use crate::llm::{ToolSpec, truncate};
use crate::output::Output;
use acp::AgentSideConnection;
use acp::CancellationToken;
use acp::schema::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The tools offered to the model. `read_only` leaves out those that change
/// files or run commands.
pub fn specs(read_only: bool) -> Vec<ToolSpec> {
    let mut out = vec![files::read_spec()];
    out.extend(search::specs());
    out.push(plan::spec());
    if !read_only {
        out.extend(files::change_specs());
        out.push(shell::spec());
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

/// `p` made absolute against `cwd` (an absolute `p` stays as it is). Links
/// and `..` are resolved where the path is used: by the client, or by
/// [`acp_host::Roots::resolve`] for the local tools.
pub fn resolve(cwd: &Path, p: &str) -> PathBuf {
    cwd.join(p)
}

/// Decodes a tool's JSON arguments into its argument struct.
fn typed<T: serde::de::DeserializeOwned>(v: Value, name: &str) -> Result<T, String> {
    serde_json::from_value(v).map_err(|e| format!("invalid arguments for {name}: {e}"))
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
        match name {
            "read_file" | "write_file" | "edit_file" => files::parse(name, value, cwd),
            "list_files" | "grep" => search::parse(name, value, cwd),
            "run_command" => shell::parse(value),
            "update_plan" => plan::parse(value),
            other => Err(format!("there is no tool named {other:?}")),
        }
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
    /// Where the session's output goes (and, for a v1 client, its
    /// connection: see [`Output::editor`]).
    pub out: Output,
    /// The session the call belongs to.
    pub session_id: SessionId,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// Read files through the client (only a v1 client can).
    pub client_read: bool,
    /// Write files through the client (only a v1 client can).
    pub client_write: bool,
    /// Run commands in client terminals (only a v1 client can).
    pub client_terminal: bool,
    /// Files and commands of the agent's own, when the client offers none.
    pub local: Arc<Local>,
    /// The client's lines dropped for being over the connection's size
    /// limit whose request the connection could not tell: a request waiting
    /// for its answer gives up when one arrives.
    pub dropped: DroppedAnswers,
    /// Cancelled when the turn is cancelled.
    pub cancel: CancellationToken,
}

/// How long a clean-up request to the client (killing or releasing a
/// terminal after a cancel or a timeout) may take before it is given up.
pub const CLEANUP_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Why a request to the client ended without an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskError {
    /// The turn was cancelled while it waited (the request was withdrawn
    /// with `$/cancel_request`).
    Cancelled,
    /// The answer was over the connection's size limit and was dropped; the
    /// message says so, for the user and the model.
    TooLong(String),
    /// It failed; the message says why, for the user and the model.
    Failed(String),
}

impl std::fmt::Display for AskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AskError::Cancelled => f.write_str("cancelled"),
            AskError::TooLong(message) | AskError::Failed(message) => f.write_str(message),
        }
    }
}

impl ToolEnv {
    /// The client's connection, for its file system and terminals: the
    /// `client_*` flags are only set for a client that has one.
    pub fn editor(&self) -> Result<&AgentSideConnection, AskError> {
        self.out.editor().ok_or_else(|| {
            AskError::Failed("this client has no file system or terminals to lend".into())
        })
    }

    /// Awaits `call`, a request to the client, without ever waiting for
    /// ever on a misbehaving client: it ends when the turn is cancelled, and
    /// when the connection drops a line of the client's that was over the
    /// size limit and could not be tied to a request (it may have been this
    /// answer). An over-long answer the connection could tie to this request
    /// fails it at once ([`acp::ConnectionError::TooLong`]).
    pub async fn ask<T>(
        &self,
        call: impl std::future::Future<Output = Result<T, acp::ConnectionError>>,
    ) -> Result<T, AskError> {
        let dropped = self.dropped.next();
        tokio::select! {
            biased;
            () = self.cancel.cancelled() => Err(AskError::Cancelled),
            answer = call => answer.map_err(|e| self.failure(&e)),
            () = dropped => Err(self.dropped_unknown()),
        }
    }

    /// Like [`ask`](Self::ask) for clean-up after the turn was cancelled or
    /// a command timed out: not ended by the cancel, but given up after
    /// [`CLEANUP_WAIT`].
    pub async fn ask_to_clean_up<T>(
        &self,
        call: impl std::future::Future<Output = Result<T, acp::ConnectionError>>,
    ) -> Result<T, AskError> {
        let dropped = self.dropped.next();
        tokio::select! {
            answer = call => answer.map_err(|e| self.failure(&e)),
            () = dropped => Err(self.dropped_unknown()),
            () = tokio::time::sleep(CLEANUP_WAIT) => Err(AskError::Failed(format!(
                "the editor did not answer within {} s", CLEANUP_WAIT.as_secs()
            ))),
        }
    }

    fn failure(&self, err: &acp::ConnectionError) -> AskError {
        match err {
            acp::ConnectionError::TooLong { size, limit } => AskError::TooLong(format!(
                "the editor's answer was {}, longer than one message may be ({}), and was dropped",
                files::mib(*size as u64),
                files::mib(*limit as u64)
            )),
            other => AskError::Failed(other.to_string()),
        }
    }

    /// A line dropped whose request is not known: maybe this answer.
    fn dropped_unknown(&self) -> AskError {
        AskError::TooLong(format!(
            "the editor's answer was longer than one message may be ({}) and was dropped",
            files::mib(self.dropped.limit() as u64)
        ))
    }
}

/// Counts the lines from the client that were longer than the connection
/// allows, were skipped unread, and could not be tied to a request by their
/// id (see [`acp::Dropped::TooLong`]). Such a line may have been the answer
/// a tool waits for, which would then never come; a request to the client
/// ([`ToolEnv::ask`]) watches this and fails instead.
#[derive(Debug, Clone)]
pub struct DroppedAnswers {
    seen: Arc<tokio::sync::watch::Sender<u64>>,
    limit: usize,
}

impl DroppedAnswers {
    /// No line dropped yet, on a connection whose lines may be `limit`
    /// bytes long.
    pub fn new(limit: usize) -> DroppedAnswers {
        DroppedAnswers {
            seen: Arc::new(tokio::sync::watch::Sender::new(0)),
            limit,
        }
    }

    /// The connection's limit on one line, in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Notes that a line was dropped.
    pub fn record(&self) {
        self.seen.send_modify(|n| *n += 1);
    }

    /// Resolves once a line is dropped after this call.
    pub fn next(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut seen = self.seen.subscribe();
        async move {
            if seen.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
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

    /// Stopped because the turn was cancelled; the model is told `for_model`.
    pub fn cancelled(for_model: impl Into<String>) -> Self {
        ToolOutcome {
            ok: false,
            for_model: for_model.into(),
            content: vec![],
            cancelled: true,
        }
    }
}

/// `text` as a fenced block for the client, cut to `max` bytes. The closing
/// fence follows the text's own last line break (no blank line before it),
/// and the fence is longer than any run of backticks in the text, so a
/// Markdown file's own fences cannot end the block early.
fn code_block(text: &str, max: usize) -> ToolCallContent {
    let text = truncate(text, max);
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let newline = if text.is_empty() || text.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    ToolCallContent::from(format!("{fence}\n{text}{newline}{fence}"))
}

/// Runs a tool. Long-running tools (commands) stream their output into the
/// tool call `call_id` as they go.
pub async fn run(env: &ToolEnv, input: &ToolInput, call_id: &ToolCallId) -> ToolOutcome {
    match input {
        ToolInput::ReadFile { path, line, limit } => {
            files::read_file(env, path, *line, *limit).await
        }
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
        } => shell::run(env, command, Duration::from_secs(*timeout_secs), call_id).await,
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
            content: vec![code_block(&text, 8000)],
            for_model: text,
            cancelled: false,
        },
        Ok(Err(e)) => ToolOutcome::fail(e),
        Err(e) => ToolOutcome::fail(format!("the tool crashed: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of a content block.
    fn block_text(c: &ToolCallContent) -> &str {
        match c {
            ToolCallContent::Content(c) => c.content.as_text().unwrap(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn code_blocks_close_right_after_the_text() {
        assert_eq!(block_text(&code_block("a\nb\n", 100)), "```\na\nb\n```");
        assert_eq!(block_text(&code_block("a\nb", 100)), "```\na\nb\n```");
        assert_eq!(block_text(&code_block("", 100)), "```\n```");
        // A text with fences of its own gets a longer fence.
        assert_eq!(
            block_text(&code_block("```rust\nx\n```\n", 100)),
            "````\n```rust\nx\n```\n````"
        );
    }

    #[test]
    fn resolves_relative_paths_against_cwd() {
        let cwd = Path::new("/w/proj");
        assert_eq!(resolve(cwd, "src/a.rs"), PathBuf::from("/w/proj/src/a.rs"));
        assert_eq!(resolve(cwd, "./x/../b"), PathBuf::from("/w/proj/./x/../b"));
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
}
