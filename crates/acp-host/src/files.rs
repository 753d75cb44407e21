//! `fs/read_text_file` and `fs/write_text_file` within the roots: [`Files`].

use crate::read::{ENVELOPE, read_text};
use crate::roots::Roots;
use crate::write::{Sweep, sweep_stale_writes, write_atomic};
use acp_schema::{
    Error, ErrorCode, ReadTextFileRequest, ReadTextFileResponse, WriteTextFileRequest,
    WriteTextFileResponse,
};
use std::path::{Path, PathBuf};

/// The client side of `fs/*` on the local disk, confined to [`Roots`].
/// The blocking work runs on Tokio's blocking threads.
#[derive(Debug, Clone)]
pub struct Files {
    roots: Roots,
    max_message_size: usize,
}

impl Files {
    /// Files within `roots`, for a connection whose messages may have
    /// [`crate::DEFAULT_MAX_MESSAGE_SIZE`] bytes.
    pub fn new(roots: Roots) -> Files {
        Files {
            roots,
            max_message_size: crate::DEFAULT_MAX_MESSAGE_SIZE,
        }
    }

    /// The same, for a connection whose messages may have `bytes` bytes: a
    /// read whose answer would be longer is refused.
    #[must_use]
    pub fn max_message_size(mut self, bytes: usize) -> Files {
        self.max_message_size = bytes;
        self
    }

    /// The roots.
    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    /// The most bytes a file's content may take in an answer.
    pub fn read_budget(&self) -> usize {
        self.max_message_size.saturating_sub(ENVELOPE)
    }

    /// `fs/read_text_file`.
    pub async fn read_text_file(
        &self,
        request: ReadTextFileRequest,
    ) -> Result<ReadTextFileResponse, Error> {
        let path = self.roots.resolve(&request.path)?;
        let (line, limit, budget) = (request.line, request.limit, self.read_budget());
        let content = blocking(move || read_text(&path, line, limit, budget)).await?;
        Ok(ReadTextFileResponse::new(content))
    }

    /// `fs/write_text_file`.
    pub async fn write_text_file(
        &self,
        request: WriteTextFileRequest,
    ) -> Result<WriteTextFileResponse, Error> {
        let path = self.roots.resolve(&request.path)?;
        self.write_resolved(path, request.content).await?;
        Ok(WriteTextFileResponse::new())
    }

    /// Writes `content` to `path`, a path [`Roots::resolve`] returned.
    pub async fn write_resolved(&self, path: PathBuf, content: String) -> Result<(), Error> {
        blocking(move || write_atomic(&path, content.as_bytes())).await
    }

    /// Removes the temporary files that killed writers left below the roots
    /// (see [`sweep_stale_writes`]); call it when a session starts.
    pub async fn sweep(&self) -> Sweep {
        let roots = self.roots.clone();
        tokio::task::spawn_blocking(move || sweep_stale_writes(&roots))
            .await
            .unwrap_or_default()
    }

    /// Whether `path` (resolved) is inside the roots.
    pub fn contains(&self, path: &Path) -> bool {
        self.roots.contains(path)
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        Error::new(
            ErrorCode::INTERNAL_ERROR,
            format!("the file task failed: {e}"),
        )
    })?
}
