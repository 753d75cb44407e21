//! Tool calls between the versions.
//!
//! v1 → v2: `tool_call` (a creation) and `tool_call_update` both become v2's
//! `tool_call_update` (the first one with an id creates the call); a v1 diff
//! (`path`, `oldText`, `newText`) becomes a structured change (`add` without
//! `oldText`, else `modify`; `fileType: text`) with a Git patch made from the
//! two texts. A v1 update cannot clear a field, so nothing is lost that way.
//!
//! v2 → v1 ([`ToolCalls`], which remembers each call): the first
//! `tool_call_update` of an id becomes `tool_call` (its title, else its name,
//! else "Tool call"), later ones `tool_call_update`; `tool_call_content_chunk`
//! becomes a `tool_call_update` with the whole content so far (v1 replaces the
//! list). Lost: clearing a title, kind, status or raw input/output (`null`;
//! v1 cannot say it; a cleared content or location list becomes `[]`), the
//! status `paused` (reported as `in_progress`) and `cancelled` (as `failed`),
//! the call's `capabilities`. A structured diff becomes one v1 diff per
//! changed file, built from the patch's hunks: `oldText` and `newText` hold the
//! changed regions with their context, not the whole files; a change without a
//! patch (binary, a rename without edits, a symlink) becomes a line of text.
//! An agent-owned terminal becomes a text block holding its command, its
//! output (decoded as UTF-8, invalid bytes replaced, the last 64 KiB) and its
//! exit status, rewritten as the terminal's updates arrive.

use super::content::{block_to_v1, block_to_v2, raw_object};
use acp_schema::{self as v1, SessionId, TerminalId, ToolCallId, v2};
use base64::Engine as _;
use std::collections::HashMap;

/// The most terminal output shown in a v1 text block.
const TERMINAL_TAIL: usize = 64 * 1024;

/// A v1 status as v2's (v2 has every v1 status).
fn status_to_v2(status: v1::ToolCallStatus) -> v2::ToolCallStatus {
    v2::ToolCallStatus::from(status.as_str())
}

/// A v2 status as v1's: `paused` is `in_progress`, `cancelled` is `failed`.
fn status_to_v1(status: v2::ToolCallStatus) -> v1::ToolCallStatus {
    match status {
        v2::ToolCallStatus::Paused => v1::ToolCallStatus::InProgress,
        v2::ToolCallStatus::Cancelled => v1::ToolCallStatus::Failed,
        other => v1::ToolCallStatus::from(other.as_str()),
    }
}

/// v1's `tool_call` as v2's `tool_call_update` that creates the call.
pub fn tool_call_to_v2(call: v1::ToolCall) -> v2::ToolCallUpdate {
    let mut out = v2::ToolCallUpdate::new(call.tool_call_id)
        .title(call.title)
        .kind(call.kind)
        .status(status_to_v2(call.status));
    if !call.content.is_empty() {
        out = out.content(
            call.content
                .into_iter()
                .map(tool_call_content_to_v2)
                .collect::<Vec<_>>(),
        );
    }
    if !call.locations.is_empty() {
        out = out.locations(call.locations);
    }
    out.raw_input = call.raw_input.map(Some);
    out.raw_output = call.raw_output.map(Some);
    out.name = call.name.map(Some);
    out.meta = call.meta.map(Some);
    out.extra = call.extra;
    out
}

/// v1's `tool_call_update` as v2's (present fields set, the others unchanged).
pub fn tool_call_update_to_v2(update: v1::ToolCallUpdate) -> v2::ToolCallUpdate {
    let mut out = v2::ToolCallUpdate::new(update.tool_call_id);
    out.kind = update.kind.map(Some);
    out.status = update.status.map(|s| Some(status_to_v2(s)));
    out.title = update.title.map(Some);
    out.name = update.name.map(Some);
    out.content = update
        .content
        .map(|c| Some(c.into_iter().map(tool_call_content_to_v2).collect()));
    out.locations = update.locations.map(Some);
    out.raw_input = update.raw_input.map(Some);
    out.raw_output = update.raw_output.map(Some);
    out.meta = update.meta.map(Some);
    out.extra = update.extra;
    out
}

