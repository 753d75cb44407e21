//! Protocol v2 on the runtime (feature `v2`): the version negotiation (exact
//! bytes in and out), the v2 prompt lifecycle (acknowledgement, then
//! updates, then idle), cancellation by `session/cancel`, `session/close` and
//! `$/cancel_request`, ordering, backpressure, and messages of the wrong
//! version.

use crate::support;

use acp::negotiate::{AgentRouter, ClientRouter, Negotiated, NoAgent, RoutedAgent};
use acp::schema::v2;
use acp::schema::{Implementation, ProtocolVersion};
use acp::{ConnectionError, ConnectionOptions, Dropped, RequestContext, Transport};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{PATIENCE, RawPeer, within};
use tokio::sync::{Notify, mpsc};

// ---------------------------------------------------------------------------
// Agents and clients of the tests

/// A v1 agent that answers `initialize` with version 1 and records what it got.
#[derive(Clone, Default)]
struct V1Agent {
    seen: Arc<Mutex<Vec<String>>>,
}

impl acp::Agent for V1Agent {
    async fn initialize(
        &self,
        req: acp::schema::InitializeRequest,
        _: RequestContext<acp::schema::AgentSide>,
    ) -> Result<acp::schema::InitializeResponse, acp::schema::Error> {
        self.seen
            .lock()
            .unwrap()
            .push(serde_json::to_string(&req).unwrap());
        Ok(acp::schema::InitializeResponse::new(ProtocolVersion::V1))
    }
}

/// A v2 agent: answers `initialize` with the version asked of it (which the
/// router made 2), acknowledges prompts and runs the turn after the answer,
/// sending one chunk per prompt block; `slow` turns tick until cancelled.
#[derive(Clone, Default)]
struct V2Agent {
    seen: Arc<Mutex<Vec<String>>>,
    turns: Arc<AtomicUsize>,
    cancelled: Arc<Notify>,
}

fn info(name: &str) -> Implementation {
    Implementation::new(name, "1.0.0")
}

impl acp::v2::Agent for V2Agent {
    async fn initialize(
        &self,
        req: v2::InitializeRequest,
        _: RequestContext<v2::AgentSide>,
    ) -> Result<v2::InitializeResponse, v2::Error> {
        self.seen
            .lock()
            .unwrap()
            .push(serde_json::to_string(&req).unwrap());
        Ok(v2::InitializeResponse::new(info("v2-agent"))
            .protocol_version(req.protocol_version)
            .capabilities(v2::AgentCapabilities::new().session(v2::SessionCapabilities::new())))
    }

    async fn new_session(
        &self,
        _: v2::NewSessionRequest,
        _: RequestContext<v2::AgentSide>,
    ) -> Result<v2::NewSessionResponse, v2::Error> {
        Ok(v2::NewSessionResponse::new("s1"))
    }

    async fn prompt(
        &self,
        req: v2::PromptRequest,
        cx: RequestContext<v2::AgentSide>,
    ) -> Result<v2::PromptResponse, v2::Error> {
        let n = self.turns.fetch_add(1, Ordering::SeqCst) + 1;
        let user = v2::MessageId::new(format!("user-{n}"));
        // Sent before the acknowledgement: it must precede it.
        let early = v2::SessionUpdate::agent_thought_chunk(format!("thought-{n}"), "accepted");
        cx.peer()
            .session_update(v2::UpdateSessionNotification::new(
                req.session_id.clone(),
                early,
            ))
            .await?;
        let (turn, id, cancelled) = (cx.clone(), user.clone(), self.cancelled.clone());
        cx.after_response(async move {
            let session = req.session_id.clone();
            let send = |u: v2::SessionUpdate| {
                turn.peer()
                    .session_update(v2::UpdateSessionNotification::new(session.clone(), u))
            };
            let slow = req.prompt.iter().any(|b| b.as_text() == Some("slow"));
            let _ = send(v2::SessionUpdate::user_message(id, req.prompt.clone())).await;
            let _ = send(v2::SessionUpdate::running()).await;
            for block in req.prompt {
                let _ = send(v2::SessionUpdate::agent_message_chunk(
                    format!("reply-{n}"),
                    block,
                ))
                .await;
            }
            if slow {
                // Waits for the turn's cancellation: from `session/cancel`
                // or `session/close`, long after the acknowledgement.
                tokio::select! {
                    _ = turn.cancelled() => cancelled.notify_one(),
                    _ = tokio::time::sleep(PATIENCE) => {}
                }
            }
            let stop = if turn.is_cancelled() {
                v2::StopReason::Cancelled
            } else {
                v2::StopReason::EndTurn
            };
            let _ = send(v2::SessionUpdate::idle(stop)).await;
        });
        Ok(v2::PromptResponse::new(user))
    }

