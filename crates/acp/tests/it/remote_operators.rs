//! The remote server for operators (features `websocket`, `http`, `server`):
//! the loopback-only rules of a server without a token (the `Host` check
//! against DNS rebinding, over both profiles), and for operators with the
//! token: the list of connections and read-only watchers of their traffic.

use crate::support;

use acp::remote::server::{Server, ServerOptions};
use acp::schema::*;
use acp::{Agent, AgentSideConnection};
use std::net::SocketAddr;
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Answers initialize and makes sessions; nothing more is needed here.
struct Plain;

impl Agent for Plain {
    async fn initialize(
        &self,
        _: InitializeRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<InitializeResponse, Error> {
        Ok(InitializeResponse::new(ProtocolVersion::LATEST))
    }
    async fn new_session(
        &self,
        _: NewSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<NewSessionResponse, Error> {
        Ok(NewSessionResponse::new(SessionId::new("s1")))
    }
}

async fn start(options: ServerOptions) -> (SocketAddr, acp::CancellationToken) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = Server::for_agent(options, |_: AgentSideConnection| Plain);
    let stop = server.shutdown_token();
    tokio::spawn(server.serve(listener));
    (addr, stop)
}

/// Sends `request` (a whole HTTP/1.1 request) and returns the answer's head
/// (up to the blank line), or everything until the server closed.
async fn head(addr: SocketAddr, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    within("the answer's head", async {
        let mut chunk = [0; 1024];
        while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut chunk).await.unwrap();
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&chunk[..n]);
        }
    })
    .await;
    String::from_utf8_lossy(&seen).into_owned()
}

