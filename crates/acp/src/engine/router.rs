//! Routing parsed messages: requests to concurrent tasks, notifications and
//! ordered deliveries to the notification lane, responses to their callers.

use super::*;

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
                    .reply_error(RequestId::Null, Error::parse_error().data(msg.as_str()))
                    .await;
                self.report(Dropped::Unparsable { reason: msg }).await;
            }
            Incoming::BadResponse(id, msg) => {
                warn!(%id, error = %msg, "malformed response");
                self.on_response(id, Payload::Malformed(msg)).await;
            }
            Incoming::Invalid(id, msg) => {
                debug!(error = %msg, "invalid message");
                self.conn
                    .reply_error(
                        id.unwrap_or(RequestId::Null),
                        Error::invalid_request().data(msg.as_str()),
                    )
                    .await;
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
        if lock(&self.conn.shared.incoming).contains_key(&id) {
            self.conn
                .reply_error(
                    id,
                    Error::invalid_request().data("a request with this id is still running"),
                )
                .await;
            return;
        }
        let work = match self.handler.request(method, params) {
            Ok(work) => work,
            Err(err) => {
                debug!(%method, %id, code = err.code.0, "request rejected");
                self.conn.reply_error(id, err).await;
                return;
            }
        };
        let token = CancellationToken::new();
        lock(&self.conn.shared.incoming).insert(id.clone(), token.clone());
        let span = debug_span!("acp.request", %method, %id);
        let conn = self.conn.clone();
        let follow_ups = FollowUps {
            connection: conn.id(),
            ..FollowUps::default()
        };
        let work = AFTER_RESPONSE.scope(follow_ups.clone(), work);
        let task = async move {
            let result = tokio::select! {
                biased;
                _ = token.cancelled() => Err(Error::request_cancelled()),
                outcome = AssertUnwindSafe(work).catch_unwind() => outcome.unwrap_or_else(|_| {
                    Err(Error::internal_error().data("the handler panicked"))
                }),
            };
            lock(&conn.shared.incoming).remove(&id);
            if let Err(err) = &result {
                debug!(code = err.code.0, message = %err.message, "request failed");
            }
            let sent = conn.shared.out_tx.send(response_line(&id, &result)).await;
            let follow_ups = std::mem::take(&mut *lock(&follow_ups.queue));
            if result.is_ok() && sent.is_ok() {
                for work in follow_ups {
                    work.await;
                }
            }
        }
        .instrument(span);
        if self.lane_idle() {
            tokio::spawn(task);
        } else {
            self.enqueue(|permit| Job::Start(Box::pin(task), permit))
                .await;
        }
    }

    async fn on_notification(&self, method: &str, params: Option<&RawValue>) {
        if method == CancelRequestNotification::METHOD {
            match acp_schema::decode::<CancelRequestNotification>(acp_schema::params_text(params)) {
                Ok(cancel) => {
                    if let Some(token) = lock(&self.conn.shared.incoming).get(&cancel.request_id) {
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
                let work: BoxFuture<'static, ()> = Box::pin(work.instrument(span));
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
        let pending = match &id {
            RequestId::Number(n) => lock(&self.conn.shared.pending).map.remove(n),
            _ => None,
        };
        let Some(pending) = pending else {
            match payload {
                Payload::Error(err) if id == RequestId::Null => {
                    warn!(%err, "peer reported an error")
                }
                _ => debug!(%id, "response matches no pending request; dropped"),
            }
            return;
        };
        let method = pending.method;
        let delivery = Delivery {
            tx: pending.tx,
            reply: payload.into(),
        };
        if pending.immediate || self.lane_idle() {
            delivery.deliver();
        } else {
            debug!(%method, %id, "response waits for earlier notifications");
            self.enqueue(|permit| Job::Deliver(delivery, permit)).await;
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
            Job::Deliver(delivery, _permit) => delivery.deliver(),
            Job::Start(task, _permit) => {
                tokio::spawn(task);
            }
        }
        conn.shared.backlog.fetch_sub(1, Ordering::SeqCst);
    }
}
