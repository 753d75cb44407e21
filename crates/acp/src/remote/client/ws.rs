//! The WebSocket profile's client: one text frame per message.
//!
//! Resuming (our extension, see the module docs of `acp::remote`): both sides
//! count the text frames they send. When the socket breaks, the client opens
//! a new one naming the connection (`Acp-Connection-Id`) and how many frames
//! it got (`Last-Event-ID`); the server sends the rest again and answers how
//! many of the client's it got (`Acp-Received`), and the client sends the
//! rest of its own again.

use super::reconnect::{LinkLost, Outage};
use super::{
    ClientOptions, FromEngine, ToEngine, authority, engine_pipe, keep_time, refused, resume_refused,
};
use crate::codec::Frame;
use crate::remote::{
    CLOSE_RESUMABLE, CLOSE_TAKEN_OVER, HEADER_CONNECTION_ID, HEADER_LAST_EVENT_ID, HEADER_RECEIVED,
};
use crate::transport::Transport;
use futures::{SinkExt, StreamExt};
use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::client::Response;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{
    self, Message, client::IntoClientRequest, protocol::CloseFrame,
};

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

type Socket = WebSocketStream<Box<dyn Io>>;

/// Why a socket could not be opened.
enum OpenError {
    /// The server answered the upgrade with this status and body.
    Status(::http::StatusCode, String),
    Io(io::Error),
}

pub(super) async fn connect(uri: ::http::Uri, options: &ClientOptions) -> io::Result<Transport> {
    let (socket, response) = open(&uri, options, &[]).await.map_err(|e| match e {
        OpenError::Status(status, body) => refused(status, "the WebSocket upgrade", &body),
        OpenError::Io(e) => e,
    })?;
    let headers = response.headers();
    let id = headers
        .get(HEADER_CONNECTION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let resume = match (keep_time(headers), id) {
        (Some(keep), Some(id)) => options.outage(Some(keep)).map(|outage| Resume {
            outage,
            uri,
            options: options.clone(),
            id,
        }),
        _ => None,
    };
    // A client that asked to reconnect, of a server that does not keep
    // connections, is told so when its connection breaks.
    let refusal = match resume {
        None => options.outage(Some(std::time::Duration::ZERO)),
        Some(_) => None,
    };
    let (transport, to_engine, from_engine) = engine_pipe(options.max_message_size);
    let max_resend = options
        .reconnect
        .as_ref()
        .map_or(0, |policy| policy.max_resend_bytes);
    tokio::spawn(bridge(
        socket,
        to_engine,
        from_engine,
        resume,
        refusal,
        max_resend,
    ));
    Ok(transport)
}

/// Opens a socket to `uri`, with `extra` headers.
async fn open(
    uri: &::http::Uri,
    options: &ClientOptions,
    extra: &[(&'static str, String)],
) -> Result<(Socket, Response), OpenError> {
    let secure = uri.scheme_str() == Some("wss");
    let (host, port) = authority(uri, secure).map_err(OpenError::Io)?;
    let invalid = |e: String| OpenError::Io(io::Error::new(io::ErrorKind::InvalidInput, e));
    let mut request = uri
        .clone()
        .into_client_request()
        .map_err(|e| invalid(e.to_string()))?;
    for (name, value) in &options.header_map().map_err(OpenError::Io)? {
        request.headers_mut().append(name, value.clone());
    }
    for (name, value) in extra {
        let value = ::http::HeaderValue::from_str(value).map_err(|e| invalid(e.to_string()))?;
        request.headers_mut().insert(*name, value);
    }
    let config = WebSocketConfig::default()
        .max_message_size(Some(options.max_message_size))
        .max_frame_size(Some(options.max_message_size));
    let open = async {
        let tcp = TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| {
                OpenError::Io(io::Error::new(
                    e.kind(),
                    format!("cannot connect to {host}:{port}: {e}"),
                ))
            })?;
        let _ = tcp.set_nodelay(true);
        let stream: Box<dyn Io> = if secure {
            let tls = Arc::new(
                crate::remote::tls::client_config(&options.root_certificates, true)
                    .map_err(OpenError::Io)?,
            );
            let name = rustls_pki_types::ServerName::try_from(host.clone())
                .map_err(|e| invalid(e.to_string()))?;
            let stream = tokio_rustls::TlsConnector::from(tls)
                .connect(name, tcp)
                .await
                .map_err(|e| {
                    OpenError::Io(io::Error::new(
                        e.kind(),
                        format!("TLS with {host}:{port} failed: {e}"),
                    ))
                })?;
            Box::new(stream)
        } else {
            Box::new(tcp)
        };
        tokio_tungstenite::client_async_with_config(request, stream, Some(config))
            .await
            .map_err(|e| handshake_error(e, uri))
    };
    tokio::time::timeout(options.connect_timeout, open)
        .await
        .map_err(|_| {
            OpenError::Io(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "connecting to {uri} took longer than {} s",
                    options.connect_timeout.as_secs()
                ),
            ))
        })?
}

