//! How `acp chat` shows a session: a scrolling transcript on standard
//! output. Agent text is committed line by line as it streams in, each line
//! rendered as light markdown; thoughts are dimmed; tool calls show their
//! kind, title, locations and how they ended; diffs are unified diffs; the
//! plan is a checklist: in the live area during a turn, updated in place
//! and committed once when the turn ends; else reprinted when it changes.
//!
//! During a turn on a terminal, the bottom of the screen is the live area
//! ([`crate::view::chat::live`]): the line the agent is still writing appears there
//! as plain text as it streams, and is committed (rendered) once it ends;
//! tool calls still running are shown there, one line each, updated in
//! place, and committed as one block when they end (or when the turn does);
//! what the agent says about its progress and its usage go to the status
//! line. Without a live area, a tool call is shown when it starts and when
//! it ends, and progress reports are notes.
//!
//! It also keeps what the chat loop needs from the updates: the agent's
//! slash commands, the current mode, the config options and the last usage.

pub mod live;
pub mod output;

use crate::style::Style;
use crate::view::chat::output::ChatOutput;
use crate::view::diff::unified_diff;
use crate::view::markdown::{self, highlight, highlighter, inline};
use crate::view::usage;
use acp::schema::*;
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};
use syntect::easy::HighlightLines;

/// At most this many lines of a terminal's output are printed at once
/// while it runs; the rest of a larger burst is summarised.
pub const LIVE_LINES: usize = 40;

/// The agent's slash commands, shared with the line editor's completion.
pub type Commands = Arc<Mutex<Vec<AvailableCommand>>>;

/// What the current line of agent output belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Message,
    Thought,
    User,
}

/// What the transcript knows of a tool call.
struct Tool {
    kind: ToolKind,
    title: String,
    status: ToolCallStatus,
    /// Details (locations, diffs, content) not committed yet: held while
    /// the call runs in the live area.
    held: Vec<String>,
    /// Whether the call was committed (shown above the live area, or
    /// announced without one).
    shown: bool,
}

fn ended(status: &ToolCallStatus) -> bool {
    matches!(status, ToolCallStatus::Completed | ToolCallStatus::Failed)
}

/// The chat transcript and the session state seen in updates.
pub struct Transcript {
    out: Box<dyn Write + Send>,
    style: Style,
    stream: Option<Stream>,
    /// Text of the current line not printed yet.
    pending: String,
    in_code: bool,
    /// Highlighter of the open fenced code block, when its language is
    /// known and colour is on.
    code: Option<HighlightLines<'static>>,
    tools: HashMap<ToolCallId, Tool>,
    /// Tool calls not ended yet, in the order they started.
    open_tools: Vec<ToolCallId>,
    /// The live area, during a turn on a terminal.
    live: Option<ChatOutput>,
    last_plan: Option<Vec<(String, PlanEntryStatus)>>,
    /// The plan is in the live area, not committed yet.
    plan_held: bool,
    /// Rows of a table still being written (drawn once it ends).
    table: Vec<String>,
    /// Links are OSC 8 hyperlinks ([`crate::view::markdown::hyperlinks`]).
    hyperlinks: bool,
    /// The width to lay text out for; the terminal's when `None`.
    width: Option<usize>,
    /// The agent's slash commands.
    pub commands: Commands,
    /// The current mode, when the agent has modes.
    pub current_mode: Option<SessionModeId>,
    /// The session's modes (from the session response).
    pub modes: Vec<SessionMode>,
    /// The session's config options.
    pub config_options: Vec<SessionConfigOption>,
    /// The last `usage_update`.
    pub usage: Option<UsageUpdate>,
    /// The session model selector, when the agent offers one.
    pub models: Option<SessionModelState>,
    /// The token usage of the last turn, from its prompt result.
    pub turn_usage: Option<Usage>,
}

impl Transcript {
    /// A transcript writing to `out`.
    pub fn new(out: Box<dyn Write + Send>, color: bool, commands: Commands) -> Self {
        Transcript {
            out,
            style: Style::new(color),
            stream: None,
            pending: String::new(),
            in_code: false,
            code: None,
            tools: HashMap::new(),
            open_tools: Vec::new(),
            live: None,
            last_plan: None,
            plan_held: false,
            table: Vec::new(),
            hyperlinks: color && markdown::hyperlinks(|k| std::env::var(k).ok()),
            width: None,
            commands,
            current_mode: None,
            modes: Vec::new(),
            config_options: Vec::new(),
            usage: None,
            models: None,
            turn_usage: None,
        }
    }

