//! Where `acp chat` prints its transcript, and the terminal during a turn.
//!
//! - While the line editor waits for a line, text printed there would land
//!   on the `> ` prompt and the half-typed line, so it goes through
//!   rustyline's external printer, which prints it above the prompt and
//!   redraws the prompt and the line under it.
//! - While a turn runs (on a terminal), the bottom of the screen is the
//!   live area of [`crate::view::chat::live`]: text is committed above it, and it is
//!   redrawn under it. The terminal does not echo: what the user types goes
//!   into the live area's input line (type-ahead), never into the
//!   transcript, and is handed to the line editor when the turn ends. A
//!   question (a permission, a form) takes the terminal back for its time:
//!   the live area is hidden, reading stops, and echo is on.
//! - Otherwise text goes straight to standard output.
//!
//! The external printer hands text to the editor through a queue of one
//! message and waits while that is full; if the editor ends its line at
//! that moment, the wait lasts until the next prompt. The transcript
//! prints with the view locked, and a turn cannot go on without the
//! view, so it never calls the printer itself: it queues the text for a
//! thread that does ([`ChatOutput::attach`]). In that narrow case the text
//! is shown late, above the next prompt, but nothing stalls.

use crate::style::Style;
use crate::view::chat::live::{self, Decoder, Live};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::termios::{self, InputFlags, LocalFlags, SetArg, SpecialCharacterIndices, Termios};
use std::io::{IsTerminal, Read, Write};
use std::os::fd::AsFd;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How often the reader of type-ahead checks whether to stop or pause.
const READ_POLL: u16 = 50;
/// Changes to the live area closer together than this are drawn together.
const DRAW_EVERY: Duration = Duration::from_millis(30);
/// How long a hint stays in the status line.
const HINT_FOR: Duration = Duration::from_secs(3);

/// Chooses where the transcript goes. Cheap to clone; clones share the
/// choice.
#[derive(Clone, Default)]
pub struct ChatOutput {
    state: Arc<Mutex<State>>,
    /// The reader of type-ahead: asked to pause (a question reads the
    /// terminal), and saying it has.
    reader: Arc<(Mutex<ReaderFlags>, Condvar)>,
}

#[derive(Default)]
struct ReaderFlags {
    pause: bool,
    paused: bool,
    stop: bool,
}

#[derive(Default)]
struct State {
    /// The line editor is reading a line.
    editing: bool,
    /// The thread that prints through the line editor, once there is one.
    printer: Option<Sender<String>>,
    /// The turn that is running, on a terminal.
    turn: Option<Turn>,
}

/// The terminal during a turn.
struct Turn {
    live: Live,
    style: Style,
    /// The width (in columns) of each row of the live area on the screen
    /// now.
    drawn: Vec<usize>,
    /// Questions that have the terminal.
    suspended: usize,
    /// The terminal's settings before the turn, restored after it.
    saved: Option<Termios>,
    last_draw: Instant,
    dirty: bool,
}

impl Turn {
    /// Erases the live area; the cursor ends at the start of its first row.
    ///
    /// The terminal may have been resized since the rows were drawn (a
    /// turn sees SIGWINCH only as a new size at its next draw). A terminal
    /// that rewraps its lines when it gets narrower (tmux, VTE, kitty,
    /// iTerm2, …) splits a drawn row wider than the new width into several,
    /// so the rows to go up are counted at the width now.
    fn erase(&mut self, out: &mut impl Write) {
        let (cols, _) = screen_size();
        let rows = screen_rows(&self.drawn, cols);
        if rows > 1 {
            let _ = write!(out, "\x1b[{}A", rows - 1);
        }
        if rows > 0 {
            let _ = write!(out, "\r\x1b[J");
        }
        self.drawn.clear();
    }

    /// Draws the live area where the cursor is (at the start of a line).
    fn draw(&mut self, out: &mut impl Write) {
        let (width, height) = screen_size();
        let rows = self.live.rows(width, height, self.style, Instant::now());
        let _ = write!(out, "\x1b[?25l{}\x1b[?25h", rows.join("\r\n"));
        self.drawn = rows
            .iter()
            .map(|r| crate::view::markdown::visible_width(r))
            .collect();
        self.last_draw = Instant::now();
        self.dirty = false;
    }

