//! Routing parsed messages: requests to concurrent tasks, notifications and
//! ordered deliveries to the notification lane, responses to their callers.

use super::*;
use std::task::{Context, Poll};

/// Routes parsed lines from the reader to handlers, pending requests and the lane.
pub(super) struct Router {
    pub(super) conn: RpcConnection,
    pub(super) handler: Arc<dyn Handler>,
    pub(super) lane_tx: mpsc::UnboundedSender<Job>,
    pub(super) lane_permits: Arc<Semaphore>,
    pub(super) on_dropped: Option<OnDropped>,
}

impl Router {
    pub(super) async fn route(&self, line: &[u8]) {
        match classify(line) {
            Incoming::Request(id, method, params) => self.on_request(id, &method, params).await,
            Incoming::Notification(method, params) => self.on_notification(&method, params).await,
            Incoming::Response(id, Ok(raw)) => self.on_response(id, Payload::Result(raw)).await,
            Incoming::Response(id, Err(err)) => self.on_response(id, Payload::Error(err)).await,
            Incoming::Unparsable(msg) => {
                debug!(error = %msg, "unparsable line");
                self.conn
                    .reply_error(RequestId::Null, Error::parse_error().data(msg.as_str()));
                self.report(Dropped::Unparsable { reason: msg }).await;
            }
            Incoming::BadResponse(id, msg) => {
                warn!(%id, error = %msg, "malformed response");
                self.on_response(id, Payload::Malformed(msg)).await;
            }
            Incoming::Invalid(id, msg) => {
                debug!(error = %msg, "invalid message");
                self.conn.reply_error(
                    id.unwrap_or(RequestId::Null),
                    Error::invalid_request().data(msg.as_str()),
                );
                self.report(Dropped::Invalid { reason: msg }).await;
            }
        }
    }

    /// Tells the `on_dropped` callback, in order on the notification lane.
    pub(super) async fn report(&self, dropped: Dropped) {
        let Some(callback) = self.on_dropped.clone() else {
            return;
        };
        let work: BoxFuture<'static, ()> = Box::pin(async move { callback(&dropped) });
        self.enqueue(|permit| Job::Notify(work, permit)).await;
    }

    fn lane_idle(&self) -> bool {
        self.conn.shared.backlog.load(Ordering::SeqCst) == 0
    }

    /// Waits for room in the lane, unless a notification handler is waiting on
    /// the peer (then the reader must keep reading; see "Backpressure").
    async fn permit(&self) -> Option<OwnedSemaphorePermit> {
        let shared = &self.conn.shared;
        loop {
            let changed = shared.waiting_changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if shared.waiting_in_notification.load(Ordering::SeqCst) > 0 {
                return None;
            }
            tokio::select! {
                permit = self.lane_permits.clone().acquire_owned() => return permit.ok(),
                _ = &mut changed => {}
            }
        }
    }

    async fn enqueue(&self, job: impl FnOnce(Option<OwnedSemaphorePermit>) -> Job) {
        let permit = self.permit().await;
        self.conn.shared.backlog.fetch_add(1, Ordering::SeqCst);
        if self.lane_tx.send(job(permit)).is_err() {
            self.conn.shared.backlog.fetch_sub(1, Ordering::SeqCst);
        }
    }

