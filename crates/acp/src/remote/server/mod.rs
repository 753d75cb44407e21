//! The server of both profiles: one `/acp` endpoint, each network connection
//! served by an agent of its own.
//!
//! A [`Server`] is made with a connector, called once per new connection to
//! get the agent's byte streams ([`Upstream`]): a child process speaking
//! stdio (what `acp serve` does), or an in-process [`Agent`]
//! ([`Server::for_agent`], [`serve_agent`]). Messages pass through as they
//! came: the server looks at a message only to route it. When the connection
//! ends (the client closes it or `DELETE`s it, nobody resumes it within the
//! keep time, it breaks a limit, or the server shuts down), the upstream is
//! dropped: its input is closed and whatever owns it
//! ([`Upstream::owned_by`], for example the agent's process) is dropped too.
//!
//! # Design
//! Each connection has one owner of its state, whatever the profile
//! (`conn::Core`: the agent's link, the close and its reason, counters, the
//! filter of copies, the trace for watchers), and the server a registry of
//! live connections and of the reasons of those closed lately. A profile
//! adds how messages reach the client: WebSocket (`ws`) has one numbered
//! outbox and the socket of the moment, which a resume replaces; Streamable
//! HTTP (`http`) has a numbered outbox per stream (the connection's, one per
//! session) and the SSE bodies reading them (`http::sse`). The options and
//! their defaults are in `options`. The agent's output is read by
//! one task per connection whether a client is there or not; it waits when
//! the client is slow, and closes the connection when the client is away and
//! the output passes the limit.
//!
//! # Requests
//! - `GET /healthz`: `200` and `{"status":"ok","connections":N}`, without
//!   credentials.
//! - `/acp`: `POST`, `GET` (SSE, or the WebSocket upgrade) and `DELETE`, as
//!   the [module docs](crate::remote) say, resumes included. Anything else
//!   on `/acp` is `405`; any other path `404`.
//! - `GET /connections` and `GET /connections/{id}/watch[?from=start]`, for
//!   operators, with the same credentials as `/acp` (see the module docs of
//!   [`crate::remote`]; the watch stream's format is in `watch`'s).
//!
//! # Security
//! With a token ([`ServerOptions::token`]) every request but `/healthz`
//! needs `Authorization: Bearer <token>`; the token is compared in constant
//! time and a refusal is `401` with no detail. A resume needs it too. Without
//! a token the server accepts only requests whose `Host` (and the authority
//! of a request target in absolute form) is a loopback name or address and
//! that carry no foreign `Origin`, so a web page cannot reach a loopback
//! server through the browser (DNS rebinding, cross-site WebSocket); whoever
//! runs it makes sure it listens on loopback only (`acp serve` refuses
//! otherwise).
//!
//! # Limits
//! Each is an option with the TypeScript SDK's default where it has one:
//! - [`max_message_size`](ServerOptions::max_message_size): a longer
//!   message from the client is refused (`413`, or WebSocket close `1009`);
//!   a longer line from the agent is dropped and logged.
//! - [`max_buffered_bytes`](ServerOptions::max_buffered_bytes): output of the
//!   agent waiting for the client (on SSE streams nobody reads yet, say);
//!   past it the agent's output is read no further, so it waits, and when the
//!   client is away the connection closes (and a resume is told why).
//! - [`max_output_stall`](ServerOptions::max_output_stall): when the client
//!   takes none of that output for this long, its socket closes (close code
//!   `1008`, or `4000` when the connection is kept for a resume) or, over
//!   HTTP, the connection.
//! - [`idle_timeout`](ServerOptions::idle_timeout): a WebSocket whose client
//!   sent nothing, not even a pong, for this long is closed (the connection
//!   is kept for a resume when it can be); an HTTP connection with no stream
//!   open and no POST for this long is closed, unless connections are kept,
//!   when the keep time counts instead. The server pings WebSocket clients
//!   three times per period.
//! - [`keep_sessions`](ServerOptions::keep_sessions): how long a connection
//!   whose client went away waits for a resume.
//! - [`max_replay_bytes`](ServerOptions::max_replay_bytes): output sent to
//!   the client, kept to be sent again after a break.
//! - [`watch_history_bytes`](ServerOptions::watch_history_bytes): recent
//!   traffic kept for watchers; a connection has at most 16 watchers
//!   (`429` past that).
//! - [`max_connections`](ServerOptions::max_connections): further
//!   connections are refused with `503`; a connection waiting for a resume
//!   keeps its place.
//!
//! Every connection is logged with `tracing` (target `acp::remote`): when it
//! opens (its id, the peer's address, the profile), when its client goes and
//! comes back, when a watcher attaches, and when it closes (why, how long it
//! lasted, messages each way).

