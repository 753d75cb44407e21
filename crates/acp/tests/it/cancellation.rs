//! Cancellation: `session/cancel` cancels the prompt turn's token,
//! `$/cancel_request` drops the running handler and answers -32800, and
//! dropping the future of an outgoing request sends `$/cancel_request`.

use crate::support;

use acp::schema::*;
use acp::{Agent, AgentSideConnection, CancellationToken, Client, ConnectionOptions};
use serde_json::json;
use std::collections::HashMap;
use std::future::pending;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::*;
use tokio::sync::{Notify, mpsc};

/// Reports on a channel when it is dropped: proves a handler's future was dropped.
struct DropSignal(mpsc::UnboundedSender<String>, String);

impl Drop for DropSignal {
    fn drop(&mut self) {
        let _ = self.0.send(format!("dropped {}", self.1));
    }
}

/// An agent whose prompt waits for its turn's cancellation token, and whose
/// `_test/hang` never finishes on its own.
#[derive(Clone)]
struct Waiter {
    conn: Arc<Mutex<Option<AgentSideConnection>>>,
    events: mpsc::UnboundedSender<String>,
    lane_gate: Arc<Notify>,
    /// The cancellation of each session's latest turn, from its context.
    tokens: Arc<Mutex<HashMap<SessionId, CancellationToken>>>,
}

impl Waiter {
    fn new(events: mpsc::UnboundedSender<String>) -> Self {
        Waiter {
            conn: Arc::default(),
            events,
            lane_gate: Arc::default(),
            tokens: Arc::default(),
        }
    }
    /// The token of the latest turn in `session`.
    fn token(&self, session: &str) -> CancellationToken {
        self.tokens.lock().unwrap()[&SessionId::new(session)].clone()
    }
}

