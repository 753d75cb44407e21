//! A connection's recent traffic, both ways, in a ring bounded by
//! [`ServerOptions::watch_history_bytes`](super::ServerOptions::watch_history_bytes)
//! (the newest message always stays): what watchers read (see `watch`), one
//! record per message in the format of `acp record`.

use super::lock;
use bytes::Bytes;
use std::collections::VecDeque;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};
use tokio::sync::watch;

/// Who said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// The client (the editor), to the agent.
    Client,
    /// The agent, to the client.
    Agent,
}

impl Side {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Agent => "agent",
        }
    }
}

enum What {
    Line(Side, Bytes),
    Eof(Side),
}

pub(crate) struct Record {
    t: f64,
    what: What,
}

impl Record {
    fn size(&self) -> usize {
        match &self.what {
            What::Line(_, line) => line.len() + 32,
            What::Eof(_) => 32,
        }
    }

    pub(crate) fn to_line(&self) -> Vec<u8> {
        let string = |text: &str| serde_json::to_string(text).unwrap_or_default();
        let line = match &self.what {
            What::Line(side, line) => format!(
                "{{\"t\":{:.6},\"from\":\"{}\",\"line\":{}}}\n",
                self.t,
                side.as_str(),
                string(&String::from_utf8_lossy(line))
            ),
            What::Eof(side) => format!(
                "{{\"t\":{:.6},\"from\":\"{}\",\"eof\":true}}\n",
                self.t,
                side.as_str()
            ),
        };
        line.into_bytes()
    }
}

#[derive(Default)]
struct Ring {
    records: VecDeque<Arc<Record>>,
    /// The number of `records[0]` (records are numbered from 0).
    first: u64,
    bytes: usize,
    ended: bool,
}

/// A connection's recent traffic.
pub(crate) struct Trace {
    started: Instant,
    pub started_at: SystemTime,
    max_bytes: usize,
    ring: Mutex<Ring>,
    /// How many records were made; watchers wait for it to change.
    pub made: watch::Sender<u64>,
    pub watchers: AtomicUsize,
}

impl Trace {
    pub fn new(max_bytes: usize) -> Self {
        Trace {
            started: Instant::now(),
            started_at: SystemTime::now(),
            max_bytes,
            ring: Mutex::new(Ring::default()),
            made: watch::Sender::new(0),
            watchers: AtomicUsize::new(0),
        }
    }

    fn push(&self, what: What) {
        let record = Arc::new(Record {
            t: self.started.elapsed().as_secs_f64(),
            what,
        });
        let made = {
            let mut ring = lock(&self.ring);
            if ring.ended {
                return;
            }
            ring.bytes += record.size();
            ring.records.push_back(record);
            while ring.bytes > self.max_bytes && ring.records.len() > 1 {
                if let Some(old) = ring.records.pop_front() {
                    ring.bytes -= old.size();
                    ring.first += 1;
                }
            }
            ring.first + ring.records.len() as u64
        };
        self.made.send_replace(made);
    }

    /// Records one message.
    pub fn record(&self, side: Side, line: &[u8]) {
        self.push(What::Line(side, Bytes::copy_from_slice(line)));
    }

    /// Records the end of both sides; watchers' streams end.
    pub fn end(&self) {
        self.push(What::Eof(Side::Client));
        self.push(What::Eof(Side::Agent));
        lock(&self.ring).ended = true;
        self.made.send_modify(|_| {});
    }

    /// Records from number `from` on (what is left of them), how many
    /// before them were lost, and whether the trace has ended.
    pub(crate) fn read(&self, from: u64) -> (Vec<Arc<Record>>, u64, bool) {
        let ring = lock(&self.ring);
        let skipped = ring.first.saturating_sub(from);
        let start = from.max(ring.first) - ring.first;
        let records = ring.records.iter().skip(start as usize).cloned().collect();
        (records, skipped, ring.ended)
    }

    /// Where a watcher starts: the oldest record kept, or the next one.
    pub(crate) fn start(&self, from_start: bool) -> u64 {
        let ring = lock(&self.ring);
        if from_start {
            ring.first
        } else {
            ring.first + ring.records.len() as u64
        }
    }

    pub(crate) fn elapsed(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }
}

/// `started_at` as RFC 3339 in UTC.
pub(crate) fn rfc3339(at: SystemTime) -> String {
    jiff::Timestamp::try_from(at)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_ring_keeps_the_newest_within_its_bound() {
        let trace = Trace::new(100);
        trace.record(Side::Client, &[b'a'; 30]);
        trace.record(Side::Agent, &[b'b'; 30]);
        let (records, skipped, ended) = trace.read(0);
        assert_eq!((records.len(), skipped, ended), (1, 1, false));
        // Bigger than the bound: still kept, alone.
        trace.record(Side::Agent, &[b'c'; 500]);
        let (records, skipped, _) = trace.read(1);
        assert_eq!((records.len(), skipped), (1, 1));
        let line = String::from_utf8(records[0].to_line()).unwrap();
        assert!(line.contains(r#""from":"agent","line":"ccc"#), "{line}");
        assert_eq!(trace.start(false), 3);
        trace.end();
        let (records, skipped, ended) = trace.read(3);
        assert!(ended);
        // The big one made room for the two ends.
        assert_eq!((records.len(), skipped), (2, 0));
        let line = String::from_utf8(records[1].to_line()).unwrap();
        assert!(
            line.ends_with(
                r#","from":"agent","eof":true}
"#
            ),
            "{line}"
        );
        // Nothing is recorded after the end.
        trace.record(Side::Client, b"late");
        assert_eq!(trace.start(false), 5);
    }

    #[test]
    fn dates_are_rfc3339_utc() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_micros(1_735_787_045_678_901);
        assert_eq!(rfc3339(at), "2025-01-02T03:04:05.678901Z");
    }
}
