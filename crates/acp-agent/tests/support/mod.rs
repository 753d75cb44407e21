//! Test support: a scripted OpenAI-compatible mock server and a recording ACP
//! client, both local to the test process.
#![allow(dead_code)]

use acp::schema::*;
use acp::{AgentCommand, AgentProcess, Client, ClientSideConnection, ConnectionOptions};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One scripted HTTP reply.
#[derive(Clone)]
pub enum Reply {
    /// 200 with these SSE pieces, then the connection closes.
    Sse(Vec<String>),
    /// 200 with these SSE pieces, then nothing more (the stream hangs open).
    SseHang(Vec<String>),
    /// An HTTP error status with a body.
    Status(u16, String),
}

/// The mock model server.
pub struct MockLlm {
    pub base_url: String,
    /// Request bodies, in order.
    pub requests: Arc<Mutex<Vec<Value>>>,
    /// Request lines and headers (lowercased), in order.
    pub heads: Arc<Mutex<Vec<String>>>,
    replies: Arc<Mutex<VecDeque<Reply>>>,
}

impl MockLlm {
    pub async fn start(replies: Vec<Reply>) -> MockLlm {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let heads = Arc::new(Mutex::new(Vec::new()));
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let (req2, rep2, heads2) = (requests.clone(), replies.clone(), heads.clone());
        tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    return;
                };
                let (req3, rep3, heads3) = (req2.clone(), rep2.clone(), heads2.clone());
                tokio::spawn(async move {
                    let _ = serve_one(sock, req3, rep3, heads3).await;
                });
            }
        });
        MockLlm {
            base_url: format!("http://{addr}/v1"),
            requests,
            heads,
            replies,
        }
    }

    pub fn push(&self, reply: Reply) {
        self.replies.lock().unwrap().push_back(reply);
    }

    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

