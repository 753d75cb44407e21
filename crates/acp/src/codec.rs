//! Newline-delimited framing for ACP messages.
//!
//! ACP sends one JSON-RPC message per line. [`LineReader`] splits an async
//! byte stream into such lines and [`LineWriter`] writes them, each followed
//! by a single `\n`.
//!
//! Reading rules:
//!
//! * Lines are separated by the byte `0x0A` only. `U+2028`, `U+2029` and a
//!   lone `\r` in the middle of a line are ordinary content.
//! * One trailing `\r` is removed, so CRLF input works.
//! * A UTF-8 byte order mark (`EF BB BF`) at the start of a line is removed.
//! * Lines that are empty or consist only of ASCII whitespace are skipped.
//! * A line longer than the configured maximum (counted in bytes, without
//!   its `\n` but with a `\r` before it, if any) is never buffered whole: its
//!   bytes are discarded up to the next `\n` and it is reported as
//!   [`Frame::TooLong`] with its full size. Reading then goes on normally.
//!   While its bytes pass, a small streaming scan notes the line's
//!   top-level `id` and whether it is a request or a response
//!   ([`LineHead`]), so that the caller can still answer or fail the one
//!   request it belongs to. An `"id"` inside a nested value or a string is
//!   never taken for it, and the id may come last.
//! * At end of input, a final non-blank line without `\n` is still returned.
//!
//! This module does not parse JSON (beyond that scan of skipped lines),
//! check that a line is valid UTF-8, or decide what to do with an over-long
//! message: that is up to the caller.

mod head;

use head::Skim;
pub use head::{LineHead, LineKind};

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The default limit on the size of one message, in bytes (64 MiB).
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 64 * 1024 * 1024;

/// Size of the read buffer of a [`LineReader`].
const READ_BUFFER_SIZE: usize = 64 * 1024;

/// A line buffer whose capacity grows beyond this is released after use.
const SHRINK_THRESHOLD: usize = 1024 * 1024;

