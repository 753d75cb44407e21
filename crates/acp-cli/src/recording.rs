//! The record file of `acp record`, read by `acp trace` and `acp mock`.
//!
//! One JSON object per line, written as the session goes:
//!
//! ```text
//! {"acpRecord":1,"started":"2025-01-02T03:04:05.678901Z","agent":["my-agent","--flag"],"redacted":false,"recorder":"acp 0.1.0"}
//! {"t":0.000412,"from":"client","line":"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",…}"}
//! {"t":0.013377,"from":"agent","line":"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{…}}"}
//! {"t":0.020001,"from":"stderr","line":"agent: ready"}
//! {"t":0.020100,"from":"agent","base64":"/+wgVQ=="}
//! {"t":0.030000,"from":"client","eof":true}
//! {"t":0.031000,"exit":{"code":0}}
//! ```
//!
//! - The first line is the header: when the recording started (UTC), the
//!   agent's command line, and whether `--redact` was on.
//! - `t` is the time in seconds since the start, from a monotonic clock.
//! - `from` is `client` (what the editor sent the agent), `agent` (what the
//!   agent sent the editor) or `stderr` (the agent's standard error).
//! - `line` is the line exactly as it went over the pipe, without its `\n`
//!   (a `\r` before it stays), as a JSON string; a line that is not valid
//!   UTF-8 is `base64` instead. `"newline":false` marks a last line that
//!   ended without a newline. A line longer than [`MAX_RECORDED_LINE`] is
//!   recorded by its first bytes, with `"truncated":LEN`, its full length.
//!   `"redacted":true` marks a line `--redact` changed.
//! - `eof` says that side closed its end; `exit` how the agent ended
//!   (`{"code":N}` or `{"signal":N}`).
//!
//! Reading is tolerant: a last line cut off by a crash is left out with a
//! warning, and so is any line that is not a record.

use crate::exit::Failure;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::Value;
use std::path::Path;

/// The longest line recorded in full: the runtime's own message size limit.
/// A longer line still passes through the proxy unchanged.
pub const MAX_RECORDED_LINE: usize = 64 * 1024 * 1024;

/// The format version written in the header.
pub const VERSION: u64 = 1;

/// Which stream a record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The editor (client) to the agent.
    Client,
    /// The agent to the editor.
    Agent,
    /// The agent's standard error.
    Stderr,
}

impl Source {
    /// The spelling in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Client => "client",
            Source::Agent => "agent",
            Source::Stderr => "stderr",
        }
    }

    fn parse(text: &str) -> Option<Source> {
        [Source::Client, Source::Agent, Source::Stderr]
            .into_iter()
            .find(|f| f.as_str() == text)
    }
}

/// How the agent ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Exit {
    /// It exited with this status.
    Code(i32),
    /// It was killed by this signal.
    Signal(i32),
}

/// The header: the first line of a record file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Header {
    /// When the recording started, RFC 3339 in UTC.
    pub started: String,
    /// The agent's command line.
    pub agent: Vec<String>,
    /// Whether `--redact` was on.
    pub redacted: bool,
}

/// One line of the session, as read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Seconds since the start.
    pub t: f64,
    /// Which stream.
    pub from: Source,
    /// The bytes of the line, without its newline (the first
    /// [`MAX_RECORDED_LINE`] bytes when it was longer).
    pub bytes: Vec<u8>,
    /// Whether a newline ended it.
    pub newline: bool,
    /// The full length when only the start was recorded.
    pub truncated: Option<u64>,
    /// Whether `--redact` changed it.
    pub redacted: bool,
}

impl Line {
    /// The line as text, when it is valid UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }

    /// The bytes as they went over the pipe, newline included.
    pub fn wire_bytes(&self) -> Vec<u8> {
        let mut bytes = self.bytes.clone();
        if self.newline {
            bytes.push(b'\n');
        }
        bytes
    }
}

/// One record after the header.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// A line of one of the three streams.
    Line(Line),
    /// That side closed its end.
    Eof {
        /// Seconds since the start.
        t: f64,
        /// Which side.
        from: Source,
    },
    /// The agent ended.
    Exit {
        /// Seconds since the start.
        t: f64,
        /// How.
        exit: Exit,
    },
}

