//! One ordered stream of messages to the client, numbered from 1: what waits
//! to be sent, and what was sent lately, kept so that a resume can send it
//! again.
//!
//! The number of a message is its place in the stream: the WebSocket
//! profile's n-th text frame, or the SSE event whose `id` is n. A client that
//! comes back saying it has everything up to n gets n+1 onwards
//! ([`Outbox::rewind`]), each message once and in order, as long as the server
//! still holds n+1.

use bytes::Bytes;
use std::collections::VecDeque;

/// Why a stream cannot resume where the client asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Gap {
    /// The client asks from before what the server kept.
    Trimmed {
        /// The client's last message.
        asked: u64,
        /// The first message the server still has.
        kept_from: u64,
    },
    /// The client claims a message the server never sent.
    Ahead {
        /// The client's last message.
        asked: u64,
        /// The last message the server numbered.
        last: u64,
    },
}

impl std::fmt::Display for Gap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Gap::Trimmed { asked, kept_from } => write!(
                f,
                "cannot resume after message {asked}: the server kept messages from {kept_from} on"
            ),
            Gap::Ahead { asked, last } => write!(
                f,
                "cannot resume after message {asked}: the server sent only {last}"
            ),
        }
    }
}

/// A numbered stream of messages to the client.
#[derive(Debug)]
pub(crate) struct Outbox {
    /// The number the next message gets.
    next: u64,
    /// Waiting to be sent, in order.
    unsent: VecDeque<(u64, Bytes)>,
    unsent_bytes: usize,
    /// Sent, kept for a resume, in order (every one before `unsent`'s).
    sent: VecDeque<(u64, Bytes)>,
    sent_bytes: usize,
    /// Every message up to this one is gone for good: no resume can start
    /// before it.
    floor: u64,
}

impl Default for Outbox {
    fn default() -> Self {
        Outbox {
            next: 1,
            unsent: VecDeque::new(),
            unsent_bytes: 0,
            sent: VecDeque::new(),
            sent_bytes: 0,
            floor: 0,
        }
    }
}

impl Outbox {
    /// Queues a message; its number.
    pub fn push(&mut self, message: Bytes) -> u64 {
        let seq = self.next;
        self.next += 1;
        self.unsent_bytes += message.len();
        self.unsent.push_back((seq, message));
        seq
    }

    /// Takes the next message to send; with `retain`, it is kept for a
    /// resume (until [`drop_oldest_sent`](Self::drop_oldest_sent)).
    pub fn take(&mut self, retain: bool) -> Option<(u64, Bytes)> {
        let (seq, message) = self.unsent.pop_front()?;
        self.unsent_bytes -= message.len();
        if retain {
            self.sent_bytes += message.len();
            self.sent.push_back((seq, message.clone()));
        } else {
            self.floor = seq;
        }
        Some((seq, message))
    }

    /// Forgets the oldest message kept for a resume; its number and size.
    pub fn drop_oldest_sent(&mut self) -> Option<(u64, usize)> {
        let (seq, message) = self.sent.pop_front()?;
        self.sent_bytes -= message.len();
        self.floor = seq;
        Some((seq, message.len()))
    }

    /// The number of the oldest message kept for a resume.
    pub fn oldest_sent(&self) -> Option<u64> {
        self.sent.front().map(|(seq, _)| *seq)
    }

    /// Checks that the stream can go on after message `last`.
    pub fn can_resume(&self, last: u64) -> Result<(), Gap> {
        if last < self.floor {
            return Err(Gap::Trimmed {
                asked: last,
                kept_from: self.floor + 1,
            });
        }
        if last >= self.next {
            return Err(Gap::Ahead {
                asked: last,
                last: self.next - 1,
            });
        }
        Ok(())
    }

