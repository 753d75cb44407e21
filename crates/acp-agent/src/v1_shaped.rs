//! A v1 client asking for a newer version than 1 is answered as before v2.
//!
//! v1's rule is that an agent answers the newest version it speaks at or
//! below the one asked for, so a v1 client asking for, say, 65535 got 1
//! from this agent. Since the agent also speaks v2, the version asked for
//! alone would now choose v2, whose `initialize` requires `info`, and such a
//! client would get -32602. An `initialize` without `info` is v1's shape: the
//! first line of the connection, when it is such an `initialize` asking for
//! version 2 or more, is handed on asking for version 1 (and answered 1, as
//! before). A v2 client always sends `info`, and is not touched. Every other
//! byte passes unchanged; a first line over 64 KiB is not looked at.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, ReadBuf};

/// The longest first line looked at.
const LIMIT: usize = 64 * 1024;

/// Reads `inner`, rewriting a v1-shaped `initialize` on its first line.
pub(crate) struct V1Shaped<R> {
    inner: R,
    state: State,
}

enum State {
    /// Gathering the first line.
    Sniff(Vec<u8>),
    /// Handing on what was gathered (rewritten), from the position.
    Drain(Vec<u8>, usize),
    /// Everything else: straight from `inner`.
    Pass,
}

impl<R> V1Shaped<R> {
    pub(crate) fn new(inner: R) -> Self {
        V1Shaped {
            inner,
            state: State::Sniff(Vec::new()),
        }
    }
}

/// `line` asking for version 1 if it is a v1-shaped `initialize` asking for
/// version 2 or more; otherwise `None`.
fn rewrite(line: &[u8]) -> Option<Vec<u8>> {
    let mut message: serde_json::Value = serde_json::from_slice(line).ok()?;
    if message.get("method")? != "initialize" {
        return None;
    }
    let params = message.get_mut("params")?.as_object_mut()?;
    let asked = params.get("protocolVersion")?.as_u64()?;
    if asked < 2 || params.contains_key("info") {
        return None;
    }
    params.insert("protocolVersion".into(), 1.into());
    serde_json::to_vec(&message).ok()
}

/// The gathered bytes with their first line (up to `newline`) rewritten if
/// it needs to be.
fn gathered(mut bytes: Vec<u8>, newline: usize) -> Vec<u8> {
    match rewrite(&bytes[..newline]) {
        Some(mut line) => {
            line.extend_from_slice(&bytes[newline..]);
            line
        }
        None => {
            bytes.shrink_to_fit();
            bytes
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for V1Shaped<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            match &mut this.state {
                State::Pass => return Pin::new(&mut this.inner).poll_read(cx, out),
                State::Drain(bytes, pos) => {
                    let n = out.remaining().min(bytes.len() - *pos);
                    out.put_slice(&bytes[*pos..*pos + n]);
                    *pos += n;
                    if *pos == bytes.len() {
                        this.state = State::Pass;
                    }
                    return Poll::Ready(Ok(()));
                }
                State::Sniff(bytes) => {
                    let mut chunk = [0u8; 8192];
                    let mut read = ReadBuf::new(&mut chunk);
                    ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
                    let got = read.filled();
                    let bytes_now = std::mem::take(bytes);
                    if got.is_empty() {
                        // End of input: hand on what there is, then the end.
                        this.state = if bytes_now.is_empty() {
                            State::Pass
                        } else {
                            State::Drain(bytes_now, 0)
                        };
                        continue;
                    }
                    let mut bytes_now = bytes_now;
                    bytes_now.extend_from_slice(got);
                    this.state = match bytes_now.iter().position(|&b| b == b'\n') {
                        Some(newline) => State::Drain(gathered(bytes_now, newline), 0),
                        None if bytes_now.len() > LIMIT => State::Drain(bytes_now, 0),
                        None => State::Sniff(bytes_now),
                    };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn through(input: &[u8]) -> String {
        let mut out = String::new();
        V1Shaped::new(input).read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn only_a_v1_shaped_initialize_asking_for_more_is_rewritten() {
        let v1 = "{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"initialize\",\"params\":{\"clientCapabilities\":{},\"protocolVersion\":65535}}\n{\"x\":1}\n";
        assert_eq!(
            through(v1.as_bytes()).await,
            "{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"initialize\",\"params\":{\"clientCapabilities\":{},\"protocolVersion\":1}}\n{\"x\":1}\n"
        );
        for same in [
            // A v2 client (it sends `info`).
            "{\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":2,\"info\":{}}}\n",
            // Asking for 1.
            "{\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n",
            // Not initialize, not JSON, no line end.
            "{\"id\":1,\"method\":\"session/new\",\"params\":{\"protocolVersion\":3}}\n",
            "not json\n{\"method\":\"initialize\",\"params\":{\"protocolVersion\":3}}\n",
            "{\"method\":\"initialize\",\"params\":{\"protocolVersion\":3}}",
            "",
        ] {
            assert_eq!(through(same.as_bytes()).await, same);
        }
    }
}
