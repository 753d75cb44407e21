//! Our runtime's network client transports (`acp::remote::connect`, over
//! WebSocket and Streamable HTTP) against the official TypeScript SDK's
//! server: `interop/js/remote-server.mjs` serves the SDK agent of
//! `interop/js/agent.mjs` with the SDK's `AcpServer` on /acp.
//!
//! A full session each: a prompt streamed back word by word, a permission
//! request and an `fs/read_text_file` flowing back to our client, and a slow
//! turn cancelled with `session/cancel`; with and without asking to resume
//! broken connections (the SDK's server does not resume them).

use acp::remote::{ClientOptions, Reconnect, connect};
use acp::schema::*;
use acp::{Client, ClientSideConnection, ConnectionOptions, NotificationContext, RequestContext};
use acp_interop::Peer::Js;
use acp_interop::Sandbox;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long any step may take.
const PATIENCE: Duration = Duration::from_secs(30);

/// The SDK's server, stopped when dropped (it exits when its input closes).
struct SdkServer {
    child: Child,
    port: u16,
}

impl SdkServer {
    fn start(sb: &Sandbox) -> SdkServer {
        let programs = Js.programs();
        let mut command = sb.command(&programs.interpreter);
        command
            .arg(programs.dir.join("remote-server.mjs"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command.spawn().expect("start remote-server.mjs");
        let stdout = child.stdout.take().expect("its stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the port");
        let port = line
            .trim()
            .strip_prefix("listening ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("remote-server.mjs said {line:?}"));
        SdkServer { child, port }
    }
}

impl Drop for SdkServer {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Keeps the message text, allows permissions, serves files from disk.
#[derive(Clone, Default)]
struct Desk {
    text: Arc<Mutex<String>>,
    permissions: Arc<AtomicUsize>,
}

impl Client for Desk {
    async fn request_permission(
        &self,
        req: RequestPermissionRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<RequestPermissionResponse, Error> {
        self.permissions.fetch_add(1, Ordering::SeqCst);
        let allow = req
            .options
            .iter()
            .find(|o| o.kind == PermissionOptionKind::AllowOnce)
            .expect("an allow option");
        Ok(RequestPermissionResponse::selected(allow.option_id.clone()))
    }
    async fn read_text_file(
        &self,
        req: ReadTextFileRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<ReadTextFileResponse, Error> {
        let content = std::fs::read_to_string(&req.path)
            .map_err(|e| Error::internal_error().data(e.to_string()))?;
        Ok(ReadTextFileResponse::new(content))
    }
    async fn session_notification(
        &self,
        n: SessionNotification,
        _cx: NotificationContext<ClientSide>,
    ) -> Result<(), Error> {
        if let SessionUpdate::AgentMessageChunk(chunk) = &n.update
            && let Some(text) = chunk.content.as_text()
        {
            self.text.lock().unwrap().push_str(text);
        }
        Ok(())
    }
}

async fn step<F: std::future::Future>(what: &str, fut: F) -> F::Output {
    tokio::time::timeout(PATIENCE, fut)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

async fn full_session_against_the_sdk_server(scheme: &str, options: ClientOptions) {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let file = sb.write("notes.txt", "remote notes\n");
    let server = SdkServer::start(&sb);
    let url = format!("{scheme}://127.0.0.1:{}/acp", server.port);
    let transport = step("connect", connect(&url, options))
        .await
        .unwrap_or_else(|e| panic!("connect to {url}: {e}"));
    let desk = Desk::default();
    let (conn, io) = ClientSideConnection::new(transport, ConnectionOptions::default(), {
        let desk = desk.clone();
        move |_| desk
    });
    let io = tokio::spawn(io);

    let caps = ClientCapabilities::new().fs(FileSystemCapabilities::new().read_text_file(true));
    let init = step(
        "initialize",
        conn.initialize(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps)),
    )
    .await
    .unwrap();
    assert_eq!(init.protocol_version, ProtocolVersion::V1);
    assert_eq!(init.agent_info.unwrap().name, "interop-js-agent");
    let session = step(
        "session/new",
        conn.new_session(NewSessionRequest::new(sb.work().display().to_string())),
    )
    .await
    .unwrap()
    .session_id;
    assert!(session.to_string().starts_with("js-"), "{session}");

    let text = format!("hello permission read {}", file.display());
    let reply = step(
        "prompt",
        conn.prompt(PromptRequest::new(
            session.clone(),
            vec![text.as_str().into()],
        )),
    )
    .await
    .unwrap();
    assert_eq!(reply.stop_reason, StopReason::EndTurn);
    assert_eq!(
        std::mem::take(&mut *desk.text.lock().unwrap()),
        format!("{text}\npermission: selected allow\nfile: remote notes\n")
    );
    assert_eq!(desk.permissions.load(Ordering::SeqCst), 1);

    let slow = conn.prompt(PromptRequest::new(session.clone(), vec!["slow".into()]));
    let cancel = async {
        while !desk.text.lock().unwrap().contains("tick 2\n") {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        conn.cancel(CancelNotification::new(session.clone()))
            .await
            .unwrap();
    };
    let (reply, ()) = step("the cancelled turn", async { tokio::join!(slow, cancel) }).await;
    assert_eq!(reply.unwrap().stop_reason, StopReason::Cancelled);
    assert!(
        sb.log().contains(&format!("session/cancel {session}")),
        "{}",
        sb.log()
    );

    conn.close();
    let _ = step("the connection's end", io).await;
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_websocket_client_against_the_ts_sdk_server() {
    full_session_against_the_sdk_server("ws", ClientOptions::default()).await;
}

/// A client that asks to resume broken connections works with a server that
/// does not resume them (the SDK's): resumption is optional.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_reconnecting_clients_against_the_ts_sdk_server() {
    for scheme in ["ws", "http"] {
        let options = ClientOptions::default().reconnect(Reconnect::default());
        full_session_against_the_sdk_server(scheme, options).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_streamable_http_client_against_the_ts_sdk_server() {
    full_session_against_the_sdk_server("http", ClientOptions::default()).await;
}