impl Record {
    /// The record's time, in seconds since the start.
    pub fn t(&self) -> f64 {
        match self {
            Record::Line(line) => line.t,
            Record::Eof { t, .. } | Record::Exit { t, .. } => *t,
        }
    }
}

/// A record file read back.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// The header (empty when the file had none).
    pub header: Header,
    /// The records in file order, each with its line number in the file.
    pub records: Vec<(usize, Record)>,
    /// What was left out, and why.
    pub warnings: Vec<String>,
}

impl Recording {
    /// Reads a record file.
    pub fn read(path: &Path) -> Result<Recording, Failure> {
        let bytes = std::fs::read(path)
            .map_err(|e| Failure::usage(format!("cannot read {}: {e}", path.display())))?;
        Recording::parse(&bytes)
            .map_err(|why| Failure::usage(format!("{} is not a recording: {why}", path.display())))
    }

    /// Parses the bytes of a record file. Fails only when nothing in it
    /// looks like a recording.
    pub fn parse(bytes: &[u8]) -> Result<Recording, String> {
        let mut recording = Recording::default();
        let mut saw_header = false;
        let torn = !bytes.is_empty() && !bytes.ends_with(b"\n");
        let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        let last = lines
            .len()
            .saturating_sub(if bytes.ends_with(b"\n") { 2 } else { 1 });
        for (index, raw) in lines.iter().enumerate() {
            let number = index + 1;
            if raw.is_empty() {
                continue;
            }
            let parsed = serde_json::from_slice::<Value>(raw)
                .map_err(|e| e.to_string())
                .and_then(|value| decode(&value));
            match parsed {
                Ok(Entry::Header(header)) if !saw_header && recording.records.is_empty() => {
                    recording.header = header;
                    saw_header = true;
                }
                Ok(Entry::Header(_)) => recording
                    .warnings
                    .push(format!("line {number}: a second header; left out")),
                Ok(Entry::Record(record)) => recording.records.push((number, record)),
                Err(_) if torn && index == last => recording.warnings.push(format!(
                    "line {number} is incomplete (the recording was cut off); left out"
                )),
                Err(why) => recording
                    .warnings
                    .push(format!("line {number} is not a record ({why}); left out")),
            }
        }
        if !saw_header && recording.records.is_empty() {
            return Err(recording
                .warnings
                .first()
                .cloned()
                .unwrap_or_else(|| "the file is empty".to_owned()));
        }
        if !saw_header {
            recording
                .warnings
                .insert(0, "the file has no header line".to_owned());
        }
        Ok(recording)
    }

    /// The lines of the session, in order (without EOF and exit records).
    pub fn lines(&self) -> impl Iterator<Item = (usize, &Line)> {
        self.records.iter().filter_map(|(n, r)| match r {
            Record::Line(line) => Some((*n, line)),
            _ => None,
        })
    }

    /// How the agent ended, if the recording says.
    pub fn exit(&self) -> Option<(f64, Exit)> {
        self.records.iter().find_map(|(_, r)| match r {
            Record::Exit { t, exit } => Some((*t, *exit)),
            _ => None,
        })
    }
}

/// One line of a record file.
#[derive(Debug, Clone)]
pub enum Entry {
    /// The header.
    Header(Header),
    /// A record.
    Record(Record),
}

/// Reads one line of a record file on its own (`acp watch` reads a
/// recording as it is made).
pub fn parse_line(raw: &[u8]) -> Result<Entry, String> {
    let value = serde_json::from_slice::<Value>(raw).map_err(|e| e.to_string())?;
    decode(&value)
}