fn handshake_error(error: tungstenite::Error, uri: &::http::Uri) -> OpenError {
    match error {
        tungstenite::Error::Http(response) => {
            let body = response
                .body()
                .as_deref()
                .map(String::from_utf8_lossy)
                .unwrap_or_default()
                .into_owned();
            OpenError::Status(response.status(), body)
        }
        tungstenite::Error::Io(e) => {
            OpenError::Io(io::Error::new(e.kind(), format!("WebSocket to {uri}: {e}")))
        }
        other => OpenError::Io(io::Error::other(format!("WebSocket to {uri}: {other}"))),
    }
}

/// Why the server's close ends the engine's input: `None` for a normal
/// close (code 1000, or none).
fn close_error(frame: Option<&CloseFrame>) -> Option<io::Error> {
    let frame = frame?;
    if frame.code == CloseCode::Normal {
        return None;
    }
    let reason = if frame.reason.is_empty() {
        String::new()
    } else {
        format!(": {}", frame.reason)
    };
    Some(io::Error::new(
        io::ErrorKind::ConnectionAborted,
        format!(
            "the server closed the WebSocket (code {}){reason}",
            u16::from(frame.code)
        ),
    ))
}

/// How to resume the connection.
struct Resume {
    outage: Outage,
    uri: ::http::Uri,
    options: ClientOptions,
    id: String,
}

/// What the client sent: how many messages, and the latest ones, kept until
/// the server confirms it has them.
struct Sent {
    count: u64,
    kept: VecDeque<(u64, String)>,
    bytes: usize,
    max_bytes: usize,
    keeping: bool,
}

impl Sent {
    fn new(keeping: bool, max_bytes: usize) -> Self {
        Sent {
            count: 0,
            kept: VecDeque::new(),
            bytes: 0,
            max_bytes,
            keeping,
        }
    }

    fn push(&mut self, text: &str) {
        self.count += 1;
        if !self.keeping {
            return;
        }
        self.bytes += text.len();
        self.kept.push_back((self.count, text.to_owned()));
        while self.bytes > self.max_bytes && self.kept.len() > 1 {
            if let Some((_, old)) = self.kept.pop_front() {
                self.bytes -= old.len();
            }
        }
    }

    /// The server has `received` of our messages: forgets those, and
    /// returns the rest, to send again.
    fn confirm(&mut self, received: u64) -> Result<Vec<String>, LinkLost> {
        if received > self.count {
            return Err(LinkLost::Gap {
                detail: format!(
                    "the server says it has {received} of our messages, but we sent {}",
                    self.count
                ),
            });
        }
        while self.kept.front().is_some_and(|(n, _)| *n <= received) {
            if let Some((_, old)) = self.kept.pop_front() {
                self.bytes -= old.len();
            }
        }
        let first_missing = received + 1;
        let have = self.kept.front().map_or(self.count + 1, |(n, _)| *n);
        if have > first_missing {
            return Err(LinkLost::Gap {
                detail: format!(
                    "the server has {received} of our messages, and we kept only those from {have} on"
                ),
            });
        }
        Ok(self.kept.iter().map(|(_, text)| text.clone()).collect())
    }
}

