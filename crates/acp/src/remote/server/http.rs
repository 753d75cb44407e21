//! The Streamable HTTP profile's server side.
//!
//! One [`HttpConnection`] per `Acp-Connection-Id`: the agent's link, the
//! outgoing mailboxes (the connection's stream and one per session), and
//! the routes that tell where each response goes. A router task reads the
//! agent's output and puts each message in its mailbox: a response goes where
//! the request it answers came from (the connection's stream for
//! `session/new` and `session/load`, the session's for the rest), a request
//! or notification naming a session to that session's stream, anything else
//! to the connection's stream. An SSE body takes messages from its mailbox
//! as the client reads them, so what waits is counted, and bounded by
//! `max_buffered_bytes`.

use super::link::line_for_agent;
use super::{Body, ConnectionInfo, Inner, Profile, Slot, empty, json, text};
use crate::codec::{Frame, LineReader};
use crate::remote::message::{Inspected, Kind, error_line, inspect, is_session_scoped};
use crate::remote::{HEADER_CONNECTION_ID, HEADER_SESSION_ID};
use crate::transport::BoxedReader;
use bytes::Bytes;
use http_body_util::{BodyExt, Limited, StreamBody};
use hyper::body::{Frame as BodyFrame, Incoming};
use hyper::{Request, Response, StatusCode};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

/// How often an open SSE stream with nothing to say sends a comment.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Where a message from the agent goes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Route {
    Connection,
    Session(String),
}

/// Messages waiting for one stream's reader.
#[derive(Default)]
struct Mailbox {
    queue: VecDeque<Bytes>,
    /// A GET is reading it.
    leased: bool,
    wake: Arc<Notify>,
}

#[derive(Default)]
struct State {
    connection: Mailbox,
    sessions: HashMap<String, Mailbox>,
    /// Bytes waiting in every mailbox.
    buffered: usize,
    /// The client's requests: where each response goes.
    pending: HashMap<String, Route>,
    /// The agent's requests: the session the client must answer in.
    answers: HashMap<String, Route>,
    /// Open GET streams.
    readers: usize,
    /// The agent's output has ended: mailboxes drain, then their streams end.
    finished: bool,
    last_activity: Option<Instant>,
}

impl State {
    fn mailbox(&mut self, route: &Route) -> &mut Mailbox {
        match route {
            Route::Connection => &mut self.connection,
            Route::Session(id) => self.sessions.entry(id.clone()).or_default(),
        }
    }

    /// Session mailboxes that hold output nobody reads yet.
    fn unread_sessions(&self) -> usize {
        self.sessions.values().filter(|m| !m.leased).count()
    }
}

/// One Streamable HTTP connection.
pub(crate) struct HttpConnection {
    info: ConnectionInfo,
    inner: Arc<Inner>,
    state: Mutex<State>,
    /// The agent's input; taken out at the close.
    to_agent: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    /// The agent and the connection's slot; dropped at the close.
    keep: Mutex<Option<(super::link::Keep, Slot)>>,
    /// Woken when output is taken (or the connection closes).
    progress: Notify,
    closed: CancellationToken,
    reason: OnceLock<String>,
    started: Instant,
    received: AtomicU64,
    sent: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn header<'a>(request: &'a Request<Incoming>, name: &str) -> Option<&'a str> {
    request.headers().get(name).and_then(|v| v.to_str().ok())
}

impl HttpConnection {
    /// Closes the connection for `reason` (the first reason wins): its
    /// streams end, the agent's input closes and the agent goes.
    pub(crate) fn close(&self, reason: &str) {
        if self.reason.set(reason.to_owned()).is_err() {
            return;
        }
        self.closed.cancel();
        lock(&self.inner.http).remove(&self.info.id);
        lock(&self.to_agent).take();
        {
            let mut state = lock(&self.state);
            state.finished = true;
            state.connection.wake.notify_one();
            for mailbox in state.sessions.values() {
                mailbox.wake.notify_one();
            }
        }
        self.progress.notify_waiters();
        let keep = lock(&self.keep).take();
        drop(keep);
        info!(
            target: "acp::remote",
            id = %self.info.id,
            peer = %self.info.peer,
            profile = "http",
            reason,
            duration_ms = self.started.elapsed().as_millis() as u64,
            messages_in = self.received.load(Ordering::Relaxed),
            messages_out = self.sent.load(Ordering::Relaxed),
            "connection closed"
        );
    }

