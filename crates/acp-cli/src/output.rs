//! Where `acp chat` prints its transcript. While a turn runs, text goes
//! straight to standard output. While the line editor waits for a line,
//! text printed there would land on the `> ` prompt and the half-typed
//! line, so it goes through rustyline's external printer, which prints it
//! above the prompt and redraws the prompt and the line under it.
//!
//! The external printer hands text to the editor through a queue of one
//! message and waits while that is full; if the editor ends its line at
//! that moment, the wait lasts until the next prompt. The transcript
//! prints with the renderer locked, and a turn cannot go on without the
//! renderer, so it never calls the printer itself: it queues the text for a
//! thread that does ([`ChatOutput::attach`]). In that narrow case the text
//! is shown late, above the next prompt, but nothing stalls.

use std::io::Write;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};

/// Chooses where the transcript goes. Cheap to clone; clones share the
/// choice.
#[derive(Clone, Default)]
pub struct ChatOutput {
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    /// The line editor is reading a line.
    editing: bool,
    /// The thread that prints through the line editor, once there is one.
    printer: Option<Sender<String>>,
}

impl ChatOutput {
    /// A writer for the transcript: standard output, or the line editor's
    /// printer while [`ChatOutput::set_editing`] says a line is being read.
    /// Text is passed on at each flush.
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
}

/// The transcript's writer (see [`ChatOutput::writer`]).
pub struct ChatWriter {
    output: ChatOutput,
    pending: Vec<u8>,
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
