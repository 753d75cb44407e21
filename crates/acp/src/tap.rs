//! Observing the raw traffic of a connection.
//!
//! A tap sees every line read or written, with its direction and a timestamp,
//! exactly as it crossed the transport (without the newline). It is meant for
//! debugging views and traffic recorders. The callback runs on the connection's
//! reader or writer task, so it must be quick: copy what you need and return.

use std::sync::Arc;
use std::time::SystemTime;

/// Which way a line travelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Read from the peer.
    Incoming,
    /// Written to the peer.
    Outgoing,
}

/// One line on the wire.
#[derive(Debug, Clone, Copy)]
pub struct TapEvent<'a> {
    /// Which way it went.
    pub direction: Direction,
    /// When it was read or written.
    pub at: SystemTime,
    /// The raw bytes, without the trailing newline. Usually UTF-8 JSON, but an
    /// incoming line may be anything the peer sent.
    pub line: &'a [u8],
}

impl TapEvent<'_> {
    /// The line as text (invalid UTF-8 replaced).
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.line)
    }
}

/// A callback that receives every line of a connection.
pub type Tap = Arc<dyn Fn(&TapEvent<'_>) + Send + Sync>;
