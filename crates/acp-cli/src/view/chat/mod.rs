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
//! What a tool call, the plan or the usage *is* comes from the view's
//! store ([`crate::view::Store`]); the transcript keeps only how it shows
//! them: which tool calls run in the live area, the details it holds back
//! until a call ends, whether the plan waits there to be committed.
//! Tool calls and the plan are in `tools.rs`, terminal output in
//! `terminal.rs`.

pub mod live;
pub mod output;
mod terminal;
mod tools;

pub use terminal::LIVE_LINES;

use crate::style::Style;
use crate::view::chat::output::ChatOutput;
use crate::view::markdown::{self, highlight, highlighter, inline};
use crate::view::store::{Change, Store};
use crate::view::usage;
use acp::schema::*;
use std::collections::HashMap;
use std::io::Write;
use syntect::easy::HighlightLines;

/// What the current line of agent output belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Message,
    Thought,
    User,
}

/// The chat transcript.
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
    /// How each tool call is shown (what the call is: the store).
    tools: HashMap<ToolCallId, tools::Shown>,
    /// Tool calls not ended yet, in the order they started.
    open_tools: Vec<ToolCallId>,
    /// The live area, during a turn on a terminal.
    live: Option<ChatOutput>,
    /// The plan is in the live area, not committed yet.
    plan_held: bool,
    /// Rows of a table still being written (drawn once it ends).
    table: Vec<String>,
    /// Links are OSC 8 hyperlinks ([`crate::view::markdown::hyperlinks`]).
    hyperlinks: bool,
    /// The width to lay text out for; the terminal's when `None`.
    width: Option<usize>,
}

impl Transcript {
    /// A transcript writing to `out`.
    pub fn new(out: Box<dyn Write + Send>, color: bool) -> Self {
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
            plan_held: false,
            table: Vec::new(),
            hyperlinks: color && markdown::hyperlinks(|k| std::env::var(k).ok()),
            width: None,
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

    /// Prints a whole line, after ending any partial line.
    pub fn line(&mut self, text: &str) {
        self.break_line();
        let _ = writeln!(self.out, "{text}");
        let _ = self.out.flush();
    }

    /// What the agent last said about its own progress (a retry, …), in
    /// the status line of the live area when one is up; false when none
    /// is (the view then writes it as a note).
    pub(super) fn live_status(&mut self, text: &str) -> bool {
        if self.is_live()
            && let Some(live) = &self.live
        {
            let text = text.to_owned();
            live.live(|l| l.agent_status = Some(text));
            return true;
        }
        false
    }

    /// Forgets what [`live_status`](Self::live_status) said.
    pub(super) fn clear_live_status(&mut self) {
        if let Some(live) = &self.live {
            live.live(|l| l.agent_status = None);
        }
    }

    /// A note that leaves the line the agent is writing open: above the
    /// live area when one is up, else a plain [`note`](Self::note).
    pub fn note_aside(&mut self, text: &str) {
        if !self.is_live() {
            return self.note(text);
        }
        let text = self
            .wrap(text)
            .split('\n')
            .map(|row| self.style.dim(row))
            .collect::<Vec<_>>()
            .join("\n");
        let _ = writeln!(self.out, "{text}");
        let _ = self.out.flush();
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

    /// Shows one session update, the store having taken it already
    /// (`change` says what it changed there).
    pub(super) fn show(&mut self, update: &SessionUpdate, store: &Store, change: &Change) {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => self.chunk(Stream::Message, &chunk.content),
            SessionUpdate::AgentThoughtChunk(chunk) => self.chunk(Stream::Thought, &chunk.content),
            SessionUpdate::UserMessageChunk(chunk) => self.chunk(Stream::User, &chunk.content),
            SessionUpdate::ToolCall(call) => self.tool_call(call, store, change),
            SessionUpdate::ToolCallUpdate(u) => self.tool_call_update(u, store),
            SessionUpdate::Plan(plan) => self.plan(plan, change),
            SessionUpdate::AvailableCommandsUpdate(u) => {
                let names: Vec<String> = u
                    .available_commands
                    .iter()
                    .map(|c| format!("/{}", c.name))
                    .collect();
                if !names.is_empty() {
                    self.note(&format!("[commands] {}", names.join(" ")));
                }
            }
            SessionUpdate::SessionInfoUpdate(u) => {
                if let Some(Some(title)) = &u.title {
                    self.note(&format!("[session] {title}"));
                }
            }
            SessionUpdate::UsageUpdate(u) => {
                if let Some(live) = &self.live {
                    let text = usage::live_usage(u);
                    live.live(|l| l.usage = Some(text));
                }
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

    /// The status line after a turn: stop reason (unless `end_turn`),
    /// mode, context usage and the turn's tokens.
    pub fn status_line(&mut self, store: &Store, stop: Option<&StopReason>) {
        self.break_line();
        let mut parts = Vec::new();
        if let Some(stop) = stop
            && *stop != StopReason::EndTurn
        {
            parts.push(format!("stopped: {stop}"));
        }
        if let Some(mode) = &store.current_mode {
            parts.push(format!("mode {mode}"));
        }
        parts.extend(store.usage.as_ref().map(usage::context_usage));
        parts.extend(store.turn_usage.as_ref().map(usage::turn_usage));
        if !parts.is_empty() {
            let text = format!("── {}", parts.join(" · "));
            self.note(&text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::{Commands, Screen, View};
    use std::sync::{Arc, Mutex};

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

    /// A chat view writing to a buffer, fed updates as the client feeds
    /// it; otherwise its transcript.
    struct Fed(View);

    impl Fed {
        fn new(buf: &Buf, color: bool) -> Fed {
            Fed(View::chat(
                color,
                Commands::default(),
                Box::new(buf.clone()),
            ))
        }

        fn update(&mut self, update: &SessionUpdate) {
            self.0
                .update(&SessionNotification::new("s", update.clone()));
        }

        fn status_line(&mut self, stop: Option<&StopReason>) {
            let stop = stop.cloned().unwrap_or(StopReason::EndTurn);
            self.0
                .finish(&SessionId::new("s"), &PromptResponse::new(stop));
        }
    }

    impl std::ops::Deref for Fed {
        type Target = Transcript;
        fn deref(&self) -> &Transcript {
            match &self.0.screen {
                Screen::Chat(t) => t,
                _ => unreachable!("a chat view"),
            }
        }
    }

    impl std::ops::DerefMut for Fed {
        fn deref_mut(&mut self) -> &mut Transcript {
            self.0.transcript().expect("a chat view")
        }
    }

    #[test]
    fn streams_lines_and_plans() {
        let buf = Buf::default();
        let mut t = Fed::new(&buf, false);
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
        let mut t = Fed::new(&buf, false);
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
        let mut t = Fed::new(&buf, false);
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
        let mut t = Fed::new(&buf, color);
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
