//! The end of what a child process writes to its standard error, kept for
//! error messages (`agent crashed: <last lines>`).

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, BufReader};
use tokio::task::JoinHandle;

/// How many of a process's last standard error lines a [`StderrTail`] keeps.
pub const STDERR_TAIL_LINES: usize = 50;

/// Longer standard error lines are cut to this many bytes.
const MAX_STDERR_LINE: usize = 16 * 1024;

/// Marker appended to a standard error line that was cut.
const TRUNCATED_MARKER: &[u8] = b" [truncated]";

/// The last lines a child process wrote to its standard error: at most
/// [`STDERR_TAIL_LINES`] lines, each cut to 16 KiB (and marked
/// ` [truncated]`), a trailing `\r` removed, invalid UTF-8 replaced. A task
/// of its own reads the pipe to its end ([`StderrTail::read`]), so the
/// process never blocks on a full pipe; clones share what it kept.
#[derive(Debug, Clone, Default)]
pub struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
}

impl StderrTail {
    /// Reads `stderr` to its end on a task of its own (which needs a Tokio
    /// runtime), passing each line to `on_line` as it arrives and keeping
    /// the last ones. The task ends at end of file or at a read error; await
    /// it to know the tail is complete.
    pub fn read<R>(
        stderr: R,
        on_line: impl Fn(&str) + Send + Sync + 'static,
    ) -> (StderrTail, JoinHandle<()>)
    where
        R: AsyncRead + Unpin + Send + 'static,
    {
        let tail = StderrTail::default();
        let keep = tail.clone();
        let task = tokio::spawn(async move {
            let mut reader = BufReader::new(stderr);
            let mut line = Vec::new();
            loop {
                match read_line(&mut reader, &mut line).await {
                    Ok(true) => {}
                    Ok(false) => return,
                    Err(error) => {
                        tracing::debug!(target: "acp::agent_stderr", %error, "reading agent stderr failed");
                        return;
                    }
                }
                let text = String::from_utf8_lossy(&line).into_owned();
                on_line(&text);
                keep.push(text);
            }
        });
        (tail, task)
    }

    /// The lines kept, oldest first.
    pub fn lines(&self) -> Vec<String> {
        let lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        lines.iter().cloned().collect()
    }

    /// The last `n` lines kept (fewer if there are fewer), oldest first.
    pub fn last(&self, n: usize) -> Vec<String> {
        let lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        lines
            .iter()
            .skip(lines.len().saturating_sub(n))
            .cloned()
            .collect()
    }

    fn push(&self, line: String) {
        let mut lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() == STDERR_TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }
}

/// Reads one line into `line`, without its line ending and cut to
/// [`MAX_STDERR_LINE`] bytes. `Ok(false)` at end of file.
async fn read_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
) -> io::Result<bool> {
    line.clear();
    let mut read_any = false;
    let mut truncated = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            break;
        }
        read_any = true;
        let (chunk, used, complete) = match memchr::memchr(b'\n', available) {
            Some(at) => (&available[..at], at + 1, true),
            None => (available, available.len(), false),
        };
        let room = MAX_STDERR_LINE.saturating_sub(line.len());
        truncated |= chunk.len() > room;
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        reader.consume(used);
        if complete {
            break;
        }
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    if truncated {
        line.extend_from_slice(TRUNCATED_MARKER);
    }
    Ok(read_any)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_the_last_lines_cut_and_without_carriage_returns() {
        let mut text = String::new();
        for n in 0..STDERR_TAIL_LINES + 5 {
            text.push_str(&format!("line {n}\r\n"));
        }
        text.push_str(&"x".repeat(MAX_STDERR_LINE + 1));
        text.push('\n');
        text.push_str("no newline at the end");
        let seen = Arc::new(Mutex::new(0));
        let counter = seen.clone();
        let (tail, task) = StderrTail::read(std::io::Cursor::new(text.into_bytes()), move |_| {
            *counter.lock().unwrap() += 1;
        });
        task.await.unwrap();
        assert_eq!(*seen.lock().unwrap(), STDERR_TAIL_LINES + 7);
        let lines = tail.lines();
        assert_eq!(lines.len(), STDERR_TAIL_LINES);
        assert_eq!(lines[0], "line 7");
        assert_eq!(
            lines[STDERR_TAIL_LINES - 2],
            format!("{} [truncated]", "x".repeat(MAX_STDERR_LINE))
        );
        assert_eq!(
            tail.last(2),
            [
                lines[STDERR_TAIL_LINES - 2].clone(),
                "no newline at the end".to_owned()
            ]
        );
        assert_eq!(tail.last(100), lines);
    }
}
