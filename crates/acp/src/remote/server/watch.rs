//! For operators: the traffic of a live connection, both ways, for read-only
//! watchers (`GET /connections/{id}/watch`), and the list of connections
//! (`GET /connections`).
//!
//! Each connection keeps its recent traffic in a ring bounded by
//! [`ServerOptions::watch_history_bytes`](super::ServerOptions::watch_history_bytes)
//! (the newest message always stays; `trace`). A watcher reads the ring at its own
//! pace, so a slow one never holds the connection up: what left the ring
//! before it read it is reported as skipped.
//!
//! The stream is in the format of `acp record` (what `acp trace` reads), one
//! JSON object per line: a header, then one record per message.
//!
//! ```text
//! {"acpRecord":1,"started":"2025-01-02T03:04:05.678901Z","agent":["my-agent"],"redacted":false,"recorder":"acp serve","connection":"9b1d…"}
//! {"t":0.000412,"from":"client","line":"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",…}"}
//! {"t":0.013377,"from":"agent","line":"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{…}}"}
//! {"t":2.5,"skipped":12}
//! {"t":9.1,"from":"client","eof":true}
//! {"t":9.1,"from":"agent","eof":true}
//! ```
//!
//! `t` is seconds since the connection opened. `skipped` says how many
//! records this watcher missed. The two `eof` records end the stream when the
//! connection closes. An empty line is sent every 15 s while nothing happens.

use super::conn::Lookup;
use super::lock;
use super::trace::rfc3339;
use super::{Body, Inner, json, text};
use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::watch;

/// How many watchers one connection may have at once.
pub(crate) const MAX_WATCHERS: usize = 16;

/// How often an idle watch stream sends an empty line.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// `GET /connections`: every live connection, for operators.
pub(super) fn list(inner: &Inner) -> Response<Body> {
    let mut entries = lock(&inner.connections).live();
    entries.sort_by_key(|e| e.core().started);
    let connections: Vec<serde_json::Value> = entries
        .iter()
        .map(|entry| {
            let core = entry.core();
            serde_json::json!({
                "id": core.info.id,
                "profile": core.info.profile.to_string(),
                "peer": core.info.peer.to_string(),
                "agent": core.agent,
                "ageSeconds": core.started.elapsed().as_secs(),
                "state": if entry.attached() { "attached" } else { "detached" },
                "messagesIn": core.received.load(Ordering::Relaxed),
                "messagesOut": core.sent.load(Ordering::Relaxed),
                "bufferedBytes": entry.buffered(),
                "watchers": core.trace.watchers.load(Ordering::Relaxed),
            })
        })
        .collect();
    json(
        StatusCode::OK,
        serde_json::json!({ "connections": connections }).to_string(),
    )
}

/// `GET /connections/{id}/watch[?from=start]`: the connection's traffic
/// as it goes, from now, or from the oldest record kept.
pub(super) fn watch(inner: &Inner, id: &str, request: &Request<Incoming>) -> Response<Body> {
    let from_start = match request.uri().query() {
        None | Some("") | Some("from=now") => false,
        Some("from=start") => true,
        Some(_) => {
            return text(
                StatusCode::BAD_REQUEST,
                "the query may only be from=start or from=now",
            );
        }
    };
    let entry = match lock(&inner.connections).lookup(id) {
        Lookup::Live(entry) => entry,
        Lookup::Closed(reason) => {
            return text(
                StatusCode::GONE,
                &format!("the connection closed: {reason}"),
            );
        }
        Lookup::Unknown => return text(StatusCode::NOT_FOUND, "Unknown connection id"),
    };
    let core = Arc::clone(entry.core());
    let trace = &core.trace;
    let taken = trace
        .watchers
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < MAX_WATCHERS).then_some(n + 1)
        });
    if taken.is_err() {
        return text(
            StatusCode::TOO_MANY_REQUESTS,
            &format!("the connection has its maximum of {MAX_WATCHERS} watchers"),
        );
    }
    let string = |text: &str| serde_json::to_string(text).unwrap_or_default();
    let header = format!(
        "{{\"acpRecord\":1,\"started\":{},\"agent\":[{}],\"redacted\":false,\"recorder\":{},\"connection\":{}}}\n",
        string(&rfc3339(trace.started_at)),
        string(&core.agent),
        string(concat!("acp ", env!("CARGO_PKG_VERSION"), " (watch)")),
        string(&core.info.id),
    );
    let watcher = Watcher {
        next: trace.start(from_start),
        changes: trace.made.subscribe(),
        core,
        header: Some(Bytes::from(header.into_bytes())),
        done: false,
    };
    tracing::info!(target: "acp::remote", id, from_start, "a watcher attached");
    let stream = futures::stream::unfold(watcher, |mut watcher| async move {
        let chunk = watcher.next_chunk().await?;
        Some((
            Ok::<_, std::convert::Infallible>(Frame::data(chunk)),
            watcher,
        ))
    });
    let mut response = Response::new(StreamBody::new(stream).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(
        ::http::header::CONTENT_TYPE,
        ::http::HeaderValue::from_static("application/x-ndjson"),
    );
    headers.insert(
        ::http::header::CACHE_CONTROL,
        ::http::HeaderValue::from_static("no-cache"),
    );
    response
}

/// One watcher's place in a trace; gives its place back on drop.
struct Watcher {
    core: Arc<super::conn::Core>,
    next: u64,
    changes: watch::Receiver<u64>,
    header: Option<Bytes>,
    done: bool,
}

impl Watcher {
    async fn next_chunk(&mut self) -> Option<Bytes> {
        if let Some(header) = self.header.take() {
            return Some(header);
        }
        if self.done {
            return None;
        }
        loop {
            self.changes.borrow_and_update();
            let (records, skipped, ended) = self.core.trace.read(self.next);
            if skipped > 0 || !records.is_empty() {
                let mut chunk = Vec::new();
                if skipped > 0 {
                    let line = format!(
                        "{{\"t\":{:.6},\"skipped\":{skipped}}}\n",
                        self.core.trace.elapsed()
                    );
                    chunk.extend_from_slice(line.as_bytes());
                }
                for record in &records {
                    chunk.extend_from_slice(&record.to_line());
                }
                self.next += skipped + records.len() as u64;
                self.done = ended;
                return Some(Bytes::from(chunk));
            }
            if ended {
                return None;
            }
            tokio::select! {
                changed = self.changes.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                }
                () = tokio::time::sleep(KEEP_ALIVE) => return Some(Bytes::from_static(b"\n")),
            }
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.core.trace.watchers.fetch_sub(1, Ordering::AcqRel);
    }
}
