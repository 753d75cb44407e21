//! The v1 ↔ v2 bridge (feature `v2`): a full turn each way, every row of the
//! mapping with the exact JSON that comes out, each named loss, and the
//! pass-through when both sides speak the same version.

use crate::support;

use acp::bridge::{BridgeOptions, Route, bridge, bridge_with};
use acp::schema::{self as v1, ProtocolVersion, v2};
use acp::{ConnectionOptions, NotificationContext, RequestContext, Transport};
use std::sync::{Arc, Mutex};
use support::{RawPeer, within};
use tokio::sync::{Notify, mpsc};

// ---------------------------------------------------------------------------
// A v1 agent and a v2 agent, scripted by the words of the prompt

#[derive(Clone, Default)]
struct V1Agent {
    seen: Arc<Mutex<Vec<String>>>,
    cancelled: Arc<Notify>,
}

impl V1Agent {
    fn log(&self, line: String) {
        self.seen.lock().unwrap().push(line);
    }
}

impl acp::Agent for V1Agent {
    async fn initialize(
        &self,
        req: v1::InitializeRequest,
        _: RequestContext<v1::AgentSide>,
    ) -> Result<v1::InitializeResponse, v1::Error> {
        self.log(serde_json::to_string(&req).unwrap());
        Ok(v1::InitializeResponse::new(ProtocolVersion::V1)
            .agent_info(v1::Implementation::new("v1-agent", "1.0"))
            .agent_capabilities(
                v1::AgentCapabilities::new()
                    .load_session(true)
                    .prompt_capabilities(v1::PromptCapabilities::new().image(true)),
            ))
    }

    async fn new_session(
        &self,
        req: v1::NewSessionRequest,
        _: RequestContext<v1::AgentSide>,
    ) -> Result<v1::NewSessionResponse, v1::Error> {
        self.log(serde_json::to_string(&req).unwrap());
        Ok(
            v1::NewSessionResponse::new("s1").modes(v1::SessionModeState::new(
                "code",
                vec![
                    v1::SessionMode::new("code", "Code"),
                    v1::SessionMode::new("plan", "Plan"),
                ],
            )),
        )
    }

    async fn set_session_mode(
        &self,
        req: v1::SetSessionModeRequest,
        _: RequestContext<v1::AgentSide>,
    ) -> Result<v1::SetSessionModeResponse, v1::Error> {
        self.log(format!("mode {}", req.mode_id));
        Ok(v1::SetSessionModeResponse::new())
    }

    async fn prompt(
        &self,
        req: v1::PromptRequest,
        cx: RequestContext<v1::AgentSide>,
    ) -> Result<v1::PromptResponse, v1::Error> {
        let text = req
            .prompt
            .iter()
            .filter_map(|b| b.as_text())
            .collect::<Vec<_>>()
            .join(" ");
        let peer = cx.peer();
        let say =
            |u: v1::SessionUpdate| peer.session_notification(v1::SessionNotification::new("s1", u));
        say(v1::SessionUpdate::agent_message("Hello")).await?;
        say(v1::SessionUpdate::agent_message(" there")).await?;
        if text.contains("tools") {
            say(v1::SessionUpdate::ToolCall(
                v1::ToolCall::new("c1", "Edit a.txt")
                    .kind(v1::ToolKind::Edit)
                    .content(vec![v1::ToolCallContent::Diff(v1::Diff::new(
                        "/p/a.txt",
                        Some("one\ntwo\n".to_string()),
                        "one\n2\n",
                    ))]),
            ))
            .await?;
            say(v1::SessionUpdate::ToolCallUpdate(
                v1::ToolCallUpdate::new("c1").status(v1::ToolCallStatus::Completed),
            ))
            .await?;
            say(v1::SessionUpdate::agent_message("Done")).await?;
            say(v1::SessionUpdate::Plan(v1::Plan::new(vec![
                v1::PlanEntry::new(
                    "Edit",
                    v1::PlanEntryPriority::High,
                    v1::PlanEntryStatus::Completed,
                ),
            ])))
            .await?;
            say(v1::SessionUpdate::CurrentModeUpdate(
                v1::CurrentModeUpdate::new("plan"),
            ))
            .await?;
        }
        if text.contains("permission") {
            let answer = peer
                .request_permission(v1::RequestPermissionRequest::new(
                    "s1",
                    v1::ToolCallUpdate::new("c2").title("Run rm -rf build?"),
                    vec![
                        v1::PermissionOption::new(
                            "yes",
                            "Yes",
                            v1::PermissionOptionKind::AllowOnce,
                        ),
                        v1::PermissionOption::new("no", "No", v1::PermissionOptionKind::RejectOnce),
                    ],
                ))
                .await?;
            self.log(format!(
                "permission {}",
                serde_json::to_string(&answer).unwrap()
            ));
        }
        if text.contains("read") {
            let err = peer
                .read_text_file(v1::ReadTextFileRequest::new("s1", "/etc/hosts"))
                .await
                .unwrap_err();
            self.log(format!(
                "read {}",
                serde_json::to_string(err.remote().unwrap()).unwrap()
            ));
        }
        if text.contains("fail") {
            return Err(v1::Error::internal_error().data("boom"));
        }
        if text.contains("slow") {
            cx.cancelled().await;
            self.cancelled.notify_one();
            return Ok(v1::PromptResponse::new(v1::StopReason::Cancelled));
        }
        Ok(v1::PromptResponse::new(v1::StopReason::EndTurn))
    }
}

