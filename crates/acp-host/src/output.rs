//! A terminal's captured output: the most recent bytes up to a limit, cut
//! only at UTF-8 character boundaries.

/// Captured output with a byte limit; the oldest bytes go first.
#[derive(Debug)]
pub struct OutputBuffer {
    /// Bytes kept; those before `head` were dropped but not yet compacted.
    bytes: Vec<u8>,
    head: usize,
    limit: usize,
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
    pub fn new(limit: usize) -> Self {
        OutputBuffer {
            bytes: Vec::new(),
            head: 0,
            limit,
            truncated: false,
            total: 0,
        }
    }

    fn kept(&self) -> &[u8] {
        &self.bytes[self.head..]
    }

    /// Appends `data`, dropping the oldest bytes beyond the limit. The kept
    /// output never starts inside a UTF-8 character.
    pub fn push(&mut self, data: &[u8]) {
        self.bytes.extend_from_slice(data);
        self.total += data.len();
        if self.bytes.len() - self.head > self.limit {
            let mut cut = self.bytes.len() - self.limit;
            while cut < self.bytes.len() && is_continuation(self.bytes[cut]) {
                cut += 1;
            }
            self.head = cut;
            self.truncated = true;
        }
        // Compact now and then, so a long stream costs O(1) per byte.
        if self.head > 64 * 1024 && self.head > self.bytes.len() / 2 {
            self.bytes.drain(..self.head);
            self.head = 0;
        }
    }

    /// The output as text and whether anything was dropped, with at most
    /// `budget` bytes once escaped in JSON (older output is left out to fit,
    /// and then counts as truncated). An incomplete character at the end
    /// (the command is still writing it) is left out; invalid bytes
    /// elsewhere become U+FFFD.
    pub fn snapshot(&self, budget: usize) -> (String, bool) {
        let kept = self.kept();
        let complete = complete_prefix(kept);
        let text = String::from_utf8_lossy(&kept[..complete]);
        let mut start = 0;
        let mut size = crate::read::json_len(&text);
        let bytes = text.as_bytes();
        while size > budget && start < bytes.len() {
            let mut end = start + 1;
            while end < bytes.len() && is_continuation(bytes[end]) {
                end += 1;
            }
            size -= crate::read::json_len(&text[start..end]);
            start = end;
        }
        (text[start..].to_owned(), self.truncated || start > 0)
    }

    /// The output after offset `from` (counted in bytes ever pushed): only
    /// complete lines, unless `all`. Output dropped by the byte limit is
    /// skipped.
    pub fn since(&self, from: usize, all: bool) -> OutputSince {
        let kept = self.kept();
        let start = self.total - kept.len();
        let skipped = from < start;
        let from = from.max(start).min(self.total);
        let rest = &kept[from - start..];
        let end = if all {
            complete_prefix(rest)
        } else {
            rest.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
        };
        OutputSince {
            text: String::from_utf8_lossy(&rest[..end]).into_owned(),
            next: from + end,
            skipped,
        }
    }
}

/// The length of `bytes` without an incomplete character at its end.
fn complete_prefix(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        _ => bytes.len(),
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANY: usize = usize::MAX;

    #[test]
    fn truncates_from_the_start_on_a_char_boundary() {
        let mut buf = OutputBuffer::new(4);
        buf.push("ab".as_bytes());
        assert_eq!(buf.snapshot(ANY), ("ab".to_owned(), false));
        // "ab€é" is 7 bytes ("€" 3, "é" 2); the last 4 would start inside
        // "€", so only "é" is kept.
        buf.push("€é".as_bytes());
        assert_eq!(buf.snapshot(ANY), ("é".to_owned(), true));
        buf.push(b"xy");
        assert_eq!(buf.snapshot(ANY), ("éxy".to_owned(), true));
        buf.push(b"z");
        assert_eq!(buf.snapshot(ANY), ("xyz".to_owned(), true));
    }

    #[test]
    fn a_long_stream_keeps_the_tail() {
        let mut buf = OutputBuffer::new(1000);
        for i in 0..100_000u32 {
            buf.push(format!("{i:07}\n").as_bytes());
        }
        let (text, truncated) = buf.snapshot(ANY);
        assert!(truncated);
        assert_eq!(text.len(), 1000);
        assert!(text.ends_with("0099999\n"));
    }

    #[test]
    fn snapshot_fits_the_message_budget() {
        let mut buf = OutputBuffer::new(100);
        buf.push(b"ab\"\x01c");
        // a b \" \u0001 c = 1 + 1 + 2 + 6 + 1.
        assert_eq!(buf.snapshot(11), ("ab\"\x01c".to_owned(), false));
        assert_eq!(buf.snapshot(10), ("b\"\x01c".to_owned(), true));
        assert_eq!(buf.snapshot(7), ("\x01c".to_owned(), true));
        assert_eq!(buf.snapshot(6), ("c".to_owned(), true));
    }

    #[test]
    fn since_reads_complete_lines_and_skips_dropped_output() {
        let mut buf = OutputBuffer::new(8);
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
        let mut buf = OutputBuffer::new(ANY);
        let euro = "€".as_bytes();
        buf.push(b"a");
        buf.push(&euro[..2]);
        assert_eq!(buf.snapshot(ANY), ("a".to_owned(), false));
        buf.push(&euro[2..]);
        assert_eq!(buf.snapshot(ANY), ("a€".to_owned(), false));
    }
}
