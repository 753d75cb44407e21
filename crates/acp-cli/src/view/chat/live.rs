//! The bottom of `acp chat`'s screen while a turn runs, the *live area*:
//! the paragraph the agent is still writing, the agent's plan, the tool
//! calls still running, a status line (spinner, elapsed time, tokens and cost, what the agent
//! says it is doing) and the line the user is typing ahead.
//!
//! Everything above the live area is the transcript, which only grows:
//! committing text erases the live area, prints the text, and draws the
//! live area again under it. The live area is redrawn whole, so what it
//! shows can change in place (a tool call's status, the open paragraph).
//!
//! This module holds the state and turns it into screen rows, and decodes
//! the keys typed during a turn; [`crate::view::chat::output`] owns the terminal.

use crate::style::Style;
use std::time::{Duration, Instant};
use unicode_width::UnicodeWidthChar;

/// The spinner's frames, one per tick.
const SPINNER: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// At most this many rows of type-ahead are shown (the last ones); none
/// until something is typed.
const INPUT_ROWS: usize = 6;

/// What the live area shows.
#[derive(Debug, Clone)]
pub struct Live {
    /// The open paragraph of agent text, not yet committed.
    pub open: String,
    /// Whether the open text is a thought (dimmed).
    pub open_dim: bool,
    /// The agent's plan: a heading, then one line per entry.
    pub plan: Vec<String>,
    /// One line per running tool call.
    pub tools: Vec<String>,
    /// When the turn started.
    pub started: Instant,
    /// Tokens and cost, as reported (`12.3k/200k tokens · $0.05`).
    pub usage: Option<String>,
    /// What the agent last said it is doing (a retry…).
    pub agent_status: Option<String>,
    /// A hint shown for a moment (`Enter sends once the turn ends`).
    pub hint: Option<(String, Instant)>,
    /// What the user typed during the turn.
    pub input: String,
    /// The spinner's frame.
    pub frame: usize,
}

impl Live {
    /// An empty live area for a turn starting now.
    pub fn new() -> Self {
        Live {
            open: String::new(),
            open_dim: false,
            plan: Vec::new(),
            tools: Vec::new(),
            started: Instant::now(),
            usage: None,
            agent_status: None,
            hint: None,
            input: String::new(),
            frame: 0,
        }
    }

    /// The status line's text (without colour).
    pub fn status_text(&self, now: Instant) -> String {
        let spinner = SPINNER[self.frame % SPINNER.len()];
        let what = self.agent_status.as_deref().unwrap_or("Working");
        let mut parts = vec![
            format!("{spinner} {what}"),
            elapsed(now.saturating_duration_since(self.started)),
        ];
        if let Some(usage) = &self.usage {
            parts.push(usage.clone());
        }
        let hint = match &self.hint {
            Some((hint, until)) if *until > now => hint.clone(),
            _ => "Ctrl-C cancels".to_owned(),
        };
        parts.push(hint);
        parts.join(" · ")
    }

    /// The rows to draw, each at most `width - 1` columns wide, at most
    /// `height - 1` of them: the open text (its last rows when it does not
    /// fit), the plan and the tools (their last rows), the status line,
    /// the input.
    pub fn rows(&self, width: usize, height: usize, style: Style, now: Instant) -> Vec<String> {
        let cols = width.saturating_sub(1).max(10);
        let mut tools: Vec<String> = self
            .plan
            .iter()
            .chain(&self.tools)
            .map(|t| cut(t, cols))
            .collect();
        let status = cut(&self.status_text(now), cols);
        let mut input = Vec::new();
        // The input line shows once something was typed.
        for (i, line) in self
            .input
            .split('\n')
            .enumerate()
            .take_while(|_| !self.input.is_empty())
        {
            let lead = if i == 0 { "> " } else { "  " };
            input.extend(wrap(&format!("{lead}{line}"), cols));
        }
        let input = input.split_off(input.len().saturating_sub(INPUT_ROWS));
        let mut open = Vec::new();
        if !self.open.is_empty() {
            for line in self.open.split('\n') {
                open.extend(wrap(line, cols));
            }
        }
        let room = height.saturating_sub(1).max(3);
        let fixed = tools.len() + 1 + input.len();
        if fixed > room {
            tools.drain(..(fixed - room).min(tools.len()));
        }
        let fixed = tools.len() + 1 + input.len();
        let open = open.split_off(open.len().saturating_sub(room.saturating_sub(fixed)));
        let mut rows: Vec<String> = open
            .into_iter()
            .map(|r| if self.open_dim { style.dim(&r) } else { r })
            .collect();
        rows.extend(tools);
        rows.push(style.dim(&status));
        rows.extend(input);
        rows
    }
}

