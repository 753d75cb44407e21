//! Raw JSON-RPC over a pair of byte streams: exact lines out, every line in.
//!
//! A [`Wire`] writes what it is told, byte for byte, and reads the peer's
//! lines one at a time. Every line both ways goes to the run's [`Log`] with
//! its strict [`Findings`], in the order it was
//! written or read, and to the `--trace` file when there is one. Nothing is
//! decoded tolerantly on the way: what a check sees is what the peer sent.

use crate::strict::{self, Envelope, Findings, Handler};
use serde_json::Value;
use std::collections::HashMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The longest line read; a longer one ends the reading with a framing error.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// Which way a line went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// From the checker to the peer.
    Out,
    /// From the peer to the checker.
    In,
}

/// One line exchanged.
#[derive(Debug, Clone)]
pub struct Event {
    /// Its place in the run (all wires share one count).
    pub seq: usize,
    /// Which wire (peer process) it went over.
    pub wire: usize,
    /// Which way.
    pub dir: Dir,
    /// When, since the run started.
    pub at: Duration,
    /// The line, without its newline.
    pub line: String,
    /// Its envelope, when it is a JSON-RPC message.
    pub envelope: Option<Envelope>,
    /// The parsed line, when it is JSON.
    pub value: Option<Value>,
    /// What strict judgement found (lines from the peer only).
    pub findings: Findings,
}

impl Event {
    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match &self.envelope {
            Some(Envelope::Request { method, .. } | Envelope::Notification { method }) => {
                Some(method)
            }
            _ => None,
        }
    }

    /// The `params` of a request or notification.
    pub fn params(&self) -> Option<&Value> {
        self.value.as_ref()?.get("params")
    }
}

/// Every line of a run, shared by its wires, and whether the peer stopped answering.
#[derive(Debug)]
pub struct Log {
    start: Instant,
    events: Mutex<Vec<Event>>,
    trace: Mutex<Option<std::fs::File>>,
    /// Why the peer stopped answering (a request one of its processes left
    /// unanswered for the full timeout).
    stalled: Mutex<Option<String>>,
    /// How many waits were cut short because the peer had stopped answering.
    cut_short: AtomicUsize,
}

/// What a reason says when the peer stopped answering: the checks that
/// needed it are NOT TESTED rather than failed or skipped.
pub const STOPPED_ANSWERING: &str = "stopped answering";

const NO_RESPONSE: &str = "no response within";

impl Log {
    /// A log; `trace` receives every line as JSON (`{"wire","dir","ms","line"}`).
    pub fn new(trace: Option<std::fs::File>) -> Arc<Log> {
        Arc::new(Log {
            start: Instant::now(),
            events: Mutex::new(Vec::new()),
            trace: Mutex::new(trace),
            stalled: Mutex::default(),
            cut_short: AtomicUsize::new(0),
        })
    }

    /// Marks the peer as stopped answering, and why (the first reason
    /// stays). It holds for every process of the peer: one that stopped
    /// answering costs one timeout, not one per process started later.
    pub fn stall(&self, why: String) {
        self.stalled.lock().unwrap().get_or_insert(why);
    }

    /// Why the peer stopped answering, if it did.
    pub fn stalled(&self) -> Option<String> {
        self.stalled.lock().unwrap().clone()
    }

    /// How many waits so far were cut short because the peer had stopped answering.
    pub fn cut_short(&self) -> usize {
        self.cut_short.load(Ordering::Relaxed)
    }

    /// Counts a wait cut short.
    pub fn note_cut_short(&self) {
        self.cut_short.fetch_add(1, Ordering::Relaxed);
    }

    fn push(&self, mut event: Event) -> usize {
        event.at = self.start.elapsed();
        let mut events = self.events.lock().unwrap();
        event.seq = events.len();
        if let Some(file) = self.trace.lock().unwrap().as_mut() {
            let dir = match event.dir {
                Dir::Out => "out",
                Dir::In => "in",
            };
            let record = serde_json::json!({
                "wire": event.wire,
                "dir": dir,
                "ms": event.at.as_millis() as u64,
                "line": event.line,
            });
            let _ = writeln!(file, "{record}");
        }
        let seq = event.seq;
        events.push(event);
        seq
    }

    /// The number of lines so far (the `seq` the next one gets).
    pub fn len(&self) -> usize {
        self.events.lock().unwrap().len()
    }

    /// Whether nothing was exchanged yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The lines from `from` on.
    pub fn since(&self, from: usize) -> Vec<Event> {
        let events = self.events.lock().unwrap();
        events[from.min(events.len())..].to_vec()
    }

