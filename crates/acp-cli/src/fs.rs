//! `fs/read_text_file` and `fs/write_text_file` for the agent, confined to
//! the session's directories.
//!
//! Paths must be absolute. Unless confinement is switched off
//! (`--allow-outside-cwd`), a path must lie inside the session's working
//! directory or one of its additional directories, after symbolic links are
//! resolved: a link inside the tree that points outside is refused.
//!
//! Writes are atomic: the text goes to a temporary file in the target's
//! directory, which is then renamed over the target, so a reader sees the
//! old file or the new one, never half of it.

use acp::schema::{Error, ErrorCode};
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// Which directories the agent may read and write.
#[derive(Debug, Clone)]
pub struct Confinement {
    roots: Vec<PathBuf>,
    enabled: bool,
}

impl Confinement {
    /// Confine to `roots` (the session cwd and additional directories);
    /// `enabled = false` allows every absolute path.
    pub fn new(roots: impl IntoIterator<Item = PathBuf>, enabled: bool) -> Self {
        let roots = roots
            .into_iter()
            .map(|root| std::fs::canonicalize(&root).unwrap_or(root))
            .collect();
        Confinement { roots, enabled }
    }

    /// Checks `path` (as the agent sent it) and returns the path to use.
    pub fn check(&self, path: &str) -> Result<PathBuf, Error> {
        let given = Path::new(path);
        if !given.is_absolute() {
            return Err(invalid(format!("path must be absolute, got {path:?}")));
        }
        let normal = normalize(given);
        if !self.enabled {
            return Ok(normal);
        }
        let resolved = resolve_existing_prefix(&normal);
        if self.roots.iter().any(|root| resolved.starts_with(root)) {
            Ok(normal)
        } else {
            let roots: Vec<String> = self.roots.iter().map(|r| r.display().to_string()).collect();
            Err(invalid(format!(
                "access denied: {path} is outside the session's directories ({}); \
                 run acp with --allow-outside-cwd to permit it",
                roots.join(", ")
            )))
        }
    }
}

/// Removes `.` and resolves `..` without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Resolves symbolic links in the longest existing prefix of `path` and
/// appends the rest unchanged.
fn resolve_existing_prefix(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            let mut out = real;
            out.extend(rest.iter().rev());
            return out;
        }
        match (
            existing.file_name().map(|n| n.to_owned()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Reads `path` as UTF-8 text, from 1-based `line` for `limit` lines.
pub fn read_text(path: &Path, line: Option<u32>, limit: Option<u32>) -> Result<String, Error> {
    let bytes = std::fs::read(path).map_err(|e| io_error("read", path, &e))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| invalid(format!("{} is not UTF-8 text", path.display())))?;
    if line.is_none() && limit.is_none() {
        return Ok(text);
    }
    let start = match line {
        Some(0) => {
            return Err(invalid("line numbers start at 1"));
        }
        Some(n) => n as usize - 1,
        None => 0,
    };
    let lines = text.split_inclusive('\n').skip(start);
    Ok(match limit {
        Some(n) => lines.take(n as usize).collect(),
        None => lines.collect(),
    })
}

/// Writes `content` to `path` atomically, creating parent directories.
/// An existing file keeps its permissions.
pub fn write_text(path: &Path, content: &str) -> Result<(), Error> {
    let dir = path
        .parent()
        .ok_or_else(|| invalid(format!("{} has no parent directory", path.display())))?;
    std::fs::create_dir_all(dir).map_err(|e| io_error("create directory", dir, &e))?;
    if path.is_dir() {
        return Err(invalid(format!("{} is a directory", path.display())));
    }
    let mut temp = tempfile::Builder::new()
        .prefix(".acp-write-")
        .tempfile_in(dir)
        .map_err(|e| io_error("create a temporary file in", dir, &e))?;
    temp.write_all(content.as_bytes())
        .and_then(|()| temp.as_file().sync_all())
        .map_err(|e| io_error("write", temp.path(), &e))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = temp.as_file().set_permissions(meta.permissions());
    }
    temp.persist(path)
        .map_err(|e| io_error("replace", path, &e.error))?;
    Ok(())
}

/// An invalid-params error whose message says what is wrong.
fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message)
}

fn io_error(what: &str, path: &Path, e: &std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::NotFound {
        Error::new(
            ErrorCode::RESOURCE_NOT_FOUND,
            format!("cannot {what} {}: no such file", path.display()),
        )
    } else {
        Error::new(
            ErrorCode::INTERNAL_ERROR,
            format!("cannot {what} {}: {e}", path.display()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_line_ranges() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "one\ntwo\nthree\nfour").unwrap();
        assert_eq!(
            read_text(&file, None, None).unwrap(),
            "one\ntwo\nthree\nfour"
        );
        assert_eq!(read_text(&file, Some(2), Some(2)).unwrap(), "two\nthree\n");
        assert_eq!(read_text(&file, Some(4), None).unwrap(), "four");
        assert_eq!(read_text(&file, None, Some(1)).unwrap(), "one\n");
        assert_eq!(read_text(&file, Some(9), None).unwrap(), "");
        assert!(read_text(&file, Some(0), None).is_err());
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        assert!(read_text(&file, None, None).is_err());
    }

    #[test]
    fn writes_atomically_and_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sub/dir/b.txt");
        write_text(&file, "hello").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_text(&file, "again").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "again");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        let leftovers: Vec<_> = std::fs::read_dir(file.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file may be left behind");
        assert!(write_text(dir.path(), "x").is_err());
    }

    #[test]
    fn confinement() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let other = dir.path().join("other");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::os::unix::fs::symlink(&other, root.join("link")).unwrap();
        let c = Confinement::new([root.clone()], true);
        assert!(c.check(root.join("new/file").to_str().unwrap()).is_ok());
        assert!(c.check("relative/path").is_err());
        assert!(c.check(other.join("x").to_str().unwrap()).is_err());
        assert!(c.check(root.join("../other/x").to_str().unwrap()).is_err());
        assert!(c.check(root.join("link/x").to_str().unwrap()).is_err());
        let open = Confinement::new([root.clone()], false);
        assert!(open.check(other.join("x").to_str().unwrap()).is_ok());
        assert!(open.check("relative").is_err());
    }
}
