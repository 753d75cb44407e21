//! `acp-bench-remote`: W1 and W2 over a WebSocket, next to the same
//! workloads over stdio pipes.
//!
//! ```text
//! cargo run --release -p acp-bench --bin acp-bench-remote            # 5 runs each
//! cargo run --release -p acp-bench --bin acp-bench-remote -- --quick # a tenth, 1 run
//! ```
//!
//! Both rows run the runtime's client against the same `acp-bench-agent`
//! process. **stdio** is the main benchmark's `acp` run (the agent on the
//! client's pipes). **websocket** is the path of `acp serve`: the client
//! connects with `acp::remote::connect` to `ws://127.0.0.1:…/acp`, an
//! `acp::remote::server::Server` in this process (on a runtime of its own)
//! gives the connection an `acp-bench-agent` process and passes every line
//! between the socket and the agent's pipes. So the ratio is everything the
//! network hop adds: framing, the loopback socket, and the server's copy.
//! Everything runs on one CPU (CPU 0 unless `--cpu` says otherwise), as in
//! the main benchmark.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use acp::remote::server::{Server, ServerOptions, Upstream};
use acp::schema::{
    ClientCapabilities, ClientSide, Error, FileSystemCapabilities, InitializeRequest,
    NewSessionRequest, PromptRequest, ProtocolVersion, ReadTextFileRequest, ReadTextFileResponse,
    SessionNotification,
};
use acp::{AgentCommand, Client, ClientSideConnection, NotificationContext, RequestContext};

use crate::client::{self, Mode};
use crate::spec::{self, Findings, Spec, Workload};
use crate::sys;

const USAGE: &str = "usage: acp-bench-remote [--quick] [--runs N] [--cpu N|any]";

/// One timed prompt turn.
struct Turn {
    wall: Duration,
    p50_ns: Option<u64>,
    p99_ns: Option<u64>,
}