    async fn close_session(
        &self,
        _: v2::CloseSessionRequest,
        _: RequestContext<v2::AgentSide>,
    ) -> Result<v2::CloseSessionResponse, v2::Error> {
        Ok(v2::CloseSessionResponse::new())
    }

    async fn ext_method(
        &self,
        _: v2::ExtRequest,
        cx: RequestContext<v2::AgentSide>,
    ) -> Result<v2::ExtResponse, v2::Error> {
        // Hangs until cancelled (`$/cancel_request`).
        cx.cancelled().await;
        Err(v2::Error::internal_error())
    }
}

/// A v2 client that forwards every update, as JSON, on a channel.
struct Recorder(mpsc::UnboundedSender<String>);

impl acp::v2::Client for Recorder {
    async fn session_update(
        &self,
        n: v2::UpdateSessionNotification,
        _: acp::NotificationContext<v2::ClientSide>,
    ) -> Result<(), v2::Error> {
        let _ = self.0.send(serde_json::to_string(&n.update).unwrap());
        Ok(())
    }
}

/// A v1 client that forwards every update, as JSON, on a channel.
struct V1Recorder(mpsc::UnboundedSender<String>);

impl acp::Client for V1Recorder {
    async fn session_notification(
        &self,
        n: acp::schema::SessionNotification,
        _: acp::NotificationContext<acp::schema::ClientSide>,
    ) -> Result<(), acp::schema::Error> {
        let _ = self.0.send(serde_json::to_string(&n.update).unwrap());
        Ok(())
    }
}

/// A router's agent end, and the client end as a raw peer.
fn raw_router<A1: acp::Agent, A2: acp::v2::Agent>(
    router: AgentRouter<A1, A2>,
    options: ConnectionOptions,
) -> (RoutedAgent, RawPeer) {
    let (agent_end, peer_end) = Transport::memory_pair();
    let (routed, io) = router.connect(agent_end, options);
    tokio::spawn(io);
    (routed, RawPeer::new(peer_end))
}

const V2_INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"raw","version":"1"}}}"#;
const V2_INIT_OK: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"v2-agent","version":"1.0.0"},"capabilities":{"session":{}}}}"#;
const V1_INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#;
const V1_INIT_OK: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":false,"promptCapabilities":{"image":false,"audio":false,"embeddedContext":false},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{},"auth":{}},"authMethods":[]}}"#;

// ---------------------------------------------------------------------------
// Negotiation, agent side

#[tokio::test]
async fn an_agent_of_both_versions_answers_each_client_in_its_own() {
    let (routed, mut peer) = raw_router(
        AgentRouter::new()
            .v1(|_| V1Agent::default())
            .v2(|_| V2Agent::default()),
        ConnectionOptions::default(),
    );
    assert_eq!(routed.version(), None);
    assert_eq!(peer.call(V2_INIT).await, V2_INIT_OK);
    assert_eq!(routed.version(), Some(ProtocolVersion::V2));
    assert!(routed.v2().is_some() && routed.v1().is_none());

    let (routed, mut peer) = raw_router(
        AgentRouter::new()
            .v1(|_| V1Agent::default())
            .v2(|_| V2Agent::default()),
        ConnectionOptions::default(),
    );
    assert_eq!(peer.call(V1_INIT).await, V1_INIT_OK);
    assert_eq!(routed.version(), Some(ProtocolVersion::V1));
    assert!(routed.v1().is_some() && routed.v2().is_none());
}