    fn touch(&self) {
        lock(&self.state).last_activity = Some(Instant::now());
    }

    /// Sends one message to the agent.
    async fn forward(&self, message: &[u8]) -> bool {
        let sender = lock(&self.to_agent).clone();
        let Some(sender) = sender else { return false };
        self.received.fetch_add(1, Ordering::Relaxed);
        sender.send(line_for_agent(message)).await.is_ok()
    }

    /// Waits while the client has `max_buffered_bytes` of output to read;
    /// false (after closing the connection) if it took none for
    /// `max_output_stall`.
    async fn wait_for_room(&self) -> bool {
        let options = &self.inner.options;
        loop {
            let notified = self.progress.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let state = lock(&self.state);
                if state.buffered < options.max_buffered_bytes || state.finished {
                    return !self.closed.is_cancelled();
                }
            }
            if tokio::time::timeout(options.max_output_stall, notified)
                .await
                .is_err()
            {
                self.close(&format!(
                    "output stalled: the client read none of its {} bytes of output for {} s",
                    lock(&self.state).buffered,
                    options.max_output_stall.as_secs()
                ));
                return false;
            }
        }
    }

    /// Puts one message of the agent in its mailbox.
    fn route(&self, line: &[u8], seen: Option<&Inspected>) -> Result<(), String> {
        let mut state = lock(&self.state);
        let route = match seen {
            Some(s) if s.kind == Kind::Response => {
                s.id.as_ref()
                    .and_then(|id| state.pending.remove(id))
                    .unwrap_or(Route::Connection)
            }
            Some(s) => {
                let route = s
                    .params_session
                    .clone()
                    .map_or(Route::Connection, Route::Session);
                if let (Kind::Request, Some(id)) = (s.kind, &s.id) {
                    state.answers.insert(id.clone(), route.clone());
                }
                route
            }
            None => Route::Connection,
        };
        if let Route::Session(id) = &route
            && !state.sessions.contains_key(id)
            && state.unread_sessions() >= self.inner.options.max_buffered_session_streams
        {
            return Err(format!(
                "more than {} session streams hold output nobody reads (max_buffered_session_streams)",
                self.inner.options.max_buffered_session_streams
            ));
        }
        state.buffered += line.len();
        let mailbox = state.mailbox(&route);
        mailbox.queue.push_back(Bytes::copy_from_slice(line));
        mailbox.wake.notify_one();
        Ok(())
    }

    /// Reads the agent's output until it ends or the connection closes.
    async fn run_router(self: Arc<Self>, mut from_agent: LineReader<BoxedReader>) {
        loop {
            if !self.wait_for_room().await {
                return;
            }
            let frame = tokio::select! {
                frame = from_agent.next_frame() => frame,
                () = self.closed.cancelled() => return,
            };
            match frame {
                Ok(Some(Frame::Message(line))) => {
                    let seen = inspect(line);
                    self.sent.fetch_add(1, Ordering::Relaxed);
                    if let Err(why) = self.route(line, seen.as_ref()) {
                        self.close(&why);
                        return;
                    }
                }
                Ok(Some(Frame::TooLong { size, .. })) => {
                    warn!(target: "acp::remote", id = %self.info.id, size, "the agent wrote a message over the size limit; dropped");
                }
                Ok(None) | Err(_) => {
                    // Let the streams drain what is there, then end.
                    {
                        let mut state = lock(&self.state);
                        state.finished = true;
                        state.connection.wake.notify_one();
                        for mailbox in state.sessions.values() {
                            mailbox.wake.notify_one();
                        }
                    }
                    lock(&self.inner.http).remove(&self.info.id);
                    self.drain_then_close().await;
                    return;
                }
            }
        }
    }

    /// After the agent's output ended: closes once the streams took all of
    /// it, or after the stall limit.
    async fn drain_then_close(&self) {
        let deadline = tokio::time::Instant::now() + self.inner.options.max_output_stall;
        loop {
            let notified = self.progress.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if lock(&self.state).buffered == 0 {
                break;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                break;
            }
        }
        self.close("the agent exited");
    }

    /// Closes the connection once it has had no stream open and no POST for
    /// the idle timeout.
    async fn watch_idle(self: Arc<Self>) {
        let idle = self.inner.options.idle_timeout;
        loop {
            let wake_at = {
                let state = lock(&self.state);
                let last = state.last_activity.unwrap_or(self.started);
                if state.readers == 0 && last.elapsed() >= idle {
                    None
                } else {
                    Some(last + idle)
                }
            };
            let Some(wake_at) = wake_at else {
                self.close(&format!("idle for {} s", idle.as_secs()));
                return;
            };
            let wake_at = tokio::time::Instant::from_std(
                wake_at.max(Instant::now() + Duration::from_millis(10)),
            );
            tokio::select! {
                () = tokio::time::sleep_until(wake_at) => {}
                () = self.closed.cancelled() => return,
            }
        }
    }
}

