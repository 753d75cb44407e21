//! The WebSocket profile's server side.
//!
//! One [`WsConnection`] per connection. A pump task reads the agent's output
//! into a numbered [`Outbox`]; the socket of the moment (an *attachment*)
//! sends from it and passes the client's text frames to the agent. When the
//! socket goes without a close from the client (it broke, went quiet, or
//! stopped reading), the connection is *detached*: it waits
//! [`keep_sessions`](super::ServerOptions::keep_sessions) for a resume while
//! the agent's output piles up in the outbox (past `max_buffered_bytes` the
//! connection closes). A resume (an upgrade naming the connection and the
//! last message the client has) takes over: a socket still attached is
//! closed with code 4409, the outbox is rewound to the client's place, the
//! upgrade's answer says how many of the client's messages the server has,
//! and the new socket goes on from there.

use super::Entry;
use super::conn::{Core, Lookup};
use super::lock;
use super::outbox::Outbox;
use super::{Body, ConnectionInfo, Inner, Profile, Slot, Upstream, empty, text};
use crate::codec::{Frame, LineReader};
use crate::remote::message::{Kind, error_line, inspect};
use crate::remote::{
    CLOSE_RESUMABLE, CLOSE_TAKEN_OVER, HEADER_CONNECTION_ID, HEADER_LAST_EVENT_ID, HEADER_RECEIVED,
    HEADER_RESUMABLE,
};
use crate::transport::BoxedReader;
use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, mpsc};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

type Socket = WebSocketStream<hyper_util::rt::TokioIo<hyper::upgrade::Upgraded>>;

/// Whether a client is there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Presence {
    /// The socket of this generation is the connection's.
    Attached(u64),
    /// The socket of this generation went away; the connection waits for a
    /// resume.
    Detached(u64),
}

