//! `GET /acp` without an upgrade: an SSE stream reading one mailbox, and the
//! lease that releases it when the body is dropped.

use super::{HttpConnection, KEEP_ALIVE, Route, connection_of, header};
use crate::remote::server::{Body, Inner, lock, text};
use crate::remote::{HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, SSE_EVENT_TAKEN_OVER};
use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame as BodyFrame, Incoming};
use hyper::{Request, Response, StatusCode};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tracing::info;

/// `GET /acp` without an upgrade: the connection's or a session's SSE stream.
pub(in super::super) fn get(inner: Arc<Inner>, request: Request<Incoming>) -> Response<Body> {
    let accepts = header(&request, "accept")
        .is_some_and(|v| v.to_ascii_lowercase().contains("text/event-stream"));
    if !accepts {
        return text(StatusCode::NOT_ACCEPTABLE, "Not Acceptable");
    }
    let connection = match connection_of(&inner, &request) {
        Ok(connection) => connection,
        Err(refusal) => return *refusal,
    };
    let route = header(&request, HEADER_SESSION_ID)
        .map_or(Route::Connection, |s| Route::Session(s.to_owned()));
    let options = &inner.options;
    // A resume: the number of the last event the client has (without
    // resumption, the header means nothing here).
    let last = match header(&request, HEADER_LAST_EVENT_ID) {
        Some(value) if options.resumable() => match value.trim().parse::<u64>() {
            Ok(last) => Some(last),
            Err(_) => {
                return text(
                    StatusCode::BAD_REQUEST,
                    "Last-Event-ID must be the id of an event of this stream",
                );
            }
        },
        _ => None,
    };
    let (wake, generation) = {
        let mut guard = lock(&connection.state);
        let mut taken_over = false;
        let state = &mut *guard;
        if let Some(reason) = connection.core.reason() {
            return super::super::gone(reason);
        }
        let mailbox = state.mailbox(&route);
        match last {
            Some(last) => {
                if let Err(gap) = mailbox.outbox.can_resume(last) {
                    return text(StatusCode::CONFLICT, &gap.to_string());
                }
                // Whoever reads the stream now stops: this GET goes on.
                mailbox.generation += 1;
                mailbox.wake.notify_waiters();
                let (unsent, sent) = (mailbox.outbox.unsent_bytes(), mailbox.outbox.sent_bytes());
                let again = mailbox.outbox.rewind(last).unwrap_or_default();
                let (unsent_now, sent_now) =
                    (mailbox.outbox.unsent_bytes(), mailbox.outbox.sent_bytes());
                taken_over = mailbox.leased;
                state.buffered = state.buffered + unsent_now - unsent;
                state.retained = state.retained + sent_now - sent;
                info!(
                    target: "acp::remote",
                    id = %connection.core.info.id,
                    stream = ?route,
                    after = last,
                    resent = again,
                    taken_over,
                    "event stream resumed"
                );
            }
            None if mailbox.leased => {
                return text(
                    StatusCode::CONFLICT,
                    "Outbound stream already has an active receiver",
                );
            }
            None => {}
        }
        let mailbox = state.mailbox(&route);
        mailbox.leased = true;
        let wake = Arc::clone(&mailbox.wake);
        let generation = mailbox.generation;
        // A GET that takes over counts in the place of the one it ends.
        if !taken_over {
            state.readers += 1;
        }
        state.last_activity = Some(Instant::now());
        (wake, generation)
    };
    tracing::debug!(target: "acp::remote", id = %connection.core.info.id, stream = ?route, "event stream opened");
    let lease = Lease {
        connection,
        route,
        wake,
        generation,
        ended: false,
    };
    let stream = futures::stream::unfold(lease, |mut lease| async move {
        let data = lease.next().await?;
        Some((
            Ok::<_, std::convert::Infallible>(BodyFrame::data(data)),
            lease,
        ))
    });
    let mut response = Response::new(StreamBody::new(stream).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(
        ::http::header::CONTENT_TYPE,
        ::http::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        ::http::header::CACHE_CONTROL,
        ::http::HeaderValue::from_static("no-cache"),
    );
    response
}

/// A GET reading one mailbox; released when its body is dropped.
struct Lease {
    connection: Arc<HttpConnection>,
    route: Route,
    wake: Arc<Notify>,
    /// The mailbox's generation this GET reads; another means a resume
    /// took the stream over.
    generation: u64,
    ended: bool,
}

impl Lease {
    /// The next SSE chunk: a message, or a keep-alive comment; `None` when
    /// the stream ends.
    async fn next(&mut self) -> Option<Bytes> {
        if self.ended {
            return None;
        }
        let connection = &self.connection;
        let options = &connection.core.inner.options;
        let retain = options.resumable();
        let keep_alive = KEEP_ALIVE
            .min(options.idle_timeout / 3)
            .max(Duration::from_millis(10));
        loop {
            // Registered before looking, so that no wake-up is missed.
            let woken = self.wake.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            {
                let mut guard = lock(&connection.state);
                let state = &mut *guard;
                let mailbox = state.mailbox(&self.route);
                if mailbox.generation != self.generation {
                    // Taken over: say so to a client that knows the word,
                    // then end.
                    self.ended = true;
                    return Some(Bytes::from(format!("event: {SSE_EVENT_TAKEN_OVER}\n\n")));
                }
                if let Some((seq, message)) = mailbox.outbox.take(retain) {
                    state.buffered -= message.len();
                    if retain {
                        state.retained += message.len();
                        state.retained_order.push_back((self.route.clone(), seq));
                        state.trim(options.max_replay_bytes);
                    }
                    drop(guard);
                    connection.progress.notify_waiters();
                    connection.core.sent.fetch_add(1, Ordering::Relaxed);
                    let mut event = Vec::with_capacity(message.len() + 32);
                    if retain {
                        event.extend_from_slice(format!("id: {seq}\n").as_bytes());
                    }
                    event.extend_from_slice(b"data: ");
                    event.extend_from_slice(&message);
                    event.extend_from_slice(b"\n\n");
                    return Some(Bytes::from(event));
                }
                if state.finished {
                    return None;
                }
            }
            tokio::select! {
                () = woken => {}
                () = tokio::time::sleep(keep_alive) => return Some(Bytes::from_static(b":\n\n")),
                () = connection.core.closed.cancelled() => return None,
            }
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        tracing::debug!(target: "acp::remote", id = %self.connection.core.info.id, stream = ?self.route, "event stream closed");
        let mut guard = lock(&self.connection.state);
        let state = &mut *guard;
        state.last_activity = Some(Instant::now());
        let mailbox = match &self.route {
            Route::Connection => Some(&mut state.connection),
            Route::Session(id) => state.sessions.get_mut(id),
        };
        let Some(mailbox) = mailbox else { return };
        if mailbox.generation != self.generation {
            // The GET that took over owns the stream, and its reader count.
            return;
        }
        state.readers -= 1;
        let mailbox = match &self.route {
            Route::Connection => &mut state.connection,
            Route::Session(id) => match state.sessions.get_mut(id) {
                Some(mailbox) => mailbox,
                None => return,
            },
        };
        mailbox.leased = false;
        if let Route::Session(id) = &self.route
            && mailbox.outbox.is_empty()
        {
            state.sessions.remove(id);
        }
    }
}
