//! Every ACP method in both directions over an in-memory pair, with real
//! handlers on both sides: typed params and results round-trip (including
//! `_meta`), the wire method names are right, extension methods keep their
//! params byte for byte, and the traits' default bodies answer -32601.

use crate::support;

use acp::schema::*;
use acp::{Agent, AgentSideConnection, Client, ClientSideConnection, ConnectionOptions, Direction};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use support::*;
use tokio::sync::mpsc;

/// The methods the `unstable-*` features add to the tables (they are checked
/// in `tests/unstable.rs`).
const UNSTABLE: &[&str] = &[
    "session/set_model",
    "session/fork",
    "session/set_title",
    "providers/list",
    "providers/set",
    "providers/disable",
    "mcp/message",
];

/// `_meta` carried by every fixture, nested to show it is kept untouched.
fn meta() -> Value {
    json!({"example.test/trace": {"id": "t-1", "depth": [1, {"x": null}], "on": true}})
}

/// `(method, params, result)` of every method the agent handles.
fn agent_fixtures() -> Vec<(&'static str, Value, Value)> {
    let m = meta();
    vec![
        (
            "initialize",
            json!({"protocolVersion": 1,
                   "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": false}, "terminal": true},
                   "clientInfo": {"name": "test-editor", "version": "0.0.1"},
                   "_meta": m}),
            json!({"protocolVersion": 1,
                   "agentCapabilities": {"loadSession": true},
                   "authMethods": [{"id": "token", "name": "Token"}],
                   "agentInfo": {"name": "test-agent", "version": "0.0.2"},
                   "_meta": m}),
        ),
        (
            "authenticate",
            json!({"methodId": "token", "_meta": m}),
            json!({"_meta": m}),
        ),
        ("logout", json!({"_meta": m}), json!({"_meta": m})),
        (
            "session/new",
            json!({"cwd": "/work/project", "mcpServers": [], "_meta": m}),
            json!({"sessionId": "s-new", "_meta": m}),
        ),
        (
            "session/load",
            json!({"sessionId": "s-old", "cwd": "/work/project", "mcpServers": [], "_meta": m}),
            json!({"_meta": m}),
        ),
        (
            "session/list",
            json!({"cwd": "/work/project", "cursor": "c-2", "_meta": m}),
            json!({"sessions": [{"sessionId": "s-1", "cwd": "/work/project", "title": "First"}],
                   "nextCursor": "c-3", "_meta": m}),
        ),
        (
            "session/resume",
            json!({"sessionId": "s-old", "cwd": "/work/project", "_meta": m}),
            json!({"_meta": m}),
        ),
        (
            "session/close",
            json!({"sessionId": "s-old", "_meta": m}),
            json!({"_meta": m}),
        ),
        (
            "session/delete",
            json!({"sessionId": "s-old", "_meta": m}),
            json!({"_meta": m}),
        ),
        (
            "session/set_mode",
            json!({"sessionId": "s-1", "modeId": "careful", "_meta": m}),
            json!({"_meta": m}),
        ),
        (
            "session/set_config_option",
            json!({"sessionId": "s-1", "configId": "model", "value": "large", "_meta": m}),
            json!({"configOptions": [], "_meta": m}),
        ),
        (
            "session/prompt",
            json!({"sessionId": "s-1", "prompt": [{"type": "text", "text": "hello"}], "_meta": m}),
            json!({"stopReason": "end_turn", "_meta": m}),
        ),
    ]
}

