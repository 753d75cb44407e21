//! Transport death and closing: pending requests fail at once with
//! `ConnectionError::Closed`, `closed()` resolves, new calls fail fast, running
//! handlers are cancelled, queued output is flushed and the I/O future ends.

use crate::support;

use acp::schema::*;
use acp::{Agent, AgentSideConnection, Client, ConnectionError, ConnectionOptions, Transport};
use futures::FutureExt;
use std::future::pending;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use support::*;
use tokio::io::{AsyncBufReadExt, AsyncRead, ReadBuf};
use tokio::sync::{mpsc, oneshot};

fn is_closed_error<T: std::fmt::Debug>(result: &Result<T, ConnectionError>) -> bool {
    matches!(result, Err(ConnectionError::Closed))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transport_death_fails_every_pending_request_at_once() {
    let (client, mut peer, io) = raw_client(ConnectionOptions::default(), |_| Bare);
    let mut calls = Vec::new();
    for s in 0..10 {
        let client = client.clone();
        calls.push(tokio::spawn(async move {
            client.prompt(prompt(&format!("s{s}"), "hi")).await
        }));
    }
    for _ in 0..10 {
        assert_eq!(peer.recv_json().await["method"], "session/prompt");
    }
    assert!(!client.is_closed());

    // The agent goes away: both halves of its end are dropped.
    peer.close();

    for call in calls {
        let result = within("a pending prompt to fail", call).await.unwrap();
        assert!(is_closed_error(&result), "{result:?}");
    }
    within("closed()", client.closed()).await;
    assert!(client.is_closed());
    // New calls fail at once, without waiting for anything.
    let again = client
        .prompt(prompt("s", "again"))
        .now_or_never()
        .expect("a call on a closed connection does not wait");
    assert!(is_closed_error(&again), "{again:?}");
    let note = client
        .cancel(CancelNotification::new(SessionId::new("s")))
        .now_or_never()
        .expect("a notification on a closed connection does not wait");
    assert!(is_closed_error(&note), "{note:?}");
    // The I/O future has ended.
    within("the I/O future", io).await.unwrap().ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn end_of_input_closes_cleanly() {
    let (client, mut peer, io) = raw_client(ConnectionOptions::default(), |_| Bare);
    let call = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .initialize(InitializeRequest::new(ProtocolVersion::LATEST))
                .await
        }
    });
    peer.recv_json().await;
    // Only our writing half closes: the client reads end of input.
    peer.close_write();
    let result = within("the pending call", call).await.unwrap();
    assert!(is_closed_error(&result), "{result:?}");
    within("closed()", client.closed()).await;
    assert!(matches!(
        within("the I/O future", io).await.unwrap(),
        Ok(())
    ));
    // And the client's output ends too.
    assert_eq!(peer.next_line().await, None);
}