/// The socket of the moment.
struct Attachment {
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

/// The agent's output, numbered.
#[derive(Default)]
struct Out {
    outbox: Outbox,
    /// The agent's output has ended: once the outbox is sent, so is the
    /// connection.
    finished: bool,
}

/// One WebSocket connection, across the sockets that carry it.
pub(crate) struct WsConnection {
    pub core: Arc<Core>,
    out: Mutex<Out>,
    /// Output was queued (the writer waits for it).
    more: Notify,
    /// Output was taken, or the client went (the pump waits for it).
    room: Notify,
    presence: Mutex<Presence>,
    generation: AtomicU64,
    /// Held while a socket is attached or taken over, so that two resumes
    /// take turns.
    attachment: Arc<tokio::sync::Mutex<Option<Attachment>>>,
    /// The first message was initialize.
    initialized: AtomicBool,
    /// Text frames of the client taken in (what a resume's `Acp-Received`
    /// says).
    frames_in: AtomicU64,
}

/// Answers an upgrade request with `101` and starts (or resumes) the
/// connection on the upgraded stream.
pub(super) async fn upgrade(
    inner: Arc<Inner>,
    peer: SocketAddr,
    mut request: Request<Incoming>,
) -> Response<Body> {
    let headers = request.headers();
    let key = headers.get("sec-websocket-key").cloned();
    let version_ok = headers
        .get("sec-websocket-version")
        .is_some_and(|v| v.as_bytes() == b"13");
    let Some(key) = key.filter(|_| version_ok) else {
        return text(StatusCode::BAD_REQUEST, "Bad WebSocket upgrade request");
    };
    let resume = match headers.get(HEADER_CONNECTION_ID) {
        None => None,
        Some(id) => {
            let last = headers
                .get(HEADER_LAST_EVENT_ID)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok());
            let (Ok(id), Some(last)) = (id.to_str(), last) else {
                return text(
                    StatusCode::BAD_REQUEST,
                    "a resume needs Acp-Connection-Id and Last-Event-ID (the number of the last message received)",
                );
            };
            Some((id.to_owned(), last))
        }
    };
    let (conn, mut attachment, received) = match resume {
        None => {
            let (info, slot, upstream) = match inner.open(peer, Profile::WebSocket) {
                Ok(opened) => opened,
                Err(refusal) => return *refusal,
            };
            let conn = WsConnection::start(&inner, info, slot, upstream);
            let attachment = Arc::clone(&conn.attachment).lock_owned().await;
            (conn, attachment, None)
        }
        Some((id, last)) => {
            if !inner.options.resumable() {
                return text(
                    StatusCode::CONFLICT,
                    "this server does not keep connections for a resume",
                );
            }
            let conn = match lock(&inner.connections).lookup(&id) {
                Lookup::Live(Entry::Ws(conn)) => conn,
                Lookup::Live(Entry::Http(_)) => {
                    return text(
                        StatusCode::BAD_REQUEST,
                        "that connection uses Streamable HTTP, not WebSocket",
                    );
                }
                Lookup::Closed(reason) => return super::gone(&reason),
                Lookup::Unknown => {
                    return text(StatusCode::NOT_FOUND, "Unknown Acp-Connection-Id");
                }
            };
            let attachment = Arc::clone(&conn.attachment).lock_owned().await;
            match conn.take_over(last, attachment, peer).await {
                Ok((attachment, received)) => (conn, attachment, Some(received)),
                Err(refusal) => return *refusal,
            }
        }
    };
    let generation = conn.generation.fetch_add(1, Ordering::AcqRel) + 1;
    *lock(&conn.presence) = Presence::Attached(generation);
    let cancel = CancellationToken::new();
    let on_upgrade = hyper::upgrade::on(&mut request);
    let task = {
        let conn = Arc::clone(&conn);
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::select! {
                upgraded = on_upgrade => match upgraded {
                    Ok(upgraded) => {
                        let options = &conn.core.inner.options;
                        let config = WebSocketConfig::default()
                            .max_message_size(Some(options.max_message_size))
                            .max_frame_size(Some(options.max_message_size));
                        let socket = WebSocketStream::from_raw_socket(
                            hyper_util::rt::TokioIo::new(upgraded),
                            Role::Server,
                            Some(config),
                        )
                        .await;
                        Arc::clone(&conn).run(generation, cancel, socket).await;
                    }
                    Err(error) => {
                        warn!(target: "acp::remote", id = %conn.core.info.id, %error, "WebSocket upgrade failed");
                        conn.lost(generation, "the WebSocket upgrade failed");
                    }
                },
                () = cancel.cancelled() => {}
            }
        })
    };
    *attachment = Some(Attachment { cancel, task });
    drop(attachment);

    let mut response = empty(StatusCode::SWITCHING_PROTOCOLS);
    let headers = response.headers_mut();
    headers.insert(
        ::http::header::UPGRADE,
        ::http::HeaderValue::from_static("websocket"),
    );
    headers.insert(
        ::http::header::CONNECTION,
        ::http::HeaderValue::from_static("Upgrade"),
    );
    if let Ok(accept) = ::http::HeaderValue::from_str(&derive_accept_key(key.as_bytes())) {
        headers.insert("sec-websocket-accept", accept);
    }
    if let Ok(id) = ::http::HeaderValue::from_str(&conn.core.info.id) {
        headers.insert(HEADER_CONNECTION_ID, id);
    }
    let options = &conn.core.inner.options;
    if options.resumable() {
        headers.insert(
            HEADER_RESUMABLE,
            ::http::HeaderValue::from(options.keep_sessions.as_secs().max(1)),
        );
    }
    if let Some(received) = received {
        headers.insert(HEADER_RECEIVED, ::http::HeaderValue::from(received));
    }
    response
}

/// The attachment lock, held across a takeover.
type AttachmentGuard = tokio::sync::OwnedMutexGuard<Option<Attachment>>;

/// How a socket's end leaves the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// The connection ends (the client closed it, the agent exited, a
    /// protocol error, the server stops).
    End,
    /// The socket went without a close from the client: the connection is
    /// kept for a resume (or ends, when nothing is kept).
    Lost,
    /// Another socket resumed the connection.
    TakenOver,
}

/// What the reading side asks the writing side to do.
enum Control {
    /// Close the socket with this code and reason.
    Close(CloseCode, String, Fate),
}

/// Why a socket ended.
struct Ending {
    code: CloseCode,
    reason: String,
    fate: Fate,
}

impl Ending {
    fn new(code: CloseCode, reason: impl Into<String>, fate: Fate) -> Self {
        Ending {
            code,
            reason: reason.into(),
            fate,
        }
    }

    fn lost(reason: impl Into<String>) -> Self {
        Ending::new(CloseCode::Abnormal, reason, Fate::Lost)
    }
}

impl WsConnection {
    /// A new connection on `upstream`: registered, its pump started.
    fn start(
        inner: &Arc<Inner>,
        info: ConnectionInfo,
        slot: Slot,
        upstream: Upstream,
    ) -> Arc<Self> {
        let (to_agent, from_agent, keep, label) = upstream.start(inner.options.max_message_size);
        info!(target: "acp::remote", id = %info.id, peer = %info.peer, profile = "websocket", "connection opened");
        let core = Arc::new(Core::new(
            Arc::clone(inner),
            info,
            label,
            to_agent,
            keep,
            slot,
        ));
        let conn = Arc::new(WsConnection {
            core,
            out: Mutex::new(Out::default()),
            more: Notify::new(),
            room: Notify::new(),
            presence: Mutex::new(Presence::Attached(0)),
            generation: AtomicU64::new(0),
            attachment: Arc::new(tokio::sync::Mutex::new(None)),
            initialized: AtomicBool::new(false),
            frames_in: AtomicU64::new(0),
        });
        lock(&inner.connections).insert(Entry::Ws(Arc::clone(&conn)));
        tokio::spawn(Arc::clone(&conn).pump(from_agent));
        conn
    }