/// Size of the write buffer of a [`LineWriter`]; lines at least this large
/// bypass the buffer.
const WRITE_BUFFER_SIZE: usize = 64 * 1024;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One unit of input produced by [`LineReader::next_frame`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A non-blank line, without its line ending and without a leading
    /// byte order mark. The bytes are not checked to be UTF-8 or JSON.
    Message(&'a [u8]),
    /// A line longer than the reader's maximum message size. Its content was
    /// discarded.
    TooLong {
        /// The full length of the line in bytes, without the `\n`.
        size: usize,
        /// The line's top-level `id` and kind, as far as the scan of its
        /// discarded bytes could tell.
        head: LineHead,
    },
}

/// The outcome of one step of [`LineReader::next_frame`].
enum Found {
    /// A complete raw line at `from..to`, in the spill buffer if `in_spill`,
    /// else in the read buffer (no copy needed).
    Line {
        in_spill: bool,
        from: usize,
        to: usize,
    },
    /// An over-long line of this many bytes.
    TooLong(usize, LineHead),
    /// End of input, nothing left.
    Eof,
}

/// Splits an [`AsyncRead`] into newline-delimited frames.
///
/// Lines that fit in the read buffer are returned as slices of it, without
/// copying; longer lines are gathered in a separate buffer that is released
/// again after a very large line.
///
/// [`next_frame`](Self::next_frame) is cancel safe: if its future is dropped
/// before completion, no input is lost and the next call continues where the
/// previous one stopped.
pub struct LineReader<R> {
    reader: R,
    max_message_size: usize,
    /// Read buffer; `buf[start..end]` holds unconsumed input.
    buf: Box<[u8]>,
    start: usize,
    /// `buf[start..scanned]` is known to contain no `\n`.
    scanned: usize,
    end: usize,
    /// The beginning of the current line, when it did not fit in `buf`.
    spill: Vec<u8>,
    /// The last frame returned borrows `spill`; clear it on the next call.
    spill_returned: bool,
    /// Set while skipping an over-long line: the number of bytes seen so
    /// far, and the scan of them.
    discarding: Option<(usize, Skim)>,
    eof: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// Creates a reader that reports lines longer than `max_message_size`
    /// bytes as [`Frame::TooLong`].
    pub fn new(reader: R, max_message_size: usize) -> Self {
        Self::with_buffer_size(reader, max_message_size, READ_BUFFER_SIZE)
    }

    /// Like [`new`](Self::new), with a read buffer of `buffer_size` bytes
    /// (at least 1) instead of the default 64 KiB. Lines longer than the
    /// buffer still work; they are just copied once more.
    pub fn with_buffer_size(reader: R, max_message_size: usize, buffer_size: usize) -> Self {
        Self {
            reader,
            max_message_size,
            buf: vec![0; buffer_size.max(1)].into_boxed_slice(),
            start: 0,
            scanned: 0,
            end: 0,
            spill: Vec::new(),
            spill_returned: false,
            discarding: None,
            eof: false,
        }
    }

    /// Next frame; `Ok(None)` at EOF. Never returns a blank line.
    pub async fn next_frame(&mut self) -> io::Result<Option<Frame<'_>>> {
        if self.spill_returned {
            self.spill_returned = false;
            self.clear_spill();
        }
        loop {
            let (in_spill, from, to) = match self.next_line().await? {
                Found::Eof => return Ok(None),
                Found::TooLong(size, head) => return Ok(Some(Frame::TooLong { size, head })),
                Found::Line { in_spill, from, to } => (in_spill, from, to),
            };
            match content_range(&self.source(in_spill)[from..to]) {
                Some((start, end)) => {
                    self.spill_returned = in_spill;
                    let line = &self.source(in_spill)[from + start..from + end];
                    return Ok(Some(Frame::Message(line)));
                }
                None if in_spill => self.clear_spill(),
                None => {}
            }
        }
    }

    fn source(&self, in_spill: bool) -> &[u8] {
        if in_spill { &self.spill } else { &self.buf }
    }

    /// Finds the next raw line (blank or not), reading as needed.
    async fn next_line(&mut self) -> io::Result<Found> {
        loop {
            if let Some(found) = self.take_buffered_line() {
                return Ok(found);
            }
            if self.eof {
                return Ok(self.take_final_line());
            }
            self.make_room();
            let n = self.reader.read(&mut self.buf[self.end..]).await?;
            if n == 0 {
                self.eof = true;
            } else {
                self.end += n;
            }
        }
    }

    /// Returns the line ending at the next `\n` in the read buffer, if any.
    /// Otherwise marks the buffer as scanned and enforces the size limit on
    /// the partial line.
    fn take_buffered_line(&mut self) -> Option<Found> {
        let Some(offset) = memchr::memchr(b'\n', &self.buf[self.scanned..self.end]) else {
            self.scanned = self.end;
            self.check_partial_size();
            return None;
        };
        let newline = self.scanned + offset;
        let (from, to) = (self.start, newline);
        self.consume_to(newline + 1);
        let segment_len = to - from;
        if let Some((seen, mut skim)) = self.discarding.take() {
            skim.feed(&self.buf[from..to]);
            return Some(Found::TooLong(seen + segment_len, skim.finish()));
        }
        let size = self.spill.len() + segment_len;
        if size > self.max_message_size {
            let head = self.skim(from, to).finish();
            self.clear_spill();
            return Some(Found::TooLong(size, head));
        }
        if self.spill.is_empty() {
            return Some(Found::Line {
                in_spill: false,
                from,
                to,
            });
        }
        self.spill.extend_from_slice(&self.buf[from..to]);
        Some(self.spill_line())
    }

    /// Called at end of input: returns whatever unterminated line is left.
    fn take_final_line(&mut self) -> Found {
        let (from, to) = (self.start, self.end);
        self.consume_to(to);
        let segment_len = to - from;
        if let Some((seen, mut skim)) = self.discarding.take() {
            skim.feed(&self.buf[from..to]);
            return Found::TooLong(seen + segment_len, skim.finish());
        }
        if segment_len == 0 && self.spill.is_empty() {
            return Found::Eof;
        }
        // The size limit was already enforced by `check_partial_size`.
        if self.spill.is_empty() {
            return Found::Line {
                in_spill: false,
                from,
                to,
            };
        }
        self.spill.extend_from_slice(&self.buf[from..to]);
        self.spill_line()
    }

    fn spill_line(&self) -> Found {
        Found::Line {
            in_spill: true,
            from: 0,
            to: self.spill.len(),
        }
    }

    /// Switches to discarding once the unterminated partial line exceeds the
    /// limit, so that an over-long line is never held in memory.
    fn check_partial_size(&mut self) {
        let pending = self.end - self.start;
        if let Some((seen, skim)) = self.discarding.as_mut() {
            *seen += pending;
            skim.feed(&self.buf[self.start..self.end]);
            self.consume_to(self.end);
            return;
        }
        let size = self.spill.len() + pending;
        if size > self.max_message_size {
            let skim = self.skim(self.start, self.end);
            self.discarding = Some((size, skim));
            self.clear_spill();
            self.consume_to(self.end);
        }
    }

    /// A scan of the line so far: the spill buffer, then `buf[from..to]`.
    fn skim(&self, from: usize, to: usize) -> Skim {
        let mut skim = Skim::new();
        skim.feed(&self.spill);
        skim.feed(&self.buf[from..to]);
        skim
    }

    /// Ensures there is free space at the end of the read buffer, moving a
    /// partial line to the front or into the spill buffer.
    fn make_room(&mut self) {
        if self.end < self.buf.len() {
            return;
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.scanned -= self.start;
            self.end -= self.start;
            self.start = 0;
        } else {
            // The whole buffer is one partial line: move it aside.
            self.spill.extend_from_slice(&self.buf[..self.end]);
            self.consume_to(self.end);
        }
    }

    /// Marks the read buffer as consumed up to `pos`.
    fn consume_to(&mut self, pos: usize) {
        if pos == self.end {
            self.start = 0;
            self.scanned = 0;
            self.end = 0;
        } else {
            self.start = pos;
            self.scanned = pos;
        }
    }

    fn clear_spill(&mut self) {
        self.spill.clear();
        if self.spill.capacity() > SHRINK_THRESHOLD {
            self.spill = Vec::new();
        }
    }
}

