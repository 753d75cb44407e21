//! The engine's ordering guarantees: notifications are handled one at a time in
//! arrival order; a response is delivered, and a request started, only after
//! every notification that arrived before it was handled (so `prompt` returns
//! after the client has seen every update of the turn).

use crate::support;

use acp::schema::*;
use acp::{Agent, AgentSideConnection, Client, ConnectionOptions};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::*;

/// An agent whose prompt `"N"` streams N numbered message chunks, awaiting each,
/// then ends the turn. `session/load` does the same with its session id `"N"`.
struct Streamer(AgentSideConnection);

impl Streamer {
    async fn stream(&self, session: &SessionId, n: usize) -> Result<(), Error> {
        for i in 0..n {
            self.0
                .session_notification(message(session, i.to_string()))
                .await?;
        }
        Ok(())
    }
}

impl Agent for Streamer {
    async fn prompt(
        &self,
        req: PromptRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        let n: usize = req.prompt[0].as_text().unwrap().parse().unwrap();
        self.stream(&req.session_id, n).await?;
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
    async fn load_session(
        &self,
        req: LoadSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<LoadSessionResponse, Error> {
        let n: usize = req.session_id.as_str().parse().unwrap();
        self.stream(&req.session_id, n).await?;
        Ok(LoadSessionResponse::new())
    }
}

/// A client that records the updates it handles, optionally slowly, and checks
/// that no two handlers ever overlap.
#[derive(Clone, Default)]
struct Recorder {
    texts: Arc<Mutex<Vec<String>>>,
    handled: Arc<AtomicUsize>,
    in_flight: Arc<AtomicUsize>,
    max_in_flight: Arc<AtomicUsize>,
    /// Yields this many times inside each handler, so handlers are slower than the reader.
    yields: usize,
    /// Sleeps this long inside each handler.
    nap: Option<Duration>,
}

impl Client for Recorder {
    async fn session_notification(
        &self,
        n: SessionNotification,
        _cx: NotificationContext<ClientSide>,
    ) -> Result<(), Error> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        for _ in 0..self.yields {
            tokio::task::yield_now().await;
        }
        if let Some(nap) = self.nap {
            tokio::time::sleep(nap).await;
        }
        if let Some(text) = message_text(&n) {
            self.texts.lock().unwrap().push(text);
        }
        self.handled.fetch_add(1, Ordering::SeqCst);
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        Ok(())
    }
}

fn numbers(n: usize) -> Vec<String> {
    (0..n).map(|i| i.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_updates_arrive_in_order() {
    let recorder = Recorder::default();
    let pair = connect(Streamer, |_| recorder.clone());
    let reply = within("prompt", pair.client.prompt(prompt("s", "10000")))
        .await
        .unwrap();
    assert_eq!(reply.stop_reason, StopReason::EndTurn);
    let texts = recorder.texts.lock().unwrap().clone();
    assert_eq!(texts.len(), 10_000);
    assert!(texts == numbers(10_000), "updates arrived out of order");
    assert_eq!(recorder.max_in_flight.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_returns_only_after_every_update_was_handled() {
    for yields in [0, 3] {
        for n in [0, 1, 2, 7, 64, 500, 2000] {
            let recorder = Recorder {
                yields,
                ..Recorder::default()
            };
            let pair = connect(Streamer, |_| recorder.clone());
            for round in 0..3 {
                let before = recorder.handled.load(Ordering::SeqCst);
                within("prompt", pair.client.prompt(prompt("s", &n.to_string())))
                    .await
                    .unwrap();
                // Read at the very moment `prompt` returned.
                let seen = recorder.handled.load(Ordering::SeqCst) - before;
                assert_eq!(
                    seen, n,
                    "round {round}, {n} updates, {yields} yields per handler"
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_handler_still_sees_every_update_before_prompt_returns() {
    let recorder = Recorder {
        nap: Some(Duration::from_millis(2)),
        ..Recorder::default()
    };
    let pair = connect(Streamer, |_| recorder.clone());
    within("prompt", pair.client.prompt(prompt("s", "40")))
        .await
        .unwrap();
    assert_eq!(recorder.handled.load(Ordering::SeqCst), 40);
    assert_eq!(*recorder.texts.lock().unwrap(), numbers(40));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_session_returns_after_its_replay_was_handled() {
    let recorder = Recorder {
        yields: 2,
        ..Recorder::default()
    };
    let pair = connect(Streamer, |_| recorder.clone());
    for n in [1, 50, 300] {
        let before = recorder.handled.load(Ordering::SeqCst);
        within(
            "session/load",
            pair.client
                .load_session(LoadSessionRequest::new(SessionId::new(n.to_string()), "/w")),
        )
        .await
        .unwrap();
        assert_eq!(recorder.handled.load(Ordering::SeqCst) - before, n);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notification_handlers_never_overlap() {
    let recorder = Recorder {
        yields: 5,
        ..Recorder::default()
    };
    let pair = connect(Streamer, |_| recorder.clone());
    // Several prompts at once, so updates of different turns interleave.
    let mut calls = Vec::new();
    for s in 0..4 {
        let client = pair.client.clone();
        calls.push(tokio::spawn(async move {
            client.prompt(prompt(&format!("s{s}"), "150")).await
        }));
    }
    for call in calls {
        within("prompt", call).await.unwrap().unwrap();
    }
    assert_eq!(recorder.handled.load(Ordering::SeqCst), 600);
    assert_eq!(recorder.max_in_flight.load(Ordering::SeqCst), 1);
}

/// Records tool-call updates and permission requests in the order handled.
#[derive(Clone, Default)]
struct Journal(Arc<Mutex<Vec<String>>>);

impl Client for Journal {
    async fn session_notification(
        &self,
        n: SessionNotification,
        _cx: NotificationContext<ClientSide>,
    ) -> Result<(), Error> {
        if let SessionUpdate::ToolCall(call) = &n.update {
            // Slower than the reader, so a permission request that did not
            // wait would be handled first.
            tokio::time::sleep(Duration::from_millis(5)).await;
            self.0
                .lock()
                .unwrap()
                .push(format!("update {}", call.tool_call_id));
        }
        Ok(())
    }
    async fn request_permission(
        &self,
        req: RequestPermissionRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<RequestPermissionResponse, Error> {
        self.0
            .lock()
            .unwrap()
            .push(format!("permission {}", req.tool_call.tool_call_id));
        Ok(RequestPermissionResponse::selected("allow"))
    }
}

struct Asker(AgentSideConnection);

impl Agent for Asker {
    async fn prompt(
        &self,
        req: PromptRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        for i in 0..8 {
            let id = format!("call-{i}");
            let call: ToolCall = typed(serde_json::json!({
                "toolCallId": id, "title": "Edit", "kind": "edit", "status": "pending"
            }));
            self.0
                .session_notification(SessionNotification::new(
                    req.session_id.clone(),
                    SessionUpdate::ToolCall(call.clone()),
                ))
                .await?;
            let options = vec![typed(serde_json::json!(
                {"optionId": "allow", "name": "Allow", "kind": "allow_once"}
            ))];
            let answer = self
                .0
                .request_permission(RequestPermissionRequest::new(
                    req.session_id.clone(),
                    call,
                    options,
                ))
                .await?;
            assert_eq!(
                answer.outcome.selected_option().map(|o| o.to_string()),
                Some("allow".to_string())
            );
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_request_is_handled_after_the_tool_call_it_follows() {
    let journal = Journal::default();
    let pair = connect(Asker, |_| journal.clone());
    within("prompt", pair.client.prompt(prompt("s", "go")))
        .await
        .unwrap();
    let expected: Vec<String> = (0..8)
        .flat_map(|i| [format!("update call-{i}"), format!("permission call-{i}")])
        .collect();
    assert_eq!(*journal.0.lock().unwrap(), expected);
}

/// Notifications from the client to the agent are handled in order too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_notifications_reach_the_agent_in_order() {
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<String>>>, Arc<tokio::sync::Notify>);
    impl Agent for Sink {
        async fn ext_notification(
            &self,
            n: ExtNotification,
            _cx: NotificationContext<AgentSide>,
        ) -> Result<(), Error> {
            tokio::task::yield_now().await;
            let mut seen = self.0.lock().unwrap();
            seen.push(n.params.get().to_string());
            if seen.len() == 2000 {
                self.1.notify_one();
            }
            Ok(())
        }
    }
    let sink = Sink::default();
    let pair = connect(|_| sink.clone(), |_| Bare);
    for i in 0..2000 {
        let note = ExtNotification::new("_test/seq", &i).unwrap();
        pair.client.ext_notification(note).await.unwrap();
    }
    within("all notifications", sink.1.notified()).await;
    assert_eq!(*sink.0.lock().unwrap(), numbers(2000));
}

/// An agent that announces something after answering `session/new`, and tries
/// to after a failing `session/load`.
struct Announcer;

impl Agent for Announcer {
    async fn new_session(
        &self,
        _: NewSessionRequest,
        cx: RequestContext<AgentSide>,
    ) -> Result<NewSessionResponse, Error> {
        let conn = cx.peer().clone();
        cx.after_response(async move {
            let update = SessionUpdate::agent_message("after the response");
            let _ = conn
                .session_notification(SessionNotification::new("s-1", update))
                .await;
        });
        Ok(NewSessionResponse::new("s-1"))
    }
    async fn load_session(
        &self,
        _: LoadSessionRequest,
        cx: RequestContext<AgentSide>,
    ) -> Result<LoadSessionResponse, Error> {
        let conn = cx.peer().clone();
        cx.after_response(async move {
            let update = SessionUpdate::agent_message("must not be sent");
            let _ = conn
                .session_notification(SessionNotification::new("s-1", update))
                .await;
        });
        Err(Error::resource_not_found(None))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_response_work_follows_the_response_and_only_on_success() {
    let (_conn, mut peer, _io) = raw_agent(ConnectionOptions::default(), |_| Announcer);
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#)
        .await;
    let first = peer.recv_json().await;
    assert_eq!(first["id"], 1, "the response comes first: {first}");
    let second = peer.recv_json().await;
    assert_eq!(second["method"], "session/update", "{second}");
    assert_eq!(
        second["params"]["update"]["content"]["text"],
        "after the response"
    );

    peer.send(r#"{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"s-1","cwd":"/tmp","mcpServers":[]}}"#)
        .await;
    let failed = peer.recv_json().await;
    assert_eq!(failed["error"]["code"], -32002, "{failed}");
    // Nothing follows a failed request: the next line answers the next request.
    peer.send(r#"{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#)
        .await;
    assert_eq!(peer.recv_json().await["id"], 3);
}

/// An agent whose `session/new` leaves two pieces of work for after its
/// response, and a task that leaves a third once the test has seen the
/// response and that work (so the handler has returned).
struct Follower(Arc<tokio::sync::Notify>);

impl Agent for Follower {
    async fn new_session(
        &self,
        _: NewSessionRequest,
        cx: RequestContext<AgentSide>,
    ) -> Result<NewSessionResponse, Error> {
        for text in ["first", "second"] {
            let conn = cx.peer().clone();
            cx.after_response(async move {
                let update = SessionUpdate::agent_message(text);
                let _ = conn
                    .session_notification(SessionNotification::new("s-1", update))
                    .await;
            });
        }
        let late = cx.clone();
        let go = self.0.clone();
        tokio::spawn(async move {
            go.notified().await;
            let conn = late.peer().clone();
            late.after_response(async move {
                let update = SessionUpdate::agent_message("late");
                let _ = conn
                    .session_notification(SessionNotification::new("s-1", update))
                    .await;
            });
        });
        Ok(NewSessionResponse::new("s-1"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_response_work_runs_in_the_order_given_and_late_work_at_once() {
    let go = Arc::new(tokio::sync::Notify::new());
    let (_conn, mut peer, _io) = raw_agent(ConnectionOptions::default(), |_| Follower(go.clone()));
    peer.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#)
        .await;
    assert_eq!(peer.recv_json().await["id"], 1);
    let text = |update: &serde_json::Value| update["params"]["update"]["content"]["text"].clone();
    for expected in ["first", "second"] {
        let update = peer.recv_json().await;
        assert_eq!(text(&update), expected, "{update}");
    }
    // Work left once the handler has returned runs at once (its order with
    // the earlier work is not promised, so it is asked for after that work).
    go.notify_one();
    let update = peer.recv_json().await;
    assert_eq!(text(&update), "late", "{update}");
}
