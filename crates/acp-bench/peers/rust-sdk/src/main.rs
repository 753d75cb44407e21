//! The acp-bench workloads on the official Rust SDK: its client drives its
//! agent over the pipes of a child process, as `acp-bench` does with ours.
//!
//! ```text
//! acp-bench-rust-sdk client "W1 count=200000 bytes=40 update=0"
//! acp-bench-rust-sdk agent      # started by the client, on stdio
//! ```
//!
//! The client prints one JSON line: the timed window (the prompt turn), the
//! bytes on the wire, its own CPU time and peak RSS, the agent's (which the
//! agent writes to standard error as it exits), what its handlers counted,
//! and the agent's findings from the prompt response's `_meta`. `acp-bench`
//! checks the counts with the same code as for its own rows.

use std::io;
use std::pin::Pin;
use std::process::Stdio as ProcessStdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, InitializeResponse, NewSessionRequest, NewSessionResponse,
    PromptRequest, PromptResponse, ReadTextFileRequest, ReadTextFileResponse, SessionId,
    SessionNotification, SessionUpdate, StopReason, TextContent, WriteTextFileRequest,
    WriteTextFileResponse,
};
use agent_client_protocol::{Agent, ByteStreams, Client, Stdio};
use futures::io::{AsyncRead, AsyncWrite};
use nix::sys::resource::{UsageWho, getrusage};
use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::{Map, Value, json};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

const SESSION_ID: &str = "bench-1";
const READ_PATH: &str = "/bench/read.txt";
const WRITE_PATH: &str = "/bench/write.txt";
const AGENT_STATS: &str = "acp-bench-peer-agent:";

