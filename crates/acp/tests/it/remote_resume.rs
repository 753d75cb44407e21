//! Resuming remote connections on the wire (features `websocket`, `http`,
//! `server`): the WebSocket resume handshake of ours and `Last-Event-ID` over
//! Streamable HTTP, message by message; take-overs, refusals (unknown,
//! closed and why, out of range, wrong token), copies dropped by their ids,
//! and the buffer limit while the client is away.

use crate::remote_support;
use crate::support;

use acp::remote::server::ServerOptions;
use futures::{SinkExt, StreamExt};
use remote_support::*;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{self, Message};

type Ws = tokio_tungstenite::WebSocketStream<TcpStream>;

const INIT: &str =
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
const NEW: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}"#;
const NEW_ANSWER: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#;

fn prompt_line(id: u32, text: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"s1","prompt":[{{"type":"text","text":"{text}"}}]}}}}"#
    )
}

fn chunk_line(word: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s1","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{word} "}}}}}}}}"#
    )
}

fn end_turn(id: u32) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"stopReason":"end_turn"}}}}"#)
}

/// Opens a WebSocket to `addr` with `headers`: the socket and the answer's
/// headers, or the refusal's status and body.
async fn ws(
    addr: SocketAddr,
    headers: &[(&str, &str)],
) -> Result<(Ws, tungstenite::http::HeaderMap), (u16, String)> {
    let mut request = format!("ws://{addr}/acp").into_client_request().unwrap();
    for (name, value) in headers {
        request.headers_mut().insert(
            tungstenite::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    let tcp = TcpStream::connect(addr).await.unwrap();
    match within("the upgrade", tokio_tungstenite::client_async(request, tcp)).await {
        Ok((socket, response)) => Ok((socket, response.headers().clone())),
        Err(tungstenite::Error::Http(response)) => Err((
            response.status().as_u16(),
            String::from_utf8_lossy(response.body().as_deref().unwrap_or_default()).into_owned(),
        )),
        Err(other) => panic!("upgrade failed: {other}"),
    }
}

async fn send(socket: &mut Ws, text: &str) {
    within("a send", socket.send(Message::text(text)))
        .await
        .unwrap();
}

/// The next text frame.
async fn recv(socket: &mut Ws) -> String {
    loop {
        match within("a frame", socket.next()).await {
            Some(Ok(Message::Text(text))) => return text.to_string(),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
            other => panic!("expected a text frame, got {other:?}"),
        }
    }
}

fn header<'a>(headers: &'a tungstenite::http::HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_resumes_after_the_last_message_it_had() {
    let served = Served::start(ServerOptions::default(), Duration::ZERO).await;
    let (mut socket, headers) = ws(served.addr, &[]).await.unwrap();
    let id = header(&headers, "acp-connection-id").unwrap().to_owned();
    assert_eq!(header(&headers, "acp-resumable"), Some("300"));
    send(&mut socket, INIT).await;
    let init_answer = recv(&mut socket).await;
    assert!(
        init_answer.starts_with(r#"{"jsonrpc":"2.0","id":0,"result":"#),
        "{init_answer}"
    );
    send(&mut socket, NEW).await;
    assert_eq!(recv(&mut socket).await, NEW_ANSWER);
    // The socket breaks (no close frame); the client had message 1 only.
    drop(socket);

    let resume = [("acp-connection-id", id.as_str()), ("last-event-id", "1")];
    let (mut socket, headers) = ws(served.addr, &resume).await.unwrap();
    assert_eq!(header(&headers, "acp-connection-id"), Some(id.as_str()));
    // The server has both of our messages, and sends its second again.
    assert_eq!(header(&headers, "acp-received"), Some("2"));
    assert_eq!(recv(&mut socket).await, NEW_ANSWER);
    // And the connection goes on: a prompt streams its words back.
    send(&mut socket, &prompt_line(2, "one two")).await;
    assert_eq!(recv(&mut socket).await, chunk_line("one"));
    assert_eq!(recv(&mut socket).await, chunk_line("two"));
    assert_eq!(recv(&mut socket).await, end_turn(2));
    assert_eq!(served.seen.prompts.load(Ordering::SeqCst), 1);

    // Out of range: before what the server kept, or past what it sent.
    let answer = ws(
        served.addr,
        &[("acp-connection-id", &id), ("last-event-id", "0")],
    )
    .await
    .unwrap_err();
    assert_eq!(
        answer,
        (
            409,
            "cannot resume after message 0: the server kept messages from 2 on\n".into()
        )
    );
    let answer = ws(
        served.addr,
        &[("acp-connection-id", &id), ("last-event-id", "9")],
    )
    .await
    .unwrap_err();
    assert_eq!(
        answer,
        (
            409,
            "cannot resume after message 9: the server sent only 5\n".into()
        )
    );
    let answer = ws(served.addr, &[("acp-connection-id", &id)])
        .await
        .unwrap_err();
    assert_eq!(answer.0, 400, "{answer:?}");
    let answer = ws(
        served.addr,
        &[("acp-connection-id", "no-such-id"), ("last-event-id", "0")],
    )
    .await
    .unwrap_err();
    assert_eq!(answer, (404, "Unknown Acp-Connection-Id\n".into()));

    // A second client resumes the live connection: it takes over, and the
    // first is closed with 4409.
    let resume = [("acp-connection-id", id.as_str()), ("last-event-id", "5")];
    let (mut second, headers) = ws(served.addr, &resume).await.unwrap();
    assert_eq!(header(&headers, "acp-received"), Some("3"));
    match within("the first socket's close", socket.next()).await {
        Some(Ok(Message::Close(Some(frame)))) => {
            assert_eq!(frame.code, CloseCode::from(4409));
            assert_eq!(frame.reason, "another client resumed the connection");
        }
        other => panic!("expected a close, got {other:?}"),
    }
    send(&mut second, &prompt_line(3, "three")).await;
    assert_eq!(recv(&mut second).await, chunk_line("three"));
    assert_eq!(recv(&mut second).await, end_turn(3));

    // A client that closes the connection ends it: there is nothing to
    // resume, and the server forgets it.
    within("the close", second.close(None)).await.unwrap();
    until_dropped(&served, 1).await;
    let answer = ws(
        served.addr,
        &[("acp-connection-id", &id), ("last-event-id", "7")],
    )
    .await
    .unwrap_err();
    assert_eq!(answer, (404, "Unknown Acp-Connection-Id\n".into()));
}

async fn until_dropped(served: &Served, n: usize) {
    within("the agent dropped", async {
        while served.seen.dropped.load(Ordering::SeqCst) < n {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_needs_the_token_and_a_live_connection() {
    let keep = Duration::from_millis(300);
    let options = ServerOptions::default().token("t0ken").keep_sessions(keep);
    let served = Served::start(options, Duration::ZERO).await;
    let auth = ("authorization", "Bearer t0ken");
    let (mut socket, headers) = ws(served.addr, &[auth]).await.unwrap();
    let id = header(&headers, "acp-connection-id").unwrap().to_owned();
    assert_eq!(header(&headers, "acp-resumable"), Some("1"));
    send(&mut socket, INIT).await;
    recv(&mut socket).await;
    drop(socket);
    // The wrong token: refused, and the connection still waits.
    for token in ["Bearer wrong", "Bearer t0ke"] {
        let answer = ws(
            served.addr,
            &[
                ("authorization", token),
                ("acp-connection-id", &id),
                ("last-event-id", "1"),
            ],
        )
        .await
        .unwrap_err();
        assert_eq!(answer, (401, "Unauthorized\n".into()));
    }
    // Nobody came back in time: the connection closed, and says why.
    until_dropped(&served, 1).await;
    let answer = ws(
        served.addr,
        &[auth, ("acp-connection-id", &id), ("last-event-id", "1")],
    )
    .await
    .unwrap_err();
    assert_eq!(
        answer,
        (
            410,
            "the connection was closed: no client resumed the connection within 0.3 s\n".into()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_keep_time_nothing_is_resumed() {
    let served = Served::start(
        ServerOptions::default().keep_sessions(Duration::ZERO),
        Duration::ZERO,
    )
    .await;
    let (mut socket, headers) = ws(served.addr, &[]).await.unwrap();
    assert_eq!(header(&headers, "acp-resumable"), None);
    let id = header(&headers, "acp-connection-id").unwrap().to_owned();
    send(&mut socket, INIT).await;
    recv(&mut socket).await;
    drop(socket);
    until_dropped(&served, 1).await;
    let answer = ws(
        served.addr,
        &[("acp-connection-id", &id), ("last-event-id", "1")],
    )
    .await
    .unwrap_err();
    assert_eq!(
        answer,
        (
            409,
            "this server does not keep connections for a resume\n".into()
        )
    );
    // Over HTTP, no event ids.
    let answer = raw(served.addr, &post("", INIT)).await;
    assert_eq!(header_value(&answer, "acp-resumable"), None);
}

/// The agent's output while the client is away is bounded: past the limit
/// the connection closes, and a client that comes back is told why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_past_the_limit_while_the_client_is_away_closes_the_connection() {
    let options = ServerOptions::default().max_buffered_bytes(64 * 1024);
    let served = Served::start(options, Duration::ZERO).await;
    let (mut socket, headers) = ws(served.addr, &[]).await.unwrap();
    let id = header(&headers, "acp-connection-id").unwrap().to_owned();
    send(&mut socket, INIT).await;
    recv(&mut socket).await;
    send(&mut socket, NEW).await;
    recv(&mut socket).await;
    send(&mut socket, &prompt_line(2, "flood 500")).await;
    drop(socket);
    until_dropped(&served, 1).await;
    let answer = ws(
        served.addr,
        &[("acp-connection-id", &id), ("last-event-id", "2")],
    )
    .await
    .unwrap_err();
    assert_eq!(
        answer,
        (
            410,
            "the connection was closed: the client was away while the agent's output passed max_buffered_bytes (65536 bytes)\n"
                .into()
        )
    );

    // The same over Streamable HTTP, with no stream open.
    let answer = raw(served.addr, &post("", INIT)).await;
    let id = header_value(&answer, "acp-connection-id")
        .unwrap()
        .to_owned();
    let with_id = format!("Acp-Connection-Id: {id}\r\n");
    let answer = raw(served.addr, &post(&with_id, NEW)).await;
    assert_eq!(status(&answer), "HTTP/1.1 202 Accepted");
    let with_session = format!("{with_id}Acp-Session-Id: s1\r\n");
    let answer = raw(
        served.addr,
        &post(&with_session, &prompt_line(2, "flood 500")),
    )
    .await;
    assert_eq!(status(&answer), "HTTP/1.1 202 Accepted");
    until_dropped(&served, 2).await;
    let answer = raw(
        served.addr,
        &format!(
            "GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAccept: text/event-stream\r\n{with_id}Last-Event-ID: 0\r\n\r\n"
        ),
    )
    .await;
    assert_eq!(status(&answer), "HTTP/1.1 410 Gone");
    assert!(
        body(&answer).contains("max_buffered_bytes (65536 bytes)"),
        "{answer}"
    );
}

/// Sends `request` (a whole HTTP/1.1 request) and returns the whole answer.
async fn raw(addr: SocketAddr, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    within("raw answer", stream.read_to_end(&mut answer))
        .await
        .unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

fn post(headers: &str, body: &str) -> String {
    format!(
        "POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn status(answer: &str) -> &str {
    answer.lines().next().unwrap_or("")
}

fn body(answer: &str) -> &str {
    answer.split_once("\r\n\r\n").map_or("", |(_, b)| b)
}

fn header_value<'a>(answer: &'a str, name: &str) -> Option<&'a str> {
    let head = answer.split_once("\r\n\r\n").map_or(answer, |(h, _)| h);
    head.lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// An open SSE GET: reads its raw bytes.
struct Sse {
    stream: TcpStream,
    seen: Vec<u8>,
}

impl Sse {
    async fn open(addr: SocketAddr, headers: &str) -> Sse {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(
                format!(
                    "GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n{headers}\r\n"
                )
                .as_bytes(),
            )
            .await
            .unwrap();
        Sse {
            stream,
            seen: Vec::new(),
        }
    }

    /// Reads until the bytes seen contain `expected`; all seen so far.
    async fn until(&mut self, expected: &str) -> String {
        within(&format!("{expected:?} on the stream"), async {
            let mut chunk = [0; 4096];
            while !String::from_utf8_lossy(&self.seen).contains(expected) {
                let n = self.stream.read(&mut chunk).await.unwrap();
                assert!(
                    n > 0,
                    "the stream ended: {}",
                    String::from_utf8_lossy(&self.seen)
                );
                self.seen.extend_from_slice(&chunk[..n]);
            }
        })
        .await;
        String::from_utf8_lossy(&self.seen).into_owned()
    }

    /// Reads to the end of the stream (its last chunk).
    async fn rest(&mut self) -> String {
        self.until("\r\n0\r\n\r\n").await
    }
}

/// An SSE event as it goes on the wire (in a chunk of its own).
fn event(id: u64, data: &str) -> String {
    format!("id: {id}\ndata: {data}\n\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_stream_resumes_after_its_last_event_id() {
    let served = Served::start(ServerOptions::default(), Duration::ZERO).await;
    let addr = served.addr;
    let answer = raw(addr, &post("", INIT)).await;
    assert_eq!(status(&answer), "HTTP/1.1 200 OK");
    assert_eq!(header_value(&answer, "acp-resumable"), Some("300"));
    let id = header_value(&answer, "acp-connection-id")
        .unwrap()
        .to_owned();
    let with_id = format!("Acp-Connection-Id: {id}\r\n");
    assert_eq!(
        status(&raw(addr, &post(&with_id, NEW)).await),
        "HTTP/1.1 202 Accepted"
    );
    let mut connection = Sse::open(addr, &with_id).await;
    connection.until(&event(1, NEW_ANSWER)).await;

    // Three words on the session's stream; the client reads two and its
    // stream breaks.
    let with_session = format!("{with_id}Acp-Session-Id: s1\r\n");
    let mut stream = Sse::open(addr, &with_session).await;
    let answer = raw(addr, &post(&with_session, &prompt_line(2, "one two three"))).await;
    assert_eq!(status(&answer), "HTTP/1.1 202 Accepted");
    stream.until(&event(4, &end_turn(2))).await;
    drop(stream);

    // Resumed after event 1: 2, 3 and 4 again, each once.
    let mut stream = Sse::open(addr, &format!("{with_session}Last-Event-ID: 1\r\n")).await;
    let seen = stream.until(&event(4, &end_turn(2))).await;
    let events = seen.split_once("\r\n\r\n").unwrap().1;
    assert!(seen.starts_with("HTTP/1.1 200 OK\r\n"), "{seen}");
    for (n, expected) in [(2, chunk_line("two")), (3, chunk_line("three"))] {
        assert_eq!(events.matches(&event(n, &expected)).count(), 1, "{events}");
    }
    assert!(!events.contains(&chunk_line("one")), "{events}");

    // A plain second reader is refused; a resume takes over, and the first
    // reader is told so before its stream ends.
    let answer = raw(
        addr,
        &format!(
            "GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAccept: text/event-stream\r\n{with_session}\r\n"
        ),
    )
    .await;
    assert_eq!(status(&answer), "HTTP/1.1 409 Conflict");
    let mut second = Sse::open(addr, &format!("{with_session}Last-Event-ID: 4\r\n")).await;
    second.until("HTTP/1.1 200 OK").await;
    let rest = stream.rest().await;
    assert!(rest.contains("event: acp-taken-over\n\n"), "{rest}");
    let answer = raw(addr, &post(&with_session, &prompt_line(3, "four"))).await;
    assert_eq!(status(&answer), "HTTP/1.1 202 Accepted");
    let seen = second.until(&event(6, &end_turn(3))).await;
    let four = seen.find(&event(5, &chunk_line("four"))).unwrap();
    let end = seen.find(&event(6, &end_turn(3))).unwrap();
    assert!(four < end, "{seen}");
    assert_eq!(seen.matches("id: ").count(), 2, "{seen}");

    // Out of range.
    let get = |last: &str| {
        format!(
            "GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAccept: text/event-stream\r\n{with_session}Last-Event-ID: {last}\r\n\r\n"
        )
    };
    let answer = raw(addr, &get("9")).await;
    assert_eq!(status(&answer), "HTTP/1.1 409 Conflict");
    assert_eq!(
        body(&answer),
        "cannot resume after message 9: the server sent only 6\n"
    );
    let answer = raw(addr, &get("x")).await;
    assert_eq!(status(&answer), "HTTP/1.1 400 Bad Request");

    // Deleted by the client: unknown from then on.
    let delete =
        format!("DELETE /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{with_id}\r\n");
    assert_eq!(status(&raw(addr, &delete).await), "HTTP/1.1 202 Accepted");
    let answer = raw(addr, &get("6")).await;
    assert_eq!(status(&answer), "HTTP/1.1 404 Not Found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copies_sent_again_are_dropped_by_their_ids() {
    let served = Served::start(ServerOptions::default(), Duration::from_millis(200)).await;
    let addr = served.addr;
    let answer = raw(addr, &post("", INIT)).await;
    let id = header_value(&answer, "acp-connection-id")
        .unwrap()
        .to_owned();
    let with_id = format!("Acp-Connection-Id: {id}\r\n");
    raw(addr, &post(&with_id, NEW)).await;
    let with_session = format!("{with_id}Acp-Session-Id: s1\r\n");
    let mut stream = Sse::open(addr, &with_session).await;
    // A prompt, and its copy while the agent works on it (the first POST's
    // answer was lost, say): the agent sees one.
    let prompt = prompt_line(2, "a b");
    let resent = format!("{with_session}Acp-Resent: 1\r\n");
    assert_eq!(
        status(&raw(addr, &post(&with_session, &prompt)).await),
        "HTTP/1.1 202 Accepted"
    );
    assert_eq!(
        status(&raw(addr, &post(&resent, &prompt)).await),
        "HTTP/1.1 202 Accepted"
    );
    stream.until(&end_turn(2)).await;
    // A copy after the answer, marked as sent again: dropped too.
    assert_eq!(
        status(&raw(addr, &post(&resent, &prompt)).await),
        "HTTP/1.1 202 Accepted"
    );
    assert_eq!(served.seen.prompts.load(Ordering::SeqCst), 1);
    // Not marked: a new request that uses the id again, passed on.
    raw(addr, &post(&with_session, &prompt)).await;
    let seen = stream.rest_until_count(&end_turn(2), 2).await;
    assert_eq!(seen.matches(&end_turn(2)).count(), 2);
    assert_eq!(served.seen.prompts.load(Ordering::SeqCst), 2);
}

impl Sse {
    /// Reads until `expected` was seen `n` times.
    async fn rest_until_count(&mut self, expected: &str, n: usize) -> String {
        within(&format!("{n} × {expected:?}"), async {
            let mut chunk = [0; 4096];
            while String::from_utf8_lossy(&self.seen)
                .matches(expected)
                .count()
                < n
            {
                let n = self.stream.read(&mut chunk).await.unwrap();
                assert!(n > 0, "the stream ended");
                self.seen.extend_from_slice(&chunk[..n]);
            }
        })
        .await;
        String::from_utf8_lossy(&self.seen).into_owned()
    }
}
