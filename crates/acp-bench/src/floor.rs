//! The floor: the same work as the runtime, with nothing of ours.
//!
//! It shares no code with `acp` or `acp-schema`: its messages are its own
//! small structs, serialised with serde_json in the field order the runtime
//! uses (so both move the same bytes), and each incoming line is parsed in
//! one pass into minimal *borrowed* structs that hold the method, the id and
//! the few fields the workload needs, skipping the rest. It has no RPC
//! machinery: no tasks, channels, id table or async I/O, and it knows the
//! sequence of messages in advance. Request/response pairs are a line
//! written, flushed, and a line read; for W3 a second agent thread writes
//! all requests while the main thread reads all responses (with one thread,
//! both 64 KiB pipes would fill up and deadlock).
//!
//! This is the cost of the JSON alone, the bar the runtime is measured
//! against: what the runtime adds on top (envelope routing, typed decoding
//! of whole messages into owned values, concurrency, ordering) shows up in
//! full in the ratios.
//!
//! The same floor runs a second way, [`Io::Tokio`] (the `tokio-floor`
//! row): every line of the logic is the same, but each read and write of a
//! pipe waits in Tokio's reactor (`epoll`, on one current-thread runtime
//! per process, which W3's second agent thread shares) instead of blocking
//! in the system call. It separates
//! what any program on Tokio's pipes pays from what the runtime adds: a
//! blocked `read` is one system call, a read through the reactor is a
//! `read`, an `epoll_wait` when it finds nothing, and the runtime's
//! bookkeeping around both.

use std::borrow::Cow;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

use crate::spec::{self, Findings, READ_PATH, SESSION_ID, Spec, WRITE_PATH, Workload};

// ---------------------------------------------------------------------------
// Outgoing messages, in the runtime's field order.

#[derive(Serialize)]
struct Request<'a, P> {
    jsonrpc: &'static str,
    id: i64,
    method: &'a str,
    params: P,
}

#[derive(Serialize)]
struct Notification<'a, P> {
    jsonrpc: &'static str,
    method: &'a str,
    params: P,
}

#[derive(Serialize)]
struct Response<R> {
    jsonrpc: &'static str,
    id: i64,
    result: R,
}

#[derive(Serialize)]
struct TextBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct PromptParams<'a> {
    #[serde(rename = "sessionId")]
    session_id: &'a str,
    prompt: [TextBlock<'a>; 1],
}

#[derive(Serialize)]
struct UpdateParams<'a> {
    #[serde(rename = "sessionId")]
    session_id: &'a str,
    update: MessageChunk<'a>,
}

#[derive(Serialize)]
struct MessageChunk<'a> {
    #[serde(rename = "sessionUpdate")]
    kind: &'static str,
    content: TextBlock<'a>,
}

#[derive(Serialize)]
struct ReadParams<'a> {
    #[serde(rename = "sessionId")]
    session_id: &'a str,
    path: &'a str,
}

#[derive(Serialize)]
struct WriteParams<'a> {
    #[serde(rename = "sessionId")]
    session_id: &'a str,
    path: &'a str,
    content: &'a str,
}

#[derive(Serialize)]
struct ReadResult<'a> {
    content: &'a str,
}

#[derive(Serialize)]
struct Empty {}

#[derive(Serialize)]
struct PromptResult {
    #[serde(rename = "stopReason")]
    stop_reason: &'static str,
    #[serde(rename = "_meta")]
    meta: Findings,
}

// ---------------------------------------------------------------------------
// Incoming messages: borrowed, and only the fields needed.

#[derive(Deserialize)]
struct InPrompt<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: i64,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow)]
    params: InPromptParams<'a>,
}

#[derive(Deserialize)]
struct InPromptParams<'a> {
    #[serde(borrow)]
    prompt: Vec<InTextBlock<'a>>,
}

#[derive(Deserialize)]
struct InTextBlock<'a> {
    #[serde(borrow, default)]
    text: Cow<'a, str>,
}

#[derive(Deserialize)]
struct InUpdate<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow)]
    params: InUpdateParams<'a>,
}

#[derive(Deserialize)]
struct InUpdateParams<'a> {
    #[serde(borrow)]
    update: InChunk<'a>,
}

#[derive(Deserialize)]
struct InChunk<'a> {
    #[serde(borrow, rename = "sessionUpdate")]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    content: InTextBlock<'a>,
}

#[derive(Deserialize)]
struct InRequest<'a, P> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: i64,
    #[serde(borrow)]
    method: Cow<'a, str>,
    params: P,
}

#[derive(Deserialize)]
struct InContent<'a> {
    #[serde(borrow)]
    content: Cow<'a, str>,
}