/// How one socket ended.
enum Outcome {
    /// The engine's input is gone.
    EngineGone,
    /// The engine ended its output, and the server closed.
    Ended,
    /// The connection ended; the engine's input ends with this error (or
    /// just ends).
    Closed(Option<io::Error>),
    /// Another client resumed the connection.
    TakenOver,
    /// The socket broke: resume, when we can.
    Broken(io::Error),
}

async fn bridge(
    mut socket: Socket,
    engine: ToEngine,
    mut from_engine: FromEngine,
    resume: Option<Resume>,
    refusal: Option<Outage>,
    max_resend: usize,
) {
    let mut received: u64 = 0;
    let mut sent = Sent::new(resume.is_some(), max_resend);
    let mut resend = Vec::new();
    loop {
        let ping_every = resume.as_ref().map(|r| r.outage.ping_every());
        let outcome = serve(
            socket,
            &engine,
            &mut from_engine,
            (&mut received, &mut sent),
            resend,
            ping_every,
        )
        .await;
        let broken = match outcome {
            Outcome::EngineGone | Outcome::Ended => return,
            Outcome::Closed(error) => {
                if let Some(error) = error {
                    engine.fail(error).await;
                }
                return;
            }
            Outcome::TakenOver => {
                let error = match &resume {
                    Some(resume) => resume.outage.give_up(LinkLost::TakenOver),
                    None => LinkLost::TakenOver.into_io(),
                };
                engine.fail(error).await;
                return;
            }
            Outcome::Broken(error) => error,
        };
        let Some(resume) = &resume else {
            // A client that asked to reconnect learns why it cannot.
            let error = match &refusal {
                Some(outage) => outage.give_up(LinkLost::NotResumable),
                None => broken,
            };
            engine.fail(error).await;
            return;
        };
        match reattach(resume, received, broken.to_string()).await {
            Ok((new_socket, server_received)) => match sent.confirm(server_received) {
                Ok(again) => {
                    resume.outage.up();
                    socket = new_socket;
                    resend = again;
                }
                Err(lost) => {
                    engine.fail(resume.outage.give_up(lost)).await;
                    return;
                }
            },
            Err(lost) => {
                engine.fail(resume.outage.give_up(lost)).await;
                return;
            }
        }
    }
}

/// Opens a socket that resumes the connection after our `received`-th
/// message; it, and how many of ours the server has.
async fn reattach(resume: &Resume, received: u64, why: String) -> Result<(Socket, u64), LinkLost> {
    let mut why = why;
    loop {
        resume.outage.wait(&why).await?;
        let headers = [
            (HEADER_CONNECTION_ID, resume.id.clone()),
            (HEADER_LAST_EVENT_ID, received.to_string()),
        ];
        match open(&resume.uri, &resume.options, &headers).await {
            Ok((socket, response)) => {
                let theirs = response
                    .headers()
                    .get(HEADER_RECEIVED)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok());
                return match theirs {
                    Some(theirs) => Ok((socket, theirs)),
                    None => Err(LinkLost::Gap {
                        detail: "the server's answer to the resume has no Acp-Received".into(),
                    }),
                };
            }
            Err(OpenError::Status(status, body)) => match resume_refused(status, &body) {
                Some(lost) => return Err(lost),
                None => why = format!("the server answered the resume with HTTP {status}"),
            },
            Err(OpenError::Io(error)) => why = error.to_string(),
        }
    }
}

