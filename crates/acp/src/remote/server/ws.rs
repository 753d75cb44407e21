//! The WebSocket profile's server side.

use super::link::line_for_agent;
use super::{Body, ConnectionInfo, Inner, Profile, Slot, Upstream, empty, text};
use crate::codec::Frame;
use crate::remote::HEADER_CONNECTION_ID;
use crate::remote::message::{Kind, error_line, inspect};
use futures::{SinkExt, StreamExt};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{self, Message};
use tracing::{info, warn};

/// Answers an upgrade request with `101` and starts the connection on the
/// upgraded stream.
pub(super) fn upgrade(
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
    let (info, slot, upstream) = match inner.open(peer, Profile::WebSocket) {
        Ok(opened) => opened,
        Err(refusal) => return *refusal,
    };
    let on_upgrade = hyper::upgrade::on(&mut request);
    let id = info.id.clone();
    tokio::spawn(async move {
        match on_upgrade.await {
            Ok(upgraded) => {
                let config = WebSocketConfig::default()
                    .max_message_size(Some(inner.options.max_message_size))
                    .max_frame_size(Some(inner.options.max_message_size));
                let socket = WebSocketStream::from_raw_socket(
                    hyper_util::rt::TokioIo::new(upgraded),
                    Role::Server,
                    Some(config),
                )
                .await;
                run(inner, info, slot, upstream, socket).await;
            }
            Err(error) => {
                warn!(target: "acp::remote", id = %info.id, %error, "WebSocket upgrade failed")
            }
        }
    });
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
    if let Ok(id) = ::http::HeaderValue::from_str(&id) {
        headers.insert(HEADER_CONNECTION_ID, id);
    }
    response
}

/// What the reading side asks the writing side to send.
enum Control {
    /// An answer the server makes itself.
    Text(String),
    /// Close with this code and reason.
    Close(CloseCode, String),
}

/// Why a connection ended.
struct Ending {
    code: CloseCode,
    reason: String,
}

impl Ending {
    fn new(code: CloseCode, reason: impl Into<String>) -> Self {
        Ending {
            code,
            reason: reason.into(),
        }
    }
}

type Socket = WebSocketStream<hyper_util::rt::TokioIo<hyper::upgrade::Upgraded>>;

async fn run(
    inner: Arc<Inner>,
    info: ConnectionInfo,
    slot: Slot,
    upstream: Upstream,
    socket: Socket,
) {
    let ConnectionInfo { id, peer, .. } = &info;
    info!(target: "acp::remote", %id, %peer, profile = "websocket", "connection opened");
    let started = Instant::now();
    let counts = Arc::new(Counts::default());
    let options = &inner.options;
    let (to_agent, from_agent, keep) = upstream.start(options.max_message_size);
    let (sink, stream) = socket.split();
    let (control_tx, control_rx) = mpsc::channel::<Control>(8);

    let mut reading = tokio::spawn(read_client(
        stream,
        to_agent,
        control_tx,
        options.idle_timeout,
        Arc::clone(&counts),
    ));
    let mut writing = tokio::spawn(write_client(
        sink,
        control_rx,
        from_agent,
        Writing {
            stall: options.max_output_stall,
            ping_every: (options.idle_timeout / 3).max(Duration::from_millis(100)),
            counts: Arc::clone(&counts),
            shutdown: inner.shutdown.clone(),
        },
    ));
    // The reader ends when the client closes or goes quiet (after telling the
    // writer how to close); the writer when the agent's output ends, the
    // client stops reading, or the server shuts down.
    let ending = tokio::select! {
        _ = &mut reading => {
            // Let the writer send the close the reader asked for.
            match tokio::time::timeout(Duration::from_secs(2), &mut writing).await {
                Ok(Ok(ending)) => ending,
                _ => {
                    writing.abort();
                    Ending::new(CloseCode::Normal, "the client closed the connection")
                }
            }
        }
        ending = &mut writing => {
            reading.abort();
            ending.unwrap_or_else(|_| Ending::new(CloseCode::Error, "internal error"))
        }
    };
    // Both tasks are done: the agent's input is closed, and its owner goes.
    drop(keep);
    drop(slot);
    info!(
        target: "acp::remote",
        %id,
        %peer,
        profile = "websocket",
        reason = %ending.reason,
        code = u16::from(ending.code),
        duration_ms = started.elapsed().as_millis() as u64,
        messages_in = counts.received.load(Ordering::Relaxed),
        messages_out = counts.sent.load(Ordering::Relaxed),
        "connection closed"
    );
}

