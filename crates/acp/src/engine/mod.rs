//! The JSON-RPC engine shared by both sides of a connection.
//!
//! One engine runs per connection, parameterised by a `Handler` (the agent side
//! or the client side). It owns three tasks' worth of work:
//!
//! - **The reader** reads lines, parses each envelope without copying its params,
//!   and routes it. It never waits on user code, so it keeps reading while
//!   handlers wait on the peer.
//! - **The notification lane** runs notification handlers one at a time, in
//!   arrival order.
//! - When nothing is waiting on the lane, a notification handler's first step
//!   (up to its first await that has to wait) runs on the reader, and so does
//!   a request handler's: most handlers finish without waiting and cost no
//!   task of their own. So a handler must not block its thread (as no async
//!   code should); what has to wait goes on in the lane or in a task of its own.
//! - **The writer** is the only code that writes to the transport. Every
//!   outgoing line goes through one FIFO queue, bounded in bytes, so lines are
//!   written in the order their senders enqueued them. The reader and the
//!   writer share one task: an answer the reader makes is written by the same
//!   thread, without waking another.
//!
//! # Ordering
//! - Notifications are handled one at a time, in the order they arrived.
//! - Requests run concurrently, each in its own task: a slow handler never blocks
//!   another, and a handler may await requests to the peer (an agent's prompt
//!   handler calling `fs/read_text_file`) without deadlock, because the reader
//!   keeps running.
//! - A request is *started*, and a response is *delivered* to the caller awaiting
//!   it, only after every notification that arrived before it has been handled.
//!   So when a client's `prompt` call returns, every `session/update` the agent
//!   sent before its response has already gone through the client's handler; and a
//!   permission request is seen after the tool call it refers to.
//! - The exception keeps that rule from deadlocking: a response to a request that
//!   was sent *from inside* a notification handler is delivered at once (the lane
//!   is busy with that very handler).
//! - Sending awaits a place in the outgoing queue, so everything a handler sent
//!   (awaited) before it returned is on the wire before its response. In
//!   particular every `session/update` an agent sends before returning from
//!   `prompt` precedes the prompt response.
//! - A request is queued when the call is made, not when its future is first
//!   polled; its response is kept if it arrives before that poll.
//!
//! # Backpressure
//! The outgoing queue holds [`ConnectionOptions::outgoing_queue`] bytes of
//! lines; notifications, and the responses of handlers that ran in a task
//! of their own, wait when it is full (a line larger than the whole queue
//! waits until the queue is empty). Requests and `$/cancel_request` lines
//! skip the wait: they take room if there is some and go past the bound if
//! not (a request's line exists until it is written, in the queue or in its
//! caller's future, so waiting would bound nothing). The reader never waits for
//! room: an answer it produces (an error reply, a handler that finished at
//! once) that finds the queue full is queued past the bound, so two peers
//! flooding each other with requests never wait on each other forever. (A
//! peer that sends requests and never reads their answers makes the queue
//! grow by those answers' bytes.)
//!
//! The notification lane holds [`ConnectionOptions::notification_queue`]
//! jobs; the reader waits when it is full, which in turn makes the peer wait.
//! While a notification handler itself awaits a response from the peer, the
//! reader stops waiting for room in the lane (it could otherwise never read
//! that response); the lane may then grow past its bound until the handler's
//! response arrives.
//!
//! # Errors
//! An unparsable line is answered with -32700 and `id: null`; JSON that is not a
//! request, notification or response with -32600; a line over the size limit with
//! -32600 and skipped. Unknown methods get -32601 (unknown notifications are
//! logged at debug level and ignored); params that do not decode get -32602 with
//! the field path in `data` (a notification with bad params is dropped
//! unanswered). Each such dropped message is also reported, in order, to
//! [`ConnectionOptions::on_dropped`]. A response with an unknown id is logged
//! and dropped; a malformed response is never answered (its id is ours, not
//! the peer's) and fails the pending request it names.
//! When the transport closes, every pending outgoing request fails at once with
//! [`ConnectionError::Closed`] and every running incoming request is cancelled
//! (without an answer: the peer sees the connection end).
//! Dropping the I/O future closes the connection the same way.

use crate::codec::{DEFAULT_MAX_MESSAGE_SIZE, Frame, LineReader};
use crate::error::ConnectionError;
use crate::tap::{Direction, Tap, TapEvent};
use crate::transport::Transport;
use acp_schema::{CancelRequestNotification, Error, ErrorCode, Notification, Request, RequestId};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, debug, debug_span, warn};

mod call;
mod classify;
mod dropped;
mod outbox;
mod router;

use call::{Call, Delivery, PendingTable, Reply};
use classify::{Incoming, classify};
pub use dropped::{Dropped, OnDropped};
use outbox::{Outbox, Refused, write_loop};
use router::{Router, notification_lane};