fn connection_of(
    inner: &Inner,
    request: &Request<Incoming>,
) -> Result<Arc<HttpConnection>, Box<Response<Body>>> {
    let Some(id) = header(request, HEADER_CONNECTION_ID) else {
        return Err(Box::new(text(
            StatusCode::BAD_REQUEST,
            "Missing Acp-Connection-Id",
        )));
    };
    lock(&inner.http)
        .get(id)
        .cloned()
        .ok_or_else(|| Box::new(text(StatusCode::NOT_FOUND, "Unknown Acp-Connection-Id")))
}

fn is_json(request: &Request<Incoming>) -> bool {
    header(request, "content-type")
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"))
}

/// `POST /acp`: one message from the client.
pub(super) async fn post(
    inner: Arc<Inner>,
    peer: SocketAddr,
    request: Request<Incoming>,
) -> Response<Body> {
    if !is_json(&request) {
        return text(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Unsupported Media Type");
    }
    let connection_id = header(&request, HEADER_CONNECTION_ID).map(str::to_owned);
    let session_header = header(&request, HEADER_SESSION_ID).map(str::to_owned);
    let connection = match &connection_id {
        Some(_) => match connection_of(&inner, &request) {
            Ok(connection) => Some(connection),
            Err(refusal) => return *refusal,
        },
        None => None,
    };
    let max = inner.options.max_message_size;
    let body = match Limited::new(request.into_body(), max).collect().await {
        Ok(body) => body.to_bytes(),
        Err(error) => {
            if error
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                return text(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &format!("the message is over the limit of {max} bytes"),
                );
            }
            return text(
                StatusCode::BAD_REQUEST,
                "the request body could not be read",
            );
        }
    };
    let first = body.iter().find(|b| !b.is_ascii_whitespace()).copied();
    if first == Some(b'[') {
        let mut answer = error_line(None, -32600, "JSON-RPC batches are not supported");
        answer.pop();
        return json(StatusCode::BAD_REQUEST, answer);
    }
    if serde_json::from_slice::<&serde_json::value::RawValue>(&body).is_err() {
        return text(StatusCode::BAD_REQUEST, "Invalid JSON");
    }
    let Some(seen) = inspect(&body) else {
        return text(StatusCode::BAD_REQUEST, "Invalid JSON-RPC message");
    };
    let is_initialize = seen.kind == Kind::Request && seen.method.as_deref() == Some("initialize");
    let Some(connection) = connection else {
        if is_initialize {
            return initialize(inner, peer, body, seen).await;
        }
        return text(StatusCode::BAD_REQUEST, "Missing Acp-Connection-Id");
    };
    if is_initialize {
        return text(
            StatusCode::BAD_REQUEST,
            "Initialize not allowed on existing connection",
        );
    }
    connection.touch();
    match seen.kind {
        Kind::Response => {
            let route = seen
                .id
                .as_ref()
                .and_then(|id| lock(&connection.state).answers.get(id).cloned());
            if let Some(Route::Session(session)) = &route {
                match &session_header {
                    None => return text(StatusCode::BAD_REQUEST, "Missing Acp-Session-Id"),
                    Some(given) if given != session => {
                        return text(StatusCode::BAD_REQUEST, "Mismatched Acp-Session-Id");
                    }
                    Some(_) => {}
                }
            }
            if let Some(id) = &seen.id {
                lock(&connection.state).answers.remove(id);
            }
        }
        Kind::Request | Kind::Notification => {
            let method = seen.method.as_deref().unwrap_or("");
            let needs_session = is_session_scoped(method) || seen.params_session.is_some();
            if needs_session && session_header.is_none() {
                return text(StatusCode::BAD_REQUEST, "Missing Acp-Session-Id");
            }
            if let (Some(given), Some(named)) = (&session_header, &seen.params_session)
                && given != named
            {
                return text(StatusCode::BAD_REQUEST, "Mismatched Acp-Session-Id");
            }
            if seen.kind == Kind::Request {
                // A request makes the agent answer: wait until the client
                // has read enough to make room.
                if !connection.wait_for_room().await {
                    return text(StatusCode::NOT_FOUND, "Unknown Acp-Connection-Id");
                }
                let route = match (&session_header, method) {
                    (_, "session/load") | (None, _) => Route::Connection,
                    (Some(session), _) => Route::Session(session.clone()),
                };
                if let Some(id) = &seen.id {
                    lock(&connection.state).pending.insert(id.clone(), route);
                }
            }
        }
    }
    if !connection.forward(&body).await {
        return text(StatusCode::NOT_FOUND, "Unknown Acp-Connection-Id");
    }
    empty(StatusCode::ACCEPTED)
}