use crate::agent::Agent;
use crate::connection::AgentSideConnection;
use crate::engine::ConnectionOptions;
use crate::transport::Transport;
use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use std::convert::Infallible;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

mod conn;
mod http;
mod link;
mod options;
mod outbox;
mod trace;
mod watch;
mod ws;

/// Locks `m`, taking the value over from a thread that panicked holding it:
/// every value behind these locks stays consistent between statements.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub use link::Upstream;
pub use options::{DEFAULT_KEEP_SESSIONS, ServerOptions};

/// The body of every response.
pub(crate) type Body = UnsyncBoxBody<Bytes, Infallible>;

/// How long a TLS handshake may take.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The profile a connection uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Profile {
    /// WebSocket.
    WebSocket,
    /// Streamable HTTP.
    Http,
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Profile::WebSocket => "websocket",
            Profile::Http => "http",
        })
    }
}

/// What the connector learns of a new connection.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ConnectionInfo {
    /// The connection's id (`Acp-Connection-Id`).
    pub id: String,
    /// The client's address.
    pub peer: SocketAddr,
    /// Its profile.
    pub profile: Profile,
}

type Connector = dyn Fn(&ConnectionInfo) -> io::Result<Upstream> + Send + Sync;

/// A live connection of either profile.
#[derive(Clone)]
pub(crate) enum Entry {
    Ws(Arc<ws::WsConnection>),
    Http(Arc<http::HttpConnection>),
}

impl Entry {
    pub fn core(&self) -> &Arc<conn::Core> {
        match self {
            Entry::Ws(c) => &c.core,
            Entry::Http(c) => &c.core,
        }
    }

    /// Whether a client is there (`attached`) or the connection waits for
    /// one to resume it (`detached`).
    pub fn attached(&self) -> bool {
        match self {
            Entry::Ws(c) => c.attached(),
            Entry::Http(c) => c.attached(),
        }
    }

    /// Bytes held for the client (waiting, and kept for a resume).
    pub fn buffered(&self) -> usize {
        match self {
            Entry::Ws(c) => c.buffered(),
            Entry::Http(c) => c.buffered(),
        }
    }

    pub fn close(&self, reason: &str) {
        match self {
            Entry::Ws(c) => c.close(reason, true),
            Entry::Http(c) => c.close(reason, true),
        }
    }
}

/// The state every request handler shares.
pub(crate) struct Inner {
    pub options: ServerOptions,
    connector: Box<Connector>,
    /// Open connections of both profiles.
    active: AtomicUsize,
    /// Connections by id, and the reasons of those closed lately.
    pub connections: Mutex<conn::Registry>,
    pub shutdown: CancellationToken,
}

/// A connection's place in [`ServerOptions::max_connections`]; freed on drop.
pub(crate) struct Slot(Arc<Inner>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Inner {
    fn slot(self: &Arc<Self>) -> Option<Slot> {
        let max = self.options.max_connections;
        self.active
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(Arc::clone(self)))
    }

    /// A slot and an upstream for a new connection, or the response that
    /// refuses it.
    pub(crate) fn open(
        self: &Arc<Self>,
        peer: SocketAddr,
        profile: Profile,
    ) -> Result<(ConnectionInfo, Slot, Upstream), Box<Response<Body>>> {
        let Some(slot) = self.slot() else {
            warn!(target: "acp::remote", %peer, %profile, max = self.options.max_connections, "connection refused: at the maximum of connections");
            return Err(Box::new(text(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!(
                    "the server has its maximum of {} connections open",
                    self.options.max_connections
                ),
            )));
        };
        let info = ConnectionInfo {
            id: uuid::Uuid::new_v4().to_string(),
            peer,
            profile,
        };
        match (self.connector)(&info) {
            Ok(upstream) => Ok((info, slot, upstream)),
            Err(error) => {
                warn!(target: "acp::remote", id = %info.id, %peer, %profile, %error, "could not start the agent");
                Err(Box::new(text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &format!("could not start the agent: {error}"),
                )))
            }
        }
    }

    fn connections(&self) -> usize {
        self.active.load(Ordering::Acquire)
    }
}