#[derive(Clone, Default)]
struct V2Agent {
    seen: Arc<Mutex<Vec<String>>>,
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
        Ok(
            v2::InitializeResponse::new(v2::Implementation::new("v2-agent", "2.0"))
                .capabilities(
                    v2::AgentCapabilities::new().session(
                        v2::SessionCapabilities::new()
                            .prompt(
                                v2::PromptCapabilities::new()
                                    .image(v2::PromptImageCapabilities::new()),
                            )
                            .mcp(v2::McpCapabilities::new().http(v2::McpHttpCapabilities::new())),
                    ),
                )
                .auth_methods(vec![v2::AuthMethodAgent::new("login", "Log in").into()]),
        )
    }

    async fn new_session(
        &self,
        req: v2::NewSessionRequest,
        _: RequestContext<v2::AgentSide>,
    ) -> Result<v2::NewSessionResponse, v2::Error> {
        self.seen
            .lock()
            .unwrap()
            .push(serde_json::to_string(&req).unwrap());
        Ok(v2::NewSessionResponse::new("s1").config_options(vec![
            v2::SessionConfigOption::select(
                "mode",
                "Mode",
                "code",
                vec![
                    v1::SessionConfigSelectOption::new("code", "Code"),
                    v1::SessionConfigSelectOption::new("plan", "Plan"),
                ],
            )
            .category(v1::SessionConfigOptionCategory::Mode),
        ]))
    }

    async fn prompt(
        &self,
        req: v2::PromptRequest,
        cx: RequestContext<v2::AgentSide>,
    ) -> Result<v2::PromptResponse, v2::Error> {
        let text = req
            .prompt
            .iter()
            .filter_map(|b| b.as_text())
            .collect::<Vec<_>>()
            .join(" ");
        let turn = cx.clone();
        cx.after_response(async move {
            let peer = turn.peer();
            let say = |u: v2::SessionUpdate| peer.session_update(v2::UpdateSessionNotification::new("s1", u));
            let _ = say(v2::SessionUpdate::user_message("u1", req.prompt.clone())).await;
            let _ = say(v2::SessionUpdate::running()).await;
            let _ = say(v2::SessionUpdate::agent_message_chunk("a1", "Hi")).await;
            if text.contains("tools") {
                let _ = say(v2::SessionUpdate::ToolCallUpdate(
                    v2::ToolCallUpdate::new("c1").title("Run tests").kind(v1::ToolKind::Execute)
                        .status(v2::ToolCallStatus::InProgress)
                        .content(vec![v2::ToolCallContent::Terminal(v1::Terminal::new("t1"))]),
                ))
                .await;
                let _ = say(v2::SessionUpdate::TerminalUpdate(
                    v2::TerminalUpdate::new("t1").command("cargo test").cwd("/p"),
                ))
                .await;
                let _ = say(v2::SessionUpdate::TerminalOutputChunk(v2::TerminalOutputChunk::new("t1", "b2sK")))
                    .await;
                let _ = say(v2::SessionUpdate::TerminalUpdate(
                    v2::TerminalUpdate::new("t1").exit_status(v1::TerminalExitStatus::exited(0)),
                ))
                .await;
                let _ = say(v2::SessionUpdate::ToolCallUpdate(
                    v2::ToolCallUpdate::new("c1").status(v2::ToolCallStatus::Paused).clear_title(),
                ))
                .await;
                let mut diff = v2::Diff::new(vec![v2::DiffChange::modify("/p/a.txt")]);
                diff.patch = Some(v2::DiffPatch::git(
                    "diff --git /p/a.txt /p/a.txt\n--- /p/a.txt\n+++ /p/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n",
                ));
                let _ = say(v2::SessionUpdate::ToolCallContentChunk(v2::ToolCallContentChunk::new(
                    "c2",
                    v2::ToolCallContent::Diff(diff),
                )))
                .await;
                let _ = say(v2::SessionUpdate::PlanUpdate(v2::PlanUpdate::new(v2::PlanItems::new(
                    "p1",
                    vec![v2::PlanEntry::new("Drop it", v1::PlanEntryPriority::Low, v2::PlanEntryStatus::Cancelled)],
                ))))
                .await;
                let _ = say(v2::SessionUpdate::agent_message("a1", vec!["Hi again".into()])).await;
            }
            if text.contains("permission") {
                let answer = peer
                    .request_permission(
                        v2::RequestPermissionRequest::new(
                            "s1",
                            "Run cargo test?",
                            vec![v1::PermissionOption::new("yes", "Yes", v1::PermissionOptionKind::AllowOnce)],
                        )
                        .description("It runs the whole suite")
                        .subject(v2::CommandPermissionSubject::new("cargo test", "/p")),
                    )
                    .await;
                let _ = say(v2::SessionUpdate::agent_message_chunk(
                    "a2",
                    format!("answer {}", serde_json::to_string(&answer.unwrap()).unwrap()),
                ))
                .await;
            }
            let stop = if text.contains("fail") {
                v2::StopReason::error(v1::Error::new(-32099, "model unreachable"))
            } else if text.contains("slow") {
                turn.cancelled().await;
                v2::StopReason::Cancelled
            } else {
                v2::StopReason::EndTurn
            };
            let _ = say(v2::SessionUpdate::idle(stop)).await;
        });
        Ok(v2::PromptResponse::new("u1"))
    }
}