#[tokio::test]
async fn a_v2_only_agent_refuses_a_v1_client_with_32022_and_waits_for_another_initialize() {
    let (_routed, mut peer) = raw_router(
        AgentRouter::new().v2(|_| V2Agent::default()),
        ConnectionOptions::default(),
    );
    assert_eq!(
        peer.call(V1_INIT).await,
        r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":1,"supported":[2]}}}"#
    );
    assert_eq!(peer.call(V2_INIT).await, V2_INIT_OK);
}

#[tokio::test]
async fn an_agent_of_both_versions_refuses_version_0_and_a_v1_agent_takes_anything() {
    let (_routed, mut peer) = raw_router(
        AgentRouter::new()
            .v1(|_| V1Agent::default())
            .v2(|_| V2Agent::default()),
        ConnectionOptions::default(),
    );
    assert_eq!(
        peer.call(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":0}}"#
        )
        .await,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":0,"supported":[1,2]}}}"#
    );
    let v1 = V1Agent::default();
    let (_routed, mut peer) = raw_router(
        AgentRouter::new().v1({
            let v1 = v1.clone();
            move |_| v1
        }),
        ConnectionOptions::default(),
    );
    assert_eq!(
        peer.call(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":0}}"#
        )
        .await,
        V1_INIT_OK
    );
}

#[tokio::test]
async fn a_v1_implementation_sees_a_v2_initialize_as_v1_and_a_v2_one_sees_version_2() {
    let v1 = V1Agent::default();
    let (_routed, mut peer) = raw_router(
        AgentRouter::new().v1({
            let v1 = v1.clone();
            move |_| v1
        }),
        ConnectionOptions::default(),
    );
    let asked = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"ed","version":"9"},"capabilities":{"auth":{"terminal":{}},"elicitation":{"form":{}}}}}"#;
    assert_eq!(peer.call(asked).await, V1_INIT_OK);
    assert_eq!(
        v1.seen.lock().unwrap().as_slice(),
        [
            r#"{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"session":{"compaction":{},"configOptions":{"boolean":{}},"notices":{}},"auth":{"terminal":true},"elicitation":{"form":{}}},"clientInfo":{"name":"ed","version":"9"}}"#
        ]
    );

    let v2a = V2Agent::default();
    let (_routed, mut peer) = raw_router(
        AgentRouter::new().v1(|_| V1Agent::default()).v2({
            let v2a = v2a.clone();
            move |_| v2a
        }),
        ConnectionOptions::default(),
    );
    let newer = r#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":7,"info":{"name":"ed","version":"9"},"_meta":{"x":1}}}"#;
    assert_eq!(
        peer.call(newer).await,
        r#"{"jsonrpc":"2.0","id":"i","result":{"protocolVersion":2,"info":{"name":"v2-agent","version":"1.0.0"},"capabilities":{"session":{}}}}"#
    );
    assert_eq!(
        v2a.seen.lock().unwrap().as_slice(),
        [
            r#"{"protocolVersion":2,"info":{"name":"ed","version":"9"},"capabilities":{},"_meta":{"x":1}}"#
        ]
    );
}

