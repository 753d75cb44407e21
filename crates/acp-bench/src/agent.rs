//! The agent process (`acp-bench-agent`): one program, two implementations.
//!
//! - Without arguments it is an ACP agent on `Transport::stdio()`, like any
//!   agent built on the runtime; the prompt text picks the workload.
//! - With `--floor` it does the same work with serde_json over buffered std
//!   pipes: no tasks, no channels, no id table.
//!
//! Either way it ends by writing its peak RSS to standard error
//! ([`AGENT_RSS_PREFIX`](crate::sys::AGENT_RSS_PREFIX)), so the client can
//! report it.
//!
//! The prompt response carries the agent's own findings in `_meta`:
//! `done` (messages sent or round trips completed), `bad` (responses that did
//! not check out) and, for W2, `p50_ns` / `p99_ns` per round trip.

use std::io::{self, BufReader, BufWriter, Write};
use std::os::fd::AsFd;
use std::process::ExitCode;
use std::time::Instant;

use acp::schema::{
    Error, InitializeRequest, InitializeResponse, Meta, NewSessionRequest, NewSessionResponse,
    PromptRequest, PromptResponse, ProtocolVersion, ReadTextFileRequest, ReadTextFileResponse,
    SessionId, SessionNotification, SessionUpdate, StopReason, WriteTextFileRequest,
    WriteTextFileResponse,
};
use acp::{Agent, AgentSideConnection, Transport};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use serde_json::json;

use crate::spec::{self, READ_PATH, SESSION_ID, Spec, Workload};
use crate::sys;
use crate::wire::{self, InRequest, InResponse, LineIn, OutNotification, OutRequest, OutResponse};

/// Runs the agent process; see the module docs.
pub fn main() -> ExitCode {
    let floor = std::env::args().skip(1).any(|a| a == "--floor");
    let result = if floor {
        floor_agent().map_err(|e| e.to_string())
    } else {
        acp_agent()
    };
    let code = match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("acp-bench-agent: {e}");
            ExitCode::FAILURE
        }
    };
    eprintln!("{}{}", sys::AGENT_RSS_PREFIX, sys::peak_rss_kib());
    code
}

/// What the agent found, returned in the prompt response's `_meta`.
#[derive(Debug, Default)]
struct Findings {
    done: u64,
    bad: u64,
    latencies_ns: Vec<u64>,
}

impl Findings {
    fn into_meta(mut self) -> Meta {
        let mut meta = Meta::new();
        meta.insert("done", json!(self.done));
        meta.insert("bad", json!(self.bad));
        if let Some(p50) = sys::quantile(&mut self.latencies_ns, 0.50) {
            meta.insert("p50_ns", json!(p50));
        }
        if let Some(p99) = sys::quantile(&mut self.latencies_ns, 0.99) {
            meta.insert("p99_ns", json!(p99));
        }
        meta
    }
}

fn prompt_spec(request: &PromptRequest) -> Result<Spec, String> {
    let text = request
        .prompt
        .first()
        .and_then(|block| block.as_text())
        .ok_or("the prompt has no text")?;
    Spec::parse(text)
}

// ---------------------------------------------------------------------------
// The ACP agent.

fn acp_agent() -> Result<(), String> {
    crate::runtime()
        .map_err(|e| e.to_string())?
        .block_on(async {
            let (_conn, io) =
                AgentSideConnection::new(Transport::stdio(), crate::connection_options(), |conn| {
                    BenchAgent { conn }
                });
            io.await.map_err(|e| e.to_string())
        })
}

struct BenchAgent {
    conn: AgentSideConnection,
}

impl Agent for BenchAgent {
    async fn initialize(&self, _: InitializeRequest) -> Result<InitializeResponse, Error> {
        Ok(InitializeResponse::new(ProtocolVersion::V1))
    }

    async fn new_session(&self, _: NewSessionRequest) -> Result<NewSessionResponse, Error> {
        Ok(NewSessionResponse::new(SESSION_ID))
    }