/// Carries messages both ways over one socket until it ends; with
/// `ping_every`, pings the server that often, and takes a socket that
/// brings nothing for three times that for broken.
async fn serve(
    socket: Socket,
    engine: &ToEngine,
    from_engine: &mut FromEngine,
    (received, sent): (&mut u64, &mut Sent),
    resend: Vec<String>,
    ping_every: Option<std::time::Duration>,
) -> Outcome {
    let (mut sink, mut stream) = socket.split();
    let broke = |what: &str, e: &dyn std::fmt::Display| {
        Outcome::Broken(io::Error::new(
            io::ErrorKind::ConnectionAborted,
            format!("{what}: {e}"),
        ))
    };
    // What the server did not get, first.
    for text in resend {
        if let Err(e) = sink.send(Message::text(text)).await {
            return broke("the WebSocket connection failed", &e);
        }
    }
    let silence = ping_every.map(|every| every * 3);
    let reading = async {
        loop {
            let next = match silence {
                Some(silence) => match tokio::time::timeout(silence, stream.next()).await {
                    Ok(next) => next,
                    Err(_) => {
                        return Outcome::Broken(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!("no word from the server for {} s", silence.as_secs_f64()),
                        ));
                    }
                },
                None => stream.next().await,
            };
            match next {
                Some(Ok(Message::Text(text))) => {
                    if !engine.deliver(text.as_bytes().to_vec()).await {
                        return Outcome::EngineGone;
                    }
                    *received += 1;
                }
                Some(Ok(Message::Close(frame))) => {
                    return match frame.as_ref().map(|f| u16::from(f.code)) {
                        Some(CLOSE_TAKEN_OVER) => Outcome::TakenOver,
                        Some(CLOSE_RESUMABLE) => Outcome::Broken(
                            close_error(frame.as_ref())
                                .unwrap_or_else(|| io::Error::other("closed")),
                        ),
                        _ => Outcome::Closed(close_error(frame.as_ref())),
                    };
                }
                // Binary frames are not ACP; pings are answered by the library.
                Some(Ok(_)) => {}
                Some(Err(tungstenite::Error::ConnectionClosed)) => return Outcome::Closed(None),
                None => {
                    return Outcome::Broken(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        "the connection to the server was lost (no WebSocket close)",
                    ));
                }
                Some(Err(e)) => return broke("the WebSocket connection failed", &e),
            }
        }
    };
    tokio::pin!(reading);
    // What the engine writes goes out as text frames; its end closes the
    // socket.
    let writing = async {
        let mut ping = tokio::time::interval(ping_every.unwrap_or(std::time::Duration::MAX / 4));
        ping.tick().await;
        loop {
            let frame = tokio::select! {
                frame = from_engine.next_frame() => frame,
                _ = ping.tick(), if ping_every.is_some() => {
                    if let Err(e) = sink.send(Message::Ping(Vec::new().into())).await {
                        return broke("the WebSocket connection failed", &e);
                    }
                    continue;
                }
            };
            match frame {
                Ok(Some(Frame::Message(line))) => {
                    let text = String::from_utf8_lossy(line).into_owned();
                    sent.push(&text);
                    if let Err(e) = sink.send(Message::text(text)).await {
                        return broke("the WebSocket connection failed", &e);
                    }
                }
                Ok(Some(Frame::TooLong { .. })) => {}
                Ok(None) | Err(_) => {
                    let _ = sink.send(Message::Close(None)).await;
                    let _ = sink.close().await;
                    return Outcome::Ended;
                }
            }
        }
    };
    tokio::select! {
        outcome = &mut reading => outcome,
        outcome = writing => match outcome {
            // The engine is done: read on until the server closes, and
            // resume nothing.
            Outcome::Ended => match reading.await {
                Outcome::Broken(error) => Outcome::Closed(Some(error)),
                Outcome::TakenOver => Outcome::Closed(None),
                other => other,
            },
            other => other,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_server_missed_is_sent_again_in_order() {
        let mut sent = Sent::new(true, 1024);
        for text in ["a", "b", "c"] {
            sent.push(text);
        }
        assert_eq!(sent.confirm(1).unwrap(), ["b", "c"]);
        assert_eq!(sent.confirm(3).unwrap(), Vec::<String>::new());
        assert!(sent.confirm(4).is_err());
        sent.push("d");
        assert_eq!(sent.confirm(3).unwrap(), ["d"]);
    }

    #[test]
    fn a_resume_that_needs_more_than_was_kept_fails() {
        let mut sent = Sent::new(true, 3);
        for text in ["aa", "bb", "cc"] {
            sent.push(text);
        }
        // Only the latest fits.
        assert_eq!(sent.kept.len(), 1);
        assert_eq!(sent.confirm(2).unwrap(), ["cc"]);
        let error = sent.confirm(0).unwrap_err();
        assert!(matches!(error, LinkLost::Gap { .. }), "{error}");
    }
}
