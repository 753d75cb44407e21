//! The remote server for operators (features `websocket`, `http`, `server`):
//! the loopback-only rules of a server without a token (the `Host` check
//! against DNS rebinding, over both profiles).

mod support;

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