#[derive(Deserialize)]
struct InResponse<R> {
    id: i64,
    result: R,
}

#[derive(Deserialize)]
struct InPromptResult {
    #[serde(rename = "_meta")]
    meta: Findings,
}

fn check(jsonrpc: &str, method: &str, wanted: &str) -> io::Result<()> {
    if jsonrpc == "2.0" && method == wanted {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "expected a {wanted} message, got method {method:?} (jsonrpc {jsonrpc:?})"
        )))
    }
}

// ---------------------------------------------------------------------------
// Line I/O.

/// Writes `value` as one JSON line; returns the bytes written.
fn write_line<W: Write, T: Serialize>(out: &mut W, value: &T) -> io::Result<u64> {
    struct Counting<'a, W> {
        inner: &'a mut W,
        n: u64,
    }
    impl<W: Write> Write for Counting<'_, W> {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = self.inner.write(buf)?;
            self.n += n as u64;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            self.inner.flush()
        }
    }
    let mut counting = Counting { inner: out, n: 0 };
    serde_json::to_writer(&mut counting, value)?;
    counting.write_all(b"\n")?;
    Ok(counting.n)
}

/// Reads lines into a reused buffer and parses each in place.
struct Lines<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    /// Bytes read so far, newlines included.
    bytes: u64,
}

impl<R: io::Read> Lines<R> {
    fn new(reader: R) -> Self {
        Lines {
            reader: BufReader::with_capacity(crate::BUFFER, reader),
            line: Vec::new(),
            bytes: 0,
        }
    }

    /// Whether the next line is already buffered (no read would block).
    fn has_buffered(&self) -> bool {
        !self.reader.buffer().is_empty()
    }

    fn next<'s, T: Deserialize<'s>>(&'s mut self) -> io::Result<T> {
        self.line.clear();
        let n = self.reader.read_until(b'\n', &mut self.line)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the peer closed the pipe",
            ));
        }
        self.bytes += n as u64;
        serde_json::from_slice(&self.line).map_err(io::Error::other)
    }
}

// ---------------------------------------------------------------------------
// Waiting on the pipes.

/// How the floor waits for a pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Io {
    /// In `read(2)` and `write(2)` themselves.
    Blocking,
    /// In Tokio's reactor (see the module docs).
    Tokio,
}

impl Io {
    /// The agent's command-line flag for this floor.
    pub fn agent_flag(self) -> &'static str {
        match self {
            Io::Blocking => "--floor",
            Io::Tokio => "--floor-tokio",
        }
    }

    /// The read and write ends of a pipe pair, waiting the chosen way.
    fn pipes(self, read: OwnedFd, write: OwnedFd) -> io::Result<(PipeIn, PipeOut)> {
        match self {
            Io::Blocking => Ok((
                PipeIn::Blocking(std::fs::File::from(read)),
                PipeOut::Blocking(std::fs::File::from(write)),
            )),
            Io::Tokio => {
                let runtime = Arc::new(
                    tokio::runtime::Builder::new_current_thread()
                        .enable_io()
                        .build()?,
                );
                let _entered = runtime.enter();
                let read = tokio::net::unix::pipe::Receiver::from_owned_fd(read)?;
                let write = tokio::net::unix::pipe::Sender::from_owned_fd(write)?;
                Ok((
                    PipeIn::Tokio(runtime.clone(), read),
                    PipeOut::Tokio(runtime, write),
                ))
            }
        }
    }
}

/// The read end of a pipe, waited on as its [`Io`] says.
enum PipeIn {
    Blocking(std::fs::File),
    Tokio(
        Arc<tokio::runtime::Runtime>,
        tokio::net::unix::pipe::Receiver,
    ),
}

/// The write end of a pipe, waited on as its [`Io`] says.
enum PipeOut {
    Blocking(std::fs::File),
    Tokio(Arc<tokio::runtime::Runtime>, tokio::net::unix::pipe::Sender),
}

impl io::Read for PipeIn {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use tokio::io::AsyncReadExt;
        match self {
            PipeIn::Blocking(file) => file.read(buf),
            PipeIn::Tokio(runtime, pipe) => runtime.block_on(pipe.read(buf)),
        }
    }
}

