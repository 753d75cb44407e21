//! The client process: one run of one workload against a fresh agent,
//! with the runtime ([`Mode::Acp`]) or with the floor ([`Mode::Floor`]).
//!
//! Each run is a process of its own (started by the driver), so peak RSS
//! and CPU time belong to that run alone. The timed window is the prompt
//! turn: from just before the prompt request is written to the moment its
//! response has been decoded (for ACP, after every notification sent before
//! it has gone through the handler). Spawning, `initialize` and
//! `session/new` are outside it; CPU time and peak RSS cover each process's
//! whole life.

use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use acp::schema::ClientSide;
use acp::schema::{
    ClientCapabilities, Error, FileSystemCapabilities, InitializeRequest, NewSessionRequest,
    PromptRequest, PromptResponse, ProtocolVersion, ReadTextFileRequest, ReadTextFileResponse,
    SessionNotification, SessionUpdate, WriteTextFileRequest, WriteTextFileResponse,
};
use acp::{Client, ClientSideConnection, NotificationContext, RequestContext, Transport};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::spec::{self, Findings, Spec, Workload};
use crate::sys;

/// Which implementation a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Mode {
    /// Plain serde_json over buffered std pipes.
    Floor,
    /// The same, waiting on the pipes in Tokio's reactor
    /// ([`crate::floor::Io::Tokio`]).
    TokioFloor,
    /// The `acp` runtime on both sides.
    Acp,
    /// The official Rust SDK on both sides (see [`crate::peers`]).
    RustSdk,
    /// The official TypeScript SDK on both sides (see [`crate::peers`]).
    TsSdk,
}

impl Mode {
    /// Every implementation, in table order.
    pub const ALL: [Mode; 5] = [
        Mode::Floor,
        Mode::TokioFloor,
        Mode::Acp,
        Mode::RustSdk,
        Mode::TsSdk,
    ];

    /// The command-line spelling: `floor`, `acp`, `rust-sdk` or `ts-sdk`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Floor => "floor",
            Mode::TokioFloor => "tokio-floor",
            Mode::Acp => "acp",
            Mode::RustSdk => "rust-sdk",
            Mode::TsSdk => "ts-sdk",
        }
    }

    /// Whether this is one of the official SDKs (their glue in `peers/`).
    pub fn is_peer(self) -> bool {
        matches!(self, Mode::RustSdk | Mode::TsSdk)
    }

    /// Parses [`as_str`](Self::as_str)'s spelling.
    pub fn parse(text: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.as_str() == text)
    }
}

/// What one run measured. Printed by the client process as one JSON line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// Length of the timed window (the prompt turn).
    pub wall_ns: u64,
    /// Messages on the wire in the window, both directions.
    pub messages: u64,
    /// Bytes on the wire in the window, both directions, newlines included.
    pub wire_bytes: u64,
    /// CPU time (user + system) of the client process, whole life.
    pub client_cpu_ns: u64,
    /// CPU time (user + system) of the agent process, whole life.
    pub agent_cpu_ns: u64,
    /// Peak RSS of the client process.
    pub client_rss_kib: u64,
    /// Peak RSS of the agent process, as it reported just before exiting.
    pub agent_rss_kib: u64,
    /// W2: median round trip, measured in the agent.
    pub p50_ns: Option<u64>,
    /// W2: 99th percentile round trip, measured in the agent.
    pub p99_ns: Option<u64>,
}

/// The `acp-bench-agent` binary next to the running executable.
pub fn agent_path() -> io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let dir = exe
        .parent()
        .ok_or_else(|| io::Error::other("the executable has no directory"))?;
    Ok(dir.join(format!("acp-bench-agent{}", std::env::consts::EXE_SUFFIX)))
}