/// v1 tool call content as v2's. A diff becomes a structured file change
/// (`add` without `oldText`, else `modify`; `fileType: text`) with a Git
/// patch of the two texts that names the file by its absolute path, without
/// Git's `a/` and `b/` prefixes (as v2 requires), and `/dev/null` for the
/// missing side of a new file. Content keeps its `_meta` and unknown fields.
pub fn tool_call_content_to_v2(content: v1::ToolCallContent) -> v2::ToolCallContent {
    match content {
        v1::ToolCallContent::Content(c) => {
            let mut out = v2::Content::new(block_to_v2(c.content));
            out.meta = c.meta;
            out.extra = c.extra;
            v2::ToolCallContent::Content(out)
        }
        v1::ToolCallContent::Diff(d) => v2::ToolCallContent::Diff(diff_to_v2(d)),
        v1::ToolCallContent::Terminal(t) => v2::ToolCallContent::Terminal(t),
        v1::ToolCallContent::Other(raw) => v2::ToolCallContent::Other(raw),
        other => v2::ToolCallContent::Other(raw_object(&other)),
    }
}

/// A v1 diff as a structured change with a Git patch.
pub(crate) fn diff_to_v2(diff: v1::Diff) -> v2::Diff {
    let path = diff.path;
    let (change, old_label) = match &diff.old_text {
        None => (v2::DiffChange::add(path.clone()), "/dev/null".to_string()),
        Some(_) => (v2::DiffChange::modify(path.clone()), path.clone()),
    };
    let old = diff.old_text.as_deref().unwrap_or("");
    let unified = similar::TextDiff::from_lines(old, &diff.new_text)
        .unified_diff()
        .context_radius(3)
        .header(&old_label, &path)
        .to_string();
    let mut patch = format!("diff --git {path} {path}\n");
    if diff.old_text.is_none() {
        patch.push_str("new file mode 100644\n");
    }
    patch.push_str(&unified);
    let mut out = v2::Diff::new(vec![change.file_type(v2::DiffFileType::Text)]);
    out.patch = Some(v2::DiffPatch::git(patch));
    out.meta = diff.meta;
    out.extra = diff.extra;
    out
}

/// A v2 diff as v1 content: one v1 diff per file of its patch, or a line of
/// text per change when there is no patch to read.
pub(crate) fn diff_to_v1(diff: &v2::Diff) -> Vec<v1::ToolCallContent> {
    let sections = diff
        .patch
        .as_ref()
        .filter(|p| p.format == v2::DiffPatchFormat::GitPatch)
        .map(|p| patch_sections(&p.text))
        .unwrap_or_default();
    let mut out = Vec::new();
    for change in &diff.changes {
        let path = change.path().unwrap_or_default();
        let section = sections.iter().find(|s| s.path == path);
        match (section, &change.operation) {
            (Some(s), op) => {
                let old = match op {
                    v2::DiffOperation::Add(_) => None,
                    _ => Some(s.old.clone()),
                };
                let new = match op {
                    v2::DiffOperation::Delete(_) => String::new(),
                    _ => s.new.clone(),
                };
                out.push(v1::ToolCallContent::Diff(v1::Diff::new(path, old, new)));
            }
            (None, op) => {
                let what = match op {
                    v2::DiffOperation::Add(c) => format!("added {}", c.path),
                    v2::DiffOperation::Delete(c) => format!("deleted {}", c.path),
                    v2::DiffOperation::Modify(c) => format!("modified {}", c.path),
                    v2::DiffOperation::Move(c) => format!("moved {} to {}", c.old_path, c.path),
                    v2::DiffOperation::Copy(c) => format!("copied {} to {}", c.old_path, c.path),
                    v2::DiffOperation::Other(raw) => format!(
                        "changed a file ({})",
                        raw.get_str("operation").unwrap_or_default()
                    ),
                    _ => "changed a file".to_string(),
                };
                let kind = change
                    .file_type
                    .as_ref()
                    .map(|t| format!(" ({t})"))
                    .unwrap_or_default();
                out.push(text(format!("{what}{kind}")));
            }
        }
    }
    out
}

/// One file of a Git patch: its path (after the change) and the old and new
/// sides of its hunks, context included.
struct Section {
    path: String,
    old: String,
    new: String,
}