/// A v1 client asking for more than 1 (v1's `initialize`, no `info`): an
/// agent with a v1 implementation answers 1, as v1 asks, and the v1
/// implementation sees version 1 with every other member as sent; a v2
/// client's `initialize` with a broken `info` stays v2's to refuse, and a
/// v2-only agent refuses the v1 one with -32602.
#[tokio::test]
async fn a_v1_initialize_asking_for_more_is_answered_by_v1_when_there_is_one() {
    let v1 = V1Agent::default();
    let v2a = V2Agent::default();
    let (routed, mut peer) = raw_router(
        AgentRouter::new()
            .v1({
                let v1 = v1.clone();
                move |_| v1
            })
            .v2({
                let v2a = v2a.clone();
                move |_| v2a
            }),
        ConnectionOptions::default(),
    );
    let asked = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":65535,"clientCapabilities":{"fs":{"readTextFile":true}},"clientInfo":{"name":"ed","version":"9"}}}"#;
    assert_eq!(peer.call(asked).await, V1_INIT_OK);
    assert_eq!(routed.version(), Some(ProtocolVersion::V1));
    assert_eq!(
        v1.seen.lock().unwrap().as_slice(),
        [
            r#"{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":false},"terminal":false,"auth":{"terminal":false}},"clientInfo":{"name":"ed","version":"9"}}"#
        ]
    );
    assert!(v2a.seen.lock().unwrap().is_empty());

    // No members at all is a v1 `initialize` too.
    let (_routed, mut peer) = raw_router(
        AgentRouter::new()
            .v1(|_| V1Agent::default())
            .v2(|_| V2Agent::default()),
        ConnectionOptions::default(),
    );
    assert_eq!(
        peer.call(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2}}"#
        )
        .await,
        V1_INIT_OK
    );

    // A broken `info` is a v2 client's mistake: v2 refuses it, and the
    // agent waits for another `initialize`.
    let (routed, mut peer) = raw_router(
        AgentRouter::new()
            .v1(|_| V1Agent::default())
            .v2(|_| V2Agent::default()),
        ConnectionOptions::default(),
    );
    assert_eq!(
        peer.call(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"ed"}}}"#).await,
        r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":"Invalid params","data":{"path":"info","message":"missing field `version`"}}}"#
    );
    assert_eq!(routed.version(), Some(ProtocolVersion::V2));
    assert_eq!(peer.call(V2_INIT).await, V2_INIT_OK);

    // With v2 only, a v1 `initialize` asking for 2 is refused.
    let (_routed, mut peer) = raw_router(
        AgentRouter::new().v2(|_| V2Agent::default()),
        ConnectionOptions::default(),
    );
    assert_eq!(
        peer.call(asked).await,
        r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":"Invalid params","data":{"path":"","message":"missing field `info`"}}}"#
    );
    assert_eq!(peer.call(V2_INIT).await, V2_INIT_OK);
}

