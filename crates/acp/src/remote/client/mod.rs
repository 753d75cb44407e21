//! The client side: [`connect`] to a URL, get a [`Transport`].
//!
//! The returned transport is a pair of in-memory byte streams; a task of its
//! own carries what the engine writes to the server and what the server
//! sends to the engine, one message per line. When the server refuses the
//! connection, closes it, or cannot be reached any more, the engine reads an
//! I/O error saying so (and the connection's pending requests fail with
//! it).
//!
//! With [`ClientOptions::reconnect`], a connection that breaks is resumed
//! instead, when the server keeps connections (it says so at connect): the
//! task reconnects with backoff, the server sends again what was lost, the
//! task sends again what the server did not get, and the engine sees one
//! unbroken stream, each message once and in order. Meanwhile what the
//! engine writes waits (its pipe holds 256 KiB). When resuming fails for
//! good, the engine reads an I/O error carrying a [`LinkLost`] that says why.

use crate::codec::LineReader;
use crate::transport::Transport;
use bytes::Bytes;
use rustls_pki_types::CertificateDer;
use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod operators;
mod reconnect;
#[cfg(feature = "websocket")]
mod ws;

#[cfg(feature = "http")]
pub use operators::{ConnectionSummary, Watch, list_connections, watch};
use reconnect::Outage;
pub use reconnect::{LinkEvent, LinkEventHandler, LinkLost, Reconnect};

/// How many messages may wait for the engine before the server is read no
/// further.
const TO_ENGINE_QUEUE: usize = 64;

/// Buffer of the engine's outgoing byte stream.
const FROM_ENGINE_BUFFER: usize = 256 * 1024;

/// How to reach a server: extra headers (credentials), extra trusted roots,
/// limits.
#[derive(Clone)]
#[non_exhaustive]
pub struct ClientOptions {
    /// Headers sent with every HTTP request (and the WebSocket upgrade).
    pub headers: Vec<(String, String)>,
    /// Root certificates trusted besides the system's, for `wss://` and
    /// `https://`.
    pub root_certificates: Vec<CertificateDer<'static>>,
    /// The longest message accepted from the server, in bytes.
    pub max_message_size: usize,
    /// How long connecting (TCP, TLS and the upgrade) may take.
    pub connect_timeout: Duration,
    /// Resume a broken connection, and how (default: no; see the module
    /// docs).
    pub reconnect: Option<Reconnect>,
    /// Told what happens to the link while reconnecting (called on the
    /// transport's task: it must be quick).
    pub on_event: Option<LinkEventHandler>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            headers: Vec::new(),
            root_certificates: Vec::new(),
            max_message_size: super::DEFAULT_MAX_MESSAGE_SIZE,
            connect_timeout: Duration::from_secs(30),
            reconnect: None,
            on_event: None,
        }
    }
}

impl fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values are often credentials: only their names are shown.
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("ClientOptions")
            .field("headers", &names)
            .field("root_certificates", &self.root_certificates.len())
            .field("max_message_size", &self.max_message_size)
            .field("connect_timeout", &self.connect_timeout)
            .field("reconnect", &self.reconnect)
            .field("on_event", &self.on_event.is_some())
            .finish()
    }
}

impl ClientOptions {
    /// Adds a header sent with every request.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
    /// Sends `Authorization: Bearer <token>`.
    #[must_use]
    pub fn bearer_token(self, token: &str) -> Self {
        self.header("Authorization", format!("Bearer {token}"))
    }
    /// Trusts `cert` as a root, besides the system's.
    #[must_use]
    pub fn root_certificate(mut self, cert: CertificateDer<'static>) -> Self {
        self.root_certificates.push(cert);
        self
    }
    /// Sets [`max_message_size`](Self::max_message_size).
    #[must_use]
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }
    /// Sets [`connect_timeout`](Self::connect_timeout).
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }
    /// Resumes a broken connection with `policy` (see the module docs).
    #[must_use]
    pub fn reconnect(mut self, policy: Reconnect) -> Self {
        self.reconnect = Some(policy);
        self
    }
    /// Calls `on_event` with what happens to the link while reconnecting
    /// ("reconnecting", "resumed", "gave up: why"), on the transport's task.
    #[must_use]
    pub fn on_event(mut self, on_event: impl Fn(&LinkEvent) + Send + Sync + 'static) -> Self {
        self.on_event = Some(Arc::new(on_event));
        self
    }

    /// The backoff of a connection whose server keeps it `keep` (from its
    /// `Acp-Resumable`), when this client reconnects.
    fn outage(&self, keep: Option<Duration>) -> Option<Outage> {
        let policy = self.reconnect.clone()?;
        let on_event = self.on_event.clone();
        Some(Outage::new(
            policy,
            on_event,
            keep.unwrap_or(Duration::ZERO),
        ))
    }

    fn header_map(&self) -> io::Result<::http::HeaderMap> {
        let mut map = ::http::HeaderMap::new();
        for (name, value) in &self.headers {
            let name = ::http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("bad header name {name:?}"),
                )
            })?;
            let value = ::http::HeaderValue::from_str(value).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("bad value for header {name}"),
                )
            })?;
            map.append(name, value);
        }
        Ok(map)
    }
}

