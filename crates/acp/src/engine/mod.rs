//! The JSON-RPC engine shared by both sides of a connection.
//!
//! One engine runs per connection, parameterised by a [`Handler`] (the agent
//! side or the client side, which decode each method and call the user's
//! trait). Its state has one owner, [`Shared`], behind the cheap [`Engine`]
//! handle; whether the connection has closed, and why, is stored once there
//! ([`Closed`]).
//!
//! The work of a connection, by module:
//!
//! - [`classify`]: one line becomes a request, a notification or a response,
//!   without copying its params.
//! - [`incoming`]: the reader's side. It routes every message, and it alone
//!   decides where an incoming handler runs: on the reader itself (its first
//!   step, when nothing waits ahead of it), in a task of its own, or on the
//!   notification lane.
//! - [`request`]: the state of one incoming request (its cancellation, its
//!   follow-up work), and the table of those still running, for
//!   `$/cancel_request` and the close.
//! - [`lane`]: the notification lane's bookkeeping, read by the reader to
//!   decide and by calls made from inside a notification handler.
//! - [`call`]: our own requests: the table of those awaiting a response, the
//!   response as the reader found it, and the small future a caller awaits.
//! - [`outbox`]: the outgoing queue and the writer, the only code that writes
//!   to the transport.
//! - [`dropped`]: what the peer sent that never reached a handler.
//!
//! The reader and the writer share one task, so an answer the reader makes
//! is written by the same thread without waking another. The guarantees below
//! are tested in `crates/acp/tests` (the file named after each heading).
//!
//! # Ordering
//! - Notifications are handled one at a time, in the order they arrived.
//! - Requests run concurrently: a slow handler never blocks another, and a
//!   handler may await requests to the peer (an agent's prompt handler
//!   calling `fs/read_text_file`) without deadlock, because the reader keeps
//!   reading. A handler's first step (up to its first await that has to wait)
//!   runs on the reader when nothing waits on the lane ahead of it; most
//!   handlers finish there and cost no task. One that has to wait goes on in
//!   a task of its own. So a handler must not block its thread (as no async
//!   code should).
//! - A request is *started*, and a response is *delivered* to the caller
//!   awaiting it, only after every notification that arrived before it has
//!   been handled. So when a client's `prompt` call returns, every
//!   `session/update` the agent sent before its response has already gone
//!   through the client's handler; and a permission request is seen after the
//!   tool call it refers to.
//! - The exception keeps that rule from deadlocking: a response to a request
//!   that was sent *from inside* a notification handler is delivered at once
//!   (the lane is busy with that very handler).
//! - Sending a notification returns once it is queued, so everything a
//!   handler sent (awaited) before it returned is on the wire before its
//!   response. In particular every `session/update` an agent sends before
//!   returning from `prompt` precedes the prompt response.
//! - A request is queued when the call is made, not when its future is first
//!   polled; its response is kept if it arrives before that poll. Work a
//!   handler registers with `after_response` runs once its response is
//!   queued, so what it sends follows the response.
//!
//! # Backpressure
//! The outgoing queue holds [`ConnectionOptions::outgoing_queue`] bytes of
//! lines; notifications, and the responses of handlers that ran in a task of
//! their own, wait when it is full (a line larger than the whole queue waits
//! until the queue is empty). Requests and `$/cancel_request` lines skip the
//! wait: they take room if there is some and go past the bound if not (a
//! request's line exists until it is written, in the queue or in its caller's
//! future, so waiting would bound nothing). The reader does not wait for room
//! either: an answer it produces (an error reply, a handler that finished at
//! once) that finds the queue full is queued past the bound, so two peers
//! flooding each other with requests do not wait on each other.
//!
//! What goes past the bound is bounded too: once more than
//! [`ConnectionOptions::max_queued_output`] bytes wait for the writer, the
//! reader stops reading until the peer has read enough of them. A peer that
//! sends requests and never reads the answers then finds its own writes
//! blocked. And when the writer cannot hand a single byte to the transport
//! for [`ConnectionOptions::output_stall_timeout`], the connection closes with
//! [`ConnectionError::Stalled`].
//!
//! The notification lane holds [`ConnectionOptions::notification_queue`]
//! jobs; the reader waits when it is full, which in turn makes the peer wait.
//! While a notification handler itself awaits a response from the peer, the
//! reader stops waiting for room in the lane (it could otherwise never read
//! that response); the lane may then grow past its bound until the handler's
//! response arrives.
//!
//! # Errors
//! An unparsable line is answered with -32700 and `id: null`; JSON that is not
//! a request, notification or response with -32600; a line over the size
//! limit with -32600 and skipped. Unknown methods get -32601 (unknown
//! notifications are logged at debug level and ignored); params that do not
//! decode, or are not an object, get -32602 with the field path in `data` (a
//! notification with bad params is dropped unanswered). Each such dropped
//! message is also reported, in order, to [`ConnectionOptions::on_dropped`].
//! A response with an unknown id is logged and dropped; a malformed response
//! is never answered (its id is ours, not the peer's) and fails the pending
//! request it names.
//!
//! # Cancellation and close
//! `$/cancel_request` from the peer cancels the request's context token,
//! drops its handler and answers -32800. When the transport closes (or
//! [`Engine::close`] is called), every pending outgoing request fails at once
//! with the close's cause and every running incoming request is cancelled
//! and dropped without an answer (the peer sees the connection end). What was
//! queued before the close is still written, for up to five seconds. Dropping
//! the I/O future closes the connection the same way.

