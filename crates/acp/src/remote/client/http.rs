//! The Streamable HTTP profile's client.
//!
//! Messages go out one POST at a time, in the order the engine wrote them
//! (as the official SDK's client does). The first must be `initialize`,
//! whose answer comes back in the POST's body with the `Acp-Connection-Id`;
//! then the connection's SSE stream is opened, and a session's stream as soon
//! as its id is seen (in a response's `result.sessionId`, or before the first
//! message that names it). Server requests that came on a session's stream
//! are answered with that session's header. Cookies the server sets are
//! sent back for the rest of the connection. When the engine ends its output
//! the connection is deleted.
//!
//! Resuming (when asked, and the server's `initialize` answer says it keeps
//! connections): a stream that breaks or ends is opened again with
//! `Last-Event-ID`, the id of the last event the client has, and events
//! already had are skipped; a POST whose answer was lost is sent again,
//! marked `Acp-Resent: 1`, so that the server drops it if it had it. Both
//! wait their turn in one backoff.

use super::reconnect::{LinkLost, Outage};
use super::{
    ClientOptions, FromEngine, ToEngine, authority, engine_pipe, keep_time, refused, resume_refused,
};
use crate::codec::Frame;
use crate::remote::message::{Kind, error_line, inspect};
use crate::remote::{
    HEADER_CONNECTION_ID, HEADER_LAST_EVENT_ID, HEADER_RESENT, HEADER_SESSION_ID,
    SSE_EVENT_TAKEN_OVER,
};
use crate::transport::Transport;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::{Method, Request, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use std::collections::{BTreeMap, HashMap};
use std::io;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub(super) type Https = hyper_rustls::HttpsConnector<HttpConnector>;

/// Whether a session's stream is open.
#[derive(Clone, Debug)]
enum Ready {
    Opening,
    Open,
    Failed(String),
}

struct Shared {
    client: Client<Https, Full<Bytes>>,
    uri: ::http::Uri,
    headers: ::http::HeaderMap,
    cookies: Mutex<BTreeMap<String, String>>,
    connection_id: std::sync::OnceLock<String>,
    /// Session id → its stream's state.
    sessions: Mutex<HashMap<String, watch::Receiver<Ready>>>,
    /// A server request's id → the session whose stream it came on.
    answer_in: Mutex<HashMap<String, String>>,
    to_engine: ToEngine,
    max_message_size: usize,
    closed: CancellationToken,
    options: ClientOptions,
    /// The backoff, once `initialize` said the server resumes connections
    /// and the client asked to.
    outage: std::sync::OnceLock<Outage>,
    /// Once `initialize` said the server does not, for a client that asked:
    /// what tells it so.
    refusal: std::sync::OnceLock<Outage>,
}

/// How a stream ended, when not by the server's clean end.
enum StreamEnd {
    /// The request or the stream broke.
    Io(io::Error),
    /// The server refused the GET.
    Refused(StatusCode, String),
    /// Another client resumed the stream.
    TakenOver,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// An HTTP/1.1 client (TLS with the options' roots) for `uri`.
pub(super) fn http_client(
    uri: &::http::Uri,
    options: &ClientOptions,
) -> io::Result<Client<Https, Full<Bytes>>> {
    let secure = uri.scheme_str() == Some("https");
    authority(uri, secure)?;
    let tls = crate::remote::tls::client_config(&options.root_certificates, false)?;
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(Some(options.connect_timeout));
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .wrap_connector(http);
    Ok(Client::builder(hyper_util::rt::TokioExecutor::new()).build(https))
}

pub(super) fn connect(uri: ::http::Uri, options: &ClientOptions) -> io::Result<Transport> {
    let client = http_client(&uri, options)?;
    let (transport, to_engine, from_engine) = engine_pipe(options.max_message_size);
    let shared = Arc::new(Shared {
        client,
        uri,
        headers: options.header_map()?,
        cookies: Mutex::new(BTreeMap::new()),
        connection_id: std::sync::OnceLock::new(),
        sessions: Mutex::new(HashMap::new()),
        answer_in: Mutex::new(HashMap::new()),
        to_engine,
        max_message_size: options.max_message_size,
        closed: CancellationToken::new(),
        options: options.clone(),
        outage: std::sync::OnceLock::new(),
        refusal: std::sync::OnceLock::new(),
    });
    tokio::spawn(outgoing(shared, from_engine));
    Ok(transport)
}

impl Shared {
    fn request(&self, method: Method, session: Option<&str>) -> ::http::request::Builder {
        let mut builder = Request::builder().method(method).uri(self.uri.clone());
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        if let Some(id) = self.connection_id.get() {
            builder = builder.header(HEADER_CONNECTION_ID, id);
        }
        if let Some(session) = session {
            builder = builder.header(HEADER_SESSION_ID, session);
        }
        let cookies = lock(&self.cookies);
        if !cookies.is_empty() {
            let line: Vec<String> = cookies.iter().map(|(k, v)| format!("{k}={v}")).collect();
            builder = builder.header(::http::header::COOKIE, line.join("; "));
        }
        builder
    }

    async fn send(
        &self,
        request: Request<Full<Bytes>>,
    ) -> io::Result<::http::Response<hyper::body::Incoming>> {
        let response = self.client.request(request).await.map_err(|e| {
            // The legacy client's own message ("client error (Connect)")
            // hides the cause: name the whole chain.
            let mut why = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                why.push_str(": ");
                why.push_str(&cause.to_string());
                source = cause.source();
            }
            io::Error::new(
                io::ErrorKind::ConnectionAborted,
                format!("HTTP request to {} failed: {why}", self.uri),
            )
        })?;
        self.keep_cookies(response.headers());
        Ok(response)
    }

    fn keep_cookies(&self, headers: &::http::HeaderMap) {
        let mut cookies = lock(&self.cookies);
        for value in headers.get_all(::http::header::SET_COOKIE) {
            let Ok(text) = value.to_str() else { continue };
            let pair = text.split(';').next().unwrap_or("");
            if let Some((name, value)) = pair.split_once('=') {
                cookies.insert(name.trim().to_owned(), value.trim().to_owned());
            }
        }
    }

    async fn post(
        &self,
        line: &[u8],
        session: Option<&str>,
        resent: bool,
    ) -> io::Result<(StatusCode, ::http::HeaderMap, Bytes)> {
        let mut request = self.request(Method::POST, session);
        if resent {
            request = request.header(HEADER_RESENT, "1");
        }
        let request = request
            .header(::http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::copy_from_slice(line)))
            .map_err(io::Error::other)?;
        let response = self.send(request).await?;
        let (parts, body) = response.into_parts();
        let body = Limited::new(body, self.max_message_size)
            .collect()
            .await
            .map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("reading the answer: {e}"),
                )
            })?
            .to_bytes();
        Ok((parts.status, parts.headers, body))
    }

    /// POSTs `line`; when the link breaks and the connection is resumable,
    /// sends it again (marked as resent) until it gets an answer or the
    /// client gives up.
    async fn post_reliably(
        &self,
        line: &[u8],
        session: Option<&str>,
    ) -> io::Result<(StatusCode, ::http::HeaderMap, Bytes)> {
        let mut resent = false;
        loop {
            let answer = match self.outage.get() {
                Some(outage) => {
                    let silence = outage.silence();
                    tokio::time::timeout(silence, self.post(line, session, resent))
                        .await
                        .unwrap_or_else(|_| {
                            Err(io::Error::new(
                                io::ErrorKind::TimedOut,
                                format!(
                                    "the server did not answer a POST in {} s",
                                    silence.as_secs_f64()
                                ),
                            ))
                        })
                }
                None => self.post(line, session, resent).await,
            };
            let why = match answer {
                // A proxy without its server: worth waiting for.
                Ok((status, _, _))
                    if self.outage.get().is_some() && matches!(status.as_u16(), 502..=504) =>
                {
                    format!("the server answered HTTP {status}")
                }
                Ok(answer) => {
                    if let Some(outage) = self.outage.get() {
                        outage.up();
                    }
                    return Ok(answer);
                }
                Err(error) => match self.outage.get() {
                    Some(_) => error.to_string(),
                    None => return Err(self.not_resumable(error)),
                },
            };
            if let Some(outage) = self.outage.get()
                && let Err(lost) = outage.wait(&why).await
            {
                return Err(outage.give_up(lost));
            }
            resent = true;
        }
    }

    /// The error for a broken link that is not resumed: as it came, or, for
    /// a client that asked to reconnect, why it cannot.
    fn not_resumable(&self, error: io::Error) -> io::Error {
        match self.refusal.get() {
            Some(outage) => outage.give_up(LinkLost::NotResumable),
            None => error,
        }
    }

    /// Opens the stream of `session` if it is not open, and waits until it
    /// is (its response headers came).
    async fn session_stream(self: &Arc<Self>, session: &str) -> Result<(), String> {
        let mut ready = {
            let mut sessions = lock(&self.sessions);
            match sessions.get(session) {
                Some(ready) => ready.clone(),
                None => {
                    let (tx, rx) = watch::channel(Ready::Opening);
                    sessions.insert(session.to_owned(), rx.clone());
                    tokio::spawn(Arc::clone(self).read_stream(Some(session.to_owned()), tx));
                    rx
                }
            }
        };
        loop {
            match &*ready.borrow_and_update() {
                Ready::Open => return Ok(()),
                Ready::Failed(why) => return Err(why.clone()),
                Ready::Opening => {}
            }
            if ready.changed().await.is_err() {
                return Err(format!("the event stream of session {session} closed"));
            }
        }
    }

    /// Reads one SSE stream (the connection's, or a session's) until it
    /// ends, resuming it when it breaks and the connection is resumable.
    async fn read_stream(self: Arc<Self>, session: Option<String>, ready: watch::Sender<Ready>) {
        let mut place = Place::default();
        let outcome = loop {
            let attempt = tokio::select! {
                attempt = self.stream_events(session.as_deref(), &ready, &mut place) => attempt,
                () = self.closed.cancelled() => break Ok(()),
            };
            let Some(outage) = self.outage.get() else {
                break match attempt {
                    Ok(()) => Ok(()),
                    Err(StreamEnd::Io(error)) => Err(Lost::Stream(self.not_resumable(error))),
                    Err(StreamEnd::Refused(status, body)) => {
                        Err(Lost::Stream(refused(status, "the event stream", &body)))
                    }
                    Err(StreamEnd::TakenOver) => Err(Lost::Link(LinkLost::TakenOver.into_io())),
                };
            };
            let why = match attempt {
                Err(StreamEnd::TakenOver) => {
                    break Err(Lost::Link(outage.give_up(LinkLost::TakenOver)));
                }
                // A stream never opened is refused for its own reasons.
                Err(StreamEnd::Refused(status, body)) if !place.opened => {
                    break Err(Lost::Stream(refused(status, "the event stream", &body)));
                }
                Err(StreamEnd::Refused(status, body)) => match resume_refused(status, &body) {
                    Some(lost) => break Err(Lost::Link(outage.give_up(lost))),
                    None => format!("the server answered the event stream with HTTP {status}"),
                },
                Err(StreamEnd::Io(error)) => error.to_string(),
                Ok(()) => "the server ended the event stream".to_owned(),
            };
            if let Err(lost) = outage.wait(&why).await {
                break Err(Lost::Link(outage.give_up(lost)));
            }
        };
        if let Some(session) = &session {
            lock(&self.sessions).remove(session);
        }
        match outcome {
            Err(Lost::Stream(why)) if session.is_some() => {
                let _ = ready.send(Ready::Failed(why.to_string()));
            }
            Err(Lost::Stream(why) | Lost::Link(why)) => {
                let _ = ready.send(Ready::Failed(why.to_string()));
                if !self.closed.is_cancelled() {
                    self.closed.cancel();
                    self.to_engine.fail(why).await;
                }
            }
            Ok(()) if session.is_none() && !self.closed.is_cancelled() => {
                self.closed.cancel();
                self.to_engine
                    .fail(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        "the server closed the connection's event stream",
                    ))
                    .await;
            }
            Ok(()) => {}
        }
    }

    async fn stream_events(
        self: &Arc<Self>,
        session: Option<&str>,
        ready: &watch::Sender<Ready>,
        place: &mut Place,
    ) -> Result<(), StreamEnd> {
        let mut request = self
            .request(Method::GET, session)
            .header(::http::header::ACCEPT, "text/event-stream");
        if place.opened {
            request = request.header(HEADER_LAST_EVENT_ID, place.last.to_string());
        }
        let request = request
            .body(Full::new(Bytes::new()))
            .map_err(|e| StreamEnd::Io(io::Error::other(e)))?;
        let silence = self.outage.get().map(Outage::silence);
        let quiet = |silence: std::time::Duration| {
            StreamEnd::Io(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no word from the server for {} s", silence.as_secs_f64()),
            ))
        };
        let response = match silence {
            Some(silence) => tokio::time::timeout(silence, self.send(request))
                .await
                .map_err(|_| quiet(silence))?,
            None => self.send(request).await,
        }
        .map_err(StreamEnd::Io)?;
        let status = response.status();
        if !status.is_success() {
            let body = Limited::new(response.into_body(), 8 * 1024)
                .collect()
                .await
                .map(|b| String::from_utf8_lossy(&b.to_bytes()).into_owned())
                .unwrap_or_default();
            return Err(StreamEnd::Refused(status, body));
        }
        place.opened = true;
        let _ = ready.send(Ready::Open);
        if let Some(outage) = self.outage.get() {
            outage.up();
        }
        let mut body = response.into_body();
        let mut events = SseParser::new(self.max_message_size);
        loop {
            // The server's keep-alives come every 15 s: a longer silence of a
            // resumable connection is a link that went away without a word.
            let frame = match silence {
                Some(silence) => tokio::time::timeout(silence, body.frame())
                    .await
                    .map_err(|_| quiet(silence))?,
                None => body.frame().await,
            };
            let Some(frame) = frame else { break };
            let frame = frame.map_err(|e| {
                StreamEnd::Io(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    format!("the event stream broke: {e}"),
                ))
            })?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            for event in events.push(&data).map_err(StreamEnd::Io)? {
                if event.kind.as_deref() == Some(SSE_EVENT_TAKEN_OVER) {
                    return Err(StreamEnd::TakenOver);
                }
                if let Some(id) = event
                    .id
                    .as_deref()
                    .and_then(|id| id.trim().parse::<u64>().ok())
                {
                    if id <= place.last {
                        // Had already: a resume sent it again.
                        continue;
                    }
                    place.last = id;
                }
                if let Some(data) = event.data {
                    self.incoming(data, session).await;
                }
            }
        }
        Ok(())
    }

    /// One message from a stream: note what routing needs, hand it over.
    async fn incoming(self: &Arc<Self>, message: Vec<u8>, session: Option<&str>) {
        if let Some(seen) = inspect(&message) {
            if let Some(new_session) = &seen.result_session {
                tokio::spawn(open_later(Arc::clone(self), new_session.clone()));
            }
            if let (Kind::Request, Some(id), Some(session)) = (seen.kind, &seen.id, session) {
                lock(&self.answer_in).insert(id.clone(), session.to_owned());
            }
        }
        self.to_engine.deliver(message).await;
    }
}

