//! The outgoing queue and the single writer.
//!
//! Senders append their lines to shared buffers of up to [`BATCH`] bytes;
//! the writer takes everything queued at once and writes it as it is. So a
//! small line costs no allocation of its own in the queue and no copy in the
//! writer, and the buffers are reused from batch to batch instead of being
//! allocated and freed line by line. A line of [`BATCH`] bytes or more is
//! queued as it is, without a copy.
//!
//! Room in the queue is counted in bytes with a semaphore. Room the writer
//! frees goes to the longest waiter first, so a large line is not starved by
//! small ones. Lines that skip the wait (see "Backpressure" in the engine's
//! docs) are counted too, against the hard cap the reader waits on.

use super::{Closed, Engine, lock};
use crate::error::ConnectionError;
use crate::tap::{Direction, Tap, TapEvent};
use acp_schema::{Error, RequestId};
use serde::Serialize;
use serde_json::value::RawValue;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, Semaphore};
use tokio::time::Instant;
use tracing::warn;

/// A request as it goes on the wire.
#[derive(Serialize)]
pub(super) struct OutRequest<'a, P: ?Sized> {
    pub(super) jsonrpc: &'static str,
    pub(super) id: i64,
    pub(super) method: &'a str,
    pub(super) params: &'a P,
}

/// A notification as it goes on the wire.
#[derive(Serialize)]
pub(super) struct OutNotification<'a, P: ?Sized> {
    pub(super) jsonrpc: &'static str,
    pub(super) method: &'a str,
    pub(super) params: &'a P,
}

/// A response as it goes on the wire.
#[derive(Serialize)]
pub(super) struct OutResponse<'a> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a Error>,
}

impl<'a> OutResponse<'a> {
    /// A handler's outcome as a response message.
    pub(super) fn new(id: &'a RequestId, result: &'a Result<Box<RawValue>, Error>) -> Self {
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
}

/// Sent in place of a response that could not be serialised (which cannot
/// happen: ids, raw JSON and error objects with string keys only).
pub(super) const UNSERIALISABLE: &[u8] =
    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#;

/// Buffers of small lines are written out once they reach this size; longer
/// lines are queued whole.
const BATCH: usize = 64 * 1024;

pub(super) struct Outbox {
    state: Mutex<Queued>,
    /// Free room in the queue, in bytes.
    room: Semaphore,
    /// The queue's size in bytes (fits the semaphore's permits).
    size: usize,
    /// Every byte queued and not yet written, past the bound or not.
    bytes: AtomicUsize,
    /// The hard cap on queued bytes, past which the reader stops reading.
    cap: usize,
    /// How long a write may make no progress before the connection closes.
    stall_timeout: Duration,
    /// Wakes the writer when the queue stops being empty.
    ready: Notify,
    /// Wakes the reader when the writer has written a batch.
    drained: Notify,
}

#[derive(Default)]
struct Queued {
    chunks: VecDeque<Vec<u8>>,
    /// Whether the last chunk is a buffer of small lines that may grow.
    open_tail: bool,
    /// Room taken by the queued lines, given back once they are written.
    taken: usize,
    /// Emptied buffers, kept for the next small lines.
    spare: Vec<Vec<u8>>,
}

impl Outbox {
    pub(super) fn new(size: usize, cap: usize, stall_timeout: Duration) -> Self {
        let size = size.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
        Outbox {
            state: Mutex::new(Queued::default()),
            room: Semaphore::new(size),
            size,
            bytes: AtomicUsize::new(0),
            cap: cap.max(size),
            stall_timeout,
            ready: Notify::new(),
            drained: Notify::new(),
        }
    }

    /// Waits while more than the hard cap of bytes is queued (see
    /// "Backpressure" in the engine's docs), or until the close.
    pub(super) async fn wait_below_cap(&self, closed: &Closed) {
        // Below the cap (the reader's case for every line it reads), no
        // waiter is registered and removed again.
        if self.bytes.load(Ordering::Acquire) <= self.cap || closed.is_closed() {
            return;
        }
        loop {
            let drained = self.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            if self.bytes.load(Ordering::Acquire) <= self.cap || closed.is_closed() {
                return;
            }
            drained.await;
        }
    }

    /// Wakes everyone waiting on the queue at the close: senders waiting
    /// for room give up, the writer drains, the reader stops waiting.
    pub(super) fn wake_senders(&self) {
        self.room.close();
        self.ready.notify_one();
        self.drained.notify_waiters();
    }

    /// Queues a line (without its newline), waiting while the queue is
    /// full. The future is small and takes room only in its caller's own
    /// future (see [`Push`]).
    pub(super) fn push<'a>(&'a self, closed: &'a Closed, line: Vec<u8>) -> Push<'a> {
        Push {
            cost: self.cost(&line),
            outbox: self,
            closed,
            line,
            wait: None,
        }
    }