use crate::codec::{DEFAULT_MAX_MESSAGE_SIZE, Frame, LineReader};
use crate::error::ConnectionError;
use crate::tap::{Direction, Tap, TapEvent};
use crate::transport::{BoxedReader, Transport};
use acp_schema::{Error, Notification, Request};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::value::RawValue;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, SystemTime};
use tokio::sync::Notify;

mod call;
mod classify;
mod dropped;
mod incoming;
mod lane;
mod outbox;
mod request;

use call::{Call, PendingTable};
pub use dropped::{Dropped, OnDropped};
use incoming::Router;
use outbox::{OutNotification, Outbox, Refused};
use request::IncomingTable;
pub(crate) use request::RequestState;

/// The default size of the outgoing queue, in bytes.
const DEFAULT_OUTGOING_QUEUE: usize = 256 * 1024;

/// The default hard cap on output waiting for the writer, in bytes.
const DEFAULT_MAX_QUEUED_OUTPUT: usize = 64 * 1024 * 1024;

/// The default time the peer may take to read anything of what is queued.
const DEFAULT_OUTPUT_STALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Tunables of a connection.
#[derive(Clone)]
#[non_exhaustive]
pub struct ConnectionOptions {
    /// The longest line accepted, in bytes (default 64 MiB). A longer line is
    /// skipped unread and the connection lives on; a response among them
    /// fails the request it answers, a request is answered with an error
    /// (see [`Dropped::TooLong`]).
    pub max_message_size: usize,
    /// How many bytes of outgoing lines may wait for the writer before
    /// notifications and late responses wait for room (default 256 KiB).
    /// Counting bytes, not lines, bounds the memory whatever the lines'
    /// sizes, and lets thousands of small requests go out at once.
    pub outgoing_queue: usize,
    /// The hard cap on output waiting for the writer, in bytes (default
    /// 64 MiB): past it, the reader stops reading from the peer until the
    /// peer reads (see "Backpressure" in the crate docs).
    pub max_queued_output: usize,
    /// How long the writer waits for the peer to read anything before the
    /// connection closes with [`ConnectionError::Stalled`] (default 60 s).
    pub output_stall_timeout: Duration,
    /// How many notifications may wait for their handler (default 1024).
    pub notification_queue: usize,
    /// A callback that sees every line in and out.
    pub tap: Option<Tap>,
    /// A callback told about each message dropped instead of handled.
    pub on_dropped: Option<OnDropped>,
}

impl Default for ConnectionOptions {
    fn default() -> Self {
        ConnectionOptions {
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            outgoing_queue: DEFAULT_OUTGOING_QUEUE,
            max_queued_output: DEFAULT_MAX_QUEUED_OUTPUT,
            output_stall_timeout: DEFAULT_OUTPUT_STALL_TIMEOUT,
            notification_queue: 1024,
            tap: None,
            on_dropped: None,
        }
    }
}

