//! Requests run concurrently: handlers may call the peer while the peer calls
//! them, a slow handler does not hold up a fast one, and a notification handler
//! may call the peer even when the notification lane is full (the engine's
//! "Backpressure" exception).

use crate::support;

use acp::schema::*;
use acp::{Agent, AgentSideConnection, Client, ClientSideConnection, ConnectionOptions};
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use support::*;
use tokio::sync::{Notify, Semaphore};

/// An agent whose prompt reads files and asks permission through the client,
/// several times, checking every answer.
struct Busy(AgentSideConnection);

const ROUNDS: usize = 4;

impl Agent for Busy {
    async fn prompt(
        &self,
        req: PromptRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        let session = req.session_id.clone();
        for round in 0..ROUNDS {
            let path = format!("/{session}/{round}.txt");
            let file = self
                .0
                .read_text_file(ReadTextFileRequest::new(session.clone(), path.clone()))
                .await?;
            if file.content != format!("contents of {path}") {
                return Err(Error::internal_error().data(format!("wrong file: {}", file.content)));
            }
            self.0
                .session_notification(message(&session, format!("{round}")))
                .await?;
            let call: ToolCallUpdate = typed(json!({"toolCallId": format!("{session}-{round}")}));
            let option: PermissionOption = typed(
                json!({"optionId": format!("ok-{session}"), "name": "OK", "kind": "allow_once"}),
            );
            let answer = self
                .0
                .request_permission(RequestPermissionRequest::new(
                    session.clone(),
                    call,
                    vec![option],
                ))
                .await?;
            if answer.outcome.selected_option().map(|o| o.to_string())
                != Some(format!("ok-{session}"))
            {
                return Err(Error::internal_error().data("wrong permission answer"));
            }
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

#[derive(Clone, Default)]
struct Desk {
    reads: Arc<AtomicUsize>,
    permissions: Arc<AtomicUsize>,
    updates: Arc<Mutex<Vec<(String, String)>>>,
}

impl Client for Desk {
    async fn read_text_file(
        &self,
        req: ReadTextFileRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<ReadTextFileResponse, Error> {
        tokio::task::yield_now().await;
        self.reads.fetch_add(1, Ordering::SeqCst);
        Ok(ReadTextFileResponse::new(format!(
            "contents of {}",
            req.path
        )))
    }
    async fn request_permission(
        &self,
        req: RequestPermissionRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<RequestPermissionResponse, Error> {
        tokio::task::yield_now().await;
        self.permissions.fetch_add(1, Ordering::SeqCst);
        let option = req.options[0].option_id.clone();
        Ok(RequestPermissionResponse::selected(option))
    }
    async fn session_notification(
        &self,
        n: SessionNotification,
        _cx: NotificationContext<ClientSide>,
    ) -> Result<(), Error> {
        let text = message_text(&n).unwrap_or_default();
        self.updates
            .lock()
            .unwrap()
            .push((n.session_id.to_string(), text));
        Ok(())
    }
}

async fn fifty_busy_prompts(agent_options: ConnectionOptions, client_options: ConnectionOptions) {
    let desk = Desk::default();
    let pair = connect_with(agent_options, client_options, Busy, |_| desk.clone());
    let mut calls = Vec::new();
    for s in 0..50 {
        let client = pair.client.clone();
        calls.push(tokio::spawn(async move {
            client.prompt(prompt(&format!("s{s}"), "go")).await
        }));
    }
    for call in calls {
        let reply = within("prompt", call).await.unwrap().unwrap();
        assert_eq!(reply.stop_reason, StopReason::EndTurn);
    }
    assert_eq!(desk.reads.load(Ordering::SeqCst), 50 * ROUNDS);
    assert_eq!(desk.permissions.load(Ordering::SeqCst), 50 * ROUNDS);
    // Every session's updates arrived, each session's in order.
    let updates = desk.updates.lock().unwrap().clone();
    assert_eq!(updates.len(), 50 * ROUNDS);
    for s in 0..50 {
        let mine: Vec<String> = updates
            .iter()
            .filter(|(session, _)| *session == format!("s{s}"))
            .map(|(_, text)| text.clone())
            .collect();
        let expected: Vec<String> = (0..ROUNDS).map(|r| r.to_string()).collect();
        assert_eq!(mine, expected, "session s{s}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_prompts_each_calling_the_client() {
    fifty_busy_prompts(ConnectionOptions::default(), ConnectionOptions::default()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_prompts_with_the_smallest_queues() {
    let tight = || {
        ConnectionOptions::default()
            .outgoing_queue(1)
            .notification_queue(1)
    };
    fifty_busy_prompts(tight(), tight()).await;
}

#[tokio::test(flavor = "current_thread")]
async fn fifty_concurrent_prompts_on_one_thread() {
    fifty_busy_prompts(ConnectionOptions::default(), ConnectionOptions::default()).await;
}

/// `_test/slow` waits until the gate opens; `_test/fast` answers at once.
struct Gated(Arc<Notify>);

impl Agent for Gated {
    async fn ext_method(
        &self,
        req: ExtRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<ExtResponse, Error> {
        if &*req.method == "_test/slow" {
            self.0.notified().await;
        }
        Ok(ExtResponse::new(&req.method.to_string()).unwrap())
    }
}

impl Client for Gated {
    async fn read_text_file(
        &self,
        req: ReadTextFileRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<ReadTextFileResponse, Error> {
        if req.path == "slow" {
            self.0.notified().await;
        }
        Ok(ReadTextFileResponse::new(req.path))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_agent_handler_does_not_block_a_fast_one() {
    let gate = Arc::new(Notify::new());
    let pair = connect(|_| Gated(gate.clone()), |_| Bare);
    let slow = tokio::spawn({
        let client = pair.client.clone();
        async move {
            client
                .ext_method(ExtRequest::new("_test/slow", &json!({})).unwrap())
                .await
        }
    });
    for _ in 0..5 {
        let fast = within(
            "the fast request while the slow one runs",
            pair.client
                .ext_method(ExtRequest::new("_test/fast", &json!({})).unwrap()),
        )
        .await
        .unwrap();
        assert_eq!(fast.0.get(), r#""_test/fast""#);
    }
    assert!(!slow.is_finished());
    gate.notify_one();
    let slow = within("the slow request", slow).await.unwrap().unwrap();
    assert_eq!(slow.0.get(), r#""_test/slow""#);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_client_handler_does_not_block_a_fast_one() {
    let gate = Arc::new(Notify::new());
    let pair = connect(|_| Trivial, |_| Gated(gate.clone()));
    let slow = tokio::spawn({
        let agent = pair.agent.clone();
        async move {
            agent
                .read_text_file(ReadTextFileRequest::new(SessionId::new("s"), "slow"))
                .await
        }
    });
    let fast = within(
        "the fast request while the slow one runs",
        pair.agent
            .read_text_file(ReadTextFileRequest::new(SessionId::new("s"), "fast")),
    )
    .await
    .unwrap();
    assert_eq!(fast.content, "fast");
    assert!(!slow.is_finished());
    gate.notify_one();
    assert_eq!(within("slow", slow).await.unwrap().unwrap().content, "slow");
}

/// An agent that streams N updates in its prompt and answers `_test/echo`
/// (optionally sending an update of its own first).
struct Chatty(AgentSideConnection);

impl Agent for Chatty {
    async fn prompt(
        &self,
        req: PromptRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        let n: usize = req.prompt[0].as_text().unwrap().parse().unwrap();
        for i in 0..n {
            self.0
                .session_notification(message(&req.session_id, format!("p{i}")))
                .await?;
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
    async fn ext_method(
        &self,
        req: ExtRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<ExtResponse, Error> {
        let text: String = serde_json::from_str(req.params.get()).unwrap();
        if let Some(rest) = text.strip_prefix("reply-with-update:") {
            self.0
                .session_notification(message(&SessionId::new("s"), format!("e{rest}")))
                .await?;
        }
        Ok(ExtResponse(req.params))
    }
}

/// A client whose update handler calls the agent for every `p…` update.
#[derive(Clone)]
struct Caller {
    conn: Arc<Mutex<Option<ClientSideConnection>>>,
    echoed: Arc<AtomicUsize>,
    extra: Arc<AtomicUsize>,
    extra_done: Arc<Notify>,
    expect_extra: usize,
    ask_for_update: bool,
}

impl Caller {
    fn new(ask_for_update: bool, expect_extra: usize) -> Self {
        Caller {
            conn: Arc::default(),
            echoed: Arc::default(),
            extra: Arc::default(),
            extra_done: Arc::default(),
            expect_extra,
            ask_for_update,
        }
    }
}

impl Client for Caller {
    async fn session_notification(
        &self,
        n: SessionNotification,
        _cx: NotificationContext<ClientSide>,
    ) -> Result<(), Error> {
        let text = message_text(&n).unwrap();
        if let Some(i) = text.strip_prefix('p') {
            let conn = self.conn.lock().unwrap().clone().unwrap();
            let payload = if self.ask_for_update {
                format!("reply-with-update:{i}")
            } else {
                text.clone()
            };
            let echo = conn
                .ext_method(ExtRequest::new("_test/echo", &payload).unwrap())
                .await?;
            assert_eq!(echo.0.get(), serde_json::to_string(&payload).unwrap());
            self.echoed.fetch_add(1, Ordering::SeqCst);
        } else if self.extra.fetch_add(1, Ordering::SeqCst) + 1 == self.expect_extra {
            self.extra_done.notify_one();
        }
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_handler_may_call_the_peer_with_a_full_lane() {
    let caller = Caller::new(false, 0);
    let pair = connect_with(
        ConnectionOptions::default(),
        ConnectionOptions::default().notification_queue(2),
        Chatty,
        |conn| {
            *caller.conn.lock().unwrap() = Some(conn);
            caller.clone()
        },
    );
    for n in [1, 3, 200] {
        let before = caller.echoed.load(Ordering::SeqCst);
        within(
            "prompt while update handlers call the agent",
            pair.client.prompt(prompt("s", &n.to_string())),
        )
        .await
        .unwrap();
        // Flush-before-respond still holds: every handler, with its call to the
        // agent, finished before `prompt` returned.
        assert_eq!(caller.echoed.load(Ordering::SeqCst) - before, n);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_handler_call_answered_after_more_notifications() {
    // The agent answers each call only after sending another update, which
    // queues behind the very handler that is waiting for the answer.
    let caller = Caller::new(true, 100);
    let pair = connect_with(
        ConnectionOptions::default(),
        ConnectionOptions::default().notification_queue(1),
        Chatty,
        |conn| {
            *caller.conn.lock().unwrap() = Some(conn);
            caller.clone()
        },
    );
    within("prompt", pair.client.prompt(prompt("s", "100")))
        .await
        .unwrap();
    assert_eq!(caller.echoed.load(Ordering::SeqCst), 100);
    within("the agent's extra updates", caller.extra_done.notified()).await;
    assert_eq!(caller.extra.load(Ordering::SeqCst), 100);
}

#[tokio::test(flavor = "current_thread")]
async fn a_notification_handler_may_call_the_peer_on_one_thread() {
    let caller = Caller::new(false, 0);
    let pair = connect_with(
        ConnectionOptions::default(),
        ConnectionOptions::default().notification_queue(2),
        Chatty,
        |conn| {
            *caller.conn.lock().unwrap() = Some(conn);
            caller.clone()
        },
    );
    within("prompt", pair.client.prompt(prompt("s", "100")))
        .await
        .unwrap();
    assert_eq!(caller.echoed.load(Ordering::SeqCst), 100);
}

/// The agent side's notification handler calls the client while the client
/// floods it with notifications.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_notification_handler_may_call_the_client_with_a_full_lane() {
    #[derive(Clone)]
    struct Reader {
        conn: Arc<Mutex<Option<AgentSideConnection>>>,
        done: Arc<Semaphore>,
    }
    impl Agent for Reader {
        async fn ext_notification(
            &self,
            n: ExtNotification,
            _cx: NotificationContext<AgentSide>,
        ) -> Result<(), Error> {
            let conn = self.conn.lock().unwrap().clone().unwrap();
            let path: String = serde_json::from_str(n.params.get()).unwrap();
            let file = conn
                .read_text_file(ReadTextFileRequest::new(SessionId::new("s"), path.clone()))
                .await?;
            assert_eq!(file.content, path);
            self.done.add_permits(1);
            Ok(())
        }
    }
    let reader = Reader {
        conn: Arc::default(),
        done: Arc::new(Semaphore::new(0)),
    };
    let gate = Arc::new(Notify::new());
    let pair = connect_with(
        ConnectionOptions::default().notification_queue(1),
        ConnectionOptions::default(),
        |conn| {
            *reader.conn.lock().unwrap() = Some(conn);
            reader.clone()
        },
        |_| Gated(gate),
    );
    for i in 0..100 {
        let note = ExtNotification::new("_test/read", &format!("file-{i}")).unwrap();
        within("sending a notification", pair.client.ext_notification(note))
            .await
            .unwrap();
    }
    let all = within("every handler's call", reader.done.acquire_many(100)).await;
    all.unwrap().forget();
}