/// `(method, params, result)` of every method the client handles.
fn client_fixtures() -> Vec<(&'static str, Value, Value)> {
    let m = meta();
    vec![
        (
            "session/request_permission",
            json!({"sessionId": "s-1",
                   "toolCall": {"toolCallId": "call-1", "title": "Edit a file"},
                   "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                               {"optionId": "no", "name": "Reject", "kind": "reject_once"}],
                   "_meta": m}),
            json!({"outcome": {"outcome": "selected", "optionId": "yes"}, "_meta": m}),
        ),
        (
            "fs/read_text_file",
            json!({"sessionId": "s-1", "path": "/work/project/a.txt", "line": 3, "limit": 2, "_meta": m}),
            json!({"content": "line three\nline four\n", "_meta": m}),
        ),
        (
            "fs/write_text_file",
            json!({"sessionId": "s-1", "path": "/work/project/b.txt", "content": "new\n", "_meta": m}),
            json!({"_meta": m}),
        ),
        (
            "terminal/create",
            json!({"sessionId": "s-1", "command": "make", "args": ["test"], "_meta": m}),
            json!({"terminalId": "term-1", "_meta": m}),
        ),
        (
            "terminal/output",
            json!({"sessionId": "s-1", "terminalId": "term-1", "_meta": m}),
            json!({"output": "ok\n", "truncated": false, "exitStatus": {"exitCode": 0}, "_meta": m}),
        ),
        (
            "terminal/wait_for_exit",
            json!({"sessionId": "s-1", "terminalId": "term-1", "_meta": m}),
            json!({"exitCode": 2, "_meta": m}),
        ),
        (
            "terminal/kill",
            json!({"sessionId": "s-1", "terminalId": "term-1", "_meta": m}),
            json!({"_meta": m}),
        ),
        (
            "terminal/release",
            json!({"sessionId": "s-1", "terminalId": "term-1", "_meta": m}),
            json!({"_meta": m}),
        ),
        (
            "elicitation/create",
            json!({"message": "Which branch?", "mode": "url",
                   "url": "https://example.test/pick", "elicitationId": "el-1",
                   "sessionId": "s-1", "_meta": m}),
            json!({"action": "decline", "_meta": m}),
        ),
    ]
}