/// A v2 client recording updates; permission answered with the first option.
struct V2Client(mpsc::UnboundedSender<String>);

impl acp::v2::Client for V2Client {
    async fn session_update(
        &self,
        n: v2::UpdateSessionNotification,
        _: NotificationContext<v2::ClientSide>,
    ) -> Result<(), v2::Error> {
        let _ = self.0.send(serde_json::to_string(&n.update).unwrap());
        Ok(())
    }

    async fn request_permission(
        &self,
        req: v2::RequestPermissionRequest,
        _: RequestContext<v2::ClientSide>,
    ) -> Result<v2::RequestPermissionResponse, v2::Error> {
        let _ = self.0.send(format!(
            "permission {}",
            serde_json::to_string(&req).unwrap()
        ));
        Ok(v2::RequestPermissionResponse::selected(
            req.options[0].option_id.clone(),
        ))
    }
}

/// A v1 client recording updates; permission answered with the first option.
struct V1Client(mpsc::UnboundedSender<String>);

impl acp::Client for V1Client {
    async fn session_notification(
        &self,
        n: v1::SessionNotification,
        _: NotificationContext<v1::ClientSide>,
    ) -> Result<(), v1::Error> {
        let _ = self.0.send(serde_json::to_string(&n.update).unwrap());
        Ok(())
    }

    async fn request_permission(
        &self,
        req: v1::RequestPermissionRequest,
        _: RequestContext<v1::ClientSide>,
    ) -> Result<v1::RequestPermissionResponse, v1::Error> {
        let _ = self.0.send(format!(
            "permission {}",
            serde_json::to_string(&req).unwrap()
        ));
        Ok(v1::RequestPermissionResponse::selected(
            req.options[0].option_id.clone(),
        ))
    }
}

/// Starts a bridge between the two ends it is given; returns its route.
fn start_bridge(client: Transport, agent: Transport) -> tokio::task::JoinHandle<Route> {
    tokio::spawn(async move {
        bridge(client, agent, ConnectionOptions::default())
            .await
            .expect("the bridge ends cleanly")
    })
}

/// A v2 client, the bridge, and a v1 agent.
fn v2_client_v1_agent(
    agent: V1Agent,
) -> (
    acp::v2::ClientSideConnection,
    mpsc::UnboundedReceiver<String>,
    tokio::task::JoinHandle<Route>,
) {
    let (agent_end, bridge_agent_end) = Transport::memory_pair();
    let (client_end, bridge_client_end) = Transport::memory_pair();
    let (_a, io) =
        acp::AgentSideConnection::new(agent_end, ConnectionOptions::default(), move |_| agent);
    tokio::spawn(io);
    let route = start_bridge(bridge_client_end, bridge_agent_end);
    let (tx, rx) = mpsc::unbounded_channel();
    let (client, io) =
        acp::v2::ClientSideConnection::new(client_end, ConnectionOptions::default(), move |_| {
            V2Client(tx)
        });
    tokio::spawn(io);
    (client, rx, route)
}

/// A v1 client, the bridge, and a v2 agent.
fn v1_client_v2_agent(
    agent: V2Agent,
) -> (
    acp::ClientSideConnection,
    mpsc::UnboundedReceiver<String>,
    tokio::task::JoinHandle<Route>,
) {
    let (agent_end, bridge_agent_end) = Transport::memory_pair();
    let (client_end, bridge_client_end) = Transport::memory_pair();
    let (_a, io) =
        acp::v2::AgentSideConnection::new(agent_end, ConnectionOptions::default(), move |_| agent);
    tokio::spawn(io);
    let route = start_bridge(bridge_client_end, bridge_agent_end);
    let (tx, rx) = mpsc::unbounded_channel();
    let (client, io) =
        acp::ClientSideConnection::new(client_end, ConnectionOptions::default(), move |_| {
            V1Client(tx)
        });
    tokio::spawn(io);
    (client, rx, route)
}

async fn next(rx: &mut mpsc::UnboundedReceiver<String>) -> String {
    within("an update", rx.recv()).await.expect("an update")
}

async fn until(rx: &mut mpsc::UnboundedReceiver<String>, needle: &str) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        let line = next(rx).await;
        let done = line.contains(needle);
        seen.push(line);
        if done {
            return seen;
        }
    }
}

// ---------------------------------------------------------------------------
// A v2 client, a v1 agent