impl std::fmt::Debug for ConnectionOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionOptions")
            .field("max_message_size", &self.max_message_size)
            .field("outgoing_queue", &self.outgoing_queue)
            .field("max_queued_output", &self.max_queued_output)
            .field("output_stall_timeout", &self.output_stall_timeout)
            .field("notification_queue", &self.notification_queue)
            .field("tap", &self.tap.is_some())
            .field("on_dropped", &self.on_dropped.is_some())
            .finish()
    }
}

impl ConnectionOptions {
    /// Sets [`max_message_size`](Self::max_message_size).
    #[must_use]
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }
    /// Sets [`outgoing_queue`](Self::outgoing_queue), in bytes (at least 1).
    #[must_use]
    pub fn outgoing_queue(mut self, bytes: usize) -> Self {
        self.outgoing_queue = bytes.max(1);
        self
    }
    /// Sets [`max_queued_output`](Self::max_queued_output), in bytes (at
    /// least the outgoing queue's size).
    #[must_use]
    pub fn max_queued_output(mut self, bytes: usize) -> Self {
        self.max_queued_output = bytes;
        self
    }
    /// Sets [`output_stall_timeout`](Self::output_stall_timeout).
    #[must_use]
    pub fn output_stall_timeout(mut self, timeout: Duration) -> Self {
        self.output_stall_timeout = timeout;
        self
    }
    /// Sets [`notification_queue`](Self::notification_queue) (at least 1).
    #[must_use]
    pub fn notification_queue(mut self, jobs: usize) -> Self {
        self.notification_queue = jobs.max(1);
        self
    }
    /// Installs a tap that sees every line in and out.
    #[must_use]
    pub fn tap(mut self, tap: impl Fn(&TapEvent<'_>) + Send + Sync + 'static) -> Self {
        self.tap = Some(Arc::new(tap));
        self
    }
    /// Installs a callback told about each message the engine drops instead
    /// of handing it to a handler (see [`Dropped`]). It runs on the
    /// notification lane: after every notification that arrived before the
    /// dropped message has been handled, and before any later one. Keep it
    /// quick; it holds up the lane.
    #[must_use]
    pub fn on_dropped(mut self, callback: impl Fn(&Dropped) + Send + Sync + 'static) -> Self {
        self.on_dropped = Some(Arc::new(callback));
        self
    }
}

/// What a request handler produces: the serialised result or an error object.
pub(crate) type HandlerFuture = BoxFuture<'static, Result<Box<RawValue>, Error>>;

/// The side-specific part of a connection: turns incoming methods into work.
///
/// Each message is first offered to the fast path ([`prepare_request`],
/// [`prepare_notification`]), which decodes the params straight from the line
/// while the envelope is read, in the one pass; anything it declines (an
/// error, an unusual field order, a method with effects at decode time) goes
/// through [`request`]/[`notification`] with the params as raw JSON, which
/// also give the exact error answers.
///
/// [`prepare_request`]: Handler::prepare_request
/// [`prepare_notification`]: Handler::prepare_notification
/// [`request`]: Handler::request
/// [`notification`]: Handler::notification
pub(crate) trait Handler: Send + Sync + 'static {
    /// Decodes the params of request `method` from `params` and makes its
    /// work, or fails (the line then goes the slow way). Must have no effect
    /// that outlives the returned work.
    fn prepare_request<'de, D: serde::Deserializer<'de>>(
        &self,
        method: &str,
        params: D,
        request: &Arc<RequestState>,
    ) -> Result<HandlerFuture, D::Error>;
    /// Like [`prepare_request`](Self::prepare_request), for a notification.
    fn prepare_notification<'de, D: serde::Deserializer<'de>>(
        &self,
        method: &str,
        params: D,
    ) -> Result<BoxFuture<'static, ()>, D::Error>;
    /// Decodes an incoming request. `Err` is answered at once (unknown method,
    /// bad params); `Ok` is run concurrently with other requests. `request`
    /// is the request's own state, for its context.
    fn request(
        &self,
        method: &str,
        params: Option<&RawValue>,
        request: &Arc<RequestState>,
    ) -> Result<HandlerFuture, Error>;
    /// Decodes an incoming notification; `Ok` is run on the notification lane.
    fn notification(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<BoxFuture<'static, ()>, Error>;
    /// Sees the result of our request `id` on the reader, before the line
    /// after it is read (the version negotiation switches a connection to the
    /// version an `initialize` result names there). Must be quick.
    fn result_seen(&self, id: i64, result: &RawValue) {
        let _ = (id, result);
    }
}