async fn serve_one(
    mut sock: tokio::net::TcpStream,
    requests: Arc<Mutex<Vec<Value>>>,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    heads: Arc<Mutex<Vec<String>>>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let header_end = loop {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_lowercase();
    heads.lock().unwrap().push(head.clone());
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|v| v.trim().parse().unwrap())
        .unwrap_or(0);
    while buf.len() < header_end + len {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    let body: Value = serde_json::from_slice(&buf[header_end..]).unwrap_or(Value::Null);
    requests.lock().unwrap().push(body);
    let reply = replies.lock().unwrap().pop_front().unwrap_or(Reply::Status(
        500,
        "{\"error\":{\"message\":\"no scripted reply\"}}".into(),
    ));
    let reply_kind = if matches!(reply, Reply::SseHang(_)) {
        ReplyKind::Hang
    } else {
        ReplyKind::Close
    };
    match reply {
        Reply::Status(code, body) => {
            let head = format!(
                "HTTP/1.1 {code} Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            sock.write_all(head.as_bytes()).await?;
            sock.write_all(body.as_bytes()).await?;
        }
        Reply::Sse(pieces) | Reply::SseHang(pieces) => {
            let hang = matches!(reply_kind, ReplyKind::Hang);
            sock.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n",
            )
            .await?;
            for piece in &pieces {
                // Split every piece in two writes to exercise re-assembly.
                let bytes = piece.as_bytes();
                let mid = bytes.len() / 2;
                sock.write_all(&bytes[..mid]).await?;
                sock.flush().await?;
                tokio::time::sleep(Duration::from_millis(2)).await;
                sock.write_all(&bytes[mid..]).await?;
                sock.flush().await?;
            }
            if hang {
                // Keep the stream open without sending anything more.
                let _ = tokio::time::timeout(Duration::from_secs(60), sock.read(&mut tmp)).await;
            }
        }
    }
    sock.flush().await?;
    Ok(())
}

enum ReplyKind {
    Hang,
    Close,
}

fn sse(v: Value) -> String {
    format!("data: {v}\n\n")
}

pub fn text(t: &str) -> String {
    sse(json!({"choices":[{"index":0,"delta":{"content":t}}]}))
}

pub fn thought(t: &str) -> String {
    sse(json!({"choices":[{"index":0,"delta":{"reasoning_content":t}}]}))
}

/// A tool call whose arguments arrive in `pieces` chunks.
pub fn tool_call(index: u32, id: &str, name: &str, args: &str, pieces: usize) -> Vec<String> {
    let mut out = vec![sse(json!({"choices":[{"index":0,"delta":{"tool_calls":[
        {"index":index,"id":id,"type":"function","function":{"name":name,"arguments":""}}]}}]}))];
    let step = args.len().div_ceil(pieces.max(1)).max(1);
    let mut start = 0;
    while start < args.len() {
        let mut end = (start + step).min(args.len());
        while !args.is_char_boundary(end) {
            end += 1;
        }
        out.push(sse(json!({"choices":[{"index":0,"delta":{"tool_calls":[
            {"index":index,"function":{"arguments":&args[start..end]}}]}}]})));
        start = end;
    }
    out
}

pub fn finish(reason: &str) -> String {
    sse(json!({"choices":[{"index":0,"delta":{},"finish_reason":reason}]}))
}

pub fn usage(prompt: u64, completion: u64) -> String {
    sse(
        json!({"choices":[],"usage":{"prompt_tokens":prompt,"completion_tokens":completion,"total_tokens":prompt+completion}}),
    )
}

pub fn done() -> String {
    "data: [DONE]\n\n".into()
}

/// A complete reply making one tool call.
pub fn tool_reply(id: &str, name: &str, args: Value) -> Reply {
    let mut v = tool_call(0, id, name, &args.to_string(), 3);
    v.push(finish("tool_calls"));
    v.push(done());
    Reply::Sse(v)
}

/// A complete text reply.
pub fn text_reply(t: &str) -> Reply {
    Reply::Sse(vec![text(t), finish("stop"), usage(10, 5), done()])
}

/// A terminal command's exit code or signal.
pub type ExitInfo = (Option<u32>, Option<String>);

#[derive(Default)]
pub struct TermState {
    pub output: Arc<Mutex<String>>,
    pub exit: Option<tokio::sync::watch::Receiver<Option<ExitInfo>>>,
    pub kill: Arc<tokio::sync::Notify>,
}

/// What the test client saw.
#[derive(Default)]
pub struct Recorded {
    pub updates: Mutex<Vec<SessionUpdate>>,
    pub permissions: Mutex<Vec<RequestPermissionRequest>>,
    pub reads: Mutex<Vec<String>>,
    pub writes: Mutex<Vec<(String, String)>>,
    pub terminals_created: Mutex<Vec<CreateTerminalRequest>>,
    pub kills: Mutex<Vec<String>>,
    pub releases: Mutex<Vec<String>>,
    pub terminals: Mutex<HashMap<String, TermState>>,
}

impl Recorded {
    pub fn updates(&self) -> Vec<SessionUpdate> {
        self.updates.lock().unwrap().clone()
    }

    pub fn message_text(&self) -> String {
        self.updates()
            .iter()
            .filter_map(|u| match u {
                SessionUpdate::AgentMessageChunk(c) => c.content.as_text().map(str::to_string),
                _ => None,
            })
            .collect()
    }

    pub fn tool_calls(&self) -> Vec<ToolCall> {
        self.updates()
            .into_iter()
            .filter_map(|u| match u {
                SessionUpdate::ToolCall(c) => Some(c),
                _ => None,
            })
            .collect()
    }

    /// Each tool call with every later update applied.
    pub fn final_tool_calls(&self) -> Vec<ToolCall> {
        let mut calls: Vec<ToolCall> = Vec::new();
        for u in self.updates() {
            match u {
                SessionUpdate::ToolCall(c) => calls.push(c),
                SessionUpdate::ToolCallUpdate(up) => {
                    if let Some(c) = calls.iter_mut().find(|c| c.tool_call_id == up.tool_call_id) {
                        c.apply(&up);
                    }
                }
                _ => {}
            }
        }
        calls
    }
}

/// A test client: real files on disk, real processes for terminals.
#[derive(Clone)]
pub struct TestClient {
    pub rec: Arc<Recorded>,
    pub permission_choice: Arc<Mutex<String>>,
}

impl TestClient {
    pub fn new(choice: &str) -> Self {
        TestClient {
            rec: Arc::new(Recorded::default()),
            permission_choice: Arc::new(Mutex::new(choice.into())),
        }
    }
}

impl Client for TestClient {
    async fn session_notification(&self, n: SessionNotification) -> Result<(), Error> {
        self.rec.updates.lock().unwrap().push(n.update);
        Ok(())
    }

    async fn request_permission(
        &self,
        args: RequestPermissionRequest,
    ) -> Result<RequestPermissionResponse, Error> {
        self.rec.permissions.lock().unwrap().push(args);
        let choice = self.permission_choice.lock().unwrap().clone();
        Ok(RequestPermissionResponse::selected(choice))
    }

    async fn read_text_file(
        &self,
        args: ReadTextFileRequest,
    ) -> Result<ReadTextFileResponse, Error> {
        self.rec.reads.lock().unwrap().push(args.path.clone());
        let text = std::fs::read_to_string(&args.path).map_err(|e| {
            Error::resource_not_found(Some(args.path.clone())).data(json!(e.to_string()))
        })?;
        let text = match (args.line, args.limit) {
            (None, None) => text,
            (l, n) => text
                .split_inclusive('\n')
                .skip(l.unwrap_or(1).saturating_sub(1) as usize)
                .take(n.map(|n| n as usize).unwrap_or(usize::MAX))
                .collect(),
        };
        Ok(ReadTextFileResponse::new(text))
    }

    async fn write_text_file(
        &self,
        args: WriteTextFileRequest,
    ) -> Result<WriteTextFileResponse, Error> {
        self.rec
            .writes
            .lock()
            .unwrap()
            .push((args.path.clone(), args.content.clone()));
        std::fs::write(&args.path, &args.content)
            .map_err(|e| Error::internal_error().data(json!(e.to_string())))?;
        Ok(WriteTextFileResponse::new())
    }

    async fn create_terminal(
        &self,
        args: CreateTerminalRequest,
    ) -> Result<CreateTerminalResponse, Error> {
        self.rec
            .terminals_created
            .lock()
            .unwrap()
            .push(args.clone());
        let mut cmd = tokio::process::Command::new(&args.command);
        cmd.args(&args.args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        if let Some(cwd) = &args.cwd {
            cmd.current_dir(cwd);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| Error::internal_error().data(json!(e.to_string())))?;
        let output = Arc::new(Mutex::new(String::new()));
        let kill = Arc::new(tokio::sync::Notify::new());
        let (tx, rx) = tokio::sync::watch::channel(None);
        let (out2, kill2) = (output.clone(), kill.clone());
        let mut stdout = child.stdout.take().unwrap();
        tokio::spawn(async move {
            let mut buf = Vec::new();
            let reader = async {
                let _ = stdout.read_to_end(&mut buf).await;
            };
            let status = tokio::select! {
                s = async { reader.await; child.wait().await } => s.ok(),
                _ = kill2.notified() => { let _ = child.kill().await; None }
            };
            out2.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf));
            let exit = match status {
                Some(s) => (s.code().map(|c| c as u32), None),
                None => (None, Some("SIGKILL".to_string())),
            };
            let _ = tx.send(Some(exit));
        });
        let id = format!("term-{}", self.rec.terminals_created.lock().unwrap().len());
        self.rec.terminals.lock().unwrap().insert(
            id.clone(),
            TermState {
                output,
                exit: Some(rx),
                kill,
            },
        );
        Ok(CreateTerminalResponse::new(id))
    }

    async fn wait_for_terminal_exit(
        &self,
        args: WaitForTerminalExitRequest,
    ) -> Result<WaitForTerminalExitResponse, Error> {
        let mut rx = self.rec.terminals.lock().unwrap()[args.terminal_id.as_str()]
            .exit
            .clone()
            .unwrap();
        let exit = rx
            .wait_for(|v| v.is_some())
            .await
            .map_err(|_| Error::internal_error())?
            .clone()
            .unwrap();
        let mut r = WaitForTerminalExitResponse::new();
        if let Some(c) = exit.0 {
            r = r.exit_code(c);
        }
        if let Some(s) = exit.1 {
            r = r.signal(s);
        }
        Ok(r)
    }

    async fn terminal_output(
        &self,
        args: TerminalOutputRequest,
    ) -> Result<TerminalOutputResponse, Error> {
        let terms = self.rec.terminals.lock().unwrap();
        let t = &terms[args.terminal_id.as_str()];
        let mut r = TerminalOutputResponse::new(t.output.lock().unwrap().clone(), false);
        if let Some((code, sig)) = t.exit.as_ref().and_then(|rx| rx.borrow().clone()) {
            let mut st = TerminalExitStatus::default();
            st.exit_code = code;
            st.signal = sig;
            r = r.exit_status(st);
        }
        Ok(r)
    }

    async fn kill_terminal(
        &self,
        args: KillTerminalRequest,
    ) -> Result<KillTerminalResponse, Error> {
        self.rec
            .kills
            .lock()
            .unwrap()
            .push(args.terminal_id.to_string());
        self.rec.terminals.lock().unwrap()[args.terminal_id.as_str()]
            .kill
            .notify_one();
        Ok(KillTerminalResponse::new())
    }

    async fn release_terminal(
        &self,
        args: ReleaseTerminalRequest,
    ) -> Result<ReleaseTerminalResponse, Error> {
        self.rec
            .releases
            .lock()
            .unwrap()
            .push(args.terminal_id.to_string());
        if let Some(t) = self
            .rec
            .terminals
            .lock()
            .unwrap()
            .get(args.terminal_id.as_str())
        {
            t.kill.notify_one();
        }
        Ok(ReleaseTerminalResponse::new())
    }
}

