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
//!
//! Each mailbox numbers its messages ([`Outbox`]); when connections are kept
//! for a resume, each SSE event carries its number as `id`, what was sent
//! is kept (up to `max_replay_bytes`, oldest first out), and a GET with
//! `Last-Event-ID` takes the stream over from whoever reads it and goes on
//! after that event. A client is away while it has no stream open.

use super::Entry;
use super::conn::{Core, Lookup};
use super::lock;
use super::outbox::Outbox;
use super::{Body, Inner, Profile, empty, json, text};
use crate::codec::{Frame, LineReader};
use crate::remote::message::{Inspected, Kind, error_line, inspect, is_session_scoped};
use crate::remote::{HEADER_CONNECTION_ID, HEADER_RESENT, HEADER_RESUMABLE, HEADER_SESSION_ID};
use crate::transport::BoxedReader;
use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tracing::{info, warn};

mod sse;
pub(super) use sse::get;

/// How often, at most, an open SSE stream with nothing to say sends a
/// comment (more often with an idle timeout under 45 s: three per period).
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
    outbox: Outbox,
    /// A GET is reading it.
    leased: bool,
    /// Which GET: a resume makes a new one, and the old one ends.
    generation: u64,
    wake: Arc<Notify>,
}

#[derive(Default)]
struct State {
    connection: Mailbox,
    sessions: HashMap<String, Mailbox>,
    /// Bytes waiting in every mailbox.
    buffered: usize,
    /// Bytes sent and kept for a resume, in every mailbox.
    retained: usize,
    /// The order messages were sent in, to forget the oldest kept first.
    retained_order: VecDeque<(Route, u64)>,
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
        self.sessions
            .values()
            .filter(|m| !m.leased && !m.outbox.is_drained())
            .count()
    }

    /// Forgets the oldest messages kept for a resume while more than `max`
    /// bytes are kept.
    fn trim(&mut self, max: usize) {
        while self.retained > max {
            let Some((route, seq)) = self.retained_order.pop_front() else {
                break;
            };
            let mailbox = match &route {
                Route::Connection => Some(&mut self.connection),
                Route::Session(id) => self.sessions.get_mut(id),
            };
            // A stale entry (its message was sent again, or its stream is
            // gone) names nothing older than what the mailbox keeps.
            if let Some(mailbox) = mailbox
                && mailbox
                    .outbox
                    .oldest_sent()
                    .is_some_and(|oldest| oldest <= seq)
                && let Some((_, len)) = mailbox.outbox.drop_oldest_sent()
            {
                self.retained -= len;
            }
        }
    }
}

/// One Streamable HTTP connection.
pub(crate) struct HttpConnection {
    pub core: Arc<Core>,
    state: Mutex<State>,
    /// Woken when output is taken (or the connection closes).
    progress: Notify,
}

fn header<'a>(request: &'a Request<Incoming>, name: &str) -> Option<&'a str> {
    request.headers().get(name).and_then(|v| v.to_str().ok())
}

impl HttpConnection {
    /// Closes the connection for `reason` (see [`Core::close`]): its streams
    /// end, the agent's input closes and the agent goes.
    pub(crate) fn close(&self, reason: &str, remember: bool) {
        if !self.core.close(reason, remember) {
            return;
        }
        {
            let mut state = lock(&self.state);
            state.finished = true;
            state.connection.wake.notify_waiters();
            for mailbox in state.sessions.values() {
                mailbox.wake.notify_waiters();
            }
        }
        self.progress.notify_waiters();
    }

    /// Whether a client reads a stream of the connection.
    pub(crate) fn attached(&self) -> bool {
        lock(&self.state).readers > 0
    }

    /// Bytes waiting for the client, and kept for a resume.
    pub(crate) fn buffered(&self) -> usize {
        let state = lock(&self.state);
        state.buffered + state.retained
    }

    fn touch(&self) {
        lock(&self.state).last_activity = Some(Instant::now());
    }

