//! The remote transports (features `websocket`, `http`, `server`): our
//! client against our server over both profiles, with an in-process agent;
//! the HTTP endpoint's status codes byte for byte; the token, loopback-only
//! rules, TLS, limits and idle connections.

use crate::support;

use acp::remote::server::{Server, ServerOptions};
use acp::remote::{ClientOptions, connect};
use acp::schema::*;
use acp::{Agent, AgentSideConnection, Client, ClientSideConnection, ConnectionOptions};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// An agent whose prompt streams its words back, then acts on them:
/// `permission` asks the client, `read PATH` reads a file through it, `slow`
/// ticks until the turn is cancelled.
struct Scripted {
    sessions: AtomicUsize,
}

impl Agent for Scripted {
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
        let n = self.sessions.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(NewSessionResponse::new(SessionId::new(format!("s{n}"))))
    }
    async fn prompt(
        &self,
        req: PromptRequest,
        cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        let session = req.session_id.clone();
        let text = req.prompt[0].as_text().unwrap_or_default().to_owned();
        let peer = cx.peer();
        for word in text.split_whitespace() {
            peer.session_notification(message(&session, format!("{word} ")))
                .await?;
        }
        if text.contains("permission") {
            let call: ToolCallUpdate = typed(json!({"toolCallId": "call-1"}));
            let option: PermissionOption =
                typed(json!({"optionId": "allow", "name": "Allow", "kind": "allow_once"}));
            let answer = peer
                .request_permission(RequestPermissionRequest::new(
                    session.clone(),
                    call,
                    vec![option],
                ))
                .await?;
            let chosen = answer
                .outcome
                .selected_option()
                .map(|o| o.to_string())
                .unwrap_or_else(|| "cancelled".into());
            peer.session_notification(message(&session, format!("permission: {chosen} ")))
                .await?;
        }
        let mut words = text.split_whitespace();
        while let Some(word) = words.next() {
            if word == "read"
                && let Some(path) = words.next()
            {
                let file = peer
                    .read_text_file(ReadTextFileRequest::new(session.clone(), path))
                    .await?;
                peer.session_notification(message(&session, format!("file: {}", file.content)))
                    .await?;
            }
        }
        if text.contains("slow") {
            let mut tick = 0;
            while !cx.is_cancelled() {
                tick += 1;
                peer.session_notification(message(&session, format!("tick {tick} ")))
                    .await?;
                tokio::select! {
                    () = cx.cancelled() => {}
                    () = tokio::time::sleep(Duration::from_millis(20)) => {}
                }
            }
            return Ok(PromptResponse::new(StopReason::Cancelled));
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

fn scripted(_: AgentSideConnection) -> Scripted {
    Scripted {
        sessions: AtomicUsize::new(0),
    }
}

/// A client that keeps the message text, allows every permission and serves
/// each file as `contents of PATH`.
#[derive(Clone, Default)]
struct Desk {
    text: Arc<Mutex<String>>,
    permissions: Arc<AtomicUsize>,
    reads: Arc<AtomicUsize>,
}

impl Client for Desk {
    async fn request_permission(
        &self,
        req: RequestPermissionRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<RequestPermissionResponse, Error> {
        self.permissions.fetch_add(1, Ordering::SeqCst);
        Ok(RequestPermissionResponse::selected(
            req.options[0].option_id.clone(),
        ))
    }
    async fn read_text_file(
        &self,
        req: ReadTextFileRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<ReadTextFileResponse, Error> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        Ok(ReadTextFileResponse::new(format!(
            "contents of {}",
            req.path
        )))
    }
    async fn session_notification(
        &self,
        n: SessionNotification,
        _cx: NotificationContext<ClientSide>,
    ) -> Result<(), Error> {
        if let Some(text) = message_text(&n) {
            self.text.lock().unwrap().push_str(&text);
        }
        Ok(())
    }
}

impl Desk {
    fn take(&self) -> String {
        std::mem::take(&mut *self.text.lock().unwrap())
    }
}

/// A server of [`Scripted`] on a loopback port.
async fn start(options: ServerOptions) -> (SocketAddr, acp::CancellationToken) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = Server::for_agent(options, scripted);
    let stop = server.shutdown_token();
    tokio::spawn(server.serve(listener));
    (addr, stop)
}

async fn client_for(url: &str, options: ClientOptions, desk: &Desk) -> ClientSideConnection {
    let transport = within("connect", connect(url, options)).await.unwrap();
    let desk = desk.clone();
    let (client, io) = ClientSideConnection::new(transport, ConnectionOptions::default(), |_| desk);
    tokio::spawn(io);
    client
}

/// initialize, a session, a prompt with updates, a permission request and a
/// file read flowing back, then a slow prompt cancelled with session/cancel.
async fn full_session(client: &ClientSideConnection, desk: &Desk) {
    let init = within(
        "initialize",
        client.initialize(InitializeRequest::new(ProtocolVersion::LATEST)),
    )
    .await
    .unwrap();
    assert_eq!(init.protocol_version, ProtocolVersion::LATEST);
    let session = within(
        "session/new",
        client.new_session(NewSessionRequest::new("/work")),
    )
    .await
    .unwrap()
    .session_id;
    let reply = within(
        "prompt",
        client.prompt(prompt(session.as_ref(), "hello permission read /etc/motd")),
    )
    .await
    .unwrap();
    assert_eq!(reply.stop_reason, StopReason::EndTurn);
    assert_eq!(
        desk.take(),
        "hello permission read /etc/motd permission: allow file: contents of /etc/motd"
    );
    assert_eq!(desk.permissions.load(Ordering::SeqCst), 1);
    assert_eq!(desk.reads.load(Ordering::SeqCst), 1);

    let slow = client.prompt(prompt(session.as_ref(), "slow"));
    let cancel = async {
        while !desk.text.lock().unwrap().contains("tick 3 ") {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        client
            .cancel(CancelNotification::new(session.clone()))
            .await
            .unwrap();
    };
    let (reply, ()) = within("cancelled prompt", async { tokio::join!(slow, cancel) }).await;
    assert_eq!(reply.unwrap().stop_reason, StopReason::Cancelled);
    assert!(desk.take().starts_with("slow tick 1 tick 2 tick 3 "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_session_over_websocket() {
    let (addr, _stop) = start(ServerOptions::default()).await;
    let desk = Desk::default();
    let client = client_for(&format!("ws://{addr}/acp"), ClientOptions::default(), &desk).await;
    full_session(&client, &desk).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_session_over_streamable_http() {
    let (addr, _stop) = start(ServerOptions::default()).await;
    let desk = Desk::default();
    let client = client_for(
        &format!("http://{addr}/acp"),
        ClientOptions::default(),
        &desk,
    )
    .await;
    full_session(&client, &desk).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_on_one_http_connection_each_get_their_own_stream() {
    let (addr, _stop) = start(ServerOptions::default()).await;
    let desk = Desk::default();
    let client = client_for(
        &format!("http://{addr}/acp"),
        ClientOptions::default(),
        &desk,
    )
    .await;
    client
        .initialize(InitializeRequest::new(ProtocolVersion::LATEST))
        .await
        .unwrap();
    let a = client
        .new_session(NewSessionRequest::new("/a"))
        .await
        .unwrap()
        .session_id;
    let b = client
        .new_session(NewSessionRequest::new("/b"))
        .await
        .unwrap()
        .session_id;
    assert_ne!(a, b);
    let (ra, rb) = within("two prompts", async {
        tokio::join!(
            client.prompt(prompt(a.as_ref(), "one permission")),
            client.prompt(prompt(b.as_ref(), "two permission"))
        )
    })
    .await;
    assert_eq!(ra.unwrap().stop_reason, StopReason::EndTurn);
    assert_eq!(rb.unwrap().stop_reason, StopReason::EndTurn);
    assert_eq!(desk.permissions.load(Ordering::SeqCst), 2);
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
        "POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

const INIT: &str =
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;

fn status(answer: &str) -> &str {
    answer.lines().next().unwrap_or("")
}

fn body(answer: &str) -> &str {
    answer.split_once("\r\n\r\n").map_or("", |(_, b)| b)
}

fn header_value<'a>(answer: &'a str, name: &str) -> Option<&'a str> {
    answer.lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_endpoint_answers_as_the_rfd_and_the_sdk_do() {
    let (addr, _stop) = start(ServerOptions::default()).await;
    let json = "Content-Type: application/json\r\n";

    let answer = raw(addr, &post("Content-Type: text/plain\r\n", INIT)).await;
    assert_eq!(status(&answer), "HTTP/1.1 415 Unsupported Media Type");
    let answer = raw(addr, &post(json, "{not json")).await;
    assert_eq!(
        (status(&answer), body(&answer)),
        ("HTTP/1.1 400 Bad Request", "Invalid JSON\n")
    );
    let answer = raw(addr, &post(json, "[1,2]")).await;
    assert_eq!(status(&answer), "HTTP/1.1 400 Bad Request");
    assert_eq!(
        body(&answer),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not supported"}}"#
    );
    let notification = r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#;
    let answer = raw(addr, &post(json, notification)).await;
    assert_eq!(body(&answer), "Missing Acp-Connection-Id\n");
    let answer = raw(
        addr,
        &post(&format!("{json}Acp-Connection-Id: nope\r\n"), notification),
    )
    .await;
    assert_eq!(
        (status(&answer), body(&answer)),
        ("HTTP/1.1 404 Not Found", "Unknown Acp-Connection-Id\n")
    );

    // initialize: 200, the response as JSON, the connection's id.
    let answer = raw(addr, &post(json, INIT)).await;
    assert_eq!(status(&answer), "HTTP/1.1 200 OK");
    assert_eq!(
        header_value(&answer, "content-type"),
        Some("application/json")
    );
    let answer_body: serde_json::Value = serde_json::from_str(body(&answer)).unwrap();
    assert_eq!(answer_body["id"], 0);
    assert_eq!(answer_body["result"]["protocolVersion"], 1);
    let id = header_value(&answer, "acp-connection-id")
        .unwrap()
        .to_owned();
    let with_id = format!("{json}Acp-Connection-Id: {id}\r\n");

    let answer = raw(addr, &post(&with_id, INIT)).await;
    assert_eq!(
        body(&answer),
        "Initialize not allowed on existing connection\n"
    );
    let prompt = r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#;
    let answer = raw(addr, &post(&with_id, prompt)).await;
    assert_eq!(body(&answer), "Missing Acp-Session-Id\n");
    let answer = raw(
        addr,
        &post(&format!("{with_id}Acp-Session-Id: s2\r\n"), prompt),
    )
    .await;
    assert_eq!(body(&answer), "Mismatched Acp-Session-Id\n");
    let new =
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#;
    let answer = raw(addr, &post(&with_id, new)).await;
    assert_eq!(status(&answer), "HTTP/1.1 202 Accepted");
    assert_eq!(body(&answer), "");

    // GET: Accept is checked; the stream carries the session/new response.
    let get = |extra: &str| {
        format!("GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nAcp-Connection-Id: {id}\r\n{extra}\r\n")
    };
    let answer = raw(addr, &get("Connection: close\r\n")).await;
    assert_eq!(status(&answer), "HTTP/1.1 406 Not Acceptable");
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(get("Accept: text/event-stream\r\n").as_bytes())
        .await
        .unwrap();
    let mut seen = Vec::new();
    let expected = r#"data: {"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}"#;
    within(
        "the session/new response on the connection's stream",
        async {
            let mut chunk = [0; 4096];
            while !String::from_utf8_lossy(&seen).contains(expected) {
                let n = stream.read(&mut chunk).await.unwrap();
                assert!(n > 0, "stream ended: {}", String::from_utf8_lossy(&seen));
                seen.extend_from_slice(&chunk[..n]);
            }
        },
    )
    .await;
    let head = String::from_utf8_lossy(&seen).into_owned();
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert_eq!(
        header_value(&head, "content-type"),
        Some("text/event-stream")
    );
    // A second reader of the same stream: 409.
    let answer = raw(
        addr,
        &get("Accept: text/event-stream\r\nConnection: close\r\n"),
    )
    .await;
    assert_eq!(status(&answer), "HTTP/1.1 409 Conflict");

    // DELETE ends it; the stream ends, and the id is unknown afterwards.
    let delete = format!(
        "DELETE /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAcp-Connection-Id: {id}\r\n\r\n"
    );
    assert_eq!(status(&raw(addr, &delete).await), "HTTP/1.1 202 Accepted");
    within("the stream's last chunk", async {
        let mut chunk = [0; 4096];
        while !seen.ends_with(b"0\r\n\r\n") {
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "closed before the last chunk");
            seen.extend_from_slice(&chunk[..n]);
        }
    })
    .await;
    assert_eq!(status(&raw(addr, &delete).await), "HTTP/1.1 404 Not Found");

    let answer = raw(
        addr,
        "PUT /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
    )
    .await;
    assert_eq!(status(&answer), "HTTP/1.1 405 Method Not Allowed");
    let answer = raw(
        addr,
        "GET /other HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(status(&answer), "HTTP/1.1 404 Not Found");
    let answer = raw(
        addr,
        "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(status(&answer), "HTTP/1.1 200 OK");
    assert_eq!(body(&answer), r#"{"status":"ok","connections":0}"#);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_is_required_when_set_and_refusals_say_nothing_more() {
    let (addr, _stop) = start(ServerOptions::default().token("s3cret-token")).await;
    let json = "Content-Type: application/json\r\n";
    for auth in [
        "",
        "Authorization: Bearer wrong\r\n",
        "Authorization: Basic s3cret-token\r\n",
        "Authorization: Bearer s3cret-toke\r\n",
    ] {
        let answer = raw(addr, &post(&format!("{json}{auth}"), INIT)).await;
        assert_eq!(status(&answer), "HTTP/1.1 401 Unauthorized", "{auth}");
        assert_eq!(body(&answer), "Unauthorized\n");
        assert_eq!(header_value(&answer, "www-authenticate"), Some("Bearer"));
    }
    let answer = raw(
        addr,
        &post(
            &format!("{json}Authorization: Bearer s3cret-token\r\n"),
            INIT,
        ),
    )
    .await;
    assert_eq!(status(&answer), "HTTP/1.1 200 OK");
    // The health check needs no token.
    let answer = raw(
        addr,
        "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(status(&answer), "HTTP/1.1 200 OK");

    // Our clients: refused without it, a full session with it.
    let url = format!("ws://{addr}/acp");
    let error = connect(&url, ClientOptions::default().bearer_token("wrong"))
        .await
        .unwrap_err();
    assert_eq!(
        error.kind(),
        std::io::ErrorKind::PermissionDenied,
        "{error}"
    );
    assert!(error.to_string().contains("401"), "{error}");
    let desk = Desk::default();
    let client = client_for(
        &url,
        ClientOptions::default().bearer_token("s3cret-token"),
        &desk,
    )
    .await;
    full_session(&client, &desk).await;

    let desk = Desk::default();
    let client = client_for(
        &format!("http://{addr}/acp"),
        ClientOptions::default(),
        &desk,
    )
    .await;
    let error = within(
        "refused initialize",
        client.initialize(InitializeRequest::new(ProtocolVersion::LATEST)),
    )
    .await
    .unwrap_err();
    assert!(error.to_string().contains("HTTP 401"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_token_only_loopback_hosts_and_origins_get_in() {
    let (addr, _stop) = start(ServerOptions::default()).await;
    let json = "Content-Type: application/json\r\n";
    let evil_host = format!(
        "POST /acp HTTP/1.1\r\nHost: evil.example:80\r\nConnection: close\r\n{json}Content-Length: {}\r\n\r\n{INIT}",
        INIT.len()
    );
    assert_eq!(
        status(&raw(addr, &evil_host).await),
        "HTTP/1.1 403 Forbidden"
    );
    let answer = raw(
        addr,
        &post(&format!("{json}Origin: https://evil.example\r\n"), INIT),
    )
    .await;
    assert_eq!(status(&answer), "HTTP/1.1 403 Forbidden");
    let answer = raw(
        addr,
        &post(&format!("{json}Origin: http://localhost:3000\r\n"), INIT),
    )
    .await;
    assert_eq!(status(&answer), "HTTP/1.1 200 OK");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_a_test_certificate_over_both_profiles() {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let chain = vec![cert.cert.der().clone()];
    let key = rustls_pki_types::PrivateKeyDer::try_from(cert.signing_key.serialize_der()).unwrap();
    let tls = acp::remote::tls::server_config(chain.clone(), key).unwrap();
    let (addr, _stop) = start(ServerOptions::default().tls(tls)).await;
    let port = addr.port();
    for url in [
        format!("wss://localhost:{port}/acp"),
        format!("https://localhost:{port}/acp"),
    ] {
        let desk = Desk::default();
        let options = ClientOptions::default().root_certificate(chain[0].clone());
        let client = client_for(&url, options, &desk).await;
        full_session(&client, &desk).await;
    }
    // Without the test root, the certificate is not trusted.
    let error = connect(
        &format!("wss://localhost:{port}/acp"),
        ClientOptions::default(),
    )
    .await
    .unwrap_err();
    assert!(error.to_string().contains("TLS"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_over_the_limit_closes_a_websocket_and_is_refused_over_http() {
    let (addr, _stop) = start(ServerOptions::default().max_message_size(4096)).await;
    let desk = Desk::default();
    let client = client_for(&format!("ws://{addr}/acp"), ClientOptions::default(), &desk).await;
    client
        .initialize(InitializeRequest::new(ProtocolVersion::LATEST))
        .await
        .unwrap();
    let big = "x".repeat(10_000);
    let error = within("the refused prompt", client.prompt(prompt("s1", &big)))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("message too big"), "{error}");

    let json = "Content-Type: application/json\r\n";
    let answer = raw(addr, &post(json, &format!("{{\"x\":\"{big}\"}}"))).await;
    assert_eq!(status(&answer), "HTTP/1.1 413 Payload Too Large");
    assert_eq!(
        body(&answer),
        "the message is over the limit of 4096 bytes\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed() {
    let idle = Duration::from_millis(300);
    // Without a keep time, idle is the only wait (remote_resume.rs tests
    // connections kept for a resume).
    let options = ServerOptions::default()
        .idle_timeout(idle)
        .keep_sessions(Duration::ZERO);
    let (addr, _stop) = start(options).await;
    let json = "Content-Type: application/json\r\n";
    let answer = raw(addr, &post(json, INIT)).await;
    let id = header_value(&answer, "acp-connection-id")
        .unwrap()
        .to_owned();
    let new =
        r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#;
    within("the idle HTTP connection's end", async {
        loop {
            let answer = raw(
                addr,
                &post(&format!("{json}Acp-Connection-Id: {id}\r\n"), new),
            )
            .await;
            // Gone, and the server says why.
            if status(&answer) == "HTTP/1.1 410 Gone" {
                assert_eq!(body(&answer), "the connection was closed: idle for 0.3 s\n");
                break;
            }
            // Each POST is activity: wait longer than the timeout.
            tokio::time::sleep(idle * 2).await;
        }
    })
    .await;

    // A WebSocket client that stops answering pings (it never reads).
    let mut socket = TcpStream::connect(addr).await.unwrap();
    socket
        .write_all(b"GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        .await
        .unwrap();
    let mut seen = Vec::new();
    within("the idle WebSocket's close", async {
        let mut chunk = [0; 1024];
        loop {
            let n = socket.read(&mut chunk).await.unwrap();
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&chunk[..n]);
        }
    })
    .await;
    let text = String::from_utf8_lossy(&seen);
    assert!(
        text.starts_with("HTTP/1.1 101 Switching Protocols\r\n"),
        "{text}"
    );
    assert!(text.contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), "{text}");
    assert!(text.contains("idle: nothing from the client"), "{text}");
}