impl Agent for Waiter {
    async fn prompt(
        &self,
        req: PromptRequest,
        cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        let token = cx.cancellation();
        self.tokens
            .lock()
            .unwrap()
            .insert(req.session_id.clone(), token.clone());
        let _guard = DropSignal(self.events.clone(), format!("prompt {}", req.session_id));
        let _ = self.events.send(format!("started {}", req.session_id));
        if req.prompt[0].as_text() == Some("ask") {
            // Wait on the client instead: the client never answers.
            let call: ToolCallUpdate = typed(json!({"toolCallId": "c1"}));
            cx.peer()
                .request_permission(RequestPermissionRequest::new(
                    req.session_id.clone(),
                    call,
                    vec![],
                ))
                .await?;
        }
        cx.cancelled().await;
        assert!(token.is_cancelled() && cx.is_cancelled());
        Ok(PromptResponse::new(StopReason::Cancelled))
    }
    async fn cancel(
        &self,
        n: CancelNotification,
        _cx: NotificationContext<AgentSide>,
    ) -> Result<(), Error> {
        let _ = self.events.send(format!("cancel handler {}", n.session_id));
        Ok(())
    }
    async fn ext_method(
        &self,
        req: ExtRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<ExtResponse, Error> {
        let _guard = DropSignal(self.events.clone(), req.method.to_string());
        let _ = self.events.send(format!("started {}", req.method));
        pending::<()>().await;
        unreachable!()
    }
    async fn ext_notification(
        &self,
        _: ExtNotification,
        _cx: NotificationContext<AgentSide>,
    ) -> Result<(), Error> {
        // Blocks the agent's notification lane until the test opens the gate.
        self.lane_gate.notified().await;
        let _ = self.events.send("lane free".into());
        Ok(())
    }
}

fn waiter_pair() -> (Pair, Waiter, mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let waiter = Waiter::new(tx);
    let pair = connect(
        |conn| {
            *waiter.conn.lock().unwrap() = Some(conn);
            waiter.clone()
        },
        |_| Bare,
    );
    (pair, waiter, rx)
}

async fn expect(events: &mut mpsc::UnboundedReceiver<String>, what: &str) {
    let got = within(what, events.recv())
        .await
        .expect("event channel open");
    assert_eq!(got, what);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_cancel_cancels_the_turn_token_and_the_prompt_answers_cancelled() {
    let (pair, waiter, mut events) = waiter_pair();
    let turn = tokio::spawn({
        let client = pair.client.clone();
        async move { client.prompt(prompt("s1", "wait")).await }
    });
    expect(&mut events, "started s1").await;
    let token = waiter.token("s1");
    assert!(!token.is_cancelled());
    pair.client
        .cancel(CancelNotification::new(SessionId::new("s1")))
        .await
        .unwrap();
    let reply = within("the cancelled prompt", turn).await.unwrap().unwrap();
    assert_eq!(reply.stop_reason, StopReason::Cancelled);
    assert!(token.is_cancelled());
    // The handler ran to completion (its guard went with it) and the cancel
    // handler was called.
    let mut rest = vec![
        within("event", events.recv()).await.unwrap(),
        within("event", events.recv()).await.unwrap(),
    ];
    rest.sort();
    assert_eq!(rest, ["cancel handler s1", "dropped prompt s1"]);

    // A new turn on the same session starts with a fresh, uncancelled token.
    let turn = tokio::spawn({
        let client = pair.client.clone();
        async move { client.prompt(prompt("s1", "wait")).await }
    });
    expect(&mut events, "started s1").await;
    assert!(!waiter.token("s1").is_cancelled());
    assert!(token.is_cancelled(), "the old turn's token stays cancelled");
    pair.client
        .cancel(CancelNotification::new(SessionId::new("s1")))
        .await
        .unwrap();
    assert_eq!(
        within("prompt", turn).await.unwrap().unwrap().stop_reason,
        StopReason::Cancelled
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_cancel_only_touches_its_own_session() {
    let (pair, waiter, mut events) = waiter_pair();
    let mut turns = Vec::new();
    for s in ["a", "b"] {
        let client = pair.client.clone();
        turns.push(tokio::spawn(async move {
            client.prompt(prompt(s, "wait")).await
        }));
        expect(&mut events, &format!("started {s}")).await;
    }
    pair.client
        .cancel(CancelNotification::new(SessionId::new("a")))
        .await
        .unwrap();
    let b = turns.pop().unwrap();
    let a = turns.pop().unwrap();
    assert_eq!(
        within("prompt a", a).await.unwrap().unwrap().stop_reason,
        StopReason::Cancelled
    );
    assert!(!b.is_finished());
    assert!(!waiter.token("b").is_cancelled());
    // Cancelling a session with no turn is harmless.
    pair.client
        .cancel(CancelNotification::new(SessionId::new("nobody")))
        .await
        .unwrap();
    pair.client
        .cancel(CancelNotification::new(SessionId::new("b")))
        .await
        .unwrap();
    assert_eq!(
        within("prompt b", b).await.unwrap().unwrap().stop_reason,
        StopReason::Cancelled
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_cancel_takes_effect_while_the_notification_lane_is_busy() {
    let (pair, waiter, mut events) = waiter_pair();
    let turn = tokio::spawn({
        let client = pair.client.clone();
        async move { client.prompt(prompt("s", "wait")).await }
    });
    expect(&mut events, "started s").await;
    // Block the agent's notification lane, then cancel behind it.
    let note = ExtNotification::new("_test/block", &json!({})).unwrap();
    pair.client.ext_notification(note).await.unwrap();
    pair.client
        .cancel(CancelNotification::new(SessionId::new("s")))
        .await
        .unwrap();
    let reply = within("the cancelled prompt while the lane is blocked", turn)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(reply.stop_reason, StopReason::Cancelled);
    expect(&mut events, "dropped prompt s").await;
    waiter.lane_gate.notify_one();
    expect(&mut events, "lane free").await;
    expect(&mut events, "cancel handler s").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_request_drops_the_handler_and_answers_exactly_request_cancelled() {
    let (tx, mut events) = mpsc::unbounded_channel();
    let waiter = Waiter::new(tx);
    let (_conn, mut peer, _io) = raw_agent(ConnectionOptions::default(), |conn| {
        *waiter.conn.lock().unwrap() = Some(conn);
        waiter.clone()
    });
    for (id, method) in [("41", "_test/hang-a"), (r#""req-7""#, "_test/hang-b")] {
        peer.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{}}}}"#
        ))
        .await;
        expect(&mut events, &format!("started {method}")).await;
        peer.send(&format!(
            r#"{{"jsonrpc":"2.0","method":"$/cancel_request","params":{{"requestId":{id}}}}}"#
        ))
        .await;
        assert_eq!(
            peer.recv().await,
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32800,"message":"Request cancelled"}}}}"#
            )
        );
        expect(&mut events, &format!("dropped {method}")).await;
    }
    // Cancelling again, or a finished request, does nothing.
    peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":41}}"#)
        .await;
    peer.send(r#"{"jsonrpc":"2.0","id":42,"method":"logout"}"#)
        .await;
    assert_eq!(
        peer.recv().await,
        r#"{"jsonrpc":"2.0","id":42,"error":{"code":-32601,"message":"Method not found"}}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_an_outgoing_request_sends_cancel_request_with_its_id() {
    let (client, mut peer, _io) = raw_client(ConnectionOptions::default(), |_| Bare);

    // Abort the caller once the request is on the wire.
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.prompt(prompt("s", "hi")).await }
    });
    let request = peer.recv_json().await;
    assert_eq!(request["method"], "session/prompt");
    let id = request["id"].clone();
    call.abort();
    assert_eq!(
        peer.recv().await,
        format!(r#"{{"jsonrpc":"2.0","method":"$/cancel_request","params":{{"requestId":{id}}}}}"#)
    );

    // The same through a timeout around the call.
    let timed_out = tokio::time::timeout(
        Duration::from_millis(50),
        client.new_session(NewSessionRequest::new("/w")),
    )
    .await;
    assert!(timed_out.is_err(), "nobody answered, so the call timed out");
    let request = peer.recv_json().await;
    assert_eq!(request["method"], "session/new");
    let id2 = request["id"].clone();
    assert_ne!(id, id2);
    assert_eq!(
        peer.recv().await,
        format!(
            r#"{{"jsonrpc":"2.0","method":"$/cancel_request","params":{{"requestId":{id2}}}}}"#
        )
    );

    // A late answer to a cancelled request is dropped; the connection works on.
    peer.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{id2},"result":{{"sessionId":"late"}}}}"#
    ))
    .await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.logout(LogoutRequest::new()).await }
    });
    let request = peer.recv_json().await;
    assert_eq!(request["method"], "logout");
    peer.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
        request["id"]
    ))
    .await;
    within("logout", call).await.unwrap().unwrap();

    // A request that completed sends no cancellation when its future is dropped.
    assert!(!client.is_closed());
    client.close();
    assert_eq!(peer.next_line().await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_is_sent_when_called_and_cancelled_when_dropped_unpolled() {
    let (client, mut peer, _io) = raw_client(ConnectionOptions::default(), |_| Bare);

    // Two calls made and not yet awaited are on the wire, in call order.
    let first = client.new_session(NewSessionRequest::new("/first"));
    let second = client.new_session(NewSessionRequest::new("/second"));
    let one = peer.recv_json().await;
    let two = peer.recv_json().await;
    assert_eq!(one["params"]["cwd"], "/first");
    assert_eq!(two["params"]["cwd"], "/second");

    // The second's answer arrives before its future is first polled, and is kept.
    peer.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"sessionId":"s2"}}}}"#,
        two["id"]
    ))
    .await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let answered = within("second", second).await.unwrap();
    assert_eq!(answered.session_id.to_string(), "s2");

    // The first is dropped without ever being polled: the peer is told.
    drop(first);
    assert_eq!(
        peer.recv().await,
        format!(
            r#"{{"jsonrpc":"2.0","method":"$/cancel_request","params":{{"requestId":{}}}}}"#,
            one["id"]
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_prompt_call_cancels_the_chain_of_handlers() {
    // Client drops its prompt call -> the agent's prompt handler is dropped ->
    // its pending permission request is dropped -> the client's permission
    // handler is dropped.
    #[derive(Clone)]
    struct Patient(mpsc::UnboundedSender<String>);
    impl Client for Patient {
        async fn request_permission(
            &self,
            _: RequestPermissionRequest,
            _cx: RequestContext<ClientSide>,
        ) -> Result<RequestPermissionResponse, Error> {
            let _guard = DropSignal(self.0.clone(), "permission handler".into());
            let _ = self.0.send("permission asked".into());
            pending::<()>().await;
            unreachable!()
        }
    }
    let (agent_tx, mut agent_events) = mpsc::unbounded_channel();
    let (client_tx, mut client_events) = mpsc::unbounded_channel();
    let waiter = Waiter::new(agent_tx);
    let pair = connect(
        |conn| {
            *waiter.conn.lock().unwrap() = Some(conn);
            waiter.clone()
        },
        |_| Patient(client_tx),
    );
    let call = tokio::spawn({
        let client = pair.client.clone();
        async move { client.prompt(prompt("s", "ask")).await }
    });
    expect(&mut agent_events, "started s").await;
    expect(&mut client_events, "permission asked").await;
    call.abort();
    expect(&mut agent_events, "dropped prompt s").await;
    expect(&mut client_events, "dropped permission handler").await;
    // The client's drop sent `$/cancel_request`, which cancelled the turn's
    // context (seen by anything that kept its token) as well as dropping it.
    assert!(waiter.token("s").is_cancelled());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_duplicate_prompt_does_not_break_cancelling_the_running_one() {
    let (tx, mut events) = mpsc::unbounded_channel();
    let waiter = Waiter::new(tx);
    let (_conn, mut peer, _io) = raw_agent(ConnectionOptions::default(), |conn| {
        *waiter.conn.lock().unwrap() = Some(conn);
        waiter.clone()
    });
    let prompt_line = r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"wait"}]}}"#;
    peer.send(prompt_line).await;
    expect(&mut events, "started s").await;
    // The same id again, while the first is running: refused.
    assert_eq!(
        peer.call(prompt_line).await,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid request","data":"a request with this id is still running"}}"#
    );
    // Cancelling the session still reaches the running turn.
    peer.send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#)
        .await;
    assert_eq!(
        peer.recv().await,
        r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"cancelled"}}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_cancelled_before_it_started_leaves_no_turn_behind() {
    let (tx, mut events) = mpsc::unbounded_channel();
    let waiter = Waiter::new(tx);
    let (_conn, mut peer, _io) = raw_agent(ConnectionOptions::default(), |conn| {
        *waiter.conn.lock().unwrap() = Some(conn);
        waiter.clone()
    });
    // Block the notification lane: the prompt that follows waits behind it.
    peer.send(r#"{"jsonrpc":"2.0","method":"_test/block","params":{}}"#)
        .await;
    peer.send(r#"{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"wait"}]}}"#)
        .await;
    peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":5}}"#)
        .await;
    // Make sure the reader handled all three before the lane moves on.
    peer.send(r#"{"jsonrpc":"2.0","id":6,"method":"no/such"}"#)
        .await;
    assert!(peer.recv().await.contains(r#""id":6"#));
    waiter.lane_gate.notify_one();
    expect(&mut events, "lane free").await;
    assert_eq!(
        peer.recv().await,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32800,"message":"Request cancelled"}}"#
    );
    // The handler never ran, and no turn is left registered for the session:
    // a session/cancel now cancels nothing.
    peer.send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#)
        .await;
    expect(&mut events, "cancel handler s").await;
    assert!(waiter.tokens.lock().unwrap().is_empty());
    assert!(
        events.try_recv().is_err(),
        "the prompt handler never started"
    );
}

/// An agent whose `_test/watch` hands its context's token to a task of its
/// own, which reports the cancellation, and then never finishes.
struct Watcher(mpsc::UnboundedSender<String>);

impl Agent for Watcher {
    async fn ext_method(
        &self,
        req: ExtRequest,
        cx: RequestContext<AgentSide>,
    ) -> Result<ExtResponse, Error> {
        let token = cx.cancellation();
        let events = self.0.clone();
        let name = req.method.to_string();
        tokio::spawn(async move {
            token.cancelled().await;
            let _ = events.send(format!("token of {name} cancelled"));
        });
        let _ = self.0.send(format!("started {}", req.method));
        pending::<()>().await;
        unreachable!()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_request_cancels_the_context_token_as_well_as_dropping_the_handler() {
    let (tx, mut events) = mpsc::unbounded_channel();
    let (_conn, mut peer, _io) = raw_agent(ConnectionOptions::default(), |_| Watcher(tx));
    peer.send(r#"{"jsonrpc":"2.0","id":"w","method":"_test/watch","params":{}}"#)
        .await;
    expect(&mut events, "started _test/watch").await;
    peer.send(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"w"}}"#)
        .await;
    assert_eq!(
        peer.recv().await,
        r#"{"jsonrpc":"2.0","id":"w","error":{"code":-32800,"message":"Request cancelled"}}"#
    );
    expect(&mut events, "token of _test/watch cancelled").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_close_cancels_the_context_of_every_running_request() {
    let (tx, mut events) = mpsc::unbounded_channel();
    let (conn, mut peer, io) = raw_agent(ConnectionOptions::default(), |_| Watcher(tx));
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"_test/a","params":{}}"#)
        .await;
    peer.send(r#"{"jsonrpc":"2.0","id":2,"method":"_test/b","params":{}}"#)
        .await;
    expect(&mut events, "started _test/a").await;
    expect(&mut events, "started _test/b").await;
    conn.close();
    let mut seen = vec![
        within("event", events.recv()).await.unwrap(),
        within("event", events.recv()).await.unwrap(),
    ];
    seen.sort();
    assert_eq!(
        seen,
        ["token of _test/a cancelled", "token of _test/b cancelled"]
    );
    // No answer for requests cut by the close: the peer sees the end.
    assert_eq!(peer.next_line().await, None);
    within("the I/O future", io).await.unwrap().unwrap();
}