#[tokio::test]
async fn a_v2_client_completes_a_turn_with_a_v1_agent() {
    let agent = V1Agent::default();
    let (client, mut rx, route) = v2_client_v1_agent(agent.clone());
    let init = client
        .initialize(v2::InitializeRequest::new(v2::Implementation::new(
            "editor", "9",
        )))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_string(&init).unwrap(),
        r#"{"protocolVersion":2,"info":{"name":"v1-agent","version":"1.0"},"capabilities":{"session":{"prompt":{"image":{}},"mcp":{"stdio":{}}}}}"#
    );
    let session = client
        .new_session(
            v2::NewSessionRequest::new("/p")
                .mcp_servers(vec![v2::McpServerStdio::new("fs", "/bin/fs").into()]),
        )
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_string(&session).unwrap(),
        r#"{"sessionId":"s1","configOptions":[{"configId":"mode","name":"Mode","category":"mode","type":"select","currentValue":"code","options":[{"value":"code","name":"Code"},{"value":"plan","name":"Plan"}]}]}"#
    );
    let ack = client
        .prompt(v2::PromptRequest::new("s1", vec!["tools please".into()]))
        .await
        .unwrap();
    assert_eq!(ack.message_id.as_str(), "bridge-user-1");
    let turn = until(&mut rx, r#""state":"idle""#).await;
    assert_eq!(
        turn,
        [
            r#"{"sessionUpdate":"user_message","messageId":"bridge-user-1","content":[{"type":"text","text":"tools please"}]}"#,
            r#"{"sessionUpdate":"state_update","state":"running"}"#,
            r#"{"sessionUpdate":"agent_message_chunk","messageId":"bridge-msg-1","content":{"type":"text","text":"Hello"}}"#,
            r#"{"sessionUpdate":"agent_message_chunk","messageId":"bridge-msg-1","content":{"type":"text","text":" there"}}"#,
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Edit a.txt","kind":"edit","status":"pending","content":[{"type":"diff","changes":[{"fileType":"text","operation":"modify","path":"/p/a.txt"}],"patch":{"format":"git_patch","text":"diff --git /p/a.txt /p/a.txt\n--- /p/a.txt\n+++ /p/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"}}]}"#,
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed"}"#,
            r#"{"sessionUpdate":"agent_message_chunk","messageId":"bridge-msg-2","content":{"type":"text","text":"Done"}}"#,
            r#"{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"plan","entries":[{"content":"Edit","priority":"high","status":"completed"}]}}"#,
            r#"{"sessionUpdate":"config_option_update","configOptions":[{"configId":"mode","name":"Mode","category":"mode","type":"select","currentValue":"plan","options":[{"value":"code","name":"Code"},{"value":"plan","name":"Plan"}]}]}"#,
            r#"{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}"#,
        ]
    );
    // The mode option sets the v1 mode.
    client
        .set_session_config_option(v2::SetSessionConfigOptionRequest::new("s1", "mode", "code"))
        .await
        .unwrap();
    assert_eq!(
        agent.seen.lock().unwrap().as_slice(),
        [
            // The client's v2 initialize, with v1's members added for a v1
            // agent to read (as this one decodes and encodes it again).
            r#"{"protocolVersion":2,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"session":{"compaction":{},"configOptions":{"boolean":{}},"notices":{}},"auth":{"terminal":false}},"clientInfo":{"name":"editor","version":"9"},"info":{"name":"editor","version":"9"},"capabilities":{}}"#,
            r#"{"cwd":"/p","mcpServers":[{"name":"fs","command":"/bin/fs","args":[],"env":[]}]}"#,
            "mode code",
        ]
    );
    client.close();
    assert_eq!(
        within("the bridge", route).await.unwrap(),
        Route {
            client: ProtocolVersion::V2,
            agent: ProtocolVersion::V1
        }
    );
}

