//! The connection tier of errors.
//!
//! A peer's answer `{"error": {code, message, data}}` is the wire type
//! [`acp_schema::Error`]; everything that can go wrong when calling the peer is a
//! [`ConnectionError`], which carries the wire error as [`ConnectionError::Remote`].

use acp_schema::{DecodeError, Error};
use std::fmt;
use std::sync::Arc;

/// Why a call to the peer did not produce a result.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ConnectionError {
    /// The peer answered with an error object (its code is kept).
    Remote(Error),
    /// The connection closed (end of input or [`close`]) before the response
    /// arrived; every pending request fails with this at once. A connection
    /// closed by an I/O error or a stall fails them with that cause instead.
    ///
    /// [`close`]: crate::Connection::close
    Closed,
    /// Reading from or writing to the transport failed; the connection is closed.
    Io(Arc<std::io::Error>),
    /// The peer's response did not decode as the request's response type.
    Protocol(DecodeError),
    /// Our own message could not be serialised (for example a map with non-string keys).
    Serialize(Arc<serde_json::Error>),
    /// The peer read nothing of what was queued for it for `waited`
    /// ([`ConnectionOptions::output_stall_timeout`]); the connection is closed.
    ///
    /// [`ConnectionOptions::output_stall_timeout`]: crate::ConnectionOptions::output_stall_timeout
    Stalled {
        /// How long the writer waited for the peer to read.
        waited: std::time::Duration,
        /// How many bytes were waiting for the peer.
        queued: usize,
    },
    /// The peer's response was longer than
    /// [`ConnectionOptions::max_message_size`] and was skipped unread; the
    /// request it answered fails with this (the connection goes on). The
    /// runtime ties such a line to its request by the line's top-level `id`;
    /// one whose id it could not find fails nothing (see
    /// [`Dropped::TooLong`](crate::Dropped::TooLong)).
    ///
    /// [`ConnectionOptions::max_message_size`]: crate::ConnectionOptions::max_message_size
    TooLong {
        /// The response's length in bytes.
        size: usize,
        /// The connection's limit in bytes.
        limit: usize,
    },
    /// The agent answered `initialize` with a protocol version this client has
    /// no implementation of (`None`: no readable version); the connection is
    /// closed (feature `v2`, module `negotiate`).
    UnsupportedVersion {
        /// The version the client asked for.
        asked: u16,
        /// The version the agent answered.
        answered: Option<u16>,
    },
}

impl ConnectionError {
    /// The peer's error object, if the peer answered with one.
    pub fn remote(&self) -> Option<&Error> {
        match self {
            ConnectionError::Remote(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for ConnectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectionError::Remote(e) => write!(f, "peer answered with an error: {e}"),
            ConnectionError::Closed => f.write_str("connection closed"),
            ConnectionError::Io(e) => write!(f, "connection I/O error: {e}"),
            ConnectionError::Protocol(e) => write!(f, "malformed response from peer: {e}"),
            ConnectionError::Serialize(e) => write!(f, "could not serialise message: {e}"),
            ConnectionError::Stalled { waited, queued } => write!(
                f,
                "the peer read nothing for {} s while {queued} bytes waited for it; connection closed",
                waited.as_secs_f64()
            ),
            ConnectionError::TooLong { size, limit } => write!(
                f,
                "the peer's answer of {size} bytes was over the limit of {limit} bytes \
                 for one message and was dropped"
            ),
            ConnectionError::UnsupportedVersion { asked, answered } => match answered {
                Some(v) => write!(
                    f,
                    "the agent answered protocol version {v}, which this client does not \
                     speak (it asked for {asked}); connection closed"
                ),
                None => write!(
                    f,
                    "the agent's `initialize` answer names no protocol version (the client \
                     asked for {asked}); connection closed"
                ),
            },
        }
    }
}

impl std::error::Error for ConnectionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConnectionError::Remote(e) => Some(e),
            ConnectionError::Io(e) => Some(e.as_ref()),
            ConnectionError::Protocol(e) => Some(e),
            ConnectionError::Serialize(e) => Some(e.as_ref()),
            ConnectionError::Closed
            | ConnectionError::Stalled { .. }
            | ConnectionError::TooLong { .. }
            | ConnectionError::UnsupportedVersion { .. } => None,
        }
    }
}

impl From<ConnectionError> for Error {
    /// A remote error keeps its code; anything else becomes an internal error, so a
    /// handler can use `?` on calls to the peer.
    fn from(err: ConnectionError) -> Self {
        match err {
            ConnectionError::Remote(e) => e,
            other => Error::internal_error().data(other.to_string()),
        }
    }
}
