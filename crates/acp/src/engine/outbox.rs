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
//! small ones.

use super::*;
use std::collections::VecDeque;
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// Buffers of small lines are written out once they reach this size; longer
/// lines are queued whole.
const BATCH: usize = 64 * 1024;

pub(super) struct Outbox {
    state: Mutex<Queued>,
    /// Free room in the queue, in bytes.
    room: Semaphore,
    /// The queue's size in bytes (fits the semaphore's permits).
    size: usize,
    /// Wakes the writer when the queue stops being empty.
    ready: Notify,
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
    closed: bool,
}

impl Outbox {
    pub(super) fn new(size: usize) -> Self {
        let size = size.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
        Outbox {
            state: Mutex::new(Queued::default()),
            room: Semaphore::new(size),
            size,
            ready: Notify::new(),
        }
    }

    /// Queues a line (without its newline), waiting while the queue is
    /// full. (Trying first: an awaited acquire spends scheduler budget even
    /// when there is room, which slows a task that sends thousands of lines;
    /// the waiting acquire, boxed, takes no room in the caller's future, and
    /// spends no budget either, for the reason given in `send_call`.)
    pub(super) async fn push(&self, line: Vec<u8>) -> Result<(), ()> {
        let cost = self.cost(&line);
        match self.room.try_acquire_many(cost) {
            Ok(permit) => permit.forget(),
            Err(tokio::sync::TryAcquireError::Closed) => return Err(()),
            Err(tokio::sync::TryAcquireError::NoPermits) => {
                Box::pin(tokio::task::unconstrained(self.room.acquire_many(cost)))
                    .await
                    .map_err(|_| ())?
                    .forget();
            }
        }
        self.append(line, cost as usize)
    }

    /// Queues a line without waiting for room (a small `$/cancel_request`
    /// sent from a drop, which cannot wait).
    pub(super) fn push_now(&self, line: Vec<u8>) {
        let _ = self.append(line, 0);
    }

    /// Queues a line if there is room now. A full queue hands the line back
    /// (`Err(Some)`); a closed one drops it (`Err(None)`).
    pub(super) fn try_push(&self, line: Vec<u8>) -> Result<(), Option<Vec<u8>>> {
        let cost = self.cost(&line);
        match self.room.try_acquire_many(cost) {
            Ok(permit) => permit.forget(),
            Err(tokio::sync::TryAcquireError::Closed) => return Err(None),
            Err(tokio::sync::TryAcquireError::NoPermits) => return Err(Some(line)),
        }
        self.append(line, cost as usize).map_err(|()| None)
    }

    /// The room a line and its newline take (all of it for a line larger
    /// than the queue, which then waits for the queue to empty).
    fn cost(&self, line: &[u8]) -> u32 {
        (line.len() + 1).min(self.size) as u32
    }

    fn append(&self, mut line: Vec<u8>, cost: usize) -> Result<(), ()> {
        // A newline inside a message would split it in two on the wire. In
        // valid JSON it can only be whitespace between tokens (raw JSON a
        // handler passed through, pretty-printed), where a space does as well.
        if memchr::memchr(b'\n', &line).is_some() {
            for byte in line.iter_mut().filter(|b| **b == b'\n') {
                *byte = b' ';
            }
        }
        let mut queued = lock(&self.state);
        if queued.closed {
            return Err(());
        }
        let was_empty = queued.chunks.is_empty();
        queued.taken += cost;
        if line.len() >= BATCH {
            queued.chunks.push_back(line);
            queued.open_tail = false;
            queued.tail().push(b'\n');
        } else {
            let tail = queued.tail();
            tail.extend_from_slice(&line);
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

    /// Refuses further lines and wakes every sender waiting for room.
    fn close(&self) {
        lock(&self.state).closed = true;
        self.room.close();
        self.ready.notify_one();
    }
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
/// connection closes; then, briefly, what was queued before the close.
pub(super) async fn write_loop(
    conn: RpcConnection,
    mut writer: Writer,
    tap: Option<Tap>,
) -> Result<(), ConnectionError> {
    let result = write_batches(&conn, &mut writer, tap.as_ref()).await;
    // Nothing will be written any more: senders waiting for room give up.
    conn.shared.outbox.close();
    if let Err(e) = &result {
        conn.shutdown(Some(e.clone()));
    }
    result
}

async fn write_batches(
    conn: &RpcConnection,
    writer: &mut Writer,
    tap: Option<&Tap>,
) -> Result<(), ConnectionError> {
    let outbox = &conn.shared.outbox;
    let mut batch = Batch::default();
    loop {
        if !batch.take(outbox) {
            // Lines queued while the last batch was written go out before
            // the flush; one yield lets a busy producer add to the batch.
            tokio::task::yield_now().await;
            if !batch.take(outbox) {
                writer.flush().await.map_err(io_error)?;
                tokio::select! {
                    biased;
                    _ = outbox.ready.notified() => continue,
                    _ = conn.shared.closed.cancelled() => break,
                }
            }
        }
        batch.write(outbox, writer, tap).await?;
    }
    // Closing: what was queued before the close still goes out, unless the
    // peer stops reading for longer than CLOSE_FLUSH_TIMEOUT.
    let drain = async {
        while batch.take(outbox) {
            batch.write(outbox, writer, tap).await?;
        }
        writer.flush().await.map_err(io_error)
    };
    match tokio::time::timeout(CLOSE_FLUSH_TIMEOUT, drain).await {
        Ok(result) => result,
        Err(_) => {
            warn!("the peer stopped reading; unsent output dropped at close");
            Ok(())
        }
    }
}

/// The lines the writer took from the queue in one go.
#[derive(Default)]
struct Batch {
    chunks: VecDeque<Vec<u8>>,
    taken: usize,
}

impl Batch {
    /// Takes everything queued; false if there was nothing.
    fn take(&mut self, outbox: &Outbox) -> bool {
        let mut queued = lock(&outbox.state);
        std::mem::swap(&mut self.chunks, &mut queued.chunks);
        queued.open_tail = false;
        self.taken = std::mem::take(&mut queued.taken);
        !self.chunks.is_empty()
    }

    /// Writes the batch out and gives its room back to the queue.
    async fn write(
        &mut self,
        outbox: &Outbox,
        writer: &mut Writer,
        tap: Option<&Tap>,
    ) -> Result<(), ConnectionError> {
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
            writer.write_all(&chunk).await.map_err(io_error)?;
            if chunk.capacity() <= BATCH * 2 {
                chunk.clear();
                emptied.push(chunk);
            }
        }
        outbox.room.add_permits(std::mem::take(&mut self.taken));
        if !emptied.is_empty() {
            let mut queued = lock(&outbox.state);
            let keep = 2usize.saturating_sub(queued.spare.len());
            queued.spare.extend(emptied.into_iter().take(keep));
        }
        Ok(())
    }
}

fn io_error(e: std::io::Error) -> ConnectionError {
    ConnectionError::Io(Arc::new(e))
}

/// How long closing waits for queued output to reach a peer that is not reading.
const CLOSE_FLUSH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