/// Runs the benchmark; see the module docs.
pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut quick = false;
    let mut runs = 5;
    let mut cpu = Some(0);
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => quick = true,
            "--runs" => match it.next().and_then(|v| v.parse().ok()) {
                Some(n) if n > 0 => runs = n,
                _ => return usage("--runs needs a positive number"),
            },
            "--cpu" => match it.next().map(String::as_str) {
                Some("any") => cpu = None,
                Some(n) => match n.parse() {
                    Ok(n) => cpu = Some(n),
                    Err(_) => return usage("--cpu takes a CPU number or `any`"),
                },
                None => return usage("--cpu needs a value"),
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => return usage(&format!("unexpected argument {other:?}")),
        }
    }
    if quick {
        runs = 1;
    }
    match bench(quick, runs, cpu) {
        Ok(table) => {
            print!("{table}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("acp-bench-remote: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage(why: &str) -> ExitCode {
    eprintln!("acp-bench-remote: {why}\n{USAGE}");
    ExitCode::from(2)
}

fn bench(quick: bool, runs: usize, cpu: Option<usize>) -> Result<String, String> {
    if let Some(cpu) = cpu {
        sys::pin_to_cpu(cpu).map_err(|e| format!("cannot pin to CPU {cpu}: {e}"))?;
    }
    let agent = client::agent_path().map_err(|e| e.to_string())?;
    if !agent.exists() {
        return Err(format!(
            "{} not found: run `cargo build --release -p acp-bench` first",
            agent.display()
        ));
    }
    let mut table = format!(
        "W1/W2 over WebSocket (through acp::remote::server, as `acp serve`) vs stdio; median of {runs} run(s){}, {}\n\n",
        if quick { ", quick sizes" } else { "" },
        cpu.map_or("unpinned".to_owned(), |c| format!("all on CPU {c}"))
    );
    table.push_str("| workload | transport | wall ms (median) | min–max ms | msgs/s | p50 µs | p99 µs | × stdio |\n");
    table.push_str("|---|---|---:|---:|---:|---:|---:|---:|\n");
    for workload in [Workload::Stream, Workload::Rpc] {
        let spec = if quick {
            Spec::quick(workload)
        } else {
            Spec::full(workload)
        };
        let mut stdio = Vec::new();
        let mut ws = Vec::new();
        for run in 1..=runs {
            let result = client::run(Mode::Acp, spec, None)?;
            stdio.push(Turn {
                wall: Duration::from_nanos(result.wall_ns),
                p50_ns: result.p50_ns,
                p99_ns: result.p99_ns,
            });
            ws.push(websocket_run(&agent, spec)?);
            eprintln!(
                "acp-bench-remote: {workload} run {run}/{runs}: stdio {:.1} ms, websocket {:.1} ms",
                stdio[run - 1].wall.as_secs_f64() * 1e3,
                ws[run - 1].wall.as_secs_f64() * 1e3
            );
        }
        let stdio_ms = median(stdio.iter().map(|t| t.wall.as_secs_f64() * 1e3));
        for (name, turns) in [("stdio", &stdio), ("websocket", &ws)] {
            let ms = median(turns.iter().map(|t| t.wall.as_secs_f64() * 1e3));
            let min = turns
                .iter()
                .map(|t| t.wall.as_secs_f64() * 1e3)
                .fold(f64::INFINITY, f64::min);
            let max = turns
                .iter()
                .map(|t| t.wall.as_secs_f64() * 1e3)
                .fold(0.0, f64::max);
            let us = |f: &dyn Fn(&Turn) -> Option<u64>| {
                let v: Vec<f64> = turns.iter().filter_map(f).map(|n| n as f64 / 1e3).collect();
                if v.is_empty() {
                    "–".to_owned()
                } else {
                    format!("{:.1}", median(v.into_iter()))
                }
            };
            table.push_str(&format!(
                "| {workload} | {name} | {ms:.1} | {min:.1}–{max:.1} | {:.0} | {} | {} | {:.2} |\n",
                spec.messages() as f64 / (ms / 1e3),
                us(&|t| t.p50_ns),
                us(&|t| t.p99_ns),
                ms / stdio_ms
            ));
        }
    }
    Ok(table)
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// One turn over a WebSocket to a server in this process.
fn websocket_run(agent: &std::path::Path, spec: Spec) -> Result<Turn, String> {
    let server_runtime = crate::runtime().map_err(|e| e.to_string())?;
    let agent = agent.to_owned();
    let server = Server::new(ServerOptions::default(), move |_| {
        let (child, transport) = AgentCommand::new(&agent)
            .on_stderr(|line| {
                if sys::parse_agent_rss(line).is_none() {
                    eprintln!("[agent] {line}");
                }
            })
            .spawn_stdio()?;
        Ok(Upstream::new(transport).owned_by(child))
    });
    let stop = server.shutdown_token();
    let listener = server_runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    server_runtime.spawn(server.serve(listener));
    let turn = crate::runtime()
        .map_err(|e| e.to_string())?
        .block_on(websocket_turn(&format!("ws://{addr}/acp"), spec));
    stop.cancel();
    server_runtime.shutdown_timeout(Duration::from_secs(5));
    turn
}

/// Counts what the client side saw.
struct Counting {
    file: String,
    chunks: Arc<AtomicU64>,
    reads: Arc<AtomicU64>,
}

impl Client for Counting {
    async fn session_notification(
        &self,
        _: SessionNotification,
        _cx: NotificationContext<ClientSide>,
    ) -> Result<(), Error> {
        self.chunks.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    async fn read_text_file(
        &self,
        _: ReadTextFileRequest,
        _cx: RequestContext<ClientSide>,
    ) -> Result<ReadTextFileResponse, Error> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        Ok(ReadTextFileResponse::new(self.file.clone()))
    }
}

async fn websocket_turn(url: &str, spec: Spec) -> Result<Turn, String> {
    let transport = acp::remote::connect(url, acp::remote::ClientOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    let chunks = Arc::new(AtomicU64::new(0));
    let reads = Arc::new(AtomicU64::new(0));
    let client = Counting {
        file: match spec.workload {
            Workload::Rpc => spec::text(spec.bytes),
            _ => String::new(),
        },
        chunks: chunks.clone(),
        reads: reads.clone(),
    };
    let (conn, io) = ClientSideConnection::new(transport, crate::connection_options(), |_| client);
    let io = tokio::spawn(io);
    let e = |e: acp::ConnectionError| e.to_string();
    let fs = FileSystemCapabilities::new().read_text_file(true);
    conn.initialize(
        InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(ClientCapabilities::new().fs(fs)),
    )
    .await
    .map_err(e)?;
    let session = conn
        .new_session(NewSessionRequest::new("/"))
        .await
        .map_err(e)?
        .session_id;
    let started = Instant::now();
    let reply = conn
        .prompt(PromptRequest::new(session, vec![spec.to_prompt().into()]))
        .await
        .map_err(e)?;
    let wall = started.elapsed();
    conn.close();
    let _ = io.await;
    let findings: Findings = reply
        .meta
        .as_ref()
        .and_then(|meta| serde_json::to_value(meta).ok())
        .and_then(|meta| serde_json::from_value(meta).ok())
        .ok_or("the prompt response has no findings")?;
    let count = spec.count as u64;
    let seen = match spec.workload {
        Workload::Stream => chunks.load(Ordering::Relaxed),
        _ => reads.load(Ordering::Relaxed),
    };
    if findings.done != count || findings.bad != 0 || seen != count {
        return Err(format!(
            "{} over WebSocket: the agent did {} ({} bad), the client saw {seen}, wanted {count}",
            spec.workload, findings.done, findings.bad
        ));
    }
    Ok(Turn {
        wall,
        p50_ns: findings.p50_ns,
        p99_ns: findings.p99_ns,
    })
}