    /// Waits while the client has `max_buffered_bytes` of output to read;
    /// false (after closing the connection) if it took none for
    /// `max_output_stall`, or the client is away and the connection kept for
    /// a resume.
    async fn wait_for_room(&self) -> bool {
        let options = &self.core.inner.options;
        loop {
            let notified = self.progress.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let state = lock(&self.state);
                if state.buffered < options.max_buffered_bytes || state.finished {
                    return !self.core.closed.is_cancelled();
                }
                if state.readers == 0 && options.resumable() {
                    drop(state);
                    self.close(
                        &format!(
                            "the client was away while the agent's output passed max_buffered_bytes ({} bytes)",
                            options.max_buffered_bytes
                        ),
                        true,
                    );
                    return false;
                }
            }
            if tokio::time::timeout(options.max_output_stall, notified)
                .await
                .is_err()
            {
                let buffered = lock(&self.state).buffered;
                if lock(&self.state).readers == 0 && options.resumable() {
                    // The client went meanwhile: the check above decides.
                    continue;
                }
                self.close(
                    &format!(
                        "output stalled: the client read none of its {} bytes of output for {} s",
                        buffered,
                        options.max_output_stall.as_secs()
                    ),
                    true,
                );
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
        let max_streams = self.core.inner.options.max_buffered_session_streams;
        if let Route::Session(id) = &route
            && !state
                .sessions
                .get(id)
                .is_some_and(|m| m.leased || !m.outbox.is_drained())
            && state.unread_sessions() >= max_streams
        {
            return Err(format!(
                "more than {max_streams} session streams hold output nobody reads (max_buffered_session_streams)"
            ));
        }
        state.buffered += line.len();
        let mailbox = state.mailbox(&route);
        mailbox.outbox.push(Bytes::copy_from_slice(line));
        mailbox.wake.notify_waiters();
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
                () = self.core.closed.cancelled() => return,
            };
            match frame {
                Ok(Some(Frame::Message(line))) => {
                    let seen = inspect(line);
                    self.core.note_agent(line, seen.as_ref());
                    if let Err(why) = self.route(line, seen.as_ref()) {
                        self.close(&why, true);
                        return;
                    }
                }
                Ok(Some(Frame::TooLong { size, .. })) => {
                    warn!(target: "acp::remote", id = %self.core.info.id, size, "the agent wrote a message over the size limit; dropped");
                }
                Ok(None) | Err(_) => {
                    // Let the streams drain what is there, then end.
                    {
                        let mut state = lock(&self.state);
                        state.finished = true;
                        state.connection.wake.notify_waiters();
                        for mailbox in state.sessions.values() {
                            mailbox.wake.notify_waiters();
                        }
                    }
                    self.drain_then_close().await;
                    return;
                }
            }
        }
    }

    /// After the agent's output ended: closes once the streams took all of
    /// it, or after the stall limit (the keep time, when the client is
    /// away and the connection kept for a resume).
    async fn drain_then_close(&self) {
        let options = &self.core.inner.options;
        let patience = if options.resumable() {
            options.max_output_stall.max(options.keep_sessions)
        } else {
            options.max_output_stall
        };
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let notified = self.progress.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if lock(&self.state).buffered == 0 || self.core.closed.is_cancelled() {
                break;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                break;
            }
        }
        self.close("the agent exited", true);
    }

    /// Closes the connection once it has had no stream open and no POST for
    /// the idle timeout, or, when connections are kept for a resume, for the
    /// keep time (a client with no stream open is away).
    async fn watch_idle(self: Arc<Self>) {
        let options = &self.core.inner.options;
        let (idle, why) = if options.resumable() {
            (
                options.keep_sessions,
                format!(
                    "no client resumed the connection within {} s",
                    options.keep_sessions.as_secs_f64()
                ),
            )
        } else {
            (
                options.idle_timeout,
                format!("idle for {} s", options.idle_timeout.as_secs_f64()),
            )
        };
        loop {
            let wake_at = {
                let state = lock(&self.state);
                let last = state.last_activity.unwrap_or(self.core.started);
                if state.readers == 0 && last.elapsed() >= idle {
                    None
                } else {
                    Some(last + idle)
                }
            };
            let Some(wake_at) = wake_at else {
                self.close(&why, true);
                return;
            };
            let wake_at = tokio::time::Instant::from_std(
                wake_at.max(Instant::now() + Duration::from_millis(10)),
            );
            tokio::select! {
                () = tokio::time::sleep_until(wake_at) => {}
                () = self.core.closed.cancelled() => return,
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
    match lock(&inner.connections).lookup(id) {
        Lookup::Live(Entry::Http(connection)) => Ok(connection),
        Lookup::Closed(reason) => Err(Box::new(super::gone(&reason))),
        Lookup::Live(Entry::Ws(_)) | Lookup::Unknown => Err(Box::new(text(
            StatusCode::NOT_FOUND,
            "Unknown Acp-Connection-Id",
        ))),
    }
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
    let resent = header(&request, HEADER_RESENT) == Some("1");
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
    let Some(mut seen) = inspect(&body) else {
        return text(StatusCode::BAD_REQUEST, "Invalid JSON-RPC message");
    };
    seen.resent = resent;
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
        }
    }
    // A copy of what the agent has (sent again after a broken connection)
    // is taken, and dropped.
    if !lock(&connection.core.dedup).pass_client(Some(&seen)) {
        info!(target: "acp::remote", id = %connection.core.info.id, message_id = seen.id.as_deref().unwrap_or(""), "dropped a copy the client sent again");
        return empty(StatusCode::ACCEPTED);
    }
    match seen.kind {
        Kind::Response => {
            if let Some(id) = &seen.id {
                lock(&connection.state).answers.remove(id);
            }
        }
        Kind::Request => {
            // A request makes the agent answer: wait until the client has
            // read enough to make room.
            if !connection.wait_for_room().await {
                return text(StatusCode::NOT_FOUND, "Unknown Acp-Connection-Id");
            }
            let method = seen.method.as_deref().unwrap_or("");
            let route = match (&session_header, method) {
                (_, "session/load") | (None, _) => Route::Connection,
                (Some(session), _) => Route::Session(session.clone()),
            };
            if let Some(id) = &seen.id {
                lock(&connection.state).pending.insert(id.clone(), route);
            }
        }
        Kind::Notification => {}
    }
    if !connection.core.forward(&body).await {
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
    let (to_agent, mut from_agent, keep, label) = upstream.start(inner.options.max_message_size);
    let connection = Arc::new(HttpConnection {
        core: Arc::new(Core::new(
            Arc::clone(&inner),
            info,
            label,
            to_agent,
            keep,
            slot,
        )),
        state: Mutex::new(State::default()),
        progress: Notify::new(),
    });
    let core = &connection.core;
    let id = core.info.id.clone();
    info!(target: "acp::remote", %id, %peer, profile = "http", "connection opened");
    if !core.forward(&body).await {
        connection.close("the agent did not take initialize", true);
        return text(StatusCode::INTERNAL_SERVER_ERROR, "the agent exited");
    }
    // The answer: the agent's response to this id. Anything the agent says
    // before it is routed as usual.
    let answer = tokio::time::timeout(inner.options.idle_timeout, async {
        loop {
            match from_agent.next_frame().await {
                Ok(Some(Frame::Message(line))) => {
                    let seen = inspect(line);
                    core.note_agent(line, seen.as_ref());
                    if let Some(s) = &seen
                        && s.kind == Kind::Response
                        && s.id.as_deref() == Some(request_id.as_str())
                    {
                        return Some(Bytes::copy_from_slice(line));
                    }
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
            connection.close("the agent exited before answering initialize", true);
            return initialize_failed(&request_id, "the agent exited before answering initialize");
        }
        Err(_) => {
            connection.close("the agent did not answer initialize", true);
            return initialize_failed(&request_id, "the agent did not answer initialize in time");
        }
    };
    core.sent.fetch_add(1, Ordering::Relaxed);
    connection.touch();
    lock(&inner.connections).insert(Entry::Http(Arc::clone(&connection)));
    tokio::spawn(Arc::clone(&connection).run_router(from_agent));
    tokio::spawn(Arc::clone(&connection).watch_idle());
    let mut response = json(StatusCode::OK, answer);
    let headers = response.headers_mut();
    if let Ok(value) = ::http::HeaderValue::from_str(&id) {
        headers.insert(HEADER_CONNECTION_ID, value);
    }
    if inner.options.resumable() {
        headers.insert(
            HEADER_RESUMABLE,
            ::http::HeaderValue::from(inner.options.keep_sessions.as_secs().max(1)),
        );
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
            connection.close("deleted by the client", false);
            empty(StatusCode::ACCEPTED)
        }
        Err(refusal) => *refusal,
    }
}
