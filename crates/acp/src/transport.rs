//! Byte-stream transports that an ACP connection runs over.
//!
//! A [`Transport`] is just a pair of async byte streams: one to read
//! incoming messages from and one to write outgoing messages to. It knows
//! nothing about framing or JSON-RPC; see [`crate::codec`] for that.
//!
//! Ways to get one:
//!
//! * [`Transport::stdio`]: an agent talking to its editor over its own
//!   standard input and output.
//! * [`crate::process::AgentCommand::spawn`]: an editor talking to an agent
//!   it started as a child process.
//! * [`Transport::memory_pair`]: two connected in-memory ends, for tests.
//! * [`Transport::new`]: any other reader and writer (sockets, pipes, ...).

use std::fmt;
use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};

/// The boxed reading half of a [`Transport`].
pub type BoxedReader = Pin<Box<dyn AsyncRead + Send>>;

/// The boxed writing half of a [`Transport`].
pub type BoxedWriter = Pin<Box<dyn AsyncWrite + Send>>;

/// Buffer size of each direction of [`Transport::memory_pair`].
const MEMORY_PIPE_SIZE: usize = 256 * 1024;

/// A connection's byte streams: what is read from the peer and what is
/// written to it.
pub struct Transport {
    /// Bytes coming from the peer.
    pub(crate) reader: BoxedReader,
    /// Bytes going to the peer.
    pub(crate) writer: BoxedWriter,
}

impl Transport {
    /// A transport over any reader and writer.
    pub fn new(
        reader: impl AsyncRead + Send + 'static,
        writer: impl AsyncWrite + Send + 'static,
    ) -> Self {
        Self {
            reader: Box::pin(reader),
            writer: Box::pin(writer),
        }
    }

    /// The process's standard input and output, for an agent run by an
    /// editor.
    ///
    /// Nothing else in the process may write to standard output, or the
    /// protocol stream is corrupted: send logs to standard error.
    ///
    /// Tokio reads standard input on a blocking thread that cannot be
    /// interrupted, so shutting down the runtime may wait until the editor
    /// closes the pipe; an agent that wants to stop earlier should exit the
    /// process.
    pub fn stdio() -> Self {
        Self::new(tokio::io::stdin(), tokio::io::stdout())
    }

    /// Use this for testing: two ends of an in-memory connection.
    ///
    /// What one end writes, the other reads. Dropping an end (or its writer)
    /// makes the other end read end-of-file once the buffered bytes are
    /// consumed.
    pub fn memory_pair() -> (Transport, Transport) {
        let (a_writes, b_reads) = tokio::io::duplex(MEMORY_PIPE_SIZE);
        let (b_writes, a_reads) = tokio::io::duplex(MEMORY_PIPE_SIZE);
        (Self::new(a_reads, a_writes), Self::new(b_reads, b_writes))
    }

    /// Splits the transport into its reader and writer.
    pub fn into_parts(self) -> (BoxedReader, BoxedWriter) {
        (self.reader, self.writer)
    }
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::Transport;

    #[tokio::test]
    async fn memory_pair_carries_bytes_both_ways() {
        let (a, b) = Transport::memory_pair();
        let (mut a_reader, mut a_writer) = a.into_parts();
        let (mut b_reader, mut b_writer) = b.into_parts();

        a_writer.write_all(b"ping\n").await.expect("write");
        let mut got = [0; 5];
        b_reader.read_exact(&mut got).await.expect("read");
        assert_eq!(&got, b"ping\n");

        b_writer.write_all(b"pong\n").await.expect("write");
        a_reader.read_exact(&mut got).await.expect("read");
        assert_eq!(&got, b"pong\n");
    }

    #[tokio::test]
    async fn dropping_a_writer_ends_the_peers_input() {
        let (a, b) = Transport::memory_pair();
        let (_a_reader, mut a_writer) = a.into_parts();
        let (mut b_reader, _b_writer) = b.into_parts();
        a_writer.write_all(b"last").await.expect("write");
        drop(a_writer);
        let mut got = Vec::new();
        b_reader.read_to_end(&mut got).await.expect("read");
        assert_eq!(got, b"last");
    }
}