/// Connects to the ACP server at `url` (`ws://`, `wss://`, `http://` or
/// `https://`, each with its cargo feature) and returns the transport to give
/// a [`ClientSideConnection`](crate::ClientSideConnection).
///
/// A WebSocket connection is opened here, so a refused upgrade (a wrong
/// token: `PermissionDenied`), an unreachable host or a bad certificate is
/// an error at once. A Streamable HTTP connection starts with the
/// `initialize` request the engine sends; a failure there reaches the engine
/// as an I/O error.
pub async fn connect(url: &str, options: ClientOptions) -> io::Result<Transport> {
    let uri: ::http::Uri = url.parse().map_err(|e| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("bad URL {url:?}: {e}"))
    })?;
    match uri.scheme_str() {
        #[cfg(feature = "websocket")]
        Some("ws" | "wss") => ws::connect(uri, &options).await,
        #[cfg(feature = "http")]
        Some("http" | "https") => http::connect(uri, &options),
        Some(other) => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "URL scheme {other:?} is not supported here (this build of acp knows: {})",
                supported_schemes()
            ),
        )),
        None => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("URL {url:?} has no scheme (ws://, wss://, http:// or https://)"),
        )),
    }
}

fn supported_schemes() -> &'static str {
    match (cfg!(feature = "websocket"), cfg!(feature = "http")) {
        (true, true) => "ws, wss, http, https",
        (true, false) => "ws, wss",
        (false, true) => "http, https",
        (false, false) => "none",
    }
}

/// Whether `text` is a URL `connect` understands (by its scheme).
pub fn is_url(text: &str) -> bool {
    ["ws://", "wss://", "http://", "https://"]
        .iter()
        .any(|scheme| {
            text.len() > scheme.len() && text[..scheme.len()].eq_ignore_ascii_case(scheme)
        })
}

/// Where the bridge hands the engine what the server sent.
pub(super) struct ToEngine {
    /// Lines (each ending in `\n`) for the engine, or the error that ends
    /// its input.
    tx: mpsc::Sender<io::Result<Bytes>>,
}

impl ToEngine {
    /// Hands one message to the engine; false once the engine is gone.
    pub async fn deliver(&self, message: Vec<u8>) -> bool {
        let mut line = super::one_line(message);
        line.push(b'\n');
        self.tx.send(Ok(Bytes::from(line))).await.is_ok()
    }

    /// Ends the engine's input with `error`.
    pub async fn fail(&self, error: io::Error) {
        let _ = self.tx.send(Err(error)).await;
    }
}

/// What the engine writes, line by line.
pub(super) type FromEngine = LineReader<tokio::io::DuplexStream>;

/// A transport for the engine, and the bridge's two ends of it.
pub(super) fn engine_pipe(max_message_size: usize) -> (Transport, ToEngine, FromEngine) {
    let (tx, rx) = mpsc::channel::<io::Result<Bytes>>(TO_ENGINE_QUEUE);
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    let reader = tokio_util::io::StreamReader::new(Box::pin(stream));
    let (engine_writes, bridge_reads) = tokio::io::duplex(FROM_ENGINE_BUFFER);
    let transport = Transport::new(reader, engine_writes);
    (
        transport,
        ToEngine { tx },
        LineReader::new(bridge_reads, max_message_size),
    )
}

/// `host:port` of `uri`, with the scheme's default port.
pub(super) fn authority(uri: &::http::Uri, secure: bool) -> io::Result<(String, u16)> {
    let host = uri
        .host()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the URL has no host"))?;
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = uri.port_u16().unwrap_or(if secure { 443 } else { 80 });
    Ok((host, port))
}

/// The keep time a server's `Acp-Resumable` header gives, if it resumes
/// connections.
pub(super) fn keep_time(headers: &::http::HeaderMap) -> Option<Duration> {
    headers
        .get(crate::remote::HEADER_RESUMABLE)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|s| *s > 0)
        .map(Duration::from_secs)
}

/// Why a resume was refused, from the server's answer: `None` when it is
/// worth trying again (the server is restarting, a proxy has no backend).
pub(super) fn resume_refused(status: ::http::StatusCode, body: &str) -> Option<LinkLost> {
    let detail = body.trim().chars().take(200).collect::<String>();
    match status.as_u16() {
        404 => Some(LinkLost::Gone { reason: None }),
        410 => Some(LinkLost::Gone {
            reason: Some(
                detail
                    .strip_prefix("the connection was closed: ")
                    .unwrap_or(&detail)
                    .to_owned(),
            ),
        }),
        409 => Some(LinkLost::Gap { detail }),
        408 | 425 | 429 | 500..=599 => None,
        status => Some(LinkLost::Refused { status, detail }),
    }
}

/// The error for an HTTP status the server refused with.
pub(super) fn refused(status: ::http::StatusCode, what: &str, body: &str) -> io::Error {
    let kind = match status.as_u16() {
        401 | 403 => io::ErrorKind::PermissionDenied,
        404 | 410 => io::ErrorKind::NotFound,
        _ => io::ErrorKind::ConnectionRefused,
    };
    let hint = match status.as_u16() {
        401 => " (a missing or wrong token)",
        403 => " (not allowed)",
        _ => "",
    };
    let body = body.trim();
    let body = if body.is_empty() {
        String::new()
    } else {
        format!(": {}", body.chars().take(200).collect::<String>())
    };
    io::Error::new(
        kind,
        format!("the server refused {what} with HTTP {status}{hint}{body}"),
    )
}