type Failure = Box<dyn std::error::Error + Send + Sync>;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    let result = match args.first().map(String::as_str) {
        Some("agent") => runtime.block_on(agent()),
        Some("client") if args.len() == 2 => runtime.block_on(client(&args[1])),
        _ => Err("usage: acp-bench-rust-sdk agent | client SPEC".into()),
    };
    if args.first().map(String::as_str) == Some("agent") {
        eprintln!(
            "{AGENT_STATS} cpu_ns={} rss_kib={}",
            cpu_ns(UsageWho::RUSAGE_SELF),
            peak_rss_kib()
        );
    }
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("acp-bench-rust-sdk: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

// ---------------------------------------------------------------------------
// What a run does.

#[derive(Clone, Copy, PartialEq)]
enum Workload {
    Stream,
    Rpc,
    Concurrent,
    Large,
}

#[derive(Clone, Copy)]
struct Spec {
    workload: Workload,
    count: usize,
    bytes: usize,
    update: usize,
}

impl Spec {
    fn parse(text: &str) -> Result<Spec, String> {
        let mut words = text.split_whitespace();
        let workload = match words.next() {
            Some("W1") => Workload::Stream,
            Some("W2") => Workload::Rpc,
            Some("W3") => Workload::Concurrent,
            Some("W4") => Workload::Large,
            other => return Err(format!("no workload in {other:?}")),
        };
        let mut spec = Spec {
            workload,
            count: 0,
            bytes: 0,
            update: 0,
        };
        for word in words {
            let (key, value) = word.split_once('=').ok_or(format!("bad word {word:?}"))?;
            let value = value.parse().map_err(|e| format!("{word:?}: {e}"))?;
            match key {
                "count" => spec.count = value,
                "bytes" => spec.bytes = value,
                "update" => spec.update = value,
                _ => return Err(format!("unknown key {key:?}")),
            }
        }
        Ok(spec)
    }
}

/// `len` bytes of the same ASCII text acp-bench sends.
fn text(len: usize) -> String {
    const PATTERN: &str = "the quick brown fox jumps over the lazy dog ";
    PATTERN.chars().cycle().take(len).collect()
}

// ---------------------------------------------------------------------------
// The agent.

async fn agent() -> Result<(), Failure> {
    Agent
        .v1()
        .name("acp-bench-rust-sdk-agent")
        .on_receive_request(
            async move |_: InitializeRequest, responder, _cx| {
                responder.respond(InitializeResponse::new(ProtocolVersion::V1))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_: NewSessionRequest, responder, _cx| {
                responder.respond(NewSessionResponse::new(SESSION_ID))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx: ConnectionTo<Client>| {
                let spec = match &request.prompt.first() {
                    Some(ContentBlock::Text(t)) => Spec::parse(&t.text),
                    _ => Err("the prompt has no text".into()),
                };
                let spec = match spec {
                    Ok(spec) => spec,
                    Err(e) => {
                        return responder.respond_with_error(
                            agent_client_protocol::Error::invalid_params().data(e),
                        );
                    }
                };
                // The turn goes on outside the dispatch loop, which must keep
                // reading the client's responses.
                let session = request.session_id;
                let conn = cx.clone();
                cx.spawn(async move {
                    let findings = run_workload(&conn, &session, spec).await?;
                    responder.respond(PromptResponse::new(StopReason::EndTurn).meta(findings))
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_to(Stdio::new())
        .await?;
    Ok(())
}

async fn run_workload(
    conn: &ConnectionTo<Client>,
    session: &SessionId,
    spec: Spec,
) -> Result<Map<String, Value>, agent_client_protocol::Error> {
    let mut done = 0u64;
    let mut bad = 0u64;
    let mut percentiles = None;
    match spec.workload {
        Workload::Stream => {
            let chunk = text(spec.bytes);
            for _ in 0..spec.count {
                let update = SessionUpdate::AgentMessageChunk(agent_client_protocol::v1::schema::ContentChunk::new(
                    ContentBlock::Text(TextContent::new(chunk.clone())),
                ));
                conn.send_notification(SessionNotification::new(session.clone(), update))?;
                done += 1;
            }
        }
        Workload::Rpc => {
            let mut latencies = Vec::with_capacity(spec.count);
            for _ in 0..spec.count {
                let started = Instant::now();
                let response = conn
                    .send_request(ReadTextFileRequest::new(session.clone(), READ_PATH))
                    .block_task()
                    .await?;
                latencies.push(started.elapsed().as_nanos() as u64);
                done += 1;
                bad += u64::from(response.content.len() != spec.bytes);
            }
            latencies.sort_unstable();
            let at = |q: f64| {
                let rank = ((latencies.len() as f64 * q).ceil() as usize).clamp(1, latencies.len());
                latencies[rank - 1]
            };
            if !latencies.is_empty() {
                percentiles = Some((at(0.5), at(0.99)));
            }
        }
        Workload::Concurrent => {
            let mut requests: FuturesUnordered<_> = (0..spec.count)
                .map(|_| {
                    conn.send_request(ReadTextFileRequest::new(session.clone(), READ_PATH))
                        .block_task()
                })
                .collect();
            while let Some(response) = requests.next().await {
                done += 1;
                bad += u64::from(response?.content.len() != spec.bytes);
            }
        }
        Workload::Large => {
            conn.send_request(WriteTextFileRequest::new(
                session.clone(),
                WRITE_PATH,
                text(spec.bytes),
            ))
            .block_task()
            .await?;
            let update = SessionUpdate::AgentMessageChunk(agent_client_protocol::v1::schema::ContentChunk::new(
                ContentBlock::Text(TextContent::new(text(spec.update))),
            ));
            conn.send_notification(SessionNotification::new(session.clone(), update))?;
            done = 2;
        }
    }
    let mut meta = Map::new();
    meta.insert("done".into(), done.into());
    meta.insert("bad".into(), bad.into());
    if let Some((p50, p99)) = percentiles {
        meta.insert("p50_ns".into(), p50.into());
        meta.insert("p99_ns".into(), p99.into());
    }
    Ok(meta)
}

// ---------------------------------------------------------------------------
// The client.

#[derive(Default)]
struct Tally {
    chunks: AtomicU64,
    chunk_bytes: AtomicU64,
    reads: AtomicU64,
    writes: AtomicU64,
    bad: AtomicU64,
}

async fn client(spec_text: &str) -> Result<(), Failure> {
    let spec = Spec::parse(spec_text)?;
    let exe = std::env::current_exe()?;
    let mut child = tokio::process::Command::new(exe)
        .arg("agent")
        .stdin(ProcessStdio::piped())
        .stdout(ProcessStdio::piped())
        .stderr(ProcessStdio::piped())
        .spawn()?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err("the agent's pipes were not set up".into());
    };
    let agent_stats = tokio::spawn(async move {
        use tokio::io::AsyncBufReadExt;
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        let mut stats = None;
        while let Ok(Some(line)) = lines.next_line().await {
            match line.strip_prefix(AGENT_STATS) {
                Some(rest) => stats = Some(rest.trim().to_owned()),
                None => eprintln!("[agent] {line}"),
            }
        }
        stats
    });

    let wire = Arc::new(AtomicU64::new(0));
    let transport = ByteStreams::new(
        Counted {
            inner: stdin.compat_write(),
            bytes: wire.clone(),
        },
        Counted {
            inner: stdout.compat(),
            bytes: wire.clone(),
        },
    );
    let tally = Arc::new(Tally::default());
    let file = match spec.workload {
        Workload::Rpc | Workload::Concurrent => text(spec.bytes),
        Workload::Stream | Workload::Large => String::new(),
    };
    let (t1, t2, t3) = (tally.clone(), tally.clone(), tally.clone());
    let wire_in_turn = wire.clone();
    let (wall_ns, wire_bytes, meta) = Client
        .v1()
        .name("acp-bench-rust-sdk-client")
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                match &notification.update {
                    SessionUpdate::AgentMessageChunk(chunk) => {
                        let len = match &chunk.content {
                            ContentBlock::Text(t) => t.text.len(),
                            _ => 0,
                        };
                        t1.chunks.fetch_add(1, Ordering::Relaxed);
                        t1.chunk_bytes.fetch_add(len as u64, Ordering::Relaxed);
                    }
                    _ => {
                        t1.bad.fetch_add(1, Ordering::Relaxed);
                    }
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |_: ReadTextFileRequest, responder, _cx| {
                t2.reads.fetch_add(1, Ordering::Relaxed);
                responder.respond(ReadTextFileResponse::new(file.clone()))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WriteTextFileRequest, responder, _cx| {
                t3.writes.fetch_add(1, Ordering::Relaxed);
                if request.content.len() != spec.bytes {
                    t3.bad.fetch_add(1, Ordering::Relaxed);
                }
                responder.respond(WriteTextFileResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async move |conn: ConnectionTo<Agent>| {
            conn.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let session = conn
                .send_request(NewSessionRequest::new("/"))
                .block_task()
                .await?
                .session_id;
            let before = wire_in_turn.load(Ordering::Relaxed);
            let started = Instant::now();
            let reply = conn
                .send_request(PromptRequest::new(
                    session,
                    vec![ContentBlock::Text(TextContent::new(spec_text.to_owned()))],
                ))
                .block_task()
                .await?;
            let wall = started.elapsed().as_nanos() as u64;
            let bytes = wire_in_turn.load(Ordering::Relaxed) - before;
            Ok((wall, bytes, reply.meta))
        })
        .await?;
    // The connection is over: the agent sees its stdin close and exits.
    let status = child.wait().await?;
    if !status.success() {
        return Err(format!("the agent exited with {status}").into());
    }
    let stats = agent_stats.await?.ok_or("the agent did not report its CPU time and RSS")?;
    let stat = |key: &str| -> u64 {
        stats
            .split_whitespace()
            .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
            .unwrap_or(0)
    };
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let line = json!({
        "wall_ns": wall_ns,
        "wire_bytes": wire_bytes,
        "client_cpu_ns": cpu_ns(UsageWho::RUSAGE_SELF),
        "client_rss_kib": peak_rss_kib(),
        "agent_cpu_ns": stat("cpu_ns"),
        "agent_rss_kib": stat("rss_kib"),
        "chunks": load(&tally.chunks),
        "chunk_bytes": load(&tally.chunk_bytes),
        "reads": load(&tally.reads),
        "writes": load(&tally.writes),
        "bad": load(&tally.bad),
        "findings": meta.map(Value::Object).unwrap_or(Value::Null),
    });
    println!("{line}");
    Ok(())
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
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(n)) = &poll {
            self.bytes.fetch_add(*n as u64, Ordering::Relaxed);
        }
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

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

// ---------------------------------------------------------------------------
// Process measurements.

fn cpu_ns(who: UsageWho) -> u64 {
    let Ok(usage) = getrusage(who) else {
        return 0;
    };
    let ns = |t: nix::sys::time::TimeVal| t.tv_sec() as u64 * 1_000_000_000 + t.tv_usec() as u64 * 1_000;
    ns(usage.user_time()) + ns(usage.system_time())
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