#[tokio::test]
async fn a_v1_agents_permission_fs_error_and_cancel_reach_a_v2_client() {
    let agent = V1Agent::default();
    let cancelled = agent.cancelled.clone();
    let (client, mut rx, _route) = v2_client_v1_agent(agent.clone());
    client
        .initialize(v2::InitializeRequest::new(v2::Implementation::new(
            "editor", "9",
        )))
        .await
        .unwrap();
    client
        .prompt(v2::PromptRequest::new("s1", vec!["permission read".into()]))
        .await
        .unwrap();
    let turn = until(&mut rx, r#""state":"idle""#).await;
    assert!(
        turn.contains(&r#"{"sessionUpdate":"state_update","state":"requires_action"}"#.to_string()),
        "{turn:#?}"
    );
    assert!(turn.contains(&r#"permission {"sessionId":"s1","title":"Run rm -rf build?","subject":{"type":"tool_call","toolCall":{"toolCallId":"c2","title":"Run rm -rf build?"}},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]}"#.to_string()), "{turn:#?}");
    let seen = agent.seen.lock().unwrap().clone();
    assert!(
        seen.contains(
            &r#"permission {"outcome":{"outcome":"selected","optionId":"yes"}}"#.to_string()
        ),
        "{seen:#?}"
    );
    assert!(seen.iter().any(|l| l.starts_with(r#"read {"code":-32601,"message":"Method not found","data":{"method":"fs/read_text_file","reason":"the client speaks protocol version 2"#)), "{seen:#?}");

    client
        .prompt(v2::PromptRequest::new("s1", vec!["fail".into()]))
        .await
        .unwrap();
    assert_eq!(
        until(&mut rx, r#""state":"idle""#).await.last().unwrap(),
        r#"{"sessionUpdate":"state_update","state":"idle","stopReason":"error","error":{"code":-32603,"message":"Internal error","data":"boom"}}"#
    );

    client
        .prompt(v2::PromptRequest::new("s1", vec!["slow".into()]))
        .await
        .unwrap();
    until(&mut rx, r#""state":"running""#).await;
    client
        .cancel(v2::CancelSessionNotification::new("s1"))
        .await
        .unwrap();
    within("the v1 turn to be cancelled", cancelled.notified()).await;
    assert_eq!(
        until(&mut rx, r#""state":"idle""#).await.last().unwrap(),
        r#"{"sessionUpdate":"state_update","state":"idle","stopReason":"cancelled"}"#
    );
    // What v1 has no form of is refused, saying why.
    let err = client
        .cancel_tool_call(v2::CancelToolCallRequest::new("s1", "c1"))
        .await
        .unwrap_err();
    assert_eq!(err.remote().unwrap().code.0, -32601);
}

// ---------------------------------------------------------------------------
// A v1 client, a v2 agent

#[tokio::test]
async fn a_v1_client_completes_a_turn_with_a_v2_agent() {
    let agent = V2Agent::default();
    let (client, mut rx, route) = v1_client_v2_agent(agent.clone());
    let init = client
        .initialize(
            v1::InitializeRequest::new(ProtocolVersion::V1)
                .client_info(v1::Implementation::new("zed", "1"))
                .client_capabilities(
                    v1::ClientCapabilities::new()
                        .fs(v1::FileSystemCapabilities::new().read_text_file(true)),
                ),
        )
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_string(&init).unwrap(),
        r#"{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"audio":false,"embeddedContext":false},"mcpCapabilities":{"http":true,"sse":false},"sessionCapabilities":{"list":{},"resume":{},"close":{}},"auth":{"logout":{}}},"authMethods":[{"id":"login","name":"Log in"}],"agentInfo":{"name":"v2-agent","version":"2.0"}}"#
    );
    let session = client
        .new_session(v1::NewSessionRequest::new("/p").mcp_servers(vec![
            v1::McpServerStdio::new("fs", "/bin/fs").into(),
            v1::McpServer::Sse(v1::McpServerSse::new("old", "https://x/sse")),
        ]))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_string(&session).unwrap(),
        r#"{"sessionId":"s1","modes":{"currentModeId":"code","availableModes":[{"id":"code","name":"Code"},{"id":"plan","name":"Plan"}]},"configOptions":[{"id":"mode","name":"Mode","category":"mode","type":"select","currentValue":"code","options":[{"value":"code","name":"Code"},{"value":"plan","name":"Plan"}]}]}"#
    );
    let reply = client
        .prompt(v1::PromptRequest::new("s1", vec!["tools".into()]))
        .await
        .unwrap();
    assert_eq!(reply.stop_reason, v1::StopReason::EndTurn);
    let mut turn = Vec::new();
    while let Ok(line) = rx.try_recv() {
        turn.push(line);
    }
    assert_eq!(
        turn,
        [
            r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"},"messageId":"a1"}"#,
            r#"{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Run tests","kind":"execute","status":"in_progress","content":[{"type":"content","content":{"type":"text","text":"[terminal t1]"}}]}"#,
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[{"type":"content","content":{"type":"text","text":"$ cargo test\n"}}]}"#,
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[{"type":"content","content":{"type":"text","text":"$ cargo test\nok\n"}}]}"#,
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[{"type":"content","content":{"type":"text","text":"$ cargo test\nok\n[exit status 0]"}}]}"#,
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress"}"#,
            r#"{"sessionUpdate":"tool_call","toolCallId":"c2","title":"Tool call","kind":"other","status":"pending","content":[{"type":"diff","path":"/p/a.txt","oldText":"one\ntwo\n","newText":"one\n2\n"}]}"#,
            r#"{"sessionUpdate":"plan","entries":[{"content":"Drop it","priority":"low","status":"completed"}]}"#,
            r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi again"},"messageId":"a1"}"#,
        ],
        "the user message acknowledging the prompt is dropped; `paused` shows as in_progress; a cleared title is lost; a cancelled entry shows completed; a replaced message repeats"
    );
    assert_eq!(
        agent.seen.lock().unwrap().as_slice(),
        [
            r#"{"protocolVersion":2,"info":{"name":"zed","version":"1"},"capabilities":{}}"#,
            r#"{"cwd":"/p","mcpServers":[{"type":"stdio","name":"fs","command":"/bin/fs"}]}"#,
        ],
        "fs capabilities and the SSE server have no v2 form"
    );
    // v1 modes set the v2 mode option.
    client
        .set_session_mode(v1::SetSessionModeRequest::new("s1", "plan"))
        .await
        .unwrap_err(); // the v2 agent has no set_config_option handler: -32601
    client.close();
    assert_eq!(
        within("the bridge", route).await.unwrap(),
        Route {
            client: ProtocolVersion::V1,
            agent: ProtocolVersion::V2
        }
    );
}

#[tokio::test]
async fn a_v2_agents_permission_error_and_cancel_reach_a_v1_client() {
    let (client, mut rx, _route) = v1_client_v2_agent(V2Agent::default());
    client
        .initialize(v1::InitializeRequest::new(ProtocolVersion::V1))
        .await
        .unwrap();
    let reply = client
        .prompt(v1::PromptRequest::new("s1", vec!["permission".into()]))
        .await
        .unwrap();
    assert_eq!(reply.stop_reason, v1::StopReason::EndTurn);
    let mut turn = Vec::new();
    while let Ok(line) = rx.try_recv() {
        turn.push(line);
    }
    assert!(turn.contains(&r#"permission {"sessionId":"s1","toolCall":{"toolCallId":"c1","kind":"execute","title":"Run cargo test?","rawInput":{"command":"cargo test","cwd":"/p"}},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"}]}"#.to_string())
        || turn.iter().any(|l| l.starts_with("permission ") && l.contains(r#""title":"Run cargo test?""#) && l.contains(r#""rawInput":{"command":"cargo test","cwd":"/p"}"#)), "{turn:#?}");
    assert!(
        turn.iter().any(|l| l
            .contains(r#"answer {\"outcome\":{\"outcome\":\"selected\",\"optionId\":\"yes\"}}"#)),
        "{turn:#?}"
    );

    let err = client
        .prompt(v1::PromptRequest::new("s1", vec!["fail".into()]))
        .await
        .unwrap_err();
    assert_eq!(
        serde_json::to_string(err.remote().unwrap()).unwrap(),
        r#"{"code":-32099,"message":"model unreachable"}"#
    );

    while rx.try_recv().is_ok() {}
    let slow = tokio::spawn({
        let client = client.clone();
        async move {
            client
                .prompt(v1::PromptRequest::new("s1", vec!["slow".into()]))
                .await
        }
    });
    until(&mut rx, r#""text":"Hi""#).await;
    client
        .cancel(v1::CancelNotification::new("s1"))
        .await
        .unwrap();
    let reply = within("the cancelled prompt", slow).await.unwrap().unwrap();
    assert_eq!(reply.stop_reason, v1::StopReason::Cancelled);
}

// ---------------------------------------------------------------------------
// The same version on both sides: bytes pass unread

#[tokio::test]
async fn the_same_version_on_both_sides_passes_every_byte() {
    let (agent_end, bridge_agent_end) = Transport::memory_pair();
    let (client_end, bridge_client_end) = Transport::memory_pair();
    let route = start_bridge(bridge_client_end, bridge_agent_end);
    let mut client = RawPeer::new(client_end);
    let mut agent = RawPeer::new(agent_end);
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}}"#;
    client.send(init).await;
    assert_eq!(agent.recv().await, init);
    agent
        .send(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"_vendor":[1, 2]}}"#)
        .await;
    assert_eq!(
        client.recv().await,
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"_vendor":[1, 2]}}"#
    );
    // From here on, anything passes as it is, even what no version knows.
    client
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"_x/y","params":{ "a" :1}}"#)
        .await;
    assert_eq!(
        agent.recv().await,
        r#"{"jsonrpc":"2.0","id":1,"method":"_x/y","params":{ "a" :1}}"#
    );
    agent.send("not json at all").await;
    assert_eq!(client.recv().await, "not json at all");
    client.close();
    assert_eq!(agent.next_line().await, None, "the agent's input closed");
    agent.close();
    assert_eq!(
        within("the bridge", route).await.unwrap(),
        Route {
            client: ProtocolVersion::V1,
            agent: ProtocolVersion::V1
        }
    );
}

#[tokio::test]
async fn before_initialize_the_bridge_answers_as_an_agent_and_passes_refusals_on() {
    let (agent_end, bridge_agent_end) = Transport::memory_pair();
    let (client_end, bridge_client_end) = Transport::memory_pair();
    let _route = start_bridge(bridge_client_end, bridge_agent_end);
    let mut client = RawPeer::new(client_end);
    let mut agent = RawPeer::new(agent_end);
    assert_eq!(
        client
            .call(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/"}}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid request","data":"the first request must be `initialize`, not `session/new`"}}"#
    );
    assert_eq!(
        client
            .call(
                r#"[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":2}}]"#
            )
            .await,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"a message must be a JSON object"}}"#
    );
    // The agent refuses the client's initialize for another reason: passed on,
    // and the client may try again.
    let init = r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"c","version":"1"}}}"#;
    client.send(init).await;
    // (With v1's members added, for an agent that turns out to be v1.)
    let v1_members = r#""clientInfo":{"name":"c","version":"1"},"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"session":{"compaction":{},"configOptions":{"boolean":{}},"notices":{}},"auth":{"terminal":false}}"#;
    assert_eq!(
        agent.recv().await,
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"initialize","params":{{"protocolVersion":2,"info":{{"name":"c","version":"1"}},"capabilities":{{}},{v1_members}}}}}"#
        )
    );
    agent.send(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Authentication required"}}"#).await;
    assert_eq!(
        client.recv().await,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Authentication required"}}"#
    );
    client.send(init).await;
    assert!(agent.recv().await.contains(v1_members));
}