    fn redraw(&mut self, out: &mut impl Write) {
        if self.suspended == 0 {
            self.erase(out);
            self.draw(out);
        }
    }
}

/// The terminal's size (columns, rows); 80×24 when it cannot be told.
fn screen_size() -> (usize, usize) {
    terminal_size::terminal_size_of(std::io::stdout())
        .map(|(w, h)| (w.0 as usize, h.0 as usize))
        .filter(|(w, h)| *w > 0 && *h > 0)
        .unwrap_or((80, 24))
}

/// How many screen rows lines `widths` columns wide take on a screen
/// `cols` wide that rewraps them (an empty line takes one).
pub fn screen_rows(widths: &[usize], cols: usize) -> usize {
    let cols = cols.max(1);
    widths.iter().map(|w| w.div_ceil(cols).max(1)).sum()
}

/// The terminal without echo or line editing, so that type-ahead is read
/// key by key; Ctrl-C still interrupts, and output is processed as usual.
fn quiet_mode(saved: &Termios) -> Termios {
    let mut quiet = saved.clone();
    quiet.local_flags &= !(LocalFlags::ICANON | LocalFlags::ECHO | LocalFlags::IEXTEN);
    quiet.input_flags &= !InputFlags::ICRNL;
    quiet.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
    quiet.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
    quiet
}

impl ChatOutput {
    /// A writer for the transcript: standard output, the line editor's
    /// printer while [`ChatOutput::set_editing`] says a line is being read,
    /// or above the live area during a turn. Text is passed on at each
    /// flush.
    pub fn writer(&self) -> ChatWriter {
        ChatWriter {
            output: self.clone(),
            pending: Vec::new(),
        }
    }

    /// Prints through `printer` from now on while a line is being read,
    /// forwarding from a thread of its own (see the module docs). Without
    /// it (no terminal, or rustyline cannot print above its prompt) text
    /// always goes to standard output.
    pub fn attach(&self, mut printer: impl rustyline::ExternalPrinter + Send + 'static) {
        let (sender, texts) = std::sync::mpsc::channel::<String>();
        let started = std::thread::Builder::new()
            .name("acp-chat-printer".to_owned())
            .spawn(move || {
                for text in texts {
                    if printer.print(text).is_err() {
                        break;
                    }
                }
            });
        if started.is_ok() {
            self.lock().printer = Some(sender);
        }
    }

    /// Says whether the line editor is reading a line.
    pub fn set_editing(&self, editing: bool) {
        self.lock().editing = editing;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn print(&self, bytes: Vec<u8>) {
        let mut state = self.lock();
        if let Some(turn) = &mut state.turn
            && turn.suspended == 0
        {
            let mut out = std::io::stdout().lock();
            turn.erase(&mut out);
            let _ = out.write_all(&bytes);
            if !bytes.ends_with(b"\n") {
                let _ = out.write_all(b"\n");
            }
            turn.draw(&mut out);
            let _ = out.flush();
            return;
        }
        if state.editing
            && let Some(printer) = &state.printer
        {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            match printer.send(text) {
                Ok(()) => return,
                // The printer thread is gone: print here from now on.
                Err(_) => state.printer = None,
            }
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&bytes);
        let _ = out.flush();
    }

    /// Starts the live area of a turn, and the reading of type-ahead, when
    /// standard input and output are a terminal; `typed` is what the live
    /// input line starts with. Otherwise nothing changes.
    pub fn begin_turn(&self, color: bool, typed: String) {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() || !std::io::stdout().is_terminal() {
            return;
        }
        let saved = termios::tcgetattr(stdin.as_fd()).ok();
        if let Some(saved) = &saved {
            let _ = termios::tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &quiet_mode(saved));
        }
        let mut live = Live::new();
        live.input = typed;
        let mut turn = Turn {
            live,
            style: Style::new(color),
            drawn: Vec::new(),
            suspended: 0,
            saved,
            last_draw: Instant::now(),
            dirty: false,
        };
        {
            let mut out = std::io::stdout().lock();
            turn.draw(&mut out);
            let _ = out.flush();
        }
        self.lock().turn = Some(turn);
        {
            let (flags, _) = &*self.reader;
            *flags.lock().unwrap_or_else(PoisonError::into_inner) = ReaderFlags::default();
        }
        let output = self.clone();
        let _ = std::thread::Builder::new()
            .name("acp-chat-typeahead".to_owned())
            .spawn(move || output.read_typeahead());
    }

