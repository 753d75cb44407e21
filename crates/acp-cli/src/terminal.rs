//! Terminals the agent runs through the client (`terminal/*`).
//!
//! Each command runs in a process group of its own, with standard output
//! and standard error joined into one pipe, so the captured output keeps the
//! order in which the command wrote it. With an `outputByteLimit`, the
//! oldest output is dropped first, always at a UTF-8 character boundary, and
//! the output is then reported as truncated. Killing or releasing a terminal
//! kills its whole process group, so children of the command go too.

use acp::schema::{
    CreateTerminalRequest, Error, ErrorCode, TerminalExitStatus, TerminalId, TerminalOutputResponse,
};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::collections::HashMap;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::watch;

/// After the command exits, how long to wait for the rest of its output.
const OUTPUT_DRAIN: Duration = Duration::from_millis(500);

/// Captured output with an optional byte limit.
#[derive(Debug, Default)]
pub struct OutputBuffer {
    bytes: Vec<u8>,
    limit: Option<usize>,
    truncated: bool,
    /// Bytes pushed so far, dropped ones included.
    total: usize,
}

/// Output read since an offset (see [`OutputBuffer::since`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSince {
    /// The new text.
    pub text: String,
    /// The offset to read from next time.
    pub next: usize,
    /// Whether output after the offset had been dropped (byte limit).
    pub skipped: bool,
}

impl OutputBuffer {
    /// An empty buffer keeping at most `limit` bytes.
    pub fn new(limit: Option<usize>) -> Self {
        OutputBuffer {
            bytes: Vec::new(),
            limit,
            truncated: false,
            total: 0,
        }
    }

    /// Appends `data`, dropping the oldest bytes beyond the limit. The kept
    /// output never starts inside a UTF-8 character.
    pub fn push(&mut self, data: &[u8]) {
        self.bytes.extend_from_slice(data);
        self.total += data.len();
        let Some(limit) = self.limit else { return };
        if self.bytes.len() <= limit {
            return;
        }
        let mut cut = self.bytes.len() - limit;
        while cut < self.bytes.len() && is_continuation(self.bytes[cut]) {
            cut += 1;
        }
        self.bytes.drain(..cut);
        self.truncated = true;
    }

    /// The output as text and whether anything was dropped. An incomplete
    /// character at the end (the command is still writing it) is left out;
    /// invalid bytes elsewhere become U+FFFD.
    pub fn snapshot(&self) -> (String, bool) {
        let complete = match std::str::from_utf8(&self.bytes) {
            Ok(_) => self.bytes.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.bytes.len(),
        };
        (
            String::from_utf8_lossy(&self.bytes[..complete]).into_owned(),
            self.truncated,
        )
    }
}