/// Runs a typed request handler and serialises its result.
pub(crate) fn respond<T, F>(work: F) -> HandlerFuture
where
    T: Serialize,
    F: std::future::Future<Output = Result<T, Error>> + Send + 'static,
{
    Box::pin(async move {
        let value = work.await?;
        serde_json::value::to_raw_value(&value)
            .map_err(|e| Error::internal_error().data(format!("could not serialise result: {e}")))
    })
}

/// Decodes `T` from `params` only if they are a JSON object (serde would
/// read an array into a struct by position), for the fast path.
pub(crate) fn object<'de, T, D>(params: D) -> Result<T, D::Error>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    struct Object<T>(std::marker::PhantomData<T>);
    impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Object<T> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
        }
    }
    params.deserialize_map(Object(std::marker::PhantomData))
}

/// The fast path declines a message: it goes the slow way.
pub(crate) fn declined<E: serde::de::Error>() -> E {
    E::custom("declined by the fast path")
}

/// Runs a notification handler's call (an expression, evaluated in the
/// boxed future at its first poll), logging its failure (the engine's span
/// names the method). A macro rather than a function taking the handler's
/// future: the decoded notification is then moved into the box once,
/// instead of through two futures on the way.
macro_rules! logged {
    ($call:expr) => {{
        let work: ::futures::future::BoxFuture<'static, ()> = Box::pin(async move {
            if let Err(err) = $call.await {
                ::tracing::warn!(%err, "notification handler failed");
            }
        });
        work
    }};
}
pub(crate) use logged;

/// Whether the connection has closed, and why: stored once, here.
///
/// Everything else that reacts to the close (the tables, the queue, the
/// reader and the writer) asks this, or is woken by it.
struct Closed {
    /// Set once, with [`ConnectionError::Closed`] for a clean close.
    cause: OnceLock<ConnectionError>,
    /// When it was set (for the writer's last flush).
    at: OnceLock<tokio::time::Instant>,
    /// Wakes whoever waits for the close.
    wake: Notify,
}

impl Closed {
    fn is_closed(&self) -> bool {
        self.cause.get().is_some()
    }

    /// Records the close; true the first time.
    fn close(&self, cause: ConnectionError) -> bool {
        let first = self.cause.set(cause).is_ok();
        if first {
            let _ = self.at.set(tokio::time::Instant::now());
            self.wake.notify_waiters();
        }
        first
    }

    /// When the connection closed, once it has.
    fn at(&self) -> Option<tokio::time::Instant> {
        self.at.get().copied()
    }

    /// The error a call made after the close fails with.
    fn error(&self) -> ConnectionError {
        self.cause.get().cloned().unwrap_or(ConnectionError::Closed)
    }

    async fn wait(&self) {
        loop {
            let woken = self.wake.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            if self.is_closed() {
                return;
            }
            woken.await;
        }
    }
}

/// The state of one connection, owned here and shared by every handle.
struct Shared {
    closed: Closed,
    /// The id of our next request.
    next_id: AtomicI64,
    /// Our requests awaiting their response.
    pending: Mutex<PendingTable>,
    /// The peer's requests still running.
    incoming: Mutex<IncomingTable>,
    outbox: Outbox,
    /// The notification lane's bookkeeping (see [`incoming`]).
    lane: lane::LaneState,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A handle to one connection's engine: call and notify the peer, watch it
/// close. Cheap to clone; all clones share the connection.
#[derive(Clone)]
pub(crate) struct Engine {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl Engine {
    /// Creates a connection; nothing happens until [`Unstarted::run`] is
    /// given a transport and a handler (which may hold clones of the handle).
    pub(crate) fn new(options: ConnectionOptions) -> (Engine, Unstarted) {
        let shared = Arc::new(Shared {
            closed: Closed {
                cause: OnceLock::new(),
                at: OnceLock::new(),
                wake: Notify::new(),
            },
            next_id: AtomicI64::new(0),
            pending: Mutex::new(PendingTable::default()),
            incoming: Mutex::new(IncomingTable::default()),
            outbox: Outbox::new(
                options.outgoing_queue,
                options.max_queued_output,
                options.output_stall_timeout,
            ),
            lane: lane::LaneState::default(),
        });
        let engine = Engine { shared };
        let unstarted = Unstarted {
            engine: engine.clone(),
            options,
        };
        (engine, unstarted)
    }

