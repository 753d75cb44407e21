//! Reconnecting after a broken connection: the policy ([`Reconnect`]), what
//! a UI is told ([`LinkEvent`]), why a client stops trying ([`LinkLost`]),
//! and the backoff both profiles share ([`Outage`]).

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How a client reconnects when its connection to the server breaks (see
/// [`ClientOptions::reconnect`](super::ClientOptions::reconnect)).
///
/// Attempts wait [`first_delay`](Self::first_delay), then twice as long each
/// time up to [`max_delay`](Self::max_delay), each wait shortened or
/// lengthened by up to a quarter at random so that many clients of one
/// server do not come back at once. They stop after
/// [`give_up_after`](Self::give_up_after), or once the time the server said
/// it keeps connections is over, whichever is first.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Reconnect {
    /// The wait before the first attempt (default 100 ms).
    pub first_delay: Duration,
    /// The longest wait between attempts (default 5 s).
    pub max_delay: Duration,
    /// How long to keep trying (default 2 minutes).
    pub give_up_after: Duration,
    /// Over WebSocket: how many bytes of what the client sent it keeps
    /// until the server confirms them, to send them again after a resume
    /// (default 8 MiB; the latest message is always kept). A resume that
    /// needs more than was kept fails.
    pub max_resend_bytes: usize,
    /// How often the link must show it is alive (default 15 s): a link
    /// that carries nothing from the server for three times this long is
    /// taken for broken and resumed (a network that went away without a
    /// word, which TCP would take many minutes to notice). Over WebSocket
    /// the client pings the server this often; over HTTP the server's
    /// keep-alives count (ours sends one every 15 s, or three per idle
    /// timeout when that is shorter: keep this at least as long), and a POST
    /// not answered in that time is sent again.
    pub ping_every: Duration,
}

impl Default for Reconnect {
    fn default() -> Self {
        Reconnect {
            first_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(5),
            give_up_after: Duration::from_secs(120),
            max_resend_bytes: 8 * 1024 * 1024,
            ping_every: Duration::from_secs(15),
        }
    }
}

impl Reconnect {
    /// Sets [`first_delay`](Self::first_delay).
    #[must_use]
    pub fn first_delay(mut self, delay: Duration) -> Self {
        self.first_delay = delay;
        self
    }
    /// Sets [`max_delay`](Self::max_delay).
    #[must_use]
    pub fn max_delay(mut self, delay: Duration) -> Self {
        self.max_delay = delay;
        self
    }
    /// Sets [`give_up_after`](Self::give_up_after).
    #[must_use]
    pub fn give_up_after(mut self, after: Duration) -> Self {
        self.give_up_after = after;
        self
    }
    /// Sets [`max_resend_bytes`](Self::max_resend_bytes).
    #[must_use]
    pub fn max_resend_bytes(mut self, bytes: usize) -> Self {
        self.max_resend_bytes = bytes;
        self
    }
    /// Sets [`ping_every`](Self::ping_every) (at least 10 ms).
    #[must_use]
    pub fn ping_every(mut self, every: Duration) -> Self {
        self.ping_every = every.max(Duration::from_millis(10));
        self
    }
}

/// What happens to a reconnecting client's link to the server, for a UI to
/// show (see [`ClientOptions::on_event`](super::ClientOptions::on_event)).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum LinkEvent {
    /// The connection broke (`why`); attempt `attempt` to resume it comes
    /// after `delay`.
    Reconnecting {
        /// The attempt coming (1 for the first).
        attempt: u32,
        /// How long until it.
        delay: Duration,
        /// What broke.
        why: String,
    },
    /// The connection was resumed: nothing was lost, nothing comes twice.
    Resumed {
        /// How many attempts it took.
        attempts: u32,
        /// How long the link was down.
        down_for: Duration,
    },
    /// The client stopped trying; the transport ends with this error.
    GaveUp(LinkLost),
}

/// Why a reconnecting client's transport ended: the error inside the
/// [`io::Error`] the engine reads (get it with
/// [`LinkLost::of`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinkLost {
    /// The server no longer has the connection: it restarted, kept it past
    /// its keep time, or closed it (`reason`, when it says why). The agent's
    /// session may still be had with `session/load`, on a new connection.
    Gone {
        /// The server's reason.
        reason: Option<String>,
    },
    /// Another client resumed the connection.
    TakenOver,
    /// What was lost cannot be sent again: the server (or this client)
    /// kept less than that.
    Gap {
        /// The details.
        detail: String,
    },
    /// The server refused the resume (a wrong token, say).
    Refused {
        /// The HTTP status.
        status: u16,
        /// What the server said.
        detail: String,
    },
    /// The server does not keep connections for a resume.
    NotResumable,
    /// Every attempt failed until the client gave up.
    TimedOut {
        /// How many attempts were made.
        attempts: u32,
        /// Why the last one failed.
        last: String,
    },
}

