//! Atomic writes for `fs/write_text_file`, and the sweep of the temporary
//! files a killed writer left behind.
//!
//! A write goes to a temporary file in the target's directory, named
//! `.acp-write-<pid>-<start>-<n>.tmp` (the writer's process id and start
//! time make it recognisable and tell whether its writer still lives). The
//! temporary file is written, given the target's mode (and owner, where
//! permitted), flushed to disk with `fsync`, renamed over the target, and
//! the directory is flushed too. A reader therefore sees the old file or the
//! new one, never a mix, even if the writer is killed or the machine stops.
//! On every failure the temporary file is removed; a writer killed with
//! `SIGKILL` cannot remove it, so [`sweep_stale_writes`] removes the ones
//! whose writer is gone when a session starts in that directory tree.
//!
//! Refused: writing onto a directory or onto anything but a regular file,
//! and replacing a read-only file (one with no write bit in its mode): the
//! user made it read-only, and a rename would otherwise replace it silently.

use crate::read::io_error;
use crate::roots::{Roots, invalid};
use acp_schema::Error;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The start of every temporary file's name.
pub const TEMP_PREFIX: &str = ".acp-write-";
/// The end of every temporary file's name.
const TEMP_SUFFIX: &str = ".tmp";

/// Writes `content` to `path` (already resolved) atomically, creating
/// missing parent directories. An existing file keeps its mode and owner.
pub fn write_atomic(path: &Path, content: &[u8]) -> Result<(), Error> {
    let Some(dir) = path.parent().filter(|_| path.file_name().is_some()) else {
        return Err(invalid(format!("{} names no file", path.display())));
    };
    let existing = match std::fs::symlink_metadata(path) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_error("write", path, &e)),
    };
    if let Some(meta) = &existing {
        if meta.is_dir() {
            return Err(invalid(format!(
                "{} is a directory; a file cannot be written in its place",
                path.display()
            )));
        }
        if !meta.is_file() {
            return Err(invalid(format!(
                "{} is not a regular file; only regular files are written",
                path.display()
            )));
        }
        let mode = meta.permissions().mode();
        if mode & 0o222 == 0 {
            return Err(invalid(format!(
                "{} is read-only (mode {:04o}); it was left unchanged",
                path.display(),
                mode & 0o7777
            )));
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| io_error("create the directory", dir, &e))?;
    let temp = Temp::create(dir, existing.as_ref())?;
    let unchanged = |e: &std::io::Error| {
        let mut error = io_error("write", path, e);
        error.message.push_str(" (the file is unchanged)");
        error
    };
    let mut file = &temp.file;
    file.write_all(content).map_err(|e| unchanged(&e))?;
    if let Some(meta) = &existing {
        // Keep the owner where we may (root writing someone's file); a
        // failure to do so leaves the file ours, which is still correct.
        let _ = std::os::unix::fs::fchown(&temp.file, Some(meta.uid()), Some(meta.gid()));
        temp.file
            .set_permissions(std::fs::Permissions::from_mode(meta.mode() & 0o7777))
            .map_err(|e| unchanged(&e))?;
    }
    temp.file.sync_all().map_err(|e| unchanged(&e))?;
    std::fs::rename(&temp.path, path).map_err(|e| unchanged(&e))?;
    temp.disarm();
    // The rename is durable once the directory is flushed; a file system
    // that cannot flush a directory has nothing more to offer.
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// A temporary file that removes itself unless disarmed.
struct Temp {
    path: PathBuf,
    file: std::fs::File,
    armed: bool,
}

impl Temp {
    fn create(dir: &Path, existing: Option<&std::fs::Metadata>) -> Result<Temp, Error> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let mode = existing.map_or(0o666, |m| m.mode() & 0o777);
        let mut last = None;
        for _ in 0..16 {
            let path = dir.join(format!(
                "{TEMP_PREFIX}{}-{}-{}{TEMP_SUFFIX}",
                std::process::id(),
                start_time(std::process::id()).unwrap_or(0),
                COUNTER.fetch_add(1, Ordering::Relaxed)
            ));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode)
                .open(&path)
            {
                Ok(file) => {
                    return Ok(Temp {
                        path,
                        file,
                        armed: true,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(io_error("create a temporary file in", dir, &e)),
            }
        }
        let e = last.unwrap_or_else(|| std::io::Error::other("no free name"));
        Err(io_error("create a temporary file in", dir, &e))
    }

    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if self.armed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A process's start time, which tells a live writer from a later process
/// that reuses its id. `None` where there is no such process (or no `/proc`).
fn start_time(pid: u32) -> Option<u64> {
    crate::proc::stat(i32::try_from(pid).ok()?).map(|s| s.start)
}

/// Whether the writer named by a temporary file's `pid` and `start` still
/// runs.
fn writer_alive(pid: u32, start: u64) -> bool {
    if Path::new("/proc/self/stat").exists() {
        return start_time(pid) == Some(start);
    }
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
}

/// The writer (pid, start time) named by a temporary file, if `name` is one.
fn parse_temp_name(name: &str) -> Option<(u32, u64)> {
    let middle = name.strip_prefix(TEMP_PREFIX)?.strip_suffix(TEMP_SUFFIX)?;
    let mut parts = middle.split('-');
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    parts.next()?.parse::<u64>().ok()?;
    parts.next().is_none().then_some((pid, start))
}

/// The most directory entries one sweep looks at.
pub const SWEEP_LIMIT: usize = 200_000;

/// What [`sweep_stale_writes`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Sweep {
    /// The stale temporary files removed.
    pub removed: Vec<PathBuf>,
    /// Directory entries looked at.
    pub scanned: usize,
    /// False when the sweep stopped at [`SWEEP_LIMIT`] entries.
    pub complete: bool,
}

/// Removes the temporary files of writers that no longer run, below every
/// root (links are not followed). Those of live writers are left alone.
/// Blocking; it reads every directory below the roots, up to
/// [`SWEEP_LIMIT`] entries.
pub fn sweep_stale_writes(roots: &Roots) -> Sweep {
    let mut sweep = Sweep {
        complete: true,
        ..Sweep::default()
    };
    let mut stack: Vec<PathBuf> = roots.dirs().to_vec();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            sweep.scanned += 1;
            if sweep.scanned > SWEEP_LIMIT {
                sweep.complete = false;
                return sweep;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(entry.path());
                continue;
            }
            let name = entry.file_name();
            let Some((pid, start)) = name.to_str().and_then(parse_temp_name) else {
                continue;
            };
            if kind.is_file() && !writer_alive(pid, start) {
                let path = entry.path();
                if std::fs::remove_file(&path).is_ok() {
                    sweep.removed.push(path);
                }
            }
        }
    }
    sweep
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn writes_replace_keep_the_mode_and_leave_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sub/dir/b.txt");
        write_atomic(&file, b"hello").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&file, b"again").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "again");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        assert_eq!(entries(file.parent().unwrap()), ["b.txt"]);
    }

    #[test]
    fn new_files_get_the_usual_mode_not_a_private_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("new.txt");
        write_atomic(&file, b"x").unwrap();
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        let umask = nix::sys::stat::umask(nix::sys::stat::Mode::empty());
        nix::sys::stat::umask(umask);
        assert_eq!(mode, 0o666 & !umask.bits());
    }

    #[test]
    fn directories_special_and_read_only_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_atomic(dir.path(), b"x").unwrap_err();
        assert!(e.message.contains("is a directory"), "{}", e.message);
        let ro = dir.path().join("ro.txt");
        std::fs::write(&ro, "keep").unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
        let e = write_atomic(&ro, b"x").unwrap_err();
        assert!(e.message.contains("read-only (mode 0444)"), "{}", e.message);
        assert_eq!(std::fs::read_to_string(&ro).unwrap(), "keep");
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(write_atomic(&fifo, b"x").is_err());
        assert_eq!(entries(dir.path()), ["fifo", "ro.txt"]);
    }

    #[test]
    fn a_failed_write_removes_its_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // Renaming a file over a non-empty directory fails after the
        // content was written; `existing` sees a directory first, so use
        // a parent that is a file instead: creating the directory fails.
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "x").unwrap();
        assert!(write_atomic(&blocker.join("child.txt"), b"x").is_err());
        assert_eq!(entries(dir.path()), ["file"]);
    }

    #[test]
    fn sweep_removes_dead_writers_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        let me = std::process::id();
        let live = format!(
            "{TEMP_PREFIX}{me}-{}-0{TEMP_SUFFIX}",
            start_time(me).unwrap()
        );
        // A pid with a start time no process has.
        let dead = format!("{TEMP_PREFIX}{me}-1-0{TEMP_SUFFIX}");
        let unrelated = format!("{TEMP_PREFIX}notes.txt");
        for name in [&live, &dead, &unrelated] {
            std::fs::write(sub.join(name), "partial").unwrap();
        }
        let roots = Roots::new([dir.path()]).unwrap();
        let sweep = sweep_stale_writes(&roots);
        assert!(sweep.complete);
        let real = std::fs::canonicalize(&sub).unwrap();
        assert_eq!(sweep.removed, [real.join(&dead)]);
        let mut expected = vec![live, unrelated];
        expected.sort();
        assert_eq!(entries(&sub), expected);
    }

    #[test]
    fn temp_names_parse() {
        assert_eq!(parse_temp_name(".acp-write-12-345-6.tmp"), Some((12, 345)));
        assert_eq!(parse_temp_name(".acp-write-12-345.tmp"), None);
        assert_eq!(parse_temp_name(".acp-write-x-345-6.tmp"), None);
        assert_eq!(parse_temp_name("acp-write-12-345-6.tmp"), None);
    }
}