    /// The styles in use.
    pub fn style(&self) -> Style {
        self.style
    }

    /// Lays text out for `width` columns rather than the terminal's width.
    pub fn set_width(&mut self, width: usize) {
        self.width = Some(width);
    }

    /// The columns text is laid out for: the terminal's (80 without one).
    pub fn columns(&self) -> usize {
        self.width.unwrap_or_else(markdown::terminal_columns)
    }

    /// `text` with each line wider than the terminal wrapped on word
    /// boundaries, its continuation rows indented like the line.
    pub fn wrap(&self, text: &str) -> String {
        let cols = self.columns().saturating_sub(1).max(20);
        text.split('\n')
            .map(|line| {
                if markdown::visible_width(line) <= cols {
                    return line.to_owned();
                }
                let body = line.trim_start();
                let lead = &line[..line.len() - body.len()];
                markdown::hanging(lead, body, cols).join("\n")
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Prints `text` (command output, notes) wrapped to the terminal.
    pub fn say(&mut self, text: &str) {
        let text = self.wrap(text);
        self.line(&text);
    }

    /// Shows the open line and the running tool calls in `output`'s live
    /// area whenever it has one (a turn on a terminal).
    pub fn set_live(&mut self, output: ChatOutput) {
        self.live = Some(output);
    }

    /// The live area's owner, if any.
    pub fn live_output(&self) -> Option<ChatOutput> {
        self.live.clone()
    }

    /// Whether a live area is up now.
    fn is_live(&self) -> bool {
        self.live.as_ref().is_some_and(ChatOutput::in_turn)
    }

    /// Puts the open line into the live area (drawn with what is committed
    /// next, or at once when `draw`).
    fn sync_open(&mut self, draw: bool) {
        let Some(live) = &self.live else { return };
        let mut open = match self.stream {
            Some(Stream::User) if !self.pending.is_empty() => format!("> {}", self.pending),
            _ => self.pending.clone(),
        };
        if !self.table.is_empty() {
            // A table is drawn once it ends; until then, as written.
            open = format!("{}\n{open}", self.table.join("\n"));
        }
        let dim = self.stream == Some(Stream::Thought);
        let f = |l: &mut live::Live| {
            l.open = open;
            l.open_dim = dim;
        };
        if draw {
            live.live(f);
        } else {
            live.stage(f);
        }
    }

    /// Puts the running tool calls into the live area (drawn at once, or
    /// with what is committed next).
    fn sync_tools(&mut self, draw: bool) {
        let Some(live) = &self.live else { return };
        let rows: Vec<String> = self
            .open_tools
            .iter()
            .filter_map(|id| self.tools.get(id))
            .map(|t| self.tool_head(&t.kind, &t.title, &t.status))
            .collect();
        if draw {
            live.live(|l| l.tools = rows);
        } else {
            live.stage(|l| l.tools = rows);
        }
    }

    /// Commits the tool calls still running (the turn is over), with the
    /// status they last had.
    pub fn end_turn(&mut self) {
        self.break_line();
        let open = std::mem::take(&mut self.open_tools);
        self.sync_tools(false);
        for id in open {
            self.commit_tool(&id);
        }
        if std::mem::take(&mut self.plan_held)
            && let Some(entries) = self.last_plan.clone()
        {
            if let Some(live) = &self.live {
                live.stage(|l| l.plan.clear());
            }
            let text = self.plan_text(&entries);
            self.line(&text);
        }
        if let Some(live) = &self.live {
            live.live(|l| l.agent_status = None);
        }
    }

    /// The plan as committed: a bold heading, then `[x]` done (green),
    /// `[~]` in progress (yellow), `[ ]` pending.
    fn plan_text(&self, entries: &[(String, PlanEntryStatus)]) -> String {
        let mut text = self.style.bold("Plan:");
        for (content, status) in entries {
            let item = match status {
                PlanEntryStatus::Completed => self.style.green(&format!("[x] {content}")),
                PlanEntryStatus::InProgress => self.style.yellow(&format!("[~] {content}")),
                _ => format!("[ ] {content}"),
            };
            text.push_str(&format!("\n  {item}"));
        }
        text
    }

    /// Commits a tool call's header (with its status now) and what it held.
    fn commit_tool(&mut self, id: &ToolCallId) {
        let Some(tool) = self.tools.get_mut(id) else {
            return;
        };
        tool.shown = true;
        let held = std::mem::take(&mut tool.held);
        let (kind, title, status) = (tool.kind.clone(), tool.title.clone(), tool.status.clone());
        let head = self.tool_head(&kind, &title, &status);
        self.line(&head);
        for text in held {
            self.line(&text);
        }
    }

    /// A tool call appeared or changed: `status_changed` when this update
    /// set its status, `details` what the update carried.
    fn tool_changed(&mut self, id: &ToolCallId, status_changed: bool, details: Vec<String>) {
        let live = self.is_live();
        let Some(tool) = self.tools.get_mut(id) else {
            return;
        };
        let done = ended(&tool.status);
        let open = self.open_tools.contains(id);
        if live && !done && !tool.shown {
            // Runs in the live area; its details wait for its end.
            tool.held.extend(details);
            if !open {
                self.open_tools.push(id.clone());
            }
            self.sync_tools(true);
            return;
        }
        if open && done {
            tool.held.extend(details);
            self.open_tools.retain(|t| t != id);
            // Out of the live area as it is committed above it.
            self.sync_tools(false);
            self.commit_tool(id);
            return;
        }
        // No live area, or the call was committed already: a header when
        // it starts and when it ends, details as they come.
        let first = !tool.shown;
        tool.shown = true;
        if first || (status_changed && done) {
            let (kind, title, status) =
                (tool.kind.clone(), tool.title.clone(), tool.status.clone());
            let head = self.tool_head(&kind, &title, &status);
            self.line(&head);
        }
        for text in details {
            self.line(&text);
        }
    }

    /// Prints a whole line, after ending any partial line.
    pub fn line(&mut self, text: &str) {
        self.break_line();
        let _ = writeln!(self.out, "{text}");
        let _ = self.out.flush();
    }

    /// What the agent last said about its own progress (a retry, …): in
    /// the status line of the live area, else a note.
    pub fn status(&mut self, text: &str) {
        if self.is_live()
            && let Some(live) = &self.live
        {
            let text = text.to_owned();
            live.live(|l| l.agent_status = Some(text));
            return;
        }
        self.note(&format!("[status] {text}"));
    }

    /// Prints a dimmed note, wrapped to the terminal.
    pub fn note(&mut self, text: &str) {
        let text = self
            .wrap(text)
            .split('\n')
            .map(|row| self.style.dim(row))
            .collect::<Vec<_>>()
            .join("\n");
        self.line(&text);
    }

    /// Ends the current partial line of streamed text, if any.
    pub fn break_line(&mut self) {
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            self.sync_open(false);
            self.emit(&line);
        }
        self.end_table();
        self.stream = None;
    }

    /// Draws the table being written, if any (a table's rows are held
    /// until a line that is not one of them).
    fn end_table(&mut self) {
        if self.table.is_empty() {
            return;
        }
        let rows = std::mem::take(&mut self.table);
        self.sync_open(false);
        let (style, hyperlinks) = (self.style, self.hyperlinks);
        let inline = move |t: &str| inline(&markdown::links(t, hyperlinks, style), style);
        let text = match markdown::table(&rows, self.columns(), style, &inline) {
            Some(drawn) => drawn.join("\n"),
            None => rows
                .iter()
                .map(|r| self.prose(r))
                .collect::<Vec<_>>()
                .join("\n"),
        };
        let _ = writeln!(self.out, "{text}");
        let _ = self.out.flush();
    }

    /// Shows one session update.
    pub fn update(&mut self, update: &SessionUpdate) {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => self.chunk(Stream::Message, &chunk.content),
            SessionUpdate::AgentThoughtChunk(chunk) => self.chunk(Stream::Thought, &chunk.content),
            SessionUpdate::UserMessageChunk(chunk) => self.chunk(Stream::User, &chunk.content),
            SessionUpdate::ToolCall(call) => {
                self.break_line();
                let tool = Tool {
                    kind: call.kind.clone(),
                    title: call.title.clone(),
                    status: call.status.clone(),
                    held: Vec::new(),
                    shown: false,
                };
                // A repeated tool_call for a running call updates it; one
                // for a call that ended starts it again.
                let known = self.tools.insert(call.tool_call_id.clone(), tool);
                if let (Some(old), Some(new)) = (known, self.tools.get_mut(&call.tool_call_id))
                    && !ended(&old.status)
                {
                    new.held = old.held;
                    new.shown = old.shown;
                }
                let details = self.tool_details(&call.locations, &call.content);
                self.tool_changed(&call.tool_call_id, true, details);
            }
            SessionUpdate::ToolCallUpdate(u) => {
                self.break_line();
                let entry = self
                    .tools
                    .entry(u.tool_call_id.clone())
                    .or_insert_with(|| Tool {
                        kind: ToolKind::default(),
                        title: u.tool_call_id.to_string(),
                        status: ToolCallStatus::Pending,
                        held: Vec::new(),
                        shown: false,
                    });
                if let Some(kind) = &u.kind {
                    entry.kind = kind.clone();
                }
                if let Some(title) = &u.title {
                    entry.title = title.clone();
                }
                if let Some(status) = &u.status {
                    entry.status = status.clone();
                }
                let details = self.tool_details(
                    u.locations.as_deref().unwrap_or_default(),
                    u.content.as_deref().unwrap_or_default(),
                );
                let changed = u.status.is_some() || u.title.is_some();
                self.tool_changed(&u.tool_call_id, changed, details);
            }
            SessionUpdate::Plan(plan) => {
                let entries: Vec<(String, PlanEntryStatus)> = plan
                    .entries
                    .iter()
                    .map(|e| (e.content.clone(), e.status.clone()))
                    .collect();
                if self.last_plan.as_ref() == Some(&entries) {
                    return;
                }
                if self.is_live()
                    && let Some(live) = self.live.clone()
                {
                    // Updated in place; committed when the turn ends.
                    self.break_line();
                    let rows = plain_plan(&entries);
                    live.live(|l| l.plan = rows);
                    self.plan_held = true;
                    self.last_plan = Some(entries);
                    return;
                }
                let text = self.plan_text(&entries);
                self.line(&text);
                self.last_plan = Some(entries);
            }
            SessionUpdate::AvailableCommandsUpdate(u) => {
                let names: Vec<String> = u
                    .available_commands
                    .iter()
                    .map(|c| format!("/{}", c.name))
                    .collect();
                *self.commands.lock().unwrap_or_else(PoisonError::into_inner) =
                    u.available_commands.clone();
                if !names.is_empty() {
                    self.note(&format!("[commands] {}", names.join(" ")));
                }
            }
            SessionUpdate::CurrentModeUpdate(m) => {
                self.current_mode = Some(m.current_mode_id.clone());
                self.note(&format!("[mode] {}", m.current_mode_id));
            }
            SessionUpdate::ConfigOptionUpdate(u) => {
                self.config_options = u.config_options.clone();
            }
            SessionUpdate::SessionInfoUpdate(u) => {
                if let Some(Some(title)) = &u.title {
                    self.note(&format!("[session] {title}"));
                }
            }
            SessionUpdate::UsageUpdate(u) => {
                self.usage = Some(u.clone());
                if let Some(live) = &self.live {
                    let text = usage::live_usage(u);
                    live.live(|l| l.usage = Some(text));
                }
            }
            SessionUpdate::Notice(notice) => {
                let mut line = format!("[{}] {}", notice.severity, notice.title);
                if let Some(d) = &notice.description {
                    line.push_str(": ");
                    line.push_str(d);
                }
                self.note(&line);
            }
            _ => {}
        }
    }

    fn chunk(&mut self, stream: Stream, content: &ContentBlock) {
        let text = match content {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::ResourceLink(l) => l.uri.clone(),
            ContentBlock::Image(_) => "[image]".to_owned(),
            ContentBlock::Audio(_) => "[audio]".to_owned(),
            ContentBlock::Resource(_) => "[resource]".to_owned(),
            _ => "[content]".to_owned(),
        };
        if self.stream != Some(stream) {
            self.break_line();
            self.stream = Some(stream);
        }
        if stream == Stream::Message
            && let Some(live) = &self.live
        {
            // The agent is writing again: whatever it said it was doing
            // is over.
            live.stage(|l| l.agent_status = None);
        }
        self.pending.push_str(&text);
        let mut lines = Vec::new();
        while let Some(end) = self.pending.find('\n') {
            let line: String = self.pending.drain(..=end).collect();
            lines.push(line);
        }
        // The live area loses the lines that are committed now.
        self.sync_open(lines.is_empty());
        for line in lines {
            self.emit(line.trim_end_matches('\n'));
        }
    }

    /// Prints one complete line of streamed text in its stream's style
    /// (the rows of a table are held until it ends).
    fn emit(&mut self, line: &str) {
        let agent_text = !matches!(self.stream, Some(Stream::Thought | Stream::User));
        if agent_text && !self.in_code && markdown::is_table_row(line) {
            self.table.push(line.to_owned());
            self.sync_open(true);
            return;
        }
        self.end_table();
        let text = match self.stream {
            Some(Stream::Thought) => self.style.dim(line),
            Some(Stream::User) => self.style.bold(&format!("> {line}")),
            _ => self.markdown(line),
        };
        let _ = writeln!(self.out, "{text}");
        let _ = self.out.flush();
    }

    /// Light markdown for one line: fenced code highlighted by its
    /// language (cyan when the language is unknown), headings bold,
    /// bullets, quotes dimmed, `**bold**` and `` `code` `` inline. Without
    /// colour the line is printed as written.
    fn markdown(&mut self, line: &str) -> String {
        let style = self.style;
        if let Some(info) = line.trim_start().strip_prefix("```") {
            self.in_code = !self.in_code;
            self.code = if self.in_code && style.enabled() {
                highlighter(info)
            } else {
                None
            };
            return style.dim(line);
        }
        if self.in_code {
            if !style.enabled() {
                return line.to_owned();
            }
            if let Some(h) = &mut self.code
                && let Some(text) = highlight(h, line)
            {
                return text;
            }
            return style.cyan(line);
        }
        // List items hang under their text, with or without colour.
        if let Some((indent, marker, body)) = markdown::list_item(line) {
            let marker = match marker {
                "-" | "*" | "+" if style.enabled() => "•",
                _ => marker,
            };
            let lead = format!("{indent}{marker} ");
            let body = self.prose(body);
            return markdown::hanging(&lead, &body, self.columns().saturating_sub(1)).join("\n");
        }
        if !style.enabled() {
            return self.prose(line);
        }
        let trimmed = line.trim_start();
        if trimmed.starts_with('#') {
            return style.bold(trimmed.trim_start_matches('#').trim_start());
        }
        if let Some(rest) = trimmed.strip_prefix("> ") {
            return style.dim(&format!("│ {}", self.prose(rest)));
        }
        self.prose(line)
    }

    /// Inline markdown: links, and with colour `**bold**` and `` `code` ``.
    fn prose(&self, text: &str) -> String {
        let text = markdown::links(text, self.hyperlinks, self.style);
        if self.style.enabled() {
            inline(&text, self.style)
        } else {
            text
        }
    }

    fn tool_head(&self, kind: &ToolKind, title: &str, status: &ToolCallStatus) -> String {
        let status_text = match status {
            ToolCallStatus::Completed => self.style.green(&status.to_string()),
            ToolCallStatus::Failed => self.style.red(&status.to_string()),
            _ => self.style.yellow(&status.to_string()),
        };
        format!(
            "{} {} {title} · {status_text}",
            self.style.magenta("⏺"),
            self.style.dim(&format!("[{kind}]"))
        )
    }

    /// The lines that show a tool call's locations and content.
    fn tool_details(
        &self,
        locations: &[ToolCallLocation],
        content: &[ToolCallContent],
    ) -> Vec<String> {
        let style = self.style;
        let mut out = Vec::new();
        for location in locations {
            let at = match location.line {
                Some(line) => format!("  ↳ {}:{line}", location.path),
                None => format!("  ↳ {}", location.path),
            };
            out.push(style.dim(&at));
        }
        for item in content {
            match item {
                ToolCallContent::Diff(diff) => {
                    let text = unified_diff(
                        &diff.path,
                        diff.old_text.as_deref().unwrap_or(""),
                        &diff.new_text,
                        style,
                    );
                    out.push(text.trim_end_matches('\n').to_owned());
                }
                ToolCallContent::Content(c) => {
                    if let ContentBlock::Text(t) = &c.content {
                        for line in t.text.lines() {
                            out.push(style.dim(&format!("    {line}")));
                        }
                    }
                }
                ToolCallContent::Terminal(t) => {
                    out.push(style.dim(&format!("  terminal {}", t.terminal_id)))
                }
                _ => {}
            }
        }
        out
    }

    /// Shows a terminal's output under its tool call.
    pub fn terminal_output(
        &mut self,
        id: &TerminalId,
        output: &str,
        truncated: bool,
        exit: Option<&str>,
    ) {
        let mut head = format!("  ┌ terminal {id}");
        if let Some(exit) = exit {
            head.push_str(&format!(" ({exit})"));
        }
        if truncated {
            head.push_str(" [output truncated]");
        }
        self.note(&head);
        for line in output.lines() {
            let line = format!("  │ {line}");
            self.line(&line);
        }
        self.note("  └");
    }

    /// Starts showing a running terminal's output (see
    /// [`Transcript::terminal_lines`] and [`Transcript::terminal_end`]).
    pub fn terminal_start(&mut self, id: &TerminalId) {
        self.note(&format!("  ┌ terminal {id}"));
    }

    /// Shows new lines of a running terminal: at most [`LIVE_LINES`] of
    /// them, the earlier ones of a larger burst are counted, not shown.
    /// `skipped`: output was dropped by the terminal's byte limit.
    pub fn terminal_lines(&mut self, text: &str, skipped: bool) {
        if skipped {
            self.note("  │ … [output truncated]");
        }
        let lines: Vec<&str> = text.lines().collect();
        let hidden = lines.len().saturating_sub(LIVE_LINES);
        if hidden > 0 {
            self.note(&format!("  │ … {hidden} lines not shown"));
        }
        for line in &lines[hidden..] {
            let line = format!("  │ {line}");
            self.line(&line);
        }
    }

    /// Ends a terminal's output: how it ended, if it has.
    pub fn terminal_end(&mut self, exit: Option<&str>) {
        match exit {
            Some(exit) => self.note(&format!("  └ {exit}")),
            None => self.note("  └"),
        }
    }

    /// The status line after a turn: stop reason (unless `end_turn`),
    /// mode, context usage and the turn's tokens.
    pub fn status_line(&mut self, stop: Option<&StopReason>) {
        self.break_line();
        let mut parts = Vec::new();
        if let Some(stop) = stop
            && *stop != StopReason::EndTurn
        {
            parts.push(format!("stopped: {stop}"));
        }
        if let Some(mode) = &self.current_mode {
            parts.push(format!("mode {mode}"));
        }
        if let Some(usage) = &self.usage {
            let mut text = format!("context {}/{} tokens", usage.used, usage.size);
            if let Some(percent) = (usage.used * 100).checked_div(usage.size) {
                text.push_str(&format!(" ({percent}%)"));
            }
            if let Some(cost) = &usage.cost {
                text.push_str(&format!(", cost {:.2} {}", cost.amount, cost.currency));
            }
            parts.push(text);
        }
        parts.extend(self.turn_usage.as_ref().map(crate::view::usage::turn_usage));
        if !parts.is_empty() {
            let text = format!("── {}", parts.join(" · "));
            self.note(&text);
        }
    }
}

/// The plan's rows in the live area, without colour.
fn plain_plan(entries: &[(String, PlanEntryStatus)]) -> Vec<String> {
    let mut rows = vec!["Plan:".to_owned()];
    for (content, status) in entries {
        let mark = match status {
            PlanEntryStatus::Completed => "[x]",
            PlanEntryStatus::InProgress => "[~]",
            _ => "[ ]",
        };
        let content = content.split_whitespace().collect::<Vec<_>>().join(" ");
        rows.push(format!("  {mark} {content}"));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(data);
            Ok(data.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn streams_lines_and_plans() {
        let buf = Buf::default();
        let mut t = Transcript::new(Box::new(buf.clone()), false, Commands::default());
        t.update(&SessionUpdate::agent_thought("hmm"));
        t.update(&SessionUpdate::agent_message("Hel"));
        t.update(&SessionUpdate::agent_message("lo\nwor"));
        let plan = Plan::new(vec![PlanEntry::new(
            "a",
            PlanEntryPriority::Low,
            PlanEntryStatus::Completed,
        )]);
        t.update(&SessionUpdate::Plan(plan.clone()));
        t.update(&SessionUpdate::Plan(plan));
        t.status_line(Some(&StopReason::Cancelled));
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "hmm\nHello\nwor\nPlan:\n  [x] a\n── stopped: cancelled\n"
        );
    }

    #[test]
    fn tables_numbered_lists_and_links_are_laid_out() {
        let buf = Buf::default();
        let mut t = Transcript::new(Box::new(buf.clone()), false, Commands::default());
        t.set_width(30);
        // Split mid-row, as a model streams.
        for chunk in [
            "## Results\n\n| name | si",
            "ze |\n|------|-----:|\n| alpha | 1 |\n| beta gamma | 22 |\n\n",
            "1. first step, which takes more words than fit\n2. second\n\n",
            "See [the docs](https://example.test/docs).\n| a | b |\n",
        ] {
            t.update(&SessionUpdate::agent_message(chunk));
        }
        t.break_line();
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "## Results\n\n\
             ┌────────────┬──────┐\n\
             │ name       │ size │\n\
             ├────────────┼──────┤\n\
             │ alpha      │    1 │\n\
             │ beta gamma │   22 │\n\
             └────────────┴──────┘\n\n\
             1. first step, which takes\n   more words than fit\n2. second\n\n\
             See the docs (https://example.test/docs).\n\
             | a | b |\n"
        );
    }

    #[test]
    fn notes_and_command_output_wrap_on_words() {
        let buf = Buf::default();
        let mut t = Transcript::new(Box::new(buf.clone()), false, Commands::default());
        t.set_width(30);
        t.note("[session] resumed: the agent replays nothing here");
        t.say("short\n  an indented line that is too long to fit");
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "[session] resumed: the agent\nreplays nothing here\nshort\n  an indented line that is\n  too long to fit\n"
        );
    }

