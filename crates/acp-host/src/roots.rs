//! The directories a session may use, and the resolution of the paths an
//! agent sends.
//!
//! A path from the agent must be absolute and free of NUL bytes. It is then
//! resolved the way the kernel would resolve it: component by component,
//! following every symbolic link (a dangling one included, since creating
//! a file through it creates its target), with `..` taken physically (the
//! parent of where a link led, as a shell's `cd -P` does). Only the resolved
//! path is checked against the roots and only the resolved path is used
//! afterwards, so a link inside a root that points outside cannot be used
//! to escape. Components that do not exist yet are kept as they are.
//!
//! What this does not defend against: a process that swaps a directory for
//! a link between the check and the use (a race with the agent's own
//! commands). Sandboxed commands can only create such links inside the
//! roots, where they point wherever the roots allow.

use acp_schema::{Error, ErrorCode};
use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// The most symbolic links followed while resolving one path (Linux's
/// limit, after which `open` fails with `ELOOP`).
const MAX_LINKS: usize = 40;

/// The directories a session may use: its working directory and its
/// additional directories, each canonical (absolute, no links).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    dirs: Vec<PathBuf>,
    confined: bool,
}

impl Roots {
    /// The roots `dirs` (the session's cwd first, then its additional
    /// directories), canonicalised. Fails when one does not exist or is not
    /// a directory.
    pub fn new<P: AsRef<Path>>(dirs: impl IntoIterator<Item = P>) -> std::io::Result<Roots> {
        let mut out: Vec<PathBuf> = Vec::new();
        for dir in dirs {
            let dir = dir.as_ref();
            let real = std::fs::canonicalize(dir).map_err(|e| {
                std::io::Error::new(e.kind(), format!("cannot use {}: {e}", dir.display()))
            })?;
            if !real.is_dir() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotADirectory,
                    format!("{} is not a directory", dir.display()),
                ));
            }
            if !out.contains(&real) {
                out.push(real);
            }
        }
        if out.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a session needs at least one directory",
            ));
        }
        Ok(Roots {
            dirs: out,
            confined: true,
        })
    }

    /// The same roots, with confinement switched on or off. Unconfined,
    /// [`Roots::resolve`] still refuses relative paths and NUL bytes and
    /// still resolves links, but accepts every place.
    #[must_use]
    pub fn confined(mut self, confined: bool) -> Roots {
        self.confined = confined;
        self
    }

    /// Whether paths outside the roots are refused.
    pub fn is_confined(&self) -> bool {
        self.confined
    }

    /// The canonical root directories, the working directory first.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The working directory (the first root).
    pub fn cwd(&self) -> &Path {
        &self.dirs[0]
    }

    /// Whether the resolved path `path` lies in a root.
    pub fn contains(&self, path: &Path) -> bool {
        self.dirs.iter().any(|root| path.starts_with(root))
    }

    /// Checks a path as the agent sent it and returns its resolution, the
    /// path to use. Errors are `invalid_params` (-32602) with a sentence
    /// naming the path and the roots.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, Error> {
        if path.contains('\0') {
            return Err(invalid(format!(
                "the path {:?} contains a NUL byte",
                path.replace('\0', "\\0")
            )));
        }
        let given = Path::new(path);
        if !given.is_absolute() {
            return Err(invalid(format!(
                "the path {path:?} is relative; paths must be absolute, for example {}",
                self.cwd().join(given).display()
            )));
        }
        let resolved = resolve_links(given).map_err(|e| {
            invalid(format!(
                "cannot resolve {path}: {e}; {}",
                self.describe_roots()
            ))
        })?;
        if !self.confined || self.contains(&resolved) {
            return Ok(resolved);
        }
        let via = if resolved.as_path() == given {
            String::new()
        } else {
            format!(" (it resolves to {})", resolved.display())
        };
        Err(invalid(format!(
            "access denied: {path}{via} is outside the session's directories ({})",
            self.list()
        )))
    }

    /// The roots as a comma-separated list.
    pub fn list(&self) -> String {
        let dirs: Vec<String> = self.dirs.iter().map(|d| d.display().to_string()).collect();
        dirs.join(", ")
    }

    fn describe_roots(&self) -> String {
        format!("the session's directories are {}", self.list())
    }
}