/// Where a stream is: whether it was ever open, and the id of the last
/// event had.
#[derive(Default)]
struct Place {
    opened: bool,
    last: u64,
}

/// Why a stream stopped for good.
enum Lost {
    /// This stream failed (a session's request gets an error answer).
    Stream(io::Error),
    /// The link is lost: the engine's input ends.
    Link(io::Error),
}

/// Opens a session's stream in the background (a named future type breaks
/// the cycle stream → message → stream).
fn open_later(shared: Arc<Shared>, session: String) -> futures::future::BoxFuture<'static, ()> {
    Box::pin(async move {
        let _ = shared.session_stream(&session).await;
    })
}

/// Sends what the engine writes, one POST at a time.
async fn outgoing(shared: Arc<Shared>, mut from_engine: FromEngine) {
    let result = tokio::select! {
        result = send_all(&shared, &mut from_engine) => result,
        () = shared.closed.cancelled() => Ok(()),
    };
    // Closed before the DELETE: the streams the server then ends are not
    // breaks to resume.
    shared.closed.cancel();
    if let Err(error) = result {
        shared.to_engine.fail(error).await;
    }
    if shared.connection_id.get().is_some() {
        let _ = delete(&shared).await;
    }
}

async fn delete(shared: &Shared) -> io::Result<()> {
    let request = shared
        .request(Method::DELETE, None)
        .body(Full::new(Bytes::new()))
        .map_err(io::Error::other)?;
    shared.send(request).await.map(drop)
}