// ---------------------------------------------------------------------------
// One v2 implementation serving both versions (the adapter)

#[tokio::test]
async fn one_v2_agent_serves_a_v1_client_through_the_adapter_and_a_v2_client_directly() {
    use acp::negotiate::AgentRouter;
    let agent = V2Agent::default();
    let (agent_end, client_end) = Transport::memory_pair();
    let (routed, io) = AgentRouter::v2_with_v1_adapter({
        let agent = agent.clone();
        move |_| agent
    })
    .connect(agent_end, ConnectionOptions::default());
    tokio::spawn(io);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (client, io) =
        acp::ClientSideConnection::new(client_end, ConnectionOptions::default(), move |_| {
            V1Client(tx)
        });
    tokio::spawn(io);
    let init = client
        .initialize(v1::InitializeRequest::new(ProtocolVersion::V1))
        .await
        .unwrap();
    assert_eq!(init.protocol_version, ProtocolVersion::V1);
    assert_eq!(routed.version(), Some(ProtocolVersion::V1));
    assert!(init.agent_capabilities.load_session);
    let reply = client
        .prompt(v1::PromptRequest::new("s1", vec!["hello".into()]))
        .await
        .unwrap();
    assert_eq!(reply.stop_reason, v1::StopReason::EndTurn);
    assert_eq!(
        next(&mut rx).await,
        r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"},"messageId":"a1"}"#
    );

    let (agent_end, client_end) = Transport::memory_pair();
    let (routed, io) = AgentRouter::v2_with_v1_adapter(|_| V2Agent::default())
        .connect(agent_end, ConnectionOptions::default());
    tokio::spawn(io);
    let (tx, _rx) = mpsc::unbounded_channel();
    let (client, io) =
        acp::v2::ClientSideConnection::new(client_end, ConnectionOptions::default(), move |_| {
            V2Client(tx)
        });
    tokio::spawn(io);
    let init = client
        .initialize(v2::InitializeRequest::new(v2::Implementation::new(
            "c", "1",
        )))
        .await
        .unwrap();
    assert_eq!(init.protocol_version, ProtocolVersion::V2);
    assert_eq!(routed.version(), Some(ProtocolVersion::V2));
}

