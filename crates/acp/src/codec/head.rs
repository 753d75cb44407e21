//! What an over-long line was, found while its bytes are discarded.
//!
//! [`Skim`] is fed the bytes of a line the reader does not keep, in pieces
//! as they pass, and remembers only what identifies the message: how many
//! top-level `id` members it has and the value of the one it wants (an
//! integer or a short string), and whether `method`, `result` or `error` are
//! among its top-level members. It tracks nesting and string/escape state,
//! so an `"id"` inside a nested object or inside a string is never taken for
//! the message's own. Its memory is bounded: one short capture buffer and a
//! bit per level of nesting, up to [`MAX_DEPTH`] levels (serde_json's own
//! limit; a deeper line would not decode anyway).
//!
//! The result is trusted only when the whole line is one well-formed-looking
//! top-level object; anything else (a batch, trailing bytes, unbalanced
//! brackets, a duplicate `id`) gives [`LineHead::default`], an unknown line.

use acp_schema::RequestId;

/// The most nesting levels the scan follows.
const MAX_DEPTH: u32 = 128;

/// The longest raw (still escaped) key or id the scan captures, in bytes,
/// quotes included; a longer one is not recognised.
const MAX_CAPTURE: usize = 512;

/// What the reader could tell about a line it skipped for being over the
/// size limit (see [`Frame::TooLong`](super::Frame::TooLong)).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct LineHead {
    /// The top-level `id` member, when there is exactly one and it is an
    /// integer or a string of at most a few hundred bytes.
    pub id: Option<RequestId>,
    /// What kind of message the line was, as far as its top-level members
    /// tell.
    pub kind: LineKind,
}

/// The kind of a skipped line (see [`LineHead`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum LineKind {
    /// Not one JSON object whose top-level members could be told apart.
    #[default]
    Unknown,
    /// `method` and `id`, no `result` or `error`.
    Request,
    /// `method`, no `id`, `result` or `error`.
    Notification,
    /// `result` or `error` and `id`, no `method`.
    Response,
}

/// Which top-level member a value belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Id,
    Method,
    Outcome,
    Other,
}

/// What the scan expects next inside the top-level object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Key,
    Colon,
    Value,
    /// Inside a number or literal that is a top-level member's value.
    Scalar,
    CommaOrEnd,
}

/// The streaming scan of one skipped line; see the module docs.
#[derive(Debug)]
pub(super) struct Skim {
    /// Open containers; bit `n` of `arrays` is set when level `n + 1` is an array.
    depth: u32,
    arrays: u128,
    started: bool,
    closed: bool,
    broken: bool,
    in_string: bool,
    escaped: bool,
    expect: Expect,
    key: Key,
    /// The raw key or id being captured, when one is.
    capture: Option<Vec<u8>>,
    ids: u32,
    id: Option<RequestId>,
    method: bool,
    outcome: bool,
}

impl Skim {
    pub(super) fn new() -> Skim {
        Skim {
            depth: 0,
            arrays: 0,
            started: false,
            closed: false,
            broken: false,
            in_string: false,
            escaped: false,
            expect: Expect::Key,
            key: Key::Other,
            capture: None,
            ids: 0,
            id: None,
            method: false,
            outcome: false,
        }
    }

