//! The record file's writer: a thread that takes the lines the pumps read
//! and appends their records to the file as they come.
//!
//! The pumps hand their lines over through a [`Queue`] that holds at most
//! [`QUEUE_BYTES`] of them (a pump waits when it is full, so a slow disk
//! slows the session rather than filling memory). The writer takes
//! everything queued at once, encodes it, and writes it with one `write`
//! call: nothing waits in a buffer of ours while the queue is empty, so a
//! proxy killed with `SIGKILL` leaves every record it had written whole
//! (only the very last one may be cut, which `acp trace` tolerates).
//!
//! When the file cannot be written (a full disk), the writer says so once
//! on standard error, stops recording, and keeps taking lines so the
//! session goes on.

use super::redact::Redactor;
use crate::recording::{self, Exit, Source};
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, PoisonError};

/// How many bytes of lines may wait for the writer.
pub const QUEUE_BYTES: usize = 128 * 1024 * 1024;

/// What the writer records.
#[derive(Debug)]
pub enum Event {
    /// A line, or the start of one (`len` is its full length).
    Line {
        /// Seconds since the start.
        t: f64,
        /// Which stream.
        from: Source,
        /// The recorded bytes, without the newline.
        bytes: Vec<u8>,
        /// Whether a newline ended it.
        newline: bool,
        /// The line's full length.
        len: u64,
    },
    /// A side closed its end.
    Eof(f64, Source),
    /// The agent ended.
    Exit(f64, Exit),
}

impl Event {
    fn size(&self) -> usize {
        match self {
            Event::Line { bytes, .. } => bytes.len() + 64,
            _ => 64,
        }
    }
}

#[derive(Default)]
struct State {
    events: Vec<Event>,
    bytes: usize,
    closed: bool,
}

/// The lines on their way from the pumps to the writer.
#[derive(Default)]
pub struct Queue {
    state: Mutex<State>,
    ready: Condvar,
    room: Condvar,
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `events`, waiting while the queue is full.
    pub fn push(&self, events: &mut Vec<Event>) {
        if events.is_empty() {
            return;
        }
        let size: usize = events.iter().map(Event::size).sum();
        let mut state = self.lock();
        if state.closed {
            // The session is over (a pump still reading after the agent
            // exited): too late for the file.
            return;
        }
        while state.bytes > 0 && state.bytes + size > QUEUE_BYTES && !state.closed {
            state = self
                .room
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.bytes += size;
        state.events.append(events);
        self.ready.notify_one();
    }

    /// Ends the queue: the writer writes what is left and stops.
    pub fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
        self.room.notify_all();
    }

    /// Everything queued, waiting for something; `None` once closed and empty.
    fn take(&self) -> Option<Vec<Event>> {
        let mut state = self.lock();
        while state.events.is_empty() && !state.closed {
            state = self
                .ready
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if state.events.is_empty() {
            return None;
        }
        state.bytes = 0;
        let events = std::mem::take(&mut state.events);
        self.room.notify_all();
        Some(events)
    }
}

/// Starts the writer thread; it ends when the queue is closed and drained,
/// after an `fsync` of the file.
pub fn spawn(
    queue: Arc<Queue>,
    mut file: File,
    path: PathBuf,
    header: Vec<u8>,
    mut redactor: Option<Redactor>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut failed = false;
        let fail = |e: std::io::Error, failed: &mut bool| {
            if !*failed {
                eprintln!(
                    "acp record: cannot write {}: {e}; recording stopped (the agent keeps running)",
                    path.display()
                );
                *failed = true;
            }
        };
        if let Err(e) = file.write_all(&header) {
            fail(e, &mut failed);
        }
        let mut out = Vec::with_capacity(1 << 20);
        while let Some(events) = queue.take() {
            if failed {
                continue;
            }
            out.clear();
            for event in events {
                encode(&mut out, event, redactor.as_mut());
            }
            if let Err(e) = file.write_all(&out) {
                fail(e, &mut failed);
            }
            if out.capacity() > 16 << 20 {
                out = Vec::with_capacity(1 << 20);
            }
        }
        if !failed && let Err(e) = file.sync_data() {
            fail(e, &mut failed);
        }
    })
}

fn encode(out: &mut Vec<u8>, event: Event, redactor: Option<&mut Redactor>) {
    match event {
        Event::Line {
            t,
            from,
            bytes,
            newline,
            len,
        } => {
            let redacted = redactor.and_then(|r| r.line(from, &bytes));
            let changed = redacted.is_some();
            let recorded = redacted.as_deref().unwrap_or(&bytes);
            // A redacted line's length is that of what is recorded (a cut
            // one keeps its full length, which tells it was cut).
            let len = if changed && len == bytes.len() as u64 {
                recorded.len() as u64
            } else {
                len.max(recorded.len() as u64)
            };
            recording::write_line(out, t, from, recorded, newline, len, changed);
        }
        Event::Eof(t, from) => recording::write_eof(out, t, from),
        Event::Exit(t, exit) => recording::write_exit(out, t, exit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_stops_the_recording_but_not_the_pumps() {
        // Writes to /dev/full fail with ENOSPC, as on a full disk.
        let Ok(file) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
            return;
        };
        let queue = Arc::new(Queue::default());
        let writer = spawn(
            queue.clone(),
            file,
            "/dev/full".into(),
            b"{}\n".to_vec(),
            None,
        );
        // Far more than the queue holds: the pumps must never wait for a
        // writer that gave up.
        let line = vec![b'x'; 1 << 20];
        for i in 0..(2 * QUEUE_BYTES / line.len()) {
            queue.push(&mut vec![Event::Line {
                t: i as f64,
                from: Source::Agent,
                bytes: line.clone(),
                newline: true,
                len: line.len() as u64,
            }]);
        }
        queue.close();
        writer.join().unwrap();
    }
}