    /// Every line.
    pub fn all(&self) -> Vec<Event> {
        self.since(0)
    }
}

/// What the reader saw.
#[derive(Debug)]
enum Read {
    Line(String),
    /// Not UTF-8, or longer than [`MAX_LINE`].
    Bad(String),
    Eof,
}

/// A message received, as the pump hands it over.
#[derive(Debug, Clone)]
pub struct Received {
    /// Its place in the log.
    pub seq: usize,
    /// The parsed line (None when it was not JSON).
    pub value: Option<Value>,
    /// Its envelope.
    pub envelope: Option<Envelope>,
    /// The line.
    pub line: String,
    /// A response whose id (not null) matches no request sent and not yet
    /// answered.
    pub unknown_id: bool,
}

/// How the peer's requests are answered: a function from (method, params)
/// to a result or an error object, run in a task of its own.
pub type Answer =
    Arc<dyn Fn(String, Value) -> futures_lite::BoxFuture<Result<Value, Value>> + Send + Sync>;

mod futures_lite {
    /// A boxed future.
    pub type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>;
}

pub use futures_lite::BoxFuture;

/// One raw JSON-RPC peer.
pub struct Wire {
    /// Its number in the log.
    pub id: usize,
    log: Arc<Log>,
    table: &'static strict::Table,
    /// The side the peer is (what it may send is judged by this).
    peer_side: Handler,
    out: mpsc::UnboundedSender<Option<Vec<u8>>>,
    incoming: mpsc::UnboundedReceiver<Read>,
    /// The method of every request sent and not yet answered, by id.
    pending: Arc<Mutex<HashMap<String, String>>>,
    answer: Option<Answer>,
    /// Requests from the peer are handed over unanswered (the checker is the agent).
    manual: bool,
    /// A wait for a response at least this long that passes unanswered
    /// marks the peer as stopped answering (see [`Wire::stall_after`]).
    stall_after: Option<Duration>,
    next_id: i64,
    closed: bool,
}

fn id_key(id: &Value) -> String {
    id.to_string()
}