    /// Ends the live area: stops reading, erases it, gives the terminal its
    /// settings back, and returns what was typed ahead.
    pub fn end_turn(&self) -> String {
        if !self.in_turn() {
            return String::new();
        }
        self.stop_reader();
        let mut state = self.lock();
        let Some(mut turn) = state.turn.take() else {
            return String::new();
        };
        let mut out = std::io::stdout().lock();
        turn.erase(&mut out);
        let _ = out.flush();
        if let Some(saved) = &turn.saved {
            let _ = termios::tcsetattr(std::io::stdin().as_fd(), SetArg::TCSANOW, saved);
        }
        turn.live.input
    }

    /// Whether a turn's live area is up.
    pub fn in_turn(&self) -> bool {
        self.lock().turn.is_some()
    }

    /// A question takes the terminal: reading stops, the live area goes,
    /// echo comes back. Nested calls count.
    pub fn suspend(&self) {
        if !self.in_turn() {
            return;
        }
        self.pause_reader(true);
        let mut state = self.lock();
        if let Some(turn) = &mut state.turn {
            turn.suspended += 1;
            if turn.suspended == 1 {
                let mut out = std::io::stdout().lock();
                turn.erase(&mut out);
                let _ = out.flush();
                if let Some(saved) = &turn.saved {
                    let _ = termios::tcsetattr(std::io::stdin().as_fd(), SetArg::TCSANOW, saved);
                }
            }
        }
    }

    /// The question is over: the live area and the reading come back.
    pub fn resume(&self) {
        let mut state = self.lock();
        let Some(turn) = &mut state.turn else {
            return;
        };
        if turn.suspended == 0 {
            return;
        }
        turn.suspended -= 1;
        if turn.suspended > 0 {
            return;
        }
        if let Some(saved) = &turn.saved {
            let _ = termios::tcsetattr(
                std::io::stdin().as_fd(),
                SetArg::TCSANOW,
                &quiet_mode(saved),
            );
        }
        let mut out = std::io::stdout().lock();
        turn.draw(&mut out);
        let _ = out.flush();
        drop(state);
        self.pause_reader(false);
    }

    /// Changes the live area with `f`; it is drawn at once unless it was
    /// drawn very recently (then at the next [`ChatOutput::tick`]).
    pub fn live(&self, f: impl FnOnce(&mut Live)) {
        let mut state = self.lock();
        let Some(turn) = &mut state.turn else {
            return;
        };
        f(&mut turn.live);
        turn.dirty = true;
        if turn.last_draw.elapsed() >= DRAW_EVERY {
            let mut out = std::io::stdout().lock();
            turn.redraw(&mut out);
            let _ = out.flush();
        }
    }

    /// Changes the live area with `f` without drawing it: it is drawn with
    /// the next text committed, or at the next [`ChatOutput::tick`].
    pub fn stage(&self, f: impl FnOnce(&mut Live)) {
        let mut state = self.lock();
        if let Some(turn) = &mut state.turn {
            f(&mut turn.live);
            turn.dirty = true;
        }
    }

    /// Moves the spinner and draws what changed; called every 100 ms or
    /// so during a turn.
    pub fn tick(&self) {
        let mut state = self.lock();
        let Some(turn) = &mut state.turn else {
            return;
        };
        turn.live.frame += 1;
        let mut out = std::io::stdout().lock();
        turn.redraw(&mut out);
        let _ = out.flush();
    }