/// `POST /acp` of `initialize` without a connection: a new connection,
/// answered with the agent's response.
async fn initialize(
    inner: Arc<Inner>,
    peer: SocketAddr,
    body: Bytes,
    seen: Inspected,
) -> Response<Body> {
    let Some(request_id) = seen.id.clone().filter(|id| id != "null") else {
        return text(
            StatusCode::BAD_REQUEST,
            "Initialize request must include an ID",
        );
    };
    let (info, slot, upstream) = match inner.open(peer, Profile::Http) {
        Ok(opened) => opened,
        Err(refusal) => return *refusal,
    };
    let (to_agent, mut from_agent, keep) = upstream.start(inner.options.max_message_size);
    let connection = Arc::new(HttpConnection {
        info,
        inner: Arc::clone(&inner),
        state: Mutex::new(State::default()),
        to_agent: Mutex::new(Some(to_agent)),
        keep: Mutex::new(Some((keep, slot))),
        progress: Notify::new(),
        closed: CancellationToken::new(),
        reason: OnceLock::new(),
        started: Instant::now(),
        received: AtomicU64::new(0),
        sent: AtomicU64::new(0),
    });
    let id = connection.info.id.clone();
    info!(target: "acp::remote", %id, %peer, profile = "http", "connection opened");
    if !connection.forward(&body).await {
        connection.close("the agent did not take initialize");
        return text(StatusCode::INTERNAL_SERVER_ERROR, "the agent exited");
    }
    // The answer: the agent's response to this id. Anything the agent says
    // before it is routed as usual.
    let answer = tokio::time::timeout(inner.options.idle_timeout, async {
        loop {
            match from_agent.next_frame().await {
                Ok(Some(Frame::Message(line))) => {
                    let seen = inspect(line);
                    if let Some(s) = &seen
                        && s.kind == Kind::Response
                        && s.id.as_deref() == Some(request_id.as_str())
                    {
                        return Some(Bytes::copy_from_slice(line));
                    }
                    connection.sent.fetch_add(1, Ordering::Relaxed);
                    let _ = connection.route(line, seen.as_ref());
                }
                Ok(Some(Frame::TooLong { .. })) => {}
                Ok(None) | Err(_) => return None,
            }
        }
    })
    .await;
    let answer = match answer {
        Ok(Some(answer)) => answer,
        Ok(None) => {
            connection.close("the agent exited before answering initialize");
            return initialize_failed(&request_id, "the agent exited before answering initialize");
        }
        Err(_) => {
            connection.close("the agent did not answer initialize");
            return initialize_failed(&request_id, "the agent did not answer initialize in time");
        }
    };
    connection.sent.fetch_add(1, Ordering::Relaxed);
    connection.touch();
    lock(&inner.http).insert(id.clone(), Arc::clone(&connection));
    tokio::spawn(Arc::clone(&connection).run_router(from_agent));
    tokio::spawn(Arc::clone(&connection).watch_idle());
    let mut response = json(StatusCode::OK, answer);
    if let Ok(value) = ::http::HeaderValue::from_str(&id) {
        response.headers_mut().insert(HEADER_CONNECTION_ID, value);
    }
    response
}