/// An ACP server: accepts connections on a listener and gives each its own
/// agent.
pub struct Server {
    inner: Arc<Inner>,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("options", &self.inner.options)
            .field("connections", &self.inner.connections())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A server whose connections each get the upstream `connector` returns
    /// (called once per connection, from the runtime; an error refuses the
    /// connection with `500` and is logged).
    pub fn new(
        options: ServerOptions,
        connector: impl Fn(&ConnectionInfo) -> io::Result<Upstream> + Send + Sync + 'static,
    ) -> Self {
        Server {
            inner: Arc::new(Inner {
                options,
                connector: Box::new(connector),
                active: AtomicUsize::new(0),
                connections: Mutex::new(conn::Registry::default()),
                shutdown: CancellationToken::new(),
            }),
        }
    }

    /// A server whose connections each get a new in-process agent from
    /// `make_agent`.
    pub fn for_agent<A: Agent>(
        options: ServerOptions,
        make_agent: impl Fn(AgentSideConnection) -> A + Send + Sync + 'static,
    ) -> Self {
        let make_agent = Arc::new(make_agent);
        let max_message_size = options.max_message_size;
        let label = std::any::type_name::<A>()
            .rsplit("::")
            .next()
            .unwrap_or_default()
            .to_owned();
        Server::new(options, move |_info| {
            let (agent_end, server_end) = Transport::memory_pair();
            let make_agent = Arc::clone(&make_agent);
            let options = ConnectionOptions::default().max_message_size(max_message_size);
            let (conn, io) = AgentSideConnection::new(agent_end, options, move |c| make_agent(c));
            tokio::spawn(io);
            Ok(Upstream::new(server_end)
                .owned_by(CloseOnDrop(conn))
                .label(label.clone()))
        })
    }

    /// A token that stops the server when cancelled: it stops accepting and
    /// closes every connection.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.inner.shutdown.clone()
    }

    /// How many connections are open.
    pub fn connections(&self) -> usize {
        self.inner.connections()
    }

    /// Accepts connections on `listener` until the shutdown token is
    /// cancelled. Errors of single connections are logged, not returned.
    pub async fn serve(self, listener: TcpListener) -> io::Result<()> {
        let tls = self
            .inner
            .options
            .tls
            .clone()
            .map(tokio_rustls::TlsAcceptor::from);
        let local = listener.local_addr()?;
        info!(target: "acp::remote", %local, tls = tls.is_some(), "serving ACP on /acp");
        loop {
            let (stream, peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        // Out of descriptors, say: wait a moment, go on.
                        warn!(target: "acp::remote", %error, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = self.inner.shutdown.cancelled() => break,
            };
            let _ = stream.set_nodelay(true);
            let inner = Arc::clone(&self.inner);
            let tls = tls.clone();
            tokio::spawn(async move {
                match tls {
                    Some(acceptor) => {
                        let handshake =
                            tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream))
                                .await;
                        match handshake {
                            Ok(Ok(stream)) => serve_stream(inner, stream, peer).await,
                            Ok(Err(error)) => {
                                debug!(target: "acp::remote", %peer, %error, "TLS handshake failed")
                            }
                            Err(_) => {
                                debug!(target: "acp::remote", %peer, "TLS handshake timed out")
                            }
                        }
                    }
                    None => serve_stream(inner, stream, peer).await,
                }
            });
        }
        let connections = lock(&self.inner.connections).drain();
        for connection in connections {
            connection.close("the server is shutting down");
        }
        Ok(())
    }
}

/// Serves in-process agents made by `make_agent` on `addr` with default
/// options (loopback only, no token) until the process ends: the one call an
/// agent needs to be reachable over the network.
pub async fn serve_agent<A: Agent>(
    addr: impl ToSocketAddrs,
    make_agent: impl Fn(AgentSideConnection) -> A + Send + Sync + 'static,
) -> io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    Server::for_agent(ServerOptions::default(), make_agent)
        .serve(listener)
        .await
}

