//! `acp-host`: the client side of the Agent Client Protocol's `fs/*` and
//! `terminal/*` methods on the local machine, for any client (or agent)
//! that needs them.
//!
//! - [`Roots`], the session's directories: every path is resolved through
//!   its links before it is checked, and relative paths and NUL bytes are
//!   refused with `invalid_params` and a sentence naming the path and the
//!   roots.
//! - [`Files`], reads (`line`/`limit`, regular files only, never a FIFO
//!   that would block, never more than one message can carry, UTF-8 only)
//!   and atomic writes (temporary file, `fsync`, rename, `fsync` of the
//!   directory; mode kept; debris of killed writers swept).
//! - [`Terminals`], commands with one pipe for stdout and stderr, output
//!   bounded on a character boundary ([`DEFAULT_OUTPUT_LIMIT`] by default),
//!   signal names in exit statuses, and kill/release that end every
//!   descendant, under a [`supervisor`] process that also
//!   applies the [sandbox] (Landlock on Linux).
//!
//! The functions take the schema's request types and answer with its
//! response types or an [`acp_schema::Error`], so a `Client` implementation
//! forwards each method with one call. What this crate does not do: decide
//! whether the agent *may* write or run something (permission policies are
//! the client's), or know about the connection; it depends on `acp-schema`
//! only.
//!
//! Programs that use [`Terminals`] with the default supervisor must call
//! [`supervise_if_requested`] first thing in `main`.
//!
//! macOS and other Unix systems: files work the same; terminal commands are
//! not sandboxed and a kill reaches the command's process group only.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use acp_host::{Files, Roots};
//! use acp_schema::{ReadTextFileRequest, WriteTextFileRequest};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let files = Files::new(Roots::new([dir.path()]).unwrap());
//! let file = dir.path().join("notes.txt").display().to_string();
//! files
//!     .write_text_file(WriteTextFileRequest::new("s1", file.clone(), "one\ntwo\nthree\n"))
//!     .await
//!     .unwrap();
//! let read = files
//!     .read_text_file(ReadTextFileRequest::new("s1", file).line(2u32).limit(1u32))
//!     .await
//!     .unwrap();
//! assert_eq!(read.content, "two\n");
//!
//! // Outside the roots, even through a link: refused, saying where.
//! let error = files
//!     .read_text_file(ReadTextFileRequest::new("s1", "/etc/passwd"))
//!     .await
//!     .unwrap_err();
//! assert!(error.message.starts_with("access denied: /etc/passwd is outside"));
//! # }
//! ```
#![deny(missing_docs)]

mod files;
mod output;
mod proc;
mod read;
mod roots;
pub mod sandbox;
pub mod supervisor;
mod terminal;
mod write;

pub use files::Files;
pub use output::{OutputBuffer, OutputSince};
pub use proc::is_alive;
pub use read::{json_len, read_text};
pub use roots::{Roots, resolve_links};
pub use sandbox::{Sandbox, Support, probe as sandbox_support};
pub use supervisor::supervise_if_requested;
pub use terminal::{DEFAULT_OUTPUT_LIMIT, SupervisorProgram, TerminalSettings, Terminals};
pub use write::{SWEEP_LIMIT, Sweep, TEMP_PREFIX, sweep_stale_writes, write_atomic};

/// The largest message of an `acp` connection by default (64 MiB); pass
/// the connection's own limit where it differs.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 64 * 1024 * 1024;