/// The default size of the outgoing queue, in bytes.
const DEFAULT_OUTGOING_QUEUE: usize = 256 * 1024;

/// Tunables of a connection.
#[derive(Clone)]
#[non_exhaustive]
pub struct ConnectionOptions {
    /// The longest line accepted, in bytes (default 64 MiB). A longer line is
    /// answered with an error and skipped; the connection lives on.
    pub max_message_size: usize,
    /// How many bytes of outgoing lines may wait for the writer (default
    /// 256 KiB). Counting bytes, not lines, bounds the memory whatever the
    /// lines' sizes, and lets thousands of small requests go out at once.
    pub outgoing_queue: usize,
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
pub(crate) trait Handler: Send + Sync + 'static {
    /// Decodes an incoming request. `Err` is answered at once (unknown method,
    /// bad params); `Ok` is run concurrently with other requests.
    fn request(&self, method: &str, params: Option<&RawValue>) -> Result<HandlerFuture, Error>;
    /// Decodes an incoming notification; `Ok` is run on the notification lane.
    fn notification(
        &self,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<BoxFuture<'static, ()>, Error>;
}

/// Serialises a handler's typed result.
pub(crate) fn to_raw<T: Serialize>(result: Result<T, Error>) -> Result<Box<RawValue>, Error> {
    let value = result?;
    serde_json::value::to_raw_value(&value)
        .map_err(|e| Error::internal_error().data(format!("could not serialise result: {e}")))
}

/// Runs a typed handler and serialises its result.
pub(crate) fn respond<T, F>(work: F) -> HandlerFuture
where
    T: Serialize,
    F: std::future::Future<Output = Result<T, Error>> + Send + 'static,
{
    Box::pin(async move { to_raw(work.await) })
}

/// Runs a notification handler, logging its failure (the engine's span names
/// the method).
pub(crate) fn logged(work: BoxFuture<'static, Result<(), Error>>) -> BoxFuture<'static, ()> {
    Box::pin(async move {
        if let Err(err) = work.await {
            tracing::warn!(%err, "notification handler failed");
        }
    })
}

/// How a response looked when the reader routed it (borrowing the read line).
enum Payload<'a> {
    Result(&'a RawValue),
    Error(Error),
    /// A response-shaped message that did not parse.
    Malformed(String),
}

/// The incoming requests running in their own tasks, by id.
#[derive(Default)]
struct IncomingTable {
    closed: bool,
    map: HashMap<RequestId, CancellationToken>,
}

impl Shared {
    /// A cancellation token for the incoming request `id`, registered so that
    /// `$/cancel_request` and closing the connection reach it (already
    /// cancelled if the connection has closed).
    fn register_incoming(&self, id: &RequestId) -> CancellationToken {
        let token = CancellationToken::new();
        let mut table = lock(&self.incoming);
        if table.closed {
            token.cancel();
        } else {
            table.map.insert(id.clone(), token.clone());
        }
        token
    }
}

/// A job for the notification lane.
enum Job {
    Notify(BoxFuture<'static, ()>, Option<OwnedSemaphorePermit>),
    Deliver(Delivery, Option<OwnedSemaphorePermit>),
    Start(BoxFuture<'static, ()>, Option<OwnedSemaphorePermit>),
}

tokio::task_local! {
    /// Set while a notification handler of the connection with this id runs.
    static IN_NOTIFICATION: usize;
    /// Work a request handler asked to run once its response is queued.
    static AFTER_RESPONSE: FollowUps;
}

/// Futures registered with [`RpcConnection::after_response`] by one handler.
/// Lives in the handler's task-local scope while it runs, and is taken out
/// of the scope when it ends.
#[derive(Default)]
struct FollowUps {
    connection: usize,
    queue: std::cell::RefCell<Vec<BoxFuture<'static, ()>>>,
}

struct Shared {
    next_id: AtomicI64,
    pending: Mutex<PendingTable>,
    incoming: Mutex<IncomingTable>,
    outbox: Outbox,
    closed: CancellationToken,
    /// Set with `closed`, read on every line (cheaper than asking the token).
    is_closed: AtomicBool,
    close_reason: Mutex<Option<ConnectionError>>,
    /// Jobs queued on or running in the notification lane.
    backlog: AtomicUsize,
    /// Notification handlers currently awaiting a response from the peer.
    waiting_in_notification: AtomicUsize,
    waiting_changed: Notify,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A handle to one JSON-RPC connection: call and notify the peer, watch it close.
///
/// Cheap to clone; all clones share the connection. The typed wrappers
/// [`AgentSideConnection`](crate::AgentSideConnection) and
/// [`ClientSideConnection`](crate::ClientSideConnection) are built on it.
#[derive(Clone)]
pub struct RpcConnection {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for RpcConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RpcConnection")
            .field("closed", &self.is_closed())
            .finish()
    }
}

#[derive(Serialize)]
struct OutRequest<'a, P: ?Sized> {
    jsonrpc: &'static str,
    id: i64,
    method: &'a str,
    params: &'a P,
}

#[derive(Serialize)]
struct OutNotification<'a, P: ?Sized> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a P,
}

#[derive(Serialize)]
struct OutResponse<'a> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a Error>,
}

/// A handler's outcome as a response message.
fn response<'a>(id: &'a RequestId, result: &'a Result<Box<RawValue>, Error>) -> OutResponse<'a> {
    let (result, error) = match result {
        Ok(raw) => (Some(&**raw), None),
        Err(err) => (None, Some(err)),
    };
    OutResponse {
        jsonrpc: "2.0",
        id,
        result,
        error,
    }
}

/// Sent in place of a response that could not be serialised (which cannot
/// happen: ids, raw JSON and error objects with string keys only).
const UNSERIALISABLE: &[u8] =
    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#;

impl RpcConnection {
    /// Creates a connection handle; nothing happens until [`Unstarted::run`]
    /// is given a transport and a handler (which may hold clones of the handle).
    pub(crate) fn new(options: ConnectionOptions) -> (RpcConnection, Unstarted) {
        let shared = Arc::new(Shared {
            next_id: AtomicI64::new(0),
            pending: Mutex::new(PendingTable::default()),
            incoming: Mutex::new(IncomingTable::default()),
            outbox: Outbox::new(options.outgoing_queue),
            closed: CancellationToken::new(),
            is_closed: AtomicBool::new(false),
            close_reason: Mutex::new(None),
            backlog: AtomicUsize::new(0),
            waiting_in_notification: AtomicUsize::new(0),
            waiting_changed: Notify::new(),
        });
        let conn = RpcConnection { shared };
        let unstarted = Unstarted {
            conn: conn.clone(),
            options,
        };
        (conn, unstarted)
    }

