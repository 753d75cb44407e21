//! The floor's JSON-RPC envelopes and line I/O: plain serde_json over
//! buffered std pipes, no runtime.
//!
//! The outgoing envelopes serialise exactly like the `acp` engine's (same
//! field order, same params types from `acp::schema`), so the floor moves the
//! same bytes. The incoming envelopes decode params straight into the same
//! typed structs the runtime hands to handlers, in one pass; the runtime
//! instead reads the envelope with borrowed raw params and decodes the params
//! in a second pass, which is part of the overhead measured.

use std::borrow::Cow;
use std::io::{self, BufRead, Write};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// An outgoing request.
#[derive(Serialize)]
pub struct OutRequest<'a, P> {
    /// Always `"2.0"`.
    pub jsonrpc: &'static str,
    /// The request id.
    pub id: i64,
    /// The method name.
    pub method: &'a str,
    /// The params.
    pub params: &'a P,
}

/// An outgoing notification.
#[derive(Serialize)]
pub struct OutNotification<'a, P> {
    /// Always `"2.0"`.
    pub jsonrpc: &'static str,
    /// The method name.
    pub method: &'a str,
    /// The params.
    pub params: &'a P,
}

/// An outgoing successful response.
#[derive(Serialize)]
pub struct OutResponse<'a, R> {
    /// Always `"2.0"`.
    pub jsonrpc: &'static str,
    /// The id of the request answered.
    pub id: i64,
    /// The result.
    pub result: &'a R,
}

/// An incoming request with typed params.
#[derive(Deserialize)]
pub struct InRequest<'a, P> {
    /// Must be `"2.0"`.
    #[serde(borrow)]
    pub jsonrpc: Cow<'a, str>,
    /// The request id.
    pub id: i64,
    /// The method name.
    #[serde(borrow)]
    pub method: Cow<'a, str>,
    /// The params.
    pub params: P,
}

/// An incoming notification with typed params.
#[derive(Deserialize)]
pub struct InNotification<'a, P> {
    /// Must be `"2.0"`.
    #[serde(borrow)]
    pub jsonrpc: Cow<'a, str>,
    /// The method name.
    #[serde(borrow)]
    pub method: Cow<'a, str>,
    /// The params.
    pub params: P,
}

/// An incoming successful response with a typed result.
#[derive(Deserialize)]
pub struct InResponse<'a, R> {
    /// Must be `"2.0"`.
    #[serde(borrow)]
    pub jsonrpc: Cow<'a, str>,
    /// The id of the request answered.
    pub id: i64,
    /// The result.
    pub result: R,
}

/// Writes `value` as one JSON line.
pub fn write_line<W: Write, T: Serialize>(out: &mut W, value: &T) -> io::Result<usize> {
    let mut counter = CountingWrite { inner: out, n: 0 };
    serde_json::to_writer(&mut counter, value)?;
    counter.write_all(b"\n")?;
    Ok(counter.n)
}

struct CountingWrite<'a, W> {
    inner: &'a mut W,
    n: usize,
}

impl<W: Write> Write for CountingWrite<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.n += n;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Reads lines into a reused buffer and parses them.
pub struct LineIn<R> {
    reader: R,
    line: Vec<u8>,
    /// Bytes read so far, newlines included.
    pub bytes: u64,
}

impl<R: BufRead> LineIn<R> {
    /// Wraps a buffered reader.
    pub fn new(reader: R) -> Self {
        LineIn {
            reader,
            line: Vec::new(),
            bytes: 0,
        }
    }

    /// Whether the next line is already buffered (no read would block).
    pub fn has_buffered(&self) -> bool
    where
        R: HasBuffer,
    {
        self.reader.buffered() > 0
    }

    /// Reads the next line and decodes it as `T`.
    pub fn next<'s, T: Deserialize<'s>>(&'s mut self) -> io::Result<T> {
        self.line.clear();
        let n = self.reader.read_until(b'\n', &mut self.line)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the peer closed the pipe",
            ));
        }
        self.bytes += n as u64;
        serde_json::from_slice(&self.line).map_err(io::Error::other)
    }

    /// Like [`next`](Self::next), for an owned result.
    pub fn next_owned<T: DeserializeOwned>(&mut self) -> io::Result<T> {
        self.next()
    }
}

/// A reader that can tell how many bytes it holds unread.
pub trait HasBuffer {
    /// Bytes buffered and not yet consumed.
    fn buffered(&self) -> usize;
}

impl<R: io::Read> HasBuffer for io::BufReader<R> {
    fn buffered(&self) -> usize {
        self.buffer().len()
    }
}

/// Checks an envelope's `jsonrpc` and `method`.
pub fn expect(jsonrpc: &str, method: &str, wanted: &str) -> io::Result<()> {
    if jsonrpc == "2.0" && method == wanted {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "expected a {wanted} message, got method {method:?} (jsonrpc {jsonrpc:?})"
        )))
    }
}
