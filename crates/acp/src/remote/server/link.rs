//! A connection's agent: its byte streams and whatever owns it.

use crate::codec::LineReader;
use crate::transport::{BoxedReader, Transport};
use std::fmt;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

/// How many messages may wait for the agent to read them.
const TO_AGENT_QUEUE: usize = 64;

/// The agent one network connection talks to: the byte streams of its
/// newline-delimited JSON (what it reads, what it writes), and optionally
/// what owns it, dropped when the connection ends (a child process whose
/// drop stops it, say).
pub struct Upstream {
    transport: Transport,
    owner: Option<Box<dyn Send>>,
    label: String,
}

impl fmt::Debug for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Upstream")
            .field("owned", &self.owner.is_some())
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

impl Upstream {
    /// An agent reached over `transport`: its reader is what the agent
    /// writes, its writer what the agent reads.
    pub fn new(transport: Transport) -> Self {
        Upstream {
            transport,
            owner: None,
            label: String::new(),
        }
    }

    /// Names the agent for operators (`GET /connections`, watchers): its
    /// command line, say.
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Keeps `owner` until the connection ends, then drops it (after the
    /// agent's input was closed).
    #[must_use]
    pub fn owned_by(mut self, owner: impl Send + 'static) -> Self {
        self.owner = Some(Box::new(owner));
        self
    }

    /// Starts the writer task; the link's halves, and the label.
    pub(crate) fn start(
        self,
        max_message_size: usize,
    ) -> (mpsc::Sender<Vec<u8>>, LineReader<BoxedReader>, Keep, String) {
        let (reader, mut writer) = self.transport.into_parts();
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(TO_AGENT_QUEUE);
        let writing = tokio::spawn(async move {
            while let Some(line) = rx.recv().await {
                if writer.write_all(&line).await.is_err() {
                    return;
                }
                // Flush once nothing more is waiting.
                while let Ok(line) = rx.try_recv() {
                    if writer.write_all(&line).await.is_err() {
                        return;
                    }
                }
                if writer.flush().await.is_err() {
                    return;
                }
            }
            let _ = writer.shutdown().await;
        });
        let keep = Keep {
            owner: self.owner,
            writing,
        };
        (
            tx,
            LineReader::new(reader, max_message_size),
            keep,
            self.label,
        )
    }
}

/// Holds a connection's agent; dropping it lets the agent go.
pub(crate) struct Keep {
    owner: Option<Box<dyn Send>>,
    writing: tokio::task::JoinHandle<()>,
}

impl Drop for Keep {
    fn drop(&mut self) {
        // The writer ends by itself once every sender is gone (closing the
        // agent's input); the owner goes now.
        drop(self.owner.take());
        let _ = &self.writing;
    }
}

/// A message as a line for the agent.
pub(crate) fn line_for_agent(message: &[u8]) -> Vec<u8> {
    let mut line = crate::remote::one_line(message.to_vec());
    line.push(b'\n');
    line
}