impl Default for Live {
    fn default() -> Self {
        Self::new()
    }
}

/// `4s`, `1m 05s`, `2h 03m`.
pub fn elapsed(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The display width of a character (control characters count 0).
fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// `text` cut to `cols` columns, with `…` when cut.
pub fn cut(text: &str, cols: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    let total: usize = text.chars().map(char_width).sum();
    if total <= cols {
        return text.to_owned();
    }
    for c in text.chars() {
        let w = char_width(c);
        if used + w + 1 > cols {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// `text` in rows of at most `cols` columns (characters, not words: this
/// is for text still being written).
pub fn wrap(text: &str, cols: usize) -> Vec<String> {
    let mut rows = vec![String::new()];
    let mut used = 0;
    for c in text.chars() {
        let w = char_width(c);
        if used + w > cols {
            rows.push(String::new());
            used = 0;
        }
        if let Some(row) = rows.last_mut() {
            row.push(c);
        }
        used += w;
    }
    rows
}

/// What a key typed during a turn does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// Insert text.
    Text(String),
    /// Insert a line break (Alt-Enter, Ctrl-J, a pasted line end, a
    /// trailing backslash then Enter).
    Newline,
    /// Enter: nothing is sent during a turn.
    Enter,
    /// Delete the character before the cursor.
    Backspace,
    /// Delete the word before the cursor (Ctrl-W, Alt-Backspace).
    DeleteWord,
    /// Delete the current line (Ctrl-U).
    DeleteLine,
}

/// Decodes the bytes typed during a turn. Keeps an incomplete UTF-8
/// sequence for the next read; a carriage return followed by more bytes in
/// the same read is a pasted line end, not Enter.
#[derive(Debug, Default)]
pub struct Decoder {
    partial: Vec<u8>,
}

impl Decoder {
    /// The keys in one read.
    pub fn keys(&mut self, bytes: &[u8]) -> Vec<Key> {
        let mut data = std::mem::take(&mut self.partial);
        data.extend_from_slice(bytes);
        let mut keys = Vec::new();
        let mut text = String::new();
        let mut i = 0;
        let flush = |text: &mut String, keys: &mut Vec<Key>| {
            if !text.is_empty() {
                keys.push(Key::Text(std::mem::take(text)));
            }
        };
        while i < data.len() {
            let b = data[i];
            match b {
                0x1b => {
                    flush(&mut text, &mut keys);
                    match data.get(i + 1) {
                        Some(b'\r') => {
                            keys.push(Key::Newline);
                            i += 2;
                        }
                        Some(0x7f) => {
                            keys.push(Key::DeleteWord);
                            i += 2;
                        }
                        Some(b'[') | Some(b'O') => {
                            // A control sequence (arrows…): skipped.
                            let mut j = i + 2;
                            while j < data.len() && !(0x40..=0x7e).contains(&data[j]) {
                                j += 1;
                            }
                            i = j + 1;
                        }
                        Some(_) => i += 2,
                        None => i += 1,
                    }
                }
                b'\r' => {
                    flush(&mut text, &mut keys);
                    keys.push(if i + 1 < data.len() {
                        Key::Newline
                    } else {
                        Key::Enter
                    });
                    i += 1;
                }
                b'\n' => {
                    flush(&mut text, &mut keys);
                    keys.push(Key::Newline);
                    i += 1;
                }
                0x7f | 0x08 => {
                    flush(&mut text, &mut keys);
                    keys.push(Key::Backspace);
                    i += 1;
                }
                0x17 => {
                    flush(&mut text, &mut keys);
                    keys.push(Key::DeleteWord);
                    i += 1;
                }
                0x15 => {
                    flush(&mut text, &mut keys);
                    keys.push(Key::DeleteLine);
                    i += 1;
                }
                b'\t' => {
                    text.push(' ');
                    i += 1;
                }
                0..=0x1f => i += 1,
                _ => {
                    let len = match b {
                        0xc0..=0xdf => 2,
                        0xe0..=0xef => 3,
                        0xf0..=0xf7 => 4,
                        _ => 1,
                    };
                    if i + len > data.len() {
                        self.partial = data[i..].to_vec();
                        break;
                    }
                    match std::str::from_utf8(&data[i..i + len]) {
                        Ok(s) => text.push_str(s),
                        Err(_) => text.push('\u{fffd}'),
                    }
                    i += len;
                }
            }
        }
        flush(&mut text, &mut keys);
        keys
    }
}

/// Applies `key` to the type-ahead `input`. True for Enter (which does
/// nothing else).
pub fn apply(input: &mut String, key: Key) -> bool {
    match key {
        Key::Text(text) => input.push_str(&text),
        Key::Newline => input.push('\n'),
        Key::Enter if input.ends_with('\\') => {
            input.pop();
            input.push('\n');
        }
        Key::Enter => return true,
        Key::Backspace => {
            input.pop();
        }
        Key::DeleteWord => {
            while input.ends_with(' ') {
                input.pop();
            }
            while input.chars().last().is_some_and(|c| c != ' ' && c != '\n') {
                input.pop();
            }
        }
        Key::DeleteLine => {
            while input.chars().last().is_some_and(|c| c != '\n') {
                input.pop();
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::usage::tokens;

    #[test]
    fn keys_are_decoded() {
        let mut d = Decoder::default();
        assert_eq!(d.keys(b"ab"), [Key::Text("ab".into())]);
        assert_eq!(d.keys(b"\r"), [Key::Enter]);
        assert_eq!(d.keys(b"\x1b\r"), [Key::Newline]);
        assert_eq!(d.keys(b"\n"), [Key::Newline]);
        // A pasted line end is a line break.
        assert_eq!(
            d.keys(b"one\rtwo"),
            [
                Key::Text("one".into()),
                Key::Newline,
                Key::Text("two".into())
            ]
        );
        // Arrows are skipped; UTF-8 split across reads is kept.
        assert_eq!(d.keys(b"\x1b[A\x1b[1;5Cx"), [Key::Text("x".into())]);
        assert_eq!(d.keys(&"é".as_bytes()[..1]), []);
        assert_eq!(d.keys(&"é".as_bytes()[1..]), [Key::Text("é".into())]);
        assert_eq!(
            d.keys(b"\x7f\x17\x15"),
            [Key::Backspace, Key::DeleteWord, Key::DeleteLine]
        );
    }

    #[test]
    fn type_ahead_is_edited() {
        let mut input = String::new();
        assert!(!apply(&mut input, Key::Text("line A".into())));
        assert!(apply(&mut input, Key::Enter));
        assert_eq!(input, "line A");
        apply(&mut input, Key::Newline);
        apply(&mut input, Key::Text("line B \\".into()));
        assert!(!apply(&mut input, Key::Enter));
        assert_eq!(input, "line A\nline B \n");
        apply(&mut input, Key::Text("word more".into()));
        apply(&mut input, Key::DeleteWord);
        assert_eq!(input, "line A\nline B \nword ");
        apply(&mut input, Key::DeleteLine);
        assert_eq!(input, "line A\nline B \n");
        apply(&mut input, Key::Backspace);
        assert_eq!(input, "line A\nline B ");
    }

    #[test]
    fn the_live_area_fits_the_screen() {
        let mut live = Live::new();
        live.open = "x".repeat(95);
        live.tools = vec!["⏺ [search] Search the code · in_progress".into()];
        live.input = "typed\nsecond".into();
        live.usage = Some("1.2k/200k tokens".into());
        let now = live.started + Duration::from_secs(65);
        let rows = live.rows(41, 40, Style::new(false), now);
        assert_eq!(
            rows,
            [
                "x".repeat(40),
                "x".repeat(40),
                "x".repeat(15),
                "⏺ [search] Search the code · in_progress".into(),
                "⠋ Working · 1m 05s · 1.2k/200k tokens ·…".into(),
                "> typed".into(),
                "  second".into(),
            ]
        );
        // Nothing typed: no input line.
        let mut quiet = live.clone();
        quiet.input.clear();
        let rows = quiet.rows(41, 40, Style::new(false), now);
        assert!(rows.last().unwrap().starts_with("⠋ Working"), "{rows:?}");
        // A small screen keeps the status and the input, and the end of
        // the open text.
        let rows = live.rows(41, 6, Style::new(false), now);
        assert_eq!(rows.len(), 5);
        assert_eq!(rows[0], "x".repeat(15));
        assert!(rows[2].starts_with("⠋ Working"));
    }

    #[test]
    fn numbers_for_people() {
        assert_eq!(elapsed(Duration::from_secs(4)), "4s");
        assert_eq!(elapsed(Duration::from_secs(3725)), "1h 02m");
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(1234), "1.2k");
        assert_eq!(tokens(200_000), "200k");
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(wrap("abcde", 2), ["ab", "cd", "e"]);
    }
}