    /// Queues a line at once: in the room left if there is enough, past the
    /// queue's bound if not. For lines that must not wait: requests,
    /// `$/cancel_request` sent from a drop, and answers the reader produces
    /// (see "Backpressure" in the engine's docs). `Err` if the queue closed.
    pub(super) fn push_now(&self, closed: &Closed, mut line: Vec<u8>) -> Result<(), ()> {
        self.append_now(closed, &mut line)
    }

    fn append_now(&self, closed: &Closed, line: &mut Vec<u8>) -> Result<(), ()> {
        let cost = self.cost(line);
        let taken = match self.room.try_acquire_many(cost) {
            Ok(permit) => {
                permit.forget();
                cost as usize
            }
            Err(_) => 0,
        };
        self.append(closed, line, taken)
    }

    /// Serialises `message` as one line and queues it, waiting while the
    /// queue is full. The line is written in a buffer kept by the thread and
    /// copied into the queue, so it costs no allocation of its own unless it
    /// has to wait for room.
    pub(super) async fn push_message(
        &self,
        closed: &Closed,
        message: &impl Serialize,
    ) -> Result<(), Refused> {
        let full = with_scratch(|line| {
            serde_json::to_writer(&mut *line, message).map_err(Refused::Serialize)?;
            let cost = self.cost(line);
            match self.room.try_acquire_many(cost) {
                Ok(permit) => permit.forget(),
                Err(tokio::sync::TryAcquireError::Closed) => return Err(Refused::Closed),
                Err(tokio::sync::TryAcquireError::NoPermits) => {
                    // The line waits for room in a buffer of its own: a
                    // large one (the scratch buffer would not be kept
                    // anyway) is taken rather than copied.
                    let waiting = if line.len() > BATCH {
                        std::mem::take(line)
                    } else {
                        line.clone()
                    };
                    return Ok(Some(waiting));
                }
            }
            self.append(closed, line, cost as usize)
                .map_err(|()| Refused::Closed)?;
            Ok(None)
        })?;
        match full {
            Some(line) => self.push(closed, line).await.map_err(|()| Refused::Closed),
            None => Ok(()),
        }
    }

    /// Serialises `message` as one line and queues it at once, like
    /// [`push_now`](Self::push_now).
    pub(super) fn push_message_now(
        &self,
        closed: &Closed,
        message: &impl Serialize,
    ) -> Result<(), Refused> {
        with_scratch(|line| {
            serde_json::to_writer(&mut *line, message).map_err(Refused::Serialize)?;
            self.append_now(closed, line).map_err(|()| Refused::Closed)
        })
    }

    /// The room a line and its newline take (all of it for a line larger
    /// than the queue, which then waits for the queue to empty).
    fn cost(&self, line: &[u8]) -> u32 {
        (line.len() + 1).min(self.size) as u32
    }

    /// Appends `line` to the queue: copied into a batch buffer, or, when
    /// it is long, taken whole (leaving `line` empty).
    fn append(&self, closed: &Closed, line: &mut Vec<u8>, cost: usize) -> Result<(), ()> {
        // A newline inside a message would split it in two on the wire. In
        // valid JSON it can only be whitespace between tokens (raw JSON a
        // handler passed through, pretty-printed), where a space does as well.
        if memchr::memchr(b'\n', line).is_some() {
            for byte in line.iter_mut().filter(|b| **b == b'\n') {
                *byte = b' ';
            }
        }
        let mut queued = lock(&self.state);
        if closed.is_closed() {
            return Err(());
        }
        let was_empty = queued.chunks.is_empty();
        queued.taken += cost;
        self.bytes.fetch_add(line.len() + 1, Ordering::AcqRel);
        if line.len() >= BATCH {
            queued.chunks.push_back(std::mem::take(line));
            queued.open_tail = false;
            queued.tail().push(b'\n');
        } else {
            // A line that would make the buffer grow goes to a fresh one: a
            // buffer that grew would be reallocated and copied, and then
            // take twice the room of the lines it holds.
            if queued.open_tail
                && queued
                    .chunks
                    .back()
                    .is_some_and(|t| t.len() + line.len() + 1 > t.capacity())
            {
                queued.open_tail = false;
            }
            let tail = queued.tail();
            tail.extend_from_slice(line);
            tail.push(b'\n');
            if tail.len() >= BATCH {
                queued.open_tail = false;
            }
        }
        drop(queued);
        if was_empty {
            self.ready.notify_one();
        }
        Ok(())
    }
}

/// A line waiting for room in the outgoing queue; resolves once it is
/// queued (`Err` if the connection closed first, and the line is dropped).
///
/// There is room most of the time, so room is tried for first, and the
/// waiting acquire is boxed only when there is none: an awaited acquire
/// spends scheduler budget even when there is room, which slows a task that
/// sends thousands of lines, and would take room in every caller's future.
/// The waiting acquire spends no budget either: a task waiting on many
/// sends at once (`join_all`) would otherwise find the budget spent after a
/// hundred of them, and poll every other one again and again for nothing.
pub(super) struct Push<'a> {
    outbox: &'a Outbox,
    closed: &'a Closed,
    line: Vec<u8>,
    cost: u32,
    wait: Option<Acquire<'a>>,
}