/// Runs one workload in `mode` against a freshly started agent, on CPU
/// `cpu` if given (the agent inherits it). Only for our own rows: an
/// official SDK's client is its own program (see [`crate::peers::run`]).
pub fn run(mode: Mode, spec: Spec, cpu: Option<usize>) -> Result<RunResult, String> {
    if let Some(cpu) = cpu {
        sys::pin_to_cpu(cpu).map_err(|e| format!("cannot pin to CPU {cpu}: {e}"))?;
    }
    let agent = agent_path().map_err(|e| e.to_string())?;
    match mode {
        Mode::Floor => run_floor(&agent, spec, crate::floor::Io::Blocking)
            .map_err(|e| format!("floor run failed: {e}")),
        Mode::TokioFloor => run_floor(&agent, spec, crate::floor::Io::Tokio)
            .map_err(|e| format!("tokio-floor run failed: {e}")),
        Mode::Acp => crate::runtime()
            .map_err(|e| e.to_string())?
            .block_on(run_acp(&agent, spec))
            .map_err(|e| format!("acp run failed: {e}")),
        Mode::RustSdk | Mode::TsSdk => Err(format!(
            "{}: an official SDK runs its own client (see acp_bench::peers)",
            mode.as_str()
        )),
    }
}

/// What the client side saw, checked against the spec after the turn.
#[derive(Default)]
struct Tally {
    chunks: AtomicU64,
    chunk_bytes: AtomicU64,
    reads: AtomicU64,
    writes: AtomicU64,
    bad: AtomicU64,
}