/// The agent binary started with `env` (and nothing else from ours but PATH).
pub struct Running {
    pub conn: ClientSideConnection,
    pub process: AgentProcess,
    pub client: TestClient,
    _data: Option<tempfile::TempDir>,
}

/// Starts the agent with a fresh data directory of its own.
pub async fn start_agent(env: &[(&str, &str)], client: TestClient) -> Running {
    let data = tempfile::tempdir().unwrap();
    let mut r = start_agent_in(env, client, data.path()).await;
    r._data = Some(data);
    r
}

/// Starts the agent keeping its sessions in `data_dir`.
pub async fn start_agent_in(env: &[(&str, &str)], client: TestClient, data_dir: &Path) -> Running {
    let mut cmd = AgentCommand::new(env!("CARGO_BIN_EXE_acp-agent"))
        .arg("--data-dir")
        .arg(data_dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in env {
        cmd = cmd.env(k, v);
    }
    let (transport, process) = cmd.spawn().unwrap();
    let c2 = client.clone();
    let (conn, io) =
        ClientSideConnection::new(transport, ConnectionOptions::default(), move |_| c2);
    tokio::spawn(io);
    Running {
        conn,
        process,
        client,
        _data: None,
    }
}

pub fn openai_env(mock: &MockLlm) -> Vec<(&'static str, String)> {
    vec![
        ("OPENAI_BASE_URL", mock.base_url.clone()),
        ("OPENAI_API_KEY", "test-key".into()),
        ("ACP_AGENT_MODEL", "openai:mock-model".into()),
    ]
}

pub fn caps(fs: bool, terminal: bool) -> ClientCapabilities {
    ClientCapabilities::new()
        .fs(FileSystemCapabilities::new()
            .read_text_file(fs)
            .write_text_file(fs))
        .terminal(terminal)
}

/// Initializes and opens a session in `cwd`.
pub async fn open_session(r: &Running, caps: ClientCapabilities, cwd: &Path) -> SessionId {
    r.conn
        .initialize(InitializeRequest::new(ProtocolVersion::LATEST).client_capabilities(caps))
        .await
        .unwrap();
    r.conn
        .new_session(NewSessionRequest::new(cwd.display().to_string()))
        .await
        .unwrap()
        .session_id
}

pub async fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap()
}