impl fmt::Display for LinkLost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkLost::Gone {
                reason: Some(reason),
            } => {
                write!(f, "the server no longer has the connection ({reason})")
            }
            LinkLost::Gone { reason: None } => f.write_str(
                "the server no longer has the connection (it restarted, or kept it no longer)",
            ),
            LinkLost::TakenOver => f.write_str("another client resumed the connection"),
            LinkLost::Gap { detail } => {
                write!(f, "the connection cannot be resumed: {detail}")
            }
            LinkLost::Refused { status, detail } => {
                write!(
                    f,
                    "the server refused the resume with HTTP {status}: {detail}"
                )
            }
            LinkLost::NotResumable => {
                f.write_str("the connection broke, and the server does not resume connections")
            }
            LinkLost::TimedOut { attempts, last } => write!(
                f,
                "could not reconnect to the server ({attempts} attempts; the last: {last})"
            ),
        }
    }
}

impl std::error::Error for LinkLost {}

impl LinkLost {
    /// The `LinkLost` inside an I/O error (or a connection error's I/O
    /// error), if that is why it failed.
    pub fn of<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a LinkLost> {
        let mut next = Some(error);
        while let Some(error) = next {
            if let Some(lost) = error.downcast_ref::<LinkLost>() {
                return Some(lost);
            }
            if let Some(io) = error.downcast_ref::<io::Error>()
                && let Some(inner) = io.get_ref()
                && let Some(lost) = inner.downcast_ref::<LinkLost>()
            {
                return Some(lost);
            }
            next = error.source();
        }
        None
    }

    fn kind(&self) -> io::ErrorKind {
        match self {
            LinkLost::Gone { .. } => io::ErrorKind::NotFound,
            LinkLost::Refused {
                status: 401 | 403, ..
            } => io::ErrorKind::PermissionDenied,
            LinkLost::TimedOut { .. } => io::ErrorKind::TimedOut,
            LinkLost::Gap { .. } => io::ErrorKind::InvalidData,
            _ => io::ErrorKind::ConnectionAborted,
        }
    }

    /// As the I/O error the engine reads.
    pub(super) fn into_io(self) -> io::Error {
        io::Error::new(self.kind(), self)
    }
}

/// The callback of [`ClientOptions::on_event`](super::ClientOptions::on_event).
pub type LinkEventHandler = Arc<dyn Fn(&LinkEvent) + Send + Sync>;

/// One connection's backoff: shared by the parts of the link that can
/// break (the WebSocket; the HTTP streams and POSTs).
pub(super) struct Outage {
    policy: Reconnect,
    on_event: Option<LinkEventHandler>,
    /// How long the server keeps the connection.
    keep: Duration,
    /// The outage, and whether the client has given up (then no part of the
    /// link tries again).
    down: Mutex<Down>,
}

#[derive(Default)]
struct Down {
    /// The outage under way: since when, attempts, the next delay.
    now: Option<Attempts>,
    /// Why the client gave up, once it has.
    gave_up: Option<LinkLost>,
}

struct Attempts {
    since: Instant,
    attempts: u32,
    delay: Duration,
}

impl Outage {
    pub fn new(policy: Reconnect, on_event: Option<LinkEventHandler>, keep: Duration) -> Self {
        Outage {
            policy,
            on_event,
            keep,
            down: Mutex::new(Down::default()),
        }
    }

    fn emit(&self, event: &LinkEvent) {
        if let Some(on_event) = &self.on_event {
            on_event(event);
        }
    }

    /// A part of the link is down (`why`): waits before its next attempt;
    /// an error once it is time to give up.
    pub async fn wait(&self, why: &str) -> Result<(), LinkLost> {
        let delay = {
            let mut down = self.down.lock().unwrap_or_else(|p| p.into_inner());
            // Another part of the link gave up (taken over, say): this one
            // does not try again.
            if let Some(lost) = &down.gave_up {
                return Err(lost.clone());
            }
            let down = down.now.get_or_insert_with(|| Attempts {
                since: Instant::now(),
                attempts: 0,
                delay: self.policy.first_delay,
            });
            let limit = self.policy.give_up_after.min(self.keep);
            if down.since.elapsed() >= limit {
                return Err(LinkLost::TimedOut {
                    attempts: down.attempts,
                    last: why.to_owned(),
                });
            }
            down.attempts += 1;
            let delay = jitter(down.delay)
                .min(limit.saturating_sub(down.since.elapsed()))
                .max(Duration::from_millis(1));
            down.delay = (down.delay * 2).min(self.policy.max_delay);
            self.emit(&LinkEvent::Reconnecting {
                attempt: down.attempts,
                delay,
                why: why.to_owned(),
            });
            delay
        };
        tokio::time::sleep(delay).await;
        Ok(())
    }

