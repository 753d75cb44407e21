//! Incoming requests: the state of one request, shared by the engine and the
//! handler's context (its cancellation, the work to run after its response),
//! and the table of those still running, for `$/cancel_request` and the close.

use super::{Shared, lock};
use acp_schema::RequestId;
use futures::future::BoxFuture;
use futures::task::AtomicWaker;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::Poll;
use tokio_util::sync::CancellationToken;

/// The state of one incoming request, shared by the engine and the
/// handler's context: its cancellation, and the work to run after its
/// response.
pub(crate) struct RequestState {
    pub(super) id: RequestId,
    /// Whether the request's context is cancelled (seen by the handler).
    cancelled: AtomicBool,
    /// The context's token, made when the handler first asks for it.
    token: OnceLock<CancellationToken>,
    /// Whether the engine drops the handler (`$/cancel_request`, the close).
    aborted: AtomicBool,
    abort_waker: AtomicWaker,
    follow_ups: Mutex<FollowUps>,
}

/// Futures registered with `after_response`, until the response is queued.
enum FollowUps {
    Collecting(Vec<BoxFuture<'static, ()>>),
    /// The handler is done: later work is spawned at once.
    Finished,
}

impl RequestState {
    pub(super) fn new(id: RequestId) -> Self {
        RequestState {
            id,
            cancelled: AtomicBool::new(false),
            token: OnceLock::new(),
            aborted: AtomicBool::new(false),
            abort_waker: AtomicWaker::new(),
            follow_ups: Mutex::new(FollowUps::Collecting(Vec::new())),
        }
    }

    /// The request's id, as the peer sent it.
    pub(crate) fn id(&self) -> &RequestId {
        &self.id
    }

    /// Cancels the context's token (the handler decides what to do).
    pub(crate) fn cancel(&self) {
        if !self.cancelled.swap(true, Ordering::AcqRel)
            && let Some(token) = self.token.get()
        {
            token.cancel();
        }
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    /// The context's token, cancelled with the context.
    pub(crate) fn token(&self) -> CancellationToken {
        let token = self.token.get_or_init(CancellationToken::new);
        // A cancel that ran before the token existed did not see it.
        if self.is_cancelled() {
            token.cancel();
        }
        token.clone()
    }

    /// Cancels the context and has the engine drop the handler.
    pub(super) fn abort(&self) {
        self.cancel();
        self.aborted.store(true, Ordering::Release);
        self.abort_waker.wake();
    }

    /// Resolves once the request is aborted.
    pub(super) fn aborted(&self) -> impl Future<Output = ()> + '_ {
        std::future::poll_fn(|cx| {
            if self.aborted.load(Ordering::Acquire) {
                return Poll::Ready(());
            }
            self.abort_waker.register(cx.waker());
            if self.aborted.load(Ordering::Acquire) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }

    /// Queues `work` to run once the response is queued, or spawns it at
    /// once if the handler is already done.
    pub(crate) fn after_response(&self, work: BoxFuture<'static, ()>) {
        let mut follow_ups = lock(&self.follow_ups);
        match &mut *follow_ups {
            FollowUps::Collecting(queue) => queue.push(work),
            FollowUps::Finished => {
                drop(follow_ups);
                tokio::spawn(work);
            }
        }
    }

    /// Ends the collecting: the work registered so far, in order.
    pub(super) fn finish(&self) -> Vec<BoxFuture<'static, ()>> {
        match std::mem::replace(&mut *lock(&self.follow_ups), FollowUps::Finished) {
            FollowUps::Collecting(queue) => queue,
            FollowUps::Finished => Vec::new(),
        }
    }
}

/// The incoming requests still running (in a task, or waiting for the
/// lane), by id, so that `$/cancel_request` and the close reach them.
#[derive(Default)]
pub(super) struct IncomingTable {
    pub(super) map: HashMap<RequestId, Arc<RequestState>>,
}

impl IncomingTable {
    /// Whether a request with this id is still running.
    pub(super) fn contains(&self, id: &RequestId) -> bool {
        self.map.contains_key(id)
    }
}

/// Aborts every running request at the close (already recorded, so none
/// registers after this).
pub(super) fn abort_all(shared: &Shared) {
    let running = std::mem::take(&mut lock(&shared.incoming).map);
    for (_, request) in running {
        request.abort();
    }
}

/// Registers a request that goes on after the reader (aborted at once if
/// the connection has closed).
pub(super) fn register(shared: &Shared, request: &Arc<RequestState>) {
    let mut table = lock(&shared.incoming);
    if shared.closed.is_closed() {
        drop(table);
        request.abort();
    } else {
        table.map.insert(request.id.clone(), request.clone());
    }
}
