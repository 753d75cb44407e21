//! What every connection has, whatever its profile: the agent's link, the
//! close (its reason, stored once), counters, the duplicate filter, the
//! trace watchers read; and the server's registry of connections, live and
//! lately closed.

use super::link::{Keep, line_for_agent};
use super::trace::{Side, Trace};
use super::{ConnectionInfo, Entry, Inner, Slot, lock};
use crate::remote::message::{Inspected, Kind};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::info;

/// How many closed connections the server remembers, to tell a client that
/// comes back why its connection ended (`410`).
const REMEMBERED_CLOSES: usize = 1024;

/// How many answered request ids each direction remembers, to drop a copy a
/// client sends again after a broken connection.
const REMEMBERED_IDS: usize = 1024;

/// How many requests in flight each direction tracks.
const TRACKED_IN_FLIGHT: usize = 65_536;

/// What the server knows of a connection id.
pub(crate) enum Lookup {
    Live(Entry),
    /// Closed lately, for this reason.
    Closed(String),
    Unknown,
}

/// Live connections, and the reasons of those closed lately.
#[derive(Default)]
pub(crate) struct Registry {
    live: HashMap<String, Entry>,
    closed: VecDeque<(String, String)>,
}

impl Registry {
    pub fn insert(&mut self, entry: Entry) {
        self.live.insert(entry.core().info.id.clone(), entry);
    }

    pub fn lookup(&self, id: &str) -> Lookup {
        if let Some(entry) = self.live.get(id) {
            return Lookup::Live(entry.clone());
        }
        match self.closed.iter().rev().find(|(closed, _)| closed == id) {
            Some((_, reason)) => Lookup::Closed(reason.clone()),
            None => Lookup::Unknown,
        }
    }

    pub fn live(&self) -> Vec<Entry> {
        self.live.values().cloned().collect()
    }

    pub fn drain(&mut self) -> Vec<Entry> {
        self.live.drain().map(|(_, e)| e).collect()
    }

    fn remove(&mut self, id: &str, remembered: Option<&str>) {
        self.live.remove(id);
        if let Some(reason) = remembered {
            if self.closed.len() >= REMEMBERED_CLOSES {
                self.closed.pop_front();
            }
            self.closed.push_back((id.to_owned(), reason.to_owned()));
        }
    }
}

/// Ids seen lately, bounded.
#[derive(Default)]
struct Recent {
    order: VecDeque<String>,
    set: HashSet<String>,
}

impl Recent {
    fn insert(&mut self, id: String) {
        if self.set.insert(id.clone()) {
            if self.order.len() >= REMEMBERED_IDS
                && let Some(old) = self.order.pop_front()
            {
                self.set.remove(&old);
            }
            self.order.push_back(id);
        }
    }

    fn contains(&self, id: &str) -> bool {
        self.set.contains(id)
    }

    fn remove(&mut self, id: &str) {
        if self.set.remove(id) {
            self.order.retain(|o| o != id);
        }
    }
}

/// Drops the copies of messages a client sends again after a broken
/// connection, by their JSON-RPC ids.
#[derive(Default)]
pub(crate) struct Dedup {
    /// The client's requests the agent has not answered.
    in_flight: HashSet<String>,
    /// The client's requests the agent answered lately.
    answered: Recent,
    /// The agent's requests the client has not answered.
    awaiting: HashSet<String>,
    /// The agent's requests the client answered lately.
    replied: Recent,
}

impl Dedup {
    /// Whether a message from the client goes to the agent. A request whose
    /// id is in flight, and a response to an agent request the client
    /// answered already, are copies; so is a request answered lately when
    /// the client says it sends it again (`resent`).
    pub fn pass_client(&mut self, seen: Option<&Inspected>) -> bool {
        let Some(seen) = seen else { return true };
        let Some(id) = &seen.id else { return true };
        match seen.kind {
            Kind::Request => {
                if self.in_flight.contains(id) || (seen.resent && self.answered.contains(id)) {
                    return false;
                }
                if self.in_flight.len() < TRACKED_IN_FLIGHT {
                    self.in_flight.insert(id.clone());
                }
                self.answered.remove(id);
                true
            }
            Kind::Response => {
                if self.awaiting.remove(id) {
                    self.replied.insert(id.clone());
                    return true;
                }
                !self.replied.contains(id)
            }
            Kind::Notification => true,
        }
    }

    /// Notes a message of the agent.
    pub fn note_agent(&mut self, seen: Option<&Inspected>) {
        let Some(seen) = seen else { return };
        let Some(id) = &seen.id else { return };
        match seen.kind {
            Kind::Response => {
                if self.in_flight.remove(id) {
                    self.answered.insert(id.clone());
                }
            }
            Kind::Request => {
                self.replied.remove(id);
                if self.awaiting.len() < TRACKED_IN_FLIGHT {
                    self.awaiting.insert(id.clone());
                }
            }
            Kind::Notification => {}
        }
    }
}