    async fn on_request(&self, id: RequestId, method: &str, params: Option<&RawValue>) {
        // Refuse a duplicate id before decoding: decoding has effects (a prompt
        // registers its turn, replacing the running turn's cancellation token).
        // Only the reader inserts ids, so the id is still free below.
        if lock(&self.conn.shared.incoming).map.contains_key(&id) {
            self.conn.reply_error(
                id,
                Error::invalid_request().data("a request with this id is still running"),
            );
            return;
        }
        let work = match self.handler.request(method, params) {
            Ok(work) => work,
            Err(err) => {
                debug!(%method, %id, code = err.code.0, "request rejected");
                self.conn.reply_error(id, err);
                return;
            }
        };
        let span = debug_span!("acp.request", %method, %id);
        let follow_ups = FollowUps {
            connection: self.conn.id(),
            ..FollowUps::default()
        };
        let mut work = Box::pin(Handled {
            work: AFTER_RESPONSE.scope(follow_ups, work.instrument(span)),
        });
        if !self.lane_idle() {
            // Registered now, so a `$/cancel_request` that arrives while the
            // request waits for the lane finds it.
            let token = self.conn.shared.register_incoming(&id);
            let task = run_request(self.conn.clone(), id, token, work);
            self.enqueue(|permit| Job::Start(Box::pin(task), permit))
                .await;
            return;
        }
        // The handler's first step runs here, on the reader: most handlers
        // (a file read, a permission answered from memory) finish without
        // waiting, and are answered without a task of their own. A handler
        // that has to wait goes on in its own task; the noop waker is
        // replaced at the task's first poll.
        match poll_now(&mut work) {
            Poll::Ready((result, follow_ups)) => {
                self.conn.answer_from_reader(&id, result, follow_ups)
            }
            Poll::Pending => {
                let token = self.conn.shared.register_incoming(&id);
                tokio::spawn(run_request(self.conn.clone(), id, token, work));
            }
        }
    }

