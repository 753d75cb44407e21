//! The agent's own files and commands, for clients that offer none:
//! [`acp_host`], confined to the session's directory, the same code `acp`
//! serves `fs/*` and `terminal/*` with. Commands are not sandboxed here: the
//! agent runs them with its own rights, after the user's permission.

use acp_host::{Files, Roots, Sandbox, TerminalSettings, Terminals};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// The directories this process has swept for the temporary files of killed
/// writers (a sweep covers everything below a directory).
static SWEPT: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

/// Those of `dirs` that no sweep of this process covered yet, marked as
/// swept now.
fn not_yet_swept(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut swept = SWEPT.lock().unwrap_or_else(PoisonError::into_inner);
    let swept = swept.get_or_insert_with(HashSet::new);
    let fresh: Vec<PathBuf> = dirs
        .iter()
        .filter(|d| !d.ancestors().any(|a| swept.contains(a)))
        .cloned()
        .collect();
    swept.extend(fresh.iter().cloned());
    fresh
}

/// Sweeps the directories of `roots` that this process has not swept yet,
/// in the blocking pool. A writer killed mid-write leaves its temporary file
/// behind; the files of writers killed before this process started are
/// found by the first session in a directory, and each later session there
/// costs nothing (10,000 `session/new` in one project walked its tree
/// 10,000 times before).
fn sweep_once(roots: &Roots) {
    let fresh = not_yet_swept(roots.dirs());
    if fresh.is_empty() {
        return;
    }
    if let Ok(fresh) = Roots::new(&fresh) {
        tokio::task::spawn_blocking(move || acp_host::sweep_stale_writes(&fresh));
    }
}

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
    /// there, once per directory and process (needs a Tokio runtime).
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
            sweep_once(files.roots());
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

#[cfg(test)]
mod tests {
    use super::not_yet_swept;
    use std::path::PathBuf;

    #[test]
    fn each_directory_is_swept_once_and_covers_those_below_it() {
        let base = PathBuf::from("/no-such-dir-for-the-sweep-test");
        let (a, b, c) = (base.join("a"), base.join("a/b"), base.join("c"));
        assert_eq!(
            not_yet_swept(&[a.clone(), c.clone()]),
            [a.clone(), c.clone()]
        );
        // Below a swept directory, or swept already: nothing to do.
        assert!(not_yet_swept(&[b.clone(), c.clone()]).is_empty());
        assert!(not_yet_swept(std::slice::from_ref(&a)).is_empty());
        // A directory beside them is swept.
        let d = base.join("d");
        assert_eq!(not_yet_swept(&[b, d.clone()]), [d]);
    }
}
