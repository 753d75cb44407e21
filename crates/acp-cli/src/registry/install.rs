//! Agents installed from archives: `<data dir>/acp/agents/ID/VERSION/`.
//!
//! A version directory appears only complete: an archive is downloaded and
//! extracted into a temporary directory beside it (`ID/.tmp-…`), checked,
//! and renamed into place; a failure (or a killed acp) leaves at most that
//! temporary directory, which the next operation on the agent removes.
//! Once in place, a version directory is never changed, so one that exists
//! is a complete install and is used again as it is.
//!
//! Every change happens under [`Store::lock`], one lock for all agents
//! (also held while the config file is edited), so two `acp agents add`
//! at once do one after the other.

use super::Error;
use super::archive::{self, Format, check_command, command_path};
use super::http::{Http, check_url};
use super::index::{BinaryTarget, valid_id, valid_version};
use std::fs;
use std::path::{Path, PathBuf};

/// The caps on one install.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// The largest archive downloaded, in bytes.
    pub download: u64,
    /// The caps on extracting it.
    pub extract: archive::Limits,
}

impl Default for Limits {
    /// 1 GiB downloaded, and [`archive::Limits::default`].
    fn default() -> Self {
        Limits {
            download: 1 << 30,
            extract: archive::Limits::default(),
        }
    }
}

/// An installed version.
#[derive(Debug, Clone, PartialEq)]
pub struct Installed {
    /// Its directory.
    pub dir: PathBuf,
    /// The program to run (the registry's `cmd` in `dir`).
    pub program: PathBuf,
    /// How many bytes were downloaded (0 when the version was there
    /// already).
    pub downloaded: u64,
}

/// The directory of installed agents, `<data dir>/acp/agents`.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

/// The store's lock, held until dropped (also released when the process
/// dies, so a killed acp never leaves it taken).
#[derive(Debug)]
pub struct Lock {
    _file: nix::fcntl::Flock<fs::File>,
}

impl Store {
    /// The store at `root`.
    pub fn new(root: PathBuf) -> Store {
        Store { root }
    }

    /// Its directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where version `version` of agent `id` is installed.
    pub fn version_dir(&self, id: &str, version: &str) -> PathBuf {
        self.root.join(id).join(version)
    }