/// Messages each way.
#[derive(Default)]
struct Counts {
    received: AtomicU64,
    sent: AtomicU64,
}

/// Client frames to the agent.
async fn read_client(
    mut stream: futures::stream::SplitStream<Socket>,
    to_agent: mpsc::Sender<Vec<u8>>,
    control: mpsc::Sender<Control>,
    idle: Duration,
    counts: Arc<Counts>,
) {
    let mut initialized = false;
    loop {
        let frame = match tokio::time::timeout(idle, stream.next()).await {
            Ok(frame) => frame,
            Err(_) => {
                let why = format!("idle: nothing from the client for {} s", idle.as_secs());
                let _ = control.send(Control::Close(CloseCode::Away, why)).await;
                return;
            }
        };
        match frame {
            Some(Ok(Message::Text(text))) => {
                let seen = inspect(text.as_bytes());
                let is_initialize = seen.as_ref().is_some_and(|s| {
                    s.kind == Kind::Request && s.method.as_deref() == Some("initialize")
                });
                if !initialized {
                    if !is_initialize {
                        let why = "the first message must be the initialize request".to_owned();
                        let _ = control.send(Control::Close(CloseCode::Protocol, why)).await;
                        return;
                    }
                    initialized = true;
                } else if is_initialize {
                    let id = seen.as_ref().and_then(|s| s.id.as_deref());
                    let mut answer =
                        error_line(id, -32600, "Initialize not allowed on existing connection");
                    answer.pop();
                    let answer = String::from_utf8_lossy(&answer).into_owned();
                    let _ = control.send(Control::Text(answer)).await;
                    continue;
                }
                counts.received.fetch_add(1, Ordering::Relaxed);
                if to_agent
                    .send(line_for_agent(text.as_bytes()))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            Some(Ok(Message::Binary(_))) => {
                tracing::debug!(target: "acp::remote", "ignored a binary WebSocket frame");
            }
            Some(Ok(Message::Close(_))) | None => return,
            Some(Ok(_)) => {}
            Some(Err(tungstenite::Error::Capacity(error))) => {
                let why = format!("message too big: {error}");
                let _ = control.send(Control::Close(CloseCode::Size, why)).await;
                return;
            }
            Some(Err(_)) => return,
        }
    }
}

/// The writer's settings.
struct Writing {
    stall: Duration,
    ping_every: Duration,
    counts: Arc<Counts>,
    shutdown: tokio_util::sync::CancellationToken,
}

/// Agent lines (and the reader's answers) to the client; returns why it
/// stopped, after sending the close frame.
async fn write_client(
    mut sink: futures::stream::SplitSink<Socket, Message>,
    mut control: mpsc::Receiver<Control>,
    mut from_agent: crate::codec::LineReader<crate::transport::BoxedReader>,
    writing: Writing,
) -> Ending {
    let mut ping = tokio::time::interval(writing.ping_every);
    ping.tick().await;
    let ending = loop {
        let message = tokio::select! {
            biased;
            () = writing.shutdown.cancelled() => break Ending::new(CloseCode::Away, "the server is shutting down"),
            order = control.recv() => match order {
                Some(Control::Text(text)) => Message::text(text),
                Some(Control::Close(code, reason)) => break Ending::new(code, reason),
                None => break Ending::new(CloseCode::Normal, "the client closed the connection"),
            },
            frame = from_agent.next_frame() => match frame {
                Ok(Some(Frame::Message(line))) => {
                    writing.counts.sent.fetch_add(1, Ordering::Relaxed);
                    Message::text(String::from_utf8_lossy(line).into_owned())
                }
                Ok(Some(Frame::TooLong { size, .. })) => {
                    warn!(target: "acp::remote", size, "the agent wrote a message over the size limit; dropped");
                    continue;
                }
                Ok(None) => break Ending::new(CloseCode::Error, "the agent exited"),
                Err(error) => break Ending::new(CloseCode::Error, format!("reading the agent failed: {error}")),
            },
            _ = ping.tick() => Message::Ping(Vec::new().into()),
        };
        match tokio::time::timeout(writing.stall, sink.send(message)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => {
                return Ending::new(CloseCode::Abnormal, "the connection to the client broke");
            }
            Err(_) => {
                break Ending::new(
                    CloseCode::Policy,
                    format!(
                        "output stalled: the client read nothing for {} s",
                        writing.stall.as_secs()
                    ),
                );
            }
        }
    };
    let frame = CloseFrame {
        code: ending.code,
        reason: ending.reason.clone().into(),
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        let _ = sink.send(Message::Close(Some(frame))).await;
        let _ = sink.close().await;
    })
    .await;
    ending
}
