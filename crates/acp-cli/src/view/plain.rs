//! `acp exec --format text`: the reply as plain text on standard output,
//! tool calls, plans and everything else summarised on standard error, one
//! note a line.

use super::diff::diff_stat;
use super::store::Store;
use acp::schema::*;
use std::io::Write;

/// The plain screen: two writers (normally stdout and stderr).
pub(super) struct Plain {
    out: Box<dyn Write + Send>,
    err: Box<dyn Write + Send>,
    /// Whether reply text was printed and whether it ended with a newline.
    printed_text: bool,
    at_line_start: bool,
}

impl Plain {
    /// The reply to `out`, notes to `err`.
    pub(super) fn new(out: Box<dyn Write + Send>, err: Box<dyn Write + Send>) -> Self {
        Plain {
            out,
            err,
            printed_text: false,
            at_line_start: true,
        }
    }

    /// Writes a note line to standard error.
    pub(super) fn note(&mut self, line: &str) {
        let _ = writeln!(self.err, "{line}");
        let _ = self.err.flush();
    }

    /// Ends a partly printed line of the reply.
    pub(super) fn break_line(&mut self) {
        if self.printed_text && !self.at_line_start {
            let _ = writeln!(self.out);
            let _ = self.out.flush();
            self.at_line_start = true;
        }
    }

    /// Shows one update, the store having taken it already.
    pub(super) fn show(&mut self, update: &SessionUpdate, store: &Store) {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => match &chunk.content {
                ContentBlock::Text(text) => self.reply(&text.text),
                ContentBlock::ResourceLink(link) => self.reply(&link.uri),
                other => self.note(&format!("[{} content]", block_kind(other))),
            },
            SessionUpdate::ToolCall(call) => {
                self.note(&format!(
                    "[tool] {} ({}, {})",
                    call.title, call.kind, call.status
                ));
                self.tool_details(&call.locations, &call.content);
            }
            SessionUpdate::ToolCallUpdate(u) => {
                if let Some(status) = &u.status {
                    let name = store
                        .tool_call(&u.tool_call_id)
                        .map(|call| call.title.clone())
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
                    diff_stat(diff.old_text.as_deref().unwrap_or(""), &diff.new_text);
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

    /// Ends the turn: a final newline if the reply did not end with one,
    /// and the stop reason unless it is `end_turn`.
    pub(super) fn finish(&mut self, stop_reason: &StopReason) {
        if self.printed_text && !self.at_line_start {
            let _ = writeln!(self.out);
        }
        if *stop_reason != StopReason::EndTurn {
            self.note(&format!("[stop] {stop_reason}"));
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