    pub fn attached(&self) -> bool {
        matches!(*lock(&self.presence), Presence::Attached(_))
    }

    pub fn buffered(&self) -> usize {
        let out = lock(&self.out);
        out.outbox.unsent_bytes() + out.outbox.sent_bytes()
    }

    /// Closes the connection (see [`Core::close`]).
    pub fn close(&self, reason: &str, remember: bool) {
        if self.core.close(reason, remember) {
            self.more.notify_one();
            self.room.notify_one();
        }
    }

    /// Ends the socket of `old` generation (if any), and puts the outbox
    /// back where the client is; the number of the client's messages the
    /// server has.
    async fn take_over(
        self: &Arc<Self>,
        last: u64,
        mut attachment: AttachmentGuard,
        peer: SocketAddr,
    ) -> Result<(AttachmentGuard, u64), Box<Response<Body>>> {
        if let Some(reason) = self.core.reason() {
            return Err(Box::new(super::gone(reason)));
        }
        if let Err(gap) = lock(&self.out).outbox.can_resume(last) {
            return Err(Box::new(text(StatusCode::CONFLICT, &gap.to_string())));
        }
        let before = *lock(&self.presence);
        if let Some(old) = attachment.take() {
            old.cancel.cancel();
            let _ = old.task.await;
        }
        if let Some(reason) = self.core.reason() {
            return Err(Box::new(super::gone(reason)));
        }
        let again = match lock(&self.out).outbox.rewind(last) {
            Ok(again) => again,
            Err(gap) => {
                // The socket taken over is gone: wait for another resume.
                if let Presence::Attached(generation) = before {
                    self.lost(generation, "a resume failed");
                }
                return Err(Box::new(text(StatusCode::CONFLICT, &gap.to_string())));
            }
        };
        let received = self.frames_in.load(Ordering::Acquire);
        info!(
            target: "acp::remote",
            id = %self.core.info.id,
            %peer,
            profile = "websocket",
            after = last,
            resent = again,
            received,
            taken_over = matches!(before, Presence::Attached(_)),
            "connection resumed"
        );
        self.more.notify_one();
        Ok((attachment, received))
    }

    /// The socket of `generation` went without a close from the client:
    /// the connection waits for a resume for the keep time, or closes now
    /// when nothing is kept.
    fn lost(self: &Arc<Self>, generation: u64, reason: &str) {
        let keep = self.core.inner.options.keep_sessions;
        if keep.is_zero() {
            self.close(reason, true);
            return;
        }
        {
            let mut presence = lock(&self.presence);
            if *presence != Presence::Attached(generation) {
                return;
            }
            *presence = Presence::Detached(generation);
        }
        info!(
            target: "acp::remote",
            id = %self.core.info.id,
            reason,
            keep_s = keep.as_secs_f64(),
            "the client went away; the connection is kept for a resume"
        );
        self.room.notify_one();
        let conn = Arc::clone(self);
        tokio::spawn(async move {
            tokio::select! {
                () = tokio::time::sleep(keep) => {
                    let still = *lock(&conn.presence) == Presence::Detached(generation);
                    if still {
                        conn.close(
                            &format!(
                                "no client resumed the connection within {} s",
                                keep.as_secs_f64()
                            ),
                            true,
                        );
                    }
                }
                () = conn.core.closed.cancelled() => {}
            }
        });
    }