    /// Takes the store's lock, waiting for another acp that holds it (after
    /// calling `waiting`, to say so).
    pub fn lock(&self, waiting: impl FnOnce()) -> Result<Lock, Error> {
        use nix::fcntl::{Flock, FlockArg};
        fs::create_dir_all(&self.root)
            .map_err(Error::io(format!("cannot create {}", self.root.display())))?;
        let path = self.root.join(".lock");
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(Error::io(format!("cannot open {}", path.display())))?;
        let lock_error = |errno: nix::errno::Errno| Error::Io {
            what: format!("cannot lock {}", path.display()),
            source: errno.into(),
        };
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(file) => Ok(Lock { _file: file }),
            Err((file, nix::errno::Errno::EWOULDBLOCK)) => {
                waiting();
                Flock::lock(file, FlockArg::LockExclusive)
                    .map(|file| Lock { _file: file })
                    .map_err(|(_, errno)| lock_error(errno))
            }
            Err((_, errno)) => Err(lock_error(errno)),
        }
    }

    /// Installs version `version` of agent `id` from `target` (this
    /// platform's archive) and returns where. A version already in place is
    /// used as it is.
    pub async fn install(
        &self,
        _lock: &Lock,
        http: &Http,
        id: &str,
        version: &str,
        target: &BinaryTarget,
        limits: Limits,
    ) -> Result<Installed, Error> {
        assert!(
            valid_id(id) && valid_version(version),
            "checked by the index"
        );
        let agent_dir = self.root.join(id);
        fs::create_dir_all(&agent_dir)
            .map_err(Error::io(format!("cannot create {}", agent_dir.display())))?;
        let installed = self
            .install_in(&agent_dir, http, version, target, limits)
            .await;
        if installed.is_err() {
            // Only when empty: nothing of a failed install stays.
            let _ = fs::remove_dir(&agent_dir);
        }
        installed
    }

    async fn install_in(
        &self,
        agent_dir: &Path,
        http: &Http,
        version: &str,
        target: &BinaryTarget,
        limits: Limits,
    ) -> Result<Installed, Error> {
        self.clean(agent_dir)?;
        let dir = agent_dir.join(version);
        if dir.is_dir() {
            let program = check_command(&dir, &target.cmd)?;
            return Ok(Installed {
                dir,
                program,
                downloaded: 0,
            });
        }
        command_path(&target.cmd)?;
        let url = check_url(&target.archive)?;
        let format = Format::of_url(&url);
        // Removed when dropped: on every error below, and at the end.
        let tmp = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempdir_in(agent_dir)
            .map_err(Error::io(format!(
                "cannot create a directory in {}",
                agent_dir.display()
            )))?;
        let download = tmp.path().join("download");
        let mut file = fs::File::create(&download)
            .map_err(Error::io(format!("cannot create {}", download.display())))?;
        let got = http.download(&url, &mut file, limits.download).await?;
        drop(file);
        if let Some(expected) = &target.sha256
            && !expected.eq_ignore_ascii_case(&got.sha256)
        {
            return Err(Error::Checksum {
                url: url.to_string(),
                expected: expected.clone(),
                actual: got.sha256,
            });
        }
        let tree = tmp.path().join("tree");
        fs::create_dir(&tree).map_err(Error::io(format!("cannot create {}", tree.display())))?;
        let (work, cmd, origin) = (tree.clone(), target.cmd.clone(), url.to_string());
        tokio::task::spawn_blocking(move || {
            archive::extract(format, &download, &origin, &work, &cmd, limits.extract)?;
            check_command(&work, &cmd)
        })
        .await
        .map_err(|e| Error::Io {
            what: "the extraction stopped".into(),
            source: std::io::Error::other(e.to_string()),
        })??;
        fs::rename(&tree, &dir).map_err(Error::io(format!(
            "cannot move the extracted files to {}",
            dir.display()
        )))?;
        if let Ok(handle) = fs::File::open(agent_dir) {
            let _ = handle.sync_all();
        }
        drop(tmp);
        Ok(Installed {
            program: dir.join(command_path(&target.cmd)?),
            dir,
            downloaded: got.bytes,
        })
    }

    /// Removes version `version` of agent `id` (both as the config file
    /// names them: refused unless they are a registry id and version, so
    /// never a path outside the store).
    pub fn remove_version(&self, _lock: &Lock, id: &str, version: &str) -> Result<(), Error> {
        check_names(id, Some(version))?;
        remove_dir(&self.version_dir(id, version))
    }

    /// Removes everything of agent `id`; whether there was anything.
    pub fn remove_agent(&self, _lock: &Lock, id: &str) -> Result<bool, Error> {
        check_names(id, None)?;
        let dir = self.root.join(id);
        let existed = dir.exists();
        remove_dir(&dir)?;
        Ok(existed)
    }

    /// Removes what an install that did not finish left in `agent_dir`.
    fn clean(&self, agent_dir: &Path) -> Result<(), Error> {
        let entries = fs::read_dir(agent_dir)
            .map_err(Error::io(format!("cannot list {}", agent_dir.display())))?;
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with(".tmp-") {
                remove_dir(&entry.path())?;
            }
        }
        Ok(())
    }
}

fn check_names(id: &str, version: Option<&str>) -> Result<(), Error> {
    if valid_id(id) && version.is_none_or(valid_version) {
        Ok(())
    } else {
        Err(Error::Io {
            what: format!("refused to remove agent {id:?} version {version:?}"),
            source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
        })
    }
}

fn remove_dir(dir: &Path) -> Result<(), Error> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::Io {
            what: format!("cannot remove {}", dir.display()),
            source: e,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removing_never_leaves_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::create_dir(&victim).unwrap();
        let store = Store::new(dir.path().join("agents"));
        let lock = store.lock(|| panic!("nobody else holds it")).unwrap();
        assert!(store.remove_version(&lock, "a", "../../victim").is_err());
        assert!(store.remove_version(&lock, "..", "victim").is_err());
        assert!(store.remove_agent(&lock, "../victim").is_err());
        assert!(victim.exists());
        fs::create_dir_all(store.version_dir("a", "1.0.0")).unwrap();
        store.remove_version(&lock, "a", "1.0.0").unwrap();
        assert!(store.remove_agent(&lock, "a").unwrap());
        assert!(!store.remove_agent(&lock, "a").unwrap());
    }
}