    async fn prompt(&self, request: PromptRequest) -> Result<PromptResponse, Error> {
        let spec = prompt_spec(&request).map_err(|e| Error::invalid_params().data(e))?;
        let session = request.session_id;
        let findings = match spec.workload {
            Workload::Stream => self.stream(&session, &spec).await?,
            Workload::Rpc => self.rpc(&session, &spec).await?,
            Workload::Concurrent => self.concurrent(&session, &spec).await?,
            Workload::Large => self.large(&session, &spec).await?,
        };
        Ok(PromptResponse::new(StopReason::EndTurn).meta(findings.into_meta()))
    }
}

impl BenchAgent {
    async fn stream(&self, session: &SessionId, spec: &Spec) -> Result<Findings, Error> {
        let text = spec::text(spec.bytes);
        for _ in 0..spec.count {
            let update = SessionUpdate::agent_message(text.clone());
            self.conn
                .session_notification(SessionNotification::new(session.clone(), update))
                .await?;
        }
        Ok(Findings {
            done: spec.count as u64,
            ..Findings::default()
        })
    }

    async fn rpc(&self, session: &SessionId, spec: &Spec) -> Result<Findings, Error> {
        let mut findings = Findings {
            latencies_ns: Vec::with_capacity(spec.count),
            ..Findings::default()
        };
        for _ in 0..spec.count {
            let started = Instant::now();
            let response = self
                .conn
                .read_text_file(ReadTextFileRequest::new(session.clone(), READ_PATH))
                .await?;
            findings
                .latencies_ns
                .push(started.elapsed().as_nanos() as u64);
            findings.done += 1;
            findings.bad += u64::from(response.content.len() != spec.bytes);
        }
        Ok(findings)
    }

    async fn concurrent(&self, session: &SessionId, spec: &Spec) -> Result<Findings, Error> {
        // All requests are issued before any response is awaited; responses are
        // taken in completion order (`join_all` would also keep them in issue
        // order, which costs more than the requests themselves).
        let mut requests: FuturesUnordered<_> = (0..spec.count)
            .map(|_| {
                self.conn
                    .read_text_file(ReadTextFileRequest::new(session.clone(), READ_PATH))
            })
            .collect();
        let mut findings = Findings::default();
        while let Some(response) = requests.next().await {
            findings.done += 1;
            findings.bad += u64::from(response?.content.len() != spec.bytes);
        }
        Ok(findings)
    }

    async fn large(&self, session: &SessionId, spec: &Spec) -> Result<Findings, Error> {
        let content = spec::text(spec.bytes);
        self.conn
            .write_text_file(WriteTextFileRequest::new(
                session.clone(),
                spec::WRITE_PATH,
                content,
            ))
            .await?;
        let update = SessionUpdate::agent_message(spec::text(spec.update_bytes));
        self.conn
            .session_notification(SessionNotification::new(session.clone(), update))
            .await?;
        Ok(Findings {
            done: 2,
            ..Findings::default()
        })
    }
}

// ---------------------------------------------------------------------------
// The floor: the same messages with serde_json over buffered std pipes.

type In = LineIn<BufReader<std::fs::File>>;
type Out = BufWriter<std::fs::File>;

fn floor_agent() -> io::Result<()> {
    // Own the pipes directly (duplicated descriptors), bypassing std's
    // line-buffered stdout and its 8 KiB stdin buffer.
    let stdin = std::fs::File::from(io::stdin().as_fd().try_clone_to_owned()?);
    let stdout = std::fs::File::from(io::stdout().as_fd().try_clone_to_owned()?);
    let mut input: In = LineIn::new(BufReader::with_capacity(crate::BUFFER, stdin));
    let mut out: Out = BufWriter::with_capacity(crate::BUFFER, stdout);

    let (prompt_id, request): (i64, PromptRequest) = {
        let msg: InRequest<PromptRequest> = input.next()?;
        wire::expect(&msg.jsonrpc, &msg.method, "session/prompt")?;
        (msg.id, msg.params)
    };
    let spec = prompt_spec(&request).map_err(io::Error::other)?;
    let session = request.session_id;
    let findings = match spec.workload {
        Workload::Stream => floor_stream(&mut out, &session, &spec)?,
        Workload::Rpc => floor_rpc(&mut input, &mut out, &session, &spec)?,
        Workload::Concurrent => floor_concurrent(&mut input, &mut out, &session, &spec)?,
        Workload::Large => floor_large(&mut input, &mut out, &session, &spec)?,
    };
    let response = PromptResponse::new(StopReason::EndTurn).meta(findings.into_meta());
    wire::write_line(
        &mut out,
        &OutResponse {
            jsonrpc: "2.0",
            id: prompt_id,
            result: &response,
        },
    )?;
    out.flush()?;
    // Wait for the client to close the pipe, as the ACP agent does.
    while input.next::<serde_json::Value>().is_ok() {}
    Ok(())
}

