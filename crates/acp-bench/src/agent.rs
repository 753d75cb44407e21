//! The agent process (`acp-bench-agent`): one program, two implementations.
//!
//! - Without arguments it is an ACP agent on `Transport::stdio()`, like any
//!   agent built on the runtime; the prompt text picks the workload.
//! - With `--floor` it is the floor's agent ([`crate::floor`]), and with
//!   `--floor-tokio` the same waiting on its pipes in Tokio's reactor.
//!
//! Either way it ends by writing its peak RSS to standard error
//! ([`AGENT_RSS_PREFIX`](crate::sys::AGENT_RSS_PREFIX)), so the client can
//! report it.
//!
//! The prompt response carries the agent's own findings in `_meta`:
//! `done` (messages sent or round trips completed), `bad` (responses that did
//! not check out) and, for W2, `p50_ns` / `p99_ns` per round trip.

use std::process::ExitCode;
use std::time::Instant;

use acp::schema::AgentSide;
use acp::schema::{
    Error, InitializeRequest, InitializeResponse, Meta, NewSessionRequest, NewSessionResponse,
    PromptRequest, PromptResponse, ProtocolVersion, ReadTextFileRequest, SessionId,
    SessionNotification, SessionUpdate, StopReason, WriteTextFileRequest,
};
use acp::{Agent, AgentSideConnection, RequestContext, Transport};
use futures::StreamExt;
use futures::stream::FuturesUnordered;

use crate::spec::{self, Findings, READ_PATH, SESSION_ID, Spec, Workload};
use crate::sys;

/// Runs the agent process; see the module docs.
pub fn main() -> ExitCode {
    use crate::floor::Io;
    let floor = std::env::args().skip(1).find_map(|a| {
        [Io::Blocking, Io::Tokio]
            .into_iter()
            .find(|io| io.agent_flag() == a)
    });
    let result = match floor {
        Some(io) => crate::floor::agent(io).map_err(|e| e.to_string()),
        None => acp_agent(),
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

/// The findings as the prompt response's `_meta`.
fn into_meta(findings: Findings) -> Meta {
    match serde_json::to_value(findings) {
        Ok(serde_json::Value::Object(map)) => map.into_iter().collect(),
        _ => Meta::new(),
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
    async fn initialize(
        &self,
        _: InitializeRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<InitializeResponse, Error> {
        Ok(InitializeResponse::new(ProtocolVersion::V1))
    }

    async fn new_session(
        &self,
        _: NewSessionRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<NewSessionResponse, Error> {
        Ok(NewSessionResponse::new(SESSION_ID))
    }

    async fn prompt(
        &self,
        request: PromptRequest,
        _cx: RequestContext<AgentSide>,
    ) -> Result<PromptResponse, Error> {
        let spec = prompt_spec(&request).map_err(|e| Error::invalid_params().data(e))?;
        let session = request.session_id;
        let findings = match spec.workload {
            Workload::Stream => self.stream(&session, &spec).await?,
            Workload::Rpc => self.rpc(&session, &spec).await?,
            Workload::Concurrent => self.concurrent(&session, &spec).await?,
            Workload::Large => self.large(&session, &spec).await?,
        };
        Ok(PromptResponse::new(StopReason::EndTurn).meta(into_meta(findings)))
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
        let mut latencies = Vec::with_capacity(spec.count);
        let mut findings = Findings::default();
        for _ in 0..spec.count {
            let started = Instant::now();
            let response = self
                .conn
                .read_text_file(ReadTextFileRequest::new(session.clone(), READ_PATH))
                .await?;
            latencies.push(started.elapsed().as_nanos() as u64);
            findings.done += 1;
            findings.bad += u64::from(response.content.len() != spec.bytes);
        }
        findings.p50_ns = sys::quantile(&mut latencies, 0.50);
        findings.p99_ns = sys::quantile(&mut latencies, 0.99);
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