fn upgrade(host: &str) -> String {
    format!(
        "GET /acp HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tokenless_server_refuses_a_websocket_upgrade_for_a_foreign_host() {
    let (addr, _stop) = start(ServerOptions::default()).await;
    let port = addr.port();
    for host in [
        format!("evil.example:{port}"),
        "evil.example".to_owned(),
        format!("127.0.0.1.evil.example:{port}"),
        format!("localhost.evil.example:{port}"),
        format!("[::1]evil.example:{port}"),
        format!("[::1]:{port}@evil.example"),
        format!("10.0.0.1:{port}"),
        String::new(),
    ] {
        let answer = head(addr, &upgrade(&host)).await;
        assert!(
            answer.starts_with("HTTP/1.1 403 Forbidden\r\n"),
            "Host {host:?}: {answer}"
        );
    }
    // No Host at all (HTTP/1.0 allows it): refused too.
    let answer = head(
        addr,
        "GET /acp HTTP/1.0\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.0 403 Forbidden\r\n"), "{answer}");
    // A request target in absolute form names the host the browser meant.
    let answer = head(
        addr,
        &format!(
            "GET http://evil.example:{port}/acp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
             Upgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
    // Loopback names and addresses get in.
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
        "localhost".to_owned(),
    ] {
        let answer = head(addr, &upgrade(&host)).await;
        assert!(
            answer.starts_with("HTTP/1.1 101 Switching Protocols\r\n"),
            "Host {host:?}: {answer}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_with_a_token_takes_any_host() {
    let (addr, _stop) = start(ServerOptions::default().token("t0ken")).await;
    let request = upgrade("agents.example.com").replace(
        "Upgrade: websocket",
        "Authorization: Bearer t0ken\r\nUpgrade: websocket",
    );
    let answer = head(addr, &request).await;
    assert!(
        answer.starts_with("HTTP/1.1 101 Switching Protocols\r\n"),
        "{answer}"
    );
}

use crate::remote_support;

use futures::{SinkExt, StreamExt};
use remote_support::{Served, list_connections};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const INIT: &str =
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
const NEW: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}"#;

type Ws = tokio_tungstenite::WebSocketStream<TcpStream>;

/// A WebSocket client of the server at `addr` with `auth`: the socket and
/// its connection id.
async fn ws(addr: SocketAddr, auth: &str) -> (Ws, String) {
    let mut request = format!("ws://{addr}/acp").into_client_request().unwrap();
    if !auth.is_empty() {
        request
            .headers_mut()
            .insert("authorization", auth.parse().unwrap());
    }
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (socket, response) = within("the upgrade", tokio_tungstenite::client_async(request, tcp))
        .await
        .unwrap();
    let id = response.headers()["acp-connection-id"]
        .to_str()
        .unwrap()
        .to_owned();
    (socket, id)
}

async fn exchange(socket: &mut Ws, text: &str) -> String {
    within("a send", socket.send(Message::text(text)))
        .await
        .unwrap();
    loop {
        match within("a frame", socket.next()).await {
            Some(Ok(Message::Text(text))) => return text.to_string(),
            Some(Ok(_)) => {}
            other => panic!("{other:?}"),
        }
    }
}

/// A watch stream, read line by line.
struct Watch {
    stream: TcpStream,
    seen: Vec<u8>,
}

impl Watch {
    /// `GET path` with `auth`; the answer's head.
    async fn open(addr: SocketAddr, path: &str, auth: &str) -> (Watch, String) {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\n").as_bytes())
            .await
            .unwrap();
        let mut watch = Watch {
            stream,
            seen: Vec::new(),
        };
        watch
            .fill_until(|seen| seen.windows(4).any(|w| w == b"\r\n\r\n"))
            .await;
        let text = String::from_utf8_lossy(&watch.seen).into_owned();
        let (head, _) = text.split_once("\r\n\r\n").unwrap();
        (watch, head.to_owned())
    }

    async fn fill_until(&mut self, done: impl Fn(&[u8]) -> bool) {
        within("the watch stream", async {
            let mut chunk = [0; 4096];
            while !done(&self.seen) {
                let n = self.stream.read(&mut chunk).await.unwrap();
                assert!(n > 0, "ended: {}", String::from_utf8_lossy(&self.seen));
                self.seen.extend_from_slice(&chunk[..n]);
            }
        })
        .await;
    }

    /// The JSON lines of the body so far (chunk framing taken out).
    fn lines(&self) -> Vec<serde_json::Value> {
        let text = String::from_utf8_lossy(&self.seen);
        let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        body.lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|v| v.is_object())
            .collect()
    }

    /// Reads until a line satisfies `want`.
    async fn until(&mut self, want: impl Fn(&serde_json::Value) -> bool) -> Vec<serde_json::Value> {
        within("a watch record", async {
            loop {
                if self.lines().iter().any(&want) {
                    return self.lines();
                }
                let mut chunk = [0; 4096];
                let n = self.stream.read(&mut chunk).await.unwrap();
                assert!(n > 0, "ended: {}", String::from_utf8_lossy(&self.seen));
                self.seen.extend_from_slice(&chunk[..n]);
            }
        })
        .await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operators_list_connections_and_watch_their_traffic_with_the_token() {
    let options = ServerOptions::default().token("t0ken");
    let served = Served::start(options, Duration::ZERO).await;
    let addr = served.addr;
    let auth = "Authorization: Bearer t0ken\r\n";
    // Without the token: nothing.
    let (status, body) = list_connections(addr, "").await;
    assert_eq!(
        (status.as_str(), body.as_str()),
        ("HTTP/1.1 401 Unauthorized", "Unauthorized\n")
    );
    let (_, head) = Watch::open(addr, "/connections/x/watch", "").await;
    assert!(head.starts_with("HTTP/1.1 401 Unauthorized"), "{head}");
    let (status, body) = list_connections(addr, auth).await;
    assert_eq!(
        (status.as_str(), body.as_str()),
        ("HTTP/1.1 200 OK", r#"{"connections":[]}"#)
    );

    let (mut socket, id) = ws(addr, "Bearer t0ken").await;
    let answer = exchange(&mut socket, INIT).await;
    let (_, body) = list_connections(addr, auth).await;
    let list: serde_json::Value = serde_json::from_str(&body).unwrap();
    let entry = &list["connections"][0];
    assert_eq!(entry["id"], id.as_str());
    assert_eq!(entry["profile"], "websocket");
    assert_eq!(entry["agent"], "Echo");
    assert_eq!(entry["state"], "attached");
    assert_eq!(entry["messagesIn"], 1);
    assert_eq!(entry["messagesOut"], 1);
    assert!(
        entry["ageSeconds"].is_u64() && entry["peer"].is_string(),
        "{entry}"
    );
    // The health check stays minimal.
    let (mut health, head) = Watch::open(addr, "/healthz", "Connection: close\r\n").await;
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    health.fill_until(|seen| seen.ends_with(b"}")).await;
    assert!(
        String::from_utf8_lossy(&health.seen)
            .ends_with("\r\n\r\n{\"status\":\"ok\",\"connections\":1}"),
        "{}",
        String::from_utf8_lossy(&health.seen)
    );

    // A watcher from the start sees the initialize exchange; one from now
    // does not; both see what comes next, both ways, in order.
    let path = format!("/connections/{id}/watch");
    let (mut from_start, head) = Watch::open(addr, &format!("{path}?from=start"), auth).await;
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/x-ndjson"),
        "{head}"
    );
    let (mut from_now, _) = Watch::open(addr, &path, auth).await;
    let lines = from_start.until(|v| v["line"] == answer.as_str()).await;
    assert_eq!(lines[0]["acpRecord"], 1);
    assert_eq!(lines[0]["agent"], serde_json::json!(["Echo"]));
    assert_eq!(lines[0]["connection"], id.as_str());
    assert!(
        lines[0]["started"].as_str().unwrap().ends_with('Z'),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1]["from"], "client");
    assert_eq!(lines[1]["line"], INIT);
    assert_eq!(lines[2]["from"], "agent");
    assert!(lines[1]["t"].as_f64().unwrap() <= lines[2]["t"].as_f64().unwrap());
    let new_answer = exchange(&mut socket, NEW).await;
    for watch in [&mut from_start, &mut from_now] {
        let lines = watch.until(|v| v["line"] == new_answer.as_str()).await;
        let records: Vec<(&str, &str)> = lines
            .iter()
            .filter_map(|v| Some((v["from"].as_str()?, v["line"].as_str()?)))
            .collect();
        let tail = &records[records.len() - 2..];
        assert_eq!(tail, [("client", NEW), ("agent", new_answer.as_str())]);
    }
    assert!(!from_now.lines().iter().any(|v| v["line"] == INIT));
    let (_, body) = list_connections(addr, auth).await;
    assert!(body.contains(r#""watchers":2"#), "{body}");

    // The client closes: the watchers see both ends, and their streams end.
    within("the close", socket.close(None)).await.unwrap();
    for watch in [&mut from_start, &mut from_now] {
        let lines = watch
            .until(|v| v["from"] == "agent" && v["eof"] == true)
            .await;
        assert!(
            lines
                .iter()
                .any(|v| v["from"] == "client" && v["eof"] == true)
        );
        watch
            .fill_until(|seen| seen.ends_with(b"\r\n0\r\n\r\n"))
            .await;
    }
    let (_, head) = Watch::open(addr, &path, auth).await;
    assert!(head.starts_with("HTTP/1.1 404 Not Found"), "{head}");
    let (_, head) = Watch::open(addr, &format!("{path}?from=yesterday"), auth).await;
    assert!(head.starts_with("HTTP/1.1 400 Bad Request"), "{head}");
    let (status, _) = list_connections(addr, auth).await;
    assert_eq!(status, "HTTP/1.1 200 OK");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_are_bounded_and_a_closed_connection_says_why() {
    let options = ServerOptions::default().keep_sessions(Duration::from_millis(200));
    let served = Served::start(options, Duration::ZERO).await;
    let addr = served.addr;
    let (mut socket, id) = ws(addr, "").await;
    exchange(&mut socket, INIT).await;
    let path = format!("/connections/{id}/watch");
    let mut watchers = Vec::new();
    for _ in 0..16 {
        let (watch, head) = Watch::open(addr, &path, "").await;
        assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
        watchers.push(watch);
    }
    let (_, head) = Watch::open(addr, &path, "").await;
    assert!(head.starts_with("HTTP/1.1 429 Too Many Requests"), "{head}");
    // The socket breaks; the connection is detached, then closed.
    drop(socket);
    let (_, head) = Watch::open(addr, "/connections/x/watch", "").await;
    assert!(head.starts_with("HTTP/1.1 404 Not Found"), "{head}");
    within("the close", async {
        loop {
            let (mut watch, head) = Watch::open(addr, &path, "Connection: close\r\n").await;
            if head.starts_with("HTTP/1.1 410 Gone") {
                watch.fill_until(|seen| seen.ends_with(b"s\n")).await;
                let text = String::from_utf8_lossy(&watch.seen).into_owned();
                assert!(
                    text.ends_with(
                        "the connection closed: no client resumed the connection within 0.2 s\n"
                    ),
                    "{text}"
                );
                return;
            }
            drop(watch);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
}

/// The library's side of it, as `acp watch` would use it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_library_lists_and_watches_with_the_token() {
    use acp::remote::{ClientOptions, list_connections as list, watch};
    let served = Served::start(ServerOptions::default().token("t0ken"), Duration::ZERO).await;
    let addr = served.addr;
    let url = format!("ws://{addr}/acp");
    let wrong = ClientOptions::default().bearer_token("nope");
    let error = list(&url, &wrong).await.unwrap_err();
    assert_eq!(
        error.kind(),
        std::io::ErrorKind::PermissionDenied,
        "{error}"
    );
    let options = ClientOptions::default().bearer_token("t0ken");
    assert_eq!(list(&url, &options).await.unwrap(), []);

    let (mut socket, id) = ws(addr, "Bearer t0ken").await;
    let answer = exchange(&mut socket, INIT).await;
    let listed = list(&url, &options).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (
            listed[0].id.as_str(),
            listed[0].profile.as_str(),
            listed[0].agent.as_str()
        ),
        (id.as_str(), "websocket", "Echo")
    );
    assert_eq!(
        (listed[0].state.as_str(), listed[0].messages_in),
        ("attached", 1)
    );

    let mut watching = within("the watch", watch(&url, &id, true, &options))
        .await
        .unwrap();
    let mut lines = Vec::new();
    for _ in 0..3 {
        lines.push(
            within("a line", watching.next_line())
                .await
                .unwrap()
                .unwrap(),
        );
    }
    assert!(
        lines[0].starts_with(r#"{"acpRecord":1,"started":""#),
        "{}",
        lines[0]
    );
    let record = |line: &str| serde_json::from_str::<serde_json::Value>(line).unwrap();
    assert_eq!(record(&lines[1])["line"], INIT);
    assert_eq!(record(&lines[2])["line"], answer.as_str());
    within("the close", socket.close(None)).await.unwrap();
    let mut rest = Vec::new();
    while let Some(line) = within("a line", watching.next_line()).await.unwrap() {
        rest.push(record(&line));
    }
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert!(rest.iter().all(|r| r["eof"] == true), "{rest:?}");

    let error = watch(&url, &id, false, &options).await.unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::NotFound, "{error}");
    let error = watch(&url, "../healthz", false, &options)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput, "{error}");
}

/// A watch stream that never ends its line (a broken or hostile server) is
/// an error once the line is longer than a record of the longest message,
/// not memory without end.
#[tokio::test]
async fn a_watch_line_without_end_is_an_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buffer = [0u8; 1024];
        while !request.ends_with(b"\r\n\r\n") {
            let n = socket.read(&mut buffer).await.unwrap();
            assert!(n > 0, "the request ended early");
            request.extend_from_slice(&buffer[..n]);
        }
        socket
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\n\r\n")
            .await
            .unwrap();
        let chunk = format!("{:x}\r\n{}\r\n", 4096, "a".repeat(4096));
        // Until the client goes.
        while socket.write_all(chunk.as_bytes()).await.is_ok() {}
        String::from_utf8_lossy(&request).into_owned()
    });
    let options = acp::remote::ClientOptions::default().max_message_size(1024);
    let url = format!("http://{addr}/acp");
    let mut watch = within(
        "the watch",
        acp::remote::watch(&url, "c-1", false, &options),
    )
    .await
    .unwrap();
    let error = within("the line", watch.next_line()).await.unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidData, "{error}");
    assert!(
        error.to_string().contains("longer than 7168 bytes"),
        "{error}"
    );
    drop(watch);
    let request = within("the server", server).await.unwrap();
    assert!(
        request.starts_with("GET /connections/c-1/watch HTTP/1.1\r\n"),
        "{request}"
    );
}