    /// The link works again.
    /// How long the server may say nothing before the link is taken for
    /// broken.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub fn silence(&self) -> Duration {
        self.policy.ping_every * 3
    }

    /// How often to ping.
    #[cfg_attr(not(feature = "websocket"), allow(dead_code))]
    pub fn ping_every(&self) -> Duration {
        self.policy.ping_every
    }

    /// The link works again.
    pub fn up(&self) {
        let down = self
            .down
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .now
            .take();
        if let Some(down) = down {
            self.emit(&LinkEvent::Resumed {
                attempts: down.attempts,
                down_for: down.since.elapsed(),
            });
        }
    }

    /// The client stops: says so once; the error for the engine.
    pub fn give_up(&self, lost: LinkLost) -> io::Error {
        let first = {
            let mut down = self.down.lock().unwrap_or_else(|p| p.into_inner());
            let first = down.gave_up.is_none();
            if first {
                down.gave_up = Some(lost.clone());
            }
            first
        };
        if first {
            self.emit(&LinkEvent::GaveUp(lost.clone()));
        }
        lost.into_io()
    }
}

/// `delay` made up to a quarter shorter or longer, at random.
fn jitter(delay: Duration) -> Duration {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u128(Instant::now().elapsed().as_nanos());
    let random = hasher.finish();
    // A factor in [0.75, 1.25).
    let factor = 0.75 + (random % 1000) as f64 / 2000.0;
    delay.mul_f64(factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lost_link_is_found_inside_the_errors_that_carry_it() {
        let io = LinkLost::Gone {
            reason: Some("the agent exited".into()),
        }
        .into_io();
        assert_eq!(io.kind(), io::ErrorKind::NotFound);
        assert_eq!(
            io.to_string(),
            "the server no longer has the connection (the agent exited)"
        );
        assert_eq!(
            LinkLost::of(&io),
            Some(&LinkLost::Gone {
                reason: Some("the agent exited".into())
            })
        );
        let wrapped = crate::ConnectionError::Io(Arc::new(LinkLost::TakenOver.into_io()));
        assert_eq!(LinkLost::of(&wrapped), Some(&LinkLost::TakenOver));
        assert_eq!(LinkLost::of(&io::Error::other("x")), None);
    }

    #[test]
    fn jitter_stays_within_a_quarter() {
        for _ in 0..100 {
            let d = jitter(Duration::from_millis(1000));
            assert!(d >= Duration::from_millis(750) && d < Duration::from_millis(1250));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn backoff_doubles_up_to_its_cap_then_gives_up() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let outage = Outage::new(
            Reconnect::default()
                .first_delay(Duration::from_millis(100))
                .max_delay(Duration::from_millis(400))
                .give_up_after(Duration::from_secs(2)),
            Some(Arc::new(move |e: &LinkEvent| {
                log.lock().unwrap().push(e.clone())
            })),
            Duration::from_secs(300),
        );
        let mut attempts = 0;
        let error = loop {
            match outage.wait("broken").await {
                Ok(()) => attempts += 1,
                Err(error) => break error,
            }
        };
        assert!(matches!(error, LinkLost::TimedOut { .. }), "{error}");
        let delays: Vec<Duration> = seen
            .lock()
            .unwrap()
            .iter()
            .map(|e| match e {
                LinkEvent::Reconnecting { delay, .. } => *delay,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(delays.len(), attempts);
        assert!(delays[0] < Duration::from_millis(126), "{delays:?}");
        assert!(delays[1] >= Duration::from_millis(150), "{delays:?}");
        assert!(
            delays.iter().all(|d| *d < Duration::from_millis(501)),
            "{delays:?}"
        );
        outage.up();
        assert!(matches!(
            seen.lock().unwrap().last(),
            Some(LinkEvent::Resumed { .. })
        ));
        // give_up says so once.
        outage.give_up(LinkLost::TakenOver);
        outage.give_up(LinkLost::TakenOver);
        let gave_up = seen
            .lock()
            .unwrap()
            .iter()
            .filter(|e| matches!(e, LinkEvent::GaveUp(_)))
            .count();
        assert_eq!(gave_up, 1);
        // Once given up (one stream taken over), no other part of the link
        // tries again: no wait, no `Reconnecting` after the `GaveUp`.
        let before = seen.lock().unwrap().len();
        assert_eq!(outage.wait("broken").await, Err(LinkLost::TakenOver));
        assert_eq!(seen.lock().unwrap().len(), before);
    }
}