impl Tally {
    fn chunk(&self, update: &SessionUpdate) {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                let len = chunk.content.as_text().map_or(0, str::len);
                self.chunks.fetch_add(1, Ordering::Relaxed);
                self.chunk_bytes.fetch_add(len as u64, Ordering::Relaxed);
            }
            _ => {
                self.bad.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn write(&self, content: &str, spec: &Spec) {
        self.writes.fetch_add(1, Ordering::Relaxed);
        if content.len() != spec.bytes {
            self.bad.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// What the handlers counted.
    fn counts(&self) -> Counts {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Counts {
            chunks: load(&self.chunks),
            chunk_bytes: load(&self.chunk_bytes),
            reads: load(&self.reads),
            writes: load(&self.writes),
            bad: load(&self.bad),
        }
    }
}

/// What the client side saw, in any implementation.
pub(crate) struct Counts {
    pub(crate) chunks: u64,
    pub(crate) chunk_bytes: u64,
    pub(crate) reads: u64,
    pub(crate) writes: u64,
    pub(crate) bad: u64,
}

impl Counts {
    /// Checks the counts on both sides against the spec; a run that fails
    /// this prints no numbers. Returns the agent's W2 percentiles.
    pub(crate) fn check(
        &self,
        spec: &Spec,
        agent: &Findings,
    ) -> Result<(Option<u64>, Option<u64>), String> {
        let count = spec.count as u64;
        let (want_chunks, want_chunk_bytes, want_reads, want_writes, want_done) =
            match spec.workload {
                Workload::Stream => (count, count * spec.bytes as u64, 0, 0, count),
                Workload::Rpc | Workload::Concurrent => (0, 0, count, 0, count),
                Workload::Large => (1, spec.update_bytes as u64, 0, 1, 2),
            };
        let seen = (
            self.chunks,
            self.chunk_bytes,
            self.reads,
            self.writes,
            agent.done,
        );
        let wanted = (
            want_chunks,
            want_chunk_bytes,
            want_reads,
            want_writes,
            want_done,
        );
        let bad = self.bad + agent.bad;
        if seen != wanted || bad != 0 {
            return Err(format!(
                "counts do not match: (chunks, chunk bytes, reads, writes, agent done) = {seen:?}, wanted {wanted:?}; {bad} bad"
            ));
        }
        Ok((agent.p50_ns, agent.p99_ns))
    }
}

fn finish(
    wall: std::time::Duration,
    spec: &Spec,
    wire_bytes: u64,
    agent_rss_kib: Option<u64>,
    p50_ns: Option<u64>,
    p99_ns: Option<u64>,
) -> Result<RunResult, String> {
    Ok(RunResult {
        wall_ns: wall.as_nanos() as u64,
        messages: spec.messages(),
        wire_bytes,
        client_cpu_ns: sys::cpu_self().as_nanos() as u64,
        agent_cpu_ns: sys::cpu_children().as_nanos() as u64,
        client_rss_kib: sys::peak_rss_kib(),
        agent_rss_kib: agent_rss_kib.ok_or("the agent did not report its peak RSS")?,
        p50_ns,
        p99_ns,
    })
}

// ---------------------------------------------------------------------------
// With the runtime.

struct BenchClient {
    spec: Spec,
    file: String,
    tally: Arc<Tally>,
}

impl Client for BenchClient {
    async fn session_notification(
        &self,
        notification: SessionNotification,
        _cx: NotificationContext<ClientSide>,
    ) -> Result<(), Error> {
        self.tally.chunk(&notification.update);
        Ok(())
    }

    async fn read_text_file(
        &self,
        _: ReadTextFileRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<ReadTextFileResponse, Error> {
        self.tally.reads.fetch_add(1, Ordering::Relaxed);
        Ok(ReadTextFileResponse::new(self.file.clone()))
    }

    async fn write_text_file(
        &self,
        request: WriteTextFileRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<WriteTextFileResponse, Error> {
        self.tally.write(&request.content, &self.spec);
        Ok(WriteTextFileResponse::new())
    }
}

async fn run_acp(agent: &Path, spec: Spec) -> Result<RunResult, String> {
    let agent_rss = Arc::new(Mutex::new(None));
    let rss_slot = agent_rss.clone();
    // Spawned by hand rather than with `AgentCommand::connect`, to count the
    // bytes that cross the pipes.
    let mut process = tokio::process::Command::new(agent)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let (Some(writer), Some(reader), Some(stderr)) = (
        process.stdin.take(),
        process.stdout.take(),
        process.stderr.take(),
    ) else {
        return Err("the agent's pipes were not set up".into());
    };
    let stderr = tokio::spawn(async move {
        use tokio::io::AsyncBufReadExt;
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            match sys::parse_agent_rss(&line) {
                Some(kib) => *rss_slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(kib),
                None => eprintln!("[agent] {line}"),
            }
        }
    });
    let bytes = Arc::new(AtomicU64::new(0));
    let transport = Transport::new(
        Counted {
            inner: reader,
            bytes: bytes.clone(),
        },
        Counted {
            inner: writer,
            bytes: bytes.clone(),
        },
    );
    let tally = Arc::new(Tally::default());
    let client = BenchClient {
        spec,
        file: read_file(&spec),
        tally: tally.clone(),
    };
    let (conn, io) = ClientSideConnection::new(transport, crate::connection_options(), |_| client);
    let io = tokio::spawn(io);
    let e = |e: acp::ConnectionError| e.to_string();

    let fs = FileSystemCapabilities::new()
        .read_text_file(true)
        .write_text_file(true);
    let init = InitializeRequest::new(ProtocolVersion::V1)
        .client_capabilities(ClientCapabilities::new().fs(fs));
    conn.initialize(init).await.map_err(e)?;
    let session = conn
        .new_session(NewSessionRequest::new("/"))
        .await
        .map_err(e)?
        .session_id;

    let bytes_before = bytes.load(Ordering::Relaxed);
    let started = Instant::now();
    let reply = conn
        .prompt(PromptRequest::new(session, vec![spec.to_prompt().into()]))
        .await
        .map_err(e)?;
    let wall = started.elapsed();
    let wire_bytes = bytes.load(Ordering::Relaxed) - bytes_before;

    conn.close();
    let _ = io.await;
    process.wait().await.map_err(|e| e.to_string())?;
    let _ = stderr.await;
    let findings = agent_findings(&reply);
    let (p50, p99) = tally.counts().check(&spec, &findings)?;
    let agent_rss = *agent_rss.lock().unwrap_or_else(|p| p.into_inner());
    finish(wall, &spec, wire_bytes, agent_rss, p50, p99)
}

/// What the ACP agent reported in its prompt response's `_meta`.
fn agent_findings(reply: &PromptResponse) -> Findings {
    reply
        .meta
        .as_ref()
        .and_then(|meta| serde_json::to_value(meta).ok())
        .and_then(|meta| serde_json::from_value(meta).ok())
        .unwrap_or(Findings {
            bad: 1,
            ..Findings::default()
        })
}

/// Counts the bytes that go through a reader or writer.
struct Counted<T> {
    inner: T,
    bytes: Arc<AtomicU64>,
}

impl<T: AsyncRead + Unpin> AsyncRead for Counted<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = buf.filled().len() - before;
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        poll
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Counted<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &poll {
            self.bytes.fetch_add(*n as u64, Ordering::Relaxed);
        }
        poll
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

// ---------------------------------------------------------------------------
// The floor.

fn run_floor(agent: &Path, spec: Spec, io: crate::floor::Io) -> Result<RunResult, String> {
    let seen = crate::floor::client(agent, spec, io).map_err(|e| e.to_string())?;
    let counts = Counts {
        chunks: seen.chunks.0,
        chunk_bytes: seen.chunks.1,
        reads: seen.reads,
        writes: seen.writes.0,
        bad: seen.writes.1,
    };
    let (p50, p99) = counts.check(&spec, &seen.findings)?;
    finish(
        seen.wall,
        &spec,
        seen.wire_bytes,
        seen.agent_rss_kib,
        p50,
        p99,
    )
}

/// The content of the file W2 and W3 read; empty for the other workloads.
fn read_file(spec: &Spec) -> String {
    match spec.workload {
        Workload::Rpc | Workload::Concurrent => spec::text(spec.bytes),
        Workload::Stream | Workload::Large => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp::schema::{Meta, StopReason};

    impl Tally {
        fn check(
            &self,
            spec: &Spec,
            reply: &PromptResponse,
        ) -> Result<(Option<u64>, Option<u64>), String> {
            self.counts().check(spec, &agent_findings(reply))
        }
    }

    fn reply_text(meta: &str) -> PromptResponse {
        let meta: Meta = serde_json::from_str(meta).unwrap();
        PromptResponse::new(StopReason::EndTurn).meta(meta)
    }

    fn reply(done: u64, bad: u64) -> PromptResponse {
        let mut meta = Meta::new();
        meta.insert("done", done);
        meta.insert("bad", bad);
        PromptResponse::new(StopReason::EndTurn).meta(meta)
    }

    #[test]
    fn the_count_check_rejects_short_or_bad_runs() {
        let spec = Spec::parse("W1 count=2 bytes=3 update=0").unwrap();
        let tally = Tally::default();
        let chunk = SessionUpdate::agent_message("abc");
        tally.chunk(&chunk);
        assert!(
            tally.check(&spec, &reply(2, 0)).is_err(),
            "one chunk missing"
        );
        tally.chunk(&chunk);
        assert!(tally.check(&spec, &reply(2, 0)).is_ok());
        assert!(
            tally.check(&spec, &reply(1, 0)).is_err(),
            "agent sent fewer"
        );
        assert!(
            tally.check(&spec, &reply(2, 1)).is_err(),
            "agent saw a bad one"
        );
        let no_meta = PromptResponse::new(StopReason::EndTurn);
        assert!(tally.check(&spec, &no_meta).is_err());
        assert!(
            tally.check(&spec, &reply_text(r#"{"done":2}"#)).is_err(),
            "no bad count"
        );

        let spec = Spec::parse("W4 count=1 bytes=5 update=3").unwrap();
        let tally = Tally::default();
        tally.write("12345", &spec);
        tally.chunk(&chunk);
        assert!(tally.check(&spec, &reply(2, 0)).is_ok());
        tally.write("1234", &spec);
        assert!(tally.check(&spec, &reply(2, 0)).is_err(), "wrong length");
    }
}
