//! Watching the agent's output for what the connection drops without
//! telling anyone: lines over the size limit ([`LineWatch`]) and
//! `session/update` notifications that do not decode
//! ([`malformed_update`]).
//!
//! The connection skips a line over its limit. When that line was an answer
//! or a request, one side would wait for it forever, so `acp` stops the run
//! instead. A malformed `session/update` is only dropped: the turn goes on,
//! and `acp` says that something was left out.

use acp::schema::SessionNotification;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::watch;

/// A reader that passes bytes through and raises a flag once a line grows
/// past `limit` bytes (newline not counted, as the connection counts).
pub struct LineWatch<R> {
    inner: R,
    limit: usize,
    /// Length of the line being read so far.
    current: usize,
    overlong: watch::Sender<bool>,
}

impl<R> LineWatch<R> {
    /// Watches `inner`; `overlong` is set to true at the first line over
    /// `limit`.
    pub fn new(inner: R, limit: usize, overlong: watch::Sender<bool>) -> Self {
        LineWatch {
            inner,
            limit,
            current: 0,
            overlong,
        }
    }

    fn check(&self) {
        if self.current > self.limit && !*self.overlong.borrow() {
            self.overlong.send_replace(true);
        }
    }

    /// Accounts for bytes just read.
    fn scan(&mut self, bytes: &[u8]) {
        let mut start = 0;
        for newline in memchr::memchr_iter(b'\n', bytes) {
            self.current += newline - start;
            self.check();
            self.current = 0;
            start = newline + 1;
        }
        self.current += bytes.len() - start;
        self.check();
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineWatch<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        this.scan(&buf.filled()[before..]);
        Poll::Ready(Ok(()))
    }
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
}

/// If `line` is a `session/update` notification whose params do not
/// decode, why not. Anything else (other messages, lines that are not
/// JSON) is `None`: the connection reports those itself.
pub fn malformed_update(line: &[u8]) -> Option<String> {
    memchr::memmem::find(line, b"session/update")?;
    let envelope: Envelope<'_> = serde_json::from_slice(line).ok()?;
    if envelope.id.is_some() || envelope.method.as_deref() != Some("session/update") {
        return None;
    }
    let params = envelope.params.map_or("null", |p| p.get());
    acp::schema::decode::<SessionNotification>(params)
        .err()
        .map(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[test]
    fn finds_malformed_updates_only() {
        let good = br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#;
        assert_eq!(malformed_update(good), None);
        let unknown = br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"_new_kind"}}}"#;
        assert_eq!(malformed_update(unknown), None);
        let bad = br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":42}}}"#;
        let why = malformed_update(bad).expect("malformed");
        assert!(why.starts_with("update.content"), "{why}");
        let no_session = br#"{"jsonrpc":"2.0","method":"session/update","params":{"update":{}}}"#;
        assert!(malformed_update(no_session).is_some());
        // A request or answer that mentions the method is not a notification.
        let request = br#"{"jsonrpc":"2.0","id":1,"method":"session/update","params":{}}"#;
        assert_eq!(malformed_update(request), None);
        assert_eq!(malformed_update(b"session/update is not json"), None);
    }

    #[tokio::test]
    async fn flags_the_first_line_over_the_limit() {
        let (tx, rx) = watch::channel(false);
        let data = b"12345\n123456\n".to_vec();
        let mut reader = LineWatch::new(&data[..], 6, tx);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, data, "bytes pass through unchanged");
        assert!(!*rx.borrow(), "6 bytes are within a limit of 6");

        let (tx, rx) = watch::channel(false);
        // Read in small pieces, so the long line spans reads.
        let data = b"ab\n1234567\nc\n".to_vec();
        let mut reader = LineWatch::new(&data[..], 6, tx);
        let mut piece = [0u8; 2];
        let mut seen = Vec::new();
        loop {
            let n = reader.read(&mut piece).await.unwrap();
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&piece[..n]);
            if *rx.borrow() {
                break;
            }
        }
        assert!(*rx.borrow());
        assert_eq!(
            seen, b"ab\n1234567",
            "flagged as soon as the line passed 6 bytes"
        );
    }
}
