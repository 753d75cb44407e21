//! Reporting what the peer sent that never reached a handler.

use acp_schema::{Error, RequestId};
use std::fmt;
use std::sync::Arc;

/// A message from the peer that the engine dropped instead of handing it to a
/// handler.
///
/// Requests are answered with an error, so the peer learns about those; a
/// dropped notification is never answered, and a line over the size limit may
/// have been a response some caller now waits for. A
/// [`ConnectionOptions::on_dropped`](super::ConnectionOptions::on_dropped)
/// callback hears about each of them, in arrival order with the notification
/// handlers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Dropped {
    /// A line longer than the size limit, skipped unread, so whatever it
    /// carried is lost. While skipping it the reader looks for its top-level
    /// `id` (see [`codec::LineHead`](crate::codec::LineHead)): a response
    /// with a found id fails the request it answers with
    /// [`ConnectionError::TooLong`](crate::ConnectionError::TooLong), a
    /// request with a found id is answered with -32600 under that id. Any
    /// other line is answered with -32600 under the null id; if it was a
    /// response, the request it answered waits on.
    TooLong {
        /// The line's length in bytes.
        size: usize,
        /// The connection's limit in bytes.
        limit: usize,
        /// The id of the request or response, when the reader found it.
        id: Option<RequestId>,
    },
    /// A line that is not JSON; answered with -32700.
    Unparsable {
        /// The JSON parser's complaint.
        reason: String,
    },
    /// JSON that is not a JSON-RPC request, notification or response;
    /// answered with -32600.
    Invalid {
        /// What is wrong with it.
        reason: String,
    },
    /// A notification whose params do not fit its method (notifications are
    /// never answered).
    BadNotification {
        /// The notification's method.
        method: String,
        /// Which field is wrong and why (`update.content: invalid type…`).
        reason: String,
    },
}

impl Dropped {
    /// A notification the handler refused with `err` (-32602 carrying the
    /// field path and message in `data`, or any other error).
    pub(crate) fn bad_notification(method: &str, err: &Error) -> Self {
        let data = err.data.as_ref().map(|d| d.to_value());
        let field = |key: &str| {
            data.as_ref()
                .and_then(|d| d.get(key))
                .and_then(|v| v.as_str())
        };
        let reason = match (field("path"), field("message")) {
            (Some(path), Some(message)) if !path.is_empty() && path != "." => {
                format!("{path}: {message}")
            }
            (_, Some(message)) => message.to_string(),
            _ => err.to_string(),
        };
        Dropped::BadNotification {
            method: method.to_string(),
            reason,
        }
    }
}

impl fmt::Display for Dropped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dropped::TooLong {
                size,
                limit,
                id: None,
            } => write!(
                f,
                "a message of {size} bytes, over the limit of {limit} bytes, was skipped"
            ),
            Dropped::TooLong {
                size,
                limit,
                id: Some(id),
            } => write!(
                f,
                "a message of {size} bytes with id {id}, over the limit of {limit} bytes, \
                 was skipped"
            ),
            Dropped::Unparsable { reason } => write!(f, "a line that is not JSON: {reason}"),
            Dropped::Invalid { reason } => write!(f, "not a JSON-RPC message: {reason}"),
            Dropped::BadNotification { method, reason } => {
                write!(f, "a {method} notification with bad params: {reason}")
            }
        }
    }
}

/// The callback of [`ConnectionOptions::on_dropped`](super::ConnectionOptions::on_dropped).
pub type OnDropped = Arc<dyn Fn(&Dropped) + Send + Sync>;
