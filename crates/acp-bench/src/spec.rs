//! What one benchmark run does: the workload and its sizes, carried from the
//! client to the agent as the text of the prompt.

use std::fmt;

/// The four workloads. Each runs inside one prompt turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Workload {
    /// W1: the agent streams many small `agent_message_chunk` notifications.
    Stream,
    /// W2: the agent makes sequential `fs/read_text_file` round trips.
    Rpc,
    /// W3: the agent issues many `fs/read_text_file` requests at once.
    Concurrent,
    /// W4: one large `fs/write_text_file` and one large `session/update`.
    Large,
}

impl Workload {
    /// Every workload, in table order.
    pub const ALL: [Workload; 4] = [
        Workload::Stream,
        Workload::Rpc,
        Workload::Concurrent,
        Workload::Large,
    ];

    /// The short id used on the command line and in prompts: `W1` … `W4`.
    pub fn id(self) -> &'static str {
        match self {
            Workload::Stream => "W1",
            Workload::Rpc => "W2",
            Workload::Concurrent => "W3",
            Workload::Large => "W4",
        }
    }

    /// A one-word name for tables.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Stream => "stream",
            Workload::Rpc => "rpc",
            Workload::Concurrent => "concurrent",
            Workload::Large => "large",
        }
    }

    /// Parses an id (`W1`, case-insensitive) or a name (`stream`).
    pub fn parse(text: &str) -> Option<Workload> {
        Workload::ALL
            .into_iter()
            .find(|w| w.id().eq_ignore_ascii_case(text) || w.name().eq_ignore_ascii_case(text))
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.id(), self.name())
    }
}

/// One run's parameters.
///
/// `count` and `bytes` mean, per workload:
/// - W1: `count` chunks of `bytes` bytes of text each;
/// - W2 and W3: `count` reads of a file of `bytes` bytes;
/// - W4: `count` is unused (1); one write of `bytes` bytes and one update of
///   `update_bytes` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    /// Which workload.
    pub workload: Workload,
    /// How many messages or round trips.
    pub count: usize,
    /// The size of each payload.
    pub bytes: usize,
    /// W4 only: the size of the large `session/update`.
    pub update_bytes: usize,
}

const MIB: usize = 1024 * 1024;

impl Spec {
    /// The full-size run of `workload`, as the issue describes it.
    pub fn full(workload: Workload) -> Spec {
        match workload {
            Workload::Stream => Spec::new(workload, 200_000, 40, 0),
            Workload::Rpc => Spec::new(workload, 50_000, 100, 0),
            Workload::Concurrent => Spec::new(workload, 10_000, 100, 0),
            Workload::Large => Spec::new(workload, 1, 50 * MIB, 10 * MIB),
        }
    }

    /// A run a tenth the size, for a smoke test.
    pub fn quick(workload: Workload) -> Spec {
        let full = Spec::full(workload);
        match workload {
            Workload::Large => Spec::new(workload, 1, full.bytes / 10, full.update_bytes / 10),
            _ => Spec::new(workload, full.count / 10, full.bytes, 0),
        }
    }

    fn new(workload: Workload, count: usize, bytes: usize, update_bytes: usize) -> Spec {
        Spec {
            workload,
            count,
            bytes,
            update_bytes,
        }
    }

    /// The prompt text that asks the agent for this run.
    pub fn to_prompt(&self) -> String {
        format!(
            "{} count={} bytes={} update={}",
            self.workload.id(),
            self.count,
            self.bytes,
            self.update_bytes
        )
    }

    /// Parses [`to_prompt`](Self::to_prompt)'s text.
    pub fn parse(text: &str) -> Result<Spec, String> {
        let mut words = text.split_whitespace();
        let workload = words
            .next()
            .and_then(Workload::parse)
            .ok_or_else(|| format!("no workload in prompt {text:?}"))?;
        let mut spec = Spec::new(workload, 0, 0, 0);
        for word in words {
            let (key, value) = word
                .split_once('=')
                .ok_or_else(|| format!("expected key=value, got {word:?}"))?;
            let value: usize = value
                .parse()
                .map_err(|e| format!("bad number in {word:?}: {e}"))?;
            match key {
                "count" => spec.count = value,
                "bytes" => spec.bytes = value,
                "update" => spec.update_bytes = value,
                _ => return Err(format!("unknown key {key:?}")),
            }
        }
        Ok(spec)
    }

    /// Messages on the wire during the timed window, both directions,
    /// counting the prompt request and its response.
    pub fn messages(&self) -> u64 {
        let count = self.count as u64;
        match self.workload {
            Workload::Stream => count + 2,
            Workload::Rpc | Workload::Concurrent => 2 * count + 2,
            // The write request and its response, the update, the prompt pair.
            Workload::Large => 5,
        }
    }
}

/// What an agent found, returned in its prompt response's `_meta`.
#[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Findings {
    /// Messages sent or round trips completed.
    pub done: u64,
    /// Responses that did not check out.
    pub bad: u64,
    /// W2: median round trip, in nanoseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ns: Option<u64>,
    /// W2: 99th percentile round trip, in nanoseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ns: Option<u64>,
}

/// The session id both agents hand out.
pub const SESSION_ID: &str = "bench-1";

/// The path W2 and W3 read (the client answers from memory).
pub const READ_PATH: &str = "/bench/read.txt";

/// The path W4 writes (the client only checks the length).
pub const WRITE_PATH: &str = "/bench/write.txt";

/// `len` bytes of plain ASCII text that JSON carries without escapes.
pub fn text(len: usize) -> String {
    const PATTERN: &[u8] = b"the quick brown fox jumps over the lazy dog ";
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        let take = PATTERN.len().min(len - out.len());
        out.extend_from_slice(&PATTERN[..take]);
    }
    String::from_utf8(out).expect("ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_round_trips() {
        for w in Workload::ALL {
            for spec in [Spec::full(w), Spec::quick(w)] {
                assert_eq!(Spec::parse(&spec.to_prompt()), Ok(spec));
            }
        }
        assert!(Spec::parse("W9 count=1").is_err());
        assert!(Spec::parse("W1 count=x").is_err());
    }

    #[test]
    fn text_has_the_asked_length() {
        for len in [0, 1, 40, 44, 45, 1000] {
            let t = text(len);
            assert_eq!(t.len(), len);
            assert!(!t.contains(['"', '\\', '\n']));
        }
    }
}