fn patch_sections(patch: &str) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    let mut in_hunk = false;
    for line in patch.split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            out.push(Section {
                path: String::new(),
                old: String::new(),
                new: String::new(),
            });
            in_hunk = false;
            continue;
        }
        let Some(section) = out.last_mut() else {
            continue;
        };
        if !in_hunk {
            if let Some(path) = line.strip_prefix("+++ ") {
                let path = path.trim_end();
                section.path = path.strip_prefix("b/").unwrap_or(path).to_string();
            } else if let Some(path) = line.strip_prefix("--- ")
                && section.path.is_empty()
                && path.trim_end() != "/dev/null"
            {
                let path = path.trim_end();
                section.path = path.strip_prefix("a/").unwrap_or(path).to_string();
            }
        }
        if line.starts_with("@@") {
            in_hunk = true;
            continue;
        }
        if !in_hunk {
            continue;
        }
        match line.as_bytes().first() {
            Some(b' ') => {
                section.old.push_str(&line[1..]);
                section.new.push_str(&line[1..]);
            }
            Some(b'-') => section.old.push_str(&line[1..]),
            Some(b'+') => section.new.push_str(&line[1..]),
            _ => {}
        }
    }
    out
}

fn text(s: String) -> v1::ToolCallContent {
    v1::ToolCallContent::Content(v1::Content::new(v1::ContentBlock::from(s)))
}

/// What the bridge knows of a display terminal.
#[derive(Default)]
struct TerminalState {
    command: Option<String>,
    output: Vec<u8>,
    exit: Option<v1::TerminalExitStatus>,
}

/// The v2 tool calls and terminals of a connection, as far as v1 needs them:
/// which calls exist (v1 creates with `tool_call`), their content (v1 replaces
/// it whole) and the terminals they show.
#[derive(Default)]
pub(crate) struct ToolCalls {
    calls: HashMap<(SessionId, ToolCallId), Vec<v2::ToolCallContent>>,
    terminals: HashMap<(SessionId, TerminalId), TerminalState>,
}

impl ToolCalls {
    /// v1's `tool_call` or `tool_call_update` for a v2 upsert.
    pub(crate) fn update(
        &mut self,
        session: &SessionId,
        update: v2::ToolCallUpdate,
    ) -> v1::SessionUpdate {
        let key = (session.clone(), update.tool_call_id.clone());
        let first = !self.calls.contains_key(&key);
        let stored = self.calls.entry(key).or_default();
        if let Some(content) = &update.content {
            *stored = content.clone().unwrap_or_default();
        }
        let content = update.content.as_ref().map(|_| {
            self.render(
                session,
                &self.calls[&(session.clone(), update.tool_call_id.clone())],
            )
        });
        let locations = update.locations.map(Option::unwrap_or_default);
        let flat = |v: Option<Option<v2::RawJson>>| v.flatten();
        if first {
            let title = update
                .title
                .clone()
                .flatten()
                .or_else(|| update.name.clone().flatten())
                .unwrap_or_else(|| "Tool call".to_string());
            let mut call = v1::ToolCall::new(update.tool_call_id, title);
            if let Some(Some(kind)) = update.kind {
                call.kind = kind;
            }
            if let Some(Some(status)) = update.status {
                call.status = status_to_v1(status);
            }
            call.content = content.unwrap_or_default();
            call.locations = locations.unwrap_or_default();
            call.raw_input = flat(update.raw_input);
            call.raw_output = flat(update.raw_output);
            call.name = update.name.flatten();
            call.meta = update.meta.flatten();
            call.extra = update.extra;
            return v1::SessionUpdate::ToolCall(call);
        }
        let mut out = v1::ToolCallUpdate::new(update.tool_call_id);
        out.title = update.title.flatten();
        out.kind = update.kind.flatten();
        out.status = update.status.flatten().map(status_to_v1);
        out.name = update.name.flatten();
        out.content = content;
        out.locations = locations;
        out.raw_input = flat(update.raw_input);
        out.raw_output = flat(update.raw_output);
        out.meta = update.meta.flatten();
        out.extra = update.extra;
        v1::SessionUpdate::ToolCallUpdate(out)
    }