#[tokio::test]
async fn before_initialize_requests_are_refused_and_notifications_reported() {
    let dropped = Arc::new(Mutex::new(Vec::new()));
    let options = ConnectionOptions::default().on_dropped({
        let dropped = dropped.clone();
        move |d: &Dropped| dropped.lock().unwrap().push(d.to_string())
    });
    let (_routed, mut peer) = raw_router(AgentRouter::new().v2(|_| V2Agent::default()), options);
    peer.send(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#)
        .await;
    assert_eq!(
        peer.call(r#"{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/"}}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid request","data":"the first request must be `initialize`, not `session/new`"}}"#
    );
    // No protocol version: -32602, and the agent waits for another.
    assert_eq!(
        peer.call(r#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"info":{"name":"a","version":"1"}}}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params","data":"`initialize` needs `protocolVersion`, an integer from 0 to 65535; send it again"}}"#
    );
    assert_eq!(peer.call(V2_INIT).await, V2_INIT_OK);
    assert_eq!(
        dropped.lock().unwrap().as_slice(),
        [
            "a session/cancel notification with bad params: Invalid request (code -32600): \"`session/cancel` arrived before `initialize`; dropped\""
        ]
    );
}

#[tokio::test]
async fn with_a_v1_implementation_a_client_that_skips_initialize_gets_v1() {
    // As v1's runtime serves it: the first message chooses v1.
    let (routed, mut peer) = raw_router(
        AgentRouter::new()
            .v1(|_| V1Agent::default())
            .v2(|_| V2Agent::default()),
        ConnectionOptions::default(),
    );
    assert_eq!(
        peer.call(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#
    );
    assert_eq!(routed.version(), Some(ProtocolVersion::V1));
    assert_eq!(
        peer.call(r#"{"jsonrpc":"2.0","id":2,"method":"auth/login","params":{"methodId":"m"}}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found","data":{"method":"auth/login","protocolVersion":1,"reason":"`auth/login` is a method of protocol version 2; this connection speaks version 1"}}}"#
    );
}

#[tokio::test]
async fn a_method_of_the_other_version_is_refused_saying_so() {
    let (_routed, mut peer) = raw_router(
        AgentRouter::new()
            .v1(|_| V1Agent::default())
            .v2(|_| V2Agent::default()),
        ConnectionOptions::default(),
    );
    assert_eq!(peer.call(V1_INIT).await, V1_INIT_OK);
    assert_eq!(
        peer.call(r#"{"jsonrpc":"2.0","id":1,"method":"auth/login","params":{"methodId":"m"}}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":{"method":"auth/login","protocolVersion":1,"reason":"`auth/login` is a method of protocol version 2; this connection speaks version 1"}}}"#
    );

    let (_routed, mut peer) = raw_router(
        AgentRouter::new()
            .v1(|_| V1Agent::default())
            .v2(|_| V2Agent::default()),
        ConnectionOptions::default(),
    );
    assert_eq!(peer.call(V2_INIT).await, V2_INIT_OK);
    assert_eq!(
        peer.call(r#"{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"s","cwd":"/","mcpServers":[]}}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found","data":{"method":"session/load","protocolVersion":2,"reason":"`session/load` is a method of protocol version 1; this connection speaks version 2"}}}"#
    );
    // A method of neither version is the plain -32601.
    assert_eq!(
        peer.call(r#"{"jsonrpc":"2.0","id":3,"method":"nope","params":{}}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found","data":{"method":"nope"}}}"#
    );
    // A v1 message with a v2 method name is judged by v2's schema.
    assert_eq!(
        peer.call(r#"{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":"/p","mcpServers":[{"name":"fs","command":"/bin/fs","args":[],"env":[]}]}}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params","data":{"path":"mcpServers[0]","message":"missing field `type`"}}}"#
    );
}

#[tokio::test]
async fn v2_refuses_batches_null_ids_and_a_repeated_initialize_of_another_version() {
    let (_routed, mut peer) = raw_router(
        AgentRouter::new().v2(|_| V2Agent::default()),
        ConnectionOptions::default(),
    );
    assert_eq!(peer.call(V2_INIT).await, V2_INIT_OK);
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/"}},{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/"}}]"#;
    assert_eq!(
        peer.call(batch).await,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"a message must be a JSON object"}}"#
    );
    assert_eq!(
        peer.call(r#"{"jsonrpc":"2.0","id":null,"method":"session/new","params":{"cwd":"/"}}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"v2 request ids are strings or integers, not null"}}"#
    );
    assert_eq!(
        peer.call(
            r#"{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":1}}"#
        )
        .await,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid request","data":"this connection speaks protocol version 2; a repeated `initialize` cannot ask for version 1"}}"#
    );
    // The connection goes on.
    assert_eq!(
        peer.call(r#"{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":"/"}}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":6,"result":{"sessionId":"s1"}}"#
    );
}

// ---------------------------------------------------------------------------
// Negotiation, client side

/// A client router's end, and the agent end as a raw peer.
fn raw_negotiating(
    with_v1: bool,
) -> (
    impl std::future::Future<Output = Result<Negotiated, ConnectionError>>,
    RawPeer,
    mpsc::UnboundedReceiver<String>,
) {
    let (client_end, peer_end) = Transport::memory_pair();
    let (tx, rx) = mpsc::unbounded_channel();
    let tx2 = tx.clone();
    let hello = v2::InitializeRequest::new(info("raw-client"));
    let fut: std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send>> = if with_v1 {
        let (negotiating, io) = ClientRouter::new(move |_| Recorder(tx))
            .v1(move |_| V1Recorder(tx2))
            .connect(client_end, ConnectionOptions::default());
        tokio::spawn(io);
        Box::pin(negotiating.initialize(hello))
    } else {
        let (negotiating, io) = ClientRouter::new(move |_| Recorder(tx))
            .connect(client_end, ConnectionOptions::default());
        tokio::spawn(io);
        Box::pin(negotiating.initialize(hello))
    };
    (fut, RawPeer::new(peer_end), rx)
}

#[tokio::test]
async fn a_client_with_a_v1_fallback_tells_a_v1_agent_its_v1_capabilities() {
    let (client_end, mut peer) = {
        let (a, b) = Transport::memory_pair();
        (a, RawPeer::new(b))
    };
    let caps = acp::schema::ClientCapabilities::new()
        .fs(acp::schema::FileSystemCapabilities::new().read_text_file(true))
        .terminal(true);
    let (negotiating, io) = ClientRouter::new(|_| Recorder(mpsc::unbounded_channel().0))
        .v1(|_| V1Recorder(mpsc::unbounded_channel().0))
        .v1_capabilities(caps)
        .connect(client_end, ConnectionOptions::default());
    tokio::spawn(io);
    let negotiated =
        tokio::spawn(negotiating.initialize(v2::InitializeRequest::new(info("raw-client"))));
    assert_eq!(
        peer.recv().await,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"raw-client","version":"1.0.0"},"capabilities":{},"clientInfo":{"name":"raw-client","version":"1.0.0"},"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":false},"terminal":true,"auth":{"terminal":false}}}}"#
    );
    peer.send(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#)
        .await;
    let negotiated = within("the negotiation", negotiated).await.unwrap();
    assert_eq!(negotiated.unwrap().version(), ProtocolVersion::V1);
}

#[tokio::test]
async fn a_client_asks_for_v2_and_speaks_what_the_agent_answers() {
    let (negotiated, mut peer, mut updates) = raw_negotiating(true);
    let negotiated = tokio::spawn(negotiated);
    // v2's initialize, and (the client having a v1 fallback) v1's members
    // for a v1 agent to read.
    assert_eq!(
        peer.recv().await,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"raw-client","version":"1.0.0"},"capabilities":{},"clientInfo":{"name":"raw-client","version":"1.0.0"},"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"session":{"compaction":{},"configOptions":{"boolean":{}},"notices":{}},"auth":{"terminal":false}}}}"#
    );
    // The answer, and right behind it a v1 update: read as v1.
    peer.send(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#)
        .await;
    peer.send(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#).await;
    let negotiated = within("the negotiation", negotiated)
        .await
        .unwrap()
        .unwrap();
    let Negotiated::V1 { response, .. } = negotiated else {
        panic!("{negotiated:?}")
    };
    assert_eq!(response.protocol_version, ProtocolVersion::V1);
    assert_eq!(
        within("the update", updates.recv()).await.unwrap(),
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}"#
    );

    let (negotiated, mut peer, mut updates) = raw_negotiating(true);
    let negotiated = tokio::spawn(negotiated);
    peer.recv().await;
    peer.send(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"info":{"name":"a","version":"1"}}}"#).await;
    peer.send(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"running"}}}"#).await;
    let negotiated = within("the negotiation", negotiated)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(negotiated.version(), ProtocolVersion::V2);
    assert_eq!(
        within("the update", updates.recv()).await.unwrap(),
        r#"{"sessionUpdate":"state_update","state":"running"}"#
    );
    // The v2 client refuses a v1 method of the agent, saying why.
    assert_eq!(
        peer.call(r#"{"jsonrpc":"2.0","id":9,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/etc/passwd"}}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found","data":{"method":"fs/read_text_file","protocolVersion":2,"reason":"`fs/read_text_file` is a method of protocol version 1; this connection speaks version 2"}}}"#
    );
}

