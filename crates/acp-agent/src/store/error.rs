//! What can go wrong with the store, said so that the user knows what to do.

use acp::schema::{Error, ErrorCode};
use rusqlite::ErrorCode as Code;
use serde_json::json;
use std::fmt;
use std::path::{Path, PathBuf};

/// What is wrong with the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// The file is there but empty (0 bytes): whatever it held is gone.
    Empty,
    /// The file is not a SQLite database (its header is not one).
    NotADatabase,
    /// The file is a database whose pages are damaged (`quick_check` or a
    /// query found corruption), or its write-ahead log has no database.
    Corrupt,
    /// The file was written by a newer `acp-agent`, in a format this one
    /// does not know.
    NewerFormat,
    /// The file or its directory cannot be written.
    Unwritable,
    /// The disk is full.
    DiskFull,
    /// Another process held the database locked for longer than the busy
    /// timeout.
    Busy,
    /// Anything else (an I/O error, a row that does not decode).
    Other,
}

impl Problem {
    /// The name used in the error's `data.problem`.
    pub fn name(self) -> &'static str {
        match self {
            Problem::Empty => "empty",
            Problem::NotADatabase => "not_a_database",
            Problem::Corrupt => "corrupt",
            Problem::NewerFormat => "newer_format",
            Problem::Unwritable => "unwritable",
            Problem::DiskFull => "disk_full",
            Problem::Busy => "busy",
            Problem::Other => "other",
        }
    }

    /// Whether the file itself is damaged: the store then refuses all work
    /// until it is dealt with (see `acp-agent --recover-store`).
    pub fn is_damage(self) -> bool {
        matches!(
            self,
            Problem::Empty | Problem::NotADatabase | Problem::Corrupt | Problem::NewerFormat
        )
    }
}

/// A store operation that failed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    /// What kind of failure.
    pub problem: Problem,
    /// The database file (`None` for a store in memory).
    pub path: Option<PathBuf>,
    /// The details: SQLite's or the system's message.
    pub detail: String,
}

impl StoreError {
    pub(crate) fn new(problem: Problem, path: Option<&Path>, detail: impl Into<String>) -> Self {
        StoreError {
            problem,
            path: path.map(Path::to_path_buf),
            detail: detail.into(),
        }
    }

    /// A SQLite error, classified.
    pub(crate) fn sqlite(path: Option<&Path>, e: &rusqlite::Error) -> Self {
        let problem = match e.sqlite_error_code() {
            Some(Code::DatabaseCorrupt) => Problem::Corrupt,
            Some(Code::NotADatabase) => Problem::NotADatabase,
            Some(Code::ReadOnly | Code::CannotOpen | Code::PermissionDenied) => Problem::Unwritable,
            Some(Code::DiskFull) => Problem::DiskFull,
            Some(Code::DatabaseBusy | Code::DatabaseLocked) => Problem::Busy,
            _ => Problem::Other,
        };
        Self::new(problem, path, e.to_string())
    }

    /// An I/O error on the store's file or directory, classified.
    pub(crate) fn io(path: Option<&Path>, what: &str, e: &std::io::Error) -> Self {
        use std::io::ErrorKind;
        let problem = match e.kind() {
            ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => Problem::Unwritable,
            ErrorKind::StorageFull => Problem::DiskFull,
            _ => Problem::Other,
        };
        Self::new(problem, path, format!("{what}: {e}"))
    }

    /// The data directory holding the file.
    fn dir(&self) -> Option<&Path> {
        self.path.as_deref().and_then(Path::parent)
    }

    /// What to do about it, in a sentence or two.
    pub fn advice(&self) -> String {
        let Some(dir) = self.dir() else {
            return "The store lives in memory; restart the agent.".into();
        };
        let dir = dir.display();
        match self.problem {
            Problem::Empty | Problem::NotADatabase | Problem::Corrupt | Problem::NewerFormat => {
                format!(
                    "Nothing is written to it until this is dealt with. Run `acp-agent --check-store --data-dir {dir}` \
                 for details, or `acp-agent --recover-store --data-dir {dir}` to move the file aside (it is kept as a \
                 backup) and start a fresh store with every session that can still be read; or start the agent \
                 with another --data-dir."
                )
            }
            Problem::Unwritable => format!(
                "Make {dir} and the files in it writable by this user, or start the agent with a writable --data-dir."
            ),
            Problem::DiskFull => "Free some disk space, then try again.".into(),
            Problem::Busy => {
                "Another acp-agent process held the store locked for more than 5 s; try again."
                    .into()
            }
            Problem::Other => {
                format!("Run `acp-agent --check-store --data-dir {dir}` to check the store.")
            }
        }
    }

    /// The error as a JSON-RPC error for the client: code -32603, a message
    /// that says what is wrong and what to do, and `data` with the file,
    /// the kind of problem and the details.
    pub fn to_rpc(&self) -> Error {
        Error::new(
            ErrorCode::INTERNAL_ERROR,
            format!("{self} {}", self.advice()),
        )
        .data(json!({
            "store": self.path.as_ref().map(|p| p.display().to_string()),
            "problem": self.problem.name(),
            "detail": self.detail,
        }))
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = match &self.path {
            Some(p) => p.display().to_string(),
            None => "in memory".into(),
        };
        let detail = &self.detail;
        match self.problem {
            Problem::Empty => write!(
                f,
                "The session store {file} is empty (0 bytes): the sessions it held are gone."
            ),
            Problem::NotADatabase => write!(
                f,
                "The session store {file} is not a SQLite database ({detail})."
            ),
            Problem::Corrupt => write!(f, "The session store {file} is damaged ({detail})."),
            Problem::NewerFormat => write!(
                f,
                "The session store {file} was written by a newer acp-agent ({detail})."
            ),
            Problem::Unwritable => write!(
                f,
                "The session store {file} cannot be written ({detail}), so sessions cannot be kept."
            ),
            Problem::DiskFull => write!(
                f,
                "The session store {file} cannot be written: the disk is full ({detail})."
            ),
            Problem::Busy => write!(f, "The session store {file} is locked ({detail})."),
            Problem::Other => write!(f, "The session store {file} failed: {detail}."),
        }
    }
}

impl std::error::Error for StoreError {}