    async fn on_notification(&self, method: &str, params: Option<&RawValue>) {
        if method == CancelRequestNotification::METHOD {
            match acp_schema::decode::<CancelRequestNotification>(acp_schema::params_text(params)) {
                Ok(cancel) => {
                    if let Some(token) =
                        lock(&self.conn.shared.incoming).map.get(&cancel.request_id)
                    {
                        debug!(id = %cancel.request_id, "request cancelled by peer");
                        token.cancel();
                    }
                }
                Err(err) => {
                    debug!(%err, "malformed $/cancel_request ignored");
                    self.report(Dropped::bad_notification(method, &err.into()))
                        .await;
                }
            }
            return;
        }
        match self.handler.notification(method, params) {
            Ok(work) => {
                let span = debug_span!("acp.notification", %method);
                let mut work: BoxFuture<'static, ()> = Box::pin(work.instrument(span));
                // With nothing ahead of it on the lane, the handler's first
                // step runs here, on the reader, as it would on the lane; a
                // handler that finishes without waiting (most do) costs no
                // trip through the lane. One that has to wait goes on there,
                // ahead of anything that arrives after it.
                if self.lane_idle() {
                    let first = IN_NOTIFICATION.sync_scope(self.conn.id(), || {
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
                self.enqueue(|permit| Job::Notify(work, permit)).await;
            }
            Err(err) if err.code == ErrorCode::METHOD_NOT_FOUND => {
                debug!(%method, "ignoring unknown notification");
            }
            Err(err) => {
                warn!(%method, %err, "dropping notification with bad params");
                self.report(Dropped::bad_notification(method, &err)).await;
            }
        }
    }

    async fn on_response(&self, id: RequestId, payload: Payload<'_>) {
        let RequestId::Number(n) = id else {
            return unmatched(&id, &payload);
        };
        // Delivered here, or after the notifications ahead of it on the lane.
        let later = {
            let mut table = lock(&self.conn.shared.pending);
            let Some(pending) = table.get(n).filter(|p| p.waiting()) else {
                drop(table);
                return unmatched(&id, &payload);
            };
            let reply = Reply::from(payload);
            if pending.immediate || self.lane_idle() {
                let waker = table.fill(n, reply);
                drop(table);
                if let Some(waker) = waker {
                    waker.wake();
                }
                return;
            }
            debug!(%id, "response waits for earlier notifications");
            Delivery { id: n, reply }
        };
        self.enqueue(|permit| Job::Deliver(later, permit)).await;
    }
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
fn poll_now<F: Future + ?Sized>(work: &mut std::pin::Pin<Box<F>>) -> Poll<F::Output> {
    work.as_mut()
        .poll(&mut Context::from_waker(futures::task::noop_waker_ref()))
}

pin_project_lite::pin_project! {
    /// A request handler's future, run with its [`FollowUps`] in scope; a
    /// panic in it becomes an internal error. Resolves to the handler's
    /// result and the work it left for after the response.
    struct Handled {
        #[pin]
        work: tokio::task::futures::TaskLocalFuture<
            FollowUps,
            tracing::instrument::Instrumented<HandlerFuture>,
        >,
    }
}

impl Future for Handled {
    type Output = (Result<Box<RawValue>, Error>, FollowUps);

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut work = self.project().work;
        let polled = std::panic::catch_unwind(AssertUnwindSafe(|| work.as_mut().poll(cx)));
        let result = match polled {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(result)) => result,
            Err(_) => Err(Error::internal_error().data("the handler panicked")),
        };
        Poll::Ready((result, work.take_value().unwrap_or_default()))
    }
}

/// Runs a request handler to its end in a task of its own (`token`, already
/// registered under `id`, cancels it), and answers it.
async fn run_request(
    conn: RpcConnection,
    id: RequestId,
    token: CancellationToken,
    work: std::pin::Pin<Box<Handled>>,
) {
    let (result, follow_ups) = tokio::select! {
        biased;
        _ = token.cancelled() => (Err(Error::request_cancelled()), FollowUps::default()),
        outcome = work => outcome,
    };
    lock(&conn.shared.incoming).map.remove(&id);
    if result.is_err() && conn.is_closed() {
        // Cancelled by the close, not by the peer: no answer; the peer sees
        // the connection end, which fails its call.
        return;
    }
    finish_request(&conn, &id, result, follow_ups).await;
}

/// Queues a handler's response, then runs the work it left for after the
/// response (in a task of its own, so the reader never runs it).
async fn finish_request(
    conn: &RpcConnection,
    id: &RequestId,
    result: Result<Box<RawValue>, Error>,
    follow_ups: FollowUps,
) {
    log_failure(id, &result);
    let outbox = &conn.shared.outbox;
    let sent = match outbox.push_message(&response(id, &result)).await {
        Err(Refused::Serialize(_)) => outbox.push(UNSERIALISABLE.to_vec()).await,
        sent => sent.map_err(drop),
    };
    if result.is_ok() && sent.is_ok() {
        follow_ups.start();
    }
}

fn log_failure(id: &RequestId, result: &Result<Box<RawValue>, Error>) {
    if let Err(err) = result {
        debug!(%id, code = err.code.0, message = %err.message, "request failed");
    }
}

impl RpcConnection {
    /// Answers a request the reader ran to its end. The reader never waits
    /// for room in the outgoing queue: an answer that finds it full goes
    /// past its bound. (Were the reader to wait, two peers flooding each
    /// other with requests could each wait for the other to read, forever.)
    pub(super) fn answer_from_reader(
        &self,
        id: &RequestId,
        result: Result<Box<RawValue>, Error>,
        follow_ups: FollowUps,
    ) {
        log_failure(id, &result);
        let outbox = &self.shared.outbox;
        let queued = match outbox.push_message_now(&response(id, &result)) {
            Err(Refused::Serialize(_)) => outbox.push_now(UNSERIALISABLE.to_vec()),
            queued => queued.map_err(drop),
        };
        if queued.is_ok() && result.is_ok() {
            follow_ups.start();
        }
    }
}

impl FollowUps {
    /// Starts the work registered with `after_response`, in order, in a
    /// task of its own.
    fn start(self) {
        let work = self.queue.into_inner();
        if !work.is_empty() {
            tokio::spawn(async move {
                for work in work {
                    work.await;
                }
            });
        }
    }
}

pub(super) async fn notification_lane(conn: RpcConnection, mut jobs: mpsc::UnboundedReceiver<Job>) {
    let id = conn.id();
    while let Some(job) = jobs.recv().await {
        match job {
            Job::Notify(work, _permit) => {
                let outcome = IN_NOTIFICATION
                    .scope(id, AssertUnwindSafe(work).catch_unwind())
                    .await;
                if outcome.is_err() {
                    warn!("a notification handler panicked");
                }
            }
            Job::Deliver(delivery, _permit) => conn.deliver(delivery),
            Job::Start(task, _permit) => {
                tokio::spawn(task);
            }
        }
        conn.shared.backlog.fetch_sub(1, Ordering::SeqCst);
    }
}