/// Closes an in-process agent's connection when its network connection ends.
struct CloseOnDrop(AgentSideConnection);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}

async fn serve_stream<S>(inner: Arc<Inner>, stream: S, peer: SocketAddr)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service_inner = Arc::clone(&inner);
    let service = hyper::service::service_fn(move |request| {
        let inner = Arc::clone(&service_inner);
        async move { Ok::<_, Infallible>(handle(inner, peer, request).await) }
    });
    let builder =
        hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
    let connection =
        builder.serve_connection_with_upgrades(hyper_util::rt::TokioIo::new(stream), service);
    tokio::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(error) = result {
                debug!(target: "acp::remote", %peer, %error, "HTTP connection ended with an error");
            }
        }
        () = inner.shutdown.cancelled() => {
            connection.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(Duration::from_secs(5), connection).await;
        }
    }
}

async fn handle(inner: Arc<Inner>, peer: SocketAddr, request: Request<Incoming>) -> Response<Body> {
    let path = request.uri().path();
    if path == "/healthz" {
        return match *request.method() {
            Method::GET | Method::HEAD => json(
                StatusCode::OK,
                format!(
                    "{{\"status\":\"ok\",\"connections\":{}}}",
                    inner.connections()
                ),
            ),
            _ => text(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed"),
        };
    }
    let operators = path == CONNECTIONS_PATH || path.starts_with("/connections/");
    if path != super::ENDPOINT_PATH && !operators {
        return text(StatusCode::NOT_FOUND, "Not Found");
    }
    if let Err(refusal) = admit(&inner.options, &request) {
        debug!(target: "acp::remote", %peer, "request refused: {}", refusal.1);
        return *refusal.0;
    }
    if operators {
        return for_operators(&inner, path, &request);
    }
    let upgrade = request
        .headers()
        .get(::http::header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    match *request.method() {
        Method::GET if upgrade => ws::upgrade(inner, peer, request).await,
        Method::GET => http::get(inner, request),
        Method::POST => http::post(inner, peer, request).await,
        Method::DELETE => http::delete(inner, request),
        _ => {
            let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
            response.headers_mut().insert(
                ::http::header::ALLOW,
                ::http::HeaderValue::from_static("GET, POST, DELETE"),
            );
            response
        }
    }
}

/// The list of connections, for operators.
const CONNECTIONS_PATH: &str = "/connections";

/// `GET /connections` and `GET /connections/{id}/watch`.
fn for_operators(inner: &Inner, path: &str, request: &Request<Incoming>) -> Response<Body> {
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
        response.headers_mut().insert(
            ::http::header::ALLOW,
            ::http::HeaderValue::from_static("GET"),
        );
        return response;
    }
    if path == CONNECTIONS_PATH {
        return watch::list(inner);
    }
    match path
        .strip_prefix("/connections/")
        .and_then(|rest| rest.strip_suffix("/watch"))
    {
        Some(id) if !id.is_empty() && !id.contains('/') => watch::watch(inner, id, request),
        _ => text(StatusCode::NOT_FOUND, "Not Found"),
    }
}

/// Checks credentials (or, without a token, that the request is local);
/// the refusal and, for the log, why.
fn admit(
    options: &ServerOptions,
    request: &Request<Incoming>,
) -> Result<(), (Box<Response<Body>>, &'static str)> {
    let headers = request.headers();
    match &options.token {
        Some(token) => {
            let given = headers
                .get(::http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| {
                    let (scheme, rest) = v.split_once(' ')?;
                    scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
                });
            let ok = given.is_some_and(|given| token_matches(token, given));
            if ok {
                Ok(())
            } else {
                let mut response = text(StatusCode::UNAUTHORIZED, "Unauthorized");
                response.headers_mut().insert(
                    ::http::header::WWW_AUTHENTICATE,
                    ::http::HeaderValue::from_static("Bearer"),
                );
                Err((Box::new(response), "missing or wrong token"))
            }
        }
        None => {
            // The Host header, and the authority of a request target in
            // absolute form (which HTTP says wins over it): both must be
            // loopback.
            let host = headers.get(::http::header::HOST).map(|v| v.to_str().ok());
            let authority = request.uri().authority().map(|a| a.as_str());
            let local = match (host, authority) {
                (None, None) | (Some(None), _) => false,
                (Some(Some(host)), authority) => {
                    is_loopback_host(host) && authority.is_none_or(is_loopback_host)
                }
                (None, Some(authority)) => is_loopback_host(authority),
            };
            if !local {
                return Err((
                    Box::new(text(StatusCode::FORBIDDEN, "Forbidden")),
                    "Host is not a loopback name",
                ));
            }
            if let Some(origin) = headers.get(::http::header::ORIGIN) {
                let local = origin
                    .to_str()
                    .ok()
                    .and_then(|o| o.split_once("://").map(|(_, rest)| rest))
                    .is_some_and(is_loopback_host);
                if !local {
                    return Err((
                        Box::new(text(StatusCode::FORBIDDEN, "Forbidden")),
                        "a foreign Origin",
                    ));
                }
            }
            Ok(())
        }
    }
}

/// Compares the token in time that depends on the lengths only.
fn token_matches(token: &str, given: &str) -> bool {
    use subtle::ConstantTimeEq;
    token.as_bytes().ct_eq(given.as_bytes()).into()
}

/// Whether `host` (`name[:port]`, `[v6]:port`) names this machine's loopback.
fn is_loopback_host(host: &str) -> bool {
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        // `[v6]` and nothing after it but a port.
        let Some((name, after)) = rest.split_once(']') else {
            return false;
        };
        let port_ok = after.is_empty()
            || after
                .strip_prefix(':')
                .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        if !port_ok {
            return false;
        }
        return name
            .parse::<std::net::Ipv6Addr>()
            .is_ok_and(|ip| ip.is_loopback());
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
                name
            }
            Some(_) => return false,
            None => host,
        }
    };
    if name.eq_ignore_ascii_case("localhost") {
        return true;
    }
    if let Some(sub) = name.to_ascii_lowercase().strip_suffix(".localhost") {
        return !sub.is_empty()
            && sub.split('.').all(|label| {
                !label.is_empty()
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            });
    }
    name.parse::<std::net::Ipv4Addr>()
        .is_ok_and(|ip| ip.is_loopback())
}

