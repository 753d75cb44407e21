//! The agent's own files and commands, for clients that offer none:
//! [`acp_host`], confined to the session's directory, the same code `acp`
//! serves `fs/*` and `terminal/*` with. Commands are not sandboxed here: the
//! agent runs them with its own rights, after the user's permission.

use acp_host::{Files, Roots, Sandbox, TerminalSettings, Terminals};
use std::path::{Path, PathBuf};

/// The local host of one session.
pub struct Local {
    host: Result<(Files, Terminals), String>,
}

impl std::fmt::Debug for Local {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Local").finish_non_exhaustive()
    }
}

impl Local {
    /// Files and commands within `cwd` and the session's `additional`
    /// directories. Starts sweeping the temporary files a killed writer left
    /// there (needs a Tokio runtime).
    pub fn new(cwd: &Path, additional: &[PathBuf]) -> Local {
        let dirs = std::iter::once(cwd).chain(additional.iter().map(PathBuf::as_path));
        let host = Roots::new(dirs)
            .map(|roots| {
                let terminals =
                    Terminals::new(TerminalSettings::new(roots.clone()).sandbox(Sandbox::off()));
                (Files::new(roots), terminals)
            })
            .map_err(|e| format!("the session's directories cannot be used: {e}"));
        if let Ok((files, _)) = &host {
            let files = files.clone();
            tokio::spawn(async move { files.sweep().await });
        }
        Local { host }
    }

    /// The files, or why there are none.
    pub fn files(&self) -> Result<&Files, String> {
        self.host.as_ref().map(|(f, _)| f).map_err(Clone::clone)
    }

    /// The terminals, or why there are none.
    pub fn terminals(&self) -> Result<&Terminals, String> {
        self.host.as_ref().map(|(_, t)| t).map_err(Clone::clone)
    }

    /// Reads `path` from 1-based `line`, at most `limit` lines.
    pub async fn read(
        &self,
        path: &Path,
        line: Option<u32>,
        limit: Option<u32>,
    ) -> Result<String, String> {
        let files = self.files()?;
        let resolved = resolve(files, path)?;
        let budget = files.read_budget();
        tokio::task::spawn_blocking(move || acp_host::read_text(&resolved, line, limit, budget))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.message)
    }

    /// Writes `content` to `path` atomically.
    pub async fn write(&self, path: &Path, content: &str) -> Result<(), String> {
        let files = self.files()?;
        let resolved = resolve(files, path)?;
        files
            .write_resolved(resolved, content.to_owned())
            .await
            .map_err(|e| e.message)
    }
}

fn resolve(files: &Files, path: &Path) -> Result<std::path::PathBuf, String> {
    let text = path
        .to_str()
        .ok_or_else(|| format!("{} is not a UTF-8 path", path.display()))?;
    files.roots().resolve(text).map_err(|e| e.message)
}