type Acquire<'a> = std::pin::Pin<
    Box<
        dyn std::future::Future<
                Output = Result<tokio::sync::SemaphorePermit<'a>, tokio::sync::AcquireError>,
            > + Send
            + 'a,
    >,
>;

impl std::future::Future for Push<'_> {
    type Output = Result<(), ()>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        use std::task::Poll;
        let this = self.get_mut();
        let outbox = this.outbox;
        let permit = match &mut this.wait {
            None => match outbox.room.try_acquire_many(this.cost) {
                Ok(permit) => Ok(permit),
                Err(tokio::sync::TryAcquireError::Closed) => return Poll::Ready(Err(())),
                Err(tokio::sync::TryAcquireError::NoPermits) => {
                    let wait = tokio::task::unconstrained(outbox.room.acquire_many(this.cost));
                    let wait = this.wait.insert(Box::pin(wait));
                    std::task::ready!(wait.as_mut().poll(cx)).map_err(|_| ())
                }
            },
            Some(wait) => std::task::ready!(wait.as_mut().poll(cx)).map_err(|_| ()),
        };
        this.wait = None;
        let Ok(permit) = permit else {
            return Poll::Ready(Err(()));
        };
        permit.forget();
        Poll::Ready(outbox.append(this.closed, &mut this.line, this.cost as usize))
    }
}

/// Why a message was not queued.
pub(super) enum Refused {
    /// The connection closed.
    Closed,
    /// The message did not serialise.
    Serialize(serde_json::Error),
}

thread_local! {
    /// The buffer lines are serialised into before being copied into the queue.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` with this thread's scratch buffer, emptied (or with a fresh
/// buffer if a serialiser, re-entering, already holds it).
fn with_scratch<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut line) => {
            line.clear();
            let result = f(&mut line);
            if line.capacity() > BATCH {
                // Not kept: one large message must not pin its size.
                *line = Vec::new();
            }
            result
        }
        Err(_) => f(&mut Vec::new()),
    })
}

impl Queued {
    /// The buffer small lines are appended to, opened if needed.
    fn tail(&mut self) -> &mut Vec<u8> {
        if !self.open_tail {
            let buffer = self
                .spare
                .pop()
                .unwrap_or_else(|| Vec::with_capacity(BATCH));
            self.chunks.push_back(buffer);
            self.open_tail = true;
        }
        self.chunks.back_mut().expect("a tail was just opened")
    }
}

type Writer = std::pin::Pin<Box<dyn AsyncWrite + Send>>;

/// The writer task: writes every queued line, in queue order, until the
/// connection closes; then what was queued before the close, for at most
/// [`CLOSE_FLUSH_TIMEOUT`] after it.
pub(super) async fn write_loop(
    engine: &Engine,
    mut writer: Writer,
    tap: Option<Tap>,
) -> Result<(), ConnectionError> {
    let result = match write_batches(engine, &mut writer, tap.as_ref()).await {
        Ok(()) => Ok(()),
        Err(WriteError::Abandoned) => {
            warn!("the peer stopped reading; unsent output dropped at close");
            Ok(())
        }
        Err(WriteError::Failed(e)) => Err(e),
    };
    if let Err(e) = &result {
        engine.shutdown(e.clone());
    }
    // Nothing will be written any more: senders waiting for room give up.
    engine.shared.outbox.wake_senders();
    result
}

/// Why the writer stopped early.
enum WriteError {
    /// The transport failed, or the peer stalled.
    Failed(ConnectionError),
    /// The connection closed and the peer did not read what was queued in
    /// time.
    Abandoned,
}