/// The part of a connection both profiles share.
pub(crate) struct Core {
    pub info: ConnectionInfo,
    /// What the agent is, for operators.
    pub agent: String,
    pub inner: Arc<Inner>,
    /// The agent's input; taken out at the close.
    to_agent: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    /// The agent and the connection's slot; dropped at the close.
    held: Mutex<Option<(Keep, Slot)>>,
    pub closed: CancellationToken,
    reason: OnceLock<String>,
    pub started: Instant,
    /// Messages of the client passed to the agent.
    pub received: AtomicU64,
    /// Messages handed to the client.
    pub sent: AtomicU64,
    pub dedup: Mutex<Dedup>,
    pub trace: Trace,
}

impl Core {
    pub fn new(
        inner: Arc<Inner>,
        info: ConnectionInfo,
        agent: String,
        to_agent: mpsc::Sender<Vec<u8>>,
        keep: Keep,
        slot: Slot,
    ) -> Self {
        let trace = Trace::new(inner.options.watch_history_bytes);
        Core {
            info,
            agent,
            inner,
            to_agent: Mutex::new(Some(to_agent)),
            held: Mutex::new(Some((keep, slot))),
            closed: CancellationToken::new(),
            reason: OnceLock::new(),
            started: Instant::now(),
            received: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            dedup: Mutex::new(Dedup::default()),
            trace,
        }
    }

    /// Sends one message of the client to the agent; false once the agent's
    /// input is closed.
    pub async fn forward(&self, message: &[u8]) -> bool {
        let sender = lock(&self.to_agent).clone();
        let Some(sender) = sender else { return false };
        if sender.send(line_for_agent(message)).await.is_err() {
            return false;
        }
        self.received.fetch_add(1, Ordering::Relaxed);
        self.trace.record(Side::Client, message);
        true
    }

    /// Notes a message of the agent on its way to the client.
    pub fn note_agent(&self, line: &[u8], seen: Option<&Inspected>) {
        lock(&self.dedup).note_agent(seen);
        self.trace.record(Side::Agent, line);
    }

    /// Why the connection closed, once it did.
    pub fn reason(&self) -> Option<&str> {
        self.reason.get().map(String::as_str)
    }

    /// Closes the connection for `reason` (the first reason wins; false for
    /// the later ones): the agent's input closes and the agent goes. With
    /// `remember`, a client that comes back is told the reason.
    pub fn close(&self, reason: &str, remember: bool) -> bool {
        if self.reason.set(reason.to_owned()).is_err() {
            return false;
        }
        self.closed.cancel();
        lock(&self.inner.connections).remove(&self.info.id, remember.then_some(reason));
        lock(&self.to_agent).take();
        let held = lock(&self.held).take();
        drop(held);
        self.trace.end();
        info!(
            target: "acp::remote",
            id = %self.info.id,
            peer = %self.info.peer,
            profile = %self.info.profile,
            reason,
            duration_ms = self.started.elapsed().as_millis() as u64,
            messages_in = self.received.load(Ordering::Relaxed),
            messages_out = self.sent.load(Ordering::Relaxed),
            "connection closed"
        );
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::message::inspect;

    fn seen(text: &str) -> Option<Inspected> {
        inspect(text.as_bytes())
    }

    #[test]
    fn copies_are_dropped_by_their_ids() {
        let mut dedup = Dedup::default();
        let request = r#"{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}"#;
        assert!(dedup.pass_client(seen(request).as_ref()));
        // The same request while the agent works on it: a copy.
        assert!(!dedup.pass_client(seen(request).as_ref()));
        dedup.note_agent(seen(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#).as_ref());
        // Answered: a new request may use the id again, unless the client
        // says it is a copy.
        let mut copy = seen(request).unwrap();
        copy.resent = true;
        assert!(!dedup.pass_client(Some(&copy)));
        assert!(dedup.pass_client(seen(request).as_ref()));

        // The agent asks; the client answers once, and its copy is dropped.
        dedup.note_agent(seen(r#"{"jsonrpc":"2.0","id":"p","method":"x","params":{}}"#).as_ref());
        let answer = r#"{"jsonrpc":"2.0","id":"p","result":{}}"#;
        assert!(dedup.pass_client(seen(answer).as_ref()));
        assert!(!dedup.pass_client(seen(answer).as_ref()));
        // An answer to something the agent never asked passes, as before.
        assert!(dedup.pass_client(seen(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#).as_ref()));
        // Notifications and what is not JSON-RPC pass.
        let cancel = r#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#;
        assert!(dedup.pass_client(seen(cancel).as_ref()));
        assert!(dedup.pass_client(seen(cancel).as_ref()));
        assert!(dedup.pass_client(None));
    }

    #[test]
    fn remembered_ids_are_bounded() {
        let mut recent = Recent::default();
        for n in 0..REMEMBERED_IDS + 10 {
            recent.insert(n.to_string());
        }
        assert!(!recent.contains("0"));
        assert!(recent.contains(&(REMEMBERED_IDS + 9).to_string()));
        assert_eq!(recent.order.len(), REMEMBERED_IDS);
    }
}
