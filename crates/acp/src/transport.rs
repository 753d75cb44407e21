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
//! * [`crate::process::AgentCommand::connect`]: an editor talking to an agent
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
    /// When standard input and output are pipes (as an editor sets them up)
    /// and a Tokio runtime is running, they are read and written without
    /// blocking, driven by the runtime's reactor: no thread hand-off per read
    /// or write, and fd 0 and 1 themselves stay as they were. Anything else
    /// (a socket, a terminal, a file) goes
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

/// Standard input and output as non-blocking pipes, where possible.
///
/// Setting `O_NONBLOCK` on fd 0 or 1 would change them for everything else in
/// the process (a stray `println!` would then fail with `WouldBlock`), so the
/// pipe is opened again through `/proc/self/fd`, which gives a separate open
/// file description that alone is made non-blocking. Anything else (sockets,
/// terminals, files, systems without `/proc`) falls back to Tokio's blocking
/// standard streams.
mod nonblocking {
    use super::{BoxedReader, BoxedWriter};
    use std::fs::{File, OpenOptions};
    use std::os::fd::AsFd;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    use tokio::net::unix::pipe;

    /// Whether `fd` is a pipe and a runtime is there to drive it.
    fn is_pipe(fd: impl AsFd) -> bool {
        if tokio::runtime::Handle::try_current().is_err() {
            return false;
        }
        let Ok(owned) = fd.as_fd().try_clone_to_owned() else {
            return false;
        };
        File::from(owned)
            .metadata()
            .is_ok_and(|m| m.file_type().is_fifo())
    }

    /// A new, non-blocking open file description of the pipe at `fd`.
    fn reopen(fd: u8, write: bool) -> Option<File> {
        OpenOptions::new()
            .read(!write)
            .write(write)
            .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
            .open(format!("/proc/self/fd/{fd}"))
            .ok()
    }

    pub(super) fn stdin() -> Option<BoxedReader> {
        if !is_pipe(std::io::stdin()) {
            return None;
        }
        let receiver = pipe::Receiver::from_file(reopen(0, false)?).ok()?;
        Some(Box::pin(receiver))
    }

    pub(super) fn stdout() -> Option<BoxedWriter> {
        if !is_pipe(std::io::stdout()) {
            return None;
        }
        let sender = pipe::Sender::from_file(reopen(1, true)?).ok()?;
        Some(Box::pin(sender))
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
