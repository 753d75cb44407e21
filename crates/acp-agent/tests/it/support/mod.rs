//! Test support: a scripted mock model server ([`llm`]), a recording ACP
//! client ([`client`]) and an MCP server ([`mcp`]), all local to the test
//! process, and helpers to start the built agent.
// Each test module uses only part of this (and acp-e2e's tests share it).
#![allow(dead_code, unused_imports)]

mod client;
mod llm;
mod mcp;

pub use client::*;
pub use llm::*;
pub use mcp::*;

use acp::schema::*;
use acp::{AgentCommand, AgentProcess, ClientSideConnection, ConnectionOptions};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// Reads one HTTP/1.1 request: its head (lowercased) and its JSON body
/// (`null` if there is none or it is not JSON). `None` if the peer closed
/// the connection first.
async fn read_request(
    sock: &mut tokio::net::TcpStream,
) -> std::io::Result<Option<(String, Value)>> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let header_end = loop {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(None);
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
    let body = serde_json::from_slice(&buf[header_end..]).unwrap_or(Value::Null);
    Ok(Some((head, body)))
}

/// The agent binary cargo built for these tests: acp-agent's own, or the
/// copy crate acp-e2e builds from the same main.rs (these helpers serve its
/// tests too).
pub fn agent_bin() -> &'static str {
    option_env!("CARGO_BIN_EXE_acp-agent")
        .or(option_env!("CARGO_BIN_EXE_acp-e2e-agent"))
        .expect("tests are built with an acp-agent binary")
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
    start_agent_with(&[], env, client, data_dir).await
}

/// Starts the agent with the extra arguments `args`, keeping its sessions in
/// `data_dir`. Its home (and so its default config file) is `data_dir`, so
/// that the user's own config file is not read.
pub async fn start_agent_with(
    args: &[&str],
    env: &[(&str, &str)],
    client: TestClient,
    data_dir: &Path,
) -> Running {
    let mut cmd = AgentCommand::new(agent_bin())
        .arg("--data-dir")
        .arg(data_dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", data_dir)
        .env("XDG_CONFIG_HOME", data_dir.join("config"));
    for arg in args {
        cmd = cmd.arg(arg);
    }
    for (k, v) in env {
        cmd = cmd.env(k, v);
    }
    let c2 = client.clone();
    let process = cmd
        .connect(ConnectionOptions::default(), move |_| c2)
        .unwrap();
    let conn = process.connection().clone();
    Running {
        conn,
        process,
        client,
        _data: None,
    }
}

/// The environment of an agent using `mock` as its OpenAI-compatible server.
pub fn openai_env(mock: &MockLlm) -> Vec<(&'static str, &str)> {
    vec![
        ("OPENAI_BASE_URL", mock.base_url.as_str()),
        ("OPENAI_API_KEY", "test-key"),
        ("ACP_AGENT_MODEL", "openai:mock-model"),
    ]
}

/// The environment of an agent using `mock` as the Anthropic API.
pub fn anthropic_env(mock: &MockLlm) -> Vec<(&'static str, &str)> {
    vec![
        ("ANTHROPIC_API_KEY", "ant-key"),
        ("ANTHROPIC_BASE_URL", mock.base_url.trim_end_matches("/v1")),
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
    r.new_session(cwd).await
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

impl Running {
    /// Sends a text prompt and returns how the turn stopped.
    pub async fn prompt(&self, sid: &SessionId, text: &str) -> StopReason {
        self.conn
            .prompt(PromptRequest::new(sid.clone(), vec![text.into()]))
            .await
            .unwrap()
            .stop_reason
    }

    /// Starts a text prompt turn in the background.
    pub fn spawn_prompt(
        &self,
        sid: &SessionId,
        text: &str,
    ) -> tokio::task::JoinHandle<Result<PromptResponse, acp::ConnectionError>> {
        let conn = self.conn.clone();
        let request = PromptRequest::new(sid.clone(), vec![text.into()]);
        tokio::spawn(async move { conn.prompt(request).await })
    }

    /// Cancels the running `turn` and checks that it ends `cancelled`
    /// within 3 s.
    pub async fn cancel_turn(
        &self,
        sid: &SessionId,
        turn: tokio::task::JoinHandle<Result<PromptResponse, acp::ConnectionError>>,
    ) {
        let t0 = std::time::Instant::now();
        self.conn
            .cancel(CancelNotification::new(sid.clone()))
            .await
            .unwrap();
        let resp = tokio::time::timeout(Duration::from_secs(5), turn)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(resp.stop_reason, StopReason::Cancelled);
        assert!(t0.elapsed() < Duration::from_secs(3));
    }

    /// Opens a session in `cwd`, without MCP servers.
    pub async fn new_session(&self, cwd: &Path) -> SessionId {
        self.conn
            .new_session(NewSessionRequest::new(cwd.display().to_string()))
            .await
            .unwrap()
            .session_id
    }

    /// `initialize` with no client capabilities.
    pub async fn initialize(&self) -> InitializeResponse {
        self.conn
            .initialize(InitializeRequest::new(ProtocolVersion::LATEST))
            .await
            .unwrap()
    }
}

/// The roles of the messages of a Chat Completions request.
pub fn roles(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_string())
        .collect()
}

/// Makes `path` unwritable, even for root (`chattr +i` as root, `chmod`
/// otherwise), until dropped; `None` if that cannot be done here.
pub struct ReadOnly(PathBuf);

/// Whether this process runs as root (a file it makes is root's).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    tempfile::tempfile()
        .and_then(|f| f.metadata())
        .is_ok_and(|m| m.uid() == 0)
}

impl ReadOnly {
    pub fn make(path: &Path) -> Option<ReadOnly> {
        use std::os::unix::fs::PermissionsExt;
        if !is_root() {
            let mode = if path.is_dir() { 0o555 } else { 0o444 };
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).ok()?;
            return Some(ReadOnly(path.to_path_buf()));
        }
        let ok = std::process::Command::new("chattr")
            .arg("+i")
            .arg(path)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| ReadOnly(path.to_path_buf()))
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if is_root() {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(&self.0)
                .status();
        } else {
            let mode = if self.0.is_dir() { 0o755 } else { 0o644 };
            let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(mode));
        }
    }
}