async fn send_all(shared: &Arc<Shared>, from_engine: &mut FromEngine) -> io::Result<()> {
    let read_error = |e: io::Error| io::Error::new(e.kind(), format!("reading the engine: {e}"));
    // The first message: initialize, answered in the POST's body.
    let first = match from_engine.next_frame().await.map_err(read_error)? {
        Some(Frame::Message(line)) => line.to_vec(),
        Some(Frame::TooLong { size, .. }) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the first message is {size} bytes, over the limit"),
            ));
        }
        None => return Ok(()),
    };
    let seen = inspect(&first);
    let is_initialize = seen
        .as_ref()
        .is_some_and(|s| s.kind == Kind::Request && s.method.as_deref() == Some("initialize"));
    if !is_initialize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "over Streamable HTTP the first message must be the initialize request",
        ));
    }
    let (status, headers, body) = shared.post(&first, None, false).await?;
    if status != StatusCode::OK {
        return Err(refused(
            status,
            "initialize",
            &String::from_utf8_lossy(&body),
        ));
    }
    let id = headers
        .get(HEADER_CONNECTION_ID)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "the initialize answer has no Acp-Connection-Id header",
            )
        })?;
    let _ = shared.connection_id.set(id.to_owned());
    match keep_time(&headers) {
        Some(keep) => {
            if let Some(outage) = shared.options.outage(Some(keep)) {
                let _ = shared.outage.set(outage);
            }
        }
        None => {
            if let Some(outage) = shared.options.outage(Some(std::time::Duration::ZERO)) {
                let _ = shared.refusal.set(outage);
            }
        }
    }
    let (tx, _rx) = watch::channel(Ready::Opening);
    tokio::spawn(Arc::clone(shared).read_stream(None, tx));
    shared.to_engine.deliver(body.to_vec()).await;

    loop {
        let line = match from_engine.next_frame().await.map_err(read_error)? {
            Some(Frame::Message(line)) => line.to_vec(),
            Some(Frame::TooLong { .. }) => continue,
            None => return Ok(()),
        };
        let seen = inspect(&line);
        let session = seen.as_ref().and_then(|s| match s.kind {
            Kind::Response => {
                s.id.as_ref()
                    .and_then(|id| lock(&shared.answer_in).remove(id))
            }
            _ => s.params_session.clone(),
        });
        let request_id = seen
            .as_ref()
            .filter(|s| s.kind == Kind::Request)
            .and_then(|s| s.id.clone());
        if let Some(session) = &session
            && let Err(why) = shared.session_stream(session).await
        {
            if let Some(id) = &request_id {
                let answer = error_line(Some(id), -32603, &why);
                shared.to_engine.deliver(answer).await;
            }
            continue;
        }
        let (status, _, body) = shared.post_reliably(&line, session.as_deref()).await?;
        if status.is_success() {
            continue;
        }
        let body = String::from_utf8_lossy(&body);
        let fatal = matches!(status.as_u16(), 401 | 403 | 404 | 410);
        match &request_id {
            Some(id) if !fatal => {
                let why = format!(
                    "the server refused the request with HTTP {status}: {}",
                    body.trim()
                );
                shared
                    .to_engine
                    .deliver(error_line(Some(id), -32603, &why))
                    .await;
            }
            _ => {
                if let Some(outage) = shared.outage.get() {
                    let lost = resume_refused(status, &body).unwrap_or(LinkLost::Refused {
                        status: status.as_u16(),
                        detail: body.trim().to_owned(),
                    });
                    return Err(outage.give_up(lost));
                }
                return Err(refused(status, "a message", &body));
            }
        }
    }
}