    /// Takes the next bytes of the line.
    pub(super) fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && !self.broken {
            let used = if self.in_string {
                self.string_bytes(bytes)
            } else {
                self.structural(bytes[0]);
                1
            };
            bytes = &bytes[used..];
        }
    }

    /// What the line was, once all of it was fed.
    pub(super) fn finish(mut self) -> LineHead {
        if self.expect == Expect::Scalar {
            // Only a `}` ends the object, so a scalar cannot be last.
            self.broken = true;
        }
        if self.broken || !self.closed || self.in_string {
            return LineHead::default();
        }
        let kind = match (self.method, self.outcome, self.ids) {
            (true, false, 1) => LineKind::Request,
            (true, false, 0) => LineKind::Notification,
            (false, true, 1) => LineKind::Response,
            _ => LineKind::Unknown,
        };
        let id = match kind {
            LineKind::Request | LineKind::Response => self.id,
            _ => None,
        };
        LineHead { id, kind }
    }

    /// Consumes bytes inside a string; returns how many.
    fn string_bytes(&mut self, bytes: &[u8]) -> usize {
        if self.capture.is_some() {
            // Short: byte by byte, keeping each.
            for (i, &b) in bytes.iter().enumerate() {
                let Some(capture) = self.capture.as_mut() else {
                    return i;
                };
                capture.push(b);
                let full = capture.len() > MAX_CAPTURE;
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.end_string();
                    return i + 1;
                }
                if full {
                    // Too long to be a key we know or an id we use.
                    self.capture = None;
                    return i + 1;
                }
            }
            return bytes.len();
        }
        if self.escaped {
            self.escaped = false;
            return 1;
        }
        match memchr::memchr2(b'"', b'\\', bytes) {
            None => bytes.len(),
            Some(at) if bytes[at] == b'\\' => {
                self.escaped = true;
                at + 1
            }
            Some(at) => {
                self.end_string();
                at + 1
            }
        }
    }

    /// A string ended (its closing quote was consumed).
    fn end_string(&mut self) {
        self.in_string = false;
        if self.depth != 1 {
            return;
        }
        let raw = self.capture.take();
        match self.expect {
            Expect::Key => {
                self.key = match raw.as_deref().and_then(decode_string).as_deref() {
                    Some("id") => Key::Id,
                    Some("method") => Key::Method,
                    Some("result" | "error") => Key::Outcome,
                    _ => Key::Other,
                };
                self.expect = Expect::Colon;
            }
            Expect::Value => {
                if self.key == Key::Id {
                    self.id = raw.as_deref().and_then(decode_string).map(RequestId::Str);
                }
                self.expect = Expect::CommaOrEnd;
            }
            _ => self.broken = true,
        }
    }

    /// One byte outside any string.
    fn structural(&mut self, b: u8) {
        if self.expect == Expect::Scalar && self.depth == 1 {
            if is_scalar_byte(b) {
                if let Some(capture) = self.capture.as_mut() {
                    capture.push(b);
                    if capture.len() > MAX_CAPTURE {
                        self.capture = None;
                    }
                }
                return;
            }
            self.end_scalar();
        }
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => {}
            // A byte order mark before the message.
            0xEF | 0xBB | 0xBF if !self.started => {}
            b'"' => self.start_string(),
            b'{' | b'[' => self.open(b == b'['),
            b'}' | b']' => self.close(b == b']'),
            b',' => match self.depth {
                1 if self.expect == Expect::CommaOrEnd => self.expect = Expect::Key,
                0 | 1 => self.broken = true,
                _ => {}
            },
            b':' => match self.depth {
                1 if self.expect == Expect::Colon => self.expect = Expect::Value,
                0 | 1 => self.broken = true,
                _ => {}
            },
            _ => match self.depth {
                1 if self.expect == Expect::Value => {
                    self.member_starts();
                    self.expect = Expect::Scalar;
                    self.capture = (self.key == Key::Id).then(|| vec![b]);
                }
                0 | 1 => self.broken = true,
                _ => {}
            },
        }
    }

    fn start_string(&mut self) {
        match self.depth {
            0 => self.broken = true,
            1 => match self.expect {
                Expect::Key => self.capture = Some(vec![b'"']),
                Expect::Value => {
                    self.member_starts();
                    self.capture = (self.key == Key::Id).then(|| vec![b'"']);
                }
                _ => self.broken = true,
            },
            _ => {}
        }
        self.in_string = !self.broken;
    }

    fn open(&mut self, array: bool) {
        match self.depth {
            0 if self.started || array => {
                // A second value, or a batch: not handled.
                self.broken = true;
                return;
            }
            0 => {
                self.started = true;
                self.expect = Expect::Key;
            }
            1 if self.expect == Expect::Value => {
                self.member_starts();
                if self.key == Key::Id {
                    // An object or array is no usable id.
                    self.id = None;
                }
            }
            1 => {
                self.broken = true;
                return;
            }
            d if d >= MAX_DEPTH => {
                self.broken = true;
                return;
            }
            _ => {}
        }
        if array {
            self.arrays |= 1 << self.depth;
        } else {
            self.arrays &= !(1 << self.depth);
        }
        self.depth += 1;
    }

    fn close(&mut self, array: bool) {
        if self.depth == 0 {
            self.broken = true;
            return;
        }
        let opened_array = self.arrays & (1 << (self.depth - 1)) != 0;
        if opened_array != array {
            self.broken = true;
            return;
        }
        if self.depth == 1 && !matches!(self.expect, Expect::CommaOrEnd | Expect::Key) {
            self.broken = true;
            return;
        }
        self.depth -= 1;
        match self.depth {
            0 => self.closed = true,
            1 => self.expect = Expect::CommaOrEnd,
            _ => {}
        }
    }

    /// A top-level member's value starts.
    fn member_starts(&mut self) {
        match self.key {
            Key::Id => {
                self.ids += 1;
                self.id = None;
            }
            Key::Method => self.method = true,
            Key::Outcome => self.outcome = true,
            Key::Other => {}
        }
    }

    /// A number or literal value at the top level ended.
    fn end_scalar(&mut self) {
        self.expect = Expect::CommaOrEnd;
        if let Some(raw) = self.capture.take()
            && self.key == Key::Id
        {
            self.id = decode_integer(&raw).map(RequestId::Number);
        }
    }
}