impl OutputBuffer {
    /// The output after offset `from` (counted in bytes ever pushed): only
    /// complete lines, unless `all`. Output dropped by the byte limit is
    /// skipped.
    pub fn since(&self, from: usize, all: bool) -> OutputSince {
        let start = self.total - self.bytes.len();
        let skipped = from < start;
        let from = from.max(start).min(self.total);
        let rest = &self.bytes[from - start..];
        let end = if all {
            match std::str::from_utf8(rest) {
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                _ => rest.len(),
            }
        } else {
            memchr::memrchr(b'\n', rest).map_or(0, |i| i + 1)
        };
        OutputSince {
            text: String::from_utf8_lossy(&rest[..end]).into_owned(),
            next: from + end,
            skipped,
        }
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

struct Running {
    pgid: Pid,
    output: Arc<Mutex<OutputBuffer>>,
    exit: watch::Receiver<Option<TerminalExitStatus>>,
}

impl Running {
    fn exited(&self) -> Option<TerminalExitStatus> {
        self.exit.borrow().clone()
    }

    fn kill(&self) {
        if self.exited().is_none() {
            let _ = killpg(self.pgid, Signal::SIGKILL);
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The terminals of a client, by id.
#[derive(Default)]
pub struct Terminals {
    next: AtomicU64,
    running: Mutex<HashMap<TerminalId, Arc<Running>>>,
}

impl std::fmt::Debug for Terminals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terminals").finish_non_exhaustive()
    }
}

impl Terminals {
    /// Starts `request.command` with its args, env and cwd (default
    /// `default_cwd`). Must run inside a Tokio runtime.
    pub fn create(
        &self,
        request: &CreateTerminalRequest,
        default_cwd: &Path,
    ) -> Result<TerminalId, Error> {
        let cwd = request.cwd.as_deref().map(Path::new).unwrap_or(default_cwd);
        let (reader, writer) =
            nix::unistd::pipe().map_err(|e| internal(format!("cannot create a pipe: {e}")))?;
        let writer_err = writer
            .try_clone()
            .map_err(|e| internal(format!("cannot create a pipe: {e}")))?;
        let mut command = tokio::process::Command::new(&request.command);
        command
            .args(&request.args)
            .envs(request.env.iter().map(|v| (&v.name, &v.value)))
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(writer_err)
            .process_group(0)
            .kill_on_drop(false);
        let mut child = command.spawn().map_err(|e| {
            Error::new(
                ErrorCode::INTERNAL_ERROR,
                format!("cannot run {:?} in {}: {e}", request.command, cwd.display()),
            )
        })?;
        // The command's copies of the pipe's writing end must be closed here,
        // or the reader would never see end of file.
        drop(command);
        let pid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .ok_or_else(|| internal("the command exited before it could be watched"))?;
        let limit = request
            .output_byte_limit
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        let output = Arc::new(Mutex::new(OutputBuffer::new(limit)));
        let drained = spawn_reader(reader, Arc::clone(&output));
        let (exit_tx, exit_rx) = watch::channel(None);
        tokio::spawn(async move {
            let status = child.wait().await;
            let _ = tokio::time::timeout(OUTPUT_DRAIN, drained).await;
            let status = match status {
                Ok(status) => exit_status(status),
                Err(e) => TerminalExitStatus::signaled(format!("unknown ({e})")),
            };
            let _ = exit_tx.send(Some(status));
        });
        let id = TerminalId::new(format!(
            "term-{}",
            self.next.fetch_add(1, Ordering::Relaxed) + 1
        ));
        let running = Arc::new(Running {
            pgid: Pid::from_raw(pid),
            output,
            exit: exit_rx,
        });
        self.lock().insert(id.clone(), running);
        Ok(id)
    }

    /// The output so far, and the exit status if the command has exited.
    pub fn output(&self, id: &TerminalId) -> Result<TerminalOutputResponse, Error> {
        let running = self.get(id)?;
        let exit = running.exited();
        let (text, truncated) = running
            .output
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .snapshot();
        let mut response = TerminalOutputResponse::new(text, truncated);
        response.exit_status = exit;
        Ok(response)
    }

    /// The output after offset `from` (see [`OutputBuffer::since`]), and
    /// the exit status if the command has exited (its output is then
    /// complete).
    pub fn output_since(
        &self,
        id: &TerminalId,
        from: usize,
        all: bool,
    ) -> Result<(OutputSince, Option<TerminalExitStatus>), Error> {
        let running = self.get(id)?;
        let exit = running.exited();
        let since = running
            .output
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .since(from, all || exit.is_some());
        Ok((since, exit))
    }

    /// Waits for the command to exit.
    pub async fn wait_for_exit(&self, id: &TerminalId) -> Result<TerminalExitStatus, Error> {
        let mut exit = self.get(id)?.exit.clone();
        let status = exit
            .wait_for(Option::is_some)
            .await
            .map_err(|_| internal("the terminal's watcher stopped"))?;
        Ok(status.clone().unwrap_or_default())
    }

    /// Kills the command's process group; the terminal and its output stay.
    pub fn kill(&self, id: &TerminalId) -> Result<(), Error> {
        self.get(id)?.kill();
        Ok(())
    }

    /// Kills the command if it still runs and forgets the terminal.
    pub fn release(&self, id: &TerminalId) -> Result<(), Error> {
        let running = self.lock().remove(id).ok_or_else(|| unknown(id))?;
        running.kill();
        Ok(())
    }

    /// Kills every terminal's command (when the client shuts down).
    pub fn kill_all(&self) {
        for running in self.lock().drain().map(|(_, r)| r) {
            running.kill();
        }
    }

    fn get(&self, id: &TerminalId) -> Result<Arc<Running>, Error> {
        self.lock().get(id).cloned().ok_or_else(|| unknown(id))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TerminalId, Arc<Running>>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Reads the pipe on a thread of its own until end of file; the returned
/// receiver resolves then.
fn spawn_reader(
    reader: std::os::fd::OwnedFd,
    output: Arc<Mutex<OutputBuffer>>,
) -> tokio::sync::oneshot::Receiver<()> {
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let mut reader = std::fs::File::from(reader);
    std::thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        loop {
            match reader.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => output
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = done_tx.send(());
    });
    done_rx
}

fn exit_status(status: ExitStatus) -> TerminalExitStatus {
    if let Some(code) = status.code() {
        return TerminalExitStatus::exited(u32::try_from(code).unwrap_or(u32::MAX));
    }
    match status.signal() {
        Some(number) => match Signal::try_from(number) {
            Ok(signal) => TerminalExitStatus::signaled(signal.as_str()),
            Err(_) => TerminalExitStatus::signaled(number.to_string()),
        },
        None => TerminalExitStatus::default(),
    }
}

fn internal(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, message)
}

fn unknown(id: &TerminalId) -> Error {
    Error::new(
        ErrorCode::INVALID_PARAMS,
        format!("no terminal with id {id}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_from_the_start_on_a_char_boundary() {
        let mut buf = OutputBuffer::new(Some(4));
        buf.push("ab".as_bytes());
        assert_eq!(buf.snapshot(), ("ab".to_owned(), false));
        // "ab€é" is 7 bytes ("€" 3, "é" 2); the last 4 would start inside
        // "€", so only "é" is kept.
        buf.push("€é".as_bytes());
        assert_eq!(buf.snapshot(), ("é".to_owned(), true));
        buf.push(b"xy");
        assert_eq!(buf.snapshot(), ("éxy".to_owned(), true));
        buf.push(b"z");
        assert_eq!(buf.snapshot(), ("xyz".to_owned(), true));
    }

    #[test]
    fn since_reads_complete_lines_and_skips_dropped_output() {
        let mut buf = OutputBuffer::new(Some(8));
        buf.push(b"one\ntw");
        let a = buf.since(0, false);
        assert_eq!((a.text.as_str(), a.next, a.skipped), ("one\n", 4, false));
        let b = buf.since(a.next, false);
        assert_eq!((b.text.as_str(), b.next), ("", 4));
        let c = buf.since(a.next, true);
        assert_eq!((c.text.as_str(), c.next), ("tw", 6));
        // 14 bytes pushed, the last 8 kept: "two\n" was partly dropped.
        buf.push(b"o\nthree\n");
        let d = buf.since(4, false);
        assert_eq!(
            (d.text.as_str(), d.next, d.skipped),
            ("o\nthree\n", 14, true)
        );
    }

    #[test]
    fn incomplete_trailing_char_is_held_back() {
        let mut buf = OutputBuffer::new(None);
        let euro = "€".as_bytes();
        buf.push(b"a");
        buf.push(&euro[..2]);
        assert_eq!(buf.snapshot(), ("a".to_owned(), false));
        buf.push(&euro[2..]);
        assert_eq!(buf.snapshot(), ("a€".to_owned(), false));
    }
}