/// An Anthropic stream event.
pub fn anthropic_event(v: Value) -> String {
    format!("event: {}\ndata: {v}\n\n", v["type"].as_str().unwrap())
}

/// A minimal MCP server over streamable HTTP (JSON responses only) with one
/// read-only tool, `shout`, that upper-cases its `text` argument.
pub struct McpFixture {
    pub url: String,
    pub calls: Arc<Mutex<Vec<Value>>>,
}

impl McpFixture {
    pub async fn start() -> McpFixture {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let calls = Arc::new(Mutex::new(Vec::new()));
        let calls2 = calls.clone();
        tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else { return };
                let calls3 = calls2.clone();
                tokio::spawn(async move {
                    let _ = mcp_serve_one(sock, calls3).await;
                });
            }
        });
        McpFixture {
            url: format!("http://{addr}/mcp"),
            calls,
        }
    }
}

async fn mcp_serve_one(mut sock: tokio::net::TcpStream, calls: Arc<Mutex<Vec<Value>>>) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let header_end = loop {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|v| v.trim().parse().unwrap())
        .unwrap_or(0);
    while buf.len() < header_end + len {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    if !head.starts_with("post ") {
        sock.write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await?;
        return Ok(());
    }
    let msg: Value = serde_json::from_slice(&buf[header_end..]).unwrap_or(Value::Null);
    let Some(id) = msg.get("id").cloned() else {
        sock.write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await?;
        return Ok(());
    };
    let result = match msg["method"].as_str().unwrap_or("") {
        "initialize" => json!({
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fixture", "version": "1.0.0"}
        }),
        "tools/list" => json!({"tools": [{
            "name": "shout",
            "description": "Upper-cases text",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            "annotations": {"readOnlyHint": true}
        }]}),
        "tools/call" => {
            calls.lock().unwrap().push(msg["params"].clone());
            let text = msg["params"]["arguments"]["text"].as_str().unwrap_or("").to_uppercase();
            json!({"content": [{"type": "text", "text": text}], "isError": false})
        }
        _ => json!({}),
    };
    let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: fixture-session\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    sock.write_all(head.as_bytes()).await?;
    sock.write_all(body.as_bytes()).await?;
    Ok(())
}