// ---------------------------------------------------------------------------
// Asking the agent for v2 whatever the client speaks (`prefer_v2`)

/// Starts a bridge that prefers v2; returns its route, and the route its
/// `on_route` heard.
fn start_bridge_preferring_v2(
    client: Transport,
    agent: Transport,
) -> (
    tokio::task::JoinHandle<Route>,
    tokio::sync::oneshot::Receiver<Route>,
) {
    let (heard, hear) = tokio::sync::oneshot::channel();
    let options = BridgeOptions::new(ConnectionOptions::default())
        .prefer_v2()
        .on_route(move |route| {
            let _ = heard.send(route);
        });
    let route = tokio::spawn(async move {
        bridge_with(client, agent, options)
            .await
            .expect("the bridge ends cleanly")
    });
    (route, hear)
}

const V1_ZED_INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}},"clientInfo":{"name":"zed","version":"1"}}}"#;

#[tokio::test]
async fn preferring_v2_a_v1_client_gets_an_agent_of_both_versions_in_v2_translated() {
    use acp::negotiate::AgentRouter;
    let (v1a, v2a) = (V1Agent::default(), V2Agent::default());
    let (agent_end, bridge_agent_end) = Transport::memory_pair();
    let (client_end, bridge_client_end) = Transport::memory_pair();
    let (routed, io) = AgentRouter::new()
        .v1({
            let v1a = v1a.clone();
            move |_| v1a
        })
        .v2({
            let v2a = v2a.clone();
            move |_| v2a
        })
        .connect(agent_end, ConnectionOptions::default());
    tokio::spawn(io);
    let (route, heard) = start_bridge_preferring_v2(bridge_client_end, bridge_agent_end);
    let mut client = RawPeer::new(client_end);
    // The client gets v1's answer, translated from the v2 agent's.
    assert_eq!(
        client.call(V1_ZED_INIT).await,
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"audio":false,"embeddedContext":false},"mcpCapabilities":{"http":true,"sse":false},"sessionCapabilities":{"list":{},"resume":{},"close":{}},"auth":{"logout":{}}},"authMethods":[{"id":"login","name":"Log in"}],"agentInfo":{"name":"v2-agent","version":"2.0"}}}"#
    );
    assert_eq!(
        within("the route", heard).await.unwrap(),
        Route {
            client: ProtocolVersion::V1,
            agent: ProtocolVersion::V2
        }
    );
    // The agent was asked in v2 (the client's v1 members kept for a v1
    // agent, which a v2 one ignores) and served it in v2.
    assert_eq!(routed.version(), Some(ProtocolVersion::V2));
    assert_eq!(
        v2a.seen.lock().unwrap().as_slice(),
        [
            r#"{"protocolVersion":2,"info":{"name":"zed","version":"1"},"capabilities":{},"clientInfo":{"name":"zed","version":"1"},"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":false},"terminal":false,"auth":{"terminal":false}}}"#
        ]
    );
    assert!(v1a.seen.lock().unwrap().is_empty());
    // From there on the bridge translates: v1's `session/new`, answered in v1.
    assert_eq!(
        client
            .call(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}"#)
            .await,
        r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1","modes":{"currentModeId":"code","availableModes":[{"id":"code","name":"Code"},{"id":"plan","name":"Plan"}]},"configOptions":[{"id":"mode","name":"Mode","category":"mode","type":"select","currentValue":"code","options":[{"value":"code","name":"Code"},{"value":"plan","name":"Plan"}]}]}}"#
    );
    client.close();
    assert_eq!(
        within("the bridge", route).await.unwrap(),
        Route {
            client: ProtocolVersion::V1,
            agent: ProtocolVersion::V2
        }
    );
}