impl Wire {
    /// A wire over `reader`/`writer` to a peer that is `peer_side`
    /// (Agent for an agent under test).
    pub fn new<R, W>(id: usize, log: Arc<Log>, peer_side: Handler, reader: R, writer: W) -> Wire
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out, mut out_rx) = mpsc::unbounded_channel::<Option<Vec<u8>>>();
        tokio::spawn(async move {
            let mut writer = writer;
            while let Some(Some(bytes)) = out_rx.recv().await {
                if writer.write_all(&bytes).await.is_err() || writer.flush().await.is_err() {
                    break;
                }
            }
            let _ = writer.shutdown().await;
        });
        let (tx, incoming) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut reader = BufReader::new(reader);
            loop {
                let mut buf = Vec::new();
                let read = {
                    let mut limited = (&mut reader).take(MAX_LINE as u64 + 1);
                    limited.read_until(b'\n', &mut buf).await
                };
                match read {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(Read::Eof);
                        break;
                    }
                    Ok(_) => {}
                }
                if buf.last() != Some(&b'\n') && buf.len() > MAX_LINE {
                    let _ = tx.send(Read::Bad(format!("a line longer than {MAX_LINE} bytes")));
                    let _ = tx.send(Read::Eof);
                    break;
                }
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                }
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
                let read = match String::from_utf8(buf) {
                    Ok(line) => Read::Line(line),
                    Err(e) => Read::Bad(format!(
                        "a line that is not UTF-8: {}",
                        String::from_utf8_lossy(e.as_bytes())
                    )),
                };
                if tx.send(read).is_err() {
                    break;
                }
            }
        });
        Wire {
            id,
            log,
            table: strict::Table::v1(),
            peer_side,
            out,
            incoming,
            pending: Arc::default(),
            answer: None,
            manual: false,
            stall_after: None,
            next_id: 1,
            closed: false,
        }
    }

    /// Answers the peer's requests with `answer` from now on (without one,
    /// they are answered -32601).
    pub fn answer_with(&mut self, answer: Answer) {
        self.answer = Some(answer);
    }

    /// From now on, a request left unanswered for `timeout` (the full
    /// per-request timeout) marks the peer as stopped answering (in the
    /// [`Log`], for all its wires): later waits for a response end at once,
    /// and the checks that needed them are NOT TESTED. The peer costs one
    /// timeout, not one per request.
    pub fn stall_after(&mut self, timeout: Duration) {
        self.stall_after = Some(timeout);
    }

    /// Hands the peer's requests over unanswered from now on: the caller
    /// answers them (with [`respond`](Self::respond)).
    pub fn answer_manually(&mut self) {
        self.manual = true;
    }

    /// Answers the peer's request `id` with a `result`, or an `error` object.
    pub fn respond(&self, id: &Value, answer: Result<Value, Value>) -> usize {
        let msg = match answer {
            Ok(result) => serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error}),
        };
        self.send_line(&msg.to_string())
    }

    /// The run's log.
    pub fn log(&self) -> &Arc<Log> {
        &self.log
    }

    fn record_out(&self, line: &str) -> usize {
        let value: Option<Value> = serde_json::from_str(line).ok();
        self.log.push(Event {
            seq: 0,
            wire: self.id,
            dir: Dir::Out,
            at: Duration::ZERO,
            line: line.to_string(),
            envelope: None,
            value,
            findings: Findings::default(),
        })
    }

    /// Writes `line` and a newline, exactly.
    pub fn send_line(&self, line: &str) -> usize {
        let seq = self.record_out(line);
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        let _ = self.out.send(Some(bytes));
        seq
    }

    /// Writes raw bytes (no newline added); logged as one line.
    pub fn send_bytes(&self, bytes: &[u8]) -> usize {
        let seq = self.record_out(&String::from_utf8_lossy(bytes));
        let _ = self.out.send(Some(bytes.to_vec()));
        seq
    }

    /// Closes the peer's input (its stdin).
    pub fn close_input(&self) {
        let _ = self.out.send(None);
    }

    /// A fresh numeric id.
    pub fn fresh_id(&mut self) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        Value::from(id)
    }

    /// Sends a request with `id`; returns its place in the log.
    pub fn send_request(&mut self, id: Value, method: &str, params: Value) -> usize {
        self.pending
            .lock()
            .unwrap()
            .insert(id_key(&id), method.to_string());
        let msg =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&msg.to_string())
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) -> usize {
        let msg = serde_json::json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send_line(&msg.to_string())
    }

    /// Whether the peer's output ended.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The next message from the peer, within `wait`. Requests from the peer
    /// are answered (in tasks of their own) before being handed over.
    /// `None` at the end of the output or when `wait` passes.
    pub async fn next(&mut self, wait: Duration) -> Option<Received> {
        if self.closed {
            return None;
        }
        let read = match tokio::time::timeout(wait, self.incoming.recv()).await {
            Ok(Some(read)) => read,
            Ok(None) => Read::Eof,
            Err(_) => return None,
        };
        let (line, bad) = match read {
            Read::Line(line) => (line, None),
            Read::Bad(why) => (why.clone(), Some(why)),
            Read::Eof => {
                self.closed = true;
                return None;
            }
        };
        let pending = self.pending.clone();
        let (envelope, mut findings) = match &bad {
            Some(why) => {
                let mut f = Findings::default();
                f.error("", why.clone());
                (None, f)
            }
            None => strict::check_line(self.table, &line, self.peer_side, &|id| {
                pending.lock().unwrap().get(&id_key(id)).cloned()
            }),
        };
        if line.is_empty() && bad.is_none() {
            findings = Findings::default();
            findings.note("", "an empty line".into());
        }
        let value: Option<Value> = serde_json::from_str(&line).ok();
        let mut unknown_id = false;
        if let Some(Envelope::Response { id, .. }) = &envelope {
            let known = self.pending.lock().unwrap().remove(&id_key(id)).is_some();
            unknown_id = !known && !id.is_null();
        }
        let seq = self.log.push(Event {
            seq: 0,
            wire: self.id,
            dir: Dir::In,
            at: Duration::ZERO,
            line: line.clone(),
            envelope: envelope.clone(),
            value: value.clone(),
            findings,
        });
        if let Some(Envelope::Request { id, method }) = &envelope
            && !self.manual
        {
            self.answer_request(id.clone(), method.clone(), value.as_ref());
        }
        Some(Received {
            seq,
            value,
            envelope,
            line,
            unknown_id,
        })
    }

    fn answer_request(&self, id: Value, method: String, value: Option<&Value>) {
        let params = value
            .and_then(|v| v.get("params"))
            .cloned()
            .unwrap_or(Value::Null);
        let out = self.out.clone();
        let log = self.log.clone();
        let wire = self.id;
        let answer = self.answer.clone();
        tokio::spawn(async move {
            let result = match answer {
                Some(answer) => answer(method, params).await,
                None => Err(serde_json::json!({"code": -32601, "message": "method not found"})),
            };
            let msg = match result {
                Ok(result) => serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err(error) => serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error}),
            };
            let line = msg.to_string();
            log.push(Event {
                seq: 0,
                wire,
                dir: Dir::Out,
                at: Duration::ZERO,
                line: line.clone(),
                envelope: None,
                value: Some(msg),
                findings: Findings::default(),
            });
            let mut bytes = line.into_bytes();
            bytes.push(b'\n');
            let _ = out.send(Some(bytes));
        });
    }

    /// Sends a request and waits up to `wait` for its response, taking
    /// everything else that arrives meanwhile.
    pub async fn call(&mut self, method: &str, params: Value, wait: Duration) -> Call {
        let id = self.fresh_id();
        self.call_with_id(id, method, params, wait).await
    }

    /// [`call`](Self::call) with a chosen id.
    pub async fn call_with_id(
        &mut self,
        id: Value,
        method: &str,
        params: Value,
        wait: Duration,
    ) -> Call {
        let sent = self.send_request(id.clone(), method, params);
        self.wait_response(&id, sent, wait).await
    }

    /// Waits for the response to `id` (sent at log place `sent`). A
    /// response whose id matches no request ends the wait at once (the
    /// call's [`stray`](Call::stray)); so does a peer that already stopped
    /// answering ([`stall_after`](Self::stall_after)).
    pub async fn wait_response(&mut self, id: &Value, sent: usize, wait: Duration) -> Call {
        let mut call = Call {
            sent,
            response: None,
            closed: false,
            stray: None,
            stalled: None,
        };
        if let Some(why) = self.log.stalled() {
            self.log.note_cut_short();
            call.stalled = Some(why);
            return call;
        }
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let Some(got) = self.next(left).await else {
                call.closed = self.closed;
                if !self.closed
                    && let Some(limit) = self.stall_after
                    && wait >= limit
                {
                    let method = self.log.since(sent).first().and_then(|e| {
                        e.value
                            .as_ref()
                            .and_then(|v| v.get("method"))
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    });
                    self.log.stall(format!(
                        "the peer {STOPPED_ANSWERING}: {} (id {id}) got no response within {} s",
                        method.unwrap_or_else(|| "a request".into()),
                        wait.as_secs_f32()
                    ));
                }
                return call;
            };
            if let Some(Envelope::Response { id: got_id, .. }) = &got.envelope {
                if id_key(got_id) == id_key(id) {
                    call.response = Some(got);
                    return call;
                }
                if got.unknown_id {
                    call.stray = Some(got);
                    return call;
                }
            }
        }
    }

    /// Takes whatever arrives for `wait`.
    pub async fn drain(&mut self, wait: Duration) {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() || self.next(left).await.is_none() {
                return;
            }
        }
    }
}