/// One SSE event.
#[derive(Debug, Default, PartialEq, Eq)]
struct SseEvent {
    /// Its `id`, if it had one.
    id: Option<String>,
    /// Its `event` type, if it had one.
    kind: Option<String>,
    /// Its data, if it had any.
    data: Option<Vec<u8>>,
}

/// Splits an SSE body into its events: those with data, and those with only
/// an `id` or a type (which browsers do not dispatch, but our server's
/// take-over notice is one).
struct SseParser {
    line: Vec<u8>,
    event: SseEvent,
    max: usize,
    /// The last byte was a `\r`, so a `\n` right after it ends nothing more.
    after_cr: bool,
}

impl SseParser {
    fn new(max: usize) -> Self {
        SseParser {
            line: Vec::new(),
            event: SseEvent::default(),
            max,
            after_cr: false,
        }
    }

    /// Feeds bytes; returns the events they completed.
    fn push(&mut self, bytes: &[u8]) -> io::Result<Vec<SseEvent>> {
        let mut events = Vec::new();
        for &byte in bytes {
            if byte == b'\n' && self.after_cr {
                self.after_cr = false;
                continue;
            }
            self.after_cr = byte == b'\r';
            if byte == b'\n' || byte == b'\r' {
                let line = std::mem::take(&mut self.line);
                if let Some(event) = self.end_line(&line) {
                    events.push(event);
                }
                continue;
            }
            let held = self.event.data.as_ref().map_or(0, Vec::len);
            if self.line.len() + held > self.max + 16 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("an event of the server is over {} bytes", self.max),
                ));
            }
            self.line.push(byte);
        }
        Ok(events)
    }

    fn end_line(&mut self, line: &[u8]) -> Option<SseEvent> {
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            return (event != SseEvent::default()).then_some(event);
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(at) => (&line[..at], &line[at + 1..]),
            None => (line, &[][..]),
        };
        let value = value.strip_prefix(b" ").unwrap_or(value);
        let text = || String::from_utf8_lossy(value).into_owned();
        match field {
            b"data" => match &mut self.event.data {
                Some(data) => {
                    data.push(b'\n');
                    data.extend_from_slice(value);
                }
                None => self.event.data = Some(value.to_vec()),
            },
            b"id" => self.event.id = Some(text()),
            b"event" => self.event.kind = Some(text()),
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{SseEvent, SseParser};

    fn data(text: &[u8]) -> SseEvent {
        SseEvent {
            data: Some(text.to_vec()),
            ..SseEvent::default()
        }
    }

    #[test]
    fn sse_events_split_anywhere_with_any_line_ending() {
        let text = b": keep-alive\n\ndata: {\"a\":1}\n\ndata:{\"b\":2}\r\n\r\nevent: x\rdata: one\rdata: two\r\rid: 7\ndata:\ndata\n\nevent: acp-taken-over\n\n";
        for split in 0..text.len() {
            let mut parser = SseParser::new(1024);
            let mut events = parser.push(&text[..split]).unwrap();
            events.extend(parser.push(&text[split..]).unwrap());
            assert_eq!(
                events,
                vec![
                    data(b"{\"a\":1}"),
                    data(b"{\"b\":2}"),
                    SseEvent {
                        kind: Some("x".into()),
                        ..data(b"one\ntwo")
                    },
                    SseEvent {
                        id: Some("7".into()),
                        ..data(b"\n")
                    },
                    SseEvent {
                        kind: Some("acp-taken-over".into()),
                        ..SseEvent::default()
                    },
                ],
                "split at {split}"
            );
        }
    }

    #[test]
    fn an_event_over_the_limit_is_an_error() {
        let mut parser = SseParser::new(8);
        assert!(
            parser
                .push(b"data: 0123456789012345678901234567890\n\n")
                .is_err()
        );
    }
}