fn notify<T: serde::Serialize>(out: &mut Out, method: &str, params: &T) -> io::Result<()> {
    let msg = OutNotification {
        jsonrpc: "2.0",
        method,
        params,
    };
    wire::write_line(out, &msg).map(drop)
}

fn request<T: serde::Serialize>(
    out: &mut Out,
    id: i64,
    method: &str,
    params: &T,
) -> io::Result<()> {
    let msg = OutRequest {
        jsonrpc: "2.0",
        id,
        method,
        params,
    };
    wire::write_line(out, &msg).map(drop)
}

fn read_response(input: &mut In, id: i64, bytes: usize) -> io::Result<bool> {
    let msg: InResponse<ReadTextFileResponse> = input.next()?;
    if msg.jsonrpc != "2.0" || msg.id != id {
        return Err(io::Error::other(format!(
            "unexpected response id {}",
            msg.id
        )));
    }
    Ok(msg.result.content.len() == bytes)
}

fn floor_stream(out: &mut Out, session: &SessionId, spec: &Spec) -> io::Result<Findings> {
    let text = spec::text(spec.bytes);
    for _ in 0..spec.count {
        let update = SessionUpdate::agent_message(text.clone());
        let params = SessionNotification::new(session.clone(), update);
        notify(out, "session/update", &params)?;
    }
    Ok(Findings {
        done: spec.count as u64,
        ..Findings::default()
    })
}

fn floor_rpc(
    input: &mut In,
    out: &mut Out,
    session: &SessionId,
    spec: &Spec,
) -> io::Result<Findings> {
    let mut findings = Findings {
        latencies_ns: Vec::with_capacity(spec.count),
        ..Findings::default()
    };
    for id in 0..spec.count as i64 {
        let started = Instant::now();
        let params = ReadTextFileRequest::new(session.clone(), READ_PATH);
        request(out, id, "fs/read_text_file", &params)?;
        out.flush()?;
        let good = read_response(input, id, spec.bytes)?;
        findings
            .latencies_ns
            .push(started.elapsed().as_nanos() as u64);
        findings.done += 1;
        findings.bad += u64::from(!good);
    }
    Ok(findings)
}

fn floor_concurrent(
    input: &mut In,
    out: &mut Out,
    session: &SessionId,
    spec: &Spec,
) -> io::Result<Findings> {
    // Write every request, then read every response. A second thread does
    // the writing: pipes hold only 64 KiB, so writing everything before
    // reading anything would deadlock once both pipes are full.
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| -> io::Result<()> {
            for id in 0..spec.count as i64 {
                let params = ReadTextFileRequest::new(session.clone(), READ_PATH);
                request(out, id, "fs/read_text_file", &params)?;
            }
            out.flush()
        });
        let mut findings = Findings::default();
        for id in 0..spec.count as i64 {
            let good = read_response(input, id, spec.bytes)?;
            findings.done += 1;
            findings.bad += u64::from(!good);
        }
        writer.join().expect("writer thread")?;
        Ok(findings)
    })
}

fn floor_large(
    input: &mut In,
    out: &mut Out,
    session: &SessionId,
    spec: &Spec,
) -> io::Result<Findings> {
    let content = spec::text(spec.bytes);
    let params = WriteTextFileRequest::new(session.clone(), spec::WRITE_PATH, content);
    request(out, 1, "fs/write_text_file", &params)?;
    drop(params);
    out.flush()?;
    let msg: InResponse<WriteTextFileResponse> = input.next()?;
    if msg.jsonrpc != "2.0" || msg.id != 1 {
        return Err(io::Error::other("unexpected write response"));
    }
    let update = SessionUpdate::agent_message(spec::text(spec.update_bytes));
    notify(
        out,
        "session/update",
        &SessionNotification::new(session.clone(), update),
    )?;
    Ok(Findings {
        done: 2,
        ..Findings::default()
    })
}
