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
    /// When standard input and output are pipes or sockets (as an editor
    /// sets them up) and a Tokio runtime is running, they are switched to
    /// non-blocking mode and driven by the runtime's reactor: no thread
    /// hand-off per read or write. Anything else (a terminal, a file) goes
    /// through Tokio's blocking stdin/stdout, which reads on a thread that
    /// cannot be interrupted: shutting down the runtime may then wait until the
    /// input closes, so an agent that wants to stop earlier should exit the
    /// process.
    pub fn stdio() -> Self {
        let reader = nonblocking::stdin().unwrap_or_else(|| Box::pin(tokio::io::stdin()));
        let writer = nonblocking::stdout().unwrap_or_else(|| Box::pin(tokio::io::stdout()));
        Transport { reader, writer }
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

/// Standard input and output as non-blocking pipes or sockets, where possible.
mod nonblocking {
    use super::{BoxedReader, BoxedWriter};
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;
    use tokio::net::unix::pipe;

    enum Kind {
        Pipe,
        Socket,
    }

    /// A duplicate of `fd` and what it is, if it is a pipe or a socket and a
    /// runtime is there to drive it.
    fn classify(fd: impl AsFd) -> Option<(OwnedFd, Kind)> {
        tokio::runtime::Handle::try_current().ok()?;
        let owned = fd.as_fd().try_clone_to_owned().ok()?;
        let file = std::fs::File::from(owned);
        let kind = file.metadata().ok()?.file_type();
        let kind = if kind.is_fifo() {
            Kind::Pipe
        } else if kind.is_socket() {
            Kind::Socket
        } else {
            return None;
        };
        Some((OwnedFd::from(file), kind))
    }

    fn socket(fd: OwnedFd) -> Option<tokio::net::UnixStream> {
        let stream = std::os::unix::net::UnixStream::from(fd);
        stream.set_nonblocking(true).ok()?;
        tokio::net::UnixStream::from_std(stream).ok()
    }

    pub(super) fn stdin() -> Option<BoxedReader> {
        match classify(std::io::stdin())? {
            (fd, Kind::Pipe) => Some(Box::pin(pipe::Receiver::from_owned_fd(fd).ok()?)),
            (fd, Kind::Socket) => Some(Box::pin(socket(fd)?)),
        }
    }

    pub(super) fn stdout() -> Option<BoxedWriter> {
        match classify(std::io::stdout())? {
            (fd, Kind::Pipe) => Some(Box::pin(pipe::Sender::from_owned_fd(fd).ok()?)),
            (fd, Kind::Socket) => Some(Box::pin(socket(fd)?)),
        }
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