fn initialize_failed(id: &str, why: &str) -> Response<Body> {
    let mut answer = error_line(Some(id), -32603, "Initialize failed");
    answer.pop();
    let answer = String::from_utf8_lossy(&answer).replacen(
        "\"message\":\"Initialize failed\"",
        &format!(
            "\"message\":\"Initialize failed\",\"data\":{}",
            serde_json::Value::String(why.to_owned())
        ),
        1,
    );
    json(StatusCode::INTERNAL_SERVER_ERROR, answer)
}

/// `DELETE /acp`: ends the connection.
pub(super) fn delete(inner: Arc<Inner>, request: Request<Incoming>) -> Response<Body> {
    match connection_of(&inner, &request) {
        Ok(connection) => {
            connection.close("deleted by the client");
            empty(StatusCode::ACCEPTED)
        }
        Err(refusal) => *refusal,
    }
}

/// `GET /acp` without an upgrade: the connection's or a session's SSE stream.
pub(super) fn get(inner: Arc<Inner>, request: Request<Incoming>) -> Response<Body> {
    let accepts = header(&request, "accept")
        .is_some_and(|v| v.to_ascii_lowercase().contains("text/event-stream"));
    if !accepts {
        return text(StatusCode::NOT_ACCEPTABLE, "Not Acceptable");
    }
    let connection = match connection_of(&inner, &request) {
        Ok(connection) => connection,
        Err(refusal) => return *refusal,
    };
    let route = header(&request, HEADER_SESSION_ID)
        .map_or(Route::Connection, |s| Route::Session(s.to_owned()));
    let wake = {
        let mut state = lock(&connection.state);
        if state.finished {
            return text(StatusCode::NOT_FOUND, "Unknown Acp-Connection-Id");
        }
        let mailbox = state.mailbox(&route);
        if mailbox.leased {
            return text(
                StatusCode::CONFLICT,
                "Outbound stream already has an active receiver",
            );
        }
        mailbox.leased = true;
        let wake = Arc::clone(&mailbox.wake);
        state.readers += 1;
        state.last_activity = Some(Instant::now());
        wake
    };
    let lease = Lease {
        connection,
        route,
        wake,
    };
    let stream = futures::stream::unfold(lease, |lease| async move {
        let data = lease.next().await?;
        Some((
            Ok::<_, std::convert::Infallible>(BodyFrame::data(data)),
            lease,
        ))
    });
    let mut response = Response::new(StreamBody::new(stream).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(
        ::http::header::CONTENT_TYPE,
        ::http::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        ::http::header::CACHE_CONTROL,
        ::http::HeaderValue::from_static("no-cache"),
    );
    response
}

/// A GET reading one mailbox; released when its body is dropped.
struct Lease {
    connection: Arc<HttpConnection>,
    route: Route,
    wake: Arc<Notify>,
}

impl Lease {
    /// The next SSE chunk: a message, or a keep-alive comment; `None` when
    /// the stream ends.
    async fn next(&self) -> Option<Bytes> {
        let connection = &self.connection;
        loop {
            {
                let mut state = lock(&connection.state);
                let mailbox = state.mailbox(&self.route);
                if let Some(message) = mailbox.queue.pop_front() {
                    state.buffered -= message.len();
                    drop(state);
                    connection.progress.notify_waiters();
                    let mut event = Vec::with_capacity(message.len() + 8);
                    event.extend_from_slice(b"data: ");
                    event.extend_from_slice(&message);
                    event.extend_from_slice(b"\n\n");
                    return Some(Bytes::from(event));
                }
                if state.finished {
                    return None;
                }
            }
            tokio::select! {
                () = self.wake.notified() => {}
                () = tokio::time::sleep(KEEP_ALIVE) => return Some(Bytes::from_static(b":\n\n")),
                () = connection.closed.cancelled() => return None,
            }
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let mut state = lock(&self.connection.state);
        state.readers -= 1;
        state.last_activity = Some(Instant::now());
        match &self.route {
            Route::Connection => state.connection.leased = false,
            Route::Session(id) => {
                let empty = state.sessions.get(id).is_some_and(|m| m.queue.is_empty());
                if empty {
                    state.sessions.remove(id);
                } else if let Some(mailbox) = state.sessions.get_mut(id) {
                    mailbox.leased = false;
                }
            }
        }
    }
}