    /// v1 for an appended content item: the whole content so far.
    pub(crate) fn content_chunk(
        &mut self,
        session: &SessionId,
        chunk: v2::ToolCallContentChunk,
    ) -> v1::SessionUpdate {
        let key = (session.clone(), chunk.tool_call_id.clone());
        let mut content = self.calls.get(&key).cloned().unwrap_or_default();
        content.push(chunk.content);
        self.update(
            session,
            v2::ToolCallUpdate::new(chunk.tool_call_id).content(content),
        )
    }

    /// v1 for a terminal's update: the content of every call that shows it.
    pub(crate) fn terminal_update(
        &mut self,
        session: &SessionId,
        update: v2::TerminalUpdate,
    ) -> Vec<v1::SessionUpdate> {
        let key = (session.clone(), update.terminal_id.clone());
        let state = self.terminals.entry(key).or_default();
        if let Some(command) = update.command {
            state.command = command;
        }
        if let Some(output) = update.output {
            state.output = output.map(|o| decode(&o.data)).unwrap_or_default();
            keep_tail(&mut state.output);
        }
        if let Some(exit) = update.exit_status {
            state.exit = exit;
        }
        self.rerender(session, &update.terminal_id)
    }

    /// v1 for bytes appended to a terminal.
    pub(crate) fn terminal_chunk(
        &mut self,
        session: &SessionId,
        chunk: v2::TerminalOutputChunk,
    ) -> Vec<v1::SessionUpdate> {
        let key = (session.clone(), chunk.terminal_id.clone());
        let state = self.terminals.entry(key).or_default();
        state.output.extend(decode(&chunk.data));
        keep_tail(&mut state.output);
        self.rerender(session, &chunk.terminal_id)
    }

    fn rerender(&self, session: &SessionId, terminal: &TerminalId) -> Vec<v1::SessionUpdate> {
        let mut out = Vec::new();
        for ((s, id), content) in &self.calls {
            let shows = content.iter().any(
                |c| matches!(c, v2::ToolCallContent::Terminal(t) if t.terminal_id == *terminal),
            );
            if s == session && shows {
                out.push(v1::SessionUpdate::ToolCallUpdate(
                    v1::ToolCallUpdate::new(id.clone()).content(self.render(session, content)),
                ));
            }
        }
        out
    }

    /// A v2 content list as v1's.
    fn render(
        &self,
        session: &SessionId,
        content: &[v2::ToolCallContent],
    ) -> Vec<v1::ToolCallContent> {
        let mut out = Vec::new();
        for item in content {
            match item {
                v2::ToolCallContent::Content(c) => {
                    let mut v = v1::Content::new(block_to_v1(c.content.clone()));
                    v.meta = c.meta.clone();
                    out.push(v1::ToolCallContent::Content(v));
                }
                v2::ToolCallContent::Diff(d) => out.extend(diff_to_v1(d)),
                v2::ToolCallContent::Terminal(t) => {
                    let state = self
                        .terminals
                        .get(&(session.clone(), t.terminal_id.clone()));
                    out.push(text(render_terminal(&t.terminal_id, state)));
                }
                v2::ToolCallContent::Other(raw) => {
                    out.push(v1::ToolCallContent::Other(raw.clone()))
                }
                other => out.push(v1::ToolCallContent::Other(raw_object(other))),
            }
        }
        out
    }

    /// Forgets the calls and terminals of a closed session.
    pub(crate) fn forget(&mut self, session: &SessionId) {
        self.calls.retain(|(s, _), _| s != session);
        self.terminals.retain(|(s, _), _| s != session);
    }
}

fn decode(data: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .unwrap_or_default()
}

fn keep_tail(bytes: &mut Vec<u8>) {
    if bytes.len() > TERMINAL_TAIL {
        bytes.drain(..bytes.len() - TERMINAL_TAIL);
    }
}

fn render_terminal(id: &TerminalId, state: Option<&TerminalState>) -> String {
    let Some(state) = state else {
        return format!("[terminal {id}]");
    };
    let mut out = String::new();
    if let Some(command) = &state.command {
        out.push_str(&format!("$ {command}\n"));
    }
    out.push_str(&String::from_utf8_lossy(&state.output));
    if let Some(exit) = &state.exit {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        match (exit.exit_code, &exit.signal) {
            (Some(code), _) => out.push_str(&format!("[exit status {code}]")),
            (None, Some(signal)) => out.push_str(&format!("[killed by {signal}]")),
            (None, None) => out.push_str("[exited]"),
        }
    }
    out
}
