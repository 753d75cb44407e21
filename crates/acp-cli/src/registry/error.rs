//! What can go wrong with the registry: one variant per way, each saying
//! when it happens, so that a command can tell the user what to do.

use crate::exit::Failure;

/// An error of the registry layer.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A URL that is not HTTPS (plain HTTP is allowed to a loopback
    /// address only), or not a URL at all: the registry's, an archive's,
    /// or where a redirect led.
    BadUrl {
        /// The URL as given.
        url: String,
        /// Why it is refused.
        reason: String,
    },
    /// The request could not be made or did not complete: no network, a
    /// refused connection, a TLS failure, a stall, a connection cut short.
    Unreachable {
        /// The URL.
        url: String,
        /// What failed.
        reason: String,
    },
    /// The server answered with an HTTP error status.
    Status {
        /// The URL.
        url: String,
        /// The status code.
        status: u16,
    },
    /// A download larger than acp accepts.
    TooLarge {
        /// The URL.
        url: String,
        /// The limit, in bytes.
        limit: u64,
    },
    /// The registry's document is not the registry format.
    BadIndex {
        /// Where it came from (a URL or the cache file).
        origin: String,
        /// What is wrong.
        reason: String,
    },
    /// The downloaded archive's SHA-256 is not the one the registry gives.
    Checksum {
        /// The archive's URL.
        url: String,
        /// The registry's checksum.
        expected: String,
        /// The downloaded file's.
        actual: String,
    },
    /// An archive member acp refuses to extract: an absolute path, a `..`
    /// component, a link leading outside the install directory, a device
    /// file, a member written through a link.
    UnsafeMember {
        /// The member's name as the archive gives it.
        member: String,
        /// Why it is refused.
        reason: String,
    },
    /// The archive holds more (bytes, once extracted, or members) than acp
    /// extracts.
    ExtractTooLarge {
        /// What the limit is about ("bytes", "members").
        what: &'static str,
        /// The limit.
        limit: u64,
    },
    /// The archive cannot be read (corrupt, truncated, not that format).
    BadArchive {
        /// The archive's URL (or the member being read).
        archive: String,
        /// What the reader said.
        reason: String,
    },
    /// The registry's `cmd` does not name an executable file inside the
    /// install directory.
    BadCommand {
        /// `cmd` as the registry gives it.
        cmd: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A file operation failed.
    Io {
        /// What acp was doing.
        what: String,
        /// The error.
        source: std::io::Error,
    },
}

impl Error {
    /// An [`Error::Io`] while doing `what`.
    pub fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
        let what = what.into();
        move |source| Error::Io { what, source }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::BadUrl { url, reason } => write!(f, "refused URL {url}: {reason}"),
            Error::Unreachable { url, reason } => write!(f, "cannot fetch {url}: {reason}"),
            Error::Status { url, status } => write!(f, "{url} answered HTTP {status}"),
            Error::TooLarge { url, limit } => write!(
                f,
                "{url} is larger than acp downloads ({} MiB); nothing was kept",
                limit >> 20
            ),
            Error::BadIndex { origin, reason } => {
                write!(f, "{origin} is not an ACP registry: {reason}")
            }
            Error::Checksum {
                url,
                expected,
                actual,
            } => write!(
                f,
                "the archive {url} has SHA-256 {actual}, but the registry says {expected}; nothing was kept"
            ),
            Error::UnsafeMember { member, reason } => write!(
                f,
                "refused the archive: its member {member:?} is {reason}; nothing of it was kept"
            ),
            Error::ExtractTooLarge { what, limit } => write!(
                f,
                "refused the archive: it holds more than {limit} {what} once extracted; nothing of it was kept"
            ),
            Error::BadArchive { archive, reason } => {
                write!(
                    f,
                    "cannot read the archive {archive}: {reason}; nothing was kept"
                )
            }
            Error::BadCommand { cmd, reason } => write!(
                f,
                "the registry's command {cmd:?} {reason}; nothing was kept"
            ),
            Error::Io { what, source } => write!(f, "{what}: {source}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<Error> for Failure {
    /// Every registry error ends the command with exit code 1.
    fn from(error: Error) -> Failure {
        Failure::agent(error.to_string())
    }
}