/// Resolves `path` (absolute) as the kernel would, following every link;
/// components that do not exist are appended as they are. Fails only on a
/// loop of links (more than 40) or an I/O error other than "not found" or
/// "not a directory".
pub fn resolve_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut queue: VecDeque<OsString> = VecDeque::new();
    push_front(&mut queue, path);
    let mut out = PathBuf::from("/");
    let mut links = 0;
    while let Some(name) = queue.pop_front() {
        match name.to_str() {
            Some("/") => {
                out = PathBuf::from("/");
                continue;
            }
            Some(".") => continue,
            Some("..") => {
                out.pop();
                continue;
            }
            _ => {}
        }
        let candidate = out.join(&name);
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(std::io::Error::other(format!(
                        "more than {MAX_LINKS} symbolic links (a loop?)"
                    )));
                }
                let target = std::fs::read_link(&candidate)?;
                push_front(&mut queue, &target);
            }
            Ok(_) => out = candidate,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                out = candidate
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Puts the components of `path` at the front of `queue`, in order; an
/// absolute path starts with "/", which resets the resolution to the root.
fn push_front(queue: &mut VecDeque<OsString>, path: &Path) {
    let parts: Vec<OsString> = path
        .components()
        .map(|c| match c {
            Component::RootDir | Component::Prefix(_) => OsString::from("/"),
            Component::CurDir => OsString::from("."),
            Component::ParentDir => OsString::from(".."),
            Component::Normal(n) => n.to_owned(),
        })
        .collect();
    for part in parts.into_iter().rev() {
        queue.push_front(part);
    }
}

/// An `invalid_params` error.
pub(crate) fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tree() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("root");
        let other = base.join("other");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        (dir, root, other)
    }

    fn s(p: &Path) -> &str {
        p.to_str().unwrap()
    }

    #[test]
    fn inside_paths_resolve_to_themselves() {
        let (_d, root, _) = tree();
        let roots = Roots::new([&root]).unwrap();
        assert_eq!(
            roots.resolve(s(&root.join("a.txt"))).unwrap(),
            root.join("a.txt")
        );
        assert_eq!(
            roots.resolve(s(&root.join("new/dir/f"))).unwrap(),
            root.join("new/dir/f")
        );
        assert_eq!(
            roots
                .resolve(&format!("{}/./sub/../b", root.display()))
                .unwrap(),
            root.join("b")
        );
        assert_eq!(roots.resolve(s(&root)).unwrap(), root);
    }

    #[test]
    fn relative_nul_and_outside_paths_are_refused_with_a_sentence() {
        let (_d, root, other) = tree();
        let roots = Roots::new([&root]).unwrap();
        let e = roots.resolve("notes.txt").unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert!(
            e.message.contains("\"notes.txt\" is relative"),
            "{}",
            e.message
        );
        let e = roots
            .resolve(&format!("{}/a\0b", root.display()))
            .unwrap_err();
        assert!(e.message.contains("NUL byte"), "{}", e.message);
        let e = roots.resolve(s(&other.join("x"))).unwrap_err();
        assert_eq!(
            e.message,
            format!(
                "access denied: {} is outside the session's directories ({})",
                other.join("x").display(),
                root.display()
            )
        );
        assert!(
            roots
                .resolve(&format!("{}/../other/x", root.display()))
                .is_err()
        );
        // Unconfined: anywhere, but still absolute.
        let open = roots.clone().confined(false);
        assert_eq!(open.resolve(s(&other.join("x"))).unwrap(), other.join("x"));
        assert!(open.resolve("x").is_err());
    }

    #[test]
    fn links_are_followed_before_the_check() {
        let (_d, root, other) = tree();
        symlink(&other, root.join("dir-link")).unwrap();
        symlink(other.join("file"), root.join("file-link")).unwrap();
        symlink(other.join("missing"), root.join("dangling")).unwrap();
        symlink("sub", root.join("inner")).unwrap();
        symlink("loop-b", root.join("loop-a")).unwrap();
        symlink("loop-a", root.join("loop-b")).unwrap();
        std::fs::write(other.join("file"), "secret").unwrap();
        let roots = Roots::new([&root]).unwrap();
        for name in [
            "dir-link/x",
            "file-link",
            "dangling",
            "inner/../../other/file",
        ] {
            let e = roots.resolve(s(&root.join(name))).unwrap_err();
            assert!(
                e.message.contains("it resolves to"),
                "{name}: {}",
                e.message
            );
        }
        assert_eq!(
            roots.resolve(s(&root.join("inner/f"))).unwrap(),
            root.join("sub/f")
        );
        // `..` after a link is the parent of its target.
        assert_eq!(
            roots.resolve(s(&root.join("inner/../f"))).unwrap(),
            root.join("f")
        );
        let e = roots.resolve(s(&root.join("loop-a"))).unwrap_err();
        assert!(e.message.contains("symbolic links"), "{}", e.message);
        // A root that is itself reached through a link is canonicalised.
        let linked_root = other.join("to-root");
        symlink(&root, &linked_root).unwrap();
        let roots = Roots::new([&linked_root]).unwrap();
        assert_eq!(roots.dirs(), std::slice::from_ref(&root));
        assert_eq!(
            roots.resolve(s(&linked_root.join("a"))).unwrap(),
            root.join("a")
        );
    }

    #[test]
    fn missing_roots_are_an_error() {
        let (_d, root, _) = tree();
        assert!(Roots::new([root.join("nope")]).is_err());
        assert!(Roots::new(Vec::<PathBuf>::new()).is_err());
    }
}