    fn id(&self) -> usize {
        Arc::as_ptr(&self.shared) as usize
    }

    /// Sends a request and waits for its response, decoded as `R::Response`.
    ///
    /// The request is given its id and queued for the writer when this is
    /// called, not when the future is first polled, so the peer can work on
    /// it while the caller prepares more; requests made one after another are
    /// written in that order. A request never waits for room in the outgoing
    /// queue: its line exists until it is written either way, so waiting
    /// would bound nothing. Dropping the future before the response sends
    /// `$/cancel_request`.
    pub fn request<R: Request>(
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

    /// Sends an extension request (`_vendor/method`) with raw params; the
    /// result is raw JSON. Queued when called, like [`request`](Self::request).
    pub fn ext_request(
        &self,
        request: acp_schema::ExtRequest,
    ) -> impl std::future::Future<Output = Result<acp_schema::ExtResponse, ConnectionError>> + Send + '_
    {
        self.call(&request.method, &request.params)
            .map(|raw| Ok(acp_schema::ExtResponse(raw?)))
    }

    /// Registers a request and queues it (see [`request`](Self::request)).
    /// The future is free of the params' type, so the futures of many calls
    /// in flight at once stay small.
    fn call<P: Serialize + ?Sized>(&self, method: &str, params: &P) -> Call<'_> {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        Call::start(
            self,
            id,
            &OutRequest {
                jsonrpc: "2.0",
                id,
                method,
                params,
            },
        )
    }

    /// Sends a notification. Returns once it is queued for the writer, so
    /// notifications sent one after another are written in that order.
    pub async fn notify<N: Notification>(&self, params: N) -> Result<(), ConnectionError> {
        self.notify_with(N::METHOD, &params).await
    }

    /// Sends an extension notification (`_vendor/event`) with raw params.
    pub async fn ext_notify(
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
        match self.shared.outbox.push_message(&message).await {
            Ok(()) => Ok(()),
            Err(Refused::Closed) => Err(self.close_error()),
            Err(Refused::Serialize(e)) => Err(ConnectionError::Serialize(Arc::new(e))),
        }
    }

    /// Runs `work` right after the response of the request being handled has
    /// been queued, so anything `work` sends reaches the peer after that
    /// response (an agent announcing a new session's commands after answering
    /// `session/new`). It runs only if the handler succeeded. Called outside a
    /// request handler of this connection, `work` is spawned at once.
    pub fn after_response(&self, work: impl std::future::Future<Output = ()> + Send + 'static) {
        let work: BoxFuture<'static, ()> = Box::pin(work);
        let mut work = Some(work);
        let _ = AFTER_RESPONSE.try_with(|follow_ups| {
            if follow_ups.connection == self.id() {
                follow_ups.queue.borrow_mut().extend(work.take());
            }
        });
        if let Some(work) = work {
            tokio::spawn(work);
        }
    }