async fn write_batches(
    engine: &Engine,
    writer: &mut Writer,
    tap: Option<&Tap>,
) -> Result<(), WriteError> {
    let outbox = &engine.shared.outbox;
    let mut batch = Batch::default();
    // The size of the batch written last.
    let mut last = 0;
    loop {
        if !batch.take(outbox) {
            // After a large batch, one yield lets a busy producer add to the
            // next one before the flush. After a small one (a request or an
            // answer on its own) it would only cost latency: a yield makes
            // the scheduler poll for I/O on the way.
            if last >= BUSY_BATCH {
                tokio::task::yield_now().await;
            }
            if !batch.take(outbox) {
                outbox.within_stall(engine, writer.flush()).await?;
                if engine.is_closed() {
                    // Nothing is queued after the close: all of it is out.
                    return Ok(());
                }
                // The close wakes this too: the shutdown notifies `ready`
                // after recording the close (`wake_senders`), and a
                // notification sent before this waits is kept for it.
                outbox.ready.notified().await;
                continue;
            }
        }
        last = batch.bytes;
        batch.write(engine, writer, tap).await?;
    }
}

/// A batch at least this large suggests a producer still busy queueing.
const BUSY_BATCH: usize = 4 * 1024;

impl Outbox {
    /// Runs one write or flush: it fails with [`ConnectionError::Stalled`]
    /// if it makes no progress within the stall timeout, and is abandoned
    /// once the connection has been closed for [`CLOSE_FLUSH_TIMEOUT`].
    async fn within_stall<T>(
        &self,
        engine: &Engine,
        io: impl std::future::Future<Output = std::io::Result<T>>,
    ) -> Result<T, WriteError> {
        // Most writes finish at once: no timers for those.
        let mut io = std::pin::pin!(io);
        if let Some(result) = futures::FutureExt::now_or_never(io.as_mut()) {
            return result.map_err(|e| WriteError::Failed(io_error(e)));
        }
        let closing = async {
            engine.closed().await;
            let closed_at = engine.shared.closed.at().unwrap_or_else(Instant::now);
            tokio::time::sleep_until(closed_at + CLOSE_FLUSH_TIMEOUT).await;
        };
        tokio::select! {
            biased;
            result = io => result.map_err(|e| WriteError::Failed(io_error(e))),
            _ = tokio::time::sleep(self.stall_timeout) => Err(WriteError::Failed(ConnectionError::Stalled {
                waited: self.stall_timeout,
                queued: self.bytes.load(Ordering::Acquire),
            })),
            _ = closing => Err(WriteError::Abandoned),
        }
    }
}

/// The lines the writer took from the queue in one go.
#[derive(Default)]
struct Batch {
    chunks: VecDeque<Vec<u8>>,
    taken: usize,
    bytes: usize,
}

impl Batch {
    /// Takes everything queued; false if there was nothing.
    fn take(&mut self, outbox: &Outbox) -> bool {
        let mut queued = lock(&outbox.state);
        std::mem::swap(&mut self.chunks, &mut queued.chunks);
        queued.open_tail = false;
        self.taken = std::mem::take(&mut queued.taken);
        self.bytes = self.chunks.iter().map(Vec::len).sum();
        !self.chunks.is_empty()
    }

    /// Writes the batch out and gives its room back to the queue.
    async fn write(
        &mut self,
        engine: &Engine,
        writer: &mut Writer,
        tap: Option<&Tap>,
    ) -> Result<(), WriteError> {
        let outbox = &engine.shared.outbox;
        let mut emptied = Vec::new();
        while let Some(mut chunk) = self.chunks.pop_front() {
            if let Some(tap) = tap {
                for line in chunk.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                    tap(&TapEvent {
                        direction: Direction::Outgoing,
                        at: SystemTime::now(),
                        line,
                    });
                }
            }
            // Written piece by piece, so that a peer that reads slowly
            // counts as progress and only one that reads nothing stalls.
            let mut rest = &chunk[..];
            while !rest.is_empty() {
                let n = outbox.within_stall(engine, writer.write(rest)).await?;
                if n == 0 {
                    let zero = std::io::ErrorKind::WriteZero.into();
                    return Err(WriteError::Failed(io_error(zero)));
                }
                rest = &rest[n..];
            }
            if chunk.capacity() <= BATCH * 2 {
                chunk.clear();
                emptied.push(chunk);
            }
        }
        outbox.room.add_permits(std::mem::take(&mut self.taken));
        outbox
            .bytes
            .fetch_sub(std::mem::take(&mut self.bytes), Ordering::AcqRel);
        {
            let mut queued = lock(&outbox.state);
            // Enough to fill the queue again: freeing and allocating buffers
            // of this size, batch after batch, keeps the allocator busy.
            let keep = (outbox.size / BATCH + 1).saturating_sub(queued.spare.len());
            queued.spare.extend(emptied.into_iter().take(keep));
        }
        outbox.drained.notify_waiters();
        Ok(())
    }
}

fn io_error(e: std::io::Error) -> ConnectionError {
    ConnectionError::Io(Arc::new(e))
}

/// How long closing waits for queued output to reach a peer that is not reading.
const CLOSE_FLUSH_TIMEOUT: Duration = Duration::from_secs(5);