    /// An identity of the connection, for telling connections apart.
    fn id(&self) -> usize {
        Arc::as_ptr(&self.shared) as usize
    }

    /// Sends a request and waits for its response, decoded as `R::Response`.
    ///
    /// The request is given its id and queued for the writer when this is
    /// called, not when the future is first polled. Dropping the future
    /// before the response sends `$/cancel_request`.
    pub(crate) fn request<R: Request>(
        &self,
        params: R,
    ) -> impl std::future::Future<Output = Result<R::Response, ConnectionError>> + Send + '_ {
        let call = self.call(R::METHOD, &params);
        drop(params);
        // A combinator, not an `async` block: awaiting the captured call
        // inside one would store it twice.
        call.map(|raw| {
            acp_schema::decode::<R::Response>(acp_schema::params_text(Some(&raw?)))
                .map_err(ConnectionError::Protocol)
        })
    }

    /// Sends an extension request with raw params; the result is raw JSON.
    pub(crate) fn ext_request(
        &self,
        request: acp_schema::ExtRequest,
    ) -> impl std::future::Future<Output = Result<acp_schema::ExtResponse, ConnectionError>> + Send + '_
    {
        self.call(&request.method, &request.params)
            .map(|raw| Ok(acp_schema::ExtResponse(raw?)))
    }

    /// Registers a request and queues it. The future is free of the params'
    /// type, so the futures of many calls in flight at once stay small.
    fn call<P: Serialize + ?Sized>(&self, method: &str, params: &P) -> Call<'_> {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        Call::start(self, id, method, params)
    }

    /// Sends a request with raw params, telling `observe` its id before it is
    /// queued (so that whoever watches for its result knows the id before
    /// the result can arrive); the result is raw JSON.
    #[cfg(feature = "v2")]
    pub(crate) fn call_observed<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
        observe: impl FnOnce(i64),
    ) -> impl std::future::Future<Output = Result<Box<RawValue>, ConnectionError>> + Send + '_ {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        observe(id);
        Call::start(self, id, method, params)
    }

    /// Sends a notification; returns once it is queued for the writer.
    pub(crate) async fn notify<N: Notification>(&self, params: N) -> Result<(), ConnectionError> {
        self.notify_with(N::METHOD, &params).await
    }

    /// Sends an extension notification with raw params.
    pub(crate) async fn ext_notify(
        &self,
        notification: acp_schema::ExtNotification,
    ) -> Result<(), ConnectionError> {
        self.notify_with(&notification.method, &notification.params)
            .await
    }

    async fn notify_with<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<(), ConnectionError> {
        if self.is_closed() {
            return Err(self.close_error());
        }
        let message = OutNotification {
            jsonrpc: "2.0",
            method,
            params,
        };
        match self
            .shared
            .outbox
            .push_message(&self.shared.closed, &message)
            .await
        {
            Ok(()) => Ok(()),
            Err(Refused::Closed) => Err(self.close_error()),
            Err(Refused::Serialize(e)) => Err(ConnectionError::Serialize(Arc::new(e))),
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.shared.closed.is_closed()
    }

    /// Why the connection closed, once it has.
    pub(crate) fn close_reason(&self) -> Option<ConnectionError> {
        self.shared.closed.cause.get().cloned()
    }

    pub(crate) async fn closed(&self) {
        self.shared.closed.wait().await
    }

    pub(crate) fn close(&self) {
        self.shutdown(ConnectionError::Closed);
    }

    fn close_error(&self) -> ConnectionError {
        self.shared.closed.error()
    }

    /// Closes the connection for `cause` (the first cause wins): fails every
    /// pending call, cancels every running handler, and wakes every waiter.
    fn shutdown(&self, cause: ConnectionError) {
        if !self.shared.closed.close(cause) {
            return;
        }
        // Each table is emptied under its own lock after the close was
        // recorded: an entry added before is drained here, and one that
        // would be added after sees the close under the same lock.
        call::fail_all(&self.shared);
        request::abort_all(&self.shared);
        self.shared.outbox.wake_senders();
        self.shared.lane.wake();
    }
}