    #[test]
    fn inline_markdown() {
        let style = Style::new(true);
        assert_eq!(
            inline("a **b** `c`", style),
            "a \x1b[1mb\x1b[0m \x1b[36mc\x1b[0m"
        );
        assert_eq!(inline("a ** b", style), "a ** b");
    }

    fn render(color: bool, chunks: &[&str]) -> String {
        let buf = Buf::default();
        let mut t = Transcript::new(Box::new(buf.clone()), color, Commands::default());
        for chunk in chunks {
            t.update(&SessionUpdate::agent_message(*chunk));
        }
        t.break_line();
        String::from_utf8(buf.0.lock().unwrap().clone()).unwrap()
    }

    const RUST_BLOCK: &str = "Here:\n```rust\nfn main() { let x = 1; }\n```\nDone.\n";

    #[test]
    fn known_languages_are_highlighted_with_colour() {
        let text = render(true, &[RUST_BLOCK]);
        let code = text
            .lines()
            .find(|l| l.contains("main"))
            .expect("the code line");
        // 24-bit colours of the theme, not the plain cyan of unknown code.
        assert!(code.contains("\x1b[38;2;"), "{code:?}");
        assert!(!code.starts_with("\x1b[36m"), "{code:?}");
        assert!(code.ends_with("\x1b[0m"), "{code:?}");
        // The code's text is all there once the escapes are removed.
        let plain = strip_ansi(code);
        assert_eq!(plain, "fn main() { let x = 1; }");
        // Streaming in pieces gives the same result.
        let pieces: Vec<String> = RUST_BLOCK.chars().map(String::from).collect();
        let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
        assert_eq!(render(true, &pieces), text);
    }

    #[test]
    fn unknown_languages_stay_cyan() {
        let text = render(true, &["```nosuchlang\nabc\n```\n", "```\nxyz\n```\n"]);
        assert!(text.contains("\x1b[36mabc\x1b[0m"), "{text:?}");
        assert!(text.contains("\x1b[36mxyz\x1b[0m"), "{text:?}");
    }

    #[test]
    fn without_colour_code_blocks_are_unchanged() {
        assert_eq!(render(false, &[RUST_BLOCK]), RUST_BLOCK);
        let python = "```python\ndef f():\n    return 1\n```\n";
        assert_eq!(render(false, &[python]), python);
    }

    fn strip_ansi(text: &str) -> String {
        let mut out = String::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }
}