    /// Whether the connection has closed.
    pub fn is_closed(&self) -> bool {
        self.shared.is_closed.load(Ordering::Acquire)
    }

    /// Resolves when the connection has closed (end of input, an I/O error, or
    /// [`close`](Self::close)).
    pub async fn closed(&self) {
        self.shared.closed.cancelled().await
    }

    /// Closes the connection: pending requests fail with
    /// [`ConnectionError::Closed`], running handlers are cancelled, queued output
    /// is flushed and the I/O future ends.
    pub fn close(&self) {
        self.shutdown(None);
    }

    fn close_error(&self) -> ConnectionError {
        lock(&self.shared.close_reason)
            .clone()
            .unwrap_or(ConnectionError::Closed)
    }

    fn shutdown(&self, reason: Option<ConnectionError>) {
        {
            let mut slot = lock(&self.shared.close_reason);
            if slot.is_none() {
                *slot = reason;
            }
        }
        let waiting = lock(&self.shared.pending).close();
        for waker in waiting {
            waker.wake();
        }
        let running = {
            let mut table = lock(&self.shared.incoming);
            table.closed = true;
            std::mem::take(&mut table.map)
        };
        for (_, token) in running {
            token.cancel();
        }
        self.shared.is_closed.store(true, Ordering::Release);
        self.shared.closed.cancel();
    }

    /// Answers an incoming message with an error, from the reader (which
    /// never waits for room in the outgoing queue; see `answer_from_reader`).
    fn reply_error(&self, id: RequestId, err: Error) {
        self.answer_from_reader(&id, Err(err), FollowUps::default());
    }
}

/// A connection that has a handle but no I/O yet.
pub(crate) struct Unstarted {
    conn: RpcConnection,
    options: ConnectionOptions,
}

impl Unstarted {
    /// The I/O future: must be polled (spawned or awaited) for anything to
    /// happen; it ends when the connection closes.
    pub(crate) fn run(self, transport: Transport, handler: Arc<dyn Handler>) -> crate::IoFuture {
        let (reader, writer) = transport.into_parts();
        // Dropping the I/O future, even unpolled, closes the connection: nothing
        // would read responses any more, so pending requests must not wait.
        let close_on_drop = CloseOnDrop(self.conn.clone());
        Box::pin(async move {
            let _close_on_drop = close_on_drop;
            run(self.conn, handler, reader, writer, self.options).await
        })
    }
}

/// Closes the connection when the I/O future is dropped (after it ended, a no-op).
struct CloseOnDrop(RpcConnection);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.shutdown(None);
    }
}

async fn run(
    conn: RpcConnection,
    handler: Arc<dyn Handler>,
    reader: std::pin::Pin<Box<dyn tokio::io::AsyncRead + Send>>,
    writer: std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>>,
    options: ConnectionOptions,
) -> Result<(), ConnectionError> {
    let (lane_tx, lane_rx) = mpsc::unbounded_channel::<Job>();
    tokio::spawn(notification_lane(conn.clone(), lane_rx));
    let router = Router {
        conn: conn.clone(),
        handler,
        lane_tx,
        lane_permits: Arc::new(Semaphore::new(options.notification_queue.max(1))),
        on_dropped: options.on_dropped.clone(),
    };
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
                _ = conn.shared.closed.cancelled() => Ok(()),
                result = read_loop(conn.clone(), router, lines, options) => result,
            };
            conn.shutdown(result.clone().err());
            result
        };
        let (result, written) = tokio::join!(reading, write_loop(conn.clone(), writer, tap));
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
async fn read_loop(
    conn: RpcConnection,
    router: Router,
    mut lines: LineReader<std::pin::Pin<Box<dyn tokio::io::AsyncRead + Send>>>,
    options: ConnectionOptions,
) -> Result<(), ConnectionError> {
    // Waiting for the close is the caller's job; this only stops routing
    // lines already read once the connection has closed.
    while !conn.is_closed() {
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
            Ok(Some(Frame::TooLong { size })) => {
                let limit = options.max_message_size;
                warn!(size, limit, "skipping an over-long message");
                conn.reply_error(
                    RequestId::Null,
                    Error::invalid_request().data(format!(
                        "message of {size} bytes exceeds the limit of {limit} bytes"
                    )),
                );
                router.report(Dropped::TooLong { size, limit }).await;
            }
            Ok(None) => return Ok(()),
            Err(e) => return Err(ConnectionError::Io(Arc::new(e))),
        }
    }
    Ok(())
}