/// The part of a raw line that is the message, or `None` for a blank line:
/// strips one trailing `\r` and a leading byte order mark.
fn content_range(line: &[u8]) -> Option<(usize, usize)> {
    let mut to = line.len();
    if line.last() == Some(&b'\r') {
        to -= 1;
    }
    let from = if line[..to].starts_with(BOM) {
        BOM.len()
    } else {
        0
    };
    if line[from..to].iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        Some((from, to))
    }
}

/// Writes newline-terminated lines to an [`AsyncWrite`], with buffering.
///
/// Small lines are gathered in a buffer that is written out when it fills
/// up or on [`flush`](Self::flush); lines of 64 KiB or more are written
/// directly. Call `flush` after each batch of messages, or they may sit in
/// the buffer.
///
/// The methods are not cancel safe: a dropped write may leave a partial line
/// on the wire. Drive the writer from a single task.
pub struct LineWriter<W> {
    writer: W,
    buf: Vec<u8>,
}

impl<W: AsyncWrite + Unpin> LineWriter<W> {
    /// Creates a writer with an empty buffer.
    pub fn new(writer: W) -> Self {
        Self {
            writer,
            buf: Vec::with_capacity(WRITE_BUFFER_SIZE),
        }
    }

    /// Buffers `line` plus b'\n' (line must not contain b'\n'); writes through when the buffer is large.
    ///
    /// Returns an [`io::ErrorKind::InvalidInput`] error, writing nothing, if
    /// `line` contains `\n`.
    pub async fn write_line(&mut self, line: &[u8]) -> io::Result<()> {
        if memchr::memchr(b'\n', line).is_some() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a line to write contains a newline byte",
            ));
        }
        if self.buf.len() + line.len() + 1 > WRITE_BUFFER_SIZE {
            self.write_buffer().await?;
        }
        if line.len() >= WRITE_BUFFER_SIZE {
            self.writer.write_all(line).await?;
        } else {
            self.buf.extend_from_slice(line);
        }
        self.buf.push(b'\n');
        Ok(())
    }

    /// Writes out everything buffered and flushes the underlying writer.
    pub async fn flush(&mut self) -> io::Result<()> {
        self.write_buffer().await?;
        self.writer.flush().await
    }

    async fn write_buffer(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.writer.write_all(&self.buf).await?;
            self.buf.clear();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{Frame, LineReader, SHRINK_THRESHOLD};

    #[tokio::test]
    async fn spill_buffer_is_released_after_a_large_line() {
        let mut data = vec![b'x'; 3 * SHRINK_THRESHOLD];
        data.extend_from_slice(b"\n{}\n");
        let mut reader = LineReader::new(&data[..], usize::MAX);
        let first = reader.next_frame().await.expect("read");
        assert!(matches!(first, Some(Frame::Message(line)) if line.len() == 3 * SHRINK_THRESHOLD));
        assert!(reader.spill.capacity() >= 3 * SHRINK_THRESHOLD);
        let second = reader.next_frame().await.expect("read");
        assert_eq!(second, Some(Frame::Message(b"{}")));
        assert!(reader.spill.capacity() <= SHRINK_THRESHOLD);
    }

    #[tokio::test]
    async fn spill_buffer_is_released_after_an_over_long_line() {
        let mut data = vec![b'x'; 3 * SHRINK_THRESHOLD];
        data.extend_from_slice(b"\n");
        let mut reader = LineReader::new(&data[..], 2 * SHRINK_THRESHOLD);
        let first = reader.next_frame().await.expect("read");
        assert!(matches!(
            first,
            Some(Frame::TooLong { size, .. }) if size == 3 * SHRINK_THRESHOLD
        ));
        assert!(reader.spill.capacity() <= SHRINK_THRESHOLD);
    }
}
