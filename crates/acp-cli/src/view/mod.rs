//! How `acp exec` shows a session: the reply as plain text on standard
//! output with tool calls, plans and permission decisions summarised on
//! standard error, or every session update as one JSON line.

pub mod chat;
pub mod diff;
pub mod markdown;
pub mod notes;
pub mod usage;

use crate::cli::Format;
use crate::view::chat::{Commands, Transcript};
use acp::schema::*;
use std::io::Write;

/// Renders session updates to two writers (normally stdout and stderr).
pub struct Renderer {
    format: Format,
    out: Box<dyn Write + Send>,
    err: Box<dyn Write + Send>,
    /// While a loaded session replays its history, text mode shows nothing.
    replaying: bool,
    /// Whether reply text was printed and whether it ended with a newline.
    printed_text: bool,
    at_line_start: bool,
    /// Tool call titles by id, for updates that do not repeat the title.
    titles: std::collections::HashMap<ToolCallId, String>,
    /// `acp chat`: everything goes to this transcript instead.
    chat: Option<Transcript>,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("format", &self.format)
            .finish_non_exhaustive()
    }
}

impl Renderer {
    /// A renderer writing reply/JSON to `out` and summaries to `err`.
    pub fn new(format: Format, out: Box<dyn Write + Send>, err: Box<dyn Write + Send>) -> Self {
        Renderer {
            format,
            out,
            err,
            replaying: false,
            printed_text: false,
            at_line_start: true,
            titles: std::collections::HashMap::new(),
            chat: None,
        }
    }

    /// The renderer of `acp chat`: a transcript written to `out` (standard
    /// output, or above the line editor's prompt: [`crate::view::chat::output`]).
    pub fn chat(color: bool, commands: Commands, out: Box<dyn Write + Send>) -> Self {
        let mut renderer = Self::stdio(Format::Text);
        renderer.chat = Some(Transcript::new(out, color, commands));
        renderer
    }

    /// The chat transcript, when this is the chat renderer.
    pub fn transcript(&mut self) -> Option<&mut Transcript> {
        self.chat.as_mut()
    }

    /// The owner of chat's live area, when this is the chat renderer.
    pub fn live_output(&self) -> Option<crate::view::chat::output::ChatOutput> {
        self.chat.as_ref().and_then(Transcript::live_output)
    }

    /// Whether output is coloured.
    pub fn color(&self) -> bool {
        self.chat.as_ref().is_some_and(|t| t.style().enabled())
    }

    /// Ends a partly printed line of streamed text, so that a question or
    /// a message starts on a line of its own.
    pub fn break_line(&mut self) {
        if let Some(t) = &mut self.chat {
            t.break_line();
            return;
        }
        if self.format == Format::Text && self.printed_text && !self.at_line_start {
            let _ = writeln!(self.out);
            let _ = self.out.flush();
            self.at_line_start = true;
        }
    }

    /// Shows a terminal's output (chat only).
    pub fn terminal_output(
        &mut self,
        id: &TerminalId,
        output: &str,
        truncated: bool,
        exit: Option<&str>,
    ) {
        if let Some(t) = &mut self.chat {
            t.terminal_output(id, output, truncated, exit);
        }
    }

    /// A renderer on the process's stdout and stderr.
    pub fn stdio(format: Format) -> Self {
        Self::new(
            format,
            Box::new(std::io::stdout()),
            Box::new(std::io::stderr()),
        )
    }

    /// Marks the start or end of a history replay (`session/load`).
    pub fn set_replaying(&mut self, replaying: bool) {
        self.replaying = replaying;
    }

    /// Writes a note line to the summary stream.
    pub fn note(&mut self, line: &str) {
        if let Some(t) = &mut self.chat {
            t.note(line);
            return;
        }
        let _ = writeln!(self.err, "{line}");
        let _ = self.err.flush();
    }

    /// Shows one session update.
    pub fn update(&mut self, notification: &SessionNotification) {
        if let Some(t) = &mut self.chat {
            if !self.replaying {
                t.update(&notification.update);
                if let Some(status) = notes::agent_status(notification) {
                    t.status(&status);
                }
            }
            return;
        }
        match self.format {
            Format::Json => {
                if let Ok(line) = serde_json::to_string(notification) {
                    let _ = writeln!(self.out, "{line}");
                    let _ = self.out.flush();
                }
            }
            Format::Text if self.replaying => {}
            Format::Text => {
                self.text_update(&notification.update);
                if let Some(status) = notes::agent_status(notification) {
                    self.note(&format!("[status] {status}"));
                }
            }
        }
    }