fn fixture(table: &[(&'static str, Value, Value)], method: &str) -> (Value, Value) {
    let (_, params, result) = table
        .iter()
        .find(|(m, _, _)| *m == method)
        .unwrap_or_else(|| panic!("no fixture for {method}"));
    (params.clone(), result.clone())
}

/// What a recording handler saw: the method and its params as JSON.
type Seen = mpsc::UnboundedSender<(String, Value)>;

/// Records every call and answers with the fixture's result for its method.
struct Recorder {
    seen: Seen,
    fixtures: Vec<(&'static str, Value, Value)>,
}

impl Recorder {
    fn answer<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<R, Error> {
        let _ = self.seen.send((method.to_string(), json_of(params)));
        Ok(typed(fixture(&self.fixtures, method).1))
    }
    fn note<P: Serialize>(&self, method: &str, params: &P) -> Result<(), Error> {
        let _ = self.seen.send((method.to_string(), json_of(params)));
        Ok(())
    }
    fn note_ext(&self, method: &str, params: &RawValue) {
        let _ = self
            .seen
            .send((method.to_string(), Value::String(params.get().to_string())));
    }
}

impl Agent for Recorder {
    async fn initialize(
        &self,
        a: InitializeRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<InitializeResponse, Error> {
        self.answer("initialize", &a)
    }
    async fn authenticate(
        &self,
        a: AuthenticateRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<AuthenticateResponse, Error> {
        self.answer("authenticate", &a)
    }
    async fn logout(
        &self,
        a: LogoutRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<LogoutResponse, Error> {
        self.answer("logout", &a)
    }
    async fn new_session(
        &self,
        a: NewSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<NewSessionResponse, Error> {
        self.answer("session/new", &a)
    }
    async fn load_session(
        &self,
        a: LoadSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<LoadSessionResponse, Error> {
        self.answer("session/load", &a)
    }
    async fn list_sessions(
        &self,
        a: ListSessionsRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<ListSessionsResponse, Error> {
        self.answer("session/list", &a)
    }
    async fn resume_session(
        &self,
        a: ResumeSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<ResumeSessionResponse, Error> {
        self.answer("session/resume", &a)
    }
    async fn close_session(
        &self,
        a: CloseSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<CloseSessionResponse, Error> {
        self.answer("session/close", &a)
    }
    async fn delete_session(
        &self,
        a: DeleteSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<DeleteSessionResponse, Error> {
        self.answer("session/delete", &a)
    }
    async fn set_session_mode(
        &self,
        a: SetSessionModeRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<SetSessionModeResponse, Error> {
        self.answer("session/set_mode", &a)
    }
    async fn set_session_config_option(
        &self,
        a: SetSessionConfigOptionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        self.answer("session/set_config_option", &a)
    }
    async fn prompt(
        &self,
        a: PromptRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        self.answer("session/prompt", &a)
    }
    async fn cancel(
        &self,
        a: CancelNotification,
        _cx: NotificationContext<AgentSide>,
    ) -> Result<(), Error> {
        self.note("session/cancel", &a)
    }
    async fn ext_method(
        &self,
        a: ExtRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<ExtResponse, Error> {
        self.note_ext(&a.method, &a.params);
        Ok(ExtResponse(raw(r#"{ "from" : "agent", "echo" : true }"#)))
    }
    async fn ext_notification(
        &self,
        a: ExtNotification,
        _cx: NotificationContext<AgentSide>,
    ) -> Result<(), Error> {
        self.note_ext(&a.method, &a.params);
        Ok(())
    }
}

impl Client for Recorder {
    async fn request_permission(
        &self,
        a: RequestPermissionRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<RequestPermissionResponse, Error> {
        self.answer("session/request_permission", &a)
    }
    async fn read_text_file(
        &self,
        a: ReadTextFileRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<ReadTextFileResponse, Error> {
        self.answer("fs/read_text_file", &a)
    }
    async fn write_text_file(
        &self,
        a: WriteTextFileRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<WriteTextFileResponse, Error> {
        self.answer("fs/write_text_file", &a)
    }
    async fn create_terminal(
        &self,
        a: CreateTerminalRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<CreateTerminalResponse, Error> {
        self.answer("terminal/create", &a)
    }
    async fn terminal_output(
        &self,
        a: TerminalOutputRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<TerminalOutputResponse, Error> {
        self.answer("terminal/output", &a)
    }
    async fn wait_for_terminal_exit(
        &self,
        a: WaitForTerminalExitRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<WaitForTerminalExitResponse, Error> {
        self.answer("terminal/wait_for_exit", &a)
    }
    async fn kill_terminal(
        &self,
        a: KillTerminalRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<KillTerminalResponse, Error> {
        self.answer("terminal/kill", &a)
    }
    async fn release_terminal(
        &self,
        a: ReleaseTerminalRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<ReleaseTerminalResponse, Error> {
        self.answer("terminal/release", &a)
    }
    async fn create_elicitation(
        &self,
        a: CreateElicitationRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<CreateElicitationResponse, Error> {
        self.answer("elicitation/create", &a)
    }
    async fn session_notification(
        &self,
        a: SessionNotification,
        _cx: NotificationContext<ClientSide>,
    ) -> Result<(), Error> {
        self.note("session/update", &a)
    }
    async fn complete_elicitation(
        &self,
        a: CompleteElicitationNotification,
        _cx: NotificationContext<ClientSide>,
    ) -> Result<(), Error> {
        self.note("elicitation/complete", &a)
    }
    async fn ext_method(
        &self,
        a: ExtRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<ExtResponse, Error> {
        self.note_ext(&a.method, &a.params);
        Ok(ExtResponse(raw(r#"[ "from client" ,  1 ]"#)))
    }
    async fn ext_notification(
        &self,
        a: ExtNotification,
        _cx: NotificationContext<ClientSide>,
    ) -> Result<(), Error> {
        self.note_ext(&a.method, &a.params);
        Ok(())
    }
}

fn raw(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_string()).expect("valid JSON")
}

/// Collects the lines a connection writes.
#[derive(Clone, Default)]
struct Outgoing(Arc<Mutex<Vec<String>>>);

impl Outgoing {
    fn options(&self) -> ConnectionOptions {
        let lines = self.0.clone();
        ConnectionOptions::default().tap(move |event| {
            if event.direction == Direction::Outgoing {
                lines.lock().unwrap().push(event.text().into_owned());
            }
        })
    }
    /// The last request or notification written, as `(method, params)`.
    fn last_call(&self) -> (String, Value) {
        let lines = self.0.lock().unwrap();
        let line = lines
            .iter()
            .rev()
            .find(|l| l.contains("\"method\""))
            .expect("a call was written");
        let v: Value = serde_json::from_str(line).unwrap();
        (
            v["method"].as_str().unwrap().to_string(),
            v.get("params").cloned().unwrap_or(Value::Null),
        )
    }
}

/// Where a test reads what a recording handler saw.
type SeenRx = mpsc::UnboundedReceiver<(String, Value)>;

fn recording_pair(client_out: &Outgoing, agent_out: &Outgoing) -> (Pair, SeenRx, SeenRx) {
    let (agent_tx, agent_rx) = mpsc::unbounded_channel();
    let (client_tx, client_rx) = mpsc::unbounded_channel();
    let pair = connect_with(
        agent_out.options(),
        client_out.options(),
        |_| Recorder {
            seen: agent_tx,
            fixtures: agent_fixtures(),
        },
        |_| Recorder {
            seen: client_tx,
            fixtures: client_fixtures(),
        },
    );
    (pair, agent_rx, client_rx)
}

#[tokio::test]
async fn every_agent_method_round_trips_from_the_client() {
    let (client_out, agent_out) = (Outgoing::default(), Outgoing::default());
    let (pair, mut agent_seen, _) = recording_pair(&client_out, &agent_out);
    let table = agent_fixtures();
    let client: &ClientSideConnection = &pair.client;

    macro_rules! check {
        ($call:ident, $method:literal) => {{
            let (params, result) = fixture(&table, $method);
            let sent = typed(params.clone());
            // The canonical encoding of the params (defaults filled in).
            let params = json_of(&sent);
            let got = within($method, client.$call(sent))
                .await
                .unwrap_or_else(|e| panic!("{}: {e}", $method));
            assert_eq!(got, typed(result.clone()), "result of {}", $method);
            assert_eq!(
                json_of(&got)["_meta"],
                meta(),
                "result _meta of {}",
                $method
            );
            assert_eq!(params["_meta"], meta(), "params _meta of {}", $method);
            let (seen_method, seen_params) = within("the agent's handler", agent_seen.recv())
                .await
                .unwrap();
            assert_eq!(seen_method, $method, "handler called for {}", $method);
            assert_eq!(
                seen_params, params,
                "params of {} as the handler saw them",
                $method
            );
            assert_eq!(
                client_out.last_call(),
                ($method.to_string(), params),
                "wire line of {}",
                $method
            );
        }};
    }

    check!(initialize, "initialize");
    check!(authenticate, "authenticate");
    check!(logout, "logout");
    check!(new_session, "session/new");
    check!(load_session, "session/load");
    check!(list_sessions, "session/list");
    check!(resume_session, "session/resume");
    check!(close_session, "session/close");
    check!(delete_session, "session/delete");
    check!(set_session_mode, "session/set_mode");
    check!(set_session_config_option, "session/set_config_option");
    check!(prompt, "session/prompt");
    assert_eq!(
        table.len(),
        12,
        "a method was added to the fixtures without a check"
    );
    assert_eq!(
        table.len(),
        AGENT_METHODS
            .iter()
            .filter(|m| m.kind == MethodKind::Request && !UNSTABLE.contains(&m.method))
            .count()
    );
}

#[tokio::test]
async fn every_client_method_round_trips_from_the_agent() {
    let (client_out, agent_out) = (Outgoing::default(), Outgoing::default());
    let (pair, _, mut client_seen) = recording_pair(&client_out, &agent_out);
    let table = client_fixtures();
    let agent: &AgentSideConnection = &pair.agent;

    macro_rules! check {
        ($call:ident, $method:literal) => {{
            let (params, result) = fixture(&table, $method);
            let sent = typed(params.clone());
            // The canonical encoding of the params (defaults filled in).
            let params = json_of(&sent);
            let got = within($method, agent.$call(sent))
                .await
                .unwrap_or_else(|e| panic!("{}: {e}", $method));
            assert_eq!(got, typed(result.clone()), "result of {}", $method);
            assert_eq!(
                json_of(&got)["_meta"],
                meta(),
                "result _meta of {}",
                $method
            );
            assert_eq!(params["_meta"], meta(), "params _meta of {}", $method);
            let (seen_method, seen_params) = within("the client's handler", client_seen.recv())
                .await
                .unwrap();
            assert_eq!(seen_method, $method, "handler called for {}", $method);
            assert_eq!(
                seen_params, params,
                "params of {} as the handler saw them",
                $method
            );
            assert_eq!(
                agent_out.last_call(),
                ($method.to_string(), params),
                "wire line of {}",
                $method
            );
        }};
    }

    check!(request_permission, "session/request_permission");
    check!(read_text_file, "fs/read_text_file");
    check!(write_text_file, "fs/write_text_file");
    check!(create_terminal, "terminal/create");
    check!(terminal_output, "terminal/output");
    check!(wait_for_terminal_exit, "terminal/wait_for_exit");
    check!(kill_terminal, "terminal/kill");
    check!(release_terminal, "terminal/release");
    check!(create_elicitation, "elicitation/create");
    assert_eq!(
        table.len(),
        CLIENT_METHODS
            .iter()
            .filter(|m| m.kind == MethodKind::Request && !UNSTABLE.contains(&m.method))
            .count()
    );
}

#[tokio::test]
async fn notifications_reach_their_handlers_both_ways() {
    let (client_out, agent_out) = (Outgoing::default(), Outgoing::default());
    let (pair, mut agent_seen, mut client_seen) = recording_pair(&client_out, &agent_out);
    let m = meta();

    // Client to agent: session/cancel.
    let cancel = json!({"sessionId": "s-1", "_meta": m});
    pair.client.cancel(typed(cancel.clone())).await.unwrap();
    let seen = within("session/cancel", agent_seen.recv()).await.unwrap();
    assert_eq!(seen, ("session/cancel".to_string(), cancel.clone()));
    assert_eq!(
        client_out.last_call(),
        ("session/cancel".to_string(), cancel)
    );

    // Agent to client: session/update and elicitation/complete.
    let update = json!({"sessionId": "s-1",
                        "update": {"sessionUpdate": "agent_message_chunk",
                                   "content": {"type": "text", "text": "hi", "_meta": m}},
                        "_meta": m});
    pair.agent
        .session_notification(typed(update.clone()))
        .await
        .unwrap();
    let seen = within("session/update", client_seen.recv()).await.unwrap();
    assert_eq!(seen, ("session/update".to_string(), update.clone()));
    assert_eq!(
        agent_out.last_call(),
        ("session/update".to_string(), update)
    );

    let complete = json!({"elicitationId": "el-1", "_meta": m});
    pair.agent
        .complete_elicitation(typed(complete.clone()))
        .await
        .unwrap();
    let seen = within("elicitation/complete", client_seen.recv())
        .await
        .unwrap();
    assert_eq!(seen, ("elicitation/complete".to_string(), complete.clone()));
    assert_eq!(
        agent_out.last_call(),
        ("elicitation/complete".to_string(), complete)
    );
}

/// Params with unusual spacing and `_meta`: extension methods must deliver them
/// byte for byte, and results likewise.
const ODD_PARAMS: &str = r#"{ "b" : 2 ,"a":[ 1,{"_meta":{"k":"v"}} ] , "_meta" : {"x" : 1.50} }"#;

#[tokio::test]
async fn extension_requests_keep_params_and_results_both_ways() {
    let (client_out, agent_out) = (Outgoing::default(), Outgoing::default());
    let (pair, mut agent_seen, mut client_seen) = recording_pair(&client_out, &agent_out);

    let request = ExtRequest::new("_example.test/ping", &raw(ODD_PARAMS)).unwrap();
    let result = within("ext request", pair.client.ext_method(request))
        .await
        .unwrap();
    assert_eq!(result.0.get(), r#"{ "from" : "agent", "echo" : true }"#);
    let seen = within("agent ext handler", agent_seen.recv())
        .await
        .unwrap();
    assert_eq!(
        seen,
        ("_example.test/ping".to_string(), Value::from(ODD_PARAMS))
    );

    let request = ExtRequest::new("_example.test/pong", &json!({"n": 1, "_meta": meta()})).unwrap();
    let result = within("ext request", pair.agent.ext_method(request))
        .await
        .unwrap();
    assert_eq!(result.0.get(), r#"[ "from client" ,  1 ]"#);
    let seen = within("client ext handler", client_seen.recv())
        .await
        .unwrap();
    assert_eq!(seen.0, "_example.test/pong");
    let params: Value = serde_json::from_str(seen.1.as_str().unwrap()).unwrap();
    assert_eq!(params, json!({"n": 1, "_meta": meta()}));
}

#[tokio::test]
async fn extension_notifications_keep_params_both_ways() {
    let (client_out, agent_out) = (Outgoing::default(), Outgoing::default());
    let (pair, mut agent_seen, mut client_seen) = recording_pair(&client_out, &agent_out);

    let note = ExtNotification::new("_example.test/tick", &raw(ODD_PARAMS)).unwrap();
    pair.client.ext_notification(note).await.unwrap();
    let seen = within("agent ext notification", agent_seen.recv())
        .await
        .unwrap();
    assert_eq!(
        seen,
        ("_example.test/tick".to_string(), Value::from(ODD_PARAMS))
    );

    let note = ExtNotification::new("_example.test/tock", &raw(ODD_PARAMS)).unwrap();
    pair.agent.ext_notification(note).await.unwrap();
    let seen = within("client ext notification", client_seen.recv())
        .await
        .unwrap();
    assert_eq!(
        seen,
        ("_example.test/tock".to_string(), Value::from(ODD_PARAMS))
    );
}

#[tokio::test]
async fn meta_reaches_typed_handlers_unchanged() {
    struct MetaEcho;
    impl Agent for MetaEcho {
        async fn prompt(
            &self,
            req: PromptRequest,
            _cx: RequestContext<AgentSide>,
        ) -> Result<PromptResponse, Error> {
            let mut response = PromptResponse::new(StopReason::EndTurn);
            if let Some(meta) = req.meta {
                response = response.meta(meta);
            }
            Ok(response)
        }
    }
    let pair = connect(|_| MetaEcho, |_| Bare);
    let Value::Object(m) = meta() else {
        unreachable!()
    };
    let reply = within(
        "prompt",
        pair.client.prompt(prompt("s", "hi").meta(m.clone())),
    )
    .await
    .unwrap();
    assert_eq!(reply.meta, Some(Meta::from(m)));
    let reply = within("prompt", pair.client.prompt(prompt("s", "hi")))
        .await
        .unwrap();
    assert_eq!(reply.meta, None);
}

struct BareAgent;
impl Agent for BareAgent {}

fn assert_not_found<T: std::fmt::Debug>(method: &str, result: Result<T, acp::ConnectionError>) {
    match result {
        Err(acp::ConnectionError::Remote(err)) => {
            assert_eq!(err.code, ErrorCode::METHOD_NOT_FOUND, "{method}: {err}");
            assert_eq!(err.message, "Method not found", "{method}");
        }
        other => panic!("{method}: expected -32601, got {other:?}"),
    }
}

#[tokio::test]
async fn default_agent_methods_answer_method_not_found() {
    let pair = connect(|_| BareAgent, |_| Bare);
    let table = agent_fixtures();
    let c = &pair.client;
    macro_rules! check {
        ($call:ident, $method:literal) => {{
            let (params, _) = fixture(&table, $method);
            assert_not_found($method, within($method, c.$call(typed(params))).await);
        }};
    }
    check!(initialize, "initialize");
    check!(authenticate, "authenticate");
    check!(logout, "logout");
    check!(new_session, "session/new");
    check!(load_session, "session/load");
    check!(list_sessions, "session/list");
    check!(resume_session, "session/resume");
    check!(close_session, "session/close");
    check!(delete_session, "session/delete");
    check!(set_session_mode, "session/set_mode");
    check!(set_session_config_option, "session/set_config_option");
    check!(prompt, "session/prompt");
    let ext = ExtRequest::new("_example.test/x", &json!({})).unwrap();
    assert_not_found("ext", within("ext", c.ext_method(ext)).await);

    // Default notification bodies accept and ignore; the connection goes on.
    c.cancel(CancelNotification::new(SessionId::new("s")))
        .await
        .unwrap();
    let note = ExtNotification::new("_example.test/n", &json!({})).unwrap();
    c.ext_notification(note).await.unwrap();
    assert_not_found(
        "after notifications",
        within("logout", c.logout(LogoutRequest::new())).await,
    );
}

#[tokio::test]
async fn default_client_methods_answer_method_not_found() {
    let pair = connect(|_| BareAgent, |_| Bare);
    let table = client_fixtures();
    let a = &pair.agent;
    macro_rules! check {
        ($call:ident, $method:literal) => {{
            let (params, _) = fixture(&table, $method);
            assert_not_found($method, within($method, a.$call(typed(params))).await);
        }};
    }
    check!(request_permission, "session/request_permission");
    check!(read_text_file, "fs/read_text_file");
    check!(write_text_file, "fs/write_text_file");
    check!(create_terminal, "terminal/create");
    check!(terminal_output, "terminal/output");
    check!(wait_for_terminal_exit, "terminal/wait_for_exit");
    check!(kill_terminal, "terminal/kill");
    check!(release_terminal, "terminal/release");
    check!(create_elicitation, "elicitation/create");
    let ext = ExtRequest::new("_example.test/x", &json!({})).unwrap();
    assert_not_found("ext", within("ext", a.ext_method(ext)).await);

    a.session_notification(message(&SessionId::new("s"), "hi"))
        .await
        .unwrap();
    a.complete_elicitation(CompleteElicitationNotification::new("el-1"))
        .await
        .unwrap();
    let note = ExtNotification::new("_example.test/n", &json!({})).unwrap();
    a.ext_notification(note).await.unwrap();
    let (params, _) = fixture(&table, "fs/read_text_file");
    assert_not_found(
        "after notifications",
        within("read", a.read_text_file(typed(params))).await,
    );
}

#[tokio::test]
async fn the_generic_request_calls_typed_methods() {
    let (client_out, agent_out) = (Outgoing::default(), Outgoing::default());
    let (pair, mut agent_seen, _) = recording_pair(&client_out, &agent_out);
    let (params, result) = fixture(&agent_fixtures(), "session/new");
    let got: NewSessionResponse = within(
        "request",
        pair.client
            .request::<NewSessionRequest>(typed(params.clone())),
    )
    .await
    .unwrap();
    assert_eq!(json_of(&got), result);
    assert_eq!(
        within("handler", agent_seen.recv()).await.unwrap(),
        ("session/new".to_string(), params)
    );
}

#[tokio::test]
async fn a_peer_error_passes_through_a_handler_with_its_code() {
    // The agent calls the client with `?`; the client's default answers -32601,
    // and the agent's prompt answers the client with that same error.
    struct Relay(AgentSideConnection);
    impl Agent for Relay {
        async fn prompt(
            &self,
            req: PromptRequest,
            _cx: RequestContext<AgentSide>,
        ) -> Result<PromptResponse, Error> {
            self.0
                .read_text_file(ReadTextFileRequest::new(req.session_id, "/x"))
                .await?;
            Ok(PromptResponse::new(StopReason::EndTurn))
        }
    }
    let pair = connect(Relay, |_| Bare);
    assert_not_found(
        "prompt relaying the client's error",
        within("prompt", pair.client.prompt(prompt("s", "hi"))).await,
    );
}