#[tokio::test]
async fn preferring_v2_a_v1_agent_answers_1_and_every_byte_passes() {
    let v1a = V1Agent::default();
    let (agent_end, bridge_agent_end) = Transport::memory_pair();
    let (client_end, bridge_client_end) = Transport::memory_pair();
    let (_a, io) = acp::AgentSideConnection::new(agent_end, ConnectionOptions::default(), {
        let v1a = v1a.clone();
        move |_| v1a
    });
    tokio::spawn(io);
    let (route, heard) = start_bridge_preferring_v2(bridge_client_end, bridge_agent_end);
    let mut client = RawPeer::new(client_end);
    // The v1 agent's own answer, as it sent it.
    assert_eq!(
        client.call(V1_ZED_INIT).await,
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"audio":false,"embeddedContext":false},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{},"auth":{}},"authMethods":[],"agentInfo":{"name":"v1-agent","version":"1.0"}}}"#
    );
    assert_eq!(
        within("the route", heard).await.unwrap(),
        Route {
            client: ProtocolVersion::V1,
            agent: ProtocolVersion::V1
        }
    );
    // It read the client's v1 members of the v2 `initialize` (its file
    // system among them), asking for 2: answered 1.
    assert_eq!(
        v1a.seen.lock().unwrap().as_slice(),
        [
            r#"{"protocolVersion":2,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":false},"terminal":false,"auth":{"terminal":false}},"clientInfo":{"name":"zed","version":"1"},"info":{"name":"zed","version":"1"},"capabilities":{}}"#
        ]
    );
    client.close();
    assert_eq!(
        within("the bridge", route).await.unwrap(),
        Route {
            client: ProtocolVersion::V1,
            agent: ProtocolVersion::V1
        }
    );
}

#[tokio::test]
async fn preferring_v2_an_agent_refusing_2_is_asked_with_the_clients_own_initialize() {
    let (agent_end, bridge_agent_end) = Transport::memory_pair();
    let (client_end, bridge_client_end) = Transport::memory_pair();
    let (route, heard) = start_bridge_preferring_v2(bridge_client_end, bridge_agent_end);
    let mut client = RawPeer::new(client_end);
    let mut agent = RawPeer::new(agent_end);
    client.send(V1_ZED_INIT).await;
    assert_eq!(
        agent.recv().await,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"zed","version":"1"},"capabilities":{},"clientInfo":{"name":"zed","version":"1"},"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":false},"terminal":false,"auth":{"terminal":false}}}}"#
    );
    agent.send(r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":2,"supported":[1]}}}"#).await;
    assert_eq!(agent.recv().await, V1_ZED_INIT);
    agent
        .send(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#)
        .await;
    assert_eq!(
        client.recv().await,
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#
    );
    assert_eq!(
        within("the route", heard).await.unwrap(),
        Route {
            client: ProtocolVersion::V1,
            agent: ProtocolVersion::V1
        }
    );
    // Another error is the client's: passed on, and it may try again.
    drop((client, agent, route));
    let (agent_end, bridge_agent_end) = Transport::memory_pair();
    let (client_end, bridge_client_end) = Transport::memory_pair();
    let (_route, _heard) = start_bridge_preferring_v2(bridge_client_end, bridge_agent_end);
    let mut client = RawPeer::new(client_end);
    let mut agent = RawPeer::new(agent_end);
    client.send(V1_ZED_INIT).await;
    assert!(agent.recv().await.contains(r#""protocolVersion":2"#));
    let refusal =
        r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32000,"message":"Authentication required"}}"#;
    agent.send(refusal).await;
    assert_eq!(client.recv().await, refusal);
    client.send(V1_ZED_INIT).await;
    assert!(agent.recv().await.contains(r#""protocolVersion":2"#));
}
