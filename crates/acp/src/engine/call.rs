//! Outgoing requests: the table of requests awaiting their response, and the
//! future a caller awaits.
//!
//! A request is registered and queued when the call is made, serialised
//! straight into the outgoing queue when it has room. Its response lands in
//! its entry of the table, and the entry holds the waker of the task
//! awaiting it: no channel per request. A call's future is a small state
//! machine (no `async` block), so thousands of calls in flight at once
//! (`join_all`, `FuturesUnordered`) take little memory.

use super::lane::{IN_NOTIFICATION, LaneState};
use super::outbox::{OutNotification, OutRequest, Refused};
use super::{Engine, Shared, lock};
use crate::error::ConnectionError;
use acp_schema::{CancelRequestNotification, Error, Notification};
use serde::Serialize;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

/// How a response looked when the reader routed it (borrowing the read line).
pub(super) enum Payload<'a> {
    Result(&'a RawValue),
    Error(Error),
    /// A response-shaped message that did not parse.
    Malformed(String),
    /// A response over the size limit, skipped unread.
    TooLong {
        size: usize,
        limit: usize,
    },
}

/// What a pending request receives: its response, still undecoded (the caller
/// decodes it in its own task, so the reader never spends time on it).
pub(super) enum Reply {
    Result(Box<RawValue>),
    Error(Box<Error>),
    Malformed(Box<str>),
    /// The response was over the size limit and skipped.
    TooLong {
        size: usize,
        limit: usize,
    },
    Closed,
}

impl From<Payload<'_>> for Reply {
    fn from(payload: Payload<'_>) -> Self {
        match payload {
            Payload::Result(raw) => Reply::Result(raw.to_owned()),
            Payload::Error(err) => Reply::Error(Box::new(err)),
            Payload::Malformed(message) => Reply::Malformed(message.into()),
            Payload::TooLong { size, limit } => Reply::TooLong { size, limit },
        }
    }
}

impl Reply {
    /// The caller's outcome; `closed` is the close's cause.
    fn into_result(
        self,
        closed: impl FnOnce() -> ConnectionError,
    ) -> Result<Box<RawValue>, ConnectionError> {
        match self {
            Reply::Result(raw) => Ok(raw),
            Reply::Error(err) => Err(ConnectionError::Remote(*err)),
            Reply::Malformed(message) => Err(ConnectionError::Protocol(acp_schema::DecodeError {
                path: String::new(),
                message: message.into(),
            })),
            Reply::TooLong { size, limit } => Err(ConnectionError::TooLong { size, limit }),
            Reply::Closed => Err(closed()),
        }
    }
}

/// A reply on its way to the caller through the notification lane.
pub(super) struct Delivery {
    pub(super) id: i64,
    pub(super) reply: Reply,
}

/// Where a pending request's response lands.
enum Slot {
    /// No response yet; the waker of the task awaiting it.
    Waiting(Option<Waker>),
    Ready(Reply),
}

pub(super) struct Pending {
    /// Sent from inside a notification handler: deliver without waiting for the lane.
    pub(super) immediate: bool,
    slot: Slot,
}

impl Pending {
    /// Whether the response has yet to arrive.
    pub(super) fn waiting(&self) -> bool {
        matches!(self.slot, Slot::Waiting(_))
    }
}

/// Hashes our own request ids, which are sequential and not chosen by the peer
/// (so SipHash's protection is not needed): the id itself, which keeps
/// neighbouring ids in neighbouring buckets, with its low bits copied into the
/// top bits that hashbrown uses to tell the entries of a group apart.
#[derive(Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_i64(&mut self, n: i64) {
        let n = n as u64;
        self.0 = n ^ (n << 57);
    }
}

type IdMap<V> = HashMap<i64, V, std::hash::BuildHasherDefault<IdHasher>>;

/// The requests we sent that await their response, by id. An entry lives
/// from the call until its future completes or is dropped.
#[derive(Default)]
pub(super) struct PendingTable {
    map: IdMap<Pending>,
}

impl PendingTable {
    /// The request `id`, if its future still awaits it.
    pub(super) fn get(&self, id: i64) -> Option<&Pending> {
        self.map.get(&id)
    }

    /// Puts `reply` in the slot of request `id` if it still waits for one,
    /// and returns the waker to wake (after unlocking the table).
    pub(super) fn fill(&mut self, id: i64, reply: Reply) -> Option<Waker> {
        let pending = self.map.get_mut(&id)?;
        match std::mem::replace(&mut pending.slot, Slot::Ready(reply)) {
            Slot::Waiting(waker) => waker,
            ready => {
                // Answered already (a duplicate response): keep the first.
                pending.slot = ready;
                None
            }
        }
    }

    /// Fails every waiting request with [`Reply::Closed`]; returns the
    /// wakers to wake.
    fn fail_waiting(&mut self) -> Vec<Waker> {
        let mut wakers = Vec::new();
        for pending in self.map.values_mut() {
            if let Slot::Waiting(waker) = &mut pending.slot {
                wakers.extend(waker.take());
                pending.slot = Slot::Ready(Reply::Closed);
            }
        }
        wakers
    }
}

/// Hands a reply to its caller (from the reader, or from the lane once the
/// notifications ahead of it were handled).
pub(super) fn deliver(shared: &Shared, delivery: Delivery) {
    let waker = lock(&shared.pending).fill(delivery.id, delivery.reply);
    if let Some(waker) = waker {
        waker.wake();
    }
}

