//! What the tests of remote sessions share: an agent that streams words
//! slowly, a client that keeps what it is told, servers on loopback, and a
//! TCP proxy that breaks connections on command.
#![allow(dead_code)]

use acp::remote::server::{Server, ServerOptions};
use acp::remote::{ClientOptions, LinkEvent, Reconnect, connect};
use acp::schema::*;
use acp::{
    Agent, AgentSideConnection, Client, ClientSideConnection, ConnectionOptions,
    NotificationContext, RequestContext,
};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::support::{message, message_text, within};

/// What every echo agent of a server has done.
#[derive(Default)]
pub struct Seen {
    /// `session/prompt` calls.
    pub prompts: AtomicUsize,
    /// Agents dropped (their connection ended).
    pub dropped: AtomicUsize,
}

/// An agent whose prompt streams its words back, one notification each,
/// `pause` apart; `flood N` sends N notifications of 1 KiB at once.
pub struct Echo {
    pub pause: Duration,
    pub seen: Arc<Seen>,
}

impl Drop for Echo {
    fn drop(&mut self) {
        self.seen.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

impl Agent for Echo {
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
    async fn prompt(
        &self,
        req: PromptRequest,
        cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        self.seen.prompts.fetch_add(1, Ordering::SeqCst);
        let text = req.prompt[0].as_text().unwrap_or_default().to_owned();
        let peer = cx.peer();
        if let Some(n) = text.strip_prefix("flood ") {
            let n: usize = n.trim().parse().unwrap_or(0);
            let chunk = "x".repeat(1024);
            for _ in 0..n {
                peer.session_notification(message(&req.session_id, chunk.clone()))
                    .await?;
            }
            return Ok(PromptResponse::new(StopReason::EndTurn));
        }
        for word in text.split_whitespace() {
            peer.session_notification(message(&req.session_id, format!("{word} ")))
                .await?;
            tokio::time::sleep(self.pause).await;
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

/// A server of [`Echo`] agents on a loopback port.
pub struct Served {
    pub addr: SocketAddr,
    pub stop: acp::CancellationToken,
    pub seen: Arc<Seen>,
    pub task: JoinHandle<std::io::Result<()>>,
}

impl Served {
    /// Starts one on `addr` (port 0 for any).
    pub async fn start_on(addr: &str, options: ServerOptions, pause: Duration) -> Served {
        let listener = TcpListener::bind(addr).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Seen::default());
        let agents = Arc::clone(&seen);
        let server = Server::for_agent(options, move |_: AgentSideConnection| Echo {
            pause,
            seen: Arc::clone(&agents),
        });
        let stop = server.shutdown_token();
        let task = tokio::spawn(server.serve(listener));
        Served {
            addr,
            stop,
            seen,
            task,
        }
    }

    pub async fn start(options: ServerOptions, pause: Duration) -> Served {
        Served::start_on("127.0.0.1:0", options, pause).await
    }

    /// Stops it and waits until its listener is closed.
    pub async fn stop(self) {
        self.stop.cancel();
        let _ = within("the server's end", self.task).await;
    }
}

/// A client that keeps the message text.
#[derive(Clone, Default)]
pub struct Desk {
    pub text: Arc<Mutex<String>>,
}

impl Client for Desk {
    async fn request_permission(
        &self,
        req: RequestPermissionRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<RequestPermissionResponse, Error> {
        Ok(RequestPermissionResponse::selected(
            req.options[0].option_id.clone(),
        ))
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
    pub fn text(&self) -> String {
        self.text.lock().unwrap().clone()
    }

    /// How many words it has.
    pub fn words(&self) -> usize {
        self.text.lock().unwrap().split_whitespace().count()
    }
}

/// Events a client reported.
#[derive(Clone, Default)]
pub struct Events(pub Arc<Mutex<Vec<LinkEvent>>>);

impl Events {
    pub fn all(&self) -> Vec<LinkEvent> {
        self.0.lock().unwrap().clone()
    }

    pub fn resumed(&self) -> usize {
        self.all()
            .iter()
            .filter(|e| matches!(e, LinkEvent::Resumed { .. }))
            .count()
    }

    pub fn reconnecting(&self) -> usize {
        self.all()
            .iter()
            .filter(|e| matches!(e, LinkEvent::Reconnecting { .. }))
            .count()
    }
}

/// Client options that reconnect quickly, reporting to `events`.
pub fn reconnecting(events: &Events) -> ClientOptions {
    let log = Arc::clone(&events.0);
    ClientOptions::default()
        .reconnect(
            Reconnect::default()
                .first_delay(Duration::from_millis(50))
                .max_delay(Duration::from_millis(500))
                .give_up_after(Duration::from_secs(15)),
        )
        .on_event(move |e| log.lock().unwrap().push(e.clone()))
}

/// A client connection to `url`, its I/O running.
pub async fn client(url: &str, options: ClientOptions, desk: &Desk) -> ClientSideConnection {
    let transport = within("connect", connect(url, options)).await.unwrap();
    let desk = desk.clone();
    let (client, io) = ClientSideConnection::new(transport, ConnectionOptions::default(), |_| desk);
    tokio::spawn(io);
    client
}

/// initialize and session/new; the session.
pub async fn open_session(client: &ClientSideConnection) -> SessionId {
    within(
        "initialize",
        client.initialize(InitializeRequest::new(ProtocolVersion::LATEST)),
    )
    .await
    .unwrap();
    within(
        "session/new",
        client.new_session(NewSessionRequest::new("/work")),
    )
    .await
    .unwrap()
    .session_id
}

/// `n` words: `w1 w2 … wn`.
pub fn words(n: usize) -> String {
    (1..=n)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `GET /connections` of the server at `addr` (with `auth` headers, each
/// ending in CRLF): the status line and the body.
pub async fn list_connections(addr: SocketAddr, auth: &str) -> (String, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(
            format!(
                "GET /connections HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{auth}\r\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let mut answer = Vec::new();
    within("the list", stream.read_to_end(&mut answer))
        .await
        .unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (
        head.lines().next().unwrap_or("").to_owned(),
        body.to_owned(),
    )
}

/// Waits until every connection the server at `addr` lists is attached
/// (and there is at least one).
pub async fn until_attached(addr: SocketAddr) {
    within("the connections attached", async {
        loop {
            let (_, body) = list_connections(addr, "").await;
            let list: serde_json::Value = serde_json::from_str(&body).unwrap();
            let connections = list["connections"].as_array().unwrap();
            if !connections.is_empty() && connections.iter().all(|c| c["state"] == "attached") {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

/// A TCP proxy in front of a server that breaks connections on command.
pub struct Proxy {
    pub addr: SocketAddr,
    state: Arc<ProxyState>,
    task: JoinHandle<()>,
}

#[derive(Default)]
struct ProxyState {
    /// The pipes of the connections open now.
    pipes: Mutex<Vec<JoinHandle<()>>>,
    /// New connections are closed at once.
    refusing: AtomicBool,
    /// The next this many connections pass the client's request on, and are
    /// cut as the server's answer comes.
    cut_answers: AtomicUsize,
    /// Each chunk of the server's is held this long.
    delay_ms: AtomicUsize,
    /// Connections accepted.
    pub accepted: AtomicUsize,
    /// Connections numbered below this pass nothing on any more (but stay
    /// open): a network gone without a word.
    frozen_below: AtomicUsize,
}

impl Proxy {
    pub async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(ProxyState::default());
        let shared = Arc::clone(&state);
        let task = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    return;
                };
                let number = shared.accepted.fetch_add(1, Ordering::SeqCst);
                if shared.refusing.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let cut = shared
                    .cut_answers
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok();
                let state = Arc::clone(&shared);
                let pipe = tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(target).await else {
                        return;
                    };
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    let (mut client_read, mut client_write) = client.into_split();
                    let (mut server_read, mut server_write) = server.into_split();
                    let up = async {
                        let mut buf = vec![0; 16 * 1024];
                        loop {
                            match client_read.read(&mut buf).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => {
                                    if number < state.frozen_below.load(Ordering::SeqCst) {
                                        std::future::pending::<()>().await;
                                    }
                                    if server_write.write_all(&buf[..n]).await.is_err() {
                                        return;
                                    }
                                }
                            }
                        }
                    };
                    let down = async {
                        let mut buf = vec![0; 16 * 1024];
                        loop {
                            match server_read.read(&mut buf).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => {
                                    if cut {
                                        return;
                                    }
                                    if number < state.frozen_below.load(Ordering::SeqCst) {
                                        std::future::pending::<()>().await;
                                    }
                                    let delay = state.delay_ms.load(Ordering::SeqCst);
                                    if delay > 0 {
                                        tokio::time::sleep(Duration::from_millis(delay as u64))
                                            .await;
                                    }
                                    if client_write.write_all(&buf[..n]).await.is_err() {
                                        return;
                                    }
                                }
                            }
                        }
                    };
                    // Either side ending ends both, as a broken link does.
                    tokio::select! {
                        () = up => {}
                        () = down => {}
                    }
                });
                shared.pipes.lock().unwrap().push(pipe);
            }
        });
        Proxy { addr, state, task }
    }

    /// Breaks every connection open now: both sides see their stream end.
    pub fn sever(&self) {
        for pipe in self.state.pipes.lock().unwrap().drain(..) {
            pipe.abort();
        }
    }

    /// The connections open now pass nothing on any more, and stay open, as
    /// when a network goes away without a word.
    pub fn freeze(&self) {
        let accepted = self.state.accepted.load(Ordering::SeqCst);
        self.state.frozen_below.store(accepted, Ordering::SeqCst);
    }

    /// Closes new connections at once while `on`.
    pub fn refuse(&self, on: bool) {
        self.state.refusing.store(on, Ordering::SeqCst);
    }

    /// The next `n` connections reach the server, but are cut as its answer
    /// comes (a resume the server took, and the client never heard of).
    pub fn cut_answers(&self, n: usize) {
        self.state.cut_answers.store(n, Ordering::SeqCst);
    }

    /// Holds each chunk from the server this long.
    pub fn delay(&self, delay: Duration) {
        self.state
            .delay_ms
            .store(delay.as_millis() as usize, Ordering::SeqCst);
    }

    pub fn accepted(&self) -> usize {
        self.state.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.sever();
        self.task.abort();
    }
}
