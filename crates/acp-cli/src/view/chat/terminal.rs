//! The output of the agent's terminals in the chat transcript: under its
//! tool call, as it arrives and once the command has ended.

use super::Transcript;
use acp::schema::*;

/// At most this many lines of a terminal's output are printed at once
/// while it runs; the rest of a larger burst is summarised.
pub const LIVE_LINES: usize = 40;

impl Transcript {
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
}