/// Fails every waiting request at the close (which is already recorded, so
/// no request registers after this).
pub(super) fn fail_all(shared: &Shared) {
    let waiting = lock(&shared.pending).fail_waiting();
    for waker in waiting {
        waker.wake();
    }
}

/// The future of one outgoing request. The request is registered and
/// queued when the call is made (see [`RpcConnection::request`]); the future
/// waits for the response. Dropped before the response, it sends
/// `$/cancel_request`.
pub(super) struct Call<'a> {
    conn: &'a Engine,
    id: i64,
    stage: Stage,
    /// Counts the call among notification handlers waiting on the peer
    /// (see "Backpressure" in the engine's docs).
    in_notification: Option<WaitingInNotification<'a>>,
}

enum Stage {
    /// Queued; waiting for the response.
    Sent,
    /// Not sent: the connection had closed.
    Closed,
    /// Not sent: the params did not serialise.
    Unserialisable(Arc<serde_json::Error>),
    Done,
}

impl<'a> Call<'a> {
    /// Registers request `id` and queues `message`, its line, at once: in
    /// the queue's room if there is enough, past its bound if not. (Waiting
    /// for room would bound nothing: a request's line exists until it is
    /// written, in the queue or in the caller's future; and the caller holds
    /// the future to get the response.)
    pub(super) fn start<P: Serialize + ?Sized>(
        conn: &'a Engine,
        id: i64,
        method: &str,
        params: &P,
    ) -> Self {
        let immediate = IN_NOTIFICATION
            .try_with(|c| *c == conn.id())
            .unwrap_or(false);
        let message = OutRequest {
            jsonrpc: "2.0",
            id,
            method,
            params,
        };
        let mut call = Call {
            conn,
            id,
            stage: Stage::Sent,
            in_notification: None,
        };
        {
            // Registered before the line is queued, so the response cannot
            // arrive first.
            let mut table = lock(&conn.shared.pending);
            if conn.is_closed() {
                call.stage = Stage::Closed;
                return call;
            }
            table.map.insert(
                id,
                Pending {
                    immediate,
                    slot: Slot::Waiting(None),
                },
            );
        }
        call.stage = match conn
            .shared
            .outbox
            .push_message_now(&conn.shared.closed, &message)
        {
            Ok(()) => {
                if immediate {
                    call.in_notification = Some(WaitingInNotification::new(&conn.shared.lane));
                }
                Stage::Sent
            }
            Err(Refused::Closed) => {
                call.unregister();
                Stage::Closed
            }
            Err(Refused::Serialize(e)) => {
                call.unregister();
                Stage::Unserialisable(Arc::new(e))
            }
        };
        call
    }

    fn unregister(&self) {
        lock(&self.conn.shared.pending).map.remove(&self.id);
    }
}

impl std::future::Future for Call<'_> {
    type Output = Result<Box<RawValue>, ConnectionError>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let reply = match std::mem::replace(&mut this.stage, Stage::Done) {
            Stage::Sent => {
                let mut table = lock(&this.conn.shared.pending);
                let Some(pending) = table.map.get_mut(&this.id) else {
                    // Only this future removes its entry.
                    return Poll::Ready(Err(this.conn.close_error()));
                };
                if let Slot::Waiting(waker) = &mut pending.slot {
                    match waker {
                        Some(waker) if waker.will_wake(cx.waker()) => {}
                        _ => *waker = Some(cx.waker().clone()),
                    }
                    this.stage = Stage::Sent;
                    return Poll::Pending;
                }
                let removed = table.map.remove(&this.id);
                drop(table);
                this.in_notification = None;
                match removed.map(|p| p.slot) {
                    Some(Slot::Ready(reply)) => reply.into_result(|| this.conn.close_error()),
                    _ => Err(this.conn.close_error()),
                }
            }
            Stage::Closed => Err(this.conn.close_error()),
            Stage::Unserialisable(e) => Err(ConnectionError::Serialize(e)),
            Stage::Done => panic!("a request's future was polled after it completed"),
        };
        Poll::Ready(reply)
    }
}

impl Drop for Call<'_> {
    fn drop(&mut self) {
        match self.stage {
            Stage::Sent => {}
            Stage::Closed | Stage::Unserialisable(_) | Stage::Done => return,
        }
        let removed = lock(&self.conn.shared.pending).map.remove(&self.id);
        let unanswered = removed.is_some_and(|p| p.waiting());
        if !unanswered || self.conn.is_closed() {
            return;
        }
        let params = CancelRequestNotification::new(self.id);
        let _ = self.conn.shared.outbox.push_message_now(
            &self.conn.shared.closed,
            &OutNotification {
                jsonrpc: "2.0",
                method: CancelRequestNotification::METHOD,
                params: &params,
            },
        );
    }
}

/// Counts a notification handler that is waiting on the peer (see "Backpressure").
struct WaitingInNotification<'a>(&'a LaneState);

impl<'a> WaitingInNotification<'a> {
    fn new(lane: &'a LaneState) -> Self {
        lane.waiting_starts();
        WaitingInNotification(lane)
    }
}

impl Drop for WaitingInNotification<'_> {
    fn drop(&mut self) {
        self.0.waiting_ends();
    }
}
