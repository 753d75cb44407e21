//! The reader's side: routing each parsed message, and deciding where its
//! handler runs.
//!
//! [`Router::schedule`] is the one place that decides: a handler's first step
//! runs on the reader when nothing waits on the notification lane ahead of
//! it; a request handler that has to wait goes on in a task of its own, a
//! notification handler on the lane; and when the lane is busy, everything
//! (a request's start, a notification, a response's delivery) queues on the
//! lane behind what arrived before it.

use super::call::{self, Delivery, Payload, Reply};
use super::dropped::{Dropped, OnDropped};
use super::lane::IN_NOTIFICATION;
use super::outbox::{OutResponse, Refused, UNSERIALISABLE};
use super::request::{RequestState, register};
use super::{ConnectionOptions, Engine, Handler, HandlerFuture, Shared, lock};
use acp_schema::{CancelRequestNotification, Error, ErrorCode, Notification, RequestId};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::value::RawValue;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tracing::{Instrument, debug, debug_span, warn};

use super::classify::{Fast, Incoming, classify, classify_fast};
use crate::codec::{LineHead, LineKind};

/// A job for the notification lane.
enum Job {
    Notify(BoxFuture<'static, ()>),
    Deliver(Delivery),
    Start(BoxFuture<'static, ()>),
}

/// What arrived, ready to run: the one input of [`Router::schedule`].
enum Work {
    Request(Arc<RequestState>, Pin<Box<Handled>>),
    Notification(BoxFuture<'static, ()>),
    Delivery(Delivery),
}

/// Routes parsed lines from the reader to handlers, pending requests and the lane.
pub(super) struct Router<H> {
    engine: Engine,
    handler: Arc<H>,
    lane_tx: mpsc::UnboundedSender<(Job, Option<OwnedSemaphorePermit>)>,
    lane_permits: Arc<Semaphore>,
    on_dropped: Option<OnDropped>,
}

impl<H: Handler> Router<H> {
    /// A router for `engine`, with its notification lane started.
    pub(super) fn start(engine: Engine, handler: Arc<H>, options: &ConnectionOptions) -> Router<H> {
        let (lane_tx, lane_rx) = mpsc::unbounded_channel();
        tokio::spawn(notification_lane(engine.clone(), lane_rx));
        Router {
            engine,
            handler,
            lane_tx,
            lane_permits: Arc::new(Semaphore::new(options.notification_queue.max(1))),
            on_dropped: options.on_dropped.clone(),
        }
    }

    fn shared(&self) -> &Shared {
        &self.engine.shared
    }

    pub(super) async fn route(&self, line: &[u8]) {
        match classify_fast(line, &*self.handler, &self.shared().incoming) {
            Fast::Request(request, method, work) => {
                self.start_request(request, &method, work).await
            }
            Fast::Notification(method, work) => self.start_notification(&method, work).await,
            Fast::Response(id, raw) => self.on_response(id, Payload::Result(raw)).await,
            Fast::Declined => self.route_slow(line).await,
        }
    }

    /// The slow way: the envelope first, with the params as raw JSON.
    async fn route_slow(&self, line: &[u8]) {
        match classify(line) {
            Incoming::Request(id, method, params) => self.on_request(id, &method, params).await,
            Incoming::Notification(method, params) => self.on_notification(&method, params).await,
            Incoming::Response(id, Ok(raw)) => self.on_response(id, Payload::Result(raw)).await,
            Incoming::Response(id, Err(err)) => self.on_response(id, Payload::Error(err)).await,
            Incoming::Unparsable(msg) => {
                debug!(error = %msg, "unparsable line");
                self.reply_error(&RequestId::Null, Error::parse_error().data(msg.as_str()));
                self.report(Dropped::Unparsable { reason: msg }).await;
            }
            Incoming::BadResponse(id, msg) => {
                warn!(%id, error = %msg, "malformed response");
                self.on_response(id, Payload::Malformed(msg)).await;
            }
            Incoming::Invalid(id, msg) => {
                debug!(error = %msg, "invalid message");
                self.reply_error(
                    &id.unwrap_or(RequestId::Null),
                    Error::invalid_request().data(msg.as_str()),
                );
                self.report(Dropped::Invalid { reason: msg }).await;
            }
        }
    }

    /// A line over the size limit. A response whose id the codec found
    /// fails the request it answers; a request whose id it found is answered
    /// with -32600 under that id; anything else is answered with -32600 under
    /// the null id. Each is reported.
    pub(super) async fn too_long(&self, size: usize, limit: usize, head: LineHead) {
        let detail = format!("message of {size} bytes exceeds the limit of {limit} bytes");
        let id = match (head.kind, head.id) {
            (LineKind::Response, Some(id)) => {
                warn!(size, limit, %id, "skipping an over-long response; its request fails");
                self.on_response(id.clone(), Payload::TooLong { size, limit })
                    .await;
                Some(id)
            }
            (LineKind::Request, Some(id)) => {
                warn!(size, limit, %id, "refusing an over-long request");
                self.reply_error(&id, Error::invalid_request().data(detail));
                Some(id)
            }
            _ => {
                warn!(size, limit, "skipping an over-long message");
                self.reply_error(&RequestId::Null, Error::invalid_request().data(detail));
                None
            }
        };
        self.report(Dropped::TooLong { size, limit, id }).await;
    }

    /// Tells the `on_dropped` callback, in order on the notification lane.
    async fn report(&self, dropped: Dropped) {
        let Some(callback) = self.on_dropped.clone() else {
            return;
        };
        let work: BoxFuture<'static, ()> = Box::pin(async move { callback(&dropped) });
        self.enqueue(Job::Notify(work)).await;
    }

    async fn on_request(&self, id: RequestId, method: &str, params: Option<&RawValue>) {
        // Refuse a duplicate id before decoding: decoding has effects (a prompt
        // registers its turn, replacing the running turn's cancellation token).
        // Only the reader inserts ids, so the id is still free below.
        if lock(&self.shared().incoming).map.contains_key(&id) {
            self.reply_error(
                &id,
                Error::invalid_request().data("a request with this id is still running"),
            );
            return;
        }
        let request = Arc::new(RequestState::new(id));
        let work = match self.handler.request(method, params, &request) {
            Ok(work) => work,
            Err(err) => {
                debug!(%method, id = %request.id, code = err.code.0, "request rejected");
                self.reply_error(&request.id, err);
                return;
            }
        };
        self.start_request(request, method, work).await;
    }

    async fn start_request(&self, request: Arc<RequestState>, method: &str, work: HandlerFuture) {
        let span = debug_span!("acp.request", %method, id = %request.id);
        let work = Box::pin(Handled {
            work: work.instrument(span),
        });
        self.schedule(Work::Request(request, work)).await;
    }

    async fn on_notification(&self, method: &str, params: Option<&RawValue>) {
        if method == CancelRequestNotification::METHOD {
            return self.on_cancel_request(params).await;
        }
        match self.handler.notification(method, params) {
            Ok(work) => self.start_notification(method, work).await,
            Err(err) if err.code == ErrorCode::METHOD_NOT_FOUND => {
                debug!(%method, "ignoring unknown notification");
            }
            Err(err) => {
                warn!(%method, %err, "dropping notification with bad params");
                self.report(Dropped::bad_notification(method, &err)).await;
            }
        }
    }

    async fn start_notification(&self, method: &str, work: BoxFuture<'static, ()>) {
        let span = debug_span!("acp.notification", %method);
        // Without a subscriber for the span, no second box for it.
        let work = if span.is_disabled() {
            work
        } else {
            Box::pin(work.instrument(span))
        };
        self.schedule(Work::Notification(work)).await;
    }

    /// `$/cancel_request`: aborts the request it names, if still running
    /// (acted on at once, not when the lane reaches it).
    async fn on_cancel_request(&self, params: Option<&RawValue>) {
        match acp_schema::decode_params::<CancelRequestNotification>(params) {
            Ok(cancel) => {
                let running = lock(&self.shared().incoming)
                    .map
                    .get(&cancel.request_id)
                    .cloned();
                if let Some(request) = running {
                    debug!(id = %cancel.request_id, "request cancelled by peer");
                    request.abort();
                }
            }
            Err(err) => {
                debug!(%err, "malformed $/cancel_request ignored");
                let err = Error::from(err);
                self.report(Dropped::bad_notification(
                    CancelRequestNotification::METHOD,
                    &err,
                ))
                .await;
            }
        }
    }

    async fn on_response(&self, id: RequestId, payload: Payload<'_>) {
        let RequestId::Number(n) = id else {
            return unmatched(&id, &payload);
        };
        if let Payload::Result(raw) = &payload {
            // Before anything after it is read (see `Handler::result_seen`).
            self.handler.result_seen(n, raw);
        }
        let (delivery, immediate) = {
            let table = lock(&self.shared().pending);
            match table.get(n).filter(|p| p.waiting()) {
                Some(pending) => (
                    Delivery {
                        id: n,
                        reply: Reply::from(payload),
                    },
                    pending.immediate,
                ),
                None => {
                    drop(table);
                    return unmatched(&id, &payload);
                }
            }
        };
        if immediate {
            // Sent from inside a notification handler: delivered at once (the
            // lane is busy with that very handler).
            call::deliver(self.shared(), delivery);
        } else {
            self.schedule(Work::Delivery(delivery)).await;
        }
    }

    /// Decides where `work` runs (see the module docs), and starts it.
    async fn schedule(&self, work: Work) {
        let lane_idle = self.shared().lane.idle();
        match work {
            Work::Delivery(delivery) if lane_idle => call::deliver(self.shared(), delivery),
            Work::Delivery(delivery) => {
                debug!(id = delivery.id, "response waits for earlier notifications");
                self.enqueue(Job::Deliver(delivery)).await;
            }
            Work::Notification(mut work) => {
                // With nothing ahead of it on the lane, the handler's first
                // step runs here, on the reader, as it would on the lane; a
                // handler that finishes without waiting (most do) costs no
                // trip through the lane. One that has to wait goes on there,
                // ahead of anything that arrives after it.
                if lane_idle {
                    let first = IN_NOTIFICATION.sync_scope(self.engine.id(), || {
                        std::panic::catch_unwind(AssertUnwindSafe(|| poll_now(&mut work)))
                    });
                    match first {
                        Ok(Poll::Ready(())) => return,
                        Ok(Poll::Pending) => {}
                        Err(_) => {
                            warn!("a notification handler panicked");
                            return;
                        }
                    }
                }
                self.enqueue(Job::Notify(work)).await;
            }
            Work::Request(request, work) if !lane_idle => {
                // Registered now, so a `$/cancel_request` that arrives while
                // the request waits for the lane finds it.
                register(self.shared(), &request);
                let task = run_request(self.engine.clone(), request, work);
                self.enqueue(Job::Start(Box::pin(task))).await;
            }
            Work::Request(request, mut work) => {
                // The handler's first step runs here, on the reader: most
                // handlers (a file read, a permission answered from memory)
                // finish without waiting, and are answered without a task of
                // their own. The noop waker is replaced at the task's first poll.
                match poll_now(&mut work) {
                    Poll::Ready(result) => self.answer_now(&request, result),
                    Poll::Pending => {
                        register(self.shared(), &request);
                        tokio::spawn(run_request(self.engine.clone(), request, work));
                    }
                }
            }
        }
    }

    /// Waits for room in the lane, unless a notification handler is waiting on
    /// the peer (then the reader must keep reading; see "Backpressure").
    async fn permit(&self) -> Option<OwnedSemaphorePermit> {
        let lane = &self.shared().lane;
        loop {
            let changed = lane.waiting_changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if lane.waiting_in_notification.load(Ordering::SeqCst) > 0 || self.engine.is_closed() {
                return None;
            }
            tokio::select! {
                permit = self.lane_permits.clone().acquire_owned() => return permit.ok(),
                _ = &mut changed => {}
            }
        }
    }

    async fn enqueue(&self, job: Job) {
        let permit = self.permit().await;
        let lane = &self.shared().lane;
        lane.backlog.fetch_add(1, Ordering::SeqCst);
        if self.lane_tx.send((job, permit)).is_err() {
            lane.backlog.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Answers an incoming message with an error, from the reader.
    fn reply_error(&self, id: &RequestId, err: Error) {
        answer_now(self.shared(), id, &Err(err));
    }

    /// Answers a request the reader ran to its end, then starts its
    /// follow-up work.
    fn answer_now(&self, request: &RequestState, result: Result<Box<RawValue>, Error>) {
        let queued = answer_now(self.shared(), &request.id, &result);
        let follow_ups = request.finish();
        if queued && result.is_ok() {
            start(follow_ups);
        }
    }
}

/// Queues an answer at once, from the reader, which never waits for room in
/// the outgoing queue: an answer that finds it full goes past its bound.
/// (Were the reader to wait, two peers flooding each other with requests
/// could each wait for the other to read, forever.) True if queued.
fn answer_now(shared: &Shared, id: &RequestId, result: &Result<Box<RawValue>, Error>) -> bool {
    log_failure(id, result);
    let outbox = &shared.outbox;
    let queued = match outbox.push_message_now(&shared.closed, &OutResponse::new(id, result)) {
        Err(Refused::Serialize(_)) => outbox.push_now(&shared.closed, UNSERIALISABLE.to_vec()),
        queued => queued.map_err(drop),
    };
    queued.is_ok()
}

/// Logs a response that no pending request awaits.
fn unmatched(id: &RequestId, payload: &Payload<'_>) {
    match payload {
        Payload::Error(err) if *id == RequestId::Null => warn!(%err, "peer reported an error"),
        _ => debug!(%id, "response matches no pending request; dropped"),
    }
}

/// Polls `work` once, here, with a waker that does nothing: work that is
/// not done goes on in a task or on the lane, whose first poll of it
/// registers a real waker.
fn poll_now<F: Future + ?Sized>(work: &mut Pin<Box<F>>) -> Poll<F::Output> {
    work.as_mut()
        .poll(&mut Context::from_waker(futures::task::noop_waker_ref()))
}

pin_project_lite::pin_project! {
    /// A request handler's future; a panic in it becomes an internal error.
    struct Handled {
        #[pin]
        work: tracing::instrument::Instrumented<HandlerFuture>,
    }
}

impl Future for Handled {
    type Output = Result<Box<RawValue>, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let work = self.project().work;
        match std::panic::catch_unwind(AssertUnwindSafe(|| work.poll(cx))) {
            Ok(polled) => polled,
            Err(_) => Poll::Ready(Err(Error::internal_error().data("the handler panicked"))),
        }
    }
}

/// Runs a request handler to its end in a task of its own (`request` is
/// registered in the incoming table), and answers it.
async fn run_request(engine: Engine, request: Arc<RequestState>, work: Pin<Box<Handled>>) {
    let result = tokio::select! {
        biased;
        _ = request.aborted() => Err(Error::request_cancelled()),
        result = work => result,
    };
    lock(&engine.shared.incoming).map.remove(&request.id);
    let follow_ups = request.finish();
    if engine.is_closed() {
        // Cancelled by the close, not by the peer: no answer; the peer sees
        // the connection end, which fails its call.
        return;
    }
    log_failure(&request.id, &result);
    let shared = &engine.shared;
    let outbox = &shared.outbox;
    let sent = match outbox
        .push_message(&shared.closed, &OutResponse::new(&request.id, &result))
        .await
    {
        Err(Refused::Serialize(_)) => outbox.push(&shared.closed, UNSERIALISABLE.to_vec()).await,
        sent => sent.map_err(drop),
    };
    if result.is_ok() && sent.is_ok() {
        start(follow_ups);
    }
}

fn log_failure(id: &RequestId, result: &Result<Box<RawValue>, Error>) {
    if let Err(err) = result {
        debug!(%id, code = err.code.0, message = %err.message, "request failed");
    }
}

/// Starts the work registered with `after_response`, in order, in a task of
/// its own (so the reader never runs it).
fn start(follow_ups: Vec<BoxFuture<'static, ()>>) {
    if !follow_ups.is_empty() {
        tokio::spawn(async move {
            for work in follow_ups {
                work.await;
            }
        });
    }
}

async fn notification_lane(
    engine: Engine,
    mut jobs: mpsc::UnboundedReceiver<(Job, Option<OwnedSemaphorePermit>)>,
) {
    let id = engine.id();
    while let Some((job, _permit)) = jobs.recv().await {
        match job {
            Job::Notify(work) => {
                let outcome = IN_NOTIFICATION
                    .scope(id, AssertUnwindSafe(work).catch_unwind())
                    .await;
                if outcome.is_err() {
                    warn!("a notification handler panicked");
                }
            }
            Job::Deliver(delivery) => call::deliver(&engine.shared, delivery),
            Job::Start(task) => {
                tokio::spawn(task);
            }
        }
        engine.shared.lane.backlog.fetch_sub(1, Ordering::SeqCst);
    }
}