pub(crate) fn full(body: impl Into<Bytes>) -> Body {
    http_body_util::Full::new(body.into()).boxed_unsync()
}

/// The answer to a resume of a connection that closed.
pub(crate) fn gone(reason: &str) -> Response<Body> {
    text(
        StatusCode::GONE,
        &format!("the connection was closed: {reason}"),
    )
}

pub(crate) fn text(status: StatusCode, message: &str) -> Response<Body> {
    let mut response = Response::new(full(format!("{message}\n")));
    *response.status_mut() = status;
    response.headers_mut().insert(
        ::http::header::CONTENT_TYPE,
        ::http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

pub(crate) fn json(status: StatusCode, body: impl Into<Bytes>) -> Response<Body> {
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        ::http::header::CONTENT_TYPE,
        ::http::HeaderValue::from_static("application/json"),
    );
    response
}

pub(crate) fn empty(status: StatusCode) -> Response<Body> {
    let mut response = Response::new(full(Bytes::new()));
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::{is_loopback_host, token_matches};

    #[test]
    fn loopback_hosts() {
        for host in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "127.9.9.9",
            "[::1]:80",
            "[::1]",
            "a.localhost:3",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "example.com",
            "evil.com:80",
            "10.0.0.1:80",
            "[::2]:80",
            "localhost.evil.com",
            "",
            "0.0.0.0:1",
            "[::1]evil.example",
            "[::1]:80@evil.example",
            "[::1]:",
            "localhost:",
            "localhost:80:80",
            "127.0.0.1:8a",
            "a..localhost",
            ".localhost",
            "evil.example/.localhost",
            "::1",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn tokens() {
        assert!(token_matches("s3cret", "s3cret"));
        assert!(!token_matches("s3cret", "s3cre"));
        assert!(!token_matches("s3cret", "s3creT"));
        assert!(!token_matches("s3cret", ""));
    }
}