    /// Goes on after message `last` (the last one the client has): the kept
    /// messages after it are sent again, first, in order; the ones up to it
    /// are forgotten. Returns how many will be sent again.
    pub fn rewind(&mut self, last: u64) -> Result<usize, Gap> {
        self.can_resume(last)?;
        while self.sent.front().is_some_and(|(seq, _)| *seq <= last) {
            self.drop_oldest_sent();
        }
        let again = self.sent.len();
        while let Some((seq, message)) = self.sent.pop_back() {
            self.sent_bytes -= message.len();
            self.unsent_bytes += message.len();
            self.unsent.push_front((seq, message));
        }
        // The floor stays: a message up to `last` is the client's already.
        self.floor = self.floor.max(last);
        Ok(again)
    }

    /// Bytes waiting to be sent.
    pub fn unsent_bytes(&self) -> usize {
        self.unsent_bytes
    }

    /// Bytes kept for a resume.
    pub fn sent_bytes(&self) -> usize {
        self.sent_bytes
    }

    /// Whether nothing waits to be sent.
    pub fn is_drained(&self) -> bool {
        self.unsent.is_empty()
    }

    /// Whether the stream holds nothing at all.
    pub fn is_empty(&self) -> bool {
        self.unsent.is_empty() && self.sent.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(outbox: &mut Outbox) -> Vec<(u64, String)> {
        std::iter::from_fn(|| outbox.take(true))
            .map(|(n, m)| (n, String::from_utf8_lossy(&m).into_owned()))
            .collect()
    }

    #[test]
    fn a_resume_sends_what_follows_the_clients_last_message_once_in_order() {
        let mut outbox = Outbox::default();
        for text in ["a", "bb", "ccc"] {
            outbox.push(Bytes::from(text));
        }
        assert_eq!(outbox.unsent_bytes(), 6);
        assert_eq!(
            taken(&mut outbox),
            [(1, "a".into()), (2, "bb".into()), (3, "ccc".into())]
        );
        assert_eq!((outbox.unsent_bytes(), outbox.sent_bytes()), (0, 6));
        outbox.push(Bytes::from("dddd"));
        // The client had 1; 2 and 3 were lost on the way.
        assert_eq!(outbox.rewind(1), Ok(2));
        assert_eq!((outbox.unsent_bytes(), outbox.sent_bytes()), (9, 0));
        assert_eq!(
            taken(&mut outbox),
            [(2, "bb".into()), (3, "ccc".into()), (4, "dddd".into())]
        );
        // A second resume from the same point is refused: 1 is forgotten,
        // and the client said it had it.
        assert_eq!(outbox.rewind(4), Ok(0));
        assert_eq!(
            outbox.rewind(0),
            Err(Gap::Trimmed {
                asked: 0,
                kept_from: 5
            })
        );
    }

    #[test]
    fn trimmed_or_unknown_positions_are_refused() {
        let mut outbox = Outbox::default();
        for text in ["a", "b", "c"] {
            outbox.push(Bytes::from(text));
        }
        taken(&mut outbox);
        assert_eq!(outbox.drop_oldest_sent(), Some((1, 1)));
        assert_eq!(
            outbox.can_resume(0),
            Err(Gap::Trimmed {
                asked: 0,
                kept_from: 2
            })
        );
        assert_eq!(outbox.can_resume(1), Ok(()));
        assert_eq!(outbox.can_resume(3), Ok(()));
        assert_eq!(outbox.can_resume(4), Err(Gap::Ahead { asked: 4, last: 3 }));
        assert_eq!(
            Gap::Ahead { asked: 4, last: 3 }.to_string(),
            "cannot resume after message 4: the server sent only 3"
        );
    }

    #[test]
    fn without_retention_nothing_sent_can_be_had_again() {
        let mut outbox = Outbox::default();
        outbox.push(Bytes::from("a"));
        outbox.push(Bytes::from("b"));
        assert_eq!(outbox.take(false).map(|(n, _)| n), Some(1));
        assert_eq!(outbox.sent_bytes(), 0);
        assert!(outbox.can_resume(0).is_err());
        assert_eq!(outbox.rewind(1), Ok(0));
        assert_eq!(outbox.take(false).map(|(n, _)| n), Some(2));
        assert!(outbox.is_empty());
        assert_eq!(outbox.can_resume(2), Ok(()));
    }
}
