//! The sandbox of terminal commands (Linux, Landlock).
//!
//! A sandboxed command may read and run everything, as a developer's shell
//! can, but may write, create, remove or rename files only below the
//! session's roots, the temporary directory (`$TMPDIR` or `/tmp`, and
//! `/dev/shm`), and the usual character devices (`/dev/null`, `/dev/tty`,
//! …). Optionally it may not open TCP connections or listen on TCP ports
//! (UDP is not covered by Landlock). Where the kernel supports Landlock ABI
//! 6 (Linux 6.12), it may also not send signals to processes outside the
//! sandbox: neither acp nor the supervisor that watches it can be killed
//! from inside. The privileges of a sandboxed command cannot grow
//! (`no_new_privs`): `sudo` and other set-user-id programs do not elevate.
//!
//! The sandbox is applied in the terminal's supervisor process, from the
//! thread that starts the command, never in the client's own process: a
//! Landlock domain belongs to the thread that enters it and to the
//! processes it starts. Not covered: what a command asks another process
//! outside the sandbox to do for it (a D-Bus service, a Docker daemon, an
//! SSH agent), reads of secrets (reading is allowed everywhere), and
//! protected places inside the roots (such as `.git/hooks`): Landlock
//! cannot take back part of what it grants.
//!
//! Where Landlock is absent (an older kernel, or not enabled), and on other
//! systems than Linux, commands run unconfined; [`probe`] says so, so that
//! a client can tell its user once.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What the sandbox of terminal commands should do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Sandbox {
    /// Whether commands are sandboxed at all.
    pub enabled: bool,
    /// Directories below which commands may write (the roots, usually).
    pub writable: Vec<PathBuf>,
    /// Whether TCP connections and listening are refused.
    pub no_network: bool,
}

impl Sandbox {
    /// No sandbox: commands run with the client's own rights.
    pub fn off() -> Sandbox {
        Sandbox {
            enabled: false,
            writable: Vec::new(),
            no_network: false,
        }
    }

    /// A sandbox letting commands write below `writable` only (and to the
    /// usual devices).
    pub fn writable(writable: impl IntoIterator<Item = PathBuf>) -> Sandbox {
        Sandbox {
            enabled: true,
            writable: writable.into_iter().collect(),
            no_network: false,
        }
    }

    /// A sandbox letting commands write below `roots` and the temporary
    /// directories: this process's `$TMPDIR` (or `/tmp`) and `/dev/shm`.
    /// They are read here, in the client, so a request's `env` cannot
    /// widen them.
    pub fn for_roots(roots: impl IntoIterator<Item = PathBuf>) -> Sandbox {
        let mut writable: Vec<PathBuf> = roots.into_iter().collect();
        for dir in [std::env::temp_dir(), PathBuf::from("/dev/shm")] {
            let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
            if !writable.contains(&dir) {
                writable.push(dir);
            }
        }
        Sandbox::writable(writable)
    }

    /// The same sandbox, refusing TCP when `no_network`.
    #[must_use]
    pub fn no_network(mut self, no_network: bool) -> Sandbox {
        self.no_network = no_network;
        self
    }
}

/// What the kernel offers for the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Support {
    /// Landlock works, with this ABI version; `signals` says whether
    /// signals out of the sandbox are blocked (ABI 6 and later) and
    /// `network` whether TCP can be refused (ABI 4 and later).
    Landlock {
        /// The ABI version the kernel and the landlock crate share.
        abi: u32,
        /// Signals to processes outside the sandbox are refused.
        signals: bool,
        /// TCP can be refused.
        network: bool,
    },
    /// No sandbox is possible here; the sentence says why.
    Unavailable(String),
}

impl Support {
    /// Whether commands can be sandboxed.
    pub fn is_available(&self) -> bool {
        matches!(self, Support::Landlock { .. })
    }
}

impl std::fmt::Display for Support {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Support::Landlock { abi, .. } => write!(f, "Landlock ABI {abi}"),
            Support::Unavailable(why) => f.write_str(why),
        }
    }
}

/// Finds out whether this system can sandbox commands, by entering an
/// empty Landlock domain on a thread of its own (which then ends; the
/// calling process is not restricted).
pub fn probe() -> Support {
    imp::probe()
}

/// Applies `sandbox` to the calling thread and the processes it will start.
/// Returns a sentence when the kernel could not enforce it.
pub(crate) fn enter(sandbox: &Sandbox) -> Result<(), String> {
    imp::enter(sandbox)
}

#[cfg(target_os = "linux")]
mod imp {
    use super::{Sandbox, Support};
    use landlock::{
        ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, Ruleset,
        RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
    };

    /// The newest ABI this code was written and tested for.
    const TARGET: ABI = ABI::V6;

    /// Character devices every program may write to.
    const DEVICES: &[&str] = &[
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/random",
        "/dev/urandom",
        "/dev/tty",
        "/dev/ptmx",
        "/dev/pts",
    ];

    pub(super) fn probe() -> Support {
        let probe = std::thread::spawn(|| {
            Ruleset::default()
                .handle_access(AccessFs::from_all(ABI::V1))
                .and_then(|r| r.create())
                .and_then(|r| r.restrict_self())
                .map(|status| status.landlock)
                .map_err(|e| e.to_string())
        });
        match probe.join() {
            Ok(Ok(LandlockStatus::Available { effective_abi, .. })) => {
                let abi = effective_abi as u32;
                Support::Landlock {
                    abi,
                    signals: abi >= 6,
                    network: abi >= 4,
                }
            }
            Ok(Ok(LandlockStatus::NotEnabled)) => Support::Unavailable(
                "Landlock is built into this kernel but not enabled (lsm= boot option)".into(),
            ),
            Ok(Ok(LandlockStatus::NotImplemented)) => {
                Support::Unavailable("this kernel has no Landlock (Linux 5.13 or later)".into())
            }
            Ok(Err(e)) => Support::Unavailable(format!("Landlock failed: {e}")),
            Err(_) => Support::Unavailable("the Landlock probe failed".into()),
        }
    }

    pub(super) fn enter(sandbox: &Sandbox) -> Result<(), String> {
        let fs_all = AccessFs::from_all(TARGET);
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(fs_all)
            .map_err(|e| e.to_string())?
            .scope(Scope::Signal)
            .map_err(|e| e.to_string())?;
        if sandbox.no_network {
            ruleset = ruleset
                .handle_access(AccessNet::from_all(TARGET))
                .map_err(|e| e.to_string())?;
        }
        let status = ruleset
            .create()
            .and_then(|r| r.add_rules(path_beneath_rules(["/"], AccessFs::from_read(TARGET))))
            .and_then(|r| r.add_rules(path_beneath_rules(&sandbox.writable, fs_all)))
            .and_then(|r| r.add_rules(path_beneath_rules(DEVICES, fs_all)))
            .and_then(|r| r.restrict_self())
            .map_err(|e| e.to_string())?;
        match status.ruleset {
            RulesetStatus::FullyEnforced | RulesetStatus::PartiallyEnforced => Ok(()),
            RulesetStatus::NotEnforced => Err("this kernel does not enforce Landlock".into()),
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{Sandbox, Support};

    pub(super) fn probe() -> Support {
        Support::Unavailable("commands are sandboxed only on Linux".into())
    }

    pub(super) fn enter(_: &Sandbox) -> Result<(), String> {
        Err("commands are sandboxed only on Linux".into())
    }
}