    fn text_update(&mut self, update: &SessionUpdate) {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => match &chunk.content {
                ContentBlock::Text(text) => self.reply(&text.text),
                ContentBlock::ResourceLink(link) => self.reply(&link.uri),
                other => self.note(&format!("[{} content]", block_kind(other))),
            },
            SessionUpdate::ToolCall(call) => {
                self.titles
                    .insert(call.tool_call_id.clone(), call.title.clone());
                self.note(&format!(
                    "[tool] {} ({}, {})",
                    call.title, call.kind, call.status
                ));
                self.tool_details(&call.locations, &call.content);
            }
            SessionUpdate::ToolCallUpdate(u) => {
                if let Some(title) = &u.title {
                    self.titles.insert(u.tool_call_id.clone(), title.clone());
                }
                if let Some(status) = &u.status {
                    let name = self
                        .titles
                        .get(&u.tool_call_id)
                        .cloned()
                        .unwrap_or_else(|| u.tool_call_id.to_string());
                    self.note(&format!("[tool] {name}: {status}"));
                }
                self.tool_details(
                    u.locations.as_deref().unwrap_or_default(),
                    u.content.as_deref().unwrap_or_default(),
                );
            }
            SessionUpdate::Plan(plan) => {
                let mut text = String::from("[plan]");
                for entry in &plan.entries {
                    let mark = match entry.status {
                        PlanEntryStatus::Completed => "x",
                        PlanEntryStatus::InProgress => "~",
                        _ => " ",
                    };
                    text.push_str(&format!("\n  [{mark}] {}", entry.content));
                }
                self.note(&text);
            }
            SessionUpdate::Notice(notice) => {
                let mut line = format!("[{}] {}", notice.severity, notice.title);
                if let Some(d) = &notice.description {
                    line.push_str(": ");
                    line.push_str(d);
                }
                self.note(&line);
            }
            SessionUpdate::CurrentModeUpdate(m) => {
                self.note(&format!("[mode] {}", m.current_mode_id))
            }
            SessionUpdate::SessionInfoUpdate(info) => {
                if let Some(Some(title)) = &info.title {
                    self.note(&format!("[title] {title}"));
                }
            }
            _ => {}
        }
    }

    fn tool_details(&mut self, locations: &[ToolCallLocation], content: &[ToolCallContent]) {
        for location in locations {
            match location.line {
                Some(line) => self.note(&format!("    at {}:{line}", location.path)),
                None => self.note(&format!("    at {}", location.path)),
            }
        }
        for item in content {
            if let ToolCallContent::Diff(diff) = item {
                let (added, removed) =
                    diff::diff_stat(diff.old_text.as_deref().unwrap_or(""), &diff.new_text);
                self.note(&format!("    diff {} (+{added} -{removed})", diff.path));
            }
        }
    }

    fn reply(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
        self.printed_text = true;
        self.at_line_start = text.ends_with('\n');
    }

    /// Ends the output of a turn: in text mode a final newline if the reply
    /// did not end with one; in JSON mode the result line.
    pub fn finish(&mut self, session_id: &SessionId, stop_reason: &StopReason) {
        if let Some(t) = &mut self.chat {
            t.status_line(Some(stop_reason));
            return;
        }
        match self.format {
            Format::Text => {
                if self.printed_text && !self.at_line_start {
                    let _ = writeln!(self.out);
                }
                if *stop_reason != StopReason::EndTurn {
                    self.note(&format!("[stop] {stop_reason}"));
                }
            }
            Format::Json => {
                let line =
                    serde_json::json!({ "sessionId": session_id, "stopReason": stop_reason });
                let _ = writeln!(self.out, "{line}");
            }
        }
        let _ = self.out.flush();
    }
}

fn block_kind(block: &ContentBlock) -> &'static str {
    match block {
        ContentBlock::Text(_) => "text",
        ContentBlock::Image(_) => "image",
        ContentBlock::Audio(_) => "audio",
        ContentBlock::ResourceLink(_) => "resource link",
        ContentBlock::Resource(_) => "resource",
        _ => "unknown",
    }
}