impl Write for PipeOut {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        use tokio::io::AsyncWriteExt;
        match self {
            PipeOut::Blocking(file) => file.write(buf),
            PipeOut::Tokio(runtime, pipe) => runtime.block_on(pipe.write(buf)),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// The agent side.

type AgentIn = Lines<PipeIn>;
type AgentOut = BufWriter<PipeOut>;

/// The floor agent: reads the prompt, does the workload, answers, waiting
/// on its pipes as `io` says.
pub fn agent(io: Io) -> io::Result<()> {
    // Own the pipes directly (duplicated descriptors), bypassing std's
    // line-buffered stdout and its 8 KiB stdin buffer.
    let (stdin, stdout) = io.pipes(
        io::stdin().as_fd().try_clone_to_owned()?,
        io::stdout().as_fd().try_clone_to_owned()?,
    )?;
    let mut input: AgentIn = Lines::new(stdin);
    let mut out: AgentOut = BufWriter::with_capacity(crate::BUFFER, stdout);

    let (prompt_id, spec) = {
        let msg: InPrompt<'_> = input.next()?;
        check(&msg.jsonrpc, &msg.method, "session/prompt")?;
        let text = msg.params.prompt.first().map_or("", |b| &b.text);
        (msg.id, Spec::parse(text).map_err(io::Error::other)?)
    };
    let findings = match spec.workload {
        Workload::Stream => agent_stream(&mut out, &spec)?,
        Workload::Rpc => agent_rpc(&mut input, &mut out, &spec)?,
        Workload::Concurrent => agent_concurrent(&mut input, &mut out, &spec)?,
        Workload::Large => agent_large(&mut input, &mut out, &spec)?,
    };
    write_line(
        &mut out,
        &Response {
            jsonrpc: "2.0",
            id: prompt_id,
            result: PromptResult {
                stop_reason: "end_turn",
                meta: findings,
            },
        },
    )?;
    out.flush()?;
    // Wait for the client to close the pipe, as the ACP agent does.
    while input.next::<IgnoredAny>().is_ok() {}
    Ok(())
}

fn update(text: &str) -> Notification<'static, UpdateParams<'_>> {
    Notification {
        jsonrpc: "2.0",
        method: "session/update",
        params: UpdateParams {
            session_id: SESSION_ID,
            update: MessageChunk {
                kind: "agent_message_chunk",
                content: TextBlock { kind: "text", text },
            },
        },
    }
}

fn read_request(id: i64) -> Request<'static, ReadParams<'static>> {
    Request {
        jsonrpc: "2.0",
        id,
        method: "fs/read_text_file",
        params: ReadParams {
            session_id: SESSION_ID,
            path: READ_PATH,
        },
    }
}

/// Reads the response to read request `id`; true if its content checks out.
fn read_response(input: &mut AgentIn, id: i64, bytes: usize) -> io::Result<bool> {
    let msg: InResponse<InContent<'_>> = input.next()?;
    if msg.id != id {
        return Err(io::Error::other(format!(
            "unexpected response id {}",
            msg.id
        )));
    }
    Ok(msg.result.content.len() == bytes)
}

fn agent_stream(out: &mut AgentOut, spec: &Spec) -> io::Result<Findings> {
    let text = spec::text(spec.bytes);
    for _ in 0..spec.count {
        write_line(out, &update(&text))?;
    }
    Ok(Findings {
        done: spec.count as u64,
        ..Findings::default()
    })
}

fn agent_rpc(input: &mut AgentIn, out: &mut AgentOut, spec: &Spec) -> io::Result<Findings> {
    let mut latencies = Vec::with_capacity(spec.count);
    let mut findings = Findings::default();
    for id in 0..spec.count as i64 {
        let started = Instant::now();
        write_line(out, &read_request(id))?;
        out.flush()?;
        let good = read_response(input, id, spec.bytes)?;
        latencies.push(started.elapsed().as_nanos() as u64);
        findings.done += 1;
        findings.bad += u64::from(!good);
    }
    findings.p50_ns = crate::sys::quantile(&mut latencies, 0.50);
    findings.p99_ns = crate::sys::quantile(&mut latencies, 0.99);
    Ok(findings)
}

fn agent_concurrent(input: &mut AgentIn, out: &mut AgentOut, spec: &Spec) -> io::Result<Findings> {
    std::thread::scope(|scope| {
        let writer = scope.spawn(|| -> io::Result<()> {
            for id in 0..spec.count as i64 {
                write_line(out, &read_request(id))?;
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

fn agent_large(input: &mut AgentIn, out: &mut AgentOut, spec: &Spec) -> io::Result<Findings> {
    let content = spec::text(spec.bytes);
    let request = Request {
        jsonrpc: "2.0",
        id: 1,
        method: "fs/write_text_file",
        params: WriteParams {
            session_id: SESSION_ID,
            path: WRITE_PATH,
            content: &content,
        },
    };
    write_line(out, &request)?;
    drop(content);
    out.flush()?;
    let msg: InResponse<IgnoredAny> = input.next()?;
    if msg.id != 1 {
        return Err(io::Error::other("unexpected write response"));
    }
    write_line(out, &update(&spec::text(spec.update_bytes)))?;
    Ok(Findings {
        done: 2,
        ..Findings::default()
    })
}

// ---------------------------------------------------------------------------
// The client side.

/// What a floor client run saw.
pub struct Seen {
    /// The prompt turn.
    pub wall: Duration,
    /// Bytes on the wire during the turn, both directions.
    pub wire_bytes: u64,
    /// The agent's peak RSS, as it reported it.
    pub agent_rss_kib: Option<u64>,
    /// Message chunks received, and their text bytes.
    pub chunks: (u64, u64),
    /// Read requests answered.
    pub reads: u64,
    /// Write requests received, and how many had the wrong length.
    pub writes: (u64, u64),
    /// What the agent reported.
    pub findings: Findings,
}

/// Runs one workload with the floor client against the floor agent at
/// `agent` (started with [`Io::agent_flag`]), both waiting as `io` says.
pub fn client(agent: &Path, spec: Spec, io: Io) -> io::Result<Seen> {
    let mut child = Command::new(agent)
        .arg(io.agent_flag())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let stderr = child.stderr.take().expect("piped stderr");
    let stderr_reader = std::thread::spawn(move || {
        let mut rss = None;
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            match crate::sys::parse_agent_rss(&line) {
                Some(kib) => rss = Some(kib),
                None => eprintln!("[agent] {line}"),
            }
        }
        rss
    });
    let (read, write) = io.pipes(
        child.stdout.take().expect("stdout").into(),
        child.stdin.take().expect("stdin").into(),
    )?;
    let mut out = BufWriter::with_capacity(crate::BUFFER, write);
    let mut input = Lines::new(read);
    let file = match spec.workload {
        Workload::Rpc | Workload::Concurrent => spec::text(spec.bytes),
        Workload::Stream | Workload::Large => String::new(),
    };
    let (mut chunks, mut reads, mut writes) = ((0, 0), 0, (0, 0));
    let mut written = 0;

    let started = Instant::now();
    let prompt_text = spec.to_prompt();
    let prompt = Request {
        jsonrpc: "2.0",
        id: 0,
        method: "session/prompt",
        params: PromptParams {
            session_id: SESSION_ID,
            prompt: [TextBlock {
                kind: "text",
                text: &prompt_text,
            }],
        },
    };
    written += write_line(&mut out, &prompt)?;
    out.flush()?;
    let mut chunk = |input: &mut Lines<_>| -> io::Result<()> {
        let msg: InUpdate<'_> = input.next()?;
        check(&msg.jsonrpc, &msg.method, "session/update")?;
        if msg.params.update.kind != "agent_message_chunk" {
            return Err(io::Error::other("not a message chunk"));
        }
        chunks.0 += 1;
        chunks.1 += msg.params.update.content.text.len() as u64;
        Ok(())
    };
    match spec.workload {
        Workload::Stream => {
            for _ in 0..spec.count {
                chunk(&mut input)?;
            }
        }
        Workload::Rpc | Workload::Concurrent => {
            for _ in 0..spec.count {
                // Flush before a read could block, so answers go out in
                // batches when requests come in batches.
                if !input.has_buffered() {
                    out.flush()?;
                }
                let id = {
                    let msg: InRequest<'_, IgnoredAny> = input.next()?;
                    check(&msg.jsonrpc, &msg.method, "fs/read_text_file")?;
                    msg.id
                };
                reads += 1;
                let answer = Response {
                    jsonrpc: "2.0",
                    id,
                    result: ReadResult { content: &file },
                };
                written += write_line(&mut out, &answer)?;
            }
            out.flush()?;
        }
        Workload::Large => {
            let id = {
                let msg: InRequest<'_, InContent<'_>> = input.next()?;
                check(&msg.jsonrpc, &msg.method, "fs/write_text_file")?;
                writes.0 += 1;
                writes.1 += u64::from(msg.params.content.len() != spec.bytes);
                msg.id
            };
            let answer = Response {
                jsonrpc: "2.0",
                id,
                result: Empty {},
            };
            written += write_line(&mut out, &answer)?;
            out.flush()?;
            chunk(&mut input)?;
        }
    }
    let findings = {
        let msg: InResponse<InPromptResult> = input.next()?;
        if msg.id != 0 {
            return Err(io::Error::other("unexpected prompt response"));
        }
        msg.result.meta
    };
    let wall = started.elapsed();
    let wire_bytes = written + input.bytes;

    drop(out); // End of input: the agent exits.
    child.wait()?;
    Ok(Seen {
        wall,
        wire_bytes,
        agent_rss_kib: stderr_reader.join().unwrap_or(None),
        chunks,
        reads,
        writes,
        findings,
    })
}