    fn pause_reader(&self, pause: bool) {
        let (flags, changed) = &*self.reader;
        let mut f = flags.lock().unwrap_or_else(PoisonError::into_inner);
        f.pause = pause;
        changed.notify_all();
        if pause {
            // The reader notices within one poll.
            let deadline = Instant::now() + Duration::from_millis(4 * READ_POLL as u64);
            while !f.paused && !f.stop && Instant::now() < deadline {
                let left = deadline.saturating_duration_since(Instant::now());
                f = changed
                    .wait_timeout(f, left)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
        }
    }

    fn stop_reader(&self) {
        let (flags, changed) = &*self.reader;
        let mut f = flags.lock().unwrap_or_else(PoisonError::into_inner);
        f.stop = true;
        changed.notify_all();
        let deadline = Instant::now() + Duration::from_millis(4 * READ_POLL as u64);
        while !f.paused && Instant::now() < deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            f = changed
                .wait_timeout(f, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// The reader of type-ahead: reads the keys typed during the turn into
    /// the live input line, until told to stop; steps aside while paused.
    fn read_typeahead(self) {
        let (flags, changed) = &*self.reader.clone();
        let mut decoder = Decoder::default();
        let stdin = std::io::stdin();
        let mut buf = [0u8; 1024];
        loop {
            {
                let mut f = flags.lock().unwrap_or_else(PoisonError::into_inner);
                loop {
                    if f.stop {
                        f.paused = true;
                        changed.notify_all();
                        return;
                    }
                    if !f.pause {
                        f.paused = false;
                        break;
                    }
                    f.paused = true;
                    changed.notify_all();
                    f = changed.wait(f).unwrap_or_else(PoisonError::into_inner);
                }
            }
            let ready = {
                let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
                match poll(&mut fds, PollTimeout::from(READ_POLL)) {
                    Ok(n) => n > 0,
                    Err(nix::errno::Errno::EINTR) => false,
                    Err(_) => return,
                }
            };
            if !ready {
                continue;
            }
            // A pause asked for while polling wins: the question reads.
            if flags.lock().unwrap_or_else(PoisonError::into_inner).pause {
                continue;
            }
            let n = match stdin.lock().read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            let keys = decoder.keys(&buf[..n]);
            self.live(|live| {
                for key in keys {
                    if live::apply(&mut live.input, key) {
                        live.hint = Some((
                            "Enter sends once the turn ends".to_owned(),
                            Instant::now() + HINT_FOR,
                        ));
                    }
                }
            });
        }
    }
}

/// The transcript's writer (see [`ChatOutput::writer`]).
pub struct ChatWriter {
    output: ChatOutput,
    pending: Vec<u8>,
}

impl ChatWriter {
    /// The output this writer prints to.
    pub fn output(&self) -> &ChatOutput {
        &self.output
    }
}

impl Write for ChatWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            self.output.print(std::mem::take(&mut self.pending));
        }
        Ok(())
    }
}

impl Drop for ChatWriter {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_counted_at_the_width_now() {
        // Drawn 100 wide: an open line, a tool, the status line.
        let drawn = [19, 45, 31];
        assert_eq!(screen_rows(&drawn, 100), 3);
        // Then 20 wide: the terminal split the two longer rows.
        assert_eq!(screen_rows(&drawn, 20), 1 + 3 + 2);
        // Exactly as wide as the screen: one row; empty rows count.
        assert_eq!(screen_rows(&[20, 0], 20), 2);
        assert_eq!(screen_rows(&[], 20), 0);
    }

    /// A printer that records what it was given.
    struct Recorder(Sender<String>);

    impl rustyline::ExternalPrinter for Recorder {
        fn print(&mut self, msg: String) -> rustyline::Result<()> {
            let _ = self.0.send(msg);
            Ok(())
        }
    }

    #[test]
    fn text_goes_through_the_printer_at_each_flush_while_editing() {
        let output = ChatOutput::default();
        let (sender, printed) = std::sync::mpsc::channel();
        output.attach(Recorder(sender));
        let mut writer = output.writer();
        output.set_editing(true);
        writer.write_all(b"late ").unwrap();
        writer.write_all(b"news\n").unwrap();
        assert!(
            printed.try_recv().is_err(),
            "nothing is passed on before the flush"
        );
        writer.flush().unwrap();
        writer.write_all(b"more\n").unwrap();
        writer.flush().unwrap();
        let wait = std::time::Duration::from_secs(5);
        assert_eq!(printed.recv_timeout(wait).unwrap(), "late news\n");
        assert_eq!(printed.recv_timeout(wait).unwrap(), "more\n");
    }
}
