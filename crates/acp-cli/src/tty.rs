//! Questions asked on the controlling terminal (`/dev/tty`) while the line
//! editor is not active: permission prompts and elicitation forms.
//!
//! Reading polls the terminal so that a question can be abandoned (the turn
//! was cancelled) without leaving a thread blocked in `read`, which would
//! swallow the next line typed at the chat prompt. An abandoned question
//! notices within one poll interval; the chat waits that long before it
//! shows its prompt again (`CliClient::terminal_free`).

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The controlling terminal, open for a question.
pub struct Tty {
    file: File,
    abort: Arc<AtomicBool>,
}

impl Tty {
    /// Opens `/dev/tty`; `abort` set to true makes pending reads give up.
    pub fn open(abort: Arc<AtomicBool>) -> Option<Tty> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .ok()?;
        Some(Tty { file, abort })
    }

    /// Writes text (no newline added).
    pub fn write(&mut self, text: &str) {
        let _ = self.file.write_all(text.as_bytes());
        let _ = self.file.flush();
    }

    /// Writes `prompt` and reads one line (without its newline); `None` at
    /// end of input, on an error, or when aborted.
    pub fn ask(&mut self, prompt: &str) -> Option<String> {
        self.write(prompt);
        let mut line = Vec::new();
        loop {
            if self.abort.load(Ordering::Relaxed) {
                return None;
            }
            let ready = {
                let mut fds = [PollFd::new(self.file.as_fd(), PollFlags::POLLIN)];
                match poll(&mut fds, PollTimeout::from(100u16)) {
                    Ok(n) => n > 0,
                    Err(nix::errno::Errno::EINTR) => false,
                    Err(_) => return None,
                }
            };
            if !ready {
                continue;
            }
            let mut buf = [0u8; 256];
            match self.file.read(&mut buf) {
                Ok(0) => return None,
                Ok(n) => {
                    line.extend_from_slice(&buf[..n]);
                    if let Some(end) = line.iter().position(|b| *b == b'\n') {
                        line.truncate(end);
                        return Some(
                            String::from_utf8_lossy(&line)
                                .trim_end_matches('\r')
                                .to_owned(),
                        );
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
    }
}