fn is_scalar_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')
}

/// A raw JSON string, quotes included, decoded.
fn decode_string(raw: &[u8]) -> Option<String> {
    if raw.len() >= 2 && !raw.contains(&b'\\') {
        return std::str::from_utf8(&raw[1..raw.len() - 1])
            .ok()
            .map(str::to_owned);
    }
    serde_json::from_slice(raw).ok()
}

/// A raw JSON integer; anything else (a fraction, an exponent, a literal,
/// a leading zero or `+`) is not an id we sent.
fn decode_integer(raw: &[u8]) -> Option<i64> {
    let digits = raw.strip_prefix(b"-").unwrap_or(raw);
    let plain = !digits.is_empty()
        && digits.iter().all(u8::is_ascii_digit)
        && (digits.len() == 1 || digits[0] != b'0');
    if !plain {
        return None;
    }
    std::str::from_utf8(raw).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::{LineHead, LineKind, Skim};
    use acp_schema::RequestId;

    /// Scans `line` fed in pieces of `piece` bytes.
    fn scan(line: &str, piece: usize) -> LineHead {
        let mut skim = Skim::new();
        for chunk in line.as_bytes().chunks(piece) {
            skim.feed(chunk);
        }
        skim.finish()
    }

    fn head(line: &str) -> LineHead {
        let whole = scan(line, usize::MAX);
        for piece in [1, 2, 3, 7] {
            assert_eq!(scan(line, piece), whole, "pieces of {piece}: {line}");
        }
        whole
    }

    fn response(id: RequestId) -> LineHead {
        LineHead {
            id: Some(id),
            kind: LineKind::Response,
        }
    }

    #[test]
    fn finds_the_top_level_id_first_or_last() {
        let n = |n| response(RequestId::Number(n));
        assert_eq!(head(r#"{"jsonrpc":"2.0","id":7,"result":{"a":"x"}}"#), n(7));
        assert_eq!(head(r#"{"jsonrpc":"2.0","result":{"a":"x"},"id":7}"#), n(7));
        assert_eq!(head(r#" {"id" : -12 , "error":{"code":1}} "#), n(-12));
        assert_eq!(
            head("\u{feff}{\"result\":null,\"id\":\"a\\\"b\"}\r"),
            response(RequestId::Str("a\"b".into()))
        );
        assert_eq!(
            head(r#"{"method":"fs/x","id":3,"params":{}}"#),
            LineHead {
                id: Some(RequestId::Number(3)),
                kind: LineKind::Request
            }
        );
        assert_eq!(
            head(r#"{"method":"x","params":{"id":3}}"#).kind,
            LineKind::Notification
        );
        // An escaped key is still `id`.
        assert_eq!(head(r#"{"i\u0064":5,"result":1}"#), n(5));
    }

    #[test]
    fn never_takes_an_id_from_inside_a_value() {
        let unknown = LineHead::default();
        // Nested objects and arrays.
        assert_eq!(head(r#"{"result":{"id":4}}"#), unknown);
        assert_eq!(head(r#"{"result":[{"id":4}]}"#), unknown);
        // Strings that look like members, escaped quotes included.
        assert_eq!(head(r#"{"result":"\",\"id\":4,\"x\":\""}"#), unknown);
        assert_eq!(head(r#"{"result":"\\","x":"\"id\":4"}"#), unknown);
        // ... while the real one after them is found.
        assert_eq!(
            head(r#"{"result":{"id":4,"s":"\"id\":5}"},"id":6}"#),
            response(RequestId::Number(6))
        );
    }

    #[test]
    fn gives_up_on_anything_ambiguous() {
        for line in [
            r#"{"id":1,"id":2,"result":0}"#,
            r#"{"id":1.5,"result":0}"#,
            r#"{"id":01,"result":0}"#,
            r#"{"id":{"n":1},"result":0}"#,
            r#"{"id":1,"result":0}{}"#,
            r#"[{"id":1,"result":0}]"#,
            r#"{"id":1,"result":[0}}"#,
            r#"{"id":1,"result":0"#,
            r#"{"id":1,"result":"0}"#,
            r#"{"id":1,"result":0,"method":"m"}"#,
            r#"{"id":1}"#,
        ] {
            assert_eq!(head(line).id, None, "{line}");
        }
    }

    #[test]
    fn a_deep_line_is_unknown_and_a_long_id_is_not_kept() {
        let deep = format!(
            r#"{{"id":1,"result":{}{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_eq!(head(&deep), LineHead::default());
        let long = format!(r#"{{"id":"{}","result":0}}"#, "x".repeat(2000));
        assert_eq!(
            head(&long),
            LineHead {
                id: None,
                kind: LineKind::Response
            }
        );
    }
}