fn decode(value: &Value) -> Result<Entry, String> {
    let object = value.as_object().ok_or("not a JSON object")?;
    if object.contains_key("acpRecord") {
        let strings = |key: &str| -> Vec<String> {
            object
                .get(key)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        return Ok(Entry::Header(Header {
            started: object
                .get("started")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            agent: strings("agent"),
            redacted: object.get("redacted").and_then(Value::as_bool) == Some(true),
        }));
    }
    let t = object
        .get("t")
        .and_then(Value::as_f64)
        .ok_or("no time \"t\"")?;
    if let Some(exit) = object.get("exit") {
        let number = |key: &str| exit.get(key).and_then(Value::as_i64).map(|n| n as i32);
        let exit = match (number("code"), number("signal")) {
            (Some(code), _) => Exit::Code(code),
            (None, Some(signal)) => Exit::Signal(signal),
            _ => return Err("an exit record without code or signal".into()),
        };
        return Ok(Entry::Record(Record::Exit { t, exit }));
    }
    let from = object
        .get("from")
        .and_then(Value::as_str)
        .and_then(Source::parse)
        .ok_or("no \"from\" (client, agent or stderr)")?;
    if object.get("eof").and_then(Value::as_bool) == Some(true) {
        return Ok(Entry::Record(Record::Eof { t, from }));
    }
    let bytes = match (object.get("line"), object.get("base64")) {
        (Some(Value::String(text)), _) => text.clone().into_bytes(),
        (_, Some(Value::String(encoded))) => BASE64
            .decode(encoded)
            .map_err(|e| format!("bad base64: {e}"))?,
        _ => return Err("no \"line\" or \"base64\"".into()),
    };
    Ok(Entry::Record(Record::Line(Line {
        t,
        from,
        bytes,
        newline: object.get("newline").and_then(Value::as_bool) != Some(false),
        truncated: object.get("truncated").and_then(Value::as_u64),
        redacted: object.get("redacted").and_then(Value::as_bool) == Some(true),
    })))
}

// ---------------------------------------------------------------------------
// Writing.

/// Appends the header line to `out`.
pub fn write_header(out: &mut Vec<u8>, header: &Header) {
    let value = serde_json::json!({
        "acpRecord": VERSION,
        "started": header.started,
        "agent": header.agent,
        "redacted": header.redacted,
        "recorder": concat!("acp ", env!("CARGO_PKG_VERSION")),
    });
    out.extend_from_slice(value.to_string().as_bytes());
    out.push(b'\n');
}

fn write_time(out: &mut Vec<u8>, t: f64) {
    use std::io::Write as _;
    // Integers print much faster than a float with a precision.
    let micros = (t.max(0.0) * 1e6).round() as u64;
    let _ = write!(
        out,
        "{{\"t\":{}.{:06}",
        micros / 1_000_000,
        micros % 1_000_000
    );
}

/// Appends the record of one line to `out`. `bytes` is what was recorded
/// (at most [`MAX_RECORDED_LINE`] bytes); `full_len` the line's real length.
pub fn write_line(
    out: &mut Vec<u8>,
    t: f64,
    from: Source,
    bytes: &[u8],
    newline: bool,
    full_len: u64,
    redacted: bool,
) {
    use std::io::Write as _;
    write_time(out, t);
    let _ = write!(out, ",\"from\":\"{}\"", from.as_str());
    match std::str::from_utf8(bytes) {
        Ok(text) => {
            out.extend_from_slice(b",\"line\":");
            let _ = serde_json::to_writer(&mut *out, text);
        }
        Err(_) => {
            out.extend_from_slice(b",\"base64\":\"");
            out.extend_from_slice(BASE64.encode(bytes).as_bytes());
            out.push(b'"');
        }
    }
    if !newline {
        out.extend_from_slice(b",\"newline\":false");
    }
    if full_len > bytes.len() as u64 {
        let _ = write!(out, ",\"truncated\":{full_len}");
    }
    if redacted {
        out.extend_from_slice(b",\"redacted\":true");
    }
    out.extend_from_slice(b"}\n");
}

/// Appends an end-of-file record to `out`.
pub fn write_eof(out: &mut Vec<u8>, t: f64, from: Source) {
    use std::io::Write as _;
    write_time(out, t);
    let _ = writeln!(out, ",\"from\":\"{}\",\"eof\":true}}", from.as_str());
}

/// Appends the exit record to `out`.
pub fn write_exit(out: &mut Vec<u8>, t: f64, exit: Exit) {
    use std::io::Write as _;
    write_time(out, t);
    let _ = match exit {
        Exit::Code(code) => writeln!(out, ",\"exit\":{{\"code\":{code}}}}}"),
        Exit::Signal(signal) => writeln!(out, ",\"exit\":{{\"signal\":{signal}}}}}"),
    };
}

/// `time` as RFC 3339 in UTC with microseconds: `2025-01-02T03:04:05.678901Z`.
pub fn rfc3339(time: std::time::SystemTime) -> String {
    let since = time
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let micros = since.subsec_micros() as i32;
    let at = i64::try_from(since.as_secs())
        .ok()
        .and_then(|secs| jiff::Timestamp::new(secs, micros * 1000).ok())
        .unwrap_or(jiff::Timestamp::MAX);
    at.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_rfc3339() {
        let at = |secs: u64, micros: u64| {
            rfc3339(
                std::time::UNIX_EPOCH
                    + std::time::Duration::from_secs(secs)
                    + std::time::Duration::from_micros(micros),
            )
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(at(951_782_400, 5), "2000-02-29T00:00:00.000005Z");
        assert_eq!(at(1_735_787_045, 678_901), "2025-01-02T03:04:05.678901Z");
    }

    #[test]
    fn every_kind_of_record_round_trips() {
        let mut out = Vec::new();
        let header = Header {
            started: "2025-01-02T03:04:05.000000Z".into(),
            agent: vec!["agent".into(), "--x".into()],
            redacted: true,
        };
        write_header(&mut out, &header);
        write_line(
            &mut out,
            0.5,
            Source::Client,
            b"{\"a\":\"\\\"\"}\r",
            true,
            11,
            false,
        );
        write_line(
            &mut out,
            1.0,
            Source::Agent,
            b"\xff\xfe bad",
            false,
            6,
            true,
        );
        write_line(&mut out, 1.5, Source::Stderr, b"head", true, 1000, false);
        write_eof(&mut out, 2.0, Source::Client);
        write_exit(&mut out, 2.5, Exit::Signal(9));
        let recording = Recording::parse(&out).unwrap();
        assert_eq!(recording.header, header);
        assert!(recording.warnings.is_empty(), "{:?}", recording.warnings);
        let records: Vec<Record> = recording.records.into_iter().map(|(_, r)| r).collect();
        assert_eq!(
            records,
            vec![
                Record::Line(Line {
                    t: 0.5,
                    from: Source::Client,
                    bytes: b"{\"a\":\"\\\"\"}\r".to_vec(),
                    newline: true,
                    truncated: None,
                    redacted: false,
                }),
                Record::Line(Line {
                    t: 1.0,
                    from: Source::Agent,
                    bytes: b"\xff\xfe bad".to_vec(),
                    newline: false,
                    truncated: None,
                    redacted: true,
                }),
                Record::Line(Line {
                    t: 1.5,
                    from: Source::Stderr,
                    bytes: b"head".to_vec(),
                    newline: true,
                    truncated: Some(1000),
                    redacted: false,
                }),
                Record::Eof {
                    t: 2.0,
                    from: Source::Client
                },
                Record::Exit {
                    t: 2.5,
                    exit: Exit::Signal(9)
                },
            ]
        );
    }

    #[test]
    fn a_torn_last_line_and_junk_are_left_out_with_warnings() {
        let mut out = Vec::new();
        write_header(&mut out, &Header::default());
        out.extend_from_slice(b"not json\n");
        write_line(&mut out, 0.1, Source::Agent, b"{}", true, 2, false);
        out.extend_from_slice(b"{\"t\":0.2,\"from\":\"ag");
        let recording = Recording::parse(&out).unwrap();
        assert_eq!(recording.records.len(), 1);
        assert_eq!(recording.warnings.len(), 2);
        assert!(recording.warnings[0].starts_with("line 2 is not a record"));
        assert_eq!(
            recording.warnings[1],
            "line 4 is incomplete (the recording was cut off); left out"
        );
        assert!(Recording::parse(b"").is_err());
        assert!(Recording::parse(b"hello\n").is_err());
    }
}