    /// Reads the agent's output into the outbox until it ends or the
    /// connection closes.
    async fn pump(self: Arc<Self>, mut from_agent: LineReader<BoxedReader>) {
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
                    lock(&self.out).outbox.push(Bytes::copy_from_slice(line));
                    self.more.notify_one();
                }
                Ok(Some(Frame::TooLong { size, .. })) => {
                    warn!(target: "acp::remote", id = %self.core.info.id, size, "the agent wrote a message over the size limit; dropped");
                }
                Ok(None) | Err(_) => {
                    lock(&self.out).finished = true;
                    self.more.notify_one();
                    return;
                }
            }
        }
    }

    /// Waits while `max_buffered_bytes` of output wait for the client; false
    /// once the connection is closed (closing it when the client is away).
    async fn wait_for_room(&self) -> bool {
        let max = self.core.inner.options.max_buffered_bytes;
        loop {
            let room = self.room.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            if self.core.closed.is_cancelled() {
                return false;
            }
            let waiting = lock(&self.out).outbox.unsent_bytes();
            if waiting < max {
                return true;
            }
            if !self.attached() {
                self.close(
                    &format!(
                        "the client was away while the agent's output passed max_buffered_bytes ({max} bytes)"
                    ),
                    true,
                );
                return false;
            }
            tokio::select! {
                () = room => {}
                () = self.core.closed.cancelled() => return false,
            }
        }
    }

    /// The next message for the client; `None` once the agent's output ended
    /// and all of it was taken.
    async fn next_out(&self) -> Option<Bytes> {
        let options = &self.core.inner.options;
        let retain = options.resumable();
        loop {
            let more = self.more.notified();
            tokio::pin!(more);
            more.as_mut().enable();
            {
                let mut out = lock(&self.out);
                if let Some((_, message)) = out.outbox.take(retain) {
                    while out.outbox.sent_bytes() > options.max_replay_bytes {
                        out.outbox.drop_oldest_sent();
                    }
                    drop(out);
                    self.room.notify_one();
                    return Some(message);
                }
                if out.finished {
                    return None;
                }
            }
            more.await;
        }
    }

    /// Serves the connection over one socket until it ends, then does what
    /// its end means.
    async fn run(self: Arc<Self>, generation: u64, cancel: CancellationToken, socket: Socket) {
        let options = &self.core.inner.options;
        let (sink, stream) = socket.split();
        let (control_tx, control_rx) = mpsc::channel::<Control>(8);
        let mut reading =
            tokio::spawn(Arc::clone(&self).read_client(stream, control_tx, options.idle_timeout));
        let mut writing = tokio::spawn(Arc::clone(&self).write_client(
            sink,
            control_rx,
            cancel,
            (options.idle_timeout / 3).max(Duration::from_millis(100)),
        ));
        // The reader ends when the client closes or goes quiet (after telling
        // the writer how to close); the writer when the agent's output ends,
        // the client stops reading, another socket takes over, or the server
        // shuts down.
        let mut read = false;
        let ending = tokio::select! {
            _ = &mut reading => {
                read = true;
                // Let the writer send the close the reader asked for.
                match tokio::time::timeout(Duration::from_secs(2), &mut writing).await {
                    Ok(Ok(ending)) => ending,
                    _ => {
                        writing.abort();
                        Ending::lost("the connection to the client broke")
                    }
                }
            }
            ending = &mut writing => {
                ending.unwrap_or_else(|_| Ending::new(CloseCode::Error, "internal error", Fate::End))
            }
        };
        // Nothing of this socket may run on: a resume reads what it took in.
        if !read {
            reading.abort();
            let _ = reading.await;
        }
        match ending.fate {
            Fate::End => {
                // A client that closed the connection knows why.
                let remember = ending.reason != CLIENT_CLOSED;
                self.close(&ending.reason, remember);
            }
            Fate::Lost => self.lost(generation, &ending.reason),
            Fate::TakenOver => {}
        }
    }

    /// Client frames to the agent.
    async fn read_client(
        self: Arc<Self>,
        mut stream: futures::stream::SplitStream<Socket>,
        control: mpsc::Sender<Control>,
        idle: Duration,
    ) {
        let order = |code, why: String, fate| Control::Close(code, why, fate);
        loop {
            let frame = match tokio::time::timeout(idle, stream.next()).await {
                Ok(frame) => frame,
                Err(_) => {
                    let why = format!("idle: nothing from the client for {} s", idle.as_secs_f64());
                    let _ = control.send(order(CloseCode::Away, why, Fate::Lost)).await;
                    return;
                }
            };
            match frame {
                Some(Ok(Message::Text(text))) => {
                    let seen = inspect(text.as_bytes());
                    let is_initialize = seen.as_ref().is_some_and(|s| {
                        s.kind == Kind::Request && s.method.as_deref() == Some("initialize")
                    });
                    if !self.initialized.load(Ordering::Acquire) {
                        if !is_initialize {
                            let why = "the first message must be the initialize request".to_owned();
                            let _ = control
                                .send(order(CloseCode::Protocol, why, Fate::End))
                                .await;
                            return;
                        }
                        self.initialized.store(true, Ordering::Release);
                    } else if is_initialize {
                        let id = seen.as_ref().and_then(|s| s.id.as_deref());
                        let mut answer =
                            error_line(id, -32600, "Initialize not allowed on existing connection");
                        answer.pop();
                        lock(&self.out).outbox.push(Bytes::from(answer));
                        self.more.notify_one();
                        self.frames_in.fetch_add(1, Ordering::AcqRel);
                        continue;
                    }
                    let fresh = lock(&self.core.dedup).pass_client(seen.as_ref());
                    if fresh && !self.core.forward(text.as_bytes()).await {
                        return;
                    }
                    self.frames_in.fetch_add(1, Ordering::AcqRel);
                }
                Some(Ok(Message::Binary(_))) => {
                    tracing::debug!(target: "acp::remote", "ignored a binary WebSocket frame");
                }
                Some(Ok(Message::Close(_))) => {
                    let why = CLIENT_CLOSED.to_owned();
                    let _ = control.send(order(CloseCode::Normal, why, Fate::End)).await;
                    return;
                }
                Some(Ok(_)) => {}
                Some(Err(tungstenite::Error::Capacity(error))) => {
                    let why = format!("message too big: {error}");
                    let _ = control.send(order(CloseCode::Size, why, Fate::End)).await;
                    return;
                }
                None | Some(Err(_)) => {
                    let why = "the connection to the client broke".to_owned();
                    let _ = control
                        .send(order(CloseCode::Abnormal, why, Fate::Lost))
                        .await;
                    return;
                }
            }
        }
    }

    /// The outbox (and pings) to the client; returns why it stopped, after
    /// sending the close frame.
    async fn write_client(
        self: Arc<Self>,
        mut sink: futures::stream::SplitSink<Socket, Message>,
        mut control: mpsc::Receiver<Control>,
        cancel: CancellationToken,
        ping_every: Duration,
    ) -> Ending {
        let options = &self.core.inner.options;
        let stall = options.max_output_stall;
        let shutdown = self.core.inner.shutdown.clone();
        let mut ping = tokio::time::interval(ping_every);
        ping.tick().await;
        let ending = loop {
            let message = tokio::select! {
                biased;
                () = shutdown.cancelled() => break Ending::new(CloseCode::Away, "the server is shutting down", Fate::End),
                () = cancel.cancelled() => break Ending::new(
                    CloseCode::from(CLOSE_TAKEN_OVER),
                    "another client resumed the connection",
                    Fate::TakenOver,
                ),
                () = self.core.closed.cancelled() => {
                    let reason = self.core.reason().unwrap_or("closed").to_owned();
                    break Ending::new(CloseCode::Error, reason, Fate::End);
                }
                order = control.recv() => match order {
                    Some(Control::Close(code, reason, fate)) => break Ending::new(code, reason, fate),
                    None => break Ending::lost("the connection to the client broke"),
                },
                next = self.next_out() => match next {
                    Some(message) => {
                        self.core.sent.fetch_add(1, Ordering::Relaxed);
                        Message::text(String::from_utf8_lossy(&message).into_owned())
                    }
                    None => break Ending::new(CloseCode::Error, "the agent exited", Fate::End),
                },
                _ = ping.tick() => Message::Ping(Vec::new().into()),
            };
            let sent = tokio::select! {
                sent = tokio::time::timeout(stall, sink.send(message)) => sent,
                // A client that stopped reading must not hold up the resume
                // that takes over from it.
                () = cancel.cancelled() => break Ending::new(
                    CloseCode::from(CLOSE_TAKEN_OVER),
                    "another client resumed the connection",
                    Fate::TakenOver,
                ),
            };
            match sent {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return Ending::lost("the connection to the client broke"),
                Err(_) => {
                    break Ending::new(
                        CloseCode::Policy,
                        format!(
                            "output stalled: the client read nothing for {} s",
                            stall.as_secs_f64()
                        ),
                        Fate::Lost,
                    );
                }
            }
        };
        // A socket lost while the connection is kept says so: the client
        // may come back.
        let code = if ending.fate == Fate::Lost && options.resumable() {
            CloseCode::from(CLOSE_RESUMABLE)
        } else {
            ending.code
        };
        if code == CloseCode::Abnormal {
            // Broken: there is no one to say goodbye to.
            return ending;
        }
        let frame = CloseFrame {
            code,
            reason: ending.reason.clone().into(),
        };
        let patience = if ending.fate == Fate::TakenOver {
            Duration::from_millis(250)
        } else {
            Duration::from_secs(2)
        };
        let _ = tokio::time::timeout(patience, async {
            let _ = sink.send(Message::Close(Some(frame))).await;
            let _ = sink.close().await;
        })
        .await;
        ending
    }
}

/// Why a connection the client closed ended.
const CLIENT_CLOSED: &str = "the client closed the connection";