/// A connection that has a handle but no I/O yet.
pub(crate) struct Unstarted {
    engine: Engine,
    options: ConnectionOptions,
}

impl Unstarted {
    /// The I/O future: must be polled (spawned or awaited) for anything to
    /// happen; it ends when the connection closes.
    pub(crate) fn run<H: Handler>(self, transport: Transport, handler: Arc<H>) -> crate::IoFuture {
        let (reader, writer) = transport.into_parts();
        // Dropping the I/O future, even unpolled, closes the connection: nothing
        // would read responses any more, so pending requests must not wait.
        let close_on_drop = CloseOnDrop(self.engine.clone());
        Box::pin(async move {
            let _close_on_drop = close_on_drop;
            run(self.engine, handler, reader, writer, self.options).await
        })
    }
}

/// Closes the connection when the I/O future is dropped (after it ended, a no-op).
struct CloseOnDrop(Engine);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}

async fn run<H: Handler>(
    engine: Engine,
    handler: Arc<H>,
    reader: BoxedReader,
    writer: crate::transport::BoxedWriter,
    options: ConnectionOptions,
) -> Result<(), ConnectionError> {
    let router = Router::start(engine.clone(), handler, &options);
    let tap = options.tap.clone();
    let lines = LineReader::new(reader, options.max_message_size);
    // The reader and the writer share one task: what the reader answers at
    // once is written by the same thread without waking another, and the
    // task is polled by a worker thread even when the I/O future is awaited
    // on a thread that is not one (`block_on`). Dropping the I/O future
    // closes the connection (see `CloseOnDrop`), which ends the task: the
    // reader stops wherever it waits, the writer sends what was queued.
    let io = async move {
        let reading = async {
            let result = tokio::select! {
                biased;
                _ = engine.closed() => Ok(()),
                result = read_loop(&engine, router, lines, &options) => result,
            };
            match &result {
                Ok(()) => engine.close(),
                Err(e) => engine.shutdown(e.clone()),
            }
            result
        };
        let writing = outbox::write_loop(&engine, writer, tap);
        let (result, written) = tokio::join!(reading, writing);
        match written {
            Err(e) if result.is_ok() => Err(e),
            _ => result,
        }
    };
    match tokio::spawn(io).await {
        Ok(result) => result,
        Err(e) => Err(ConnectionError::Io(Arc::new(std::io::Error::other(
            format!("the connection's I/O task stopped: {e}"),
        )))),
    }
}

/// Reads lines until the end of input, an error or a close, routing each.
async fn read_loop<H: Handler>(
    engine: &Engine,
    router: Router<H>,
    mut lines: LineReader<BoxedReader>,
    options: &ConnectionOptions,
) -> Result<(), ConnectionError> {
    // Waiting for the close is the caller's job; this only stops routing
    // lines already read once the connection has closed.
    while !engine.is_closed() {
        // Past the hard cap on queued output, read nothing more until the
        // peer has read some of it (or the writer gives up on it).
        engine
            .shared
            .outbox
            .wait_below_cap(&engine.shared.closed)
            .await;
        match lines.next_frame().await {
            Ok(Some(Frame::Message(bytes))) => {
                if let Some(tap) = &options.tap {
                    tap(&TapEvent {
                        direction: Direction::Incoming,
                        at: SystemTime::now(),
                        line: bytes,
                    });
                }
                router.route(bytes).await;
            }
            Ok(Some(Frame::TooLong { size, head })) => {
                router.too_long(size, options.max_message_size, head).await;
            }
            Ok(None) => return Ok(()),
            Err(e) => return Err(ConnectionError::Io(Arc::new(e))),
        }
    }
    Ok(())
}
