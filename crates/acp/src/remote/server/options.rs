//! The server's options: its limits, its credentials and its keep time.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Tunables and credentials of a [`Server`](super::Server).
#[derive(Clone)]
#[non_exhaustive]
pub struct ServerOptions {
    /// The bearer token every `/acp` request must carry; `None` serves
    /// loopback clients only (see the module docs).
    pub token: Option<String>,
    /// TLS, for `wss://` and `https://`.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// How many connections may be open at once (default 256).
    pub max_connections: usize,
    /// The longest message, in bytes (default 64 MiB).
    pub max_message_size: usize,
    /// The agent output that may wait for the client, in bytes (default 64
    /// MiB, the SDK's `maxBufferedBytes`).
    pub max_buffered_bytes: usize,
    /// How long the client may take none of the waiting output (default
    /// 60 s, the SDK's `maxOutputStallMs`).
    pub max_output_stall: Duration,
    /// How long a connection may be idle (default 5 minutes).
    pub idle_timeout: Duration,
    /// How many session streams may buffer output before a client opens
    /// them (default 1024, the SDK's `maxBufferedSessionStreams`).
    pub max_buffered_session_streams: usize,
    /// How long a connection whose client went away without closing it is
    /// kept, agent and all, for the client to resume it (default 5 minutes;
    /// zero closes it at once, and turns resumption off). See the module
    /// docs.
    pub keep_sessions: Duration,
    /// Output the client was sent, kept so that a resume can send again what
    /// a broken connection lost, in bytes per connection (default 8 MiB; the
    /// oldest goes first). Only with [`keep_sessions`](Self::keep_sessions).
    pub max_replay_bytes: usize,
    /// Recent traffic of each connection kept for watchers that start from
    /// the beginning, in bytes (default 1 MiB).
    pub watch_history_bytes: usize,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            token: None,
            tls: None,
            max_connections: 256,
            max_message_size: crate::remote::DEFAULT_MAX_MESSAGE_SIZE,
            max_buffered_bytes: 64 * 1024 * 1024,
            max_output_stall: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(300),
            max_buffered_session_streams: 1024,
            keep_sessions: DEFAULT_KEEP_SESSIONS,
            max_replay_bytes: 8 * 1024 * 1024,
            watch_history_bytes: 1024 * 1024,
        }
    }
}

/// The default of [`ServerOptions::keep_sessions`]: long enough for a
/// laptop's network to come back or a proxy's connection to be made again,
/// short enough that a client that is gone for good does not hold an agent
/// long.
pub const DEFAULT_KEEP_SESSIONS: Duration = Duration::from_secs(300);

impl fmt::Debug for ServerOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerOptions")
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("tls", &self.tls.is_some())
            .field("max_connections", &self.max_connections)
            .field("max_message_size", &self.max_message_size)
            .field("max_buffered_bytes", &self.max_buffered_bytes)
            .field("max_output_stall", &self.max_output_stall)
            .field("idle_timeout", &self.idle_timeout)
            .field(
                "max_buffered_session_streams",
                &self.max_buffered_session_streams,
            )
            .field("keep_sessions", &self.keep_sessions)
            .field("max_replay_bytes", &self.max_replay_bytes)
            .field("watch_history_bytes", &self.watch_history_bytes)
            .finish()
    }
}

impl ServerOptions {
    /// Sets [`token`](Self::token).
    #[must_use]
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }
    /// Sets [`tls`](Self::tls).
    #[must_use]
    pub fn tls(mut self, config: rustls::ServerConfig) -> Self {
        self.tls = Some(Arc::new(config));
        self
    }
    /// Sets [`max_connections`](Self::max_connections) (at least 1).
    #[must_use]
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }
    /// Sets [`max_message_size`](Self::max_message_size).
    #[must_use]
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes.max(1);
        self
    }
    /// Sets [`max_buffered_bytes`](Self::max_buffered_bytes).
    #[must_use]
    pub fn max_buffered_bytes(mut self, bytes: usize) -> Self {
        self.max_buffered_bytes = bytes.max(1);
        self
    }
    /// Sets [`max_output_stall`](Self::max_output_stall).
    #[must_use]
    pub fn max_output_stall(mut self, stall: Duration) -> Self {
        self.max_output_stall = stall;
        self
    }
    /// Sets [`idle_timeout`](Self::idle_timeout).
    #[must_use]
    pub fn idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = idle;
        self
    }
    /// Sets [`max_buffered_session_streams`](Self::max_buffered_session_streams).
    #[must_use]
    pub fn max_buffered_session_streams(mut self, n: usize) -> Self {
        self.max_buffered_session_streams = n.max(1);
        self
    }
    /// Sets [`keep_sessions`](Self::keep_sessions).
    #[must_use]
    pub fn keep_sessions(mut self, keep: Duration) -> Self {
        self.keep_sessions = keep;
        self
    }
    /// Sets [`max_replay_bytes`](Self::max_replay_bytes).
    #[must_use]
    pub fn max_replay_bytes(mut self, bytes: usize) -> Self {
        self.max_replay_bytes = bytes;
        self
    }
    /// Sets [`watch_history_bytes`](Self::watch_history_bytes).
    #[must_use]
    pub fn watch_history_bytes(mut self, bytes: usize) -> Self {
        self.watch_history_bytes = bytes;
        self
    }

    /// Whether connections outlive their client and can be resumed.
    pub(crate) fn resumable(&self) -> bool {
        !self.keep_sessions.is_zero()
    }
}