/// An agent whose prompt never finishes on its own and reports when it is dropped.
struct Stuck(mpsc::UnboundedSender<&'static str>);

struct Dropped(mpsc::UnboundedSender<&'static str>);

impl Drop for Dropped {
    fn drop(&mut self) {
        let _ = self.0.send("dropped");
    }
}

impl Agent for Stuck {
    async fn prompt(
        &self,
        _: PromptRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        let _guard = Dropped(self.0.clone());
        let _ = self.0.send("started");
        pending::<()>().await;
        unreachable!()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_one_side_closes_both_and_cancels_running_handlers() {
    let (tx, mut events) = mpsc::unbounded_channel();
    let pair = connect(|_| Stuck(tx), |_| Bare);
    let mut calls = Vec::new();
    for s in 0..5 {
        let client = pair.client.clone();
        calls.push(tokio::spawn(async move {
            client.prompt(prompt(&format!("s{s}"), "hi")).await
        }));
    }
    for _ in 0..5 {
        assert_eq!(
            within("a prompt to start", events.recv()).await,
            Some("started")
        );
    }
    pair.client.close();
    for call in calls {
        let result = within("a pending prompt to fail", call).await.unwrap();
        assert!(is_closed_error(&result), "{result:?}");
    }
    within("the client's closed()", pair.client.closed()).await;
    // The agent reads end of input, closes, and drops every running handler.
    within("the agent's closed()", pair.agent.closed()).await;
    for _ in 0..5 {
        assert_eq!(
            within("a handler to be dropped", events.recv()).await,
            Some("dropped")
        );
    }
    within("the client's I/O future", pair.client_io)
        .await
        .unwrap()
        .unwrap();
    within("the agent's I/O future", pair.agent_io)
        .await
        .unwrap()
        .ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_pending_calls_fail_when_the_client_goes_away() {
    let pair = connect(|_| Trivial, |_| Never);
    let call = tokio::spawn({
        let agent = pair.agent.clone();
        async move {
            agent
                .read_text_file(ReadTextFileRequest::new(SessionId::new("s"), "/x"))
                .await
        }
    });
    // Wait until the client's handler holds the request.
    within("the client to get the request", async {
        while !NEVER_STARTED.load(std::sync::atomic::Ordering::SeqCst) {
            tokio::task::yield_now().await;
        }
    })
    .await;
    pair.client_io.abort();
    let result = within("the agent's pending call", call).await.unwrap();
    assert!(is_closed_error(&result), "{result:?}");
    within("the agent's closed()", pair.agent.closed()).await;
    assert!(pair.agent.is_closed());
}

static NEVER_STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A client that never answers `fs/read_text_file`.
struct Never;

impl Client for Never {
    async fn read_text_file(
        &self,
        _: ReadTextFileRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<ReadTextFileResponse, Error> {
        NEVER_STARTED.store(true, std::sync::atomic::Ordering::SeqCst);
        pending::<()>().await;
        unreachable!()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_agents_io_future_closes_the_connection() {
    let (tx, mut events) = mpsc::unbounded_channel();
    let pair = connect(|_| Stuck(tx), |_| Bare);
    let call = tokio::spawn({
        let client = pair.client.clone();
        async move { client.prompt(prompt("s", "hi")).await }
    });
    assert_eq!(
        within("the prompt to start", events.recv()).await,
        Some("started")
    );
    pair.agent_io.abort();
    let result = within("the client's pending prompt", call).await.unwrap();
    assert!(is_closed_error(&result), "{result:?}");
    within("the agent's closed()", pair.agent.closed()).await;
    within("the client's closed()", pair.client.closed()).await;
    assert_eq!(
        within("the handler to be dropped", events.recv()).await,
        Some("dropped")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_output_is_flushed_on_close() {
    let (agent, mut peer, io) =
        raw_agent(ConnectionOptions::default(), |_: AgentSideConnection| {
            Trivial
        });
    for i in 0..200 {
        agent
            .session_notification(message(&SessionId::new("s"), i.to_string()))
            .await
            .unwrap();
    }
    agent.close();
    for i in 0..200 {
        let v = peer.recv_json().await;
        assert_eq!(v["params"]["update"]["content"]["text"], i.to_string());
    }
    assert_eq!(peer.next_line().await, None);
    within("the I/O future", io).await.unwrap().unwrap();
}

/// A reader that yields nothing until told to fail.
struct FailingReader(oneshot::Receiver<()>);

impl AsyncRead for FailingReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        _: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.0).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(_) => Poll::Ready(Err(io::Error::other("the wire was cut"))),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_error_fails_pending_requests_and_ends_the_io_future_with_the_error() {
    let (fail, failed) = oneshot::channel();
    let (sink, written) = tokio::io::duplex(1 << 16);
    let transport = Transport::new(FailingReader(failed), sink);
    let (client, io) =
        acp::ClientSideConnection::new(transport, ConnectionOptions::default(), |_| Bare);
    let io = tokio::spawn(io);
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.logout(LogoutRequest::new()).await }
    });
    // Once the request is on the wire, cut it.
    let mut written = tokio::io::BufReader::new(written);
    let mut line = String::new();
    within("the request line", written.read_line(&mut line))
        .await
        .unwrap();
    assert!(line.contains(r#""method":"logout""#), "{line}");
    fail.send(()).unwrap();
    // Pending calls fail with the cause of the close ...
    let result = within("the pending call", call).await.unwrap();
    match result {
        Err(ConnectionError::Io(e)) => assert_eq!(e.to_string(), "the wire was cut"),
        other => panic!("{other:?}"),
    }
    // ... and so do the I/O future and later calls.
    match within("the I/O future", io).await.unwrap() {
        Err(ConnectionError::Io(e)) => assert_eq!(e.to_string(), "the wire was cut"),
        other => panic!("{other:?}"),
    }
    assert!(client.is_closed());
    let again = client.logout(LogoutRequest::new()).now_or_never().unwrap();
    assert!(matches!(again, Err(ConnectionError::Io(_))), "{again:?}");
}

#[tokio::test]
async fn dropping_an_unpolled_io_future_closes_the_connection() {
    let (end, _other) = Transport::memory_pair();
    let (client, io) = acp::ClientSideConnection::new(end, ConnectionOptions::default(), |_| Bare);
    drop(io);
    assert!(client.is_closed());
    let result = client
        .prompt(prompt("s", "hi"))
        .now_or_never()
        .expect("fails at once");
    assert!(is_closed_error(&result), "{result:?}");
    within("closed()", client.closed()).await;
}

#[tokio::test]
async fn serve_returns_when_the_client_goes_away() {
    let (agent_end, client_end) = Transport::memory_pair();
    let serving = tokio::spawn(AgentSideConnection::serve(agent_end, |_| Trivial));
    let (client, io) =
        acp::ClientSideConnection::new(client_end, ConnectionOptions::default(), |_| Bare);
    let io = tokio::spawn(io);
    within("logout", client.logout(LogoutRequest::new()))
        .await
        .unwrap();
    client.close();
    within("serve to return", serving).await.unwrap().unwrap();
    within("the client's I/O", io).await.unwrap().unwrap();
}