#[tokio::test]
async fn a_v2_only_client_gives_up_on_a_v1_agent_and_the_agents_error_comes_through() {
    let (negotiated, mut peer, _updates) = raw_negotiating(false);
    let negotiated = tokio::spawn(negotiated);
    peer.recv().await;
    peer.send(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#)
        .await;
    let err = within("the negotiation", negotiated)
        .await
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(
            err,
            ConnectionError::UnsupportedVersion {
                asked: 2,
                answered: Some(1)
            }
        ),
        "{err}"
    );
    assert_eq!(peer.next_line().await, None, "the connection closed");

    let (negotiated, mut peer, _updates) = raw_negotiating(true);
    let negotiated = tokio::spawn(negotiated);
    peer.recv().await;
    peer.send(r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":2,"supported":[3]}}}"#).await;
    let err = within("the negotiation", negotiated)
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(err.remote().map(|e| e.code.0), Some(-32022), "{err}");
}

// ---------------------------------------------------------------------------
// The v2 prompt lifecycle, end to end in memory

/// A v2 agent (behind a router of both versions) and a v2 client.
async fn v2_pair(
    agent: V2Agent,
) -> (
    acp::v2::ClientSideConnection,
    mpsc::UnboundedReceiver<String>,
) {
    let (agent_end, client_end) = Transport::memory_pair();
    let (_routed, io) = AgentRouter::new()
        .v1(|_| V1Agent::default())
        .v2(move |_| agent)
        .connect(agent_end, ConnectionOptions::default());
    tokio::spawn(io);
    let (tx, rx) = mpsc::unbounded_channel();
    let (negotiating, io) =
        ClientRouter::new(move |_| Recorder(tx)).connect(client_end, ConnectionOptions::default());
    tokio::spawn(io);
    let negotiated = negotiating
        .initialize(v2::InitializeRequest::new(info("client")))
        .await
        .unwrap();
    let Negotiated::V2 { connection, .. } = negotiated else {
        panic!("{negotiated:?}")
    };
    (connection, rx)
}

async fn next(updates: &mut mpsc::UnboundedReceiver<String>) -> String {
    within("an update", updates.recv())
        .await
        .expect("an update")
}

#[tokio::test]
async fn a_prompt_is_acknowledged_then_the_turn_streams_and_ends_idle() {
    let (client, mut updates) = v2_pair(V2Agent::default()).await;
    let ack = client
        .prompt(v2::PromptRequest::new(
            "s1",
            vec!["hello".into(), "world".into()],
        ))
        .await
        .unwrap();
    assert_eq!(ack.message_id.as_str(), "user-1");
    // What the agent sent before its answer was handled before `prompt`
    // returned: it is already there.
    assert_eq!(
        updates.try_recv().unwrap(),
        r#"{"sessionUpdate":"agent_thought_chunk","messageId":"thought-1","content":{"type":"text","text":"accepted"}}"#
    );
    assert_eq!(
        next(&mut updates).await,
        r#"{"sessionUpdate":"user_message","messageId":"user-1","content":[{"type":"text","text":"hello"},{"type":"text","text":"world"}]}"#
    );
    assert_eq!(
        next(&mut updates).await,
        r#"{"sessionUpdate":"state_update","state":"running"}"#
    );
    for text in ["hello", "world"] {
        assert_eq!(
            next(&mut updates).await,
            format!(
                r#"{{"sessionUpdate":"agent_message_chunk","messageId":"reply-1","content":{{"type":"text","text":"{text}"}}}}"#
            )
        );
    }
    assert_eq!(
        next(&mut updates).await,
        r#"{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}"#
    );
}

/// Drains updates until the idle one; returns it.
async fn until_idle(updates: &mut mpsc::UnboundedReceiver<String>) -> String {
    loop {
        let update = next(updates).await;
        if update.contains(r#""state":"idle""#) {
            return update;
        }
    }
}

#[tokio::test]
async fn session_cancel_reaches_the_turn_after_its_acknowledgement() {
    let agent = V2Agent::default();
    let cancelled = agent.cancelled.clone();
    let (client, mut updates) = v2_pair(agent).await;
    client
        .prompt(v2::PromptRequest::new("s1", vec!["slow".into()]))
        .await
        .unwrap();
    // The turn runs on after the acknowledgement; it is cancelled now.
    assert!(next(&mut updates).await.contains("accepted"));
    client
        .cancel(v2::CancelSessionNotification::new("s1"))
        .await
        .unwrap();
    within("the turn to see the cancel", cancelled.notified()).await;
    assert_eq!(
        until_idle(&mut updates).await,
        r#"{"sessionUpdate":"state_update","state":"idle","stopReason":"cancelled"}"#
    );
}

#[tokio::test]
async fn session_close_cancels_the_sessions_turn() {
    let agent = V2Agent::default();
    let cancelled = agent.cancelled.clone();
    let (client, mut updates) = v2_pair(agent).await;
    client
        .prompt(v2::PromptRequest::new("s1", vec!["slow".into()]))
        .await
        .unwrap();
    client
        .close_session(v2::CloseSessionRequest::from(
            acp::schema::CloseSessionRequest::new("s1"),
        ))
        .await
        .unwrap();
    within("the turn to see the close", cancelled.notified()).await;
    assert_eq!(
        until_idle(&mut updates).await,
        r#"{"sessionUpdate":"state_update","state":"idle","stopReason":"cancelled"}"#
    );
}

#[tokio::test]
async fn a_dropped_v2_call_sends_cancel_request_and_the_agent_answers_32800() {
    let (_routed, mut peer) = raw_router(
        AgentRouter::<NoAgent, _>::new().v2(|_| V2Agent::default()),
        ConnectionOptions::default(),
    );
    assert_eq!(peer.call(V2_INIT).await, V2_INIT_OK);
    peer.send(r#"{"jsonrpc":"2.0","id":"h","method":"_test/hang","params":{}}"#)
        .await;
    assert_eq!(
        peer.call(r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"h"}}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":"h","error":{"code":-32800,"message":"Request cancelled"}}"#
    );
}

// ---------------------------------------------------------------------------
// Backpressure: v2 notifications wait for a client that does not read

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v2_updates_wait_for_a_client_that_does_not_read() {
    const QUEUE: usize = 20 * 1024;
    const TEXT: usize = 10 * 1024;
    let (routed, mut peer) = raw_router(
        AgentRouter::new().v2(|_| V2Agent::default()),
        ConnectionOptions::default().outgoing_queue(QUEUE),
    );
    assert_eq!(peer.call(V2_INIT).await, V2_INIT_OK);
    let conn = routed.v2().unwrap();
    let sent = Arc::new(AtomicUsize::new(0));
    let sender = tokio::spawn({
        let sent = sent.clone();
        async move {
            for i in 0..200 {
                let chunk = v2::SessionUpdate::agent_message_chunk(
                    "m",
                    format!("{i:04}{}", "x".repeat(TEXT)),
                );
                conn.session_update(v2::UpdateSessionNotification::new("s", chunk))
                    .await?;
                sent.fetch_add(1, Ordering::SeqCst);
            }
            Ok::<_, ConnectionError>(())
        }
    });
    let stalled_at = within("the sender to stall", async {
        let mut last = usize::MAX;
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let now = sent.load(Ordering::SeqCst);
            if now == last {
                return now;
            }
            last = now;
        }
    })
    .await;
    let in_flight = (256 + 64) * 1024 + QUEUE + TEXT;
    assert!(
        stalled_at <= in_flight / TEXT + 1,
        "{stalled_at} lines went out unread"
    );
    assert!(!sender.is_finished());
    for i in 0..200 {
        let line = peer.recv_json().await;
        let text = line["params"]["update"]["content"]["text"]
            .as_str()
            .unwrap();
        assert_eq!(&text[..4], format!("{i:04}"), "line {i}");
    }
    within("the sender", sender).await.unwrap().unwrap();
}