/// The end of a [`Wire::call`].
#[derive(Debug, Clone)]
pub struct Call {
    /// The request's place in the log.
    pub sent: usize,
    /// The response, if it came in time.
    pub response: Option<Received>,
    /// Whether the peer's output ended before it came.
    pub closed: bool,
    /// A response whose id matched no request, which ended the wait.
    pub stray: Option<Received>,
    /// Why the wait did not start: the peer had stopped answering.
    pub stalled: Option<String>,
}

impl Call {
    /// The `result`, if the response has one.
    pub fn result(&self) -> Option<&Value> {
        self.response.as_ref()?.value.as_ref()?.get("result")
    }

    /// The `error`, if the response has one.
    pub fn error(&self) -> Option<&Value> {
        self.response.as_ref()?.value.as_ref()?.get("error")
    }

    /// The response's log place.
    pub fn seq(&self) -> Option<usize> {
        self.response.as_ref().map(|r| r.seq)
    }

    /// Whether nothing ended the wait but the timeout (or it was not
    /// waited for, the peer having stopped answering): no response, no
    /// stray one, and the peer's output still open.
    pub fn unanswered(&self) -> bool {
        self.response.is_none() && self.stray.is_none() && !self.closed
    }

    /// The response line, or why there is none.
    pub fn describe(&self) -> String {
        if let Some(r) = &self.response {
            return r.line.clone();
        }
        if let Some(stray) = &self.stray {
            let id = stray
                .value
                .as_ref()
                .and_then(|v| v.get("id"))
                .map(Value::to_string)
                .unwrap_or_default();
            return format!(
                "a response with id {id}, which matches no request: {}",
                stray.line
            );
        }
        if let Some(why) = &self.stalled {
            return format!("not waited for: {why}");
        }
        if self.closed {
            "the peer closed its output".into()
        } else {
            format!("{NO_RESPONSE} the timeout")
        }
    }
}
